//! Chrome's memory-infra dumps (TracePacket `memory_tracker_snapshot`), read as Trace
//! Processor's MemoryTrackerSnapshotParser reads them: every process dump's allocator dumps
//! (a node's `size_bytes` as its first entry `size`, in bytes, then its entries — integers
//! or strings, in bytes or not) and ownership edges, with the level of detail named as the
//! reference names it (`detailed`, `light`, `background`).
//!
//! Hands on [`EventData::MemorySnapshot`]; the model's memory snapshot tracker merges the
//! dumps of one time into one global graph, computes sizes and writes the rows.

use super::*;

impl Parser<'_> {
    pub(super) fn memory_snapshot(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        snap: &protos::MemoryTrackerSnapshot,
    ) {
        use protos::memory_tracker_snapshot::process_snapshot::memory_node::MemoryNodeEntry;
        const BYTES: i32 = 1;
        let detail = match snap.level_of_detail.unwrap_or(0) {
            1 => "light",
            2 => "background",
            _ => "detailed",
        };
        let mut processes = Vec::with_capacity(snap.process_memory_dumps.len());
        for p in &snap.process_memory_dumps {
            let mut nodes = Vec::with_capacity(p.allocator_dumps.len());
            for n in &p.allocator_dumps {
                let mut entries = Vec::with_capacity(n.entries.len() + 1);
                if let Some(size) = n.size_bytes {
                    entries.push(MemoryEntry {
                        name: self.sink.intern("size"),
                        bytes: true,
                        value: MemoryEntryValue::Uint(size),
                    });
                }
                for e in &n.entries {
                    let e: &MemoryNodeEntry = e;
                    let value = match (e.value_uint64, &e.value_string) {
                        (Some(v), _) => MemoryEntryValue::Uint(v),
                        (None, Some(s)) => MemoryEntryValue::Str(self.sink.intern(s)),
                        // An entry with no value is skipped, as the reference does.
                        (None, None) => continue,
                    };
                    entries.push(MemoryEntry {
                        name: self.sink.intern(e.name.as_deref().unwrap_or("")),
                        bytes: e.units == Some(BYTES),
                        value,
                    });
                }
                nodes.push(MemoryNodeDump {
                    id: n.id.unwrap_or(0),
                    absolute_name: self.sink.intern(n.absolute_name.as_deref().unwrap_or("")),
                    weak: n.weak.unwrap_or(false),
                    entries,
                });
            }
            let edges = p
                .memory_edges
                .iter()
                .map(|e| {
                    (
                        e.source_id.unwrap_or(0),
                        e.target_id.unwrap_or(0),
                        e.importance.unwrap_or(0),
                    )
                })
                .collect();
            processes.push(ProcessMemoryDump {
                pid: i64::from(p.pid.unwrap_or(0)),
                nodes,
                edges,
            });
        }
        let track = self.sink.track(TrackKey::GlobalSlices {
            machine,
            kind: "legacy_chrome_global_instants",
            name: NULL_STR,
        });
        let dump = MemorySnapshotDump {
            machine,
            track,
            detail: self.sink.intern(detail),
            processes,
        };
        self.sink
            .push(ts, clock, EventData::MemorySnapshot(Box::new(dump)));
    }
}

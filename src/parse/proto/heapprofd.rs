//! heapprofd's dumps (`profile_packet`), as Trace Processor's heap profile tracker reads
//! them: a dump may span packets (`continued`); at its last packet every sample becomes
//! `heap_profile_allocation` rows, each the change since the previous dump of its callsite,
//! and the dump's window a `heap_profile` row. Problems the dump reports are counted under
//! the reference's `heapprofd_*` stats.

use super::profiling::Lookup;
use super::*;

/// heapprofd's state per sequence: the dump being assembled (a dump may span packets
/// marked `continued`) and the running totals per callsite that make each row a delta.
#[derive(Default)]
pub(super) struct HeapSequence {
    prev_index: Option<u64>,
    /// The dump's own interned tables (ProfilePacket `strings`, `mappings`, …).
    pub(super) strings: FxHashMap<u64, Vec<u8>>,
    pub(super) mappings: FxHashMap<u64, protos::Mapping>,
    pub(super) frames: FxHashMap<u64, protos::Frame>,
    pub(super) callstacks: FxHashMap<u64, Vec<u64>>,
    pending: Vec<PendingAllocation>,
    /// Last totals per (pid, callsite, heap): (alloc count, alloc size, free count, free
    /// size). Each heap of a process (libc.malloc, com.android.art, …) counts on its own.
    prev: FxHashMap<(i64, u32, StrId), [i64; 4]>,
    /// Callsites seen per (pid, source callstack id, heap), and the corrections a new
    /// callsite of a known callstack takes (its totals start from the old one's).
    seen: FxHashMap<(i64, u64, StrId), Vec<u32>>,
    correction: FxHashMap<u64, [i64; 4]>,
    /// The dump's mappings already counted in symbolization_tmp_build_id_not_found.
    pub(super) tmp_mappings_counted: std::collections::HashSet<u64>,
}

struct PendingAllocation {
    ts: i64,
    clock: ClockRef,
    pid: i64,
    heap_name: StrId,
    callstack: u64,
    /// (alloc count, alloc size, free count, free size)
    totals: [i64; 4],
}

impl Parser<'_> {
    /// A heapprofd dump (or part of one): its tables are kept until the dump's last packet,
    /// which turns every sample into allocation rows (deltas from the previous dump).
    pub(super) fn profile_packet(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        packet_ts: Option<i64>,
        packet_clock: ClockRef,
        p: &protos::ProfilePacket,
    ) {
        self.sink.touch();
        let index = p.index.unwrap_or(0);
        let heap = &mut self.seq_profile(machine, seq_id).heap;
        let missing = match heap.prev_index {
            None => index != 0,
            Some(prev) => prev.wrapping_add(1) != index,
        };
        heap.prev_index = Some(index);
        if missing {
            self.sink.stat("heapprofd_missing_packet", machine, 1);
        }
        let heap = &mut self.seq_profile(machine, seq_id).heap;
        for s in &p.strings {
            let bytes = s.str.clone().unwrap_or_default();
            heap.strings.insert(s.iid.unwrap_or(0), bytes);
        }
        for m in &p.mappings {
            heap.mappings.insert(m.iid.unwrap_or(0), m.clone());
        }
        for f in &p.frames {
            heap.frames.insert(f.iid.unwrap_or(0), f.clone());
        }
        for c in &p.callstacks {
            heap.callstacks
                .insert(c.iid.unwrap_or(0), c.frame_ids.clone());
        }
        let clock = self.clock(machine, 0, clocks::MONOTONIC_COARSE);
        for dump in &p.process_dumps {
            let pid = dump.pid.unwrap_or(0) as i64;
            let stat_idx = Some(pid);
            let flags = [
                (dump.disconnected(), "heapprofd_client_disconnected"),
                (dump.buffer_corrupted(), "heapprofd_buffer_corrupted"),
                (
                    dump.buffer_overran() || dump.client_error == Some(1),
                    "heapprofd_buffer_overran",
                ),
                (dump.rejected_concurrent(), "heapprofd_rejected_concurrent"),
                (dump.hit_guardrail(), "heapprofd_hit_guardrail"),
            ];
            for (set, name) in flags {
                if set {
                    self.sink.stat_indexed(name, stat_idx, machine, 1);
                }
            }
            // The error code and the adjustment are set, not counted, as the reference's
            // ProfileModule does (the last dump of a process wins).
            if let Some(error) = dump.client_error.filter(|&e| e != 0) {
                let error = i64::from(error);
                self.sink
                    .set_stat("heapprofd_client_error", stat_idx, machine, error);
            }
            let orig = dump.orig_sampling_interval_bytes.unwrap_or(0);
            if orig != 0 {
                let adjusted = dump.sampling_interval_bytes.unwrap_or(0) as i64 - orig as i64;
                self.sink.set_stat(
                    "heapprofd_sampling_interval_adjusted",
                    stat_idx,
                    machine,
                    adjusted,
                );
            }
            // Added for every dump, 0 when the dump has no stats (the row is still made).
            let st = dump.stats.unwrap_or_default();
            let values = [
                ("heapprofd_unwind_time_us", st.total_unwinding_time_us),
                ("heapprofd_unwind_samples", st.heap_samples),
                (
                    "heapprofd_client_spinlock_blocked",
                    st.client_spinlock_blocked_us,
                ),
            ];
            for (name, v) in values {
                let v = v.unwrap_or(0) as i64;
                self.sink.stat_indexed(name, stat_idx, machine, v);
            }
            let trustworthy_max_count = orig > 0;
            let heap_name = match dump.heap_name.as_deref() {
                Some(n) if !n.is_empty() => self.sink.intern(n),
                _ => self.sink.intern("unknown"),
            };
            if let Some(at) = packet_ts {
                let process = ProcessRef { machine, pid };
                let read = ProfileSample::HeapDumpProcess { process };
                self.sink.push(at, packet_clock, EventData::Profile(read));
            }
            let ts = dump.timestamp.unwrap_or(0) as i64;
            let start = dump.start_timestamp.map_or(ts, |s| s as i64);
            let window = ProfileSample::HeapProfile {
                process: ProcessRef { machine, pid },
                heap_name,
                dur: ts - start,
                sampling_interval: dump.sampling_interval_bytes.unwrap_or(0) as i64,
            };
            self.sink.push(start, clock, EventData::Profile(window));
            let heap = &mut self.seq_profile(machine, seq_id).heap;
            for s in &dump.samples {
                let totals = if let Some(max) = s.self_max {
                    let count = if trustworthy_max_count {
                        s.self_max_count.unwrap_or(0)
                    } else {
                        0
                    };
                    [count as i64, max as i64, 0, 0]
                } else {
                    [
                        s.alloc_count.unwrap_or(0) as i64,
                        s.self_allocated.unwrap_or(0) as i64,
                        s.free_count.unwrap_or(0) as i64,
                        s.self_freed.unwrap_or(0) as i64,
                    ]
                };
                heap.pending.push(PendingAllocation {
                    ts,
                    clock,
                    pid,
                    heap_name,
                    callstack: s.callstack_id.unwrap_or(0),
                    totals,
                });
            }
        }
        if !p.continued() {
            self.finish_heap_dump(machine, seq_id);
        }
    }

    /// The last packet of a dump: allocations become rows, each the change since the
    /// previous dump of that callsite (a decrease is a malformed packet).
    fn finish_heap_dump(&mut self, machine: MachineId, seq_id: u32) {
        let pending = std::mem::take(&mut self.seq_profile(machine, seq_id).heap.pending);
        for a in pending {
            let seq = self
                .profiling
                .sequences
                .entry((machine, seq_id))
                .or_default();
            let Some(callsite) =
                (Lookup { seq, heap: true }).callstack(self.sink, machine, a.callstack)
            else {
                continue;
            };
            let heap = &mut self.seq_profile(machine, seq_id).heap;
            let prev = heap
                .prev
                .get(&(a.pid, callsite, a.heap_name))
                .copied()
                .unwrap_or([0; 4]);
            let seen = heap
                .seen
                .entry((a.pid, a.callstack, a.heap_name))
                .or_default();
            if !seen.contains(&callsite) {
                seen.push(callsite);
                heap.correction.insert(a.callstack, prev);
            }
            let mut totals = a.totals;
            if let Some(c) = heap.correction.get(&a.callstack) {
                for (t, c) in totals.iter_mut().zip(c) {
                    *t += c;
                }
            }
            let delta: Vec<i64> = totals.iter().zip(&prev).map(|(t, p)| t - p).collect();
            if delta.iter().any(|&d| d < 0) {
                self.sink
                    .stat_indexed("heapprofd_malformed_packet", Some(a.pid), machine, 1);
                continue;
            }
            heap.prev.insert((a.pid, callsite, a.heap_name), totals);
            let process = ProcessRef {
                machine,
                pid: a.pid,
            };
            let rows = [(delta[0], delta[1]), (-delta[2], -delta[3])];
            for (count, size) in rows {
                if count == 0 && size == 0 {
                    continue;
                }
                let sample = ProfileSample::HeapAllocation {
                    process,
                    heap_name: a.heap_name,
                    callsite,
                    count,
                    size,
                };
                self.sink.push(a.ts, a.clock, EventData::Profile(sample));
            }
        }
        let heap = &mut self.seq_profile(machine, seq_id).heap;
        heap.strings.clear();
        heap.mappings.clear();
        heap.frames.clear();
        heap.callstacks.clear();
        heap.tmp_mappings_counted.clear();
    }
}

//! Chrome's rows that are neither slices, counters nor tracks: events kept raw (`chrome_raw`: legacy
//! metadata, legacy text, unknown legacy phases), each with its thread; and the processes
//! Chrome listed as live without describing them (`experimental_missing_chrome_processes`,
//! Trace Processor's ActiveChromeProcessesTracker). Hands on those rows.

use super::*;
use std::collections::{BTreeMap, BTreeSet};

/// A listing without a process descriptor within this distance of it marks data lost.
const MAX_DESCRIPTOR_DISTANCE: i64 = 200_000_000;

/// When Chrome listed each process as live (`chrome_active_processes`) and when a
/// descriptor of it was emitted (Chrome emits its processes' descriptors again at every
/// incremental state reset, 5 s apart).
#[derive(Default)]
pub(super) struct ActiveChromeProcesses {
    /// upid → (listing times, descriptor times).
    processes: BTreeMap<u32, (BTreeSet<i64>, BTreeSet<i64>)>,
    /// Every listing time, of any process.
    listings: BTreeSet<i64>,
}

impl ActiveChromeProcesses {
    /// The processes whose data was lost: listed as live with no descriptor within 0.2 s.
    /// Each comes with the time its data is reliable from: the next descriptor after its
    /// last such listing, or — without one — the next listing of any process (it ended
    /// before that reset), or NULL.
    pub(super) fn with_data_loss(&self) -> Vec<(u32, Option<i64>)> {
        let mut rows = Vec::new();
        for (&upid, (listed, described)) in &self.processes {
            let mut lost = false;
            let mut reliable_from = None;
            for &ts in listed {
                match described
                    .range(ts.saturating_sub(MAX_DESCRIPTOR_DISTANCE)..)
                    .next()
                {
                    Some(&next) if next > ts.saturating_add(MAX_DESCRIPTOR_DISTANCE) => {
                        lost = true;
                        reliable_from = Some(next);
                    }
                    Some(_) => {}
                    None => {
                        lost = true;
                        reliable_from = self
                            .listings
                            .range((std::ops::Bound::Excluded(ts), std::ops::Bound::Unbounded))
                            .next()
                            .copied();
                    }
                }
            }
            if lost {
                rows.push((upid, reliable_from));
            }
        }
        rows
    }
}

impl<'s> Builder<'s> {
    /// A raw Chrome event; without a thread it is the machine's idle thread's (utid 0 for
    /// the host, as Trace Processor writes it).
    pub(super) fn chrome_raw(&mut self, ts: i64, raw: &ChromeRaw) {
        let utid = match raw.thread {
            Some(t) => self.thread(t),
            None => {
                self.add_machine(raw.machine);
                self.idle.get(&raw.machine).map_or(0, |&(_, utid)| utid)
            }
        };
        self.note_ts(ts);
        self.tables.chrome_raw.push(ChromeRawRow {
            ts,
            utid,
            name: raw.name,
            args: raw.args,
        });
    }

    /// A pid Chrome listed as live, or a descriptor of its process.
    pub(super) fn chrome_process_seen(&mut self, ts: i64, process: ProcessRef, descriptor: bool) {
        let upid = self.process(process);
        let (listed, described) = self.chrome_processes.processes.entry(upid).or_default();
        if descriptor {
            described.insert(ts);
        } else {
            listed.insert(ts);
            self.chrome_processes.listings.insert(ts);
        }
    }
}

//! Chrome's rows that are neither slices, counters nor tracks: events kept raw (`chrome_raw`: legacy
//! metadata, legacy text, unknown legacy phases). Hands on those rows, each with its thread.

use super::*;

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
}

//! statsd atoms (`statsd_atom`, the `android.statsd` data source), as Trace Processor's
//! StatsdModule places them: each atom is an instant (a slice of duration 0) on the global
//! track `Statsd Atoms` (type `statsd_atoms`) at its own `timestamp_nanos` (the i-th
//! timestamp for the i-th atom; the packet's time, counted in `atom_timestamp_missing`,
//! when the list runs short).
//!
//! An atom is a oneof over every atom kind, named by its only field's number: the slice is
//! named by that field's name in AOSP's atoms.proto (`statsd_atom_names.rs`, generated from
//! the AtomId enum Perfetto derives from it). An atom not in the list is named as the
//! reference names one its descriptor lacks, `atom_<number>`, and counted in `atom_unknown`
//! (except vendor atoms, numbered from 100000, which nobody expects to know). The reference
//! also decodes each atom's fields into args through the atoms descriptor it embeds;
//! Sextant has only the names, so atoms have no args.
//!
//! Hands on dur-0 `Complete` slice events.

use super::statsd_atom_names::ATOM_NAMES;
use super::*;

/// Atom field numbers from here on are vendor (OEM) atoms, never in the descriptor.
const FIRST_VENDOR_ATOM: u64 = 100_000;

impl Parser<'_> {
    /// `statsd_atom`: a batch of atoms and their times.
    pub(super) fn statsd_atoms(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        batch: &protos::StatsdAtom,
    ) {
        let mut times = batch.timestamp_nanos.iter();
        for atom in &batch.atom {
            let at = match times.next() {
                Some(&t) => t,
                None => {
                    self.sink.stat("atom_timestamp_missing", machine, 1);
                    ts
                }
            };
            // The atom's kind: the number of its first field (0 when it has none).
            let mut buf = atom.as_slice();
            let kind = prost::encoding::decode_key(&mut buf).map_or(0, |(tag, _)| u64::from(tag));
            let known = u32::try_from(kind)
                .ok()
                .and_then(|k| ATOM_NAMES.binary_search_by_key(&k, |&(n, _)| n).ok())
                .map(|i| ATOM_NAMES[i].1);
            let name = match known {
                Some(name) => self.sink.intern_static(name),
                None => {
                    if kind < FIRST_VENDOR_ATOM {
                        self.sink.stat("atom_unknown", machine, 1);
                    }
                    self.sink.intern(&format!("atom_{kind}"))
                }
            };
            let track_name = self.sink.intern_static("Statsd Atoms");
            let track = self.sink.track(TrackKey::GlobalSlices {
                machine,
                kind: "statsd_atoms",
                name: track_name,
            });
            let slice = SliceEvent {
                track,
                category: NULL_STR,
                name,
                args: NO_ARGS,
                thread_ts: NO_TS,
                flows: NO_FLOWS,
            };
            let data = EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            };
            self.sink.push(at, clock, data);
        }
        if batch.atom.is_empty() {
            self.sink.touch();
        }
    }
}

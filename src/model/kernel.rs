//! Kernel operations the ftrace events describe in two halves or as running totals:
//! operations whose end names their start by a key (file reads, block I/O) become one
//! slice; packet and byte counters accumulate per track; TCP sockets get a stream track
//! each (`TCP stream#N`) with their states as slices. Hands on slices and counter rows.

use super::*;

#[derive(Default)]
pub(super) struct KernelState {
    /// Open pairs: start ts and the slice to make.
    pairs: FxHashMap<PairKey, (i64, SliceEvent)>,
    /// Running totals of summed counters, by track.
    sums: FxHashMap<u32, i64>,
    /// The stream track of each TCP socket, and how many streams there are.
    streams: FxHashMap<(MachineId, u64), u32>,
    stream_count: u32,
}

impl<'s> Builder<'s> {
    pub(super) fn pair_begin(&mut self, ts: i64, key: PairKey, slice: SliceEvent) {
        self.note_ts(ts);
        self.kernel.pairs.insert(key, (ts, slice));
    }

    pub(super) fn pair_end(&mut self, ts: i64, key: PairKey, args: ArgsRef) {
        self.note_ts(ts);
        let Some((start, mut slice)) = self.kernel.pairs.remove(&key) else {
            return;
        };
        if args != NO_ARGS {
            let mut merged: Vec<Arg> = self.sink.args.get(slice.args).to_vec();
            merged.extend_from_slice(self.sink.args.get(args));
            slice.args = self.sink.args.push(&merged);
        }
        let track = self.resolve_track(slice.track);
        self.complete(
            track,
            start,
            ts - start,
            NO_TS,
            &slice,
            slice::Overlap::Drop,
        );
    }

    pub(super) fn counter_sum(
        &mut self,
        ts: i64,
        track: TrackRef,
        delta: i64,
        divisor: u32,
        args: ArgsRef,
    ) {
        let track = self.resolve_track(track);
        self.note_ts(ts);
        let total = self.kernel.sums.entry(track).or_insert(0);
        *total = total.saturating_add(delta);
        let value = *total as f64 / f64::from(divisor.max(1));
        let row = CounterRow {
            ts,
            track,
            value,
            args,
        };
        self.out.counter(self.tables.counter_count, &row, self.sink);
        self.tables.counter_count += 1;
    }

    pub(super) fn sock_state(
        &mut self,
        ts: i64,
        machine: MachineId,
        skaddr: u64,
        name: StrId,
        opens: bool,
    ) {
        self.note_ts(ts);
        let track = match self.kernel.streams.get(&(machine, skaddr)) {
            Some(&t) if !opens => t,
            _ if opens => {
                self.kernel.stream_count += 1;
                let stream = self
                    .sink
                    .intern(&format!("TCP stream#{}", self.kernel.stream_count));
                let key = self.sink.track(TrackKey::KernelSlices {
                    machine,
                    kind: "net_tcp_stream",
                    name: stream,
                    dim: None,
                });
                let t = self.resolve_track(key);
                self.kernel.streams.insert((machine, skaddr), t);
                t
            }
            _ => return,
        };
        let end = SliceEvent {
            track: 0,
            category: NULL_STR,
            name: NULL_STR,
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.end(track, ts, &end);
        let begin = SliceEvent { name, ..end };
        self.begin(track, ts, &begin);
    }
}

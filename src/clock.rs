//! Converts raw timestamps to trace time through clock snapshots.
//!
//! Nodes are clock domains (a clock of a machine, or a file's private timeline); each
//! snapshot relates every pair of clocks it read. Conversion takes the shortest path of
//! relations from the event's clock to the trace-time clock, and on each hop uses the
//! snapshot whose reading of the source clock is the greatest one ≤ the timestamp (the first
//! snapshot when the timestamp is before all of them), as Trace Processor does.

use std::collections::{HashMap, VecDeque};

use crate::ir::{clocks, ClockDomain, ClockSnapshot, MachineId};

/// Readings of two clocks taken together, sorted by the source clock's value.
#[derive(Default, Clone)]
struct Series {
    /// (source value, target value)
    points: Vec<(i64, i64)>,
}

impl Series {
    fn convert(&self, ts: i64) -> Option<i64> {
        if self.points.is_empty() {
            return None;
        }
        let i = self.points.partition_point(|&(src, _)| src <= ts);
        let (src, dst) = self.points[i.saturating_sub(1)];
        Some(ts.wrapping_sub(src).wrapping_add(dst))
    }
}

/// How a domain reaches trace time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The domain is trace time.
    Identity,
    /// Through these snapshot hops (each a pair of domains).
    Path(Vec<ClockDomain>),
    /// Assumed equal to the trace clock of the same kind on another machine (offset 0).
    SameDomain(ClockDomain),
    /// No relation: events on this clock are dropped.
    Unrelatable,
}

pub struct ClockConverter {
    trace: ClockDomain,
    edges: HashMap<ClockDomain, Vec<ClockDomain>>,
    series: HashMap<(ClockDomain, ClockDomain), Series>,
    placements: HashMap<ClockDomain, Placement>,
}

impl ClockConverter {
    pub fn new(trace: ClockDomain, snapshots: &[ClockSnapshot]) -> Self {
        let mut series: HashMap<(ClockDomain, ClockDomain), Series> = HashMap::new();
        for snap in snapshots {
            for &(a, va) in &snap.readings {
                for &(b, vb) in &snap.readings {
                    if a != b {
                        series.entry((a, b)).or_default().points.push((va, vb));
                    }
                }
            }
        }
        let mut edges: HashMap<ClockDomain, Vec<ClockDomain>> = HashMap::new();
        for (a, b) in series.keys() {
            edges.entry(*a).or_default().push(*b);
        }
        for s in series.values_mut() {
            s.points.sort_by_key(|p| p.0);
        }
        for v in edges.values_mut() {
            v.sort_by_key(|d| (d.machine, d.clock_id, d.sequence, d.file));
        }
        Self {
            trace,
            edges,
            series,
            placements: HashMap::new(),
        }
    }

    pub fn trace_clock(&self) -> ClockDomain {
        self.trace
    }

    fn shortest_path(&self, from: ClockDomain, to: ClockDomain) -> Option<Vec<ClockDomain>> {
        let mut prev: HashMap<ClockDomain, ClockDomain> = HashMap::new();
        let mut queue = VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            if n == to {
                let mut path = vec![to];
                let mut cur = to;
                while let Some(&p) = prev.get(&cur) {
                    path.push(p);
                    cur = p;
                    if cur == from {
                        break;
                    }
                }
                path.reverse();
                return Some(path);
            }
            for &next in self.edges.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                if next != from && !prev.contains_key(&next) {
                    prev.insert(next, n);
                    queue.push_back(next);
                }
            }
        }
        None
    }

    /// How `domain` is placed on trace time (computed once per domain).
    pub fn placement(&mut self, domain: ClockDomain) -> Placement {
        if let Some(p) = self.placements.get(&domain) {
            return p.clone();
        }
        let p = self.compute_placement(domain);
        self.placements.insert(domain, p.clone());
        p
    }

    fn compute_placement(&self, domain: ClockDomain) -> Placement {
        if domain == self.trace {
            return Placement::Identity;
        }
        // With no snapshot at all there is nothing to relate clocks by: every clock is taken
        // as trace time (as Trace Processor does).
        if self.series.is_empty() {
            return Placement::Identity;
        }
        if let Some(path) = self.shortest_path(domain, self.trace) {
            return Placement::Path(path);
        }
        // A file's private timeline with nothing relating it is taken as trace time.
        if domain.clock_id == clocks::TRACE_FILE {
            return Placement::Identity;
        }
        // The same kind of clock on another machine: assume it reads the same (offset 0),
        // possibly after converting within that machine first.
        let same_kind = ClockDomain {
            machine: domain.machine,
            ..self.trace
        };
        if domain.machine != self.trace.machine {
            if domain == same_kind {
                return Placement::SameDomain(same_kind);
            }
            if let Some(mut path) = self.shortest_path(domain, same_kind) {
                path.push(self.trace);
                return Placement::Path(path);
            }
        }
        Placement::Unrelatable
    }

    /// Converts a raw timestamp; `None` when its clock cannot reach trace time.
    pub fn convert(&mut self, domain: ClockDomain, ts: i64) -> Option<i64> {
        match self.placement(domain) {
            Placement::Identity | Placement::SameDomain(_) => Some(ts),
            Placement::Unrelatable => None,
            Placement::Path(path) => {
                let mut v = ts;
                for hop in path.windows(2) {
                    v = match self.series.get(&(hop[0], hop[1])) {
                        Some(series) => series.convert(v)?,
                        // A same-domain hop between machines (added above).
                        None => v,
                    };
                }
                Some(v)
            }
        }
    }
}

/// The trace-time clock on a machine (the host unless stated).
pub fn builtin(machine: MachineId, clock_id: u32) -> ClockDomain {
    ClockDomain {
        machine,
        clock_id,
        sequence: 0,
        file: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(readings: &[(u32, i64)]) -> ClockSnapshot {
        ClockSnapshot {
            machine: 0,
            file: 0,
            readings: readings.iter().map(|&(c, v)| (builtin(0, c), v)).collect(),
        }
    }

    #[test]
    fn uses_latest_snapshot_not_after_ts_and_first_before_all() {
        let snaps = [
            snap(&[(6, 1_000_000_000), (3, 400_000_000)]),
            snap(&[(6, 3_000_000_000), (3, 2_390_000_000)]),
        ];
        let mut c = ClockConverter::new(builtin(0, 6), &snaps);
        let mono = builtin(0, 3);
        assert_eq!(c.convert(mono, 100_000_000), Some(700_000_000));
        assert_eq!(c.convert(mono, 2_000_000_000), Some(2_600_000_000));
        assert_eq!(c.convert(mono, 2_500_000_000), Some(3_110_000_000));
        assert_eq!(c.convert(builtin(0, 6), 5), Some(5));
        assert_eq!(c.convert(builtin(0, 1), 5), None);
    }

    #[test]
    fn other_machine_same_clock_is_assumed_equal() {
        let guest = ClockSnapshot {
            machine: 2,
            file: 0,
            readings: vec![
                (builtin(2, 6), 10_000_000_000),
                (builtin(2, 3), 4_000_000_000),
            ],
        };
        let mut c = ClockConverter::new(builtin(0, 6), &[guest]);
        assert_eq!(
            c.convert(builtin(2, 3), 4_500_000_000),
            Some(10_500_000_000)
        );
        assert_eq!(c.convert(builtin(2, 6), 7), Some(7));
    }
}

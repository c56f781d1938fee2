//! The clock graph: nodes are clocks (a clock domain on a machine, or a file's private
//! timeline), edges are known correspondences between two clocks ("when A read x, B read y").

use std::collections::{HashMap, HashSet, VecDeque};

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::ir::ClockDomain;

/// Paths longer than this are not searched (as Trace Processor does).
pub const MAX_PATH_EDGES: usize = 4;

/// Where a relation between two clocks came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeSource {
    /// A ClockSnapshot packet read both clocks at the same instant.
    Snapshot,
    /// A manifest `clocks` override (RELATE or PIN), with its `offset_ns`.
    Manifest,
    /// Both machines' REALTIME clocks are assumed to read the same (NTP).
    RealtimeRendezvous,
    /// Two clocks of the same domain (or a private timeline) assumed equal, for want of
    /// anything better.
    SameDomain,
    /// A second file on a machine, with snapshots of its own, rejoined to the machine's
    /// clock at zero offset.
    Reconnect,
}

impl EdgeSource {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeSource::Snapshot => "snapshot",
            EdgeSource::Manifest => "manifest",
            EdgeSource::RealtimeRendezvous => "realtime_rendezvous",
            EdgeSource::SameDomain => "same_domain",
            EdgeSource::Reconnect => "reconnect",
        }
    }
}

/// One direction of a relation: readings (this edge's source clock, target clock), sorted
/// by the source reading.
#[derive(Clone, Debug)]
pub struct Relation {
    pub source: EdgeSource,
    /// The file whose snapshot (or manifest entry) made the relation.
    pub file: Option<u32>,
    points: Vec<(i64, i64)>,
}

impl Relation {
    pub fn points(&self) -> &[(i64, i64)] {
        &self.points
    }

    /// The last reading at or before `v` (the first when `v` precedes them all); no
    /// interpolation, so drifting clocks are followed piecewise.
    fn convert(&self, v: i64) -> i64 {
        let i = self.points.partition_point(|&(src, _)| src <= v);
        let (src, dst) = self.points[i.saturating_sub(1)];
        v.wrapping_sub(src).wrapping_add(dst)
    }

    /// Like [`Relation::convert`], `None` when the result leaves the range of an `i64`.
    fn checked_convert(&self, v: i64) -> Option<i64> {
        let i = self.points.partition_point(|&(src, _)| src <= v);
        let (src, dst) = self.points[i.saturating_sub(1)];
        i64::try_from(i128::from(v) - i128::from(src) + i128::from(dst)).ok()
    }
}

#[derive(Clone, Debug, Default)]
pub struct ClockGraph {
    graph: DiGraph<ClockDomain, Relation>,
    nodes: HashMap<ClockDomain, NodeIndex>,
    /// Clocks that went back in a series: never converted from (still converted to).
    non_monotonic: HashSet<NodeIndex>,
}

impl ClockGraph {
    pub fn node(&mut self, clock: ClockDomain) -> NodeIndex {
        if let Some(&n) = self.nodes.get(&clock) {
            return n;
        }
        let n = self.graph.add_node(clock);
        self.nodes.insert(clock, n);
        n
    }

    /// A clock read going backwards: its relations no longer lead anywhere from it.
    pub fn mark_non_monotonic(&mut self, n: NodeIndex) {
        self.non_monotonic.insert(n);
    }

    pub fn find(&self, clock: &ClockDomain) -> Option<NodeIndex> {
        self.nodes.get(clock).copied()
    }

    pub fn clock(&self, n: NodeIndex) -> ClockDomain {
        self.graph[n]
    }

    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    pub fn clocks(&self) -> impl Iterator<Item = ClockDomain> + '_ {
        self.graph.node_indices().map(|n| self.graph[n])
    }

    /// Records that `a` read `va` when `b` read `vb` (both directions).
    pub fn relate(
        &mut self,
        (a, va): (ClockDomain, i64),
        (b, vb): (ClockDomain, i64),
        source: EdgeSource,
        file: Option<u32>,
    ) {
        if a == b {
            return;
        }
        let (na, nb) = (self.node(a), self.node(b));
        self.add_point(na, nb, (va, vb), source, file);
        self.add_point(nb, na, (vb, va), source, file);
    }

    fn add_point(
        &mut self,
        from: NodeIndex,
        to: NodeIndex,
        point: (i64, i64),
        source: EdgeSource,
        file: Option<u32>,
    ) {
        let edge = match self.graph.find_edge(from, to) {
            Some(e) => e,
            None => self.graph.add_edge(
                from,
                to,
                Relation {
                    source,
                    file,
                    points: Vec::new(),
                },
            ),
        };
        let points = &mut self.graph[edge].points;
        let at = points.partition_point(|p| p.0 <= point.0);
        points.insert(at, point);
    }

    /// The shortest path of relations (at most [`MAX_PATH_EDGES`]), breadth first.
    pub fn path(&self, from: &ClockDomain, to: &ClockDomain) -> Option<Vec<EdgeIndex>> {
        let (from, to) = (self.find(from)?, self.find(to)?);
        if from == to {
            return Some(Vec::new());
        }
        let mut came_by: HashMap<NodeIndex, (EdgeIndex, usize)> = HashMap::new();
        let mut queue = VecDeque::from([(from, 0usize)]);
        while let Some((n, depth)) = queue.pop_front() {
            if depth == MAX_PATH_EDGES || self.non_monotonic.contains(&n) {
                continue;
            }
            // Neighbours in a fixed order (by clock) so ties always resolve the same way.
            let mut next: Vec<_> = self.graph.edges(n).collect();
            next.sort_by_key(|e| key(&self.graph[e.target()]));
            for e in next {
                let t = e.target();
                if t == from || came_by.contains_key(&t) {
                    continue;
                }
                came_by.insert(t, (e.id(), depth + 1));
                if t == to {
                    let mut path = Vec::with_capacity(depth + 1);
                    let mut cur = to;
                    while cur != from {
                        let (edge, _) = came_by[&cur];
                        path.push(edge);
                        cur = self.graph.edge_endpoints(edge).map_or(from, |(s, _)| s);
                    }
                    path.reverse();
                    return Some(path);
                }
                queue.push_back((t, depth + 1));
            }
        }
        None
    }

    pub fn reachable(&self, from: &ClockDomain, to: &ClockDomain) -> bool {
        from == to || self.path(from, to).is_some()
    }

    /// Converts `v` along a path found by [`ClockGraph::path`].
    pub fn convert_along(&self, path: &[EdgeIndex], v: i64) -> i64 {
        path.iter().fold(v, |v, &e| self.graph[e].convert(v))
    }

    /// Like [`ClockGraph::convert_along`], `None` when a hop leaves the range of an `i64`
    /// (where the import would wrap around).
    pub fn checked_convert_along(&self, path: &[EdgeIndex], v: i64) -> Option<i64> {
        path.iter()
            .try_fold(v, |v, &e| self.graph[e].checked_convert(v))
    }

    /// Converts `v` read on `from` to `to`, when a path exists.
    pub fn convert(&self, from: &ClockDomain, to: &ClockDomain, v: i64) -> Option<i64> {
        if from == to {
            return Some(v);
        }
        self.path(from, to).map(|p| self.convert_along(&p, v))
    }

    /// Each relation once (the direction from the lower node index), with its endpoints.
    pub fn relations(&self) -> impl Iterator<Item = (ClockDomain, ClockDomain, &Relation)> + '_ {
        self.graph
            .edge_references()
            .filter(|e| e.source().index() < e.target().index())
            .map(|e| (self.graph[e.source()], self.graph[e.target()], e.weight()))
    }

    pub fn relation(&self, e: EdgeIndex) -> Option<(ClockDomain, ClockDomain, &Relation)> {
        let (s, t) = self.graph.edge_endpoints(e)?;
        Some((self.graph[s], self.graph[t], &self.graph[e]))
    }
}

pub(super) fn key(c: &ClockDomain) -> (u32, u32, u32, u32) {
    (c.machine, c.clock_id, c.file, c.sequence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(machine: u32, clock_id: u32) -> ClockDomain {
        ClockDomain {
            machine,
            clock_id,
            sequence: 0,
            file: 0,
            shared: false,
        }
    }

    #[test]
    fn hops_use_the_last_reading_at_or_before_the_value() {
        let mut g = ClockGraph::default();
        let (boot, mono) = (clock(0, 6), clock(0, 3));
        g.relate((boot, 1_000), (mono, 400), EdgeSource::Snapshot, None);
        g.relate((boot, 3_000), (mono, 2_390), EdgeSource::Snapshot, None);
        assert_eq!(g.convert(&mono, &boot, 100), Some(700));
        assert_eq!(g.convert(&mono, &boot, 2_000), Some(2_600));
        assert_eq!(g.convert(&mono, &boot, 2_500), Some(3_110));
        assert_eq!(g.convert(&boot, &boot, 5), Some(5));
        assert_eq!(g.convert(&clock(0, 1), &boot, 5), None);
    }

    #[test]
    fn paths_are_shortest_and_at_most_four_edges() {
        let mut g = ClockGraph::default();
        let chain: Vec<_> = (1..=6).map(|c| clock(0, c)).collect();
        for w in chain.windows(2) {
            g.relate((w[0], 0), (w[1], 10), EdgeSource::Snapshot, None);
        }
        assert_eq!(g.convert(&chain[0], &chain[4], 0), Some(40));
        assert_eq!(g.path(&chain[0], &chain[5]), None);
        g.relate((chain[0], 0), (chain[5], 7), EdgeSource::Manifest, None);
        assert_eq!(g.convert(&chain[0], &chain[5], 1), Some(8));
    }
}

//! The clock graph: nodes are clocks (a clock domain on a machine, or a file's private
//! timeline), edges are known correspondences between two clocks ("when A read x, B read y").
//!
//! Every node, relation and reading remembers when it was read: the import's event count at
//! that moment and the file being read (a "read time", [`read_time`]). Trace Processor converts each event as it reads it and never
//! redoes it, so a conversion at read time `at` sees only what was read by then: the
//! `*_at` methods take that time; the others see everything.

use std::collections::{HashMap, VecDeque};
use std::sync::OnceLock;

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

/// What a change of the graph at one read time may alter (see [`ClockGraph::changes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeScope {
    /// Any clock's path.
    All,
    /// Only the paths from and to these clocks (sorted).
    Only(Vec<NodeIndex>),
}

/// A read time: when something was read (see the module comment): the import's event
/// count then, and below it the index of the file being read, so that what a file reads
/// before its first event comes after everything the file before it read, though the
/// event count is the same (see [`read_time`]).
pub type ReadAt = u64;

/// The read time of what file `file` (an index in reading order) read when the import had
/// read `count` events.
pub fn read_time(count: u32, file: u32) -> ReadAt {
    (u64::from(count) << 32) | u64::from(file)
}

/// A read time after every other: what a conversion sees once the import is read whole.
pub const READ_ALL: ReadAt = ReadAt::MAX;

/// One direction of a relation: readings (this edge's source clock, target clock), sorted
/// by the source reading.
#[derive(Clone, Debug)]
pub struct Relation {
    pub source: EdgeSource,
    /// The file whose snapshot (or manifest entry) made the relation.
    pub file: Option<u32>,
    points: Vec<(i64, i64)>,
    /// When each point was read, in `points` order.
    read: Vec<ReadAt>,
    /// When the first and the last point were read.
    created: ReadAt,
    last_read: ReadAt,
    /// `read` never decreases along `points` (a series read in order, as monotonic clocks
    /// are): the points read by a time are a prefix.
    in_order: bool,
    /// For a series read out of order: a tree of the least read time of each range of
    /// `points` (a min segment tree, leaves in `points` order), built at the first
    /// conversion after the last point was added. It finds the reading a conversion uses in
    /// O(log n), where a scan of the series per event would make a crafted file with many
    /// snapshots and events take quadratic time.
    earliest: OnceLock<Vec<ReadAt>>,
}

impl Relation {
    pub fn points(&self) -> &[(i64, i64)] {
        &self.points
    }

    /// The reading a conversion of `v` at read time `at` uses: the last one at or before
    /// `v` among those read by then (the first of them when `v` precedes them all).
    fn pick(&self, v: i64, at: ReadAt) -> (i64, i64) {
        let last = |points: &[(i64, i64)]| {
            let i = points.partition_point(|&(src, _)| src <= v);
            points[i.saturating_sub(1)]
        };
        if self.last_read <= at {
            return last(&self.points);
        }
        if self.in_order {
            let n = self.read.partition_point(|&r| r <= at).max(1);
            return last(&self.points[..n]);
        }
        // A series read out of order: the readings of the time, whichever they are. The
        // last of them at or before `v`, else the first of them.
        let tree = self.earliest.get_or_init(|| min_tree(&self.read));
        let leaves = tree.len() / 2;
        let before = self.points.partition_point(|&(src, _)| src <= v);
        let i = last_read_by(tree, 1, 0, leaves, before, at)
            .or_else(|| first_read_by(tree, at))
            .unwrap_or(0);
        self.points[i]
    }

    /// The last reading at or before `v` (the first when `v` precedes them all); no
    /// interpolation, so drifting clocks are followed piecewise.
    fn convert(&self, v: i64, at: ReadAt) -> i64 {
        let (src, dst) = self.pick(v, at);
        v.wrapping_sub(src).wrapping_add(dst)
    }

    /// Like [`Relation::convert`], `None` when the result leaves the range of an `i64`.
    fn checked_convert(&self, v: i64, at: ReadAt) -> Option<i64> {
        let (src, dst) = self.pick(v, at);
        i64::try_from(i128::from(v) - i128::from(src) + i128::from(dst)).ok()
    }

    /// When the relation was first read (it does not exist before).
    pub fn created(&self) -> ReadAt {
        self.created
    }
}

/// A min segment tree over `read`: `tree[1]` is the root, node `k` has children `2k` and
/// `2k + 1`, and the leaves (from `tree.len() / 2`) are `read` padded with [`READ_ALL`].
fn min_tree(read: &[ReadAt]) -> Vec<ReadAt> {
    let leaves = read.len().next_power_of_two();
    let mut tree = vec![READ_ALL; 2 * leaves];
    tree[leaves..leaves + read.len()].copy_from_slice(read);
    for k in (1..leaves).rev() {
        tree[k] = tree[2 * k].min(tree[2 * k + 1]);
    }
    tree
}

/// The last index below `end` whose read time is at most `at`, in the subtree `node`
/// covering `lo..hi` of [`min_tree`]'s leaves.
fn last_read_by(
    tree: &[ReadAt],
    node: usize,
    lo: usize,
    hi: usize,
    end: usize,
    at: ReadAt,
) -> Option<usize> {
    if lo >= end || tree[node] > at {
        return None;
    }
    if hi - lo == 1 {
        return Some(lo);
    }
    let mid = (lo + hi) / 2;
    last_read_by(tree, 2 * node + 1, mid, hi, end, at)
        .or_else(|| last_read_by(tree, 2 * node, lo, mid, end, at))
}

/// The first index whose read time is at most `at` (see [`min_tree`]).
fn first_read_by(tree: &[ReadAt], at: ReadAt) -> Option<usize> {
    let leaves = tree.len() / 2;
    if tree.get(1).is_none_or(|&t| t > at) {
        return None;
    }
    let mut k = 1;
    while k < leaves {
        k = if tree[2 * k] <= at { 2 * k } else { 2 * k + 1 };
    }
    Some(k - leaves)
}

thread_local! {
    static SEARCH: std::cell::RefCell<Search> = std::cell::RefCell::new(Search::default());
}

/// The scratch of a path search: the nodes seen (stamped with the search's generation, so
/// a new search forgets them in O(1)) and the relation each was reached by.
#[derive(Default)]
struct Search {
    generation: u32,
    stamp: Vec<u32>,
    came_by: Vec<EdgeIndex>,
    queue: VecDeque<(NodeIndex, usize)>,
}

impl Search {
    fn begin(&mut self, nodes: usize) {
        if self.stamp.len() < nodes {
            self.stamp.resize(nodes, 0);
            self.came_by.resize(nodes, EdgeIndex::end());
        }
        self.queue.clear();
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
    }

    fn seen(&self, n: NodeIndex) -> bool {
        self.stamp.get(n.index()) == Some(&self.generation)
    }

    fn visit(&mut self, n: NodeIndex, by: EdgeIndex) {
        if let (Some(s), Some(c)) = (
            self.stamp.get_mut(n.index()),
            self.came_by.get_mut(n.index()),
        ) {
            *s = self.generation;
            *c = by;
        }
    }

    fn came_by(&self, n: NodeIndex) -> EdgeIndex {
        self.came_by
            .get(n.index())
            .copied()
            .unwrap_or(EdgeIndex::end())
    }
}

#[derive(Clone, Debug, Default)]
pub struct ClockGraph {
    graph: DiGraph<ClockDomain, Relation>,
    nodes: HashMap<ClockDomain, NodeIndex>,
    /// When each node was first read, by node index.
    born: Vec<ReadAt>,
    /// Clocks that went back in a series, and since when: never converted from (still
    /// converted to).
    non_monotonic: HashMap<NodeIndex, ReadAt>,
    /// Each node's relations in the order a path search tries them (by target clock, the
    /// latest first among equal keys, as petgraph lists them), kept as relations are added
    /// rather than sorted at every step of every search: a clock related to thousands of
    /// others made each search sort them all.
    neighbours: Vec<Vec<(EdgeIndex, NodeIndex)>>,
    /// Each relation's first read time, by edge index: what a search checks at every step,
    /// kept apart from the relations' points (one cache line for many relations).
    edge_created: Vec<ReadAt>,
    /// A union-find of the nodes by relation (parent, and size of each root's set): two
    /// clocks in different sets have no path at any read time, found without a search
    /// through everything related to the source.
    parent: Vec<u32>,
    set_size: Vec<u32>,
}

impl ClockGraph {
    /// The node of a clock, read at `at` (a clock already known keeps its first time).
    pub fn node(&mut self, clock: ClockDomain, at: ReadAt) -> NodeIndex {
        if let Some(&n) = self.nodes.get(&clock) {
            if let Some(b) = self.born.get_mut(n.index()) {
                *b = (*b).min(at);
            }
            return n;
        }
        let n = self.graph.add_node(clock);
        self.neighbours.push(Vec::new());
        self.parent.push(n.index() as u32);
        self.set_size.push(1);
        self.nodes.insert(clock, n);
        self.born.push(at);
        n
    }

    /// A clock read going backwards at `at`: from then on its relations no longer lead
    /// anywhere from it.
    pub fn mark_non_monotonic(&mut self, n: NodeIndex, at: ReadAt) {
        let t = self.non_monotonic.entry(n).or_insert(at);
        *t = (*t).min(at);
    }

    pub fn find(&self, clock: &ClockDomain) -> Option<NodeIndex> {
        self.nodes.get(clock).copied()
    }

    /// The node of a clock if it had been read by `at`.
    pub fn find_at(&self, clock: &ClockDomain, at: ReadAt) -> Option<NodeIndex> {
        self.find(clock)
            .filter(|n| self.born.get(n.index()).is_some_and(|&b| b <= at))
    }

    /// Every read time at which what a conversion sees may change (a clock, a relation or a
    /// non-monotonic mark appears), sorted, without repeats.
    pub fn change_times(&self) -> Vec<ReadAt> {
        let mut t: Vec<ReadAt> = self.born.clone();
        t.extend(self.graph.edge_weights().map(|r| r.created));
        t.extend(self.non_monotonic.values().copied());
        t.sort_unstable();
        t.dedup();
        t
    }

    /// Every read time at which what a conversion sees may change, with what it may
    /// change: sorted by time, one entry per time.
    ///
    /// A clock born then, or a clock whose only relation appears then (a leaf: one hop to
    /// one clock), lies on no path between two other clocks: a breadth-first search from any
    /// other clock reaches it last along that hop and goes nowhere from it, so no other
    /// clock's path changes ([`ChangeScope::Only`]). A relation between two clocks that
    /// each had another relation, or a clock going back, may change any path
    /// ([`ChangeScope::All`]). A file of snapshots each introducing a new clock beside a
    /// known one (a sequence's own clock, say) thus changes one clock's plan per snapshot,
    /// not every clock's.
    pub fn changes(&self) -> Vec<(ReadAt, ChangeScope)> {
        // Each node's relations' read times, sorted: its degree at a read time.
        let created: Vec<Vec<ReadAt>> = self
            .neighbours
            .iter()
            .map(|list| {
                let mut v: Vec<ReadAt> = list.iter().map(|&(e, _)| self.created(e)).collect();
                v.sort_unstable();
                v
            })
            .collect();
        let degree = |n: NodeIndex, t: ReadAt| {
            created
                .get(n.index())
                .map_or(0, |v| v.partition_point(|&c| c <= t))
        };
        // (time, the clock it touches; None: any clock).
        let mut touched: Vec<(ReadAt, Option<NodeIndex>)> = self
            .born
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, Some(NodeIndex::new(i))))
            .collect();
        touched.extend(self.non_monotonic.values().map(|&t| (t, None)));
        for e in self.graph.edge_references() {
            let t = e.weight().created;
            let (a, b) = (e.source(), e.target());
            let (da, db) = (degree(a, t), degree(b, t));
            if da > 1 && db > 1 {
                touched.push((t, None));
                continue;
            }
            for (n, d) in [(a, da), (b, db)] {
                if d <= 1 {
                    touched.push((t, Some(n)));
                }
            }
        }
        touched.sort_unstable_by_key(|&(t, n)| (t, n.map_or(0, |n| n.index() + 1)));
        let mut out: Vec<(ReadAt, ChangeScope)> = Vec::new();
        for (t, n) in touched {
            if out.last().is_none_or(|(last, _)| *last != t) {
                out.push((t, ChangeScope::Only(Vec::new())));
            }
            let Some((_, scope)) = out.last_mut() else {
                continue;
            };
            match (scope, n) {
                (ChangeScope::All, _) => {}
                (scope, None) => *scope = ChangeScope::All,
                (ChangeScope::Only(nodes), Some(n)) => {
                    if nodes.last() != Some(&n) {
                        nodes.push(n);
                    }
                }
            }
        }
        out
    }

    /// When a relation was first read.
    fn created(&self, e: EdgeIndex) -> ReadAt {
        self.edge_created
            .get(e.index())
            .copied()
            .unwrap_or(READ_ALL)
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

    /// Records that `a` read `va` when `b` read `vb` (both directions), read at `at`.
    pub fn relate(
        &mut self,
        (a, va): (ClockDomain, i64),
        (b, vb): (ClockDomain, i64),
        source: EdgeSource,
        file: Option<u32>,
        at: ReadAt,
    ) {
        if a == b {
            return;
        }
        let (na, nb) = (self.node(a, at), self.node(b, at));
        self.add_point(na, nb, (va, vb), source, file, at);
        self.add_point(nb, na, (vb, va), source, file, at);
    }

    fn add_point(
        &mut self,
        from: NodeIndex,
        to: NodeIndex,
        point: (i64, i64),
        source: EdgeSource,
        file: Option<u32>,
        read_at: ReadAt,
    ) {
        let edge = match self.graph.find_edge(from, to) {
            Some(e) => e,
            None => {
                let target = key(&self.graph[to]);
                let e = self.graph.add_edge(
                    from,
                    to,
                    Relation {
                        source,
                        file,
                        points: Vec::new(),
                        read: Vec::new(),
                        created: read_at,
                        last_read: read_at,
                        in_order: true,
                        earliest: OnceLock::new(),
                    },
                );
                if let Some(list) = self.neighbours.get_mut(from.index()) {
                    let graph = &self.graph;
                    let at = list.partition_point(|&(_, t)| key(&graph[t]) < target);
                    list.insert(at, (e, to));
                }
                if self.edge_created.len() <= e.index() {
                    self.edge_created.resize(e.index() + 1, read_at);
                }
                self.join(from.index(), to.index());
                e
            }
        };
        let r = &mut self.graph[edge];
        r.earliest = OnceLock::new();
        let at = r.points.partition_point(|p| p.0 <= point.0);
        r.points.insert(at, point);
        r.read.insert(at, read_at);
        r.in_order &= (at == 0 || r.read[at - 1] <= read_at)
            && r.read.get(at + 1).is_none_or(|&next| read_at <= next);
        r.created = r.created.min(read_at);
        r.last_read = r.last_read.max(read_at);
        if let Some(c) = self.edge_created.get_mut(edge.index()) {
            *c = (*c).min(read_at);
        }
    }

    /// The root of a node's set in the union-find (sets are joined by size, so the walk is
    /// short without compressing paths).
    fn root(&self, mut i: usize) -> usize {
        while let Some(&p) = self.parent.get(i) {
            if p as usize == i {
                break;
            }
            i = p as usize;
        }
        i
    }

    /// Joins the sets of two related nodes.
    fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return;
        }
        let (big, small) = if self.set_size[ra] >= self.set_size[rb] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small] = big as u32;
        self.set_size[big] += self.set_size[small];
    }

    /// The shortest path of relations (at most [`MAX_PATH_EDGES`]), breadth first.
    pub fn path(&self, from: &ClockDomain, to: &ClockDomain) -> Option<Vec<EdgeIndex>> {
        self.path_at(from, to, READ_ALL)
    }

    /// The shortest path of the relations read by `at`.
    pub fn path_at(
        &self,
        from: &ClockDomain,
        to: &ClockDomain,
        at: ReadAt,
    ) -> Option<Vec<EdgeIndex>> {
        let (from, to) = (self.find_at(from, at)?, self.find_at(to, at)?);
        if from == to {
            return Some(Vec::new());
        }
        if self.root(from.index()) != self.root(to.index()) {
            return None;
        }
        SEARCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut search) => self.search(&mut search, from, to, at),
            // Not reached (a search never starts another): a fresh scratch does as well.
            Err(_) => self.search(&mut Search::default(), from, to, at),
        })
    }

    /// The breadth-first search of [`ClockGraph::path_at`], with a scratch kept between
    /// searches: a clock related to thousands of others (a hub of sequence clocks) made
    /// every search insert thousands of nodes in a fresh hash map.
    fn search(
        &self,
        search: &mut Search,
        from: NodeIndex,
        to: NodeIndex,
        at: ReadAt,
    ) -> Option<Vec<EdgeIndex>> {
        search.begin(self.graph.node_count());
        search.visit(from, EdgeIndex::end());
        search.queue.push_back((from, 0));
        let neighbours = &self.neighbours;
        while let Some((n, depth)) = search.queue.pop_front() {
            let went_back = !self.non_monotonic.is_empty()
                && self.non_monotonic.get(&n).is_some_and(|&t| t <= at);
            if depth == MAX_PATH_EDGES || went_back {
                continue;
            }
            // Neighbours in a fixed order (by clock) so ties always resolve the same way.
            let next = neighbours.get(n.index()).map_or(&[][..], Vec::as_slice);
            for &(e, t) in next {
                if self.created(e) > at || search.seen(t) {
                    continue;
                }
                search.visit(t, e);
                if t == to {
                    let mut path = Vec::with_capacity(depth + 1);
                    let mut cur = to;
                    while cur != from {
                        let edge = search.came_by(cur);
                        path.push(edge);
                        cur = self.graph.edge_endpoints(edge).map_or(from, |(s, _)| s);
                    }
                    path.reverse();
                    return Some(path);
                }
                search.queue.push_back((t, depth + 1));
            }
        }
        None
    }

    pub fn reachable(&self, from: &ClockDomain, to: &ClockDomain) -> bool {
        self.reachable_at(from, to, READ_ALL)
    }

    /// Whether a path of the relations read by `at` joins two clocks.
    pub fn reachable_at(&self, from: &ClockDomain, to: &ClockDomain, at: ReadAt) -> bool {
        from == to || self.path_at(from, to, at).is_some()
    }

    /// Converts `v` along a path found by [`ClockGraph::path`].
    pub fn convert_along(&self, path: &[EdgeIndex], v: i64) -> i64 {
        self.convert_along_at(path, v, READ_ALL)
    }

    /// Converts `v`, read at `at`, along a path of relations read by then.
    pub fn convert_along_at(&self, path: &[EdgeIndex], v: i64, at: ReadAt) -> i64 {
        path.iter().fold(v, |v, &e| self.graph[e].convert(v, at))
    }

    /// Like [`ClockGraph::convert_along`], `None` when a hop leaves the range of an `i64`
    /// (where the import would wrap around).
    pub fn checked_convert_along(&self, path: &[EdgeIndex], v: i64) -> Option<i64> {
        path.iter()
            .try_fold(v, |v, &e| self.graph[e].checked_convert(v, READ_ALL))
    }

    /// Converts `v` read on `from` to `to`, when a path exists.
    pub fn convert(&self, from: &ClockDomain, to: &ClockDomain, v: i64) -> Option<i64> {
        self.convert_at(from, to, v, READ_ALL)
    }

    /// Converts `v` read on `from` at `at` to `to`, with what had been read by then.
    pub fn convert_at(
        &self,
        from: &ClockDomain,
        to: &ClockDomain,
        v: i64,
        at: ReadAt,
    ) -> Option<i64> {
        if from == to {
            return Some(v);
        }
        self.path_at(from, to, at)
            .map(|p| self.convert_along_at(&p, v, at))
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
        g.relate((boot, 1_000), (mono, 400), EdgeSource::Snapshot, None, 0);
        g.relate((boot, 3_000), (mono, 2_390), EdgeSource::Snapshot, None, 0);
        assert_eq!(g.convert(&mono, &boot, 100), Some(700));
        assert_eq!(g.convert(&mono, &boot, 2_000), Some(2_600));
        assert_eq!(g.convert(&mono, &boot, 2_500), Some(3_110));
        assert_eq!(g.convert(&boot, &boot, 5), Some(5));
        assert_eq!(g.convert(&clock(0, 1), &boot, 5), None);
    }

    #[test]
    fn a_conversion_sees_only_what_was_read_before_it() {
        let mut g = ClockGraph::default();
        let (boot, mono, real) = (clock(0, 6), clock(0, 3), clock(0, 1));
        g.relate((boot, 1_000), (mono, 500), EdgeSource::Snapshot, None, 10);
        g.relate((boot, 2_000), (mono, 550), EdgeSource::Snapshot, None, 20);
        assert_eq!(g.convert_at(&mono, &boot, 600, 15), Some(1_100));
        assert_eq!(g.convert_at(&mono, &boot, 600, 20), Some(2_050));
        assert_eq!(g.convert(&mono, &boot, 600), Some(2_050));
        // Nothing before the first snapshot; a relation read later is no path yet.
        assert_eq!(g.convert_at(&mono, &boot, 600, 9), None);
        g.relate((real, 7), (mono, 0), EdgeSource::Snapshot, None, 30);
        assert_eq!(g.path_at(&real, &boot, 25), None);
        assert_eq!(g.convert_at(&real, &boot, 7, 30), Some(500));
        // A series read out of order keeps to the readings of the time.
        g.relate((boot, 1_500), (mono, 520), EdgeSource::Snapshot, None, 40);
        assert_eq!(g.convert_at(&mono, &boot, 600, 35), Some(2_050));
        assert_eq!(g.convert_at(&mono, &boot, 530, 35), Some(1_030));
        assert_eq!(g.convert_at(&mono, &boot, 530, 40), Some(1_510));
        // A clock that goes back stops being a source from then on.
        let n = g.find(&mono).expect("read");
        g.mark_non_monotonic(n, 50);
        assert_eq!(g.convert_at(&mono, &boot, 600, 45), Some(2_050));
        assert_eq!(g.convert_at(&mono, &boot, 600, 50), None);
        assert_eq!(g.change_times(), vec![10, 30, 50]);
    }

    #[test]
    fn the_end_of_a_file_sees_its_own_last_snapshot_not_the_next_files_first() {
        let mut g = ClockGraph::default();
        let (boot, mono, real) = (clock(0, 6), clock(0, 3), clock(0, 1));
        // File 0 read 3 events, then a snapshot; file 1 reads a snapshot before its first
        // event: the same event count, read later.
        g.relate(
            (boot, 10),
            (mono, 5),
            EdgeSource::Snapshot,
            None,
            read_time(3, 0),
        );
        g.relate(
            (boot, 10),
            (real, 7),
            EdgeSource::Snapshot,
            None,
            read_time(3, 1),
        );
        let end_of_file_0 = read_time(3, 0);
        assert!(g.path_at(&mono, &boot, end_of_file_0).is_some());
        assert_eq!(g.path_at(&real, &boot, end_of_file_0), None);
        assert!(g.path_at(&real, &boot, read_time(3, 1)).is_some());
        // File 1's first event (count 3) sees both.
        assert!(g.path_at(&real, &mono, read_time(3, 1)).is_some());
        assert!(read_time(2, 7) < read_time(3, 0));
    }

    #[test]
    fn a_clock_joined_by_one_relation_changes_only_its_own_paths() {
        let mut g = ClockGraph::default();
        let (boot, hub) = (clock(0, 6), clock(0, 200));
        g.relate((boot, 0), (hub, 0), EdgeSource::Snapshot, None, 0);
        // Sequence clocks, each related to the hub only: leaves.
        g.relate((hub, 1), (clock(1, 64), 1), EdgeSource::Snapshot, None, 10);
        g.relate((hub, 2), (clock(2, 64), 2), EdgeSource::Snapshot, None, 20);
        // A second relation of a leaf, to another clock with relations: may change any path.
        g.relate((clock(1, 64), 3), (boot, 3), EdgeSource::Snapshot, None, 30);
        // More readings of known relations change nothing.
        g.relate((hub, 4), (clock(2, 64), 4), EdgeSource::Snapshot, None, 40);
        let n = |c: ClockDomain| g.find(&c).expect("read");
        let (b, h) = (n(boot), n(hub));
        let mut first = vec![b, h];
        first.sort();
        assert_eq!(
            g.changes(),
            vec![
                (0, ChangeScope::Only(first)),
                (10, ChangeScope::Only(vec![n(clock(1, 64))])),
                (20, ChangeScope::Only(vec![n(clock(2, 64))])),
                (30, ChangeScope::All),
            ]
        );
    }

    #[test]
    fn a_change_scoped_to_some_clocks_leaves_every_other_path_as_it_was() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..200 {
            let mut g = ClockGraph::default();
            let mut known = 1u32;
            for step in 1..=12u64 {
                // Mostly a new clock beside a known one; sometimes two known clocks.
                let a = next(u64::from(known)) as u32;
                let b = if next(3) == 0 {
                    next(u64::from(known)) as u32
                } else {
                    known += 1;
                    known - 1
                };
                g.relate(
                    (clock(0, 100 + a), 0),
                    (clock(0, 100 + b), 0),
                    EdgeSource::Snapshot,
                    None,
                    step * 10,
                );
            }
            let clocks: Vec<ClockDomain> = g.clocks().collect();
            let changes = g.changes();
            // Every read time: one with no entry changes nothing.
            for t in (1..=12u64).map(|step| step * 10) {
                let touched = match changes.iter().find(|c| c.0 == t) {
                    Some((_, ChangeScope::All)) => continue,
                    Some((_, ChangeScope::Only(nodes))) => nodes.clone(),
                    None => Vec::new(),
                };
                let untouched = |c: &ClockDomain| g.find(c).is_some_and(|n| !touched.contains(&n));
                for from in clocks.iter().filter(|c| untouched(c)) {
                    for to in clocks.iter().filter(|c| untouched(c)) {
                        assert_eq!(
                            g.path_at(from, to, t - 1),
                            g.path_at(from, to, t),
                            "{from:?} -> {to:?} at {t}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_series_read_out_of_order_picks_as_a_scan_of_its_readings_would() {
        // Brute force: the readings read by `at`, in source order; the last at or before
        // `v`, else the first; none read yet: the first of all.
        fn scan(points: &[(i64, i64, ReadAt)], v: i64, at: ReadAt) -> (i64, i64) {
            let mut sorted = points.to_vec();
            sorted.sort_by_key(|p| p.0);
            let seen: Vec<_> = sorted.iter().filter(|p| p.2 <= at).collect();
            let pick = match seen.first() {
                None => sorted[0],
                Some(first) if first.0 > v => **first,
                Some(_) => **seen.iter().rev().find(|p| p.0 <= v).expect("one is"),
            };
            (pick.0, pick.1)
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for round in 0..40 {
            let mut g = ClockGraph::default();
            let (a, b) = (clock(0, 3), clock(0, 6));
            let mut points = Vec::new();
            for _ in 0..(1 + round % 17) {
                let (va, at) = (next(100) as i64 * 10, next(50) as ReadAt);
                // Distinct source readings, so the brute force's order is the graph's.
                if points.iter().any(|p: &(i64, i64, ReadAt)| p.0 == va) {
                    continue;
                }
                let vb = va + next(7) as i64;
                g.relate((a, va), (b, vb), EdgeSource::Snapshot, None, at);
                points.push((va, vb, at));
            }
            let e = g
                .graph
                .find_edge(g.find(&a).expect("a"), g.find(&b).expect("b"));
            let relation = &g.graph[e.expect("a relation")];
            for v in (-10..1010).step_by(5) {
                for at in 0..52 {
                    assert_eq!(relation.pick(v, at), scan(&points, v, at), "v {v} at {at}");
                }
            }
        }
    }

    #[test]
    fn paths_are_shortest_and_at_most_four_edges() {
        let mut g = ClockGraph::default();
        let chain: Vec<_> = (1..=6).map(|c| clock(0, c)).collect();
        for w in chain.windows(2) {
            g.relate((w[0], 0), (w[1], 10), EdgeSource::Snapshot, None, 0);
        }
        assert_eq!(g.convert(&chain[0], &chain[4], 0), Some(40));
        assert_eq!(g.path(&chain[0], &chain[5]), None);
        g.relate((chain[0], 0), (chain[5], 7), EdgeSource::Manifest, None, 0);
        assert_eq!(g.convert(&chain[0], &chain[5], 1), Some(8));
    }
}

//! The memory snapshot tracker: Chrome's memory-infra dumps as Trace Processor's
//! MemoryTrackerSnapshotParser and GraphProcessor (Chromium's memory-infra graph, ported)
//! turn them into rows. Dumps of the same time make one global dump; when the time changes
//! (and at the end) the dump becomes a graph — one tree per process from its nodes' `/`
//! paths, names under `global/` in the shared tree, ownership edges between nodes by id
//! (an edge whose source or target is unknown is ignored) — and the graph's sizes are
//! computed: a node's size is the largest of its own size, its children's sum and its
//! largest owner's size (an `<unspecified>` child takes what the children leave), then its
//! not-owning and not-owned sub-sizes, the ownership coefficients that split owned memory
//! among owners by importance, their cumulative products, and the effective sizes (a
//! leaf's size scaled by both coefficients, a parent's the sum of its children's).
//!
//! Rows: one `memory_snapshot` per global dump (on the legacy global instant track, with
//! its level of detail), a `process_memory_snapshot` per process (by pid) and one for the
//! shared tree (pid 0), the nodes in depth-first order of their sorted names
//! (`memory_snapshot_node`: path, size, effective size, other entries as args
//! `<name>.value` and, for bytes, `<name>.unit`), and the edges between emitted nodes
//! (`memory_snapshot_edge`, newest first).

use std::collections::BTreeMap;

use super::*;
use crate::ir::{MemoryEntryValue, MemorySnapshotDump, ProcessMemoryDump};

/// A `memory_snapshot_node` row.
#[derive(Clone, Copy, Debug)]
pub struct MemoryNodeRow {
    pub process_snapshot: u32,
    pub parent: Option<u32>,
    pub path: StrId,
    pub size: i64,
    pub effective_size: i64,
    pub args: ArgsRef,
}

/// The memory snapshot rows, and the dump being gathered.
#[derive(Debug, Default)]
pub struct MemorySnapshotTables {
    /// (ts, track, level of detail)
    pub snapshots: Vec<(i64, u32, StrId)>,
    /// (snapshot, upid)
    pub process_snapshots: Vec<(u32, u32)>,
    pub nodes: Vec<MemoryNodeRow>,
    /// (source node, target node, importance)
    pub edges: Vec<(u32, u32, u32)>,
    pending: Option<Pending>,
}

/// The deepest node path kept (`a/b/…`, in components); Chrome's deepest are about 10.
const MAX_NODE_DEPTH: usize = 256;

#[derive(Debug)]
struct Pending {
    ts: i64,
    machine: MachineId,
    track: TrackRef,
    detail: StrId,
    /// By pid: a later dump of the same pid replaces the earlier one.
    processes: BTreeMap<i64, ProcessMemoryDump>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    bytes: bool,
    value: MemoryEntryValue,
}

#[derive(Debug)]
struct Node {
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    id: u64,
    explicit: bool,
    weak: bool,
    entries: BTreeMap<String, Entry>,
    owns: Option<usize>,
    owned_by: Vec<usize>,
    not_owning_sub_size: u64,
    not_owned_sub_size: u64,
    owning_coefficient: f64,
    owned_coefficient: f64,
    cumulative_owning_coefficient: f64,
    cumulative_owned_coefficient: f64,
}

impl Node {
    fn new(parent: Option<usize>) -> Node {
        Node {
            parent,
            children: BTreeMap::new(),
            id: 0,
            explicit: false,
            weak: false,
            entries: BTreeMap::new(),
            owns: None,
            owned_by: Vec::new(),
            not_owning_sub_size: 0,
            not_owned_sub_size: 0,
            owning_coefficient: 1.0,
            owned_coefficient: 1.0,
            cumulative_owning_coefficient: 1.0,
            cumulative_owned_coefficient: 1.0,
        }
    }
}

/// An ownership edge: (owner, owned, importance).
type Edge = (usize, usize, u32);

/// The global graph: the shared tree's root, each process's root by pid, the nodes and
/// the ownership edges (in the order they were added).
struct Graph {
    nodes: Vec<Node>,
    shared: usize,
    processes: BTreeMap<i64, usize>,
    by_id: FxHashMap<u64, usize>,
    edges: Vec<Edge>,
}

impl Graph {
    fn new() -> Graph {
        Graph {
            nodes: vec![Node::new(None)],
            shared: 0,
            processes: BTreeMap::new(),
            by_id: FxHashMap::default(),
            edges: Vec::new(),
        }
    }

    fn add_node(&mut self, parent: usize, name: &str) -> usize {
        let n = self.nodes.len();
        self.nodes.push(Node::new(Some(parent)));
        self.nodes[parent].children.insert(name.to_string(), n);
        n
    }

    /// The node at `path` under `root`, made (with implicit parents) if needed.
    fn create_node(&mut self, root: usize, id: u64, path: &str, weak: bool) -> usize {
        let mut current = root;
        for key in path.split('/').filter(|k| !k.is_empty()) {
            current = match self.nodes[current].children.get(key) {
                Some(&c) => c,
                None => self.add_node(current, key),
            };
        }
        let node = &mut self.nodes[current];
        node.weak = weak;
        node.explicit = true;
        node.id = id;
        if id != 0 {
            self.by_id.entry(id).or_insert(current);
        }
        current
    }

    fn roots(&self) -> Vec<usize> {
        std::iter::once(self.shared)
            .chain(self.processes.values().copied())
            .collect()
    }

    fn size(&self, n: usize) -> Option<u64> {
        match self.nodes[n].entries.get("size") {
            Some(Entry {
                value: MemoryEntryValue::Uint(v),
                ..
            }) => Some(*v),
            _ => None,
        }
    }

    /// Every node, each after its children and its owners.
    fn post_order(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut state = vec![0u8; self.nodes.len()];
        let mut stack: Vec<(usize, bool)> =
            self.roots().into_iter().rev().map(|r| (r, false)).collect();
        while let Some((n, expanded)) = stack.pop() {
            if expanded {
                if state[n] != 2 {
                    state[n] = 2;
                    out.push(n);
                }
                continue;
            }
            if state[n] != 0 {
                continue;
            }
            state[n] = 1;
            stack.push((n, true));
            let node = &self.nodes[n];
            for &c in node.children.values().rev() {
                stack.push((c, false));
            }
            for &e in node.owned_by.iter().rev() {
                stack.push((self.edges[e].0, false));
            }
        }
        out
    }

    /// Every node reachable so, each after its parent and the node it owns.
    fn pre_order(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut visited = vec![false; self.nodes.len()];
        let mut stack: Vec<usize> = self.roots().into_iter().rev().collect();
        while let Some(n) = stack.pop() {
            if visited[n] {
                continue;
            }
            let node = &self.nodes[n];
            if node.owns.is_some_and(|e| !visited[self.edges[e].1]) {
                continue;
            }
            if node.parent.is_some_and(|p| !visited[p]) {
                continue;
            }
            for &c in node.children.values().rev() {
                stack.push(c);
            }
            for &e in node.owned_by.iter().rev() {
                stack.push(self.edges[e].0);
            }
            visited[n] = true;
            out.push(n);
        }
        out
    }

    fn calculate_size(&mut self, n: usize) {
        let own = self.size(n);
        let mut aggregated: Option<u64> = None;
        for &c in self.nodes[n].children.values() {
            if let Some(s) = self.size(c) {
                aggregated = Some(aggregated.unwrap_or(0).wrapping_add(s));
            }
        }
        let mut max_owner: Option<u64> = None;
        for &e in &self.nodes[n].owned_by {
            if let Some(s) = self.size(self.edges[e].0) {
                max_owner = Some(max_owner.unwrap_or(0).max(s));
            }
        }
        self.nodes[n].entries.remove("size");
        if own.is_none() && aggregated.is_none() && max_owner.is_none() {
            return;
        }
        let aggregated = aggregated.unwrap_or(0);
        let size = own.unwrap_or(0).max(aggregated).max(max_owner.unwrap_or(0));
        let bytes = |v| Entry {
            bytes: true,
            value: MemoryEntryValue::Uint(v),
        };
        self.nodes[n].entries.insert("size".into(), bytes(size));
        let unaccounted = size - aggregated;
        if unaccounted > 0 && !self.nodes[n].children.is_empty() {
            let child = match self.nodes[n].children.get("<unspecified>") {
                Some(&c) => c,
                None => self.add_node(n, "<unspecified>"),
            };
            self.nodes[child]
                .entries
                .entry("size".into())
                .or_insert(bytes(unaccounted));
        }
    }

    fn calculate_sub_sizes(&mut self, n: usize) {
        let Some(size) = self.size(n) else { return };
        if self.nodes[n].children.is_empty() {
            self.nodes[n].not_owning_sub_size += size;
            self.nodes[n].not_owned_sub_size += size;
            return;
        }
        let (mut not_owning, mut not_owned) = (0u64, 0u64);
        for &c in self.nodes[n].children.values() {
            let child = &self.nodes[c];
            if child.owns.is_none() {
                not_owning = not_owning.wrapping_add(child.not_owning_sub_size);
            }
            if child.owned_by.is_empty() {
                not_owned = not_owned.wrapping_add(child.not_owned_sub_size);
                continue;
            }
            let largest_owner = child
                .owned_by
                .iter()
                .map(|&e| self.size(self.edges[e].0).unwrap_or(0))
                .max()
                .unwrap_or(0);
            let child_size = self.size(c).unwrap_or(0);
            not_owned = not_owned.wrapping_add(child_size.wrapping_sub(largest_owner));
        }
        self.nodes[n].not_owning_sub_size += not_owning;
        self.nodes[n].not_owned_sub_size += not_owned;
    }

    fn calculate_ownership_coefficient(&mut self, n: usize) {
        if self.size(n).is_none() || self.nodes[n].owned_by.is_empty() {
            return;
        }
        let mut owners: Vec<Edge> = self.nodes[n]
            .owned_by
            .iter()
            .map(|&e| self.edges[e])
            .collect();
        // Highest importance first; equal importance by increasing not-owning sub-size.
        owners.sort_by(|a, b| {
            b.2.cmp(&a.2).then(
                self.nodes[a.0]
                    .not_owning_sub_size
                    .cmp(&self.nodes[b.0].not_owning_sub_size),
            )
        });
        let mut already_attributed = 0u64;
        let mut i = 0;
        while i < owners.len() {
            let priority = owners[i].2;
            let next = owners[i..]
                .iter()
                .position(|e| e.2 < priority)
                .map_or(owners.len(), |p| i + p);
            let mut remaining = next - i;
            let mut attributed = 0f64;
            for owner in &owners[i..next] {
                let not_owning = self.nodes[owner.0].not_owning_sub_size;
                if not_owning > already_attributed {
                    attributed += (not_owning - already_attributed) as f64 / remaining as f64;
                    already_attributed = not_owning;
                }
                if not_owning != 0 {
                    self.nodes[owner.0].owning_coefficient = attributed / not_owning as f64;
                }
                remaining -= 1;
            }
            i = next;
        }
        let not_owned = self.nodes[n].not_owned_sub_size;
        if not_owned != 0 {
            let remainder = not_owned.wrapping_sub(already_attributed) as f64;
            self.nodes[n].owned_coefficient = remainder / not_owned as f64;
        }
    }

    fn calculate_cumulative_coefficients(&mut self, n: usize) {
        if self.size(n).is_none() {
            return;
        }
        let node = &self.nodes[n];
        let mut owned = node.owned_coefficient;
        if let Some(p) = node.parent {
            owned *= self.nodes[p].cumulative_owned_coefficient;
        }
        let owning = match (node.owns, node.parent) {
            (Some(e), _) => {
                node.owning_coefficient * self.nodes[self.edges[e].1].cumulative_owning_coefficient
            }
            (None, Some(p)) => self.nodes[p].cumulative_owning_coefficient,
            (None, None) => 1.0,
        };
        self.nodes[n].cumulative_owned_coefficient = owned;
        self.nodes[n].cumulative_owning_coefficient = owning;
    }

    fn calculate_effective_size(&mut self, n: usize) {
        let Some(size) = self.size(n) else {
            self.nodes[n].entries.remove("effective_size");
            return;
        };
        let node = &self.nodes[n];
        let effective = if node.children.is_empty() {
            (size as f64 * node.cumulative_owning_coefficient * node.cumulative_owned_coefficient)
                as u64
        } else {
            let mut sum = 0u64;
            for &c in node.children.values() {
                if self.size(c).is_none() {
                    continue;
                }
                if let Some(Entry {
                    value: MemoryEntryValue::Uint(v),
                    ..
                }) = self.nodes[c].entries.get("effective_size")
                {
                    sum = sum.wrapping_add(*v);
                }
            }
            sum
        };
        self.nodes[n]
            .entries
            .entry("effective_size".into())
            .or_insert(Entry {
                bytes: true,
                value: MemoryEntryValue::Uint(effective),
            });
    }

    fn calculate_sizes(&mut self) {
        for n in self.post_order() {
            self.calculate_size(n);
        }
        for n in self.post_order() {
            self.calculate_sub_sizes(n);
        }
        for n in self.post_order() {
            self.calculate_ownership_coefficient(n);
        }
        for n in self.pre_order() {
            self.calculate_cumulative_coefficients(n);
        }
        for n in self.post_order() {
            self.calculate_effective_size(n);
        }
    }
}

impl Builder<'_> {
    pub(super) fn memory_snapshot(&mut self, ts: i64, dump: &MemorySnapshotDump) {
        if self
            .tables
            .memory
            .pending
            .as_ref()
            .is_some_and(|p| p.ts != ts || p.machine != dump.machine)
        {
            self.flush_memory_snapshot();
        }
        let pending = self.tables.memory.pending.get_or_insert_with(|| Pending {
            ts,
            machine: dump.machine,
            track: dump.track,
            detail: dump.detail,
            processes: BTreeMap::new(),
        });
        pending.detail = dump.detail;
        let mut replaced = 0;
        for p in &dump.processes {
            if pending.processes.insert(p.pid, p.clone()).is_some() {
                replaced += 1;
            }
        }
        if replaced > 0 {
            let mrow = self.machine_row(dump.machine);
            for _ in 0..replaced {
                self.stat("memory_snapshot_nodes_dropped", mrow);
            }
        }
    }

    /// Turns the gathered dump into a graph and its rows.
    pub(super) fn flush_memory_snapshot(&mut self) {
        let Some(pending) = self.tables.memory.pending.take() else {
            return;
        };
        let mut graph = Graph::new();
        for &pid in pending.processes.keys() {
            let root = graph.nodes.len();
            graph.nodes.push(Node::new(None));
            graph.processes.insert(pid, root);
        }
        let mut failures = 0;
        let strings = &self.sink.strings;
        let text = |s: StrId| strings.get(s).unwrap_or("").to_string();
        for (pid, p) in &pending.processes {
            // One node per absolute name (the first), in name order.
            let mut by_name: BTreeMap<String, &crate::ir::MemoryNodeDump> = BTreeMap::new();
            for n in &p.nodes {
                match by_name.entry(text(n.absolute_name)) {
                    std::collections::btree_map::Entry::Vacant(e) => {
                        e.insert(n);
                    }
                    std::collections::btree_map::Entry::Occupied(_) => failures += 1,
                }
            }
            for (name, raw) in by_name {
                // A name nested past any real allocator's depth would make paths of its
                // depth squared bytes, and an empty name is the process root, which has no
                // row: both dropped and counted.
                let depth = name.split('/').filter(|k| !k.is_empty()).count();
                if depth == 0 || depth > MAX_NODE_DEPTH {
                    failures += 1;
                    continue;
                }
                let root = if name.starts_with("global/") {
                    graph.shared
                } else {
                    graph.processes[pid]
                };
                let node = match graph.by_id.get(&raw.id) {
                    Some(&existing) if raw.id != 0 => {
                        if !raw.weak {
                            graph.nodes[existing].weak = false;
                        }
                        existing
                    }
                    _ => graph.create_node(root, raw.id, &name, raw.weak),
                };
                for e in &raw.entries {
                    graph.nodes[node]
                        .entries
                        .entry(text(e.name))
                        .or_insert(Entry {
                            bytes: e.bytes,
                            value: e.value,
                        });
                }
            }
        }
        for p in pending.processes.values() {
            // One edge per source id (the first), in id order.
            let mut by_source: BTreeMap<u64, (u64, u32)> = BTreeMap::new();
            for &(source, target, importance) in &p.edges {
                match by_source.entry(source) {
                    std::collections::btree_map::Entry::Vacant(e) => {
                        e.insert((target, importance));
                    }
                    std::collections::btree_map::Entry::Occupied(_) => failures += 1,
                }
            }
            for (source, (target, importance)) in by_source {
                let (Some(&s), Some(&t)) = (graph.by_id.get(&source), graph.by_id.get(&target))
                else {
                    failures += 1;
                    continue;
                };
                let e = graph.edges.len();
                graph.edges.push((s, t, importance));
                graph.nodes[s].owns = Some(e);
                graph.nodes[t].owned_by.push(e);
            }
        }
        graph.calculate_sizes();
        self.emit_memory_graph(&pending, &graph);
        if failures > 0 {
            let mrow = self.machine_row(pending.machine);
            for _ in 0..failures {
                self.stat("memory_snapshot_nodes_dropped", mrow);
            }
        }
    }

    fn emit_memory_graph(&mut self, pending: &Pending, graph: &Graph) {
        let track = self.resolve_track(pending.track);
        let memory = &mut self.tables.memory;
        let snapshot = memory.snapshots.len() as u32;
        memory.snapshots.push((pending.ts, track, pending.detail));
        let mut id_rows: FxHashMap<u64, u32> = FxHashMap::default();
        let mut roots: Vec<(i64, usize)> = graph.processes.iter().map(|(&p, &r)| (p, r)).collect();
        roots.push((0, graph.shared));
        for (pid, root) in roots {
            let upid = self.process(ProcessRef {
                machine: pending.machine,
                pid,
            });
            let process_snapshot = self.tables.memory.process_snapshots.len() as u32;
            self.tables.memory.process_snapshots.push((snapshot, upid));
            // Depth first, children by name; the root itself is no row.
            let mut stack: Vec<(usize, String, Option<u32>)> = graph.nodes[root]
                .children
                .iter()
                .rev()
                .map(|(name, &c)| (c, name.clone(), None))
                .collect();
            while let Some((n, path, parent)) = stack.pop() {
                let row = self.memory_node_row(graph, n, &path, parent, process_snapshot);
                if graph.nodes[n].id != 0 {
                    id_rows.entry(graph.nodes[n].id).or_insert(row);
                }
                for (name, &c) in graph.nodes[n].children.iter().rev() {
                    stack.push((c, format!("{path}/{name}"), Some(row)));
                }
            }
        }
        for &(s, t, importance) in graph.edges.iter().rev() {
            let (Some(&s), Some(&t)) = (
                id_rows.get(&graph.nodes[s].id),
                id_rows.get(&graph.nodes[t].id),
            ) else {
                continue;
            };
            self.tables.memory.edges.push((s, t, importance));
        }
    }

    fn memory_node_row(
        &mut self,
        graph: &Graph,
        n: usize,
        path: &str,
        parent: Option<u32>,
        process_snapshot: u32,
    ) -> u32 {
        let mut size = 0i64;
        let mut effective_size = 0i64;
        let mut args = Vec::new();
        for (name, e) in &graph.nodes[n].entries {
            match e.value {
                MemoryEntryValue::Uint(v) => {
                    let v = v as i64;
                    match name.as_str() {
                        "size" => size = v,
                        "effective_size" => effective_size = v,
                        _ => {
                            args.push(self.sink.arg(&format!("{name}.value"), ArgValue::Int(v)));
                            if e.bytes {
                                let unit = self.sink.intern("bytes");
                                args.push(
                                    self.sink.arg(&format!("{name}.unit"), ArgValue::Str(unit)),
                                );
                            }
                        }
                    }
                }
                MemoryEntryValue::Str(s) => {
                    args.push(self.sink.arg(&format!("{name}.value"), ArgValue::Str(s)));
                }
            }
        }
        let row = MemoryNodeRow {
            process_snapshot,
            parent,
            path: self.sink.intern(path),
            size,
            effective_size,
            args: self.sink.args.push(&args),
        };
        let memory = &mut self.tables.memory;
        memory.nodes.push(row);
        memory.nodes.len() as u32 - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(v: u64) -> Entry {
        Entry {
            bytes: true,
            value: MemoryEntryValue::Uint(v),
        }
    }

    fn entry(g: &Graph, n: usize, name: &str) -> Option<u64> {
        match g.nodes[n].entries.get(name) {
            Some(Entry {
                value: MemoryEntryValue::Uint(v),
                ..
            }) => Some(*v),
            _ => None,
        }
    }

    /// Chromium's memory-infra example: a shared buffer owned by two allocators of equal
    /// importance splits its memory between them; the parent's size covers its children
    /// and an `<unspecified>` child takes the rest.
    #[test]
    fn owned_memory_is_split_between_owners_and_effective_sizes_add_up() {
        let mut g = Graph::new();
        let p = g.nodes.len();
        g.nodes.push(Node::new(None));
        g.processes.insert(1, p);
        let a = g.create_node(p, 1, "a", false);
        let b = g.create_node(p, 2, "b", false);
        let shared = g.create_node(p, 3, "shared/buf", false);
        g.nodes[a].entries.insert("size".into(), bytes(20));
        g.nodes[b].entries.insert("size".into(), bytes(20));
        g.nodes[shared].entries.insert("size".into(), bytes(30));
        let parent = g.nodes[shared].parent.expect("parent");
        g.nodes[parent].entries.insert("size".into(), bytes(50));
        for (s, t) in [(a, shared), (b, shared)] {
            let e = g.edges.len();
            g.edges.push((s, t, 0));
            g.nodes[s].owns = Some(e);
            g.nodes[t].owned_by.push(e);
        }
        g.calculate_sizes();
        // The owners share the 20 they both claim; the buffer keeps the 10 nobody owns.
        assert_eq!(entry(&g, a, "effective_size"), Some(10));
        assert_eq!(entry(&g, b, "effective_size"), Some(10));
        assert_eq!(entry(&g, shared, "effective_size"), Some(10));
        let unspecified = g.nodes[parent].children["<unspecified>"];
        assert_eq!(entry(&g, unspecified, "size"), Some(20));
        assert_eq!(entry(&g, parent, "effective_size"), Some(30));
        assert_eq!(entry(&g, p, "size"), Some(90));
    }
}

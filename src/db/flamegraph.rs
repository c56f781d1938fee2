//! `experimental_flamegraph(profile_type, ts, ts_constraint, upid, upid_group, focus_str)`:
//! Perfetto's flamegraph of a profile as a table of nodes (one per distinct path of names
//! from a root), each with its own and its subtree's count and size.
//!
//! - `graph`: a Java heap dump of `upid` at `ts`. Every reachable object hangs under the
//!   object that first reaches it walking breadth-first from the GC roots (the shortest
//!   path tree, a Reference's `referent` not followed); a node is a class name (the
//!   deobfuscated one when known) under its parent's node; size is self + native size.
//! - `native`: heapprofd allocations of `upid` (`ts_constraint` such as `<= 100` or
//!   `= 100`, else up to `ts`): a node per frame name and mapping under its caller's node;
//!   count/size are what is still allocated, alloc_count/alloc_size what was allocated.
//! - `perf`: perf and stack samples of the threads of `upid` or of the processes of
//!   `upid_group` (upids joined by commas), within `ts_constraint` (`>=100,<200`): count
//!   is samples.
//!
//! `focus_str` keeps only the nodes whose name contains it (ignoring case), their
//! descendants and their ancestors, with cumulative values over the kept nodes.

use std::collections::{HashMap, VecDeque};

use rusqlite::types::Value;
use rusqlite::Connection;

use super::table_fn::TableFn;

pub static FLAMEGRAPH: TableFn = TableFn {
    name: "experimental_flamegraph",
    columns: &[
        "id",
        "depth",
        "name",
        "map_name",
        "count",
        "cumulative_count",
        "size",
        "cumulative_size",
        "alloc_count",
        "cumulative_alloc_count",
        "alloc_size",
        "cumulative_alloc_size",
        "parent_id",
        "source_file",
        "line_number",
    ],
    args: &[
        "profile_type",
        "ts",
        "ts_constraint",
        "upid",
        "upid_group",
        "focus_str",
    ],
    compute,
};

/// A node while the tree is built: its key under its parent, and its own totals.
#[derive(Default)]
struct Node {
    parent: Option<usize>,
    depth: i64,
    name: String,
    map_name: String,
    source_file: Option<String>,
    line_number: Option<i64>,
    /// count, size, alloc_count, alloc_size (own).
    own: [i64; 4],
}

/// Nodes keyed by (parent, name, map name).
#[derive(Default)]
struct Tree {
    nodes: Vec<Node>,
    index: HashMap<(Option<usize>, String, String), usize>,
}

impl Tree {
    fn child(&mut self, parent: Option<usize>, name: &str, map_name: &str) -> usize {
        let key = (parent, name.to_string(), map_name.to_string());
        if let Some(&n) = self.index.get(&key) {
            return n;
        }
        let depth = parent.map_or(0, |p| self.nodes[p].depth + 1);
        let n = self.nodes.len();
        self.nodes.push(Node {
            parent,
            depth,
            name: name.to_string(),
            map_name: map_name.to_string(),
            ..Node::default()
        });
        self.index.insert(key, n);
        n
    }

    /// The rows: nodes in creation order (parents before children), with subtree totals.
    fn rows(self) -> Vec<Vec<Value>> {
        let mut cumulative: Vec<[i64; 4]> = self.nodes.iter().map(|n| n.own).collect();
        for i in (0..self.nodes.len()).rev() {
            if let Some(p) = self.nodes[i].parent {
                let c = cumulative[i];
                for (t, v) in cumulative[p].iter_mut().zip(c) {
                    *t += v;
                }
            }
        }
        self.nodes
            .into_iter()
            .enumerate()
            .map(|(i, n)| {
                let c = cumulative[i];
                vec![
                    Value::Integer(i as i64),
                    Value::Integer(n.depth),
                    Value::Text(n.name),
                    Value::Text(n.map_name),
                    Value::Integer(n.own[0]),
                    Value::Integer(c[0]),
                    Value::Integer(n.own[1]),
                    Value::Integer(c[1]),
                    Value::Integer(n.own[2]),
                    Value::Integer(c[2]),
                    Value::Integer(n.own[3]),
                    Value::Integer(c[3]),
                    n.parent.map_or(Value::Null, |p| Value::Integer(p as i64)),
                    n.source_file.map_or(Value::Null, Value::Text),
                    n.line_number.map_or(Value::Null, Value::Integer),
                ]
            })
            .collect()
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Real(r) => Some(*r as i64),
        Value::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}

fn compute(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let rows = unfocused(conn, args)?;
    Ok(match args.get(5) {
        Some(Value::Text(f)) if !f.is_empty() => focus(rows, f),
        _ => rows,
    })
}

/// How a node stands to the focus: off it, on it and passing it to its children (it matches,
/// or its parent does), or on it only as the ancestor of a match.
#[derive(Clone, Copy, PartialEq)]
enum Focused {
    No,
    Propagating,
    Ancestor,
}

/// `focus_str`, as Trace Processor's FocusTable: only nodes whose name contains the text
/// (ignoring case), their descendants and their ancestors are kept, renumbered in order;
/// own values stay, cumulative ones count the kept nodes only.
fn focus(rows: Vec<Vec<Value>>, text: &str) -> Vec<Vec<Value>> {
    const ID: usize = 0;
    const NAME: usize = 2;
    const OWN: [usize; 4] = [4, 6, 8, 10];
    const PARENT: usize = 12;
    let needle = text.to_lowercase();
    let index: HashMap<i64, usize> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| int(&r[ID]).map(|id| (id, i)))
        .collect();
    let parent_of = |r: &Vec<Value>| int(&r[PARENT]).and_then(|p| index.get(&p).copied());
    let mut state = vec![Focused::No; rows.len()];
    for i in 0..rows.len() {
        let name = match &rows[i][NAME] {
            Value::Text(t) => t.to_lowercase(),
            _ => String::new(),
        };
        let parent = parent_of(&rows[i]);
        if name.contains(&needle) {
            state[i] = Focused::Propagating;
            let mut up = parent;
            while let Some(p) = up {
                if state[p] != Focused::No {
                    break;
                }
                state[p] = Focused::Ancestor;
                up = parent_of(&rows[p]);
            }
        } else if parent.is_some_and(|p| state[p] == Focused::Propagating) {
            state[i] = Focused::Propagating;
        }
    }
    let mut cumulative = vec![[0i64; 4]; rows.len()];
    for i in (0..rows.len()).rev() {
        if state[i] == Focused::No {
            continue;
        }
        for (k, &col) in OWN.iter().enumerate() {
            cumulative[i][k] += int(&rows[i][col]).unwrap_or(0);
        }
        if let Some(p) = parent_of(&rows[i]) {
            let c = cumulative[i];
            for (t, v) in cumulative[p].iter_mut().zip(c) {
                *t += v;
            }
        }
    }
    let mut new_id: HashMap<usize, i64> = HashMap::new();
    let mut out = Vec::new();
    for (i, mut row) in rows.into_iter().enumerate() {
        if state[i] == Focused::No {
            continue;
        }
        let parent = int(&row[PARENT])
            .and_then(|p| index.get(&p))
            .and_then(|p| new_id.get(p).copied());
        let id = out.len() as i64;
        new_id.insert(i, id);
        row[ID] = Value::Integer(id);
        row[PARENT] = parent.map_or(Value::Null, Value::Integer);
        for (k, &col) in OWN.iter().enumerate() {
            row[col + 1] = Value::Integer(cumulative[i][k]);
        }
        out.push(row);
    }
    out
}

/// The flamegraph of the profile before any focus.
fn unfocused(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let kind = match args.first() {
        Some(Value::Text(t)) => t.to_ascii_lowercase(),
        _ => String::new(),
    };
    let ts = args.get(1).and_then(int);
    let constraint = match args.get(2) {
        Some(Value::Text(t)) => Some(t.trim().to_string()),
        _ => None,
    };
    let upid = args.get(3).and_then(int);
    if kind == "perf" {
        // A process, or a group of them (`upid_group`: upids joined by commas).
        let mut upids: Vec<i64> = upid.into_iter().collect();
        if let Some(Value::Text(group)) = args.get(4) {
            upids.extend(
                group
                    .split(',')
                    .filter_map(|u| u.trim().parse::<i64>().ok()),
            );
        }
        if let Some(Value::Integer(u)) = args.get(4) {
            upids.push(*u);
        }
        let bounds = constraint.as_deref().map(time_bounds).unwrap_or_default();
        return perf(conn, &upids, &bounds);
    }
    let Some(upid) = upid else {
        return Ok(Vec::new());
    };
    match kind.as_str() {
        "graph" => graph(conn, upid, ts),
        "native" | "heap_profile" => native(conn, upid, ts, constraint.as_deref()),
        _ => Ok(Vec::new()),
    }
}

/// Time bounds such as `>= 100` or `>=100,<200` as (SQL operator, value) pairs; parts
/// that do not parse are ignored.
fn time_bounds(text: &str) -> Vec<(&'static str, i64)> {
    text.split(',')
        .filter_map(|part| {
            let part = part.trim();
            let op = ["<=", ">=", "==", "!=", "=", "<", ">"]
                .into_iter()
                .find(|o| part.starts_with(o))?;
            let value = part[op.len()..].trim().parse().ok()?;
            Some((if op == "==" { "=" } else { op }, value))
        })
        .collect()
}

/// The heap dump's shortest-path tree by class.
fn graph(conn: &Connection, upid: i64, ts: Option<i64>) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(ts) = ts else {
        return Ok(Vec::new());
    };
    let mut stmt = conn.prepare(
        "SELECT o.id, o.self_size + o.native_size, o.reference_set_id, o.root_type IS NOT NULL,
                COALESCE(c.deobfuscated_name, c.name, '')
         FROM heap_graph_object o LEFT JOIN heap_graph_class c ON c.id = o.type_id
         WHERE o.upid = ?1 AND o.graph_sample_ts = ?2 ORDER BY o.id",
    )?;
    let mut objects: Vec<(i64, i64, Option<i64>, bool, String)> = Vec::new();
    let mut rows = stmt.query([upid, ts])?;
    while let Some(r) = rows.next()? {
        objects.push((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?));
    }
    if objects.is_empty() {
        return Ok(Vec::new());
    }
    let index: HashMap<i64, usize> = objects.iter().enumerate().map(|(i, o)| (o.0, i)).collect();
    let first = objects[0].0;
    let last = objects[objects.len() - 1].0;
    // Outgoing edges followed for reachability.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); objects.len()];
    let mut stmt = conn.prepare(
        "SELECT r.owner_id, r.owned_id FROM heap_graph_reference r
         JOIN heap_graph_object o ON o.id = r.owner_id
         LEFT JOIN heap_graph_class c ON c.id = o.type_id
         WHERE r.owner_id BETWEEN ?1 AND ?2 AND r.owned_id IS NOT NULL
           AND NOT (COALESCE(c.kind, '') IN ('KIND_SOFT_REFERENCE', 'KIND_WEAK_REFERENCE',
                    'KIND_FINALIZER_REFERENCE', 'KIND_PHANTOM_REFERENCE')
                    AND r.field_name = 'java.lang.ref.Reference.referent')
         ORDER BY r.id",
    )?;
    let mut rows = stmt.query([first, last])?;
    while let Some(r) = rows.next()? {
        let (owner, owned): (i64, i64) = (r.get(0)?, r.get(1)?);
        if let (Some(&a), Some(&b)) = (index.get(&owner), index.get(&owned)) {
            children[a].push(b);
        }
    }
    let mut tree = Tree::default();
    let mut node_of: Vec<Option<usize>> = vec![None; objects.len()];
    let mut queue = VecDeque::new();
    for (i, o) in objects.iter().enumerate() {
        if o.3 && node_of[i].is_none() {
            let n = tree.child(None, &o.4, "JAVA");
            node_of[i] = Some(n);
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        let parent = node_of[i];
        for &c in &children[i] {
            if node_of[c].is_none() {
                node_of[c] = Some(tree.child(parent, &objects[c].4, "JAVA"));
                queue.push_back(c);
            }
        }
    }
    for (i, o) in objects.iter().enumerate() {
        if let Some(n) = node_of[i] {
            tree.nodes[n].own[0] += 1;
            tree.nodes[n].own[1] += o.1;
        }
    }
    Ok(tree.rows())
}

/// A callsite tree from (callsite, count, size, alloc count, alloc size) per callsite.
fn callsite_tree(
    conn: &Connection,
    totals: &HashMap<i64, [i64; 4]>,
) -> rusqlite::Result<Vec<Vec<Value>>> {
    let mut stmt = conn.prepare(
        "SELECT c.id, c.parent_id, COALESCE(f.deobfuscated_name, f.name, ''),
                COALESCE(m.name, ''), s.source_file, s.line_number
         FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
         LEFT JOIN stack_profile_mapping m ON m.id = f.mapping
         LEFT JOIN stack_profile_symbol s ON s.symbol_set_id = f.symbol_set_id
           AND s.id = (SELECT min(id) FROM stack_profile_symbol WHERE symbol_set_id = f.symbol_set_id)
         ORDER BY c.id",
    )?;
    type Site = (Option<i64>, String, String, Option<String>, Option<i64>);
    let mut sites: HashMap<i64, Site> = HashMap::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        sites.insert(
            r.get(0)?,
            (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?),
        );
    }
    let mut tree = Tree::default();
    let mut node_of: HashMap<i64, usize> = HashMap::new();
    let mut ids: Vec<i64> = totals.keys().copied().collect();
    ids.sort_unstable();
    for id in ids {
        // The path from the root to this callsite.
        let mut path = Vec::new();
        let mut at = Some(id);
        while let Some(c) = at {
            if path.len() > 10_000 {
                break;
            }
            path.push(c);
            at = sites.get(&c).and_then(|s| s.0);
        }
        let mut parent = None;
        for &c in path.iter().rev() {
            let node = match node_of.get(&c) {
                Some(&n) => n,
                None => {
                    let Some(site) = sites.get(&c) else {
                        break;
                    };
                    let n = tree.child(parent, &site.1, &site.2);
                    tree.nodes[n].source_file.clone_from(&site.3);
                    tree.nodes[n].line_number = site.4;
                    node_of.insert(c, n);
                    n
                }
            };
            parent = Some(node);
        }
        if let (Some(n), Some(t)) = (parent, totals.get(&id)) {
            for (o, v) in tree.nodes[n].own.iter_mut().zip(t) {
                *o += v;
            }
        }
    }
    Ok(tree.rows())
}

/// heapprofd allocations up to a time.
fn native(
    conn: &Connection,
    upid: i64,
    ts: Option<i64>,
    constraint: Option<&str>,
) -> rusqlite::Result<Vec<Vec<Value>>> {
    // `<= 100`, `= 100`, `< 100`, `>= 100`, `> 100`; without one, up to `ts`.
    let (op, bound) = match constraint {
        Some(c) => {
            let ops = ["<=", ">=", "=", "<", ">"];
            let op = ops
                .iter()
                .find(|o| c.starts_with(**o))
                .copied()
                .unwrap_or("<=");
            let bound = c[op.len().min(c.len())..].trim().parse().ok().or(ts);
            (op, bound)
        }
        None => ("<=", ts),
    };
    let filter = match bound {
        Some(b) => format!(" AND ts {op} {b}"),
        None => String::new(),
    };
    let mut stmt = conn.prepare(&format!(
        "SELECT callsite_id, SUM(count), SUM(size),
                SUM(CASE WHEN count > 0 THEN count ELSE 0 END),
                SUM(CASE WHEN size > 0 THEN size ELSE 0 END)
         FROM heap_profile_allocation WHERE upid = ?1{filter} GROUP BY callsite_id"
    ))?;
    let mut totals = HashMap::new();
    let mut rows = stmt.query([upid])?;
    while let Some(r) = rows.next()? {
        totals.insert(r.get(0)?, [r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?]);
    }
    callsite_tree(conn, &totals)
}

/// Stack samples of the threads of some processes, within the time bounds.
fn perf(
    conn: &Connection,
    upids: &[i64],
    bounds: &[(&str, i64)],
) -> rusqlite::Result<Vec<Vec<Value>>> {
    if upids.is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<String> = upids.iter().map(i64::to_string).collect();
    let mut filter = format!("t.upid IN ({})", list.join(","));
    for (op, value) in bounds {
        filter.push_str(&format!(" AND s.ts {op} {value}"));
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT s.callsite_id, count(*) FROM stack_sample s
         JOIN thread t USING (utid) WHERE {filter} GROUP BY s.callsite_id"
    ))?;
    let mut totals = HashMap::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let n: i64 = r.get(1)?;
        totals.insert(r.get(0)?, [n, n, n, n]);
    }
    callsite_tree(conn, &totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row with an id, name, parent and own count / size (alloc values the same).
    fn row(
        id: i64,
        depth: i64,
        name: &str,
        parent: Option<i64>,
        count: i64,
        size: i64,
    ) -> Vec<Value> {
        let mut r = vec![
            Value::Integer(id),
            Value::Integer(depth),
            Value::Text(name.into()),
            Value::Text("/lib.so".into()),
        ];
        for v in [count, count, size, size, count, count, size, size] {
            r.push(Value::Integer(v));
        }
        r.push(parent.map_or(Value::Null, Value::Integer));
        r.extend([Value::Null, Value::Null]);
        r
    }

    #[test]
    fn focus_keeps_matches_their_descendants_and_ancestors() {
        // main → {Alloc → leaf, other}; other → alloc_again.
        let rows = vec![
            row(0, 0, "main", None, 1, 10),
            row(1, 1, "Alloc", Some(0), 2, 20),
            row(2, 2, "leaf", Some(1), 3, 30),
            row(3, 1, "other", Some(0), 4, 40),
            row(4, 2, "alloc_again", Some(3), 5, 50),
            row(5, 2, "skipped", Some(3), 6, 60),
        ];
        let got: Vec<(i64, String, i64, i64, i64, Option<i64>)> = focus(rows, "ALLOC")
            .iter()
            .map(|r| {
                let name = match &r[2] {
                    Value::Text(t) => t.clone(),
                    _ => String::new(),
                };
                (
                    int(&r[0]).unwrap(),
                    name,
                    int(&r[4]).unwrap(),
                    int(&r[5]).unwrap(),
                    int(&r[7]).unwrap(),
                    int(&r[12]),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (0, "main".into(), 1, 15, 150, None),
                (1, "Alloc".into(), 2, 5, 50, Some(0)),
                (2, "leaf".into(), 3, 3, 30, Some(1)),
                (3, "other".into(), 4, 9, 90, Some(0)),
                (4, "alloc_again".into(), 5, 5, 50, Some(3)),
            ]
        );
    }
}

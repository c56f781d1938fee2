//! Perfetto's slice and flow operator table functions, so queries written for Trace
//! Processor keep working: `ancestor_slice(id)` (the slice's parents up to its root),
//! `descendant_slice(id)` (every slice nested in it), `directly_connected_flow(id)` (the
//! chains of flows through the slice), `following_flow(id)` (flows reachable from it, going
//! down into the descendants of every slice reached) and `preceding_flow(id)` (flows that
//! lead to it, going up through the ancestors of every slice reached). Rows are in id order,
//! with the columns of `slice` or `flow`; an unknown id gives no rows.

use std::collections::{HashMap, HashSet, VecDeque};

use rusqlite::types::Value;
use rusqlite::{params, Connection};

use super::table_fn::TableFn;

/// The columns of `slice`, as `SELECT *` lists them.
const SLICE_COLUMNS: &[&str] = &[
    "id",
    "ts",
    "dur",
    "track_id",
    "category",
    "name",
    "depth",
    "parent_id",
    "arg_set_id",
    "thread_ts",
    "thread_dur",
    "thread_instruction_count",
    "thread_instruction_delta",
    "cat",
    "slice_id",
];

const FLOW_COLUMNS: &[&str] = &["id", "slice_out", "slice_in", "trace_id", "arg_set_id"];

pub static ANCESTOR_SLICE: TableFn = TableFn {
    name: "ancestor_slice",
    columns: SLICE_COLUMNS,
    args: &["start_id"],
    compute: ancestors,
};

pub static DESCENDANT_SLICE: TableFn = TableFn {
    name: "descendant_slice",
    columns: SLICE_COLUMNS,
    args: &["start_id"],
    compute: descendants,
};

pub static DIRECTLY_CONNECTED_FLOW: TableFn = TableFn {
    name: "directly_connected_flow",
    columns: FLOW_COLUMNS,
    args: &["start_id"],
    compute: directly_connected,
};

pub static FOLLOWING_FLOW: TableFn = TableFn {
    name: "following_flow",
    columns: FLOW_COLUMNS,
    args: &["start_id"],
    compute: following,
};

pub static PRECEDING_FLOW: TableFn = TableFn {
    name: "preceding_flow",
    columns: FLOW_COLUMNS,
    args: &["start_id"],
    compute: preceding,
};

fn start_id(args: &[Value]) -> Option<i64> {
    match args.first() {
        Some(Value::Integer(id)) => Some(*id),
        _ => None,
    }
}

fn slice_rows(conn: &Connection, ids: &[i64]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let sql = format!(
        "SELECT {} FROM slice WHERE id = ?1",
        SLICE_COLUMNS.join(", ")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        let mut rows = stmt.query([id])?;
        if let Some(row) = rows.next()? {
            let values = (0..SLICE_COLUMNS.len())
                .map(|i| row.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            out.push(values);
        }
    }
    Ok(out)
}

/// A slice's place: (track, ts, dur, depth, parent).
type Place = (i64, i64, i64, i64, Option<i64>);

fn place(conn: &Connection, id: i64) -> rusqlite::Result<Option<Place>> {
    let mut stmt =
        conn.prepare_cached("SELECT track_id, ts, dur, depth, parent_id FROM slice WHERE id = ?1")?;
    let mut rows = stmt.query([id])?;
    match rows.next()? {
        Some(r) => Ok(Some((
            r.get::<_, Option<i64>>(0)?.unwrap_or(-1),
            r.get::<_, Option<i64>>(1)?.unwrap_or(0),
            r.get::<_, Option<i64>>(2)?.unwrap_or(0),
            r.get::<_, Option<i64>>(3)?.unwrap_or(0),
            r.get(4)?,
        ))),
        None => Ok(None),
    }
}

/// The ids of a slice's ancestors, root first (a parent's id is below its children's).
fn ancestor_ids(conn: &Connection, id: i64) -> rusqlite::Result<Vec<i64>> {
    let mut out = Vec::new();
    let mut at = place(conn, id)?.and_then(|p| p.4);
    while let Some(parent) = at {
        // A malformed chain (a cycle) ends the walk.
        if out.contains(&parent) || out.len() > 4096 {
            break;
        }
        out.push(parent);
        at = place(conn, parent)?.and_then(|p| p.4);
    }
    out.sort_unstable();
    Ok(out)
}

/// Whether a slice at `(track, ts, depth)` is nested in `outer`: on its track, deeper, and
/// starting within it (an unfinished slice, dur -1, lasts to the end).
fn nested_in(outer: &Place, track: i64, ts: i64, depth: i64) -> bool {
    let (o_track, o_ts, o_dur, o_depth, _) = *outer;
    let end = if o_dur < 0 {
        i64::MAX
    } else {
        o_ts.saturating_add(o_dur)
    };
    track == o_track && depth > o_depth && ts >= o_ts && ts <= end
}

fn ancestors(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(id) = start_id(args) else {
        return Ok(Vec::new());
    };
    slice_rows(conn, &ancestor_ids(conn, id)?)
}

fn descendants(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(id) = start_id(args) else {
        return Ok(Vec::new());
    };
    let Some(start) = place(conn, id)? else {
        return Ok(Vec::new());
    };
    let end = if start.2 < 0 {
        i64::MAX
    } else {
        start.1.saturating_add(start.2)
    };
    let sql = format!(
        "SELECT {} FROM slice WHERE track_id = ?1 AND ts >= ?2 AND ts <= ?3 AND depth > ?4
         ORDER BY id",
        SLICE_COLUMNS.join(", ")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(params![start.0, start.1, end, start.3])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(
            (0..SLICE_COLUMNS.len())
                .map(|i| row.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?,
        );
    }
    Ok(out)
}

/// Every flow: (id, slice_out, slice_in) and its row.
struct Flows {
    edges: Vec<(i64, i64, i64)>,
    rows: HashMap<i64, Vec<Value>>,
}

fn flows(conn: &Connection) -> rusqlite::Result<Flows> {
    let sql = format!("SELECT {} FROM flow", FLOW_COLUMNS.join(", "));
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = Flows {
        edges: Vec::new(),
        rows: HashMap::new(),
    };
    while let Some(row) = rows.next()? {
        let values = (0..FLOW_COLUMNS.len())
            .map(|i| row.get::<_, Value>(i))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let int = |v: &Value| match v {
            Value::Integer(i) => *i,
            _ => -1,
        };
        let (id, out_, in_) = (int(&values[0]), int(&values[1]), int(&values[2]));
        out.edges.push((id, out_, in_));
        out.rows.insert(id, values);
    }
    Ok(out)
}

fn flow_rows(flows: &Flows, mut ids: Vec<i64>) -> Vec<Vec<Value>> {
    ids.sort_unstable();
    ids.dedup();
    ids.iter()
        .filter_map(|id| flows.rows.get(id).cloned())
        .collect()
}

/// Per slice, its flows: (flow id, the slice at the other end).
type Ends = HashMap<i64, Vec<(i64, i64)>>;

/// The flows leaving (`by_out`) and entering (`by_in`) each slice.
fn adjacency(flows: &Flows) -> (Ends, Ends) {
    let mut by_out = Ends::new();
    let mut by_in = Ends::new();
    for &(f, out_, in_) in &flows.edges {
        by_out.entry(out_).or_default().push((f, in_));
        by_in.entry(in_).or_default().push((f, out_));
    }
    (by_out, by_in)
}

/// Walks from `id` breadth first: `next(slice)` lists the (flow, slice reached) pairs to
/// follow from a slice; returns every flow followed.
fn walk(
    id: i64,
    mut next: impl FnMut(i64) -> rusqlite::Result<Vec<(i64, i64)>>,
) -> rusqlite::Result<Vec<i64>> {
    let mut found = Vec::new();
    let mut seen: HashSet<i64> = HashSet::from([id]);
    let mut queue = VecDeque::from([id]);
    while let Some(s) = queue.pop_front() {
        for (f, to) in next(s)? {
            found.push(f);
            if seen.insert(to) {
                queue.push_back(to);
            }
        }
    }
    Ok(found)
}

fn directly_connected(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(id) = start_id(args) else {
        return Ok(Vec::new());
    };
    let flows = flows(conn)?;
    let (by_out, by_in) = adjacency(&flows);
    // Forward from the slice along slice_out → slice_in, and backward along slice_in →
    // slice_out, never through ancestors or descendants.
    let mut found = walk(id, |s| Ok(by_out.get(&s).cloned().unwrap_or_default()))?;
    found.extend(walk(id, |s| {
        Ok(by_in.get(&s).cloned().unwrap_or_default())
    })?);
    Ok(flow_rows(&flows, found))
}

fn following(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(id) = start_id(args) else {
        return Ok(Vec::new());
    };
    let flows = flows(conn)?;
    // The flows leaving each track, with where their outgoing slice sits, to find those
    // leaving a slice reached or a slice nested in it.
    let mut by_track: HashMap<i64, Vec<(i64, i64, Place, i64)>> = HashMap::new();
    for &(f, out_, in_) in &flows.edges {
        if let Some(p) = place(conn, out_)? {
            by_track.entry(p.0).or_default().push((f, out_, p, in_));
        }
    }
    let found = walk(id, |s| {
        let Some(at) = place(conn, s)? else {
            return Ok(Vec::new());
        };
        Ok(by_track
            .get(&at.0)
            .into_iter()
            .flatten()
            .filter(|(_, out_, p, _)| *out_ == s || nested_in(&at, p.0, p.1, p.3))
            .map(|&(f, _, _, in_)| (f, in_))
            .collect())
    })?;
    Ok(flow_rows(&flows, found))
}

fn preceding(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(id) = start_id(args) else {
        return Ok(Vec::new());
    };
    let flows = flows(conn)?;
    let (_, by_in) = adjacency(&flows);
    let found = walk(id, |s| {
        let mut into = ancestor_ids(conn, s)?;
        into.push(s);
        Ok(into
            .iter()
            .filter_map(|x| by_in.get(x))
            .flatten()
            .copied()
            .collect())
    })?;
    Ok(flow_rows(&flows, found))
}

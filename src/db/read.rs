//! The read layer: SQL the panes run to summarise the trace, written once here beside the
//! schema, so the timeline's aggregates are exactly what `sextant query` gives for the same
//! text (the panes show the SQL they ran). Every statement is plain SQL with the area's
//! bounds and track ids written in as numbers: it can be copied and run as is.
//!
//! Durations are clipped to the area: a slice that starts before the area counts from the
//! area's start, one still running at its end counts to its end, and an unfinished one
//! (`dur = -1`) runs to the area's end.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// What an area covers: a span of trace time and, per kind of track, the rows' ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AreaSpec {
    pub start: i64,
    pub end: i64,
    /// `slice.track_id`s.
    pub slice_tracks: Vec<i64>,
    /// `thread_state.utid`s (threads whose state row is in the area).
    pub state_utids: Vec<i64>,
    /// `sched_slice.ucpu`s (CPU tracks in the area).
    pub ucpus: Vec<i64>,
    /// `counter.track_id`s.
    pub counter_tracks: Vec<i64>,
    /// Threads in the area, for the samples (all threads when empty).
    pub utids: Vec<i64>,
}

/// The aggregate tabs, in their order on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aggregate {
    Slices,
    ThreadStates,
    CpuByThread,
    CpuByProcess,
    Counters,
    Samples,
}

impl Aggregate {
    pub const ALL: [Aggregate; 6] = [
        Aggregate::Slices,
        Aggregate::ThreadStates,
        Aggregate::CpuByThread,
        Aggregate::CpuByProcess,
        Aggregate::Counters,
        Aggregate::Samples,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Aggregate::Slices => "Slices",
            Aggregate::ThreadStates => "Thread states",
            Aggregate::CpuByThread => "CPU by thread",
            Aggregate::CpuByProcess => "CPU by process",
            Aggregate::Counters => "Counters",
            Aggregate::Samples => "Samples",
        }
    }

    /// The title on a narrow screen.
    pub fn short_title(self) -> &'static str {
        match self {
            Aggregate::Slices => "Slices",
            Aggregate::ThreadStates => "States",
            Aggregate::CpuByThread => "CPU/thread",
            Aggregate::CpuByProcess => "CPU/proc",
            Aggregate::Counters => "Counters",
            Aggregate::Samples => "Samples",
        }
    }

    /// The columns and how to show them.
    pub fn columns(self) -> &'static [(&'static str, Kind)] {
        use Kind::*;
        match self {
            Aggregate::Slices => &[
                ("name", Text),
                ("occurrences", Count),
                ("wall_dur", Dur),
                ("avg_wall_dur", Dur),
                ("max_wall_dur", Dur),
                ("self_dur", Dur),
            ],
            Aggregate::ThreadStates => &[
                ("thread", Text),
                ("tid", Id),
                ("state", State),
                ("occurrences", Count),
                ("dur", Dur),
                ("percent", Percent),
            ],
            Aggregate::CpuByThread => &[
                ("thread", Text),
                ("tid", Id),
                ("process", Text),
                ("pid", Id),
                ("occurrences", Count),
                ("cpu_time", Dur),
                ("percent", Percent),
            ],
            Aggregate::CpuByProcess => &[
                ("process", Text),
                ("pid", Id),
                ("threads", Count),
                ("occurrences", Count),
                ("cpu_time", Dur),
                ("percent", Percent),
            ],
            Aggregate::Counters => &[
                ("counter", Text),
                ("samples", Count),
                ("min", Value),
                ("max", Value),
                ("mean", Value),
                ("delta", Value),
            ],
            Aggregate::Samples => &[
                ("function", Text),
                ("self_samples", Count),
                ("percent", Percent),
            ],
        }
    }

    /// The SQL for this aggregate over `area`, or `None` when the area has no track of the
    /// kind it reads.
    pub fn sql(self, area: &AreaSpec) -> Option<String> {
        let (s, e) = (area.start, area.end);
        // A row's end, an unfinished one running to the area's end.
        let end = |ts: &str, dur: &str| format!("IIF({dur} < 0, {e}, {ts} + {dur})");
        let clipped = |ts: &str, dur: &str| format!("MIN({}, {e}) - MAX({ts}, {s})", end(ts, dur));
        let overlaps = |ts: &str, dur: &str| format!("{ts} < {e} AND {} > {s}", end(ts, dur));
        Some(match self {
            Aggregate::Slices => {
                let tracks = ids(&area.slice_tracks)?;
                format!(
                    "WITH s AS (\n  SELECT id, name, {c} AS d\n  FROM slice\n  WHERE track_id IN ({tracks})\n    AND {o}\n),\nkids AS (\n  SELECT parent_id AS id, SUM({c}) AS d\n  FROM slice\n  WHERE track_id IN ({tracks}) AND parent_id IN (SELECT id FROM s)\n    AND {o}\n  GROUP BY parent_id\n)\nSELECT s.name AS name, COUNT(*) AS occurrences, SUM(s.d) AS wall_dur,\n  CAST(AVG(s.d) AS INTEGER) AS avg_wall_dur, MAX(s.d) AS max_wall_dur,\n  SUM(s.d - COALESCE(kids.d, 0)) AS self_dur\nFROM s LEFT JOIN kids USING (id)\nGROUP BY s.name\nORDER BY wall_dur DESC, name",
                    c = clipped("ts", "dur"),
                    o = overlaps("ts", "dur"),
                )
            }
            Aggregate::ThreadStates => {
                // A state lasts until the thread's next one, as the timeline draws it: an
                // unfinished one (dur -1) is cut there, or at the trace's end.
                let utids = ids(&area.state_utids)?;
                format!(
                    "WITH t AS (\n  SELECT utid, state, ts,\n    MIN(IIF(dur < 0, (SELECT end_ts FROM trace_bounds), ts + dur),\n      COALESCE(LEAD(ts) OVER (PARTITION BY utid ORDER BY ts, id), {e})) AS end_ts\n  FROM thread_state\n  WHERE utid IN ({utids}) AND ts < {e}\n),\ns AS (\n  SELECT utid, state, MIN(end_ts, {e}) - MAX(ts, {s}) AS d\n  FROM t WHERE end_ts > {s}\n),\ntotal AS (\n  SELECT utid, SUM(d) AS d FROM s GROUP BY utid\n)\nSELECT th.name AS thread, th.tid AS tid, s.state AS state, COUNT(*) AS occurrences,\n  SUM(s.d) AS dur,\n  ROUND(100.0 * SUM(s.d) / total.d, 1) AS percent\nFROM s JOIN total USING (utid) JOIN thread th USING (utid)\nGROUP BY s.utid, s.state\nORDER BY dur DESC, tid, state"
                )
            }
            Aggregate::CpuByThread | Aggregate::CpuByProcess => {
                let cpus = ids(&area.ucpus)?;
                let base = format!(
                    "WITH s AS (\n  SELECT utid, {c} AS d\n  FROM sched_slice\n  WHERE ucpu IN ({cpus}) AND {o}\n    AND utid NOT IN (SELECT utid FROM thread WHERE tid = 0)\n)\n",
                    c = clipped("ts", "dur"),
                    o = overlaps("ts", "dur"),
                );
                if self == Aggregate::CpuByThread {
                    format!(
                        "{base}SELECT t.name AS thread, t.tid AS tid, p.name AS process, p.pid AS pid,\n  COUNT(*) AS occurrences, SUM(s.d) AS cpu_time,\n  ROUND(100.0 * SUM(s.d) / (SELECT SUM(d) FROM s), 1) AS percent\nFROM s JOIN thread t USING (utid) LEFT JOIN process p USING (upid)\nGROUP BY s.utid\nORDER BY cpu_time DESC, tid"
                    )
                } else {
                    format!(
                        "{base}SELECT p.name AS process, p.pid AS pid, COUNT(DISTINCT s.utid) AS threads,\n  COUNT(*) AS occurrences, SUM(s.d) AS cpu_time,\n  ROUND(100.0 * SUM(s.d) / (SELECT SUM(d) FROM s), 1) AS percent\nFROM s JOIN thread t USING (utid) LEFT JOIN process p USING (upid)\nGROUP BY t.upid\nORDER BY cpu_time DESC, pid"
                    )
                }
            }
            Aggregate::Counters => {
                let tracks = ids(&area.counter_tracks)?;
                format!(
                    "WITH c AS (\n  SELECT track_id, ts, value,\n    LEAD(ts) OVER (PARTITION BY track_id ORDER BY ts, id) AS next_ts\n  FROM counter\n  WHERE track_id IN ({tracks}) AND ts < {e}\n),\nw AS (\n  SELECT track_id, value, MAX(ts, {s}) AS b, MIN(COALESCE(next_ts, {e}), {e}) AS e,\n    FIRST_VALUE(value) OVER win AS first_value,\n    LAST_VALUE(value) OVER win AS last_value\n  FROM c\n  WHERE COALESCE(next_ts, {e}) > {s}\n  WINDOW win AS (PARTITION BY track_id ORDER BY ts\n    ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)\n)\nSELECT COALESCE(t.name, t.type) || IIF(t.cpu IS NULL, '', ' cpu' || t.cpu) AS counter,\n  COUNT(*) AS samples, MIN(w.value) AS min, MAX(w.value) AS max,\n  SUM(w.value * (w.e - w.b)) / NULLIF(SUM(w.e - w.b), 0) AS mean,\n  MAX(w.last_value) - MAX(w.first_value) AS delta\nFROM w JOIN __intrinsic_track t ON t.id = w.track_id\nGROUP BY w.track_id\nORDER BY counter, w.track_id"
                )
            }
            Aggregate::Samples => {
                let only = match ids(&area.utids) {
                    Some(u) => format!(" AND utid IN ({u})"),
                    None => String::new(),
                };
                format!(
                    "WITH s AS (\n  SELECT callsite_id FROM cpu_profile_stack_sample\n  WHERE ts >= {s} AND ts < {e}{only}\n  UNION ALL\n  SELECT callsite_id FROM stack_sample\n  WHERE ts >= {s} AND ts < {e}{only}\n)\nSELECT f.name AS function, COUNT(*) AS self_samples,\n  ROUND(100.0 * COUNT(*) / (SELECT COUNT(*) FROM s), 1) AS percent\nFROM s JOIN stack_profile_callsite c ON c.id = s.callsite_id\n  JOIN stack_profile_frame f ON f.id = c.frame_id\nGROUP BY f.name\nORDER BY self_samples DESC, function\nLIMIT 500"
                )
            }
        })
    }
}

/// How a column shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A pid or tid: a number shown as is.
    Id,
    Count,
    /// Nanoseconds.
    Dur,
    Value,
    Percent,
    /// A raw thread state (`R`, `S`, `D`, …).
    State,
}

/// One value of a result.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    /// Text as stored (not yet sanitized).
    Text(String),
}

impl Cell {
    /// An order for sorting by this value: numbers before text, nulls last.
    pub fn cmp_value(&self, other: &Cell) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let num = |c: &Cell| match c {
            Cell::Int(i) => Some(*i as f64),
            Cell::Real(r) => Some(*r),
            _ => None,
        };
        match (self, other) {
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            (Cell::Null, Cell::Null) => Ordering::Equal,
            (Cell::Null, _) => Ordering::Greater,
            (_, Cell::Null) => Ordering::Less,
            _ => match (num(self), num(other)) {
                (Some(a), Some(b)) => a.total_cmp(&b),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            },
        }
    }
}

/// An aggregate's result: the SQL it ran and its rows, in the columns of
/// [`Aggregate::columns`].
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub aggregate: Aggregate,
    pub sql: String,
    pub rows: Vec<Vec<Cell>>,
}

/// The ids as an SQL list, `None` when there are none.
fn ids(v: &[i64]) -> Option<String> {
    (!v.is_empty()).then(|| {
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Runs `sql` and reads every row as cells.
pub fn run(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<Vec<Cell>>> {
    let mut stmt = conn.prepare(sql)?;
    let n = stmt.column_count();
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(match r.get_ref(i)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(v) => Cell::Int(v),
                ValueRef::Real(v) => Cell::Real(v),
                ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Cell::Text(format!("<{} bytes>", b.len())),
            });
        }
        out.push(row);
    }
    Ok(out)
}

/// Every aggregate the area has tracks for, in tab order (Samples only when there are some).
pub fn aggregates(conn: &Connection, area: &AreaSpec) -> rusqlite::Result<Vec<Table>> {
    let mut out = Vec::new();
    for a in Aggregate::ALL {
        let Some(sql) = a.sql(area) else { continue };
        let rows = run(conn, &sql)?;
        if a == Aggregate::Samples && rows.is_empty() {
            continue;
        }
        out.push(Table {
            aggregate: a,
            sql,
            rows,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_tracks_no_sql() {
        let area = AreaSpec {
            start: 0,
            end: 10,
            ..AreaSpec::default()
        };
        assert!(Aggregate::Slices.sql(&area).is_none());
        assert!(Aggregate::Samples.sql(&area).is_some());
    }

    #[test]
    fn slices_clip_to_the_area() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE slice (id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER,
               name TEXT, depth INTEGER, parent_id INTEGER);
             INSERT INTO slice VALUES (1, 0, 100, 7, 'a', 0, NULL), (2, 40, 20, 7, 'b', 1, 1),
               (3, 90, -1, 7, 'c', 0, NULL), (4, 0, 100, 8, 'x', 0, NULL);",
        )
        .unwrap();
        let area = AreaSpec {
            start: 50,
            end: 120,
            slice_tracks: vec![7],
            ..AreaSpec::default()
        };
        let rows = run(&conn, &Aggregate::Slices.sql(&area).unwrap()).unwrap();
        // a: 50..100 = 50 wall, child b 50..60 = 10 → self 40; c: 90..120 = 30; b: 10.
        assert_eq!(
            rows,
            vec![
                vec![
                    Cell::Text("a".into()),
                    Cell::Int(1),
                    Cell::Int(50),
                    Cell::Int(50),
                    Cell::Int(50),
                    Cell::Int(40)
                ],
                vec![
                    Cell::Text("c".into()),
                    Cell::Int(1),
                    Cell::Int(30),
                    Cell::Int(30),
                    Cell::Int(30),
                    Cell::Int(30)
                ],
                vec![
                    Cell::Text("b".into()),
                    Cell::Int(1),
                    Cell::Int(10),
                    Cell::Int(10),
                    Cell::Int(10),
                    Cell::Int(10)
                ],
            ]
        );
    }

    /// A state lasts until the thread's next state: an unfinished one (dur -1) followed by
    /// later states is cut at the next one (as the timeline draws it), the last one at the
    /// trace's end; no thread has more time in the area than the area has.
    #[test]
    fn thread_states_end_at_the_next_state_and_never_exceed_the_area() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE thread_state (id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER,
               utid INTEGER, state TEXT);
             CREATE TABLE thread (utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT);
             CREATE TABLE trace_bounds (start_ts INTEGER, end_ts INTEGER);
             INSERT INTO trace_bounds VALUES (0, 1000);
             INSERT INTO thread VALUES (1, 11, 'a');
             -- R open (dur -1) at 10, then S at 40 for 20, then R open to the end.
             INSERT INTO thread_state VALUES (1, 10, -1, 1, 'R'), (2, 40, 20, 1, 'S'),
               (3, 60, -1, 1, 'R');",
        )
        .unwrap();
        let area = AreaSpec {
            start: 0,
            end: 100,
            state_utids: vec![1],
            ..AreaSpec::default()
        };
        let rows = run(&conn, &Aggregate::ThreadStates.sql(&area).unwrap()).unwrap();
        // R: 10..40 and 60..100 = 70; S: 40..60 = 20; 90 in all, within the area's 100.
        assert_eq!(
            rows,
            vec![
                vec![
                    Cell::Text("a".into()),
                    Cell::Int(11),
                    Cell::Text("R".into()),
                    Cell::Int(2),
                    Cell::Int(70),
                    Cell::Real(77.8)
                ],
                vec![
                    Cell::Text("a".into()),
                    Cell::Int(11),
                    Cell::Text("S".into()),
                    Cell::Int(1),
                    Cell::Int(20),
                    Cell::Real(22.2)
                ],
            ]
        );
    }
}

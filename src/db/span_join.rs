//! Perfetto's span-join operator (`CREATE VIRTUAL TABLE x USING span_join(a PARTITIONED p,
//! b PARTITIONED p)`): every pair of spans (rows with `ts` and `dur`) of the two tables
//! that overlap, within the same partition, gives one span of their intersection, with the
//! columns of both. `span_left_join` also keeps the stretches of the left table's spans
//! that no right span covers, with NULL right columns.
//!
//! Both tables are read once in (partition, ts) order and swept together, so the cost is
//! linear in their sizes; the result is written to a temporary table of that name (the
//! trace database is read-only), which later statements query like Trace Processor's
//! virtual table. As there, spans of one table must not overlap within a partition.

use std::cmp::Ordering;

use rusqlite::types::Value;
use rusqlite::Connection;

use super::output::QueryError;

/// One side of the join: a table or view, and the column it is partitioned by.
#[derive(Debug, PartialEq)]
struct Side {
    table: String,
    partition: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Inner,
    Left,
}

/// One row of a side: its partition, its span, and the columns it brings.
struct Span {
    partition: Value,
    ts: i64,
    end: i64,
    payload: Vec<Value>,
}

/// Runs the span join described by `module(args)` into the temporary table `name`, and
/// returns the statement that completes it; `None` if `module` is not a span join.
pub fn create_table(
    conn: &Connection,
    name: &str,
    module: &str,
    args: &str,
    statement: &str,
) -> Result<Option<String>, QueryError> {
    let kind = match module.to_ascii_lowercase().as_str() {
        "span_join" => Kind::Inner,
        "span_left_join" => Kind::Left,
        _ => return Ok(None),
    };
    let error = |message: String| QueryError::Sql {
        message,
        statement: statement.trim().to_string(),
    };
    let sides: Vec<Side> = args
        .split(',')
        .map(|a| parse_side(a).map_err(&error))
        .collect::<Result<_, _>>()?;
    let [left, right] = sides.as_slice() else {
        return Err(error(format!(
            "{module} takes two tables, got {}",
            sides.len()
        )));
    };
    if let (Some(l), Some(r)) = (&left.partition, &right.partition) {
        if !l.eq_ignore_ascii_case(r) {
            return Err(error(format!(
                "{module}: both tables must be partitioned by the same column ({l} ≠ {r})"
            )));
        }
    }
    if kind == Kind::Left && left.partition.is_none() && right.partition.is_some() {
        return Err(error(format!(
            "{module}: the left table must be partitioned when the right one is"
        )));
    }
    let partition = left.partition.clone().or_else(|| right.partition.clone());
    let left_columns = columns(conn, &left.table).map_err(&error)?;
    let right_columns = columns(conn, &right.table).map_err(&error)?;
    for (side, cols) in [(left, &left_columns), (right, &right_columns)] {
        for required in ["ts", "dur"].into_iter().chain(side.partition.as_deref()) {
            if !cols.iter().any(|c| c.eq_ignore_ascii_case(required)) {
                return Err(error(format!(
                    "{module}: {} has no column {required}",
                    side.table
                )));
            }
        }
    }
    let is_key = |c: &str| {
        c.eq_ignore_ascii_case("ts")
            || c.eq_ignore_ascii_case("dur")
            || partition
                .as_deref()
                .is_some_and(|p| c.eq_ignore_ascii_case(p))
    };
    let left_payload: Vec<String> = left_columns
        .iter()
        .filter(|c| !is_key(c))
        .cloned()
        .collect();
    let right_payload: Vec<String> = right_columns
        .iter()
        .filter(|c| !is_key(c))
        .cloned()
        .collect();
    if let Some(c) = right_payload
        .iter()
        .find(|c| left_payload.iter().any(|l| l.eq_ignore_ascii_case(c)))
    {
        return Err(error(format!(
            "{module}: both tables have a column {c}; rename one"
        )));
    }
    let read = |side: &Side, payload: &[String]| {
        read_spans(conn, side, payload).map_err(|e| error(format!("{module}: {e}")))
    };
    let lefts = read(left, &left_payload)?;
    let rights = read(right, &right_payload)?;

    let mut out_columns = vec!["ts".to_string(), "dur".to_string()];
    out_columns.extend(partition.clone());
    out_columns.extend(left_payload.iter().cloned());
    out_columns.extend(right_payload.iter().cloned());
    let quoted: Vec<String> = out_columns.iter().map(|c| quote(c)).collect();
    let sql_error = |e: rusqlite::Error| error(e.to_string());
    conn.execute_batch(&format!("CREATE TEMP TABLE {name} ({})", quoted.join(", ")))
        .map_err(sql_error)?;
    let placeholders = vec!["?"; out_columns.len()].join(", ");
    let mut insert = conn
        .prepare(&format!("INSERT INTO {name} VALUES ({placeholders})"))
        .map_err(sql_error)?;
    let right_nulls = vec![Value::Null; right_payload.len()];
    let mut emit =
        |ts: i64, end: i64, p: &Value, l: &[Value], r: &[Value]| -> rusqlite::Result<()> {
            let mut row: Vec<Value> = Vec::with_capacity(out_columns.len());
            row.push(Value::Integer(ts));
            row.push(Value::Integer(end - ts));
            if partition.is_some() {
                row.push(p.clone());
            }
            row.extend(l.iter().cloned());
            row.extend(r.iter().cloned());
            insert.execute(rusqlite::params_from_iter(row)).map(|_| ())
        };
    // The partitioned side drives the sweep, partition by partition, against the other
    // side's spans of that partition (or all of them, if it has no partitions). Only an
    // inner join may be driven by its right side.
    let swapped = left.partition.is_none() && right.partition.is_some();
    let (outer, inner) = if swapped {
        (&rights, &lefts)
    } else {
        (&lefts, &rights)
    };
    let inner_partitioned = left.partition.is_some() && right.partition.is_some();
    let mut r_start = 0;
    let mut i = 0;
    while i < outer.len() {
        let p = &outer[i].partition;
        let mut j = i;
        while j < outer.len() && outer[j].partition == *p {
            j += 1;
        }
        let group: &[Span] = if inner_partitioned {
            while r_start < inner.len() && compare(&inner[r_start].partition, p).is_lt() {
                r_start += 1;
            }
            let mut r_end = r_start;
            while r_end < inner.len() && inner[r_end].partition == *p {
                r_end += 1;
            }
            &inner[r_start..r_end]
        } else {
            inner
        };
        sweep(&outer[i..j], group, kind, &mut |ts, end, o, x| {
            let x_payload = x.map_or(right_nulls.as_slice(), |x| x.payload.as_slice());
            if swapped {
                emit(ts, end, &o.partition, x_payload, &o.payload)
            } else {
                emit(ts, end, &o.partition, &o.payload, x_payload)
            }
        })
        .map_err(sql_error)?;
        i = j;
    }
    // A statement that completes the creation and returns no rows.
    Ok(Some(format!("ANALYZE {name}")))
}

/// Receives one output span: its start and end, the driving span, and the span it
/// overlaps (`None` for an uncovered stretch of a left join).
type EmitSpan<'a> = dyn FnMut(i64, i64, &Span, Option<&Span>) -> rusqlite::Result<()> + 'a;

/// Emits, for each left span in order, its intersections with the right spans (and, for a
/// left join, its uncovered stretches). Spans of one side do not overlap each other, so
/// both lists are walked once.
fn sweep(
    lefts: &[Span],
    rights: &[Span],
    kind: Kind,
    emit: &mut EmitSpan<'_>,
) -> rusqlite::Result<()> {
    let mut first = 0;
    for l in lefts {
        // Right spans ending at or before this left span starts can be skipped for good.
        while first < rights.len() && rights[first].end <= l.ts {
            first += 1;
        }
        let mut covered_to = l.ts;
        for r in &rights[first..] {
            if r.ts >= l.end {
                break;
            }
            // Overlap as Trace Processor counts it: a zero-length span inside the other.
            if !(r.ts < l.end && l.ts < r.end) {
                continue;
            }
            let (ts, end) = (l.ts.max(r.ts), l.end.min(r.end));
            if kind == Kind::Left && ts > covered_to {
                emit(covered_to, ts, l, None)?;
            }
            emit(ts, end, l, Some(r))?;
            covered_to = covered_to.max(end);
        }
        if kind == Kind::Left && covered_to < l.end {
            emit(covered_to, l.end, l, None)?;
        }
    }
    Ok(())
}

/// The side's spans in (partition, ts) order; an error if two of one partition overlap.
fn read_spans(conn: &Connection, side: &Side, payload: &[String]) -> Result<Vec<Span>, String> {
    let partition = side.partition.as_deref().map_or("NULL".to_string(), quote);
    let mut select = vec![partition.clone(), "ts".to_string(), "dur".to_string()];
    select.extend(payload.iter().map(|c| quote(c)));
    let sql = format!(
        "SELECT {} FROM {} ORDER BY 1, ts",
        select.join(", "),
        quote(&side.table)
    );
    let mut stmt = conn.prepare(&sql).map_err(|e| e.to_string())?;
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    let mut spans: Vec<Span> = Vec::new();
    while let Some(r) = rows.next().map_err(|e| e.to_string())? {
        let partition: Value = r.get(0).map_err(|e| e.to_string())?;
        let (Some(ts), dur) = (
            r.get::<_, Option<i64>>(1).map_err(|e| e.to_string())?,
            r.get::<_, Option<i64>>(2).map_err(|e| e.to_string())?,
        ) else {
            continue;
        };
        // A span that never ended reaches to the end of time.
        let end = match dur {
            Some(d) if d >= 0 => ts.saturating_add(d),
            _ => i64::MAX,
        };
        if let Some(prev) = spans.last() {
            if prev.partition == partition && prev.end > ts {
                return Err(format!(
                    "{} has overlapping spans at ts {} (span join needs them disjoint within a partition)",
                    side.table, ts
                ));
            }
        }
        let mut values = Vec::with_capacity(payload.len());
        for i in 0..payload.len() {
            values.push(r.get::<_, Value>(i + 3).map_err(|e| e.to_string())?);
        }
        spans.push(Span {
            partition,
            ts,
            end,
            payload: values,
        });
    }
    Ok(spans)
}

/// SQLite's order of values of different types: NULL, numbers, text, blobs.
fn compare(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Integer(_) | Value::Real(_) => 1,
            Value::Text(_) => 2,
            Value::Blob(_) => 3,
        }
    }
    match (a, b) {
        (Value::Integer(x), Value::Integer(y)) => x.cmp(y),
        (Value::Integer(x), Value::Real(y)) => (*x as f64).total_cmp(y),
        (Value::Real(x), Value::Integer(y)) => x.total_cmp(&(*y as f64)),
        (Value::Real(x), Value::Real(y)) => x.total_cmp(y),
        (Value::Text(x), Value::Text(y)) => x.cmp(y),
        (Value::Blob(x), Value::Blob(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// `table [PARTITIONED column]`.
fn parse_side(arg: &str) -> Result<Side, String> {
    let words: Vec<&str> = arg.split_whitespace().collect();
    match words.as_slice() {
        [table] => Ok(Side {
            table: table.to_string(),
            partition: None,
        }),
        [table, kw, column] if kw.eq_ignore_ascii_case("PARTITIONED") => Ok(Side {
            table: table.to_string(),
            partition: Some(column.to_string()),
        }),
        _ => Err(format!(
            "span join: '{}' is not `table` or `table PARTITIONED column`",
            arg.trim()
        )),
    }
}

fn columns(conn: &Connection, table: &str) -> Result<Vec<String>, String> {
    let stmt = conn
        .prepare(&format!("SELECT * FROM {} LIMIT 0", quote(table)))
        .map_err(|e| format!("span join: {e}"))?;
    Ok(stmt.column_names().iter().map(|c| c.to_string()).collect())
}

fn quote(identifier: &str) -> String {
    format!("\"{}\"", identifier.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(
            "CREATE TABLE a (ts INT, dur INT, upid INT, x INT);
             CREATE TABLE b (ts INT, dur INT, upid INT, y INT);
             INSERT INTO a VALUES (0, 10, 1, 100), (10, 10, 1, 101), (0, 30, 2, 200);
             INSERT INTO b VALUES (5, 10, 1, 7), (5, 5, 2, 8), (25, 10, 2, 9);",
        )
        .expect("tables");
        conn
    }

    fn rows(conn: &Connection, sql: &str) -> Vec<Vec<Option<i64>>> {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let n = stmt.column_count();
        let mut out = Vec::new();
        let mut q = stmt.query([]).expect("query");
        while let Some(r) = q.next().expect("row") {
            out.push((0..n).map(|i| r.get(i).expect("value")).collect());
        }
        out
    }

    fn run(conn: &Connection, module: &str, args: &str) {
        let sql = create_table(conn, "j", module, args, "")
            .expect("runs")
            .expect("a span join");
        conn.execute_batch(&sql).expect("completes");
    }

    #[test]
    fn inner_span_join_intersects_within_partitions() {
        let conn = db();
        run(&conn, "span_join", "a PARTITIONED upid, b PARTITIONED upid");
        assert_eq!(
            rows(&conn, "SELECT ts, dur, upid, x, y FROM j"),
            [
                [5, 5, 1, 100, 7].map(Some).to_vec(),
                [10, 5, 1, 101, 7].map(Some).to_vec(),
                [5, 5, 2, 200, 8].map(Some).to_vec(),
                [25, 5, 2, 200, 9].map(Some).to_vec(),
            ]
        );
    }

    #[test]
    fn left_span_join_keeps_the_uncovered_stretches() {
        let conn = db();
        run(
            &conn,
            "span_left_join",
            "a PARTITIONED upid, b PARTITIONED upid",
        );
        let got = rows(&conn, "SELECT ts, dur, upid, x, y FROM j");
        let want: Vec<Vec<Option<i64>>> = vec![
            vec![Some(0), Some(5), Some(1), Some(100), None],
            vec![Some(5), Some(5), Some(1), Some(100), Some(7)],
            vec![Some(10), Some(5), Some(1), Some(101), Some(7)],
            vec![Some(15), Some(5), Some(1), Some(101), None],
            vec![Some(0), Some(5), Some(2), Some(200), None],
            vec![Some(5), Some(5), Some(2), Some(200), Some(8)],
            vec![Some(10), Some(15), Some(2), Some(200), None],
            vec![Some(25), Some(5), Some(2), Some(200), Some(9)],
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn an_unpartitioned_side_applies_to_every_partition() {
        let conn = db();
        conn.execute_batch(
            "CREATE TABLE c (ts INT, dur INT, z INT); INSERT INTO c VALUES (8, 4, 42);",
        )
        .expect("table");
        run(&conn, "span_join", "a PARTITIONED upid, c");
        assert_eq!(
            rows(&conn, "SELECT ts, dur, upid, x, z FROM j"),
            [
                [8, 2, 1, 100, 42].map(Some).to_vec(),
                [10, 2, 1, 101, 42].map(Some).to_vec(),
                [8, 4, 2, 200, 42].map(Some).to_vec(),
            ]
        );
        // The same with the unpartitioned table on the left.
        conn.execute_batch("DROP TABLE j").expect("drop");
        run(&conn, "span_join", "c, a PARTITIONED upid");
        assert_eq!(
            rows(&conn, "SELECT ts, dur, upid, z, x FROM j"),
            [
                [8, 2, 1, 42, 100].map(Some).to_vec(),
                [10, 2, 1, 42, 101].map(Some).to_vec(),
                [8, 4, 2, 42, 200].map(Some).to_vec(),
            ]
        );
    }

    #[test]
    fn many_spans_join_in_linear_time() {
        // 200k × 200k spans in one partition: a nested loop would not finish in time.
        let conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(
            "CREATE TABLE a AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n
               WHERE i < 199999) SELECT i * 10 AS ts, 10 AS dur, 1 AS upid, i AS x FROM n;
             CREATE TABLE b AS SELECT ts + 5 AS ts, dur, upid, x AS y FROM a;",
        )
        .expect("tables");
        run(
            &conn,
            "span_left_join",
            "a PARTITIONED upid, b PARTITIONED upid",
        );
        assert_eq!(rows(&conn, "SELECT count(*) FROM j"), [vec![Some(400_000)]]);
    }

    #[test]
    fn bad_arguments_are_errors_naming_the_problem() {
        let conn = db();
        let err = create_table(&conn, "j", "span_join", "a PARTITIONED upid", "CREATE …")
            .expect_err("one table");
        assert!(err.to_string().contains("takes two tables"), "{err}");
        let err = create_table(
            &conn,
            "j",
            "span_join",
            "a PARTITIONED nope, b PARTITIONED nope",
            "",
        )
        .expect_err("missing column");
        assert!(err.to_string().contains("has no column nope"), "{err}");
        conn.execute_batch("INSERT INTO b VALUES (6, 3, 1, 0)")
            .expect("overlap");
        let err = create_table(
            &conn,
            "j",
            "span_join",
            "a PARTITIONED upid, b PARTITIONED upid",
            "",
        )
        .expect_err("overlapping spans");
        assert!(err.to_string().contains("overlapping spans"), "{err}");
        assert!(create_table(&conn, "j", "fts5", "x", "")
            .expect("not ours")
            .is_none());
    }
}

//! Perfetto's span-join operator (`CREATE VIRTUAL TABLE x USING span_join(a PARTITIONED p,
//! b PARTITIONED p)`), rewritten as a temporary view: every pair of spans (rows with `ts`
//! and `dur`) of the two tables that overlap, within the same partition, gives one span of
//! their intersection, with the columns of both. `span_left_join` also keeps the stretches
//! of the left table's spans that no right span covers, with NULL right columns.

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

/// The statement that creates `name` as the span join described by `module(args)`, or
/// `None` if `module` is not a span join.
pub fn create_view(
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
    let mut select = vec!["ts".to_string(), "dur".to_string()];
    if let Some(p) = &partition {
        select.push(quote(p));
    }
    let mut seen: Vec<String> = Vec::new();
    let mut payload = |alias: &str, cols: &[String]| -> Vec<String> {
        let mut out = Vec::new();
        for c in cols {
            if is_key(c) || seen.iter().any(|s| s.eq_ignore_ascii_case(c)) {
                continue;
            }
            seen.push(c.clone());
            out.push(format!("{alias}.{} AS {}", quote(c), quote(c)));
        }
        out
    };
    let left_payload = payload("a", &left_columns);
    let right_payload = payload("b", &right_columns);
    let same_partition = |a: &str, b: &str| match (&left.partition, &right.partition) {
        (Some(p), Some(_)) => format!(" AND {a}.{p} = {b}.{p}", p = quote(p)),
        _ => String::new(),
    };
    let partition_of =
        |alias_left: &str, alias_right: &str| match (&left.partition, &right.partition) {
            (Some(p), _) => format!("{alias_left}.{}", quote(p)),
            (None, Some(p)) => format!("{alias_right}.{}", quote(p)),
            (None, None) => String::new(),
        };
    let (lt, rt) = (quote(&left.table), quote(&right.table));
    // Intersections of overlapping spans; a span of zero length inside another counts.
    let mut inner_columns = vec![
        "MAX(a.ts, b.ts) AS ts".to_string(),
        "MIN(a.ts + a.dur, b.ts + b.dur) - MAX(a.ts, b.ts) AS dur".to_string(),
    ];
    if partition.is_some() {
        inner_columns.push(format!(
            "{} AS {}",
            partition_of("a", "b"),
            quote(partition.as_deref().unwrap_or_default())
        ));
    }
    inner_columns.extend(left_payload.iter().cloned());
    inner_columns.extend(right_payload.iter().cloned());
    let overlap = format!(
        "a.ts < b.ts + b.dur AND b.ts < a.ts + a.dur{}",
        same_partition("a", "b")
    );
    let inner = format!(
        "SELECT {} FROM {lt} a JOIN {rt} b ON {overlap}",
        inner_columns.join(", ")
    );
    let body = match kind {
        Kind::Inner => inner,
        Kind::Left => {
            // The uncovered stretches of each left span: from its start or the end of a
            // covering right span, to the next covering right span's start or its end.
            let nulls: Vec<String> = right_payload
                .iter()
                .map(|c| {
                    let alias = c.rsplit(" AS ").next().unwrap_or_default();
                    format!("NULL AS {alias}")
                })
                .collect();
            let mut gap_columns = vec![
                "a.__sj_ts AS ts".to_string(),
                "a.__sj_end - a.__sj_ts AS dur".to_string(),
            ];
            if let Some(p) = &left.partition {
                gap_columns.push(format!("a.{} AS {}", quote(p), quote(p)));
            }
            gap_columns.extend(left_payload.iter().cloned());
            gap_columns.extend(nulls);
            let covering = |b: &str| {
                format!(
                    "{b}.ts < a.ts + a.dur AND a.ts < {b}.ts + {b}.dur{}",
                    same_partition("a", b)
                )
            };
            // Before the first covering span, and after each one up to the next.
            let gaps = format!(
                "SELECT {cols} FROM (
                   SELECT a.*, a.ts AS __sj_ts,
                          COALESCE((SELECT MIN(b.ts) FROM {rt} b WHERE {cover_b}),
                                   a.ts + a.dur) AS __sj_end,
                          NOT EXISTS (SELECT 1 FROM {rt} b WHERE {cover_b} AND b.ts <= a.ts)
                            AS __sj_open
                   FROM {lt} a
                   UNION ALL
                   SELECT a.*, b.ts + b.dur,
                          COALESCE((SELECT MIN(c.ts) FROM {rt} c
                                    WHERE {cover_c} AND c.ts >= b.ts + b.dur), a.ts + a.dur),
                          b.ts + b.dur < a.ts + a.dur
                   FROM {lt} a JOIN {rt} b ON {cover_b}
                 ) a WHERE a.__sj_open AND a.__sj_end > a.__sj_ts",
                cols = gap_columns.join(", "),
                cover_b = covering("b"),
                cover_c = covering("c"),
            );
            format!("{inner} UNION ALL {gaps}")
        }
    };
    let order = match &partition {
        Some(p) => format!("{}, ts", quote(p)),
        None => "ts".to_string(),
    };
    Ok(Some(format!(
        "CREATE TEMP VIEW {name} AS SELECT * FROM ({body}) ORDER BY {order}"
    )))
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

    #[test]
    fn inner_span_join_intersects_within_partitions() {
        let conn = db();
        let sql = create_view(
            &conn,
            "j",
            "span_join",
            "a PARTITIONED upid, b PARTITIONED upid",
            "",
        )
        .expect("translates")
        .expect("a span join");
        conn.execute_batch(&sql).expect("view");
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
        let sql = create_view(
            &conn,
            "j",
            "span_left_join",
            "a PARTITIONED upid, b PARTITIONED upid",
            "",
        )
        .expect("translates")
        .expect("a span join");
        conn.execute_batch(&sql).expect("view");
        let got = rows(&conn, "SELECT ts, dur, upid, x, y FROM j ORDER BY upid, ts");
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
    fn bad_arguments_are_errors_naming_the_problem() {
        let conn = db();
        let err = create_view(&conn, "j", "span_join", "a PARTITIONED upid", "CREATE …")
            .expect_err("one table");
        assert!(err.to_string().contains("takes two tables"), "{err}");
        let err = create_view(
            &conn,
            "j",
            "span_join",
            "a PARTITIONED nope, b PARTITIONED nope",
            "",
        )
        .expect_err("missing column");
        assert!(err.to_string().contains("has no column nope"), "{err}");
        assert!(create_view(&conn, "j", "fts5", "x", "")
            .expect("not ours")
            .is_none());
    }
}

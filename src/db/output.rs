//! Runs SQL scripts and prints results as `trace_processor_shell -q` does.

use std::io::Write;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::schema::KNOWN_MODULES;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("No valid SQL to run")]
    Empty,
    #[error("unknown module '{0}' in INCLUDE PERFETTO MODULE (Sextant provides: {list})", list = KNOWN_MODULES.join(", "))]
    UnknownModule(String),
    #[error("{message}\nin statement: {statement}")]
    Sql { message: String, statement: String },
    #[error("cannot write the result: {0}")]
    Io(#[from] std::io::Error),
    #[error("interrupted")]
    Interrupted,
}

/// Splits a script into statements at `;`, outside strings, identifiers and comments.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += 1;
                }
            }
            b'[' => {
                while i < bytes.len() && bytes[i] != b']' {
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b';' => {
                out.push(&sql[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < sql.len() {
        out.push(&sql[start..]);
    }
    out.into_iter()
        .filter(|s| !strip_comments(s).trim().is_empty())
        .collect()
}

/// The statement without leading whitespace and comments.
fn strip_comments(s: &str) -> &str {
    let mut s = s.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.find('\n').map_or("", |i| &rest[i + 1..]).trim_start();
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.find("*/").map_or("", |i| &rest[i + 2..]).trim_start();
        } else {
            return s;
        }
    }
}

fn words(s: &str, n: usize) -> Vec<String> {
    s.split_whitespace()
        .take(n)
        .map(|w| w.to_ascii_uppercase())
        .collect()
}

/// Rewrites one Perfetto SQL statement onto SQLite; `None` means "handled, run nothing".
/// Statements run one by one, each translated when the ones before it have run: a span
/// join reads the columns of tables an earlier statement made.
pub fn translate(conn: &Connection, stmt: &str) -> Result<Option<String>, QueryError> {
    let expanded = expand_macros(strip_comments(stmt));
    let body = expanded.as_str();
    let head = words(body, 4);
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    match head.as_slice() {
        ["CREATE", "VIRTUAL", "TABLE", ..] => {
            let rest = skip_words(body, 3);
            let (name, after) = split_name(rest);
            let after = after.trim_start();
            let using = words(after, 1);
            if using.first().map(String::as_str) == Some("USING") {
                let call = skip_words(after, 1);
                let open = call.find('(').unwrap_or(call.len());
                let module = call[..open].trim();
                let args = call[open..]
                    .trim()
                    .trim_end_matches(';')
                    .trim()
                    .strip_prefix('(')
                    .and_then(|a| a.strip_suffix(')'))
                    .unwrap_or("");
                if let Some(view) = super::span_join::create_table(conn, name, module, args, body)?
                {
                    return Ok(Some(view));
                }
            }
            Ok(Some(body.to_string()))
        }
        ["INCLUDE", "PERFETTO", "MODULE", module, ..] => {
            let module = module.trim_end_matches(';').to_ascii_lowercase();
            if module_is_known(&module) {
                Ok(None)
            } else {
                Err(QueryError::UnknownModule(module))
            }
        }
        ["CREATE", "PERFETTO", "FUNCTION", ..] => {
            super::perfetto_fn::create(conn, skip_words(body, 3), body)?;
            Ok(None)
        }
        ["CREATE", "PERFETTO", kind @ ("TABLE" | "VIEW"), ..] => {
            // `CREATE PERFETTO TABLE name AS ...` → a temp table/view (the trace database is
            // read-only); a column list after the name is dropped.
            let rest = skip_words(body, 3);
            let (name, after) = split_name(rest);
            let as_pos = find_keyword(after, "AS").unwrap_or(0);
            Ok(Some(format!(
                "CREATE TEMP {kind} {name} {}",
                &after[as_pos..]
            )))
        }
        ["CREATE", "OR", "REPLACE", "PERFETTO", ..] => {
            let rest = skip_words(body, 4);
            let kind_word = words(rest, 1).pop().unwrap_or_default();
            let rest = skip_words(rest, 1);
            if kind_word == "FUNCTION" {
                // Registering a function replaces one of the same name and arity.
                super::perfetto_fn::create(conn, rest, body)?;
                return Ok(None);
            }
            let (name, after) = split_name(rest);
            let as_pos = find_keyword(after, "AS").unwrap_or(0);
            Ok(Some(format!(
                "DROP {kind_word} IF EXISTS temp.{name}; CREATE TEMP {kind_word} {name} {}",
                &after[as_pos..]
            )))
        }
        ["CREATE", kind @ ("TABLE" | "VIEW"), ..] => {
            let rest = skip_words(body, 2);
            Ok(Some(format!("CREATE TEMP {kind} {rest}")))
        }
        _ => Ok(Some(body.to_string())),
    }
}

/// Perfetto's prelude macros: `cast_int!(x)`, `cast_double!(x)`, `cast_string!(x)`.
const MACROS: &[(&str, &str)] = &[
    ("cast_int", "INT"),
    ("cast_double", "DOUBLE"),
    ("cast_string", "TEXT"),
];

/// Expands the prelude macros (`name!(args)`, nested or not) outside strings and quoted
/// names; anything else is left as written.
pub fn expand_macros(sql: &str) -> String {
    if !sql.contains('!') {
        return sql.to_string();
    }
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"' | b'`') => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += 1;
                }
                i = (i + 1).min(bytes.len());
                out.push_str(&sql[start..i]);
                continue;
            }
            b'!' => {
                let name_start = sql[..i]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |p| p + 1);
                let name = &sql[name_start..i];
                let cast = MACROS
                    .iter()
                    .find(|(m, _)| m.eq_ignore_ascii_case(name))
                    .map(|(_, t)| *t);
                let open = sql[i + 1..]
                    .find(|c: char| !c.is_whitespace())
                    .map(|o| i + 1 + o)
                    .filter(|&o| bytes[o] == b'(');
                if let (Some(ty), Some(open)) = (cast, open) {
                    if let Some(close) = matching_paren(sql, open) {
                        out.truncate(out.len() - name.len());
                        let inner = expand_macros(&sql[open + 1..close]);
                        out.push_str(&format!("CAST(({inner}) AS {ty})"));
                        i = close + 1;
                        continue;
                    }
                }
                out.push('!');
                i += 1;
                continue;
            }
            _ => {}
        }
        let ch = sql[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The `)` closing the `(` at `open`, skipping strings.
fn matching_paren(sql: &str, open: usize) -> Option<usize> {
    let bytes = sql.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A module Sextant has, or a wildcard (`slices.*`) that names at least one. Anything
/// else is an error: a module that is not there must never be a silent no-op.
fn module_is_known(module: &str) -> bool {
    match module.strip_suffix(".*") {
        Some(prefix) => KNOWN_MODULES
            .iter()
            .any(|m| *m == prefix || m.starts_with(&format!("{prefix}."))),
        None => KNOWN_MODULES.contains(&module),
    }
}

fn skip_words(s: &str, n: usize) -> &str {
    let mut s = s.trim_start();
    for _ in 0..n {
        let end = s.find(char::is_whitespace).unwrap_or(s.len());
        s = s[end..].trim_start();
    }
    s
}

fn split_name(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| c.is_whitespace() || c == '(')
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// Position of a standalone keyword at paren depth 0.
pub(super) fn find_keyword(s: &str, kw: &str) -> Option<usize> {
    let upper = s.to_ascii_uppercase();
    let bytes = upper.as_bytes();
    let mut depth = 0i32;
    for (i, c) in upper.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 && upper[i..].starts_with(kw) => {
                let before = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
                let after = bytes
                    .get(i + kw.len())
                    .is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'_');
                if before && after {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Formats a double as C's `%f`.
fn fmt_real(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:.6}")
    }
}

/// Runs every statement of `sql`, printing each result set as CSV. Perfetto-only forms
/// (`INCLUDE PERFETTO MODULE`, `CREATE PERFETTO TABLE/VIEW`, span joins) go through
/// [`translate`] first, as at the TUI's prompt, so both accept the same SQL.
pub fn run_script(conn: &Connection, sql: &str, out: &mut impl Write) -> Result<(), QueryError> {
    let statements = split_statements(sql);
    if statements.is_empty() {
        return Err(QueryError::Empty);
    }
    let mut printed_any = false;
    for raw in statements {
        let Some(translated) = translate(conn, raw)? else {
            continue;
        };
        for part in split_statements(&translated) {
            let sql_err = |e: rusqlite::Error| QueryError::Sql {
                message: e.to_string(),
                statement: part.trim().to_string(),
            };
            let mut stmt = conn.prepare(part).map_err(sql_err)?;
            let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
            if names.is_empty() {
                stmt.raw_execute().map_err(sql_err)?;
                continue;
            }
            let suppressed = names.len() == 1 && names[0] == "suppress_query_output";
            let mut rows = stmt.query([]).map_err(sql_err)?;
            let mut buf = String::new();
            if !suppressed {
                if printed_any {
                    buf.push('\n');
                }
                let header: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                buf.push_str(&header.join(","));
                buf.push('\n');
            }
            while let Some(row) = rows.next().map_err(sql_err)? {
                if suppressed {
                    continue;
                }
                for i in 0..names.len() {
                    if i > 0 {
                        buf.push(',');
                    }
                    match row.get_ref(i).map_err(sql_err)? {
                        ValueRef::Null => buf.push_str("\"[NULL]\""),
                        ValueRef::Integer(v) => buf.push_str(&v.to_string()),
                        ValueRef::Real(v) => buf.push_str(&fmt_real(v)),
                        ValueRef::Text(t) => {
                            buf.push('"');
                            buf.push_str(&String::from_utf8_lossy(t));
                            buf.push('"');
                        }
                        ValueRef::Blob(b) => {
                            buf.push_str(&format!("\"<blob {} bytes>\"", b.len()));
                        }
                    }
                }
                buf.push('\n');
                if buf.len() > 1 << 16 {
                    out.write_all(buf.as_bytes())?;
                    buf.clear();
                }
            }
            out.write_all(buf.as_bytes())?;
            if !suppressed {
                printed_any = true;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prelude_macros_expand_nested_and_not_in_strings() {
        assert_eq!(
            expand_macros("select cast_int!(c.value) as v, 'a!(b)'"),
            "select CAST((c.value) AS INT) as v, 'a!(b)'"
        );
        assert_eq!(
            expand_macros("cast_string!(cast_int!(f(1, 2)))"),
            "CAST((CAST((f(1, 2)) AS INT)) AS TEXT)"
        );
        assert_eq!(expand_macros("select 1 != 2"), "select 1 != 2");
    }

    #[test]
    fn splits_outside_strings_and_comments() {
        let s = split_statements("select ';' ; -- a;b\n select 2; /* ; */");
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn prints_like_trace_processor_shell() {
        let conn = Connection::open_in_memory().unwrap();
        let mut out = Vec::new();
        run_script(
            &conn,
            "select 1 as a, 'x' as b, null as c, 1.5 as d; create temp table t(x); select 2 as e",
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\",\"b\",\"c\",\"d\"\n1,\"x\",\"[NULL]\",1.500000\n\n\"e\"\n2\n"
        );
    }

    #[test]
    fn include_known_module_is_accepted_and_unknown_is_an_error() {
        let conn = Connection::open_in_memory().unwrap();
        let mut out = Vec::new();
        run_script(
            &conn,
            "INCLUDE PERFETTO MODULE slices.with_context; select 1 as x",
            &mut out,
        )
        .unwrap();
        let err = run_script(&conn, "INCLUDE PERFETTO MODULE nope.x;", &mut out).unwrap_err();
        assert!(err.to_string().contains("nope.x"));
        run_script(
            &conn,
            "INCLUDE PERFETTO MODULE slices.*; select 1",
            &mut out,
        )
        .unwrap();
        // A module under one Sextant has is still a module it does not have.
        for missing in [
            "slices.flat_slices",
            "prelude.after_eof.tables",
            "common.x",
            "android.startup.*",
        ] {
            let sql = format!("INCLUDE PERFETTO MODULE {missing}; select 1");
            let err = run_script(&conn, &sql, &mut out).unwrap_err();
            assert!(
                matches!(&err, QueryError::UnknownModule(m) if m == missing),
                "{err}"
            );
        }
        assert!(matches!(
            run_script(&conn, " -- nothing\n", &mut out),
            Err(QueryError::Empty)
        ));
    }

    /// `CREATE [OR REPLACE] PERFETTO FUNCTION`: a scalar function whose body sees its
    /// arguments as `$name` and the tables of the connection; table functions are refused.
    #[test]
    fn perfetto_functions_are_scalar_functions_of_their_body() {
        let conn = Connection::open_in_memory().unwrap();
        let mut out = Vec::new();
        run_script(
            &conn,
            "CREATE TEMP TABLE t(id INT, name TEXT); INSERT INTO t VALUES (1, 'one');
             CREATE PERFETTO FUNCTION name_of(id INT) RETURNS STRING AS
               SELECT name FROM t WHERE id = $id;
             CREATE PERFETTO FUNCTION add2(a INT, b INT)\nRETURNS INT\nAS SELECT $a + $b;
             SELECT name_of(1) AS a, name_of(2) AS b, add2(40, 2) AS c;
             CREATE OR REPLACE PERFETTO FUNCTION add2(a INT, b INT) RETURNS INT AS
               SELECT $a * $b;
             SELECT add2(40, 2) AS d",
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\",\"b\",\"c\"\n\"one\",\"[NULL]\",42\n\n\"d\"\n80\n"
        );
        let mut out = Vec::new();
        let err = run_script(
            &conn,
            "CREATE PERFETTO FUNCTION f(a INT) RETURNS TABLE(x INT) AS SELECT 1 AS x",
            &mut out,
        )
        .unwrap_err();
        assert!(err.to_string().contains("returning a table"), "{err}");
        let err = run_script(
            &conn,
            "CREATE PERFETTO FUNCTION g(a INT) RETURNS INT AS SELECT x FROM nowhere",
            &mut out,
        )
        .unwrap_err();
        assert!(err.to_string().contains("no such table: nowhere"), "{err}");
    }

    #[test]
    fn perfetto_table_becomes_temp_table() {
        let conn = Connection::open_in_memory().unwrap();
        let mut out = Vec::new();
        run_script(
            &conn,
            "CREATE PERFETTO TABLE foo(x INT) AS SELECT 1 AS x; SELECT x FROM foo",
            &mut out,
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "\"x\"\n1\n");
    }
}

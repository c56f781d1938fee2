//! `CREATE [OR REPLACE] PERFETTO FUNCTION name(arg TYPE, …) RETURNS TYPE AS <select>`:
//! Perfetto SQL's scalar functions, registered on the query connection. A call runs the
//! body with each `$arg` bound to the call's value and returns the first column of its first
//! row (NULL without a row). Functions returning a table are refused with a clear error.

use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value;
use rusqlite::Connection;

use super::output::{find_keyword, QueryError};

fn refused(message: String, statement: &str) -> QueryError {
    QueryError::Sql {
        message,
        statement: statement.to_string(),
    }
}

/// What follows `FUNCTION` in the statement: `name(args) RETURNS type AS body`.
pub fn create(conn: &Connection, rest: &str, statement: &str) -> Result<(), QueryError> {
    let rest = rest.trim();
    let open = rest.find('(').ok_or_else(|| {
        refused(
            "CREATE PERFETTO FUNCTION: expected name(arguments)".into(),
            statement,
        )
    })?;
    let name = rest[..open].trim().to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(refused(
            format!("CREATE PERFETTO FUNCTION: {name:?} is not a function name"),
            statement,
        ));
    }
    let close = rest[open..].find(')').map(|p| open + p).ok_or_else(|| {
        refused(
            "CREATE PERFETTO FUNCTION: unclosed arguments".into(),
            statement,
        )
    })?;
    let args: Vec<String> = rest[open + 1..close]
        .split(',')
        .filter_map(|a| a.split_whitespace().next())
        .map(|a| a.trim_start_matches('$').to_string())
        .collect();
    let after = &rest[close + 1..];
    let returns = find_keyword(after, "RETURNS").ok_or_else(|| {
        refused(
            "CREATE PERFETTO FUNCTION: expected RETURNS".into(),
            statement,
        )
    })?;
    let returned = &after[returns + "RETURNS".len()..];
    if returned
        .trim_start()
        .to_ascii_uppercase()
        .starts_with("TABLE")
    {
        return Err(refused(
            format!("CREATE PERFETTO FUNCTION {name}: functions returning a table are not supported (scalar functions are)"),
            statement,
        ));
    }
    let as_at = find_keyword(returned, "AS")
        .ok_or_else(|| refused("CREATE PERFETTO FUNCTION: expected AS".into(), statement))?;
    let body = returned[as_at + "AS".len()..]
        .trim()
        .trim_end_matches(';')
        .trim()
        .to_string();
    // The body must at least compile now, so a mistake shows where it was written.
    conn.prepare(&body)
        .map_err(|e| refused(format!("CREATE PERFETTO FUNCTION {name}: {e}"), statement))?;
    let n = i32::try_from(args.len()).map_err(|_| {
        refused(
            "CREATE PERFETTO FUNCTION: too many arguments".into(),
            statement,
        )
    })?;
    conn.create_scalar_function(name.as_str(), n, FunctionFlags::SQLITE_UTF8, move |ctx| {
        // SAFETY: the connection is only used to run the body's query while the calling
        // statement runs; it is neither closed nor moved.
        let conn = unsafe { ctx.get_connection()? };
        let mut stmt = conn.prepare_cached(&body)?;
        for (i, a) in args.iter().enumerate() {
            if let Some(at) = stmt.parameter_index(&format!("${a}"))? {
                stmt.raw_bind_parameter(at, Value::from(ctx.get_raw(i)))?;
            }
        }
        let mut rows = stmt.raw_query();
        Ok(match rows.next()? {
            Some(row) => row.get::<_, Value>(0)?,
            None => Value::Null,
        })
    })
    .map_err(|e| refused(format!("CREATE PERFETTO FUNCTION {name}: {e}"), statement))
}

//! Perfetto's SQL functions that users' queries lean on (`extract_arg`, `extract_metadata`,
//! ...), registered on every query connection.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::ftrace_text::{ArgText, RawEventLine};
use super::DbError;

fn lookup_conn(path: &Path) -> Result<Connection, DbError> {
    Ok(Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?)
}

/// One value out of a single-row lookup on the side connection.
fn lookup(
    conn: &Mutex<Connection>,
    sql: &str,
    args: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Value> {
    let conn = conn
        .lock()
        .map_err(|_| rusqlite::Error::UserFunctionError("lookup connection poisoned".into()))?;
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(args)?;
    match rows.next()? {
        Some(row) => row.get(0),
        None => Ok(Value::Null),
    }
}

fn arg_int(ctx: &Context<'_>, i: usize) -> rusqlite::Result<Option<i64>> {
    Ok(match ctx.get_raw(i) {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(v) => Some(v as i64),
        _ => None,
    })
}

fn arg_text(ctx: &Context<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(match ctx.get_raw(i) {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        _ => None,
    })
}

/// The `ftrace_event` row `id` with its thread, process and args, or None without one.
fn raw_event_line(conn: &Connection, id: i64) -> rusqlite::Result<Option<RawEventLine>> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.ts, e.cpu, t.tid, t.name, p.pid, e.name, e.arg_set_id
         FROM __intrinsic_ftrace_event e LEFT JOIN thread t USING (utid)
         LEFT JOIN process p USING (upid) WHERE e.id = ?1",
    )?;
    let mut rows = stmt.query([id])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let mut event = RawEventLine {
        ts: row.get(0)?,
        cpu: row.get::<_, Option<i64>>(1)?.unwrap_or(0),
        tid: row.get::<_, Option<i64>>(2)?.unwrap_or(0),
        thread_name: row.get(3)?,
        tgid: row.get(4)?,
        name: row.get::<_, Option<String>>(5)?.unwrap_or_default(),
        args: Vec::new(),
    };
    let set: Option<i64> = row.get(6)?;
    drop(rows);
    if let Some(set) = set {
        let mut stmt = conn.prepare_cached(
            "SELECT key, value_type, int_value, string_value, real_value FROM args
             WHERE arg_set_id = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query([set])?;
        while let Some(row) = rows.next()? {
            let value = match row.get::<_, Option<String>>(1)?.as_deref() {
                Some("uint") => ArgText::Uint(row.get::<_, Option<i64>>(2)?.unwrap_or(0) as u64),
                Some("real") => ArgText::Real(row.get::<_, Option<f64>>(4)?.unwrap_or(0.0)),
                Some("string") => {
                    ArgText::Str(row.get::<_, Option<String>>(3)?.unwrap_or_default())
                }
                _ => ArgText::Int(row.get::<_, Option<i64>>(2)?.unwrap_or(0)),
            };
            event.args.push((row.get(0)?, value));
        }
    }
    Ok(Some(event))
}

/// Registers the functions. Lookups run on a second read-only connection to the same
/// file, because a scalar function cannot re-enter the connection that calls it.
pub fn register_functions(conn: &Connection, path: &Path) -> Result<(), DbError> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;

    super::sql_extras::register(conn)?;
    let side = std::sync::Arc::new(Mutex::new(lookup_conn(path)?));
    super::layout::register(conn, side.clone())?;
    super::table_fn::register(conn, side.clone(), &super::flamegraph::FLAMEGRAPH)?;
    super::table_fn::register(conn, side.clone(), &super::annotated::ANNOTATED_CALLSTACK)?;
    for def in [
        &super::slice_fns::ANCESTOR_SLICE,
        &super::slice_fns::DESCENDANT_SLICE,
        &super::slice_fns::DIRECTLY_CONNECTED_FLOW,
        &super::slice_fns::FOLLOWING_FLOW,
        &super::slice_fns::PRECEDING_FLOW,
    ] {
        super::table_fn::register(conn, side.clone(), def)?;
    }
    conn.create_scalar_function("demangle", 1, flags, |ctx| {
        Ok(match arg_text(ctx, 0)? {
            Some(name) => super::annotated::demangle(&name).map_or(Value::Null, Value::Text),
            None => Value::Null,
        })
    })?;
    let s = side.clone();
    conn.create_scalar_function("extract_arg", 2, flags, move |ctx| {
        let (Some(set), Some(key)) = (arg_int(ctx, 0)?, arg_text(ctx, 1)?) else {
            return Ok(Value::Null);
        };
        lookup(
            &s,
            "SELECT CASE WHEN value_type IN ('int','uint','bool','pointer') THEN int_value
                         WHEN value_type = 'real' THEN real_value
                         ELSE string_value END
             FROM args WHERE arg_set_id = ?1 AND key = ?2",
            &[&set, &key],
        )
    })?;

    let s = side.clone();
    conn.create_scalar_function("extract_metadata", 1, flags, move |ctx| {
        let Some(name) = arg_text(ctx, 0)? else {
            return Ok(Value::Null);
        };
        lookup(
            &s,
            "SELECT COALESCE(int_value, str_value) FROM metadata WHERE name = ?1 LIMIT 1",
            &[&name],
        )
    })?;

    let s = side.clone();
    conn.create_scalar_function("extract_metadata_for_machine", 2, flags, move |ctx| {
        let (Some(machine), Some(name)) = (arg_int(ctx, 0)?, arg_text(ctx, 1)?) else {
            return Ok(Value::Null);
        };
        lookup(
            &s,
            "SELECT COALESCE(int_value, str_value) FROM metadata
             WHERE name = ?2 AND machine_id = ?1 LIMIT 1",
            &[&machine, &name],
        )
    })?;

    let s = side.clone();
    conn.create_scalar_function("to_ftrace", 1, flags, move |ctx| {
        let Some(id) = arg_int(ctx, 0)? else {
            return Ok(Value::Null);
        };
        let conn = s
            .lock()
            .map_err(|_| rusqlite::Error::UserFunctionError("lookup connection poisoned".into()))?;
        Ok(raw_event_line(&conn, id)?.map_or(Value::Null, |e| Value::Text(e.line())))
    })?;

    let s = side;
    conn.create_scalar_function("__intrinsic_arg_set_to_json", 1, flags, move |ctx| {
        let Some(set) = arg_int(ctx, 0)? else {
            return Ok(Value::Null);
        };
        lookup(
            &s,
            "SELECT '{' || group_concat(json_quote(key) || ':' ||
                CASE WHEN value_type IN ('int','uint','bool','pointer') THEN int_value
                     WHEN value_type = 'real' THEN real_value
                     WHEN value_type = 'null' THEN 'null'
                     ELSE json_quote(string_value) END, ',') || '}'
             FROM (SELECT * FROM args WHERE arg_set_id = ?1 ORDER BY id)",
            &[&set],
        )
    })?;
    Ok(())
}

//! `experimental_annotated_callstack(start_id)`: the callsites from a leaf up to its root,
//! each annotated as Perfetto annotates ART callstacks: managed frames say how they ran
//! (`interp` from a .vdex, `jit` from the JIT cache, `aot` from .oat/.odex code); once a
//! managed frame is below, libart frames are runtime plumbing, `common-frame`, or
//! `common-frame-interp` for the interpreter's own functions. Other frames: NULL.

use std::collections::HashMap;

use rusqlite::types::Value;
use rusqlite::Connection;

use super::table_fn::TableFn;

pub static ANNOTATED_CALLSTACK: TableFn = TableFn {
    name: "experimental_annotated_callstack",
    columns: &["id", "depth", "parent_id", "frame_id", "annotation"],
    args: &["start_id"],
    compute,
};

/// What a frame's mapping says about its code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MapKind {
    Libart,
    Interp,
    Jit,
    Aot,
    Other,
}

fn map_kind(name: &str) -> MapKind {
    if name.ends_with("libart.so") || name.ends_with("libartd.so") {
        MapKind::Libart
    } else if name.ends_with(".vdex") {
        MapKind::Interp
    } else if name.ends_with(".oat") || name.ends_with(".odex") {
        MapKind::Aot
    } else if name.starts_with("[anon:dalvik-jit-code-cache")
        || name.starts_with("/memfd:jit-cache")
        || name.starts_with("/dev/ashmem/dalvik-jit-code-cache")
    {
        MapKind::Jit
    } else {
        MapKind::Other
    }
}

/// libart functions that are the interpreter itself.
const INTERPRETER_PREFIXES: &[&str] = &[
    "ExecuteMterpImpl",
    "ExecuteSwitchImplAsm",
    "ExecuteNterpImpl",
    "_ZN3art11interpreter",
];

fn compute(conn: &Connection, args: &[Value]) -> rusqlite::Result<Vec<Vec<Value>>> {
    let Some(Value::Integer(start)) = args.first() else {
        return Ok(Vec::new());
    };
    let mut stmt = conn.prepare(
        "WITH RECURSIVE up(id) AS (
           SELECT ?1 UNION ALL
           SELECT c.parent_id FROM stack_profile_callsite c JOIN up ON c.id = up.id
           WHERE c.parent_id IS NOT NULL)
         SELECT c.id, c.depth, c.parent_id, c.frame_id, f.name, COALESCE(m.name, '')
         FROM up JOIN stack_profile_callsite c ON c.id = up.id
         JOIN stack_profile_frame f ON f.id = c.frame_id
         LEFT JOIN stack_profile_mapping m ON m.id = f.mapping
         ORDER BY c.depth",
    )?;
    type Row = (i64, i64, Option<i64>, i64, String, String);
    let mut chain: Vec<Row> = Vec::new();
    let mut rows = stmt.query([*start])?;
    while let Some(r) = rows.next()? {
        chain.push((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ));
    }
    // From the root down: managed code below makes libart frames runtime frames.
    let mut managed_below = false;
    let mut annotations: HashMap<i64, Option<&'static str>> = HashMap::new();
    for (id, _, _, _, name, map) in &chain {
        let annotation = match map_kind(map) {
            MapKind::Interp => Some("interp"),
            MapKind::Jit => Some("jit"),
            MapKind::Aot => Some("aot"),
            MapKind::Libart if managed_below => {
                if INTERPRETER_PREFIXES.iter().any(|p| name.starts_with(p)) {
                    Some("common-frame-interp")
                } else {
                    Some("common-frame")
                }
            }
            _ => None,
        };
        if matches!(map_kind(map), MapKind::Interp | MapKind::Jit | MapKind::Aot) {
            managed_below = true;
        }
        annotations.insert(*id, annotation);
    }
    Ok(chain
        .into_iter()
        .map(|(id, depth, parent, frame, _, _)| {
            let a = annotations.get(&id).copied().flatten();
            vec![
                Value::Integer(id),
                Value::Integer(depth),
                parent.map_or(Value::Null, Value::Integer),
                Value::Integer(frame),
                a.map_or(Value::Null, |s| Value::Text(s.to_string())),
            ]
        })
        .collect())
}

/// `demangle(name)`: an Itanium C++ symbol as c++filt shows it; NULL when it is not one.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    symbol
        .demangle(&cpp_demangle::DemangleOptions::default())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itanium_symbols_demangle_as_cxxfilt_shows_them() {
        assert_eq!(
            demangle("_ZN3art9ArtMethod6InvokeEPNS_6ThreadEPjjPNS_6JValueEPKc").as_deref(),
            Some("art::ArtMethod::Invoke(art::Thread*, unsigned int*, unsigned int, art::JValue*, char const*)")
        );
        assert_eq!(demangle("ExecuteSwitchImplAsm"), None);
        assert_eq!(demangle("_Znot a symbol"), None);
    }
}

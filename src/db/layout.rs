//! `experimental_slice_layout(track_ids)`: Perfetto's table function that packs the slices
//! of several tracks onto one set of rows, as its UI does for async tracks. Each root slice
//! and its descendants (a "stalactite") is placed at the lowest `layout_depth` where every
//! row it needs is free at its start; its slices keep their relative depth below it.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

use rusqlite::types::Value;
use rusqlite::vtab::{
    eponymous_only_module, sqlite3_vtab, sqlite3_vtab_cursor, Context, IndexConstraintOp,
    IndexInfo, VTab, VTabConnection, VTabCursor, Values,
};
use rusqlite::{Connection, Error};

/// Output columns: the slice's, then `layout_depth`, then the hidden argument.
const SLICE_COLUMNS: &str =
    "id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, thread_dur";
const SLICE_COLUMN_COUNT: usize = 11;
const LAYOUT_DEPTH: c_int = SLICE_COLUMN_COUNT as c_int;
const FILTER_TRACK_IDS: c_int = LAYOUT_DEPTH + 1;
/// Deepest nesting the packing considers (Trace Processor drops slices deeper than 512).
const MAX_DEPTH: i64 = 1024;

/// Registers the table function; slices are read through `side`, a second connection to
/// the same database (a virtual table cannot safely re-enter the connection running it).
pub fn register(conn: &Connection, side: Arc<Mutex<Connection>>) -> rusqlite::Result<()> {
    conn.create_module(
        "experimental_slice_layout",
        eponymous_only_module::<LayoutTable>(),
        Some(side),
    )
}

/// Layout depth of each slice, in the order given. `slices` are (id, ts, dur, depth,
/// parent_id); a slice whose parent is not among them counts as a root.
fn layout_depths(slices: &[(i64, i64, i64, i64, Option<i64>)]) -> Vec<i64> {
    let index: HashMap<i64, usize> = slices.iter().enumerate().map(|(i, s)| (s.0, i)).collect();
    // Root of each slice, and each root's extent: end time and rows below it.
    let mut root = vec![usize::MAX; slices.len()];
    for i in 0..slices.len() {
        let mut chain = Vec::new();
        let mut at = i;
        let top = loop {
            if root[at] != usize::MAX {
                break root[at];
            }
            chain.push(at);
            match slices[at].4.and_then(|p| index.get(&p)) {
                Some(&parent) if chain.len() <= slices.len() => at = parent,
                _ => break at,
            }
        };
        for c in chain {
            root[c] = top;
        }
    }
    let end_of = |s: &(i64, i64, i64, i64, Option<i64>)| {
        if s.2 < 0 {
            i64::MAX
        } else {
            s.1.saturating_add(s.2)
        }
    };
    let mut extent: HashMap<usize, (i64, i64)> = HashMap::new();
    for (i, s) in slices.iter().enumerate() {
        let r = root[i];
        // Depths are at most a few hundred; a corrupt one must not make the packing huge.
        let rel = s.3.saturating_sub(slices[r].3).clamp(0, MAX_DEPTH);
        let e = extent.entry(r).or_insert((i64::MIN, 0));
        e.0 = e.0.max(end_of(s));
        e.1 = e.1.max(rel);
    }
    let mut roots: Vec<usize> = extent.keys().copied().collect();
    roots.sort_by_key(|&r| (slices[r].1, slices[r].0));
    // For each layout row, when its current occupant ends.
    let mut busy_until: Vec<i64> = Vec::new();
    let mut placed: HashMap<usize, i64> = HashMap::new();
    for r in roots {
        let (end, height) = extent[&r];
        let start = slices[r].1;
        let rows = height as usize + 1;
        let mut d = 0usize;
        while (d..d + rows).any(|row| busy_until.get(row).is_some_and(|&until| until > start)) {
            d += 1;
        }
        if busy_until.len() < d + rows {
            busy_until.resize(d + rows, i64::MIN);
        }
        for row in &mut busy_until[d..d + rows] {
            *row = end;
        }
        placed.insert(r, d as i64);
    }
    slices
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let r = root[i];
            let rel = s.3.saturating_sub(slices[r].3).clamp(0, MAX_DEPTH);
            placed.get(&r).copied().unwrap_or(0) + rel
        })
        .collect()
}

#[repr(C)]
struct LayoutTable {
    /// Must come first: SQLite sees this struct as its `sqlite3_vtab`.
    base: sqlite3_vtab,
    side: Arc<Mutex<Connection>>,
}

// SAFETY: `LayoutTable` is `repr(C)` with `sqlite3_vtab` first, as the trait requires.
unsafe impl<'vtab> VTab<'vtab> for LayoutTable {
    type Aux = Arc<Mutex<Connection>>;
    type Cursor = LayoutCursor<'vtab>;

    fn connect(
        _db: &mut VTabConnection,
        aux: Option<&Self::Aux>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let side = aux
            .cloned()
            .ok_or_else(|| Error::ModuleError("experimental_slice_layout: no database".into()))?;
        let schema =
            format!("CREATE TABLE x({SLICE_COLUMNS}, layout_depth, filter_track_ids HIDDEN)");
        Ok((
            schema,
            LayoutTable {
                base: sqlite3_vtab::default(),
                side,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let filter = info.constraints().position(|c| {
            c.column() == FILTER_TRACK_IDS
                && c.is_usable()
                && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
        });
        match filter {
            Some(i) => {
                let mut usage = info.constraint_usage(i);
                usage.set_argv_index(1);
                usage.set_omit(true);
                info.set_estimated_cost(1000.0);
                info.set_idx_num(1);
            }
            // Without its argument the function has nothing to lay out; make that plan
            // too costly to pick, and refuse it in `filter` if SQLite picks it anyway.
            None => {
                info.set_estimated_cost(f64::MAX);
                info.set_idx_num(0);
            }
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<LayoutCursor<'vtab>> {
        Ok(LayoutCursor {
            base: sqlite3_vtab_cursor::default(),
            side: self.side.clone(),
            rows: Vec::new(),
            at: 0,
            table: PhantomData,
        })
    }
}

#[repr(C)]
struct LayoutCursor<'vtab> {
    /// Must come first: SQLite sees this struct as its `sqlite3_vtab_cursor`.
    base: sqlite3_vtab_cursor,
    /// The cursor's own handle on the side connection: SQLite may write into the table
    /// struct (error messages) while cursors are open, so they hold no reference to it.
    side: Arc<Mutex<Connection>>,
    table: PhantomData<&'vtab LayoutTable>,
    /// The slice columns plus layout_depth, per row.
    rows: Vec<Vec<Value>>,
    at: usize,
}

impl LayoutCursor<'_> {
    fn load(&mut self, track_ids: &str) -> rusqlite::Result<()> {
        let mut ids = Vec::new();
        for part in track_ids
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let id: i64 = part.parse().map_err(|_| {
                Error::ModuleError(format!(
                    "experimental_slice_layout: '{part}' is not a track id"
                ))
            })?;
            ids.push(id);
        }
        ids.sort_unstable();
        ids.dedup();
        self.rows.clear();
        self.at = 0;
        if ids.is_empty() {
            return Ok(());
        }
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let conn = self
            .side
            .lock()
            .map_err(|_| Error::ModuleError("experimental_slice_layout: lock poisoned".into()))?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {SLICE_COLUMNS} FROM slice WHERE track_id IN ({list}) ORDER BY id"
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let mut values = Vec::with_capacity(SLICE_COLUMN_COUNT + 1);
            for c in 0..SLICE_COLUMN_COUNT {
                values.push(r.get::<_, Value>(c)?);
            }
            self.rows.push(values);
        }
        let int = |v: &Value| match v {
            Value::Integer(i) => Some(*i),
            _ => None,
        };
        let shape: Vec<_> = self
            .rows
            .iter()
            .map(|r| {
                (
                    int(&r[0]).unwrap_or(0),
                    int(&r[1]).unwrap_or(0),
                    int(&r[2]).unwrap_or(0),
                    int(&r[6]).unwrap_or(0),
                    int(&r[7]),
                )
            })
            .collect();
        for (row, depth) in self.rows.iter_mut().zip(layout_depths(&shape)) {
            row.push(Value::Integer(depth));
        }
        Ok(())
    }
}

// SAFETY: `LayoutCursor` is `repr(C)` with `sqlite3_vtab_cursor` first, as the trait requires.
unsafe impl VTabCursor for LayoutCursor<'_> {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Values<'_>,
    ) -> rusqlite::Result<()> {
        if idx_num != 1 {
            return Err(Error::ModuleError(
                "experimental_slice_layout needs its filter_track_ids argument".into(),
            ));
        }
        // One track id may come as a number.
        let track_ids = match args.get::<Value>(0)? {
            Value::Text(s) => s,
            Value::Integer(i) => i.to_string(),
            _ => String::new(),
        };
        self.load(&track_ids)
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.at += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.at >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        match self.rows.get(self.at).and_then(|r| r.get(i as usize)) {
            Some(v) => ctx.set_result(v),
            None => ctx.set_result(&Value::Null),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.at as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::layout_depths;

    #[test]
    fn touching_slices_share_a_row() {
        let slices = [
            (0, 0, 10, 0, None),
            (1, 10, 10, 0, None),
            (2, 20, 10, 0, None),
        ];
        assert_eq!(layout_depths(&slices), [0, 0, 0]);
    }

    #[test]
    fn overlapping_stalactites_stack_below_each_other() {
        // Root 0 has a child at depth 1; root 2 starts while 0 is still open, so it goes
        // below both of 0's rows; root 3 starts after 0 ended and takes row 0.
        let slices = [
            (0, 0, 100, 0, None),
            (1, 10, 20, 1, Some(0)),
            (2, 50, 100, 0, None),
            (3, 120, 10, 0, None),
        ];
        assert_eq!(layout_depths(&slices), [0, 1, 2, 0]);
    }

    #[test]
    fn an_unfinished_slice_blocks_its_rows_forever() {
        let slices = [(0, 0, -1, 0, None), (1, 1_000_000, 5, 0, None)];
        assert_eq!(layout_depths(&slices), [0, 1]);
    }
}

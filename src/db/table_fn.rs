//! Table functions computed in Rust (Perfetto's `experimental_flamegraph(...)`,
//! `experimental_annotated_callstack(...)`): an eponymous virtual table whose hidden
//! columns are the function's arguments; each call reads what it needs through a side
//! connection (a virtual table cannot safely re-enter the connection running it) and
//! returns its rows whole.

use std::marker::PhantomData;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

use rusqlite::types::Value;
use rusqlite::vtab::{
    eponymous_only_module, sqlite3_vtab, sqlite3_vtab_cursor, Context, IndexConstraintOp,
    IndexInfo, VTab, VTabConnection, VTabCursor, Values,
};
use rusqlite::{Connection, Error};

/// Computes a table function's rows from its arguments (NULL for those not given).
pub type Compute = fn(&Connection, &[Value]) -> rusqlite::Result<Vec<Vec<Value>>>;

/// What a table function is: its name, output columns, arguments and body.
pub struct TableFn {
    pub name: &'static str,
    pub columns: &'static [&'static str],
    pub args: &'static [&'static str],
    pub compute: Compute,
}

struct Aux {
    side: Arc<Mutex<Connection>>,
    def: &'static TableFn,
}

/// Registers `def` on `conn`, reading through `side`.
pub fn register(
    conn: &Connection,
    side: Arc<Mutex<Connection>>,
    def: &'static TableFn,
) -> rusqlite::Result<()> {
    conn.create_module(
        def.name,
        eponymous_only_module::<FnTable>(),
        Some(Arc::new(Aux { side, def })),
    )
}

#[repr(C)]
struct FnTable {
    /// Must come first: SQLite sees this struct as its `sqlite3_vtab`.
    base: sqlite3_vtab,
    aux: Arc<Aux>,
}

// SAFETY: `FnTable` is `repr(C)` with `sqlite3_vtab` first, as the trait requires.
unsafe impl<'vtab> VTab<'vtab> for FnTable {
    type Aux = Arc<Aux>;
    type Cursor = FnCursor<'vtab>;

    fn connect(
        _db: &mut VTabConnection,
        aux: Option<&Self::Aux>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let aux = aux
            .cloned()
            .ok_or_else(|| Error::ModuleError("table function: no database".into()))?;
        let mut cols: Vec<String> = aux.def.columns.iter().map(|c| c.to_string()).collect();
        cols.extend(aux.def.args.iter().map(|a| format!("{a} HIDDEN")));
        let schema = format!("CREATE TABLE x({})", cols.join(", "));
        Ok((
            schema,
            FnTable {
                base: sqlite3_vtab::default(),
                aux,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let first_arg = self.aux.def.columns.len() as c_int;
        let usable: Vec<(usize, c_int)> = info
            .constraints()
            .enumerate()
            .filter(|(_, c)| {
                c.column() >= first_arg
                    && c.is_usable()
                    && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
            })
            .map(|(i, c)| (i, c.column() - first_arg))
            .collect();
        // idx_num: a bit per argument given, in argv order of the argument index.
        let mut mask = 0;
        let mut given: Vec<(c_int, usize)> = usable.iter().map(|&(i, a)| (a, i)).collect();
        given.sort_unstable();
        given.dedup_by_key(|g| g.0);
        for (n, &(arg, i)) in given.iter().enumerate() {
            let mut usage = info.constraint_usage(i);
            usage.set_argv_index(n as c_int + 1);
            usage.set_omit(true);
            mask |= 1 << arg;
        }
        info.set_idx_num(mask);
        info.set_estimated_cost(1e6 / (1.0 + given.len() as f64));
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<FnCursor<'vtab>> {
        Ok(FnCursor {
            base: sqlite3_vtab_cursor::default(),
            aux: self.aux.clone(),
            rows: Vec::new(),
            at: 0,
            args: Vec::new(),
            table: PhantomData,
        })
    }
}

#[repr(C)]
struct FnCursor<'vtab> {
    /// Must come first: SQLite sees this struct as its `sqlite3_vtab_cursor`.
    base: sqlite3_vtab_cursor,
    aux: Arc<Aux>,
    table: PhantomData<&'vtab FnTable>,
    rows: Vec<Vec<Value>>,
    at: usize,
    /// The arguments of the call (the hidden columns' values).
    args: Vec<Value>,
}

// SAFETY: `FnCursor` is `repr(C)` with `sqlite3_vtab_cursor` first, as the trait requires.
unsafe impl VTabCursor for FnCursor<'_> {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Values<'_>,
    ) -> rusqlite::Result<()> {
        let n = self.aux.def.args.len();
        let mut values = vec![Value::Null; n];
        let mut next = 0;
        for (a, v) in values.iter_mut().enumerate() {
            if idx_num & (1 << a) != 0 {
                *v = args.get::<Value>(next)?;
                next += 1;
            }
        }
        let conn = self
            .aux
            .side
            .lock()
            .map_err(|_| Error::ModuleError("table function: lock poisoned".into()))?;
        self.rows = (self.aux.def.compute)(&conn, &values)?;
        self.at = 0;
        self.args = values;
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.at += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.at >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let ncols = self.aux.def.columns.len();
        let i = i as usize;
        let v = if i < ncols {
            self.rows.get(self.at).and_then(|r| r.get(i))
        } else {
            self.args.get(i - ncols)
        };
        ctx.set_result(v.unwrap_or(&Value::Null))
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.at as i64)
    }
}

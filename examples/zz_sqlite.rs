use rusqlite::Connection;
use std::time::Instant;

fn open(path: &str) -> Connection {
    let _ = std::fs::remove_file(path);
    let c = Connection::open(path).unwrap();
    c.execute_batch("PRAGMA page_size = 8192; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY; PRAGMA journal_mode = OFF;
    CREATE TABLE args (id INTEGER PRIMARY KEY, arg_set_id INTEGER, flat_key TEXT, key TEXT, int_value INTEGER, string_value TEXT, real_value REAL, value_type TEXT, display_value TEXT);
    CREATE INDEX args_set ON args(arg_set_id);").unwrap();
    c
}

fn fill(c: &Connection, n: i64) {
    c.execute_batch("BEGIN").unwrap();
    let rows = 32;
    let one = "(NULL,?,?,?,?,NULL,NULL,?,?)";
    let sql = format!("INSERT OR FAIL INTO args (id, arg_set_id, flat_key, key, int_value, string_value, real_value, value_type, display_value) VALUES {}", vec![one; rows].join(","));
    let mut st = c.prepare(&sql).unwrap();
    let mut i = 0;
    while i < n {
        for r in 0..rows as i64 {
            let k = i + r;
            let b = (r as usize) * 6;
            st.raw_bind_parameter(b + 1, k).unwrap();
            st.raw_bind_parameter(b + 2, "args.n").unwrap();
            st.raw_bind_parameter(b + 3, "args.n").unwrap();
            st.raw_bind_parameter(b + 4, k).unwrap();
            st.raw_bind_parameter(b + 5, "int").unwrap();
            st.raw_bind_parameter(b + 6, k.to_string().as_str())
                .unwrap();
        }
        st.raw_execute().unwrap();
        i += rows as i64;
    }
    drop(st);
    c.execute_batch("COMMIT").unwrap();
}

fn main() {
    let n: i64 = 2_000_000;
    let side = open("/tmp/prof/zz-side.db");
    let t = Instant::now();
    fill(&side, n);
    drop(side);
    let t1 = t.elapsed().as_secs_f64();
    let main = open("/tmp/prof/zz.db");
    let t = Instant::now();
    main.execute_batch("ATTACH '/tmp/prof/zz-side.db' AS side; BEGIN; INSERT INTO main.args SELECT * FROM side.args; COMMIT; DETACH side;").unwrap();
    let t2 = t.elapsed().as_secs_f64();
    let count: i64 = main
        .query_row("SELECT count(*) FROM args", [], |r| r.get(0))
        .unwrap();
    println!("fill {t1:.3}s, xfer {t2:.3}s ({count} rows)");
}

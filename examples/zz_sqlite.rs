use rusqlite::Connection;
use std::time::Instant;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or("after".into());
    let path = "/tmp/prof/zz.db";
    let _ = std::fs::remove_file(path);
    let c = Connection::open(path).unwrap();
    c.execute_batch(&"PRAGMA page_size = PS; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY; PRAGMA journal_mode = OFF;
    CREATE TABLE args (id INTEGER PRIMARY KEY, arg_set_id INTEGER, flat_key TEXT, key TEXT, int_value INTEGER, string_value TEXT, real_value REAL, value_type TEXT, display_value TEXT);".replace("PS", &std::env::args().nth(2).unwrap_or("8192".into()))).unwrap();
    if mode == "before" {
        c.execute_batch("CREATE INDEX args_set ON args(arg_set_id);")
            .unwrap();
    }
    c.execute_batch("BEGIN").unwrap();
    let t = Instant::now();
    let rows = 32;
    let one = "(NULL,?,?,?,?,NULL,NULL,?,?)";
    let sql = format!("INSERT OR FAIL INTO args (id, arg_set_id, flat_key, key, int_value, string_value, real_value, value_type, display_value) VALUES {}", vec![one; rows].join(","));
    let mut st = c.prepare(&sql).unwrap();
    let n: i64 = 2_000_000;
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
    let t1 = t.elapsed().as_secs_f64();
    c.execute_batch("COMMIT").unwrap();
    let t2 = t.elapsed().as_secs_f64();
    if mode == "after" {
        c.execute_batch("CREATE INDEX args_set ON args(arg_set_id);")
            .unwrap();
    }
    println!(
        "{mode}: inserts {t1:.3}s, commit {:.3}s, index {:.3}s, total {:.3}s",
        t2 - t1,
        t.elapsed().as_secs_f64() - t2,
        t.elapsed().as_secs_f64()
    );
}

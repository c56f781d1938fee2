use rusqlite::{params, Connection};
use std::time::Instant;

fn setup(path: &str) -> Connection {
    let _ = std::fs::remove_file(path);
    let c = Connection::open(path).unwrap();
    c.execute_batch("PRAGMA page_size = 8192; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY; PRAGMA journal_mode = OFF;
    CREATE TABLE slice (id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER, category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, thread_ts INTEGER, thread_dur INTEGER, thread_instruction_count INTEGER, thread_instruction_delta INTEGER, cat TEXT GENERATED ALWAYS AS (category) VIRTUAL, slice_id INTEGER GENERATED ALWAYS AS (id) VIRTUAL);
    BEGIN;").unwrap();
    c
}

const N: i64 = 1_000_000;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or("multi".into());
    let c = setup("/tmp/prof/zz.db");
    let names: Vec<String> = (0..64).map(|i| format!("function_{i}")).collect();
    let t = Instant::now();
    match mode.as_str() {
        "single" => {
            let mut st = c.prepare("INSERT INTO slice (id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, thread_dur) VALUES (?,?,?,?,?,?,?,?,?,?,?)").unwrap();
            for i in 0..N {
                st.execute(params![
                    rusqlite::types::Null,
                    i * 1000,
                    500,
                    i % 100,
                    "bench",
                    names[(i % 64) as usize],
                    i % 2,
                    if i % 2 == 1 { Some(i - 1) } else { None },
                    rusqlite::types::Null,
                    rusqlite::types::Null,
                    rusqlite::types::Null
                ])
                .unwrap();
            }
        }
        "single_raw" => {
            let mut st = c.prepare("INSERT INTO slice (id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, thread_dur) VALUES (NULL,?,?,?,?,?,?,?,NULL,NULL,NULL)").unwrap();
            for i in 0..N {
                st.raw_bind_parameter(1, i * 1000).unwrap();
                st.raw_bind_parameter(2, 500).unwrap();
                st.raw_bind_parameter(3, i % 100).unwrap();
                st.raw_bind_parameter(4, "bench").unwrap();
                st.raw_bind_parameter(5, names[(i % 64) as usize].as_str())
                    .unwrap();
                st.raw_bind_parameter(6, i % 2).unwrap();
                if i % 2 == 1 {
                    st.raw_bind_parameter(7, i - 1).unwrap();
                } else {
                    st.raw_bind_parameter(7, rusqlite::types::Null).unwrap();
                }
                st.raw_execute().unwrap();
            }
        }
        m => {
            let rows = 32;
            let verb = if m == "multi_fail" {
                "INSERT OR FAIL"
            } else {
                "INSERT"
            };
            let one = "(NULL,?,?,?,?,?,?,?,NULL,NULL,NULL)";
            let sql = format!("{verb} INTO slice (id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, thread_dur) VALUES {}", vec![one; rows].join(","));
            let mut st = c.prepare(&sql).unwrap();
            let mut i = 0;
            while i < N {
                for r in 0..rows as i64 {
                    let k = i + r;
                    let b = (r as usize) * 7;
                    st.raw_bind_parameter(b + 1, k * 1000).unwrap();
                    st.raw_bind_parameter(b + 2, 500).unwrap();
                    st.raw_bind_parameter(b + 3, k % 100).unwrap();
                    st.raw_bind_parameter(b + 4, "bench").unwrap();
                    st.raw_bind_parameter(b + 5, names[(k % 64) as usize].as_str())
                        .unwrap();
                    st.raw_bind_parameter(b + 6, k % 2).unwrap();
                    if k % 2 == 1 {
                        st.raw_bind_parameter(b + 7, k - 1).unwrap();
                    } else {
                        st.raw_bind_parameter(b + 7, rusqlite::types::Null).unwrap();
                    }
                }
                st.raw_execute().unwrap();
                i += rows as i64;
            }
        }
    }
    c.execute_batch("COMMIT").unwrap();
    println!("{mode}: {:.3}s", t.elapsed().as_secs_f64());
}

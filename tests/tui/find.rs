//! Finding and summarising on a real trace (issue 14): the track order (CPUs by number,
//! counters grouped, processes by activity, a collapsed Kernel threads group), the track
//! filter, pinned tracks, an area selection with each aggregate tab, the highlight an
//! aggregate row makes, and aggregates over the whole trace equal to `sextant query`.

use super::*;

use sextant::db::read::{self, Aggregate, AreaSpec, Cell};

/// `snapshot!` from this file's directory (insta's path is relative to the caller's file).
macro_rules! snap {
    ($name:expr, $screen:expr) => {
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!($name, $screen);
        });
    };
}

const REAL: &str = "real/android/perfettoskills_api32_startup_warm.perfetto-trace";

fn labels(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter_map(|l| l.split_once('│').map(|(a, _)| a.trim().to_string()))
        .collect()
}

#[test]
fn tracks_are_ordered_as_perfetto_orders_them_with_kernel_threads_grouped() {
    let mut h = Harness::fixture(REAL, 120, 60);
    let screen = h.screen();
    let rows = labels(&screen);
    // CPUs by number, then counters grouped by name (cpu2 before cpu10 would be numeric).
    let cpus: Vec<u32> = rows
        .iter()
        .filter_map(|l| l.strip_prefix("CPU ").and_then(|n| n.parse().ok()))
        .collect();
    assert!(cpus.len() >= 4, "{rows:#?}");
    assert_eq!(cpus, (0..cpus.len() as u32).collect::<Vec<_>>());
    let freq: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("cpufreq cpu"))
        .map(|(i, _)| i)
        .collect();
    assert!(freq.windows(2).all(|w| w[1] == w[0] + 1), "{rows:#?}");
    snap!("real_timeline_ordered_120x60", screen);

    // The Kernel threads group is the machine's last row, collapsed; Space opens it.
    h.key(KeyCode::Char('G'));
    let screen = h.screen();
    let last = labels(&screen).into_iter().last().unwrap_or_default();
    assert!(last.starts_with("▸ Kernel threads ("), "{screen}");
    h.key(KeyCode::Char(' '));
    h.key(KeyCode::Char('j'));
    let screen = h.screen();
    assert!(screen.contains("▾ Kernel threads ("), "{screen}");
    // Its processes come next, indented under it.
    let rows = labels(&screen);
    let at = rows
        .iter()
        .position(|l| l.starts_with("▾ Kernel threads ("))
        .expect("the group");
    let next = screen
        .lines()
        .filter(|l| l.contains('│'))
        .nth(at + 1)
        .unwrap_or_default();
    assert!(
        next.starts_with("  ▸ ") || next.starts_with("  ▾ "),
        "{screen}"
    );
    snap!("real_timeline_kernel_threads_120x60", screen);
}

#[test]
fn kernel_thread_names_are_recognised_without_a_process_tree() {
    use sextant::tui::timeline::order::kernel_name;
    for n in [
        "[ksoftirqd/0]",
        "kworker/u16:11",
        "rcu_preempt",
        "rcuop/0",
        "migration/3",
    ] {
        assert!(kernel_name(n), "{n}");
    }
    for n in ["surfaceflinger", "adbd", "[", "RenderThread"] {
        assert!(!kernel_name(n), "{n}");
    }
}

#[test]
fn the_track_filter_narrows_keeps_groups_and_esc_clears_it() {
    for (w, hgt) in SIZES {
        let mut h = Harness::fixture(REAL, w, hgt);
        let all = h.screen();
        h.key(KeyCode::Char('T'));
        h.keys("surfacef");
        let typing = h.screen();
        assert!(typing.contains("filter tracks: surfacef"), "{typing}");
        h.key(KeyCode::Enter);
        let screen = h.screen();
        assert!(screen.contains("tracks matching \"surfacef\""), "{screen}");
        // The machine and the process stay around the matches; other processes go.
        assert!(screen.contains("▾ machine 0"), "{screen}");
        assert!(screen.contains("/system/bin/surf"), "{screen}");
        assert!(!screen.contains("CPU 0"), "{screen}");
        snap!(format!("real_timeline_filtered_{w}x{hgt}"), screen);
        // A pid matches too.
        h.key(KeyCode::Char('T'));
        for _ in 0..8 {
            h.key(KeyCode::Backspace);
        }
        h.keys("system_server");
        h.key(KeyCode::Enter);
        assert!(h.screen().contains("system_server"));
        h.key(KeyCode::Esc);
        assert_eq!(h.screen(), all, "Esc clears the filter");
    }
}

#[test]
fn a_pinned_track_stays_on_top_while_scrolling_and_unpins() {
    let mut h = Harness::fixture(REAL, 100, 30);
    // Down to CPU 3, pin it.
    for _ in 0..4 {
        h.key(KeyCode::Char('j'));
    }
    h.key(KeyCode::Char('p'));
    let screen = h.screen();
    assert!(screen.contains("pinned CPU 3"), "{screen}");
    h.key(KeyCode::Char('G'));
    let screen = h.screen();
    let rows = labels(&screen);
    assert!(
        rows[0].starts_with("▪ CPU 3") || rows[0].starts_with("▪"),
        "{rows:#?}"
    );
    assert!(rows[0].contains("CPU 3"), "{rows:#?}");
    assert!(screen.contains("Kernel threads"), "{screen}");
    // Back to the pinned row, p unpins.
    h.key(KeyCode::Char('g'));
    h.key(KeyCode::Char('p'));
    let rows = labels(&h.screen());
    assert!(rows[0].contains("machine 0"), "{rows:#?}");
}

/// The area: the whole machine (its header row) over the middle of the trace.
fn area_over_machine(h: &mut Harness) {
    h.key(KeyCode::Char('g'));
    h.key(KeyCode::Char('v'));
    for _ in 0..3 {
        h.key(KeyCode::Char('L'));
    }
    let screen = h.screen();
    assert!(screen.contains("area:"), "{screen}");
    h.key(KeyCode::Enter);
}

#[test]
fn an_area_shows_each_aggregate_tab_and_its_sql() {
    for (w, hgt) in [(120u16, 40u16), (80, 24)] {
        let mut h = Harness::fixture(REAL, w, hgt);
        area_over_machine(&mut h);
        let mut titles = Vec::new();
        for _ in 0..5 {
            let screen = h.screen();
            let tab = h
                .app
                .timeline
                .aggregates
                .as_ref()
                .and_then(|p| p.current())
                .map(|t| t.aggregate)
                .expect("a tab");
            titles.push(tab);
            assert!(screen.contains("area "), "{screen}");
            let name = tab.title().to_lowercase().replace(' ', "_");
            snap!(format!("real_area_{name}_{w}x{hgt}"), screen);
            h.key(KeyCode::Char('>'));
        }
        assert_eq!(
            titles,
            vec![
                Aggregate::Slices,
                Aggregate::ThreadStates,
                Aggregate::CpuByThread,
                Aggregate::CpuByProcess,
                Aggregate::Counters
            ]
        );
        // x shows the SQL the tab ran; x again hides it.
        h.key(KeyCode::Char('x'));
        let screen = h.screen();
        assert!(screen.contains("the SQL of this tab"), "{screen}");
        h.key(KeyCode::Char('x'));
        h.key(KeyCode::Esc);
        assert!(h.app.timeline.aggregates.is_none());
        assert!(h.app.timeline.area.is_none());
    }
}

#[test]
fn enter_on_a_slice_row_highlights_those_slices_and_n_steps_through_them() {
    let mut h = Harness::fixture(REAL, 120, 40);
    area_over_machine(&mut h);
    // Sort by occurrences (second column, largest first) and pick the top row.
    h.key(KeyCode::Char('o'));
    h.key(KeyCode::Char('o'));
    let panel = h.app.timeline.aggregates.as_ref().expect("panel");
    let table = panel.current().expect("slices");
    assert_eq!(table.aggregate, Aggregate::Slices);
    let (name, occurrences) = match (&table.rows[0][0], &table.rows[0][1]) {
        (Cell::Text(n), Cell::Int(c)) => (n.clone(), *c),
        other => panic!("{other:?}"),
    };
    assert!(table
        .rows
        .windows(2)
        .all(|w| w[0][1].cmp_value(&w[1][1]) != std::cmp::Ordering::Less));
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(
        screen.contains(&format!("1/{occurrences} in the area")),
        "{name}: {screen}"
    );
    let first = h.app.timeline.selection.expect("the first one is selected");
    h.key(KeyCode::Char('n'));
    if occurrences > 1 {
        assert!(h.screen().contains(&format!("2/{occurrences}")));
        assert_ne!(h.app.timeline.selection, Some(first));
    }
}

#[test]
fn the_mark_measures_to_the_selection_on_the_ruler() {
    let mut h = Harness::fixture(REAL, 120, 40);
    h.key(KeyCode::Char('m'));
    let screen = h.screen();
    assert!(screen.contains("mark→cursor +0 ns"), "{screen}");
    h.key(KeyCode::Char('d'));
    let screen = h.screen();
    assert!(screen.contains("mark→cursor +"), "{screen}");
    assert!(!screen.contains("mark→cursor +0 ns"), "{screen}");
}

/// A CSV field list as `sextant query` prints it (quoted text, bare numbers).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn same(cell: &Cell, field: &str) -> bool {
    match cell {
        Cell::Null => field == "[NULL]",
        Cell::Int(v) => field.parse::<i64>().ok() == Some(*v),
        Cell::Real(v) => field
            .parse::<f64>()
            .is_ok_and(|f| (f - v).abs() <= 1e-6 * v.abs().max(1.0)),
        Cell::Text(t) => field == t,
    }
}

#[test]
fn aggregates_over_the_whole_trace_equal_the_same_sql_in_sextant_query() {
    let db = TempFile::new("aggregates.sqlite");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sextant"))
        .arg("import")
        .arg(data(REAL))
        .arg("-o")
        .arg(db.path())
        .output()
        .expect("running sextant import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = sextant::db::open_read_only(db.path()).expect("the database opens");
    let ids = |sql: &str| -> Vec<i64> {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let rows = stmt.query_map([], |r| r.get(0)).expect("query");
        rows.map(|r| r.expect("row")).collect()
    };
    let (start, end): (i64, i64) = conn
        .query_row("SELECT start_ts, end_ts FROM trace_bounds", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("bounds");
    let area = AreaSpec {
        start,
        end,
        slice_tracks: ids("SELECT DISTINCT track_id FROM slice ORDER BY 1"),
        state_utids: ids("SELECT DISTINCT utid FROM thread_state ORDER BY 1"),
        ucpus: ids("SELECT DISTINCT ucpu FROM sched_slice ORDER BY 1"),
        counter_tracks: ids("SELECT DISTINCT track_id FROM counter ORDER BY 1"),
        utids: Vec::new(),
    };
    let tables = read::aggregates(&conn, &area).expect("aggregates");
    assert!(tables.len() >= 5, "{tables:?}");
    // Over the whole trace, the slices' wall time is every slice's duration.
    let total: i64 = conn
        .query_row("SELECT SUM(dur) FROM slice WHERE dur > 0", [], |r| r.get(0))
        .expect("sum");
    let wall: i64 = tables[0]
        .rows
        .iter()
        .map(|r| match r[2] {
            Cell::Int(v) => v,
            _ => 0,
        })
        .sum();
    assert!(wall >= total, "wall {wall} < {total}");
    for t in &tables {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sextant"))
            .arg("query")
            .arg(db.path())
            .arg(&t.sql)
            .output()
            .expect("running sextant query");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), t.rows.len() + 1, "{:?}: {text}", t.aggregate);
        for (row, line) in t.rows.iter().zip(&lines[1..]) {
            let fields = csv_fields(line);
            assert_eq!(fields.len(), row.len(), "{line}");
            for (c, f) in row.iter().zip(&fields) {
                assert!(same(c, f), "{:?}: {c:?} vs {f} in {line}", t.aggregate);
            }
        }
    }
}

#[test]
fn a_query_result_becomes_a_pinned_track_and_steps_through_its_rows() {
    for (w, hgt) in [(120u16, 40u16), (80, 24)] {
        let mut h = Harness::fixture(REAL, w, hgt);
        h.key(KeyCode::Char('4'));
        h.keys("select ts, dur, slice.name as name, utid from slice join thread_track t on t.id = slice.track_id order by dur desc limit 12");
        h.key(KeyCode::Enter);
        h.key(KeyCode::Esc);
        h.key(KeyCode::Char('T'));
        assert_eq!(
            h.app.pane,
            Pane::Timeline,
            "{:?} {}",
            h.app.notice,
            h.screen()
        );
        let tracks = &h.app.timeline.debug_tracks;
        assert!(!tracks.is_empty());
        assert!(tracks[0].label.starts_with("utid "), "{}", tracks[0].label);
        let screen = h.screen();
        assert!(screen.contains("query rows pinned on top"), "{screen}");
        assert!(screen.contains("◆ utid"), "{screen}");
        snap!(format!("real_query_track_{w}x{hgt}"), screen);
        // ] goes to the first row at or after the view's middle, and on.
        h.key(KeyCode::Char(']'));
        h.key(KeyCode::Char(']'));
        let screen = h.screen();
        assert!(screen.contains("row "), "{screen}");
        // p on the track removes it.
        h.key(KeyCode::Char('g'));
        h.key(KeyCode::Char('p'));
        assert_eq!(
            h.app.timeline.debug_tracks.len(),
            tracks_len_after_removing_one(w)
        );
    }
}

/// One track fewer than the result made (the same for both sizes).
fn tracks_len_after_removing_one(_w: u16) -> usize {
    let db = TempFile::new("count.sqlite");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sextant"))
        .args(["query", &data(REAL).to_string_lossy(), "select count(distinct utid) from (select utid from slice join thread_track t on t.id = slice.track_id order by dur desc limit 12)"])
        .output()
        .expect("running sextant query");
    drop(db);
    let text = String::from_utf8_lossy(&out.stdout);
    let n: usize = text
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("a count");
    n - 1
}

#[test]
fn a_systrace_without_a_process_tree_groups_kernel_threads_by_name() {
    let mut h = Harness::fixture("real/systrace/trappy_trace_surfaceflinger.html", 100, 40);
    h.key(KeyCode::Char('G'));
    let screen = h.screen();
    assert!(screen.contains("▸ Kernel threads ("), "{screen}");
    h.key(KeyCode::Char(' '));
    h.key(KeyCode::Char('G'));
    let rows = labels(&h.screen());
    let kernel = rows
        .iter()
        .position(|l| l.starts_with("▾ Kernel threads"))
        .expect("the group");
    // Inside: only threads named as the kernel names its own.
    for l in &rows[kernel + 1..] {
        let name = l.trim_start_matches(['▸', '▾', ' ']);
        if !name.is_empty() {
            assert!(
                sextant::tui::timeline::order::kernel_name(name),
                "{name} in {rows:#?}"
            );
        }
    }
}

#[test]
fn a_mouse_drag_selects_an_area() {
    let mut h = Harness::fixture(REAL, 120, 40);
    // From the machine row (the first under the ruler) down a few CPU rows, left to right.
    let (x0, x1, y0, y1) = (50, 90, 3, 7);
    h.mouse(MouseEventKind::Down(MouseButton::Left), x0, y0);
    h.mouse(MouseEventKind::Drag(MouseButton::Left), x1, y1);
    let area = h.app.timeline.area.expect("dragging draws an area");
    assert!(area.editing && area.t1 > area.t0);
    h.mouse(MouseEventKind::Up(MouseButton::Left), x1, y1);
    let area = h.app.timeline.area.expect("the area stays");
    assert!(!area.editing);
    let panel = h.app.timeline.aggregates.as_ref().expect("its aggregates");
    assert!(!panel.tables().is_empty());
    assert!(h.screen().contains("area "));
}

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
        assert!(screen.contains("▾ host"), "{screen}");
        // The name is cut in the middle at 80 columns: its pid stays.
        assert!(screen.contains("/system/bin/"), "{screen}");
        assert!(
            screen.contains(" 513 ") || screen.contains(" 513│"),
            "{screen}"
        );
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
    assert!(rows[0].contains("host"), "{rows:#?}");
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
    // No thread spends more time in its states than the area lasts (unfinished states end
    // at the thread's next one), and every row's share is a share.
    let states = tables
        .iter()
        .find(|t| t.aggregate == Aggregate::ThreadStates)
        .expect("thread states");
    let mut per_thread: std::collections::HashMap<String, i64> = Default::default();
    for r in &states.rows {
        if let (Cell::Int(tid), Cell::Int(d)) = (&r[1], &r[4]) {
            *per_thread.entry(format!("{:?}/{tid}", r[0])).or_default() += d;
        }
        if let Cell::Real(p) = r[5] {
            assert!((0.0..=100.0).contains(&p), "{r:?}");
        }
    }
    for (thread, d) in &per_thread {
        assert!(*d <= end - start, "{thread}: {d} > {}", end - start);
    }
    // The plans are linear: no subquery runs again per row or per group (the thread states
    // took 5 s on this 2 MB trace so).
    for t in &tables {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", t.sql))
            .expect("plan");
        let plan: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .expect("plan rows")
            .map(|r| r.expect("row"))
            .collect();
        assert!(
            !plan.iter().any(|l| l.contains("CORRELATED")),
            "{:?}: {plan:#?}",
            t.aggregate
        );
    }
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
        // The same result again pins nothing more.
        let pinned = h.app.timeline.debug_tracks.len();
        h.key(KeyCode::Char('4'));
        h.key(KeyCode::Esc);
        h.key(KeyCode::Char('T'));
        assert_eq!(h.app.timeline.debug_tracks.len(), pinned);
        assert!(
            h.screen().contains("this result is pinned on top already"),
            "{}",
            h.screen()
        );
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

/// Processes come by their threads' CPU time plus their threads' top-level slice time, as
/// the README says (process-scoped async tracks and unfinished slices do not count).
#[test]
fn processes_are_ordered_by_cpu_time_plus_their_threads_top_level_slices() {
    let h = Harness::fixture(REAL, 120, 40);
    let db = h.app.db.as_ref().expect("db");
    let conn = sextant::db::open_read_only(&db.path).expect("opens");
    let mut stmt = conn
        .prepare(
            "SELECT p.upid,
               COALESCE((SELECT SUM(s.dur) FROM sched_slice s JOIN thread t USING (utid)
                         WHERE t.upid = p.upid AND s.dur > 0), 0)
             + COALESCE((SELECT SUM(s.dur) FROM slice s JOIN thread_track tt ON tt.id = s.track_id
                         JOIN thread t ON t.utid = tt.utid
                         WHERE t.upid = p.upid AND s.depth = 0 AND s.dur > 0), 0)
             FROM process p",
        )
        .expect("prepare");
    let activity: std::collections::HashMap<i64, i64> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    let data = h.app.timeline.data.as_ref().expect("data");
    let m = &data.machines[0];
    let kernel_from = data.arrangement.kernel_from[0];
    let order: Vec<i64> = m.processes[..kernel_from]
        .iter()
        .map(|p| activity.get(&p.upid).copied().unwrap_or(0))
        .collect();
    assert!(order.len() > 5 && order[0] > 0, "{order:?}");
    for w in order.windows(2) {
        assert!(w[0] >= w[1], "not by activity: {order:?}");
    }
}

/// A systrace without a process tree: the drivers' threads (and a kernel-named thread
/// without a process) join the Kernel threads group; user-space daemons stay out.
#[test]
fn a_systrace_puts_driver_threads_and_processless_kernel_threads_in_the_group() {
    // Lines of a real systrace (ARM trappy's surfaceflinger trace) with those threads.
    let h = Harness::fixture("ftrace/kernel_threads_without_tree.systrace", 160, 48);
    let data = h.app.timeline.data.as_ref().expect("data");
    let m = &data.machines[0];
    let kernel_from = data.arrangement.kernel_from[0];
    let label = |p: &sextant::tui::timeline::load::ProcessNode| p.label.clone();
    let kernel: Vec<String> = m.processes[kernel_from..].iter().map(label).collect();
    let user: Vec<String> = m.processes[..kernel_from].iter().map(label).collect();
    for k in [
        "smem_native_rpm 87",
        "vsync_retire_wo 182",
        "wlan_logging_th 1604",
        "mdss_fb0 3660",
    ] {
        assert!(kernel.iter().any(|l| l == k), "{k} not in {kernel:#?}");
    }
    for u in ["perfd 813", "cnss_diag 829", "wpa_supplicant 1972"] {
        assert!(user.iter().any(|l| l == u), "{u} not among {user:#?}");
    }
    // No kernel-named thread track is left at the machine's level.
    for &t in &m.tracks {
        let l = &data.tracks[t].label;
        assert!(!l.starts_with("mdss_fb0"), "{l}");
    }
}

/// C closes every machine, and C again opens them as they were: the Kernel threads group
/// and the processes that started closed stay closed.
#[test]
fn c_twice_reopens_the_machines_only() {
    let mut h = Harness::fixture(REAL, 120, 40);
    let before = h.app.timeline.collapsed.clone();
    assert!(!before.is_empty());
    h.key(KeyCode::Char('C'));
    assert!(h.screen().contains("▸ host"), "{}", h.screen());
    h.key(KeyCode::Char('C'));
    assert_eq!(h.app.timeline.collapsed, before);
}

/// The timeline's labels widen with the terminal, and a long process name keeps its pid.
#[test]
fn labels_widen_with_the_terminal_and_keep_the_pid() {
    let h = Harness::fixture(REAL, 200, 60);
    let screen = h.screen();
    let width = screen
        .lines()
        .find_map(|l| l.find('│').map(|i| l[..i].chars().count()))
        .expect("a label column");
    assert!(width >= 48, "{width}");
    let mut h = Harness::fixture(REAL, 120, 40);
    h.key(KeyCode::Char('T'));
    h.keys("macrobenchmark");
    let screen = h.screen();
    assert!(
        screen.contains("… 7527") && screen.contains("… 7663"),
        "{screen}"
    );
}

/// A sampled thread without slices gets a row of its samples; an area over the machine
/// then has a Samples tab, and a sample shows its stack.
#[test]
fn a_sampled_thread_gets_a_samples_row_and_areas_sum_its_samples() {
    let mut h = Harness::fixture("lighthouse_cpu_profile.json", 160, 48);
    let screen = h.screen();
    assert!(screen.contains("CPU samples"), "{screen}");
    // The whole trace, from the machine row down (a drag across the lanes).
    let x0 = screen
        .lines()
        .nth(3)
        .and_then(|l| l.find('│').map(|i| l[..i].chars().count() as u16 + 1))
        .expect("the lanes");
    let rows = labels(&screen);
    let samples_y = 3 + rows
        .iter()
        .position(|l| l.contains("CPU samples"))
        .expect("the samples row") as u16;
    h.mouse(MouseEventKind::Down(MouseButton::Left), x0, 5);
    h.mouse(MouseEventKind::Drag(MouseButton::Left), 159, samples_y);
    h.mouse(MouseEventKind::Up(MouseButton::Left), 159, samples_y);
    let tabs: Vec<Aggregate> = h
        .app
        .timeline
        .aggregates
        .as_ref()
        .expect("aggregates")
        .tables()
        .iter()
        .map(|t| t.aggregate)
        .collect();
    assert!(tabs.contains(&Aggregate::Samples), "{tabs:?}");
    // The Samples tab, as the other tabs are snapshot in `an_area_shows_each_aggregate_tab…`.
    for _ in 0..tabs.len() {
        let on = h
            .app
            .timeline
            .aggregates
            .as_ref()
            .and_then(|p| p.current())
            .map(|t| t.aggregate);
        if on == Some(Aggregate::Samples) {
            break;
        }
        h.key(KeyCode::Char('>'));
    }
    let screen = h.screen();
    assert!(screen.contains("self_samples"), "{screen}");
    snap!("real_area_samples_160x48", screen);
    h.key(KeyCode::Esc);
    h.key(KeyCode::Esc);
    // The samples row: select its middle sample.
    let rows = labels(&h.screen());
    let at = rows
        .iter()
        .position(|l| l.contains("CPU samples"))
        .unwrap_or_else(|| panic!("the row: {}", h.screen()));
    h.key(KeyCode::Char('g'));
    for _ in 0..at {
        h.key(KeyCode::Char('j'));
    }
    h.key(KeyCode::Enter);
    match &h.app.timeline.details {
        sextant::tui::timeline::DetailsView::Ready(d) => {
            assert!(d.args.iter().any(|(k, _)| k == "frame 0"), "{d:?}");
        }
        other => panic!("no details: {other:?}"),
    }
}

/// An area's bracket on the ruler leaves no tick label cut in two.
#[test]
fn the_area_bracket_leaves_no_label_fragment_on_the_ruler() {
    let mut h = Harness::fixture(REAL, 160, 48);
    h.key(KeyCode::Char('v'));
    for _ in 0..3 {
        h.key(KeyCode::Char('L'));
    }
    let screen = h.screen();
    let ruler = screen.lines().nth(2).expect("the ruler");
    let lanes = &ruler[ruler.find("since start").expect("ruler") + 11..];
    let (a, b) = (
        lanes.find('├').expect("bracket"),
        lanes.find('┤').expect("bracket"),
    );
    let before = lanes[..a].trim_end_matches(' ');
    let after = lanes[b + '┤'.len_utf8()..].trim_start_matches(' ');
    // Right before the bracket, a whole label or nothing; right after, a tick or nothing.
    assert!(lanes[..a].ends_with(' ') || before.is_empty(), "{ruler}");
    assert!(
        after.is_empty() || after.starts_with('╵') || lanes[b..].starts_with("┤ "),
        "{ruler}"
    );
    assert!(
        !lanes[b + '┤'.len_utf8()..].starts_with(|c: char| c.is_alphanumeric()),
        "{ruler}"
    );
}

/// Extending an area past the view's edge scrolls the view with it.
#[test]
fn extending_an_area_past_the_view_edge_scrolls_the_view() {
    let mut h = Harness::fixture(REAL, 160, 48);
    for _ in 0..3 {
        h.key(KeyCode::Char('w'));
    }
    h.key(KeyCode::Char('v'));
    let start = h.app.timeline.view_start;
    let mut last = 0;
    for _ in 0..12 {
        h.send(AppEvent::Input(Event::Key(KeyEvent::new(
            KeyCode::Right,
            KeyModifiers::SHIFT,
        ))));
        let a = h.app.timeline.area.expect("area");
        let (t0, t1) = a.span();
        assert!(t1 - t0 > last, "the area stopped growing at {}", t1 - t0);
        last = t1 - t0;
    }
    assert!(h.app.timeline.view_start > start, "the view did not follow");
}

/// A filter that matches nothing says so instead of showing a blank timeline.
#[test]
fn a_filter_that_matches_nothing_says_so() {
    let mut h = Harness::fixture(REAL, 120, 40);
    h.key(KeyCode::Char('T'));
    h.keys("zzzz-no-such-track");
    assert!(h.screen().contains("no track matches"), "{}", h.screen());
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(
        screen.contains("no track matches \"zzzz-no-such-track\"")
            && screen.contains("no track matches the filter"),
        "{screen}"
    );
}

/// Selecting a row of a result in the SQL pane (j/k after Esc, then Enter) puts the
/// timeline on it and selects the slice it names.
#[test]
fn enter_on_a_result_row_puts_the_timeline_on_it() {
    let mut h = Harness::fixture(REAL, 120, 40);
    h.key(KeyCode::Char('4'));
    h.keys("select id, ts, dur, name from slice where dur > 0 order by dur desc limit 5");
    h.key(KeyCode::Enter);
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('j'));
    let (ts, dur, id) = h.app.query.row_place(1).expect("a place");
    let screen = h.screen();
    h.key(KeyCode::Enter);
    assert_eq!(h.app.pane, Pane::Timeline, "{:?} {screen}", h.app.notice);
    let sel = h
        .app
        .timeline
        .selection
        .expect("the row's slice is selected");
    assert_eq!(Some(i64::from(sel.id)), id);
    let t = &h.app.timeline;
    assert!(t.view_start <= ts && t.view_start + t.view_span >= ts + dur.unwrap_or(0));
    // i goes back to the prompt.
    h.key(KeyCode::Char('4'));
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('i'));
    assert!(h.app.query.editing);
}

/// After a failed query, T puts the result shown (an earlier query's) on the timeline under
/// that query's text, not the failed one's.
#[test]
fn t_after_a_failed_query_names_the_result_by_its_own_query() {
    let mut h = Harness::fixture(REAL, 120, 40);
    h.key(KeyCode::Char('4'));
    h.keys("select ts, dur, name from slice order by dur desc limit 3");
    h.key(KeyCode::Enter);
    h.keys("select nonsense from nowhere");
    h.key(KeyCode::Enter);
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('T'));
    let tracks = &h.app.timeline.debug_tracks;
    assert!(!tracks.is_empty(), "{:?}", h.app.notice);
    let label = &tracks[0].label;
    assert!(
        label.contains("order by dur desc limit 3") && !label.contains("nowhere"),
        "{label}"
    );
}

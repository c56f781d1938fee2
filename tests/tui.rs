//! Screen snapshots of every pane (ratatui's TestBackend, stored in `snapshots/`): the demo
//! archive and a fixture at 80x24 and 160x48, a failed import and a query error. The
//! workers' jobs run synchronously here, through the same functions the threads call.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;
use rusqlite::Connection;

use sextant::import::{ImportError, Session};
use sextant::tui::app::{App, Effect, Pane};
use sextant::tui::clock_editor::EditCommand;
use sextant::tui::event::AppEvent;
use sextant::tui::importer::{ImportEvent, ImportFailure};
use sextant::tui::query::{self, QueryEvent, QueryState};
use sextant::tui::theme::{ColorMode, Theme};
use sextant::tui::{ui, worker};

use common::TempFile;

struct Harness {
    app: App,
    session: Option<Session>,
    dbs: Vec<TempFile>,
    now: Instant,
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

impl Harness {
    fn new(title: &str, width: u16, height: u16) -> Harness {
        let now = Instant::now();
        Harness {
            app: App::new(
                title.to_string(),
                Theme::new(ColorMode::Ansi16),
                Rect::new(0, 0, width, height),
                QueryState::new(None),
                now,
            ),
            session: None,
            dbs: Vec::new(),
            now,
        }
    }

    /// Imports like the importer thread does and hands the app the outcome.
    fn import(
        title: &str,
        files: Vec<sextant::source::TraceFile>,
        width: u16,
        height: u16,
    ) -> Harness {
        let mut h = Harness::new(title, width, height);
        let db = TempFile::new("tui.sqlite");
        let never = AtomicBool::new(false);
        match Session::import(title, files, db.path(), &mut |_| {}, &never) {
            Ok(session) => {
                let mut summary = session.summary().clone();
                // Wall-clock times would make the snapshots flaky.
                summary.total_secs = 0.0;
                summary.parse_secs = 0.0;
                let event = ImportEvent::Finished {
                    db: db.0.clone(),
                    summary,
                    candidates: session.candidates(),
                };
                let manifest = ImportEvent::Manifest {
                    manifest: session.manifest(),
                    members: session.members(),
                };
                h.session = Some(session);
                h.dbs.push(db);
                h.send(AppEvent::Import(event));
                h.send(AppEvent::Import(manifest));
            }
            Err(e) => h.send(AppEvent::Import(ImportEvent::Failed(
                ImportFailure::from_error(&e),
            ))),
        }
        h
    }

    fn demo(width: u16, height: u16) -> Harness {
        let files =
            sextant::source::open_bytes(sextant::demo::NAME, sextant::demo::DEMO_ZIP.to_vec())
                .expect("the demo opens");
        Harness::import(sextant::demo::NAME, files, width, height)
    }

    fn fixture(name: &str, width: u16, height: u16) -> Harness {
        let path = data(name);
        let files = sextant::source::open(&path).expect("the fixture opens");
        Harness::import(name, files, width, height)
    }

    /// Applies an event, then runs every effect to completion as the threads would.
    fn send(&mut self, event: AppEvent) {
        let mut queue = vec![event];
        while let Some(event) = queue.pop() {
            for effect in self.app.handle(event, self.now) {
                // Events an effect answers with arrive in order.
                let mut answers = self.run(effect);
                answers.reverse();
                queue.extend(answers);
            }
        }
    }

    fn run(&mut self, effect: Effect) -> Vec<AppEvent> {
        match effect {
            Effect::Load(db, request) => {
                let conn = sextant::db::open_read_only(&db.path).expect("the database opens");
                vec![AppEvent::Data {
                    generation: db.generation,
                    answer: worker::answer(&conn, &request),
                }]
            }
            Effect::RunQuery { db, id, sql } => {
                let conn = query::open(&db.path).expect("the query connection opens");
                vec![AppEvent::Query(QueryEvent::Done {
                    id,
                    result: query::run(&conn, &sql),
                    elapsed: Duration::from_millis(3),
                })]
            }
            Effect::InterruptQuery => Vec::new(),
            Effect::Edit(command) => {
                let session = self.session.as_mut().expect("an imported session");
                match command {
                    EditCommand::Preview(m) => vec![AppEvent::Import(ImportEvent::Previewed(
                        session.preview_manifest(&m).map_err(|e| e.to_string()),
                    ))],
                    EditCommand::Apply(m) => {
                        let target = TempFile::new("tui-applied.sqlite");
                        let never = AtomicBool::new(false);
                        let events =
                            match session.apply_manifest(m, target.path(), &mut |_| {}, &never) {
                                Ok(mut summary) => {
                                    summary.total_secs = 0.0;
                                    vec![
                                        AppEvent::Import(ImportEvent::Applied {
                                            db: target.0.clone(),
                                            summary,
                                            candidates: session.candidates(),
                                        }),
                                        AppEvent::Import(ImportEvent::Manifest {
                                            manifest: session.manifest(),
                                            members: session.members(),
                                        }),
                                    ]
                                }
                                Err(e) => {
                                    vec![AppEvent::Import(ImportEvent::ApplyFailed(e.to_string()))]
                                }
                            };
                        self.dbs.push(target);
                        events
                    }
                    EditCommand::Write => {
                        let out = TempFile::new("tui-written.zip");
                        let written = session
                            .write_archive(out.path())
                            .map(|()| std::path::PathBuf::from("written.zip"))
                            .map_err(|e| e.to_string());
                        self.dbs.push(out);
                        vec![AppEvent::Import(ImportEvent::Written(written))]
                    }
                    EditCommand::WriteManifest => {
                        // The JSON the importer thread writes (the pty test writes the file).
                        let json = sextant::merge::to_json(&session.manifest());
                        assert!(json.contains("perfetto_manifest"), "{json}");
                        let path = std::path::PathBuf::from("written.manifest.json");
                        vec![AppEvent::Import(ImportEvent::Written(Ok(path)))]
                    }
                }
            }
            Effect::Replace(node) => {
                let target = TempFile::new("tui-replaced.sqlite");
                let never = AtomicBool::new(false);
                let session = self.session.as_mut().expect("an imported session");
                let event = match session.replace(node, target.path(), &mut |_| {}, &never) {
                    Ok(mut summary) => {
                        summary.total_secs = 0.0;
                        ImportEvent::Replaced {
                            db: target.0.clone(),
                            summary,
                            candidates: session.candidates(),
                        }
                    }
                    Err(e) => ImportEvent::ReplaceFailed(e.to_string()),
                };
                self.dbs.push(target);
                vec![AppEvent::Import(event)]
            }
        }
    }

    fn key(&mut self, code: KeyCode) {
        self.send(AppEvent::Input(Event::Key(KeyEvent::new(
            code,
            KeyModifiers::NONE,
        ))));
    }

    fn keys(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn mouse(&mut self, kind: MouseEventKind, column: u16, row: u16) {
        self.send(AppEvent::Input(Event::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })));
    }

    fn buffer(&self) -> ratatui::buffer::Buffer {
        let size = self.app.size;
        let mut terminal =
            Terminal::new(TestBackend::new(size.width, size.height)).expect("test terminal");
        terminal.draw(|f| ui::draw(f, &self.app)).expect("drawing");
        terminal.backend().buffer().clone()
    }

    fn screen(&self) -> String {
        let size = self.app.size;
        let mut terminal =
            Terminal::new(TestBackend::new(size.width, size.height)).expect("test terminal");
        terminal.draw(|f| ui::draw(f, &self.app)).expect("drawing");
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..size.height {
            let mut line = String::new();
            for x in 0..size.width {
                line.push_str(buffer[(x, y)].symbol());
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

macro_rules! snapshot {
    ($name:expr, $screen:expr) => {
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!($name, $screen);
        });
    };
}

// Finding and summarising (issue 14).
#[path = "tui/find.rs"]
mod find;

#[path = "tui/edit.rs"]
mod edit;

// A new user's hour on fresh real traces (notes qa2.md).
#[path = "tui/qa2.rs"]
mod qa2;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

#[test]
fn demo_timeline_shows_both_machines() {
    for (w, h) in SIZES {
        let harness = Harness::demo(w, h);
        let screen = harness.screen();
        assert!(
            screen.contains("phone") && screen.contains("watch"),
            "{screen}"
        );
        snapshot!(format!("demo_timeline_{w}x{h}"), screen);
    }
}

#[test]
fn demo_timeline_selection_shows_details_and_follows_its_flow() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        // The demo's flow starts at "post frame callback"; search finds it.
        harness.key(KeyCode::Char('/'));
        harness.keys("post frame");
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(
            screen.contains("post frame callback") && screen.contains("flows"),
            "{screen}"
        );
        snapshot!(format!("demo_timeline_selected_{w}x{h}"), screen);
        // Enter follows the flow to the slice it leads to.
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(screen.contains("run frame callback"), "{screen}");
        snapshot!(format!("demo_timeline_followed_flow_{w}x{h}"), screen);
    }
}

#[test]
fn demo_timeline_zoomed_in_and_collapsed() {
    let mut harness = Harness::demo(80, 24);
    harness.keys("wwwwwwdd");
    harness.key(KeyCode::Char('C'));
    snapshot!("demo_timeline_zoomed_collapsed_80x24", harness.screen());
}

#[test]
fn demo_clock_graph() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        harness.key(KeyCode::Char('2'));
        let screen = harness.screen();
        assert!(
            screen.contains("BOOTTIME") && screen.contains("REALTIME rendezvous"),
            "{screen}"
        );
        snapshot!(format!("demo_clocks_{w}x{h}"), screen);
    }
}

#[test]
fn demo_stats_lists_drops_first_with_their_fix() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        harness.key(KeyCode::Char('3'));
        let screen = harness.screen();
        assert!(
            screen.contains("clock_sync_failure_unknown_source_clock"),
            "{screen}"
        );
        assert!(screen.contains("Fix:"), "{screen}");
        snapshot!(format!("demo_stats_{w}x{h}"), screen);
        harness.key(KeyCode::Char('z'));
        harness.key(KeyCode::Char('z'));
        let screen = harness.screen();
        assert!(
            screen.contains("all ") && screen.contains("stats"),
            "{screen}"
        );
        snapshot!(format!("demo_stats_all_{w}x{h}"), screen);
    }
}

#[test]
fn stats_group_buffer_losses_by_file_with_their_causes_and_fixes() {
    for (w, h) in SIZES {
        let mut harness = Harness::fixture("buffer_loss.pftrace", w, h);
        harness.key(KeyCode::Char('3'));
        let screen = harness.screen();
        // The per-buffer table: buffer 0 overwrote 3 MiB, buffer 1 discarded 12 chunks.
        assert!(screen.contains("3.0 MiB"), "{screen}");
        assert!(screen.contains("smb_full 1"), "{screen}");
        assert!(screen.contains("TraceStats: 2 buffers"), "{screen}");
        assert!(screen.contains("Fix:"), "{screen}");
        // Sextant's own counters (table `sextant_stats`) are listed with the reference's.
        if h >= 48 {
            assert!(screen.contains("sequence_packet_loss_flagged"), "{screen}");
        }
        snapshot!(format!("buffer_loss_stats_{w}x{h}"), screen);
    }
    // Each cause row explains itself: down to the SMB-full row of buffer 1.
    let mut harness = Harness::fixture("buffer_loss.pftrace", 80, 24);
    harness.key(KeyCode::Char('3'));
    while !harness
        .screen()
        .contains("  traced_buf_data_loss_smb_full[buffer 1] (")
    {
        let before = harness.screen();
        harness.key(KeyCode::Char('j'));
        assert_ne!(before, harness.screen(), "the cause row is not listed");
    }
    let screen = harness.screen();
    assert!(screen.contains("shm_size_hint_kb"), "{screen}");
    snapshot!("buffer_loss_stats_smb_full_80x24", screen);
}

#[test]
fn a_file_without_trace_stats_never_claims_nothing_was_lost() {
    let mut harness = Harness::fixture("c_sched.pftrace", 80, 24);
    harness.key(KeyCode::Char('3'));
    let screen = harness.screen();
    assert!(
        screen.contains("no TraceStats: buffer losses unknown"),
        "{screen}"
    );
    assert!(!screen.contains("nothing was lost"), "{screen}");
}

#[test]
fn demo_sql_prompt_result_and_error() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        harness.key(KeyCode::Char('4'));
        harness.keys("select name, count(*) as n, sum(dur) as total from slice group by name order by n desc");
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(screen.contains("total"), "{screen}");
        snapshot!(format!("demo_sql_result_{w}x{h}"), screen);
        harness.keys("select * from no_such_table");
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(screen.contains("no such table"), "{screen}");
        snapshot!(format!("demo_sql_error_{w}x{h}"), screen);
    }
}

#[test]
fn sql_prompt_is_read_only() {
    let mut harness = Harness::demo(80, 24);
    harness.key(KeyCode::Char('4'));
    for sql in ["delete from slice", "attach database 'x.sqlite' as x"] {
        harness.keys(sql);
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(screen.contains("error"), "{sql}: {screen}");
    }
    harness.keys("select count(*) as slices from slice");
    harness.key(KeyCode::Enter);
    assert!(harness.screen().contains("113"), "{}", harness.screen());
}

#[test]
fn demo_trace_time_chooser_switches_and_panes_follow() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        harness.key(KeyCode::Char('t'));
        let screen = harness.screen();
        assert!(screen.contains("current"), "{screen}");
        snapshot!(format!("demo_trace_time_{w}x{h}"), screen);
        // Move to the watch's BOOTTIME and switch.
        let list = harness.app.chooser.candidates.clone();
        let target = list
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .and_then(|c| c.iter().position(|c| c.label == "watch BOOTTIME"))
            .expect("watch BOOTTIME is a candidate");
        let current = harness.app.chooser.cursor;
        let code = if target > current {
            KeyCode::Down
        } else {
            KeyCode::Up
        };
        for _ in 0..target.abs_diff(current) {
            harness.key(code);
        }
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(
            screen.contains("trace time is now on watch BOOTTIME"),
            "{screen}"
        );
        snapshot!(format!("demo_trace_time_switched_{w}x{h}"), screen);
        harness.key(KeyCode::Char('2'));
        let screen = harness.screen();
        assert!(
            screen.contains("trace time is on watch BOOTTIME"),
            "{screen}"
        );
        harness.key(KeyCode::Char('1'));
        snapshot!(
            format!("demo_timeline_on_watch_time_{w}x{h}"),
            harness.screen()
        );
    }
}

/// The SQL pane's result follows a trace_time switch: the query shown runs again on the
/// re-placed database (it kept the old database's timestamps, with nothing saying so).
#[test]
fn the_sql_result_follows_a_trace_time_switch() {
    let mut harness = Harness::demo(160, 48);
    let first_ts = |h: &Harness| match h.app.query.result.as_ref().map(|r| &r.rows[0][0]) {
        Some(query::Cell::Int(v)) => *v,
        other => panic!("no result: {other:?}"),
    };
    harness.key(KeyCode::Char('4'));
    harness.keys("select sum(ts) from slice");
    harness.key(KeyCode::Enter);
    let before = first_ts(&harness);
    harness.key(KeyCode::Esc);
    harness.key(KeyCode::Char('t'));
    let list = harness.app.chooser.candidates.clone();
    let target = list
        .as_ref()
        .and_then(|r| r.as_ref().ok())
        .and_then(|c| c.iter().position(|c| c.label == "watch BOOTTIME"))
        .expect("watch BOOTTIME is a candidate");
    let current = harness.app.chooser.cursor;
    let code = if target > current {
        KeyCode::Down
    } else {
        KeyCode::Up
    };
    for _ in 0..target.abs_diff(current) {
        harness.key(code);
    }
    harness.key(KeyCode::Enter);
    harness.key(KeyCode::Char('4'));
    let after = first_ts(&harness);
    let db = &harness.app.db.as_ref().expect("a database").path;
    let conn = query::open(db).expect("opens");
    let now: i64 = conn
        .query_row("select sum(ts) from slice", [], |r| r.get(0))
        .expect("queries");
    assert_ne!(before, now, "the switch moves the slices");
    assert_eq!(after, now, "the pane shows the new database's rows");
}

#[test]
fn help_lists_every_pane() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        harness.key(KeyCode::Char('?'));
        let screen = harness.screen();
        assert!(
            screen.contains("Everywhere") && screen.contains("Timeline (1)"),
            "{screen}"
        );
        snapshot!(format!("help_{w}x{h}"), screen);
        // Scrolling reaches every section.
        let mut seen = screen;
        for _ in 0..100 {
            harness.key(KeyCode::Char('j'));
            seen.push_str(&harness.screen());
        }
        for section in [
            "Clock graph (2)",
            "Stats (3)",
            "SQL prompt (4)",
            "trace_time chooser (t)",
        ] {
            assert!(seen.contains(section), "{section}");
        }
    }
}

#[test]
fn help_g_reaches_the_last_line_and_pgdn_stops_there() {
    for (w, h) in SIZES {
        let mut harness = Harness::demo(w, h);
        harness.key(KeyCode::Char('?'));
        harness.key(KeyCode::Char('G'));
        let screen = harness.screen();
        // The last key of the last section is on screen, on the body's last lines.
        assert!(
            screen.contains("put trace time on that clock"),
            "{w}x{h}: {screen}"
        );
        assert!(screen.contains("Android log (6)") || h < 40, "{screen}");
        for _ in 0..5 {
            harness.key(KeyCode::PageDown);
        }
        assert_eq!(harness.screen(), screen, "PgDn past the end");
        // Every line wrapped under its description, none at column 0 but titles.
        for line in screen.lines().skip(1) {
            if line.trim().is_empty() || line.contains("events from") {
                continue;
            }
            assert!(line.starts_with(' '), "{line}");
        }
    }
}

#[test]
fn help_opens_at_the_keys_of_the_current_pane() {
    let mut harness = Harness::demo(80, 24);
    harness.key(KeyCode::Char('3'));
    harness.key(KeyCode::Char('?'));
    let screen = harness.screen();
    assert!(
        screen.contains("Stats (3)") && screen.contains("non-zero"),
        "{screen}"
    );
    snapshot!("help_from_stats_80x24", screen);
}

#[test]
fn failed_import_shows_the_file_and_message() {
    for (w, h) in SIZES {
        // A ZIP whose only member is not a trace.
        let zip = sextant::source::open(&data("i1_merge.zip")).map(|_| ());
        assert!(zip.is_ok());
        let bytes = b"PK\x03\x04 this is not really a zip archive".to_vec();
        let mut harness = Harness::new("broken.zip", w, h);
        let failure = match sextant::source::open_bytes("broken.zip", bytes) {
            Ok(files) => {
                let db = TempFile::new("broken.sqlite");
                let never = AtomicBool::new(false);
                match Session::import("broken.zip", files, db.path(), &mut |_| {}, &never) {
                    Ok(_) => panic!("a broken archive imported"),
                    Err(e) => ImportFailure::from_error(&e),
                }
            }
            Err(e) => ImportFailure::from_error(&ImportError::Source(e)),
        };
        harness.send(AppEvent::Import(ImportEvent::Failed(failure)));
        let screen = harness.screen();
        assert!(
            screen.contains("The import failed") && screen.contains("broken.zip"),
            "{screen}"
        );
        snapshot!(format!("failed_import_{w}x{h}"), screen);
        harness.key(KeyCode::Char('q'));
        assert!(harness.app.quit);
    }
}

#[test]
fn fixture_sched_and_counters() {
    for (w, h) in SIZES {
        let harness = Harness::fixture("c_sched.pftrace", w, h);
        let screen = harness.screen();
        assert!(
            screen.contains("CPU 0") && screen.contains("GameThread"),
            "{screen}"
        );
        snapshot!(format!("fixture_c_sched_timeline_{w}x{h}"), screen);
    }
    let mut harness = Harness::fixture("c_sched.pftrace", 80, 24);
    for (key, pane) in [('2', "clocks"), ('3', "stats"), ('t', "trace_time")] {
        harness.key(KeyCode::Char(key));
        snapshot!(format!("fixture_c_sched_{pane}_80x24"), harness.screen());
    }
}

#[test]
fn import_progress_is_drawn_before_any_data() {
    let harness = Harness::new("run-42.zip", 80, 24);
    assert_eq!(harness.app.pane, Pane::Timeline);
    let screen = harness.screen();
    assert!(screen.contains("Importing"), "{screen}");
    snapshot!("importing_first_frame_80x24", screen);
}

#[test]
fn hostile_trace_strings_are_sanitized_on_screen() {
    // A Chrome JSON trace whose names carry escape sequences.
    let json = br#"{"traceEvents":[
        {"ph":"X","name":"evil\u001b]52;c;aGk=\u0007name","ts":1,"dur":5,"pid":1,"tid":1},
        {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t\u001b[31mred"}}]}"#;
    let files = sextant::source::open_bytes("evil.json", json.to_vec()).expect("opens");
    let harness = Harness::import("evil.json", files, 80, 24);
    let screen = harness.screen();
    assert!(
        !screen.contains('\u{1b}') && !screen.contains('\u{7}'),
        "{screen:?}"
    );
    assert!(screen.contains("evil\u{FFFD}]52"), "{screen}");
}

#[test]
fn keys_reach_a_text_field_until_esc() {
    let mut harness = Harness::demo(80, 24);
    harness.key(KeyCode::Char('4'));
    harness.keys("q1t?");
    assert_eq!(harness.app.pane, Pane::Query);
    assert!(!harness.app.quit);
    assert_eq!(harness.app.query.input.text, "q1t?");
    harness.key(KeyCode::Esc);
    harness.key(KeyCode::Char('1'));
    assert_eq!(harness.app.pane, Pane::Timeline);
    harness.key(KeyCode::Tab);
    assert_eq!(harness.app.pane, Pane::Clocks);
}

#[test]
fn database_opened_as_is_shows_everything_but_cannot_switch() {
    let db = TempFile::new("opened.sqlite");
    sextant::import::import_path(&data("e_two_machines.pftrace"), db.path()).expect("imports");
    let mut harness = Harness::new("opened.sqlite", 80, 24);
    harness.send(AppEvent::Import(ImportEvent::Opened { db: db.0.clone() }));
    let screen = harness.screen();
    assert!(
        screen.contains("host-box") && screen.contains("guest-vm"),
        "{screen}"
    );
    harness.key(KeyCode::Char('t'));
    assert!(
        harness.screen().contains("cannot be re-placed"),
        "{}",
        harness.screen()
    );
    // Keep the file alive until the end.
    drop(Connection::open(db.path()));
}

#[test]
fn mouse_click_selects_and_wheel_zooms_at_the_pointer() {
    let mut harness = Harness::demo(160, 48);
    let screen = harness.screen();
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("uploader 1002"))
        .expect("the uploader thread is on screen");
    let col = line
        .find("upload p")
        .map(|b| line[..b].chars().count())
        .expect("a slice name");
    harness.mouse(
        MouseEventKind::Down(MouseButton::Left),
        col as u16 + 1,
        row as u16,
    );
    assert!(harness.app.timeline.selection.is_some());
    assert!(
        harness.screen().contains("upload photo  category"),
        "{}",
        harness.screen()
    );
    let span = harness.app.timeline.view_span;
    harness.mouse(MouseEventKind::ScrollUp, col as u16 + 1, row as u16);
    assert!(harness.app.timeline.view_span < span, "the wheel zooms in");
    // A click on a counter reads its value there.
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("battery_mA"))
        .expect("a counter row");
    let col = line
        .find('│')
        .map(|b| line[..b].chars().count() + 10)
        .expect("the lanes start");
    harness.mouse(
        MouseEventKind::Down(MouseButton::Left),
        col as u16,
        row as u16,
    );
    let screen_after = harness.screen();
    assert!(
        screen_after.contains("battery_mA at +") && screen_after.contains("in view"),
        "{screen_after}"
    );
    // A click on a group's label closes it.
    let (row, _) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("▾ watch"))
        .expect("watch row");
    harness.mouse(MouseEventKind::Down(MouseButton::Left), 2, row as u16);
    assert!(harness.screen().contains("▸ watch"));
}

#[test]
fn colours_follow_the_terminal() {
    let mut harness = Harness::demo(80, 24);
    for c in harness.buffer().content() {
        for color in [c.fg, c.bg] {
            assert!(
                !matches!(color, Color::Indexed(_) | Color::Rgb(..)),
                "16-colour mode used {color:?}"
            );
        }
    }
    harness.app.theme = Theme::new(ColorMode::None);
    let buffer = harness.buffer();
    let mut reversed = 0;
    for c in buffer.content() {
        assert_eq!(
            (c.fg, c.bg),
            (Color::Reset, Color::Reset),
            "NO_COLOR drew a colour"
        );
        if c.modifier.contains(Modifier::REVERSED) {
            reversed += 1;
        }
    }
    assert!(
        reversed > 0,
        "without colour, slices are drawn in reverse video"
    );
    harness.app.theme = Theme::new(ColorMode::Indexed256);
    assert!(harness
        .buffer()
        .content()
        .iter()
        .any(|c| matches!(c.bg, Color::Indexed(_))));
}

#[test]
fn every_pane_draws_at_any_size_without_panicking() {
    let mut harness = Harness::demo(80, 24);
    // A selection with details and a query result, so every part of every pane has content.
    harness.key(KeyCode::Char('/'));
    harness.keys("post frame");
    harness.key(KeyCode::Enter);
    harness.key(KeyCode::Char('4'));
    harness.keys("select * from slice");
    harness.key(KeyCode::Enter);
    harness.key(KeyCode::Esc);
    for pane in ['1', '2', '3', '4', 't', '?'] {
        harness.key(KeyCode::Char(pane));
        for (w, h) in [
            (1, 1),
            (2, 3),
            (10, 4),
            (20, 6),
            (40, 10),
            (79, 23),
            (81, 25),
            (300, 90),
        ] {
            harness.send(AppEvent::Input(Event::Resize(w, h)));
            let screen = harness.screen();
            assert_eq!(screen.lines().count(), h as usize);
        }
    }
}

#[test]
fn a_storm_of_keys_never_panics() {
    let keys: Vec<KeyCode> = "wsadhjklWSAD+-0f[],.nNcCg G/\u{0}1234t?"
        .chars()
        .map(|c| {
            if c == '\u{0}' {
                KeyCode::Esc
            } else {
                KeyCode::Char(c)
            }
        })
        .chain([
            KeyCode::Enter,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Backspace,
        ])
        .collect();
    for (w, h) in [(80, 24), (160, 48)] {
        let mut harness = Harness::demo(w, h);
        // A fixed pseudo-random sequence: reproducible, and wide enough to reach odd states.
        let mut seed: u64 = 0x5eed_u64 + u64::from(w);
        for step in 0..3000u32 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let code = keys[(seed >> 33) as usize % keys.len()];
            if code == KeyCode::Char('q') {
                continue;
            }
            harness.key(code);
            if step.is_multiple_of(50) {
                let _ = harness.screen();
            }
            if (seed >> 20).is_multiple_of(97) {
                harness.mouse(
                    MouseEventKind::Down(MouseButton::Left),
                    (seed % u64::from(w)) as u16,
                    ((seed >> 8) % u64::from(h)) as u16,
                );
            }
            if (seed >> 24).is_multiple_of(89) {
                harness.mouse(
                    MouseEventKind::ScrollDown,
                    (seed % u64::from(w)) as u16,
                    ((seed >> 8) % u64::from(h)) as u16,
                );
            }
        }
        let _ = harness.screen();
        assert!(!harness.app.quit);
    }
}

#[test]
fn details_name_the_file_each_slice_came_from() {
    // app.json and system.json both write machine "phone", and both the thread "main".
    let mut harness = Harness::fixture("j_shared_machine.zip", 160, 48);
    for (slice, file) in [
        ("gc pause", "system.json"),
        ("draw frame", "app.json"),
        ("layout", "app.json"),
        ("binder call", "system.json"),
        ("decode jpeg", "app.json"),
    ] {
        harness.key(KeyCode::Char('/'));
        harness.keys(slice);
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        let details = format!("machine phone file {file}");
        assert!(
            screen.contains(slice) && screen.contains(&details),
            "{slice} should come from {file}:\n{screen}"
        );
        if slice == "gc pause" {
            snapshot!("fixture_j_shared_machine_selected_160x48", screen);
        }
    }
    // A single trace's slices come from the input itself.
    let mut harness = Harness::fixture("a_track_events.pftrace", 160, 48);
    harness.key(KeyCode::Char('/'));
    harness.keys("frame");
    harness.key(KeyCode::Enter);
    let screen = harness.screen();
    assert!(
        screen.contains("file a_track_events.pftrace"),
        "the input names the file:\n{screen}"
    );
}

#[test]
fn thread_states_have_a_track_above_the_threads_slices_and_details_of_their_own() {
    let mut harness = Harness::fixture("c_sched.pftrace", 160, 48);
    let screen = harness.screen();
    let lines: Vec<&str> = screen.lines().collect();
    let first_row = lines
        .iter()
        .position(|l| l.starts_with("▾ "))
        .expect("a machine row");
    let state_row = lines
        .iter()
        .position(|l| l.contains("GameThread 101 state"))
        .expect("GameThread's state track");
    // Its states read as what they mean, not as kernel codes.
    assert!(lines[state_row].contains("Running"), "{screen}");
    harness.keys(&"j".repeat(state_row - first_row));
    harness.key(KeyCode::Enter);
    let screen = harness.screen();
    let details = screen.split("─\n").last().expect("the details panel");
    assert!(
        details.contains("thread GameThread 101") && details.contains(" ts "),
        "{screen}"
    );
    assert!(
        ["Running", "Runnable", "Sleeping"]
            .iter()
            .any(|s| details.contains(s)),
        "{screen}"
    );
}

/// A PyTorch profiler (Kineto) trace: CPU threads first, then the GPU with one track per
/// stream, named as Kineto names them; a selected kernel shows its launch flow (the launch
/// highlighted, a connector dropping to the kernel), and Enter follows it back to the
/// `cudaLaunchKernel` that queued it.
#[test]
fn kineto_timeline_shows_cpu_then_gpu_streams_and_follows_a_kernel_to_its_launch() {
    for (w, h) in SIZES {
        let mut harness = Harness::fixture("kineto_h100_trimmed.json", w, h);
        let screen = harness.screen();
        let at = |what: &str| {
            screen
                .find(what)
                .unwrap_or_else(|| panic!("{what}: {screen}"))
        };
        let (cpu, gpu, stream) = (at("thread 5617"), at("GPU 0"), at("stream 7"));
        assert!(cpu < gpu && gpu < stream, "{screen}");
        snapshot!(format!("kineto_timeline_{w}x{h}"), screen);
        // A kernel, found by name, fitted to the view.
        harness.key(KeyCode::Char('/'));
        harness.keys("CatArrayBatchedCopy");
        harness.key(KeyCode::Enter);
        // Fitted, then zoomed out until the launch is in view too.
        harness.keys("fsss");
        let screen = harness.screen();
        // The connector drops from the launch to the kernel; the details say where from.
        assert!(screen.contains('▼'), "{screen}");
        if h >= 48 {
            assert!(screen.contains("← cudaLaunchKernel"), "{screen}");
        }
        snapshot!(format!("kineto_timeline_kernel_{w}x{h}"), screen);
        // Enter follows the flow back to the launch.
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(
            screen.contains(" cudaLaunchKernel  category cuda_runtime"),
            "{screen}"
        );
        snapshot!(format!("kineto_timeline_launch_{w}x{h}"), screen);
    }
}

#[test]
fn binder_transaction_shows_both_ends_and_marks_its_reply() {
    let mut harness = Harness::fixture("kernel/binder_qoe.pftrace", 160, 48);
    harness.key(KeyCode::Char('/'));
    harness.keys("binder transaction");
    harness.key(KeyCode::Enter);
    let screen = harness.screen();
    let details = screen.split("─\n").last().expect("the details panel");
    // Who called whom, how long the call took and how long the server took to reply.
    assert!(
        details.contains(" binder ") && details.contains(" → ") && details.contains(" reply "),
        "{screen}"
    );
    assert!(details.contains("binder reply"), "{screen}");
    snapshot!("binder_transaction_selected_160x48", screen);
    // Enter follows the flow to the reply, whose details name the same two ends.
    harness.key(KeyCode::Enter);
    let screen = harness.screen();
    let details = screen.split("─\n").last().expect("the details panel");
    assert!(details.contains(" binder reply"), "{screen}");
    assert!(details.contains(" → "), "{screen}");
    snapshot!("binder_reply_followed_160x48", screen);
}

#[test]
fn cpu_profile_is_a_top_down_tree_that_opens_closes_and_searches() {
    for (w, h) in SIZES {
        let mut harness = Harness::fixture("lighthouse_cpu_profile.json", w, h);
        // The tab is there because the trace has samples.
        assert!(harness.screen().contains("5 CPU profile"));
        harness.key(KeyCode::Char('5'));
        let screen = harness.screen();
        assert!(
            screen.contains("whole trace") && screen.contains("4,994 samples"),
            "{screen}"
        );
        assert!(screen.contains("(root)"), "{screen}");
        snapshot!(format!("lighthouse_cpu_profile_{w}x{h}"), screen);
        // One thread, then a search that opens the callers of what it finds.
        harness.key(KeyCode::Char(']'));
        harness.key(KeyCode::Char('C'));
        harness.key(KeyCode::Char('/'));
        harness.keys("fetch");
        harness.key(KeyCode::Enter);
        let screen = harness.screen();
        assert!(
            screen.contains("thread ") && screen.contains("/fetch"),
            "{screen}"
        );
        snapshot!(format!("lighthouse_cpu_profile_search_{w}x{h}"), screen);
    }
}

#[test]
fn a_trace_without_samples_has_no_profile_tab_but_5_still_says_why() {
    let mut harness = Harness::demo(80, 24);
    assert!(!harness.screen().contains("CPU profile"));
    harness.key(KeyCode::Char('5'));
    let screen = harness.screen();
    assert!(screen.contains("no CPU profile in this trace"), "{screen}");
}

/// The first start of a slice named `name` in the harness's current database.
fn first_start(h: &Harness, name: &str) -> i64 {
    let db = h.app.db.as_ref().expect("a database");
    let conn = sextant::db::open_read_only(&db.path).expect("opens");
    conn.query_row("SELECT min(ts) FROM slice WHERE name = ?1", [name], |r| {
        r.get(0)
    })
    .expect("a slice")
}

#[test]
fn clock_editor_previews_applies_and_undoes_an_offset() {
    let mut h = Harness::demo(120, 40);
    let before = first_start(&h, "upload photo");
    h.key(KeyCode::Char('2'));
    // The strip points at the manifest's files; the JSON log is the last.
    h.key(KeyCode::Left);
    let screen = h.screen();
    assert!(screen.contains("edit ◀ app_log.json ▶"), "{screen}");
    h.key(KeyCode::Char('e'));
    let screen = h.screen();
    assert!(
        screen.contains("Edit app_log.json") && screen.contains("PIN"),
        "{screen}"
    );
    snapshot!("clock_editor_form_120x40", screen);
    // To the offset (the source clock field is hidden for PIN); 2 s more than the demo's.
    for _ in 0..4 {
        h.key(KeyCode::Down);
    }
    let form = h.app.clocks.edit.form.clone().expect("the form");
    let offset: i64 = form.offset.parse().expect("an offset in ns");
    for _ in 0..form.offset.len() {
        h.key(KeyCode::Backspace);
    }
    h.keys(&(offset + 2_000_000_000).to_string());
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(
        screen.contains("Preview")
            && screen.contains("moves +2 s")
            && screen.contains("does not move"),
        "{screen}"
    );
    snapshot!("clock_editor_preview_120x40", screen);
    // Nothing moved yet; Enter applies.
    assert_eq!(first_start(&h, "upload photo"), before);
    h.key(KeyCode::Enter);
    assert_eq!(first_start(&h, "upload photo") - before, 2_000_000_000);
    assert!(h.screen().contains("applied:"), "{}", h.screen());
    // Undo puts it back.
    h.key(KeyCode::Char('u'));
    assert_eq!(first_start(&h, "upload photo"), before);
    // Write the result as a new archive.
    h.key(KeyCode::Char('w'));
    assert!(h.screen().contains("wrote written.zip"), "{}", h.screen());
}

#[test]
fn marking_two_slices_of_two_files_aligns_their_starts() {
    let mut h = Harness::demo(120, 40);
    h.key(KeyCode::Char('/'));
    h.keys("getCameraCharacteristics");
    h.key(KeyCode::Enter);
    h.key(KeyCode::Char('M'));
    assert!(
        h.screen().contains("marked getCameraCharacteristics"),
        "{}",
        h.screen()
    );
    let target = first_start(&h, "getCameraCharacteristics");
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('/'));
    h.keys("upload photo");
    h.key(KeyCode::Enter);
    let upload = match &h.app.timeline.details {
        sextant::tui::timeline::DetailsView::Ready(d) => d.ts,
        other => panic!("no details: {other:?}"),
    };
    h.key(KeyCode::Char('M'));
    // The editor opens on the log with the offset that makes the two start together.
    let screen = h.screen();
    assert!(
        screen.contains("Edit app_log.json") && screen.contains("Preview"),
        "{screen}"
    );
    snapshot!("clock_editor_align_120x40", screen);
    h.key(KeyCode::Enter);
    let db = h.app.db.as_ref().expect("db");
    let conn = sextant::db::open_read_only(&db.path).expect("opens");
    let moved: i64 = conn
        .query_row(
            "SELECT ts FROM slice WHERE name = 'upload photo' ORDER BY abs(ts - ?1) LIMIT 1",
            [target],
            |r| r.get(0),
        )
        .expect("slice");
    assert_eq!(moved, target, "upload photo was at {upload}");
}

#[test]
fn android_frames_are_marked_when_janky_and_counters_sit_under_their_owner() {
    let harness = Harness::fixture("android/android_probes.pftrace", 160, 48);
    let screen = harness.screen();
    // The app shows its Expected and Actual Timeline tracks; the janky frame (token 101)
    // is marked with a `!` that reads without colour.
    assert!(screen.contains("Expected Timeline"), "{screen}");
    assert!(screen.contains("Actual Timeline"), "{screen}");
    assert!(screen.contains("! 101"), "{screen}");
    assert!(screen.contains("mem.rss (bytes)"), "{screen}");
    assert!(screen.contains("MemFree (bytes)"), "{screen}");
    let buffer = harness.buffer();
    let alert = buffer
        .content()
        .iter()
        .filter(|c| c.bg == Color::Red && c.modifier.contains(Modifier::BOLD))
        .count();
    assert!(alert > 0, "the janky frame is drawn in the alert colour");
    snapshot!("android_timeline_160x48", screen);
}

#[test]
fn android_log_pane_filters_and_jumps_to_the_timeline() {
    let mut harness = Harness::fixture("android/android_probes.pftrace", 120, 20);
    harness.key(KeyCode::Char('6'));
    let screen = harness.screen();
    assert!(screen.contains("5 of 5 lines"), "{screen}");
    assert!(screen.contains("Davey! duration=26ms"), "{screen}");
    snapshot!("android_log_pane_120x20", screen);
    // Warnings and worse only: W, E.
    for _ in 0..3 {
        harness.key(KeyCode::Char('p'));
    }
    let screen = harness.screen();
    assert!(screen.contains("2 of 5 lines · priority ≥ W"), "{screen}");
    assert!(!screen.contains("Davey"), "{screen}");
    // A tag filter on top.
    harness.key(KeyCode::Char('P'));
    harness.keys("/surface");
    harness.key(KeyCode::Enter);
    let screen = harness.screen();
    assert!(screen.contains("1 of 5 lines"), "{screen}");
    snapshot!("android_log_pane_filtered_120x20", screen);
    // Enter puts the timeline on the line's time.
    harness.key(KeyCode::Enter);
    assert_eq!(harness.app.pane, Pane::Timeline);
    let (start, span) = (
        harness.app.timeline.view_start,
        harness.app.timeline.view_span,
    );
    assert!(start <= 1_047_000_000 && 1_047_000_000 <= start + span);
}

#[test]
fn a_selected_frame_shows_its_jank_type_and_tokens() {
    let mut harness = Harness::fixture("android/android_probes.pftrace", 160, 48);
    let screen = harness.screen();
    let row = screen
        .lines()
        .skip(3)
        .position(|l| l.contains("! 101"))
        .expect("the janky frame's row");
    for _ in 0..row {
        harness.key(KeyCode::Char('j'));
    }
    harness.key(KeyCode::Enter);
    let screen = harness.screen();
    for text in [
        "Jank type",
        "App Deadline Missed",
        "Surface frame token",
        "Display frame token",
        "1101",
        "Self Jank",
    ] {
        assert!(screen.contains(text), "{text}: {screen}");
    }
    snapshot!("android_frame_details_160x48", screen);
}

/// Esc leaves Help and the trace_time chooser for the pane they were opened from (it used
/// to do nothing, so the next keys typed into Help; `?` again closes Help too).
#[test]
fn esc_leaves_help_and_the_chooser_for_the_pane_they_came_from() {
    let mut harness = Harness::demo(80, 24);
    harness.key(KeyCode::Char('3'));
    harness.key(KeyCode::Char('?'));
    assert_eq!(harness.app.pane, Pane::Help);
    harness.key(KeyCode::Esc);
    assert_eq!(harness.app.pane, Pane::Stats);
    harness.key(KeyCode::Char('?'));
    harness.key(KeyCode::Char('?'));
    assert_eq!(harness.app.pane, Pane::Stats);
    harness.key(KeyCode::Char('1'));
    harness.key(KeyCode::Char('t'));
    assert_eq!(harness.app.pane, Pane::TraceTime);
    // Help from the chooser, then back: Esc returns to the timeline, not the chooser loop.
    harness.key(KeyCode::Char('?'));
    harness.key(KeyCode::Esc);
    assert_eq!(harness.app.pane, Pane::Timeline);
    harness.key(KeyCode::Char('t'));
    harness.key(KeyCode::Esc);
    assert_eq!(harness.app.pane, Pane::Timeline);
    // The timeline's own Esc still clears its selection.
    harness.key(KeyCode::Char('/'));
    harness.keys("post frame");
    harness.key(KeyCode::Enter);
    assert!(harness.app.timeline.selection.is_some());
    harness.key(KeyCode::Esc);
    assert!(harness.app.timeline.selection.is_none());
    assert_eq!(harness.app.pane, Pane::Timeline);
}

/// A search (or Enter, `]`, a SQL row) that selects a slice on a track low on the screen
/// scrolls so the track stays in view above the details panel the selection opens (it was
/// scrolled for the rows before the panel, so the selected track sat behind it).
#[test]
fn a_found_slice_stays_in_view_above_its_details() {
    for (w, h) in [(80, 16), (80, 24), (160, 48)] {
        let mut harness = Harness::fixture("kineto_h100_trimmed.json", w, h);
        harness.key(KeyCode::Char('/'));
        harness.keys("CatArrayBatchedCopy");
        harness.key(KeyCode::Enter);
        let tl = &harness.app.timeline;
        assert!(tl.selection.is_some());
        let area = ui::body_area(Rect::new(0, 0, w, h));
        let shown = sextant::tui::timeline::geometry(area, tl).lanes.height as usize;
        assert!(
            tl.cursor >= tl.scroll && tl.cursor < tl.scroll + shown,
            "{w}x{h}: cursor {} scroll {} rows {shown}\n{}",
            tl.cursor,
            tl.scroll,
            harness.screen()
        );
        let screen = harness.screen();
        assert!(screen.contains("stream 7"), "{screen}");
    }
}

/// The stats of a single trace name it by what was opened, also when it is the unnamed
/// trace inside a gzip file (it read "machine 0 · : TraceStats…", or "file 0").
#[test]
fn stats_name_a_lone_or_gzipped_trace_by_the_input() {
    let mut harness = Harness::fixture("i3_concat.pftrace.gz", 160, 48);
    harness.key(KeyCode::Char('3'));
    let screen = harness.screen();
    assert!(screen.contains("host · i3_concat.pftrace.gz"), "{screen}");
    assert!(
        !screen.contains("· :") && !screen.contains("file 0"),
        "{screen}"
    );
}

/// A ClockSnapshot the clock tracker refuses is counted in `invalid_clock_snapshots`; the
/// Clock graph pane says which file's snapshot it was and why, in the reference's words.
#[test]
fn the_clock_graph_says_why_a_snapshot_was_refused() {
    let bytes = common::refused_snapshot_trace();
    let files = sextant::source::open_bytes("refused.pftrace", bytes).expect("opens");
    let mut harness = Harness::import("refused.pftrace", files, 160, 48);
    harness.key(KeyCode::Char('2'));
    let screen = harness.screen();
    assert!(
        screen.contains("✗ snapshot refused: Clock sync error: the trace clock (id=6) is"),
        "{screen}"
    );
    assert!(screen.contains("500 not >= 1000."), "{screen}");
    // The lone trace is named after the input, as in the Stats pane.
    assert!(
        screen.contains("✗ refused.pftrace  unconverted"),
        "{screen}"
    );
    assert!(
        screen.contains("its clock snapshots relate clocks, but none of its timestamps"),
        "{screen}"
    );
}

/// A file the manifest puts on no machine lands on the host, and every pane calls it so, as
/// the clock graph and `sextant merge` do ("host"); the timeline and the Stats pane said
/// "machine 0", and the Stats pane "machine <row id>" (`machine 1` here), for the same one.
/// The Stats pane also tells each file's events once, under that file's own machine.
#[test]
fn the_unnamed_host_is_called_host_in_every_pane() {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    let manifest = r#"{"perfetto_manifest": {"version": 1, "files": [
        {"path": "c_sched.pftrace", "machine": {"name": "phone"}}]}}"#;
    for (name, bytes) in [
        (
            "c_sched.pftrace",
            std::fs::read(data("c_sched.pftrace")).expect("fixture"),
        ),
        (
            "g_chrome.json",
            std::fs::read(data("g_chrome.json")).expect("fixture"),
        ),
        ("perfetto_manifest.json", manifest.as_bytes().to_vec()),
    ] {
        w.start_file(name, opts).expect("zip");
        w.write_all(&bytes).expect("zip");
    }
    let zip = w.finish().expect("zip").into_inner();
    let files = sextant::source::open_bytes("host.zip", zip).expect("opens");
    let mut harness = Harness::import("host.zip", files, 160, 48);
    let screen = harness.screen();
    assert!(
        screen.contains("▾ host") || screen.contains("▸ host"),
        "{screen}"
    );
    assert!(!screen.contains("machine 0"), "{screen}");
    harness.key(KeyCode::Char('3'));
    let screen = harness.screen();
    assert!(screen.contains("▸ host · g_chrome.json"), "{screen}");
    assert!(screen.contains("▸ phone · c_sched.pftrace"), "{screen}");
    assert!(!screen.contains("machine 1"), "{screen}");
    assert_eq!(screen.matches("events read").count(), 2, "{screen}");
}

/// A member cut short loses data without dropping a placed event: the status bar still
/// points at the Stats pane (it said only "N events from 2 files"), and at any width its
/// text stops short of the key hint (it ran into it: "in 0.4 sq quit").
#[test]
fn the_status_bar_points_at_losses_a_parser_counted() {
    use std::io::Write;
    let sched = std::fs::read(data("c_sched.pftrace")).expect("fixture");
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, bytes) in [
        ("cut.pftrace", &sched[..sched.len() / 2 + 3]),
        (
            "g_chrome.json",
            &std::fs::read(data("g_chrome.json")).expect("fixture")[..],
        ),
    ] {
        w.start_file(name, opts).expect("zip");
        w.write_all(bytes).expect("zip");
    }
    let zip = w.finish().expect("zip").into_inner();
    let files = sextant::source::open_bytes("cut.zip", zip).expect("opens");
    let mut harness = Harness::import("cut.zip", files, 160, 48);
    let status = |h: &Harness| h.screen().lines().last().unwrap_or_default().to_string();
    assert!(
        status(&harness).contains(" loss, see 3") || status(&harness).contains(" losses, see 3"),
        "{}",
        status(&harness)
    );
    harness.send(AppEvent::Input(Event::Resize(40, 12)));
    let line = status(&harness);
    assert!(line.ends_with("… q quit · ? help"), "{line}");
}

//! Timeline frame benchmark: the figures the README quotes.
//!
//!     cargo run --release --example frame_bench -- [EVENTS] [--write-trace PATH]
//!
//! With `--write-trace PATH` it only writes the trace there (to try the UI on it) and exits.
//!
//! Generates the synthetic trace of `import_bench` (100 threads of nested slices and 100
//! counter tracks: 200 tracks; the default 12.5 M events make 5 M slices and 2.5 M counter
//! samples), then measures, on a 200x60 screen drawn into ratatui's TestBackend:
//! - the first frame (app state + draw, before any import work);
//! - timeline frames while the import runs on its thread (as rows land);
//! - timeline frames at full zoom-out and in a 10 µs window once imported;
//! - the trace_time switch (Session::replace on the importer thread), and the slowest key
//!   handled and drawn while it runs.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::Terminal;

use sextant::tui::app::{App, Effect, ImportStatus, Pane};
use sextant::tui::event::AppEvent;
use sextant::tui::importer::{ImportEvent, Importer, Input};
use sextant::tui::query::QueryState;
use sextant::tui::theme::{ColorMode, Theme};
use sextant::tui::ui;
use sextant::tui::worker::{Request, Worker};

// Shared with import_bench; this benchmark needs the variant with a clock snapshot.
#[allow(dead_code)]
#[path = "support/bench_trace.rs"]
mod bench_trace;

const WIDTH: u16 = 200;
const HEIGHT: u16 = 60;

struct Stats(Vec<Duration>);

impl Stats {
    fn report(&mut self, what: &str) {
        if self.0.is_empty() {
            println!("{what}: no frames");
            return;
        }
        self.0.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{what}: {} frames, median {:.2} ms, worst {:.2} ms",
            self.0.len(),
            ms(self.0[self.0.len() / 2]),
            ms(self.0[self.0.len() - 1])
        );
    }
}

fn draw(terminal: &mut Terminal<TestBackend>, app: &App) -> Duration {
    let started = Instant::now();
    terminal
        .draw(|f| ui::draw(f, app))
        .expect("drawing into the test backend");
    started.elapsed()
}

fn key(c: char) -> AppEvent {
    AppEvent::Input(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let events: u64 = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(12_500_000);
    let write_only = args
        .iter()
        .position(|a| a == "--write-trace")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let dir = std::env::temp_dir().join(format!("sextant-frame-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let trace: PathBuf = write_only
        .clone()
        .unwrap_or_else(|| dir.join("bench.pftrace"));
    let started = Instant::now();
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&trace)?);
        bench_trace::write_trace(
            &mut out,
            events,
            Some((1_000_000, 1_700_000_000_000_000_000)),
        )?;
        std::io::Write::flush(&mut out)?;
    }
    println!(
        "generated {events} events ({:.0} MB) in {:.1} s",
        std::fs::metadata(&trace)?.len() as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    if write_only.is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }

    // First frame: state and a full draw, before the importer exists.
    let started = Instant::now();
    let mut app = App::new(
        "bench.pftrace".into(),
        Theme::new(ColorMode::Indexed256),
        Rect::new(0, 0, WIDTH, HEIGHT),
        QueryState::new(None),
        started,
    );
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT))?;
    draw(&mut terminal, &app);
    println!(
        "first frame: {:.2} ms after start",
        started.elapsed().as_secs_f64() * 1000.0
    );

    let (tx, rx) = mpsc::channel();
    let importer = Importer::spawn(Input::Paths(vec![trace.clone()]), &dir, tx.clone())?;
    app.set_pending_db(importer.first_db.clone());
    let timeline_worker = Worker::spawn("timeline-loader", tx.clone())?;
    let lookup = Worker::spawn("lookup", tx.clone())?;
    let apply = |effects: Vec<Effect>| -> Option<u32> {
        let mut replace = None;
        for e in effects {
            match e {
                Effect::Load(db, Request::Timeline) => timeline_worker.send(&db, Request::Timeline),
                Effect::Load(db, r) => lookup.send(&db, r),
                Effect::Replace(node) => replace = Some(node),
                Effect::RunQuery { .. } | Effect::InterruptQuery => {}
            }
        }
        replace
    };

    // While importing: draw after every event that changes the timeline.
    let import_started = Instant::now();
    let mut during = Stats(Vec::new());
    let mut loads = 0;
    let mut load_started = Instant::now();
    let mut complete = false;
    while !complete {
        let event = rx.recv()?;
        // Only an answer for the database now current counts (not a late partial one).
        let current = app.db.as_ref().map(|d| d.generation);
        let is_timeline = matches!(
            event,
            AppEvent::Data {
                answer: sextant::tui::worker::Answer::Timeline(_),
                generation,
            } if Some(generation) == current
        );
        let effects = app.handle(event, Instant::now());
        if effects
            .iter()
            .any(|e| matches!(e, Effect::Load(_, Request::Timeline)))
        {
            load_started = Instant::now();
        }
        apply(effects);
        if is_timeline {
            loads += 1;
            if app.timeline.data.is_some() && matches!(app.import, ImportStatus::Running(_)) {
                // Frames on the data landed so far, while the importer keeps writing.
                for _ in 0..20 {
                    during.0.push(draw(&mut terminal, &app));
                }
            }
            if matches!(app.import, ImportStatus::Done(_)) && app.timeline.data.is_some() {
                complete = true;
                println!(
                    "timeline index of the whole trace loaded in {:.2} s",
                    load_started.elapsed().as_secs_f64()
                );
            }
        }
        if let ImportStatus::Failed(f) = &app.import {
            return Err(format!("import failed: {}", f.message).into());
        }
    }
    if let ImportStatus::Done(Some(s)) = &app.import {
        println!(
            "imported {} slices, {} counter samples in {:.1} s; {loads} timeline loads on the way",
            s.slices,
            s.counters,
            import_started.elapsed().as_secs_f64()
        );
    }
    during.report("timeline frames while importing (200x60)");

    let mut zoomed_out = Stats(Vec::new());
    for i in 0..200 {
        // Alternate pans so every frame differs.
        let _ = app.handle(key(if i % 2 == 0 { 'd' } else { 'a' }), Instant::now());
        let _ = app.handle(key('0'), Instant::now());
        zoomed_out.0.push(draw(&mut terminal, &app));
    }
    zoomed_out.report("timeline frames at full zoom-out (200x60)");
    if std::env::var_os("BENCH_SHOW").is_some() {
        let buffer = terminal.backend().buffer().clone();
        for y in 0..HEIGHT {
            let line: String = (0..WIDTH)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect();
            eprintln!("{}", line.trim_end());
        }
    }

    let data = app.timeline.data.clone().ok_or("no timeline data")?;
    let mid = data.start + (data.end - data.start) / 2;
    let mut narrow = Stats(Vec::new());
    for i in 0..200 {
        app.timeline.view_span = 10_000;
        app.timeline.view_start = mid + i * 2_000;
        narrow.0.push(draw(&mut terminal, &app));
    }
    narrow.report("timeline frames in a 10 µs window (200x60)");

    // trace_time switch: choose a clock that is not the current one.
    let _ = app.handle(key('t'), Instant::now());
    assert_eq!(app.pane, Pane::TraceTime);
    let target = match &app.chooser.candidates {
        Some(Ok(c)) => c
            .iter()
            .position(|c| !c.current)
            .ok_or("only one candidate")?,
        _ => return Err("no trace_time candidates".into()),
    };
    while app.chooser.cursor < target {
        let _ = app.handle(
            AppEvent::Input(Event::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE))),
            Instant::now(),
        );
    }
    while app.chooser.cursor > target {
        let _ = app.handle(
            AppEvent::Input(Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE))),
            Instant::now(),
        );
    }
    let effects = app.handle(
        AppEvent::Input(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        ))),
        Instant::now(),
    );
    let node = apply(effects).ok_or("Enter did not ask for a switch")?;
    let label = app.chooser.switching.clone().unwrap_or_default();
    let switch_started = Instant::now();
    importer.replace(node);
    let _ = app.handle(key('1'), Instant::now());
    let mut keys = Stats(Vec::new());
    let mut replaced_in = None;
    let mut reloaded_in = None;
    while reloaded_in.is_none() {
        // A key every 50 ms while the switch runs: handled and drawn at once?
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(event) => {
                let is_timeline = matches!(
                    event,
                    AppEvent::Data {
                        answer: sextant::tui::worker::Answer::Timeline(_),
                        ..
                    }
                );
                if matches!(event, AppEvent::Import(ImportEvent::Replaced { .. })) {
                    replaced_in = Some(switch_started.elapsed());
                }
                apply(app.handle(event, Instant::now()));
                if is_timeline && replaced_in.is_some() {
                    reloaded_in = Some(switch_started.elapsed());
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => return Err(e.into()),
        }
        if replaced_in.is_none() {
            let t = Instant::now();
            let _ = app.handle(
                key(if keys.0.len().is_multiple_of(2) {
                    'w'
                } else {
                    's'
                }),
                Instant::now(),
            );
            draw(&mut terminal, &app);
            keys.0.push(t.elapsed());
        }
    }
    let secs = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
    println!(
        "trace_time switch to {label}: events re-placed and written in {:.2} s; timeline reloaded at {:.2} s",
        secs(replaced_in),
        secs(reloaded_in)
    );
    keys.report("keys handled and drawn during the switch");
    drop(importer);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

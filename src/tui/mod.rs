//! The terminal explorer. The event loop owns the terminal; an input thread, the importer
//! thread, two data workers and the query runner all post [`event::AppEvent`]s into one
//! channel. The loop applies each to the [`app::App`] state, carries out the effects, and
//! redraws — only when something happened, so an idle session sends nothing.

pub mod aggregates;
pub mod app;
pub mod chooser;
pub mod clock_editor;
mod clocks;
pub mod event;
pub mod format;
pub mod help;
pub mod importer;
pub mod input;
pub mod logs;
pub mod profile;
pub mod query;
pub mod sanitize;
pub mod stats;
pub mod terminal;
pub mod theme;
pub mod timeline;
pub mod ui;
pub mod worker;
pub mod wrap;

use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use self::app::{App, Effect};
use self::event::AppEvent;
use self::importer::{Importer, Input};
use self::query::{QueryRunner, QueryState};
use self::theme::{ColorMode, Theme};
use self::worker::{Request, Worker};
use crate::cleanup::TempPath;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    #[error("cannot create the session's directory in {}: {error}", dir.display())]
    SessionDir {
        dir: std::path::PathBuf,
        error: std::io::Error,
    },
}

/// The threads the effects go to. Dropping them stops and joins them all.
struct Threads {
    timeline: Worker,
    lookup: Worker,
    query: QueryRunner,
    importer: Importer,
}

impl Threads {
    fn apply(&self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Load(db, Request::Timeline) => self.timeline.send(&db, Request::Timeline),
                Effect::Load(db, request) => self.lookup.send(&db, request),
                Effect::RunQuery { db, id, sql } => self.query.run(&db, id, sql),
                Effect::InterruptQuery => self.query.interrupt(),
                Effect::Replace(node) => self.importer.replace(node),
                Effect::Edit(command) => self.importer.command(match command {
                    clock_editor::EditCommand::Preview(m) => importer::Command::Preview(m),
                    clock_editor::EditCommand::Apply(m) => importer::Command::Apply(m),
                    clock_editor::EditCommand::Write => importer::Command::Write,
                    clock_editor::EditCommand::WriteManifest => importer::Command::WriteManifest,
                }),
            }
        }
    }

    /// Cancels what each thread is doing and waits for all of them: once this returns, no
    /// thread has a session database open. All are told first, so they wind down together.
    fn join(&mut self) {
        self.importer.stop();
        self.query.stop();
        self.timeline.stop();
        self.lookup.stop();
        self.importer.join();
        self.query.join();
        self.timeline.join();
        self.lookup.join();
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.join();
    }
}

fn spawn_input_thread(events: Sender<AppEvent>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("input".into())
        .spawn(move || {
            while let Ok(e) = ratatui::crossterm::event::read() {
                if events.send(AppEvent::Input(e)).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}

/// Redraws caused only by progress are spaced this far apart (input redraws at once).
const PROGRESS_FRAME: Duration = Duration::from_millis(100);
/// While something runs, its elapsed time is refreshed this often.
const TICK: Duration = Duration::from_millis(250);

/// Runs the explorer on `input` until the user quits, a signal asks it to end (SIGINT,
/// SIGTERM, SIGHUP: see [`crate::shutdown`]) or a thread dies. However it ends, the
/// terminal is restored, the threads are cancelled and joined, and the session's databases
/// are removed before this returns; panic messages kept meanwhile are then printed.
pub fn run(input: Input) -> Result<(), TuiError> {
    let dir = TempPath::session_dir().map_err(|error| TuiError::SessionDir {
        dir: std::env::temp_dir(),
        error,
    })?;
    let (tx, rx) = mpsc::channel();
    let requests = tx.clone();
    let listening =
        crate::shutdown::listen(move |reason| requests.send(AppEvent::Shutdown(reason)).is_ok());
    let result = session(input, dir.path(), tx, &rx);
    // Every thread that wrote or read the directory is joined by now.
    drop(dir);
    drop(listening);
    crate::shutdown::print_panics(&crate::shutdown::take_panics());
    result
}

/// The session in the terminal; returns with the terminal restored and the threads joined.
fn session(
    input: Input,
    dir: &Path,
    tx: Sender<AppEvent>,
    rx: &Receiver<AppEvent>,
) -> Result<(), TuiError> {
    let mut guard = terminal::TerminalGuard::enter()?;
    let size = guard.size()?;
    let now = Instant::now();
    // The embedded demo says what it is and how to open one's own trace.
    let title = match &input {
        Input::Bytes { name, .. } if name == crate::demo::NAME => {
            "demo (sextant TRACE opens yours)".to_string()
        }
        _ => input.display_name(),
    };
    let mut app = App::new(
        title,
        Theme::new(ColorMode::detect()),
        Rect::new(0, 0, size.width, size.height),
        QueryState::new(query::history_path()),
        now,
    );
    // The first frame, before any import work.
    guard.draw(|f| ui::draw(f, &app))?;

    let importer = Importer::spawn(input, dir, tx.clone())?;
    app.set_pending_db(importer.first_db.clone());
    let mut threads = Threads {
        timeline: Worker::spawn("timeline-loader", tx.clone())?,
        lookup: Worker::spawn("lookup", tx.clone())?,
        query: QueryRunner::spawn(tx.clone())?,
        importer,
    };
    spawn_input_thread(tx)?;
    let result = event_loop(&mut guard, &mut app, &threads, rx);
    // The shell gets its terminal back first; then the threads wind down.
    drop(guard);
    threads.join();
    result
}

fn event_loop(
    guard: &mut terminal::TerminalGuard,
    app: &mut App,
    threads: &Threads,
    rx: &Receiver<AppEvent>,
) -> Result<(), TuiError> {
    let mut last_draw = Instant::now();
    let mut dirty = false;
    let ui_fault = crate::shutdown::fault("ui-panic");
    loop {
        let wait = if dirty {
            PROGRESS_FRAME.saturating_sub(last_draw.elapsed())
        } else if app.busy() {
            TICK
        } else {
            Duration::from_secs(3600)
        };
        let mut urgent = false;
        match rx.recv_timeout(wait) {
            Ok(first) => {
                // Apply what is already queued (up to a bound, so a flood of progress
                // cannot hold back the next frame) before drawing once.
                let mut next = Some(first);
                let mut applied = 0;
                while let Some(event) = next {
                    // Pointer motion changes nothing on screen: no redraw, no bytes sent.
                    let moved = matches!(
                        event,
                        AppEvent::Input(Event::Mouse(MouseEvent {
                            kind: MouseEventKind::Moved,
                            ..
                        }))
                    );
                    urgent |= !moved
                        && matches!(
                            event,
                            AppEvent::Input(_) | AppEvent::Query(_) | AppEvent::Data { .. }
                        );
                    let is_progress =
                        matches!(event, AppEvent::Import(importer::ImportEvent::Progress(_)));
                    urgent |= matches!(event, AppEvent::Import(_)) && !is_progress;
                    dirty |= !moved;
                    let effects = app.handle(event, Instant::now());
                    if ui_fault && matches!(app.import, app::ImportStatus::Done(_)) {
                        panic!("injected fault: the UI thread panicked");
                    }
                    if app.quit {
                        return Ok(());
                    }
                    threads.apply(effects);
                    applied += 1;
                    next = if applied < 10_000 {
                        rx.try_recv().ok()
                    } else {
                        None
                    };
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if app.busy() {
                    app.tick(Instant::now());
                    dirty = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        }
        if dirty && (urgent || last_draw.elapsed() >= PROGRESS_FRAME) {
            guard.draw(|f| ui::draw(f, app))?;
            last_draw = Instant::now();
            dirty = false;
        }
    }
}

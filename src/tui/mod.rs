//! The terminal explorer. The event loop owns the terminal; an input thread, the importer
//! thread, two data workers and the query runner all post [`event::AppEvent`]s into one
//! channel. The loop applies each to the [`app::App`] state, carries out the effects, and
//! redraws — only when something happened, so an idle session sends nothing.

pub mod app;
pub mod chooser;
pub mod clocks;
pub mod event;
pub mod format;
pub mod help;
pub mod importer;
pub mod input;
pub mod query;
pub mod sanitize;
pub mod stats;
pub mod terminal;
pub mod theme;
pub mod timeline;
pub mod ui;
pub mod worker;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use self::app::{App, Effect};
use self::event::AppEvent;
use self::importer::{Importer, Input};
use self::query::{QueryRunner, QueryState};
use self::theme::{ColorMode, Theme};
use self::worker::{Request, Worker};

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// A private directory for the session's databases, removed when the session ends.
struct SessionDir(PathBuf);

impl SessionDir {
    fn create() -> std::io::Result<SessionDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("sextant-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(SessionDir(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SessionDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The threads the effects go to.
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
            }
        }
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

/// Runs the explorer on `input` until the user quits.
pub fn run(input: Input) -> Result<(), TuiError> {
    let dir = SessionDir::create()?;
    let (tx, rx) = mpsc::channel();
    let mut guard = terminal::TerminalGuard::enter()?;
    let size = guard.terminal.size()?;
    let now = Instant::now();
    let mut app = App::new(
        input.display_name(),
        Theme::new(ColorMode::detect()),
        Rect::new(0, 0, size.width, size.height),
        QueryState::new(query::history_path()),
        now,
    );
    // The first frame, before any import work.
    guard.terminal.draw(|f| ui::draw(f, &app))?;

    let importer = Importer::spawn(input, dir.path(), tx.clone())?;
    app.set_pending_db(importer.first_db.clone());
    let threads = Threads {
        timeline: Worker::spawn("timeline-loader", tx.clone())?,
        lookup: Worker::spawn("lookup", tx.clone())?,
        query: QueryRunner::spawn(tx.clone())?,
        importer,
    };
    spawn_input_thread(tx)?;

    let mut last_draw = Instant::now();
    let mut dirty = false;
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
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if app.quit {
            break;
        }
        if dirty && (urgent || last_draw.elapsed() >= PROGRESS_FRAME) {
            guard.terminal.draw(|f| ui::draw(f, &app))?;
            last_draw = Instant::now();
            dirty = false;
        }
    }
    threads.importer.cancel.store(true, Ordering::Relaxed);
    threads.query.interrupt();
    drop(guard);
    Ok(())
}

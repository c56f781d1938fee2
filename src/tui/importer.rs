//! The importer thread: opens the input, runs [`Session::import`] with progress, then
//! waits for trace_time switches, which it runs with [`Session::replace`] into a fresh
//! database file so the panes keep reading the old one until the new one is complete.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::import::{ImportError, ImportSummary, Progress, Session, TraceTimeCandidate};
use crate::source;

use super::event::AppEvent;

/// What to open.
#[derive(Clone, Debug)]
pub enum Input {
    /// A trace or archive on disk (or a database written by `sextant import`); several
    /// paths, or a directory, open as one merge.
    Paths(Vec<PathBuf>),
    /// Bytes already in memory, with the name to show for them.
    Bytes { name: String, bytes: &'static [u8] },
}

impl Input {
    pub fn display_name(&self) -> String {
        match self {
            Input::Paths(p) => source::loose_name(p),
            Input::Bytes { name, .. } => name.clone(),
        }
    }
}

/// Why an import failed: the message, and the file it is about when one is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportFailure {
    pub message: String,
    pub file: Option<String>,
}

impl ImportFailure {
    pub fn from_error(e: &ImportError) -> ImportFailure {
        let (message, file) = match e {
            ImportError::Parse { file, error } => (error.to_string(), Some(file.clone())),
            ImportError::Manifest { file, error } => (error.to_string(), Some(file.clone())),
            ImportError::UnknownType { file } => (
                "Unknown trace type provided (not a Perfetto protobuf, Chrome JSON or systrace file, nor a ZIP/TAR/gzip archive)".to_string(),
                Some(file.clone()),
            ),
            ImportError::Source(source::SourceError::Read { path, error }) => {
                (format!("cannot read it: {error}"), Some(path.clone()))
            }
            ImportError::Source(source::SourceError::Corrupt { name, problem }) => {
                (problem.clone(), Some(name.clone()))
            }
            other => (other.to_string(), None),
        };
        ImportFailure { message, file }
    }
}

#[derive(Debug)]
pub enum ImportEvent {
    Progress(Progress),
    /// The import is done: `db` holds the whole trace.
    Finished {
        db: PathBuf,
        summary: ImportSummary,
        candidates: Vec<TraceTimeCandidate>,
    },
    /// The input was a database already: nothing to import, nothing to re-place.
    Opened {
        db: PathBuf,
    },
    Failed(ImportFailure),
    /// A trace_time switch finished: `db` replaces the previous database.
    Replaced {
        db: PathBuf,
        summary: ImportSummary,
        candidates: Vec<TraceTimeCandidate>,
    },
    ReplaceFailed(String),
}

pub enum Command {
    /// Put trace time on this `__sextant_clock_node`.
    Replace(u32),
}

/// The app's side of the importer thread.
pub struct Importer {
    commands: Option<Sender<Command>>,
    pub cancel: Arc<AtomicBool>,
    /// Where the database being written now lives (the first one is known at once).
    pub first_db: PathBuf,
    thread: Option<JoinHandle<()>>,
}

impl Importer {
    /// Starts importing `input` into databases under `dir`.
    pub fn spawn(input: Input, dir: &Path, events: Sender<AppEvent>) -> std::io::Result<Importer> {
        let (commands, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let first_db = dir.join("trace-0.sqlite");
        let thread_cancel = cancel.clone();
        let dir = dir.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("importer".into())
            .spawn(move || {
                if crate::shutdown::fault("importer-thread-panic") {
                    panic!("injected fault: the importer thread died");
                }
                let report = events.clone();
                if let Err(message) =
                    super::terminal::catch(|| run(input, dir, events, rx, &thread_cancel))
                {
                    send(
                        &report,
                        ImportEvent::Failed(ImportFailure {
                            message,
                            file: None,
                        }),
                    );
                }
            })?;
        Ok(Importer {
            commands: Some(commands),
            cancel,
            first_db,
            thread: Some(thread),
        })
    }

    pub fn replace(&self, node: u32) {
        if let Some(commands) = &self.commands {
            let _ = commands.send(Command::Replace(node));
        }
    }

    /// Asks the thread to end: the import or switch under way is cancelled (at its next
    /// check), no further switch starts.
    pub fn stop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.commands = None;
    }

    /// Stops the thread and waits for it: its databases are closed (the bulk writer joined)
    /// when this returns.
    pub fn join(&mut self) {
        self.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Importer {
    fn drop(&mut self) {
        self.join();
    }
}

fn send(events: &Sender<AppEvent>, e: ImportEvent) -> bool {
    events.send(AppEvent::Import(e)).is_ok()
}

/// Removes a database and SQLite's side files.
pub fn remove_db(path: &Path) {
    crate::cleanup::remove_database(path);
}

fn run(
    input: Input,
    dir: PathBuf,
    events: Sender<AppEvent>,
    commands: Receiver<Command>,
    cancel: &AtomicBool,
) {
    if crate::shutdown::fault("importer-job-panic") {
        panic!("injected fault: the import panicked");
    }
    let name = input.display_name();
    let mut db = dir.join("trace-0.sqlite");
    if let Input::Paths(paths) = &input {
        if let [path] = paths.as_slice() {
            if crate::database::is_sqlite(path) {
                send(&events, ImportEvent::Opened { db: path.clone() });
                return;
            }
        }
    }
    let files = match &input {
        Input::Paths(paths) => source::open_paths(paths),
        Input::Bytes { bytes, .. } => source::open_bytes(&name, bytes.to_vec()),
    };
    let files = match files {
        Ok(f) => f,
        Err(e) => {
            send(
                &events,
                ImportEvent::Failed(ImportFailure::from_error(&ImportError::Source(e))),
            );
            return;
        }
    };
    let mut progress = |p: &Progress| {
        let _ = events.send(AppEvent::Import(ImportEvent::Progress(p.clone())));
    };
    let mut session = match Session::import(&name, files, &db, &mut progress, cancel) {
        Ok(s) => s,
        Err(e) => {
            send(&events, ImportEvent::Failed(ImportFailure::from_error(&e)));
            return;
        }
    };
    if !send(
        &events,
        ImportEvent::Finished {
            db: db.clone(),
            summary: session.summary().clone(),
            candidates: session.candidates(),
        },
    ) {
        return;
    }
    let mut next = 1u32;
    while let Ok(Command::Replace(node)) = commands.recv() {
        let target = dir.join(format!("trace-{next}.sqlite"));
        next += 1;
        let mut progress = |p: &Progress| {
            let _ = events.send(AppEvent::Import(ImportEvent::Progress(p.clone())));
        };
        match session.replace(node, &target, &mut progress, cancel) {
            Ok(summary) => {
                let old = std::mem::replace(&mut db, target.clone());
                if !send(
                    &events,
                    ImportEvent::Replaced {
                        db: target,
                        summary,
                        candidates: session.candidates(),
                    },
                ) {
                    return;
                }
                // Readers still holding it keep reading their open file (POSIX unlink).
                remove_db(&old);
            }
            Err(e) => {
                remove_db(&target);
                if !send(&events, ImportEvent::ReplaceFailed(e.to_string())) {
                    return;
                }
            }
        }
    }
}

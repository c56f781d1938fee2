//! The importer thread: opens the input, runs [`Session::import`] with progress, then
//! waits for trace_time switches, which it runs with [`Session::replace`] into a fresh
//! database file so the panes keep reading the old one until the new one is complete.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::import::{
    ImportError, ImportSummary, ManifestPreview, Member, Progress, Session, TraceTimeCandidate,
};
use crate::manifest::Manifest;
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
    /// The manifest in effect (after the import, and after each switch or edit), with the
    /// trace files' member names.
    Manifest {
        manifest: Manifest,
        members: Vec<Member>,
    },
    /// Where each file would land with an edited manifest.
    Previewed(Result<ManifestPreview, String>),
    /// An edited manifest was applied: `db` replaces the previous database.
    Applied {
        db: PathBuf,
        summary: ImportSummary,
        candidates: Vec<TraceTimeCandidate>,
    },
    ApplyFailed(String),
    /// The files and the manifest were written to this new archive.
    Written(Result<PathBuf, String>),
}

pub enum Command {
    /// Put trace time on this `__sextant_clock_node`.
    Replace(u32),
    /// Say where each file would land with this manifest.
    Preview(Manifest),
    /// Re-place every file with this manifest.
    Apply(Manifest),
    /// Write the files and the manifest in effect as a new archive beside the input.
    Write,
    /// Write the manifest in effect as a new JSON file beside the input.
    WriteManifest,
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
        self.command(Command::Replace(node));
    }

    pub fn command(&self, command: Command) {
        if let Some(commands) = &self.commands {
            let _ = commands.send(command);
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

/// A re-placement's end: on success `target` becomes the session's database (the old one
/// removed; readers still holding it keep reading their open file, POSIX unlink), the
/// event `ok` makes is sent, then the manifest in effect. On failure `target` is removed and
/// the message returned. Returns whether the UI still listens.
fn swap(
    events: &Sender<AppEvent>,
    session: &Session,
    db: &mut PathBuf,
    target: PathBuf,
    result: Result<ImportSummary, ImportError>,
    ok: impl FnOnce(PathBuf, ImportSummary, Vec<TraceTimeCandidate>) -> ImportEvent,
) -> Result<bool, String> {
    match result {
        Ok(summary) => {
            let old = std::mem::replace(db, target.clone());
            let sent = send(events, ok(target, summary, session.candidates()));
            remove_db(&old);
            Ok(sent && send(events, manifest_event(session)))
        }
        Err(e) => {
            remove_db(&target);
            Err(e.to_string())
        }
    }
}

/// The manifest in effect and the trace files' member names.
fn manifest_event(session: &Session) -> ImportEvent {
    ImportEvent::Manifest {
        manifest: session.manifest(),
        members: session.members(),
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
    if !send(&events, manifest_event(&session)) {
        return;
    }
    let mut next = 1u32;
    while let Ok(command) = commands.recv() {
        let target = dir.join(format!("trace-{next}.sqlite"));
        let mut progress = |p: &Progress| {
            let _ = events.send(AppEvent::Import(ImportEvent::Progress(p.clone())));
        };
        let done = match command {
            Command::Preview(m) => {
                let preview = session.preview_manifest(&m).map_err(|e| e.to_string());
                send(&events, ImportEvent::Previewed(preview))
            }
            Command::WriteManifest => {
                let out = edited_path(&input, "manifest.json");
                let json = crate::merge::to_json(&session.manifest());
                let written = std::fs::File::create_new(&out)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, json.as_bytes()))
                    .map(|()| out.clone())
                    .map_err(|e| format!("{}: {e}", out.display()));
                send(&events, ImportEvent::Written(written))
            }
            Command::Write => {
                let out = edited_path(&input, "zip");
                let written = session
                    .write_archive(&out)
                    .map(|()| out)
                    .map_err(|e| e.to_string());
                send(&events, ImportEvent::Written(written))
            }
            Command::Replace(node) => {
                next += 1;
                let result = session.replace(node, &target, &mut progress, cancel);
                let replaced = |db, summary, candidates| ImportEvent::Replaced {
                    db,
                    summary,
                    candidates,
                };
                swap(&events, &session, &mut db, target, result, replaced)
                    .unwrap_or_else(|e| send(&events, ImportEvent::ReplaceFailed(e)))
            }
            Command::Apply(m) => {
                next += 1;
                let result = session.apply_manifest(m, &target, &mut progress, cancel);
                let applied = |db, summary, candidates| ImportEvent::Applied {
                    db,
                    summary,
                    candidates,
                };
                swap(&events, &session, &mut db, target, result, applied)
                    .unwrap_or_else(|e| send(&events, ImportEvent::ApplyFailed(e)))
            }
        };
        if !done {
            return;
        }
    }
}

/// A new archive's path beside the input (or in the working directory for the demo):
/// `NAME.edited.EXT`, numbered when that exists, so nothing is ever written over.
fn edited_path(input: &Input, ext: &str) -> PathBuf {
    let (dir, stem) = match input {
        Input::Paths(paths) => {
            let first = paths.first().cloned().unwrap_or_default();
            let dir = first.parent().map(Path::to_path_buf).unwrap_or_default();
            let stem = first
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "merge".into());
            (dir, stem)
        }
        Input::Bytes { name, .. } => (
            PathBuf::new(),
            Path::new(name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "merge".into()),
        ),
    };
    let mut n = 1;
    loop {
        let name = if n == 1 {
            format!("{stem}.edited.{ext}")
        } else {
            format!("{stem}.edited-{n}.{ext}")
        };
        let path = dir.join(name);
        if !path.exists() {
            return path;
        }
        n += 1;
    }
}

//! The data workers: threads with their own read-only connections that answer the panes'
//! requests (timeline index, slice details, stats, clock graph, trace_time candidates) and
//! post the answers back to the event loop. The UI thread never touches SQLite.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::chooser::Candidate;
use super::clocks::ClockGraph;
use super::event::AppEvent;
use super::stats::StatRow;
use super::timeline::details::{self, Details, DetailsRequest};
use super::timeline::load::{self, TimelineData};

/// Which database to read; a new generation (a finished import, a trace_time switch)
/// makes workers reopen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbRef {
    pub path: PathBuf,
    pub generation: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Timeline,
    Details(DetailsRequest),
    Stats,
    Clocks,
    Candidates,
}

/// An answer; errors are messages for the pane to show.
#[derive(Debug)]
pub enum Answer {
    Timeline(Result<Arc<TimelineData>, String>),
    Details(DetailsRequest, Result<Details, String>),
    Stats(Result<(Vec<StatRow>, Vec<super::stats::FileEvents>), String>),
    Clocks(Result<ClockGraph, String>),
    Candidates(Result<Vec<Candidate>, String>),
}

pub struct Worker {
    requests: Option<Sender<(DbRef, Request)>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    pub fn spawn(name: &str, events: Sender<AppEvent>) -> std::io::Result<Worker> {
        let (requests, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || serve(rx, events, stopping))?;
        Ok(Worker {
            requests: Some(requests),
            stop,
            thread: Some(thread),
        })
    }

    pub fn send(&self, db: &DbRef, request: Request) {
        // A closed channel means the loop is shutting down; nothing to answer then.
        if let Some(requests) = &self.requests {
            let _ = requests.send((db.clone(), request));
        }
    }

    /// Asks the thread to end: the request it runs is interrupted, the queued ones dropped.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.requests = None;
    }

    /// Stops the thread and waits for it (its connection closed).
    pub fn join(&mut self) {
        self.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.join();
    }
}

/// Makes `conn`'s statements fail soon after `stop` is set, so a long read ends on quit.
pub fn interrupt_on(conn: &Connection, stop: &Arc<AtomicBool>) {
    let stop = stop.clone();
    conn.progress_handler(1000, Some(move || stop.load(Ordering::Relaxed)));
}

fn serve(rx: Receiver<(DbRef, Request)>, events: Sender<AppEvent>, stop: Arc<AtomicBool>) {
    let mut conn: Option<(DbRef, Connection)> = None;
    while let Ok(first) = rx.recv() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // Only the newest request of each kind matters: a burst of progress-driven
        // timeline reloads collapses to one.
        let mut batch = vec![first];
        while let Ok(next) = rx.try_recv() {
            batch.retain(|(_, r)| std::mem::discriminant(r) != std::mem::discriminant(&next.1));
            batch.push(next);
        }
        for (db, request) in batch {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            if conn.as_ref().is_none_or(|(open, _)| *open != db) {
                conn = match crate::db::open_read_only(&db.path) {
                    Ok(c) => {
                        interrupt_on(&c, &stop);
                        Some((db.clone(), c))
                    }
                    Err(e) => {
                        let _ = events.send(AppEvent::Data {
                            generation: db.generation,
                            answer: failed(&request, e.to_string()),
                        });
                        None
                    }
                };
            }
            let Some((_, c)) = &conn else {
                continue;
            };
            let answer = match super::terminal::catch(|| answer(c, &request)) {
                Ok(a) => a,
                Err(message) => failed(&request, message),
            };
            if events
                .send(AppEvent::Data {
                    generation: db.generation,
                    answer,
                })
                .is_err()
            {
                return;
            }
        }
    }
}

/// Answers one request on `conn` (the workers' job; tests call it directly).
pub fn answer(conn: &Connection, request: &Request) -> Answer {
    let msg = |e: rusqlite::Error| e.to_string();
    match request {
        Request::Timeline => Answer::Timeline(load::load(conn).map(Arc::new).map_err(msg)),
        Request::Details(r) => Answer::Details(*r, details::load(conn, r).map_err(msg)),
        Request::Stats => Answer::Stats(
            super::stats::load(conn)
                .map(|rows| (rows, super::stats::load_events(conn)))
                .map_err(msg),
        ),
        Request::Clocks => Answer::Clocks(super::clocks::load(conn).map_err(msg)),
        Request::Candidates => Answer::Candidates(super::chooser::load(conn).map_err(msg)),
    }
}

fn failed(request: &Request, message: String) -> Answer {
    match request {
        Request::Timeline => Answer::Timeline(Err(message)),
        Request::Details(r) => Answer::Details(*r, Err(message)),
        Request::Stats => Answer::Stats(Err(message)),
        Request::Clocks => Answer::Clocks(Err(message)),
        Request::Candidates => Answer::Candidates(Err(message)),
    }
}

//! Everything the event loop hears, from the terminal and from the worker threads.

use ratatui::crossterm::event::Event;

use super::importer::ImportEvent;
use super::query::QueryEvent;
use super::worker::Answer;

#[derive(Debug)]
pub enum AppEvent {
    Input(Event),
    Import(ImportEvent),
    /// A data worker's answer, for the database generation it read.
    Data {
        generation: u64,
        answer: Answer,
    },
    Query(QueryEvent),
    /// The process is asked to end (a signal, a thread's panic): quit as on `q`.
    Shutdown(crate::shutdown::Reason),
}

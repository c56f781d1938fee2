//! The SQL prompt: a line editor with `\` continuation and history kept across runs, a
//! worker thread that runs the query on its own read-only connection (so `Esc` can
//! interrupt it through SQLite's interrupt handle), and a scrollable result table.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Batch, Connection, InterruptHandle};

use super::event::AppEvent;
use super::input::{InputAction, LineInput};
use super::sanitize::{sanitize, sanitize_bytes};
use super::theme::Theme;
use super::worker::DbRef;

/// Rows kept from one result: enough to read, bounded so a `SELECT *` on a big table
/// neither stalls nor fills memory.
pub const MAX_ROWS: usize = 10_000;
const HISTORY_LIMIT: usize = 1000;

#[derive(Clone, Debug, PartialEq)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// More rows existed than [`MAX_ROWS`].
    pub truncated: bool,
    /// Rows changed by a statement without results (temp tables).
    pub statements: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Null => "NULL".into(),
            Cell::Int(v) => v.to_string(),
            Cell::Real(v) => format!("{v}"),
            Cell::Text(s) => s.clone(),
        }
    }

    fn numeric(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Real(_))
    }
}

#[derive(Debug)]
pub enum QueryEvent {
    Done {
        id: u64,
        result: Result<QueryResult, String>,
        elapsed: Duration,
    },
}

/// The worker that runs queries; its interrupt handle is shared with the UI.
pub struct QueryRunner {
    jobs: Option<Sender<(DbRef, u64, String)>>,
    interrupt: Arc<Mutex<Option<InterruptHandle>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl QueryRunner {
    pub fn spawn(events: Sender<AppEvent>) -> std::io::Result<QueryRunner> {
        let (jobs, rx) = mpsc::channel::<(DbRef, u64, String)>();
        let interrupt = Arc::new(Mutex::new(None));
        let shared = interrupt.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("query".into())
            .spawn(move || {
                let mut conn: Option<(DbRef, Connection)> = None;
                while let Ok((db, id, sql)) = rx.recv() {
                    if stopping.load(Ordering::SeqCst) {
                        return;
                    }
                    let started = Instant::now();
                    if conn.as_ref().is_none_or(|(open, _)| *open != db) {
                        conn = match open(&db.path) {
                            Ok(c) => {
                                // Quitting ends a running query even if it started after
                                // the interrupt was sent.
                                super::worker::interrupt_on(&c, &stopping);
                                let handle = c.get_interrupt_handle();
                                if let Ok(mut h) = shared.lock() {
                                    *h = Some(handle);
                                }
                                Some((db.clone(), c))
                            }
                            Err(e) => {
                                let _ = events.send(AppEvent::Query(QueryEvent::Done {
                                    id,
                                    result: Err(e),
                                    elapsed: started.elapsed(),
                                }));
                                continue;
                            }
                        };
                    }
                    let Some((_, c)) = &conn else { continue };
                    let result = super::terminal::catch(|| run(c, &sql)).and_then(|r| r);
                    let done = QueryEvent::Done {
                        id,
                        result,
                        elapsed: started.elapsed(),
                    };
                    if events.send(AppEvent::Query(done)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(QueryRunner {
            jobs: Some(jobs),
            interrupt,
            stop,
            thread: Some(thread),
        })
    }

    pub fn run(&self, db: &DbRef, id: u64, sql: String) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send((db.clone(), id, sql));
        }
    }

    pub fn interrupt(&self) {
        if let Ok(h) = self.interrupt.lock() {
            if let Some(h) = h.as_ref() {
                h.interrupt();
            }
        }
    }

    /// Asks the thread to end: the running query is interrupted, queued ones dropped.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.jobs = None;
        self.interrupt();
    }

    /// Stops the thread and waits for it (its connection closed).
    pub fn join(&mut self) {
        self.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for QueryRunner {
    fn drop(&mut self) {
        self.join();
    }
}

/// A read-only query connection that also refuses ATTACH/DETACH: the prompt reads the
/// trace and nothing else.
pub fn open(path: &std::path::Path) -> Result<Connection, String> {
    let conn = crate::db::open_read_only(path).map_err(|e| e.to_string())?;
    conn.authorizer(Some(|ctx: AuthContext<'_>| match ctx.action {
        AuthAction::Attach { .. } | AuthAction::Detach { .. } => Authorization::Deny,
        _ => Authorization::Allow,
    }));
    Ok(conn)
}

/// Runs every statement (Perfetto's INCLUDE / CREATE PERFETTO forms as `sextant query` takes
/// them); the last one with columns is the result shown.
pub fn run(conn: &Connection, sql: &str) -> Result<QueryResult, String> {
    let mut result: Option<QueryResult> = None;
    let mut statements = 0;
    // Each statement is translated once those before it have run (a span join reads the
    // columns of views made earlier in the same input).
    for raw in crate::db::split_statements(sql) {
        let translated = crate::db::translate(conn, raw)
            .map_err(|e| sanitize_bytes(e.to_string().as_bytes()))?;
        if let Some(sql) = translated {
            run_translated(conn, &sql, &mut result, &mut statements)?;
        }
    }
    if statements == 0 {
        return Err("no SQL to run".into());
    }
    Ok(result.unwrap_or(QueryResult {
        columns: Vec::new(),
        rows: Vec::new(),
        truncated: false,
        statements,
    }))
}

/// Runs plain SQLite statements; the last one with columns becomes `result`.
fn run_translated(
    conn: &Connection,
    sql: &str,
    result: &mut Option<QueryResult>,
    statements: &mut usize,
) -> Result<(), String> {
    let mut batch = Batch::new(conn, sql);
    loop {
        let stmt = match batch.next() {
            Ok(Some(s)) => s,
            Ok(None) => break,
            Err(e) => return Err(describe(e)),
        };
        let mut stmt = stmt;
        *statements += 1;
        let columns: Vec<String> = stmt
            .column_names()
            .iter()
            .map(|c| sanitize_bytes(c.as_bytes()))
            .collect();
        if columns.is_empty() {
            stmt.raw_execute().map_err(describe)?;
            continue;
        }
        let width = columns.len();
        let mut rows = Vec::new();
        let mut truncated = false;
        let mut q = stmt.raw_query();
        while let Some(row) = q.next().map_err(describe)? {
            if rows.len() == MAX_ROWS {
                truncated = true;
                break;
            }
            let mut cells = Vec::with_capacity(width);
            for i in 0..width {
                cells.push(match row.get_ref(i).map_err(describe)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Int(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(t) => Cell::Text(sanitize_bytes(t)),
                    ValueRef::Blob(b) => Cell::Text(format!("<blob {} bytes>", b.len())),
                });
            }
            rows.push(cells);
        }
        *result = Some(QueryResult {
            columns,
            rows,
            truncated,
            statements: 0,
        });
    }
    Ok(())
}

fn describe(e: rusqlite::Error) -> String {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            "interrupted".into()
        }
        rusqlite::Error::SqliteFailure(f, Some(msg))
            if f.code == rusqlite::ErrorCode::AuthorizationForStatementDenied =>
        {
            format!("{msg}: the prompt is read-only and cannot attach databases")
        }
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ReadOnly => {
            "the trace database is read-only here (CREATE TEMP TABLE works)".into()
        }
        _ => sanitize_bytes(e.to_string().as_bytes()),
    }
}

/// Where history lives: `$SEXTANT_HISTORY`, else the user's data dir.
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SEXTANT_HISTORY") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(base.join("sextant").join("history"))
}

/// History entries are one per line, with `\` and newlines escaped.
fn encode(entry: &str) -> String {
    entry.replace('\\', "\\\\").replace('\n', "\\n")
}

fn decode(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub fn load_history(path: Option<&std::path::Path>) -> Vec<String> {
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return Vec::new();
    };
    let mut entries: Vec<String> = text.lines().filter(|l| !l.is_empty()).map(decode).collect();
    let excess = entries.len().saturating_sub(HISTORY_LIMIT);
    entries.drain(..excess);
    entries
}

/// Appends one entry; a history that cannot be written is not worth interrupting for.
fn save_history(path: Option<&std::path::Path>, entries: &[String]) {
    let Some(path) = path else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let start = entries.len().saturating_sub(HISTORY_LIMIT);
    let text: String = entries[start..].iter().map(|e| encode(e) + "\n").collect();
    let _ = std::fs::write(path, text);
}

#[derive(Debug, Default)]
pub enum Status {
    #[default]
    Idle,
    Running {
        id: u64,
        started: Instant,
        elapsed: Duration,
    },
    Done {
        elapsed: Duration,
    },
    Failed {
        message: String,
        elapsed: Duration,
    },
}

#[derive(Debug)]
pub struct QueryState {
    pub input: LineInput,
    /// Lines entered with a trailing `\`, waiting for the rest of the query.
    pub pending: Vec<String>,
    pub editing: bool,
    pub history: Vec<String>,
    history_pos: Option<usize>,
    history_file: Option<PathBuf>,
    pub status: Status,
    pub result: Option<QueryResult>,
    pub last_sql: String,
    /// The SQL that made `result` (the last query may have failed since).
    pub result_sql: String,
    /// The SQL of the query running now.
    running_sql: String,
    pub row_offset: usize,
    pub col_offset: usize,
    /// The result row selected (browsing, after Esc): Enter puts the timeline on it.
    pub cursor: usize,
    next_id: u64,
}

/// What the pane asks the event loop to do.
#[derive(Debug, PartialEq)]
pub enum QueryCommand {
    Run {
        id: u64,
        sql: String,
    },
    Interrupt,
    /// Put the timeline on this row of the result (its `ts`, `dur`, slice).
    Show(usize),
}

impl QueryState {
    pub fn new(history_file: Option<PathBuf>) -> QueryState {
        QueryState {
            input: LineInput::default(),
            pending: Vec::new(),
            editing: true,
            history: load_history(history_file.as_deref()),
            history_pos: None,
            history_file,
            status: Status::Idle,
            result: None,
            last_sql: String::new(),
            result_sql: String::new(),
            running_sql: String::new(),
            row_offset: 0,
            col_offset: 0,
            cursor: 0,
            next_id: 1,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.status, Status::Running { .. })
    }

    pub fn tick(&mut self, now: Instant) {
        if let Status::Running {
            started, elapsed, ..
        } = &mut self.status
        {
            *elapsed = now.saturating_duration_since(*started);
        }
    }

    pub fn on_event(&mut self, event: QueryEvent) {
        let QueryEvent::Done {
            id,
            result,
            elapsed,
        } = event;
        if !matches!(self.status, Status::Running { id: running, .. } if running == id) {
            return;
        }
        match result {
            Ok(r) => {
                self.result = Some(r);
                self.result_sql = self.running_sql.clone();
                self.row_offset = 0;
                self.col_offset = 0;
                self.cursor = 0;
                self.status = Status::Done { elapsed };
            }
            Err(message) => {
                self.status = Status::Failed { message, elapsed };
            }
        }
    }

    /// A key while the SQL pane is shown. Returns what to run, if anything.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant, page: usize) -> Option<QueryCommand> {
        if key.code == KeyCode::Esc && self.running() {
            return Some(QueryCommand::Interrupt);
        }
        // Rows of the table the pane shows under the prompt and the status line.
        let body = page.saturating_sub(1).max(1);
        match key.code {
            KeyCode::PageDown => {
                self.move_cursor(page as isize, body);
                return None;
            }
            KeyCode::PageUp => {
                self.move_cursor(-(page as isize), body);
                return None;
            }
            _ => {}
        }
        if !self.editing {
            match key.code {
                KeyCode::Char('i') | KeyCode::Char('/') => self.editing = true,
                KeyCode::Enter if self.result.as_ref().is_some_and(|r| !r.rows.is_empty()) => {
                    return Some(QueryCommand::Show(self.cursor));
                }
                KeyCode::Enter => self.editing = true,
                KeyCode::Down | KeyCode::Char('j') => self.move_cursor(1, body),
                KeyCode::Up | KeyCode::Char('k') => self.move_cursor(-1, body),
                KeyCode::Right | KeyCode::Char('l') => self.col_offset += 1,
                KeyCode::Left | KeyCode::Char('h') => {
                    self.col_offset = self.col_offset.saturating_sub(1)
                }
                KeyCode::Home | KeyCode::Char('g') => self.move_cursor(isize::MIN / 2, body),
                KeyCode::End | KeyCode::Char('G') => self.move_cursor(isize::MAX / 2, body),
                _ => {}
            }
            return None;
        }
        match self.input.handle(key) {
            InputAction::Cancel => {
                self.editing = false;
                None
            }
            InputAction::Submit => self.submit(now),
            InputAction::HistoryPrevious => {
                let pos = match self.history_pos {
                    None => self.history.len().checked_sub(1),
                    Some(p) => Some(p.saturating_sub(1)),
                };
                self.recall(pos);
                None
            }
            InputAction::HistoryNext => {
                match self.history_pos {
                    Some(p) if p + 1 < self.history.len() => self.recall(Some(p + 1)),
                    Some(_) => {
                        self.history_pos = None;
                        self.pending.clear();
                        self.input.clear();
                    }
                    None => {}
                }
                None
            }
            _ => None,
        }
    }

    fn recall(&mut self, pos: Option<usize>) {
        let Some(p) = pos else { return };
        let Some(entry) = self.history.get(p) else {
            return;
        };
        self.history_pos = Some(p);
        let mut lines: Vec<String> = entry.split('\n').map(str::to_string).collect();
        let last = lines.pop().unwrap_or_default();
        self.pending = lines;
        self.input.set(&last);
    }

    fn submit(&mut self, now: Instant) -> Option<QueryCommand> {
        if let Some(line) = self.input.text.strip_suffix('\\') {
            self.pending.push(line.to_string());
            self.input.clear();
            return None;
        }
        if self.running() {
            return None;
        }
        let mut lines = std::mem::take(&mut self.pending);
        lines.push(std::mem::take(&mut self.input.text));
        self.input.clear();
        let sql = lines.join("\n");
        if sql.trim().is_empty() {
            return None;
        }
        if self.history.last() != Some(&sql) {
            self.history.push(sql.clone());
            save_history(self.history_file.as_deref(), &self.history);
        }
        self.history_pos = None;
        let id = self.next_id;
        self.next_id += 1;
        self.last_sql = sql.clone();
        self.running_sql = sql.clone();
        self.status = Status::Running {
            id,
            started: now,
            elapsed: Duration::ZERO,
        };
        Some(QueryCommand::Run { id, sql })
    }

    /// The database changed under the pane (trace time moved, a manifest edit applied):
    /// runs the query whose result is shown (or the one running) again, so its rows follow
    /// the new placement instead of showing the old database's timestamps.
    pub fn rerun(&mut self, now: Instant) -> Option<QueryCommand> {
        let sql = if self.running() {
            self.running_sql.clone()
        } else if self.result.is_some() {
            self.result_sql.clone()
        } else {
            return None;
        };
        let id = self.next_id;
        self.next_id += 1;
        self.running_sql = sql.clone();
        self.status = Status::Running {
            id,
            started: now,
            elapsed: Duration::ZERO,
        };
        Some(QueryCommand::Run { id, sql })
    }

    /// Moves the selected row by `by`, the table scrolling to keep it among the `body`
    /// rows shown.
    fn move_cursor(&mut self, by: isize, body: usize) {
        let rows = self.result.as_ref().map_or(0, |r| r.rows.len());
        self.cursor = self
            .cursor
            .saturating_add_signed(by)
            .min(rows.saturating_sub(1));
        if self.cursor < self.row_offset {
            self.row_offset = self.cursor;
        } else if self.cursor >= self.row_offset + body {
            self.row_offset = self.cursor + 1 - body;
        }
    }

    /// Where a result row is on the timeline: its `ts`, its `dur` (if any) and the slice
    /// it names (`slice_id`, else `id`), when the result has a `ts` column.
    pub fn row_place(&self, row: usize) -> Result<(i64, Option<i64>, Option<i64>), String> {
        let r = self.result.as_ref().ok_or("no result")?;
        let col = |name: &str| r.columns.iter().position(|c| c.eq_ignore_ascii_case(name));
        let int = |i: Option<usize>| -> Option<i64> {
            match r.rows.get(row)?.get(i?)? {
                Cell::Int(v) => Some(*v),
                Cell::Real(v) => Some(*v as i64),
                _ => None,
            }
        };
        let Some(ts) = col("ts") else {
            return Err("the result has no ts column to put the timeline on".into());
        };
        let ts = int(Some(ts)).ok_or("this row's ts is not a number")?;
        let slice = int(col("slice_id")).or_else(|| int(col("id")));
        Ok((ts, int(col("dur")), slice))
    }
}

fn fmt_elapsed(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// Column widths that fit the content: each at most 48 wide, unless the screen has room
/// left over, which goes to the columns cut short (left to right).
fn column_widths(r: &QueryResult, screen_width: usize) -> Vec<usize> {
    let natural: Vec<usize> = r
        .columns
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let widest = r
                .rows
                .iter()
                .take(500)
                .map(|row| row.get(i).map_or(0, |c| c.text().chars().count()))
                .max()
                .unwrap_or(0);
            widest.max(name.chars().count()).max(3)
        })
        .collect();
    let mut widths: Vec<usize> = natural.iter().map(|&w| w.min(48)).collect();
    // Two columns of margin, and " │ " after each column.
    let used = 2 + widths.iter().map(|w| w + 3).sum::<usize>();
    let mut spare = screen_width.saturating_sub(used);
    for (width, &want) in widths.iter_mut().zip(&natural) {
        let more = want.saturating_sub(*width).min(spare);
        *width += more;
        spare -= more;
    }
    widths
}

/// `sql` on one line: sanitized, its runs of whitespace (line breaks too) made one space.
fn one_line(sql: &str) -> String {
    sanitize(sql)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn fit(s: &str, width: usize, right: bool) -> String {
    let count = s.chars().count();
    if count > width {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    } else if right {
        format!("{s:>width$}")
    } else {
        format!("{s:<width$}")
    }
}

pub fn draw(frame: &mut Frame, area: Rect, state: &QueryState, theme: &Theme) {
    let prompt_lines = state.pending.len() as u16 + 1;
    let [prompt_area, status_area, table_area] = Layout::vertical([
        Constraint::Length(prompt_lines.min(area.height.saturating_sub(3)).max(1)),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(area);

    let mut lines: Vec<Line> = state
        .pending
        .iter()
        .map(|l| {
            Line::from(vec![
                Span::styled("  ...> ", theme.dim()),
                Span::raw(l.clone()),
            ])
        })
        .collect();
    let prefix = if state.pending.is_empty() {
        "sql> "
    } else {
        "...> "
    };
    let field_width = (area.width as usize).saturating_sub(prefix.len() + 2);
    let (shown, cursor_col) = state.input.view(field_width);
    let prompt_style = if state.editing {
        theme.key()
    } else {
        theme.dim()
    };
    lines.push(Line::from(vec![
        Span::styled(format!("  {prefix}"), prompt_style),
        Span::raw(shown),
    ]));
    frame.render_widget(Paragraph::new(lines), prompt_area);
    if state.editing {
        let y = prompt_area.y + prompt_area.height.saturating_sub(1);
        let x = prompt_area.x + (prefix.len() + 2 + cursor_col) as u16;
        frame.set_cursor_position((x.min(area.right().saturating_sub(1)), y));
    }

    let status = match &state.status {
        Status::Idle if state.editing => Line::from(Span::styled(
            "  Enter runs · a trailing \\ continues the line · ↑/↓ history · Esc leaves the prompt",
            theme.dim(),
        )),
        Status::Idle => Line::from(Span::styled(
            "  Enter or i edits the query · j/k/PgUp/PgDn scroll · h/l columns",
            theme.dim(),
        )),
        Status::Running { elapsed, .. } => Line::from(vec![
            Span::styled(
                format!("  running… {}", fmt_elapsed(*elapsed)),
                theme.warning(),
            ),
            Span::styled("  Esc interrupts", theme.dim()),
        ]),
        Status::Done { elapsed } => {
            let r = state.result.as_ref();
            let rows = r.map_or(0, |r| r.rows.len());
            let what = match r {
                Some(r) if r.columns.is_empty() => format!("{} statement(s) run", r.statements),
                Some(r) if r.truncated => format!("first {rows} rows (more not fetched)"),
                _ => format!("{rows} row{}", if rows == 1 { "" } else { "s" }),
            };
            let done = format!("  {what} in {}", fmt_elapsed(*elapsed));
            let keys = if state.editing {
                "  · Esc, then j/k/h/l scroll"
            } else {
                "  · j/k/h/l scroll"
            };
            // The query the rows came from (the prompt is empty once it ran), cut to fit.
            let room = (area.width as usize)
                .saturating_sub(done.chars().count() + keys.chars().count() + 4);
            let sql = one_line(&state.result_sql);
            let sql = if sql.chars().count() <= room {
                sql
            } else {
                let mut cut: String = sql.chars().take(room.saturating_sub(1)).collect();
                cut.push('…');
                cut
            };
            let mut spans = vec![
                Span::styled(done, theme.ok()),
                Span::styled(keys, theme.dim()),
            ];
            if room > 8 {
                spans.push(Span::styled(format!("  · {sql}"), theme.title()));
            }
            Line::from(spans)
        }
        Status::Failed { elapsed, .. } => Line::from(Span::styled(
            format!("  error after {}", fmt_elapsed(*elapsed)),
            theme.error(),
        )),
    };
    frame.render_widget(Paragraph::new(status), status_area);

    if let Status::Failed { message, .. } = &state.status {
        frame.render_widget(
            Paragraph::new(
                message
                    .lines()
                    .map(|l| Line::styled(format!("  {l}"), theme.error()))
                    .collect::<Vec<_>>(),
            )
            .wrap(Wrap { trim: false }),
            table_area,
        );
        return;
    }
    let Some(result) = &state.result else { return };
    if result.columns.is_empty() || table_area.height == 0 {
        return;
    }
    let widths = column_widths(result, area.width as usize);
    let first_col = state.col_offset.min(result.columns.len().saturating_sub(1));
    let numeric: Vec<bool> = (0..result.columns.len())
        .map(|i| {
            let mut values = result
                .rows
                .iter()
                .take(200)
                .filter_map(|r| r.get(i))
                .filter(|c| **c != Cell::Null);
            let first = values.next();
            first.is_some_and(Cell::numeric) && values.all(Cell::numeric)
        })
        .collect();
    let render_row = |cells: Vec<(String, bool)>| -> String {
        let mut line = String::from("  ");
        for (i, (text, right)) in cells.into_iter().enumerate().skip(first_col) {
            if line.chars().count() >= area.width as usize {
                break;
            }
            line.push_str(&fit(&text, widths[i], right));
            line.push_str(" │ ");
        }
        line
    };
    let header = render_row(
        result
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), numeric[i]))
            .collect(),
    );
    let mut lines = vec![Line::styled(header, theme.title())];
    let body_rows = table_area.height.saturating_sub(1) as usize;
    for (i, row) in result
        .rows
        .iter()
        .enumerate()
        .skip(state.row_offset)
        .take(body_rows)
    {
        let cells = row
            .iter()
            .enumerate()
            .map(|(i, c)| (c.text(), numeric[i] && c.numeric()))
            .collect();
        // Browsing, the selected row shows (Enter puts the timeline on it).
        let style = if !state.editing && i == state.cursor {
            theme.cursor()
        } else {
            Style::new()
        };
        lines.push(Line::styled(render_row(cells), style));
    }
    frame.render_widget(Paragraph::new(lines), table_area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyModifiers;

    #[test]
    fn long_columns_take_the_room_the_screen_has_left() {
        let result = QueryResult {
            columns: vec!["n".into(), "line".into()],
            rows: vec![vec![Cell::Int(1), Cell::Text("x".repeat(100))]],
            truncated: false,
            statements: 0,
        };
        // Narrow: the long column stops at 48.
        assert_eq!(column_widths(&result, 40), vec![3, 48]);
        // Wide: it gets what is left after the margin and separators (2, and 3 after each).
        assert_eq!(column_widths(&result, 100), vec![3, 89]);
        assert_eq!(column_widths(&result, 200), vec![3, 100]);
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn type_str(q: &mut QueryState, s: &str) -> Option<QueryCommand> {
        let mut last = None;
        for c in s.chars() {
            q.on_key(key(KeyCode::Char(c)), Instant::now(), 10);
        }
        last.get_or_insert(q.on_key(key(KeyCode::Enter), Instant::now(), 10));
        last.flatten()
    }

    #[test]
    fn runs_only_reads_and_refuses_attach() {
        let conn = Connection::open_in_memory().unwrap();
        let r = run(&conn, "select 6*7 as answer, 'x' as s, null as n, 1.5 as f").unwrap();
        assert_eq!(r.columns, vec!["answer", "s", "n", "f"]);
        assert_eq!(
            r.rows,
            vec![vec![
                Cell::Int(42),
                Cell::Text("x".into()),
                Cell::Null,
                Cell::Real(1.5)
            ]]
        );
        conn.authorizer(Some(|ctx: AuthContext<'_>| match ctx.action {
            AuthAction::Attach { .. } => Authorization::Deny,
            _ => Authorization::Allow,
        }));
        let e = run(&conn, "attach '/tmp/x.db' as x").unwrap_err();
        assert!(e.contains("not authorized"), "{e}");
        assert!(run(&conn, "selec 1").unwrap_err().contains("syntax error"));
    }

    #[test]
    fn backslash_continues_and_history_keeps_the_whole_query() {
        let dir = std::env::temp_dir().join(format!("sextant-hist-{}", std::process::id()));
        let file = dir.join("history");
        let mut q = QueryState::new(Some(file.clone()));
        assert_eq!(type_str(&mut q, "select 1\\"), None);
        assert_eq!(q.pending, vec!["select 1"]);
        let cmd = type_str(&mut q, "as one");
        assert_eq!(
            cmd,
            Some(QueryCommand::Run {
                id: 1,
                sql: "select 1\nas one".into()
            })
        );
        // A second session reads it back; ↑ recalls both lines.
        let mut again = QueryState::new(Some(file.clone()));
        assert_eq!(again.history, vec!["select 1\nas one"]);
        again.on_key(key(KeyCode::Up), Instant::now(), 10);
        assert_eq!(again.pending, vec!["select 1"]);
        assert_eq!(again.input.text, "as one");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn perfetto_statements_run_at_the_prompt_as_in_sextant_query() {
        let conn = Connection::open_in_memory().unwrap();
        let sql = "INCLUDE PERFETTO MODULE slices.with_context;
                   CREATE PERFETTO TABLE answers AS SELECT 42 AS answer;
                   SELECT answer FROM answers";
        let r = run(&conn, sql).unwrap();
        assert_eq!(r.rows, vec![vec![Cell::Int(42)]]);
        let e = run(&conn, "INCLUDE PERFETTO MODULE no.such.module").unwrap_err();
        assert!(e.contains("no.such.module"), "{e}");
        let e = run(
            &conn,
            "INCLUDE PERFETTO MODULE slices.flat_slices; select 1",
        )
        .unwrap_err();
        assert!(e.contains("unknown module 'slices.flat_slices'"), "{e}");
    }

    #[test]
    fn a_long_query_is_interrupted_from_another_thread() {
        let (tx, rx) = mpsc::channel();
        let runner = QueryRunner::spawn(tx).unwrap();
        let db =
            std::env::temp_dir().join(format!("sextant-interrupt-{}.sqlite", std::process::id()));
        crate::import::import_files(
            "demo.zip",
            crate::source::open_bytes("demo.zip", crate::demo::DEMO_ZIP.to_vec()).unwrap(),
            &db,
        )
        .unwrap();
        let dbref = DbRef {
            path: db.clone(),
            generation: 1,
        };
        runner.run(
            &dbref,
            7,
            "with recursive n(i) as (select 1 union all select i + 1 from n) select count(*) from n".into(),
        );
        std::thread::sleep(Duration::from_millis(300));
        runner.interrupt();
        let event = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the query stopped");
        match event {
            AppEvent::Query(QueryEvent::Done { id, result, .. }) => {
                assert_eq!(id, 7);
                assert_eq!(result, Err("interrupted".to_string()));
            }
            other => panic!("{other:?}"),
        }
        crate::tui::importer::remove_db(&db);
    }

    #[test]
    fn history_escaping_round_trips() {
        for s in ["a\\b", "x\ny", "trailing\\", "\\n literal"] {
            assert_eq!(decode(&encode(s)), s);
        }
    }

    #[test]
    fn esc_interrupts_a_running_query_and_leaves_the_prompt_otherwise() {
        let mut q = QueryState::new(None);
        type_str(&mut q, "select 1");
        assert!(q.running());
        assert_eq!(
            q.on_key(key(KeyCode::Esc), Instant::now(), 10),
            Some(QueryCommand::Interrupt)
        );
        q.on_event(QueryEvent::Done {
            id: 1,
            result: Err("interrupted".into()),
            elapsed: Duration::ZERO,
        });
        assert!(q.editing);
        q.on_key(key(KeyCode::Esc), Instant::now(), 10);
        assert!(!q.editing);
    }
}

//! App state and what events do to it. Drawing reads this state ([`super::ui`]); key
//! handling changes it and returns [`Effect`]s — work for the threads — which the event
//! loop carries out. Nothing here blocks.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;

use crate::import::{ImportSummary, Progress, Stage};

use super::chooser::{Candidate, ChooserState};
use super::clock_editor::EditCommand;
use super::clocks::ClocksState;
use super::event::AppEvent;
use super::importer::{ImportEvent, ImportFailure};
use super::logs::{LogsCommand, LogsState};
use super::profile::ProfileState;
use super::query::{QueryCommand, QueryState};
use super::stats::StatsState;
use super::theme::Theme;
use super::timeline::details::DetailsRequest;
use super::timeline::TimelineState;
use super::worker::{Answer, DbRef, Request};
use super::{help, ui};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Timeline,
    Clocks,
    Stats,
    Query,
    Profile,
    Logs,
    TraceTime,
    Help,
}

impl Pane {
    pub const ALL: [Pane; 8] = [
        Pane::Timeline,
        Pane::Clocks,
        Pane::Stats,
        Pane::Query,
        Pane::Profile,
        Pane::Logs,
        Pane::TraceTime,
        Pane::Help,
    ];

    pub fn key(self) -> char {
        match self {
            Pane::Timeline => '1',
            Pane::Clocks => '2',
            Pane::Stats => '3',
            Pane::Query => '4',
            Pane::Profile => '5',
            Pane::Logs => '6',
            Pane::TraceTime => 't',
            Pane::Help => '?',
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Timeline => "Timeline",
            Pane::Clocks => "Clock graph",
            Pane::Stats => "Stats",
            Pane::Query => "SQL",
            Pane::Profile => "CPU profile",
            Pane::Logs => "Log",
            Pane::TraceTime => "trace_time",
            Pane::Help => "Help",
        }
    }
}

/// Work for the threads.
#[derive(Debug, PartialEq)]
pub enum Effect {
    Load(DbRef, Request),
    RunQuery {
        db: DbRef,
        id: u64,
        sql: String,
    },
    InterruptQuery,
    /// Put trace time on this clock node.
    Replace(u32),
    /// Preview or apply a manifest edit, or write the result.
    Edit(EditCommand),
}

/// A slice marked on the timeline (`M`): the moment another file's slice is aligned to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub file: String,
    pub ts: i64,
    pub name: String,
}

/// Progress of the import (or of a trace_time switch).
#[derive(Clone, Debug)]
pub struct Running {
    pub progress: Option<Progress>,
    pub started: Instant,
    pub elapsed: Duration,
    /// Events parsed: the total the writing stage works through.
    pub parsed: u64,
}

impl Running {
    fn new(now: Instant) -> Running {
        Running {
            progress: None,
            started: now,
            elapsed: Duration::ZERO,
            parsed: 0,
        }
    }

    fn update(&mut self, p: Progress, now: Instant) {
        if matches!(p.stage, Stage::Parsing { .. } | Stage::Placing) {
            self.parsed = self.parsed.max(p.events);
        }
        self.progress = Some(p);
        self.elapsed = now.saturating_duration_since(self.started);
    }

    /// Overall progress in [0, 1]: parsing is most of the work, writing the rest.
    pub fn fraction(&self) -> f64 {
        let Some(p) = &self.progress else { return 0.0 };
        let part = |done: f64, total: f64| {
            if total > 0.0 {
                (done / total).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        match p.stage {
            Stage::Reading => 0.0,
            Stage::Parsing { .. } => 0.6 * part(p.bytes_done as f64, p.bytes_total as f64),
            Stage::Placing => 0.6,
            Stage::Writing => 0.65 + 0.35 * part(p.events as f64, self.parsed as f64),
            Stage::Done => 1.0,
        }
    }
}

#[derive(Clone, Debug)]
pub enum ImportStatus {
    Running(Running),
    /// Imported (with a summary) or opened as a database (without).
    Done(Option<ImportSummary>),
    Failed(ImportFailure),
}

pub struct App {
    /// What was opened, as the user named it.
    pub title: String,
    pub pane: Pane,
    /// The pane Help or the trace_time chooser was opened from (Esc goes back to it).
    back: Pane,
    pub theme: Theme,
    /// The terminal's size.
    pub size: Rect,
    pub import: ImportStatus,
    /// A trace_time switch in progress.
    pub replacing: Option<Running>,
    pub db: Option<DbRef>,
    pub timeline: TimelineState,
    pub stats: StatsState,
    pub clocks: ClocksState,
    pub query: QueryState,
    pub logs: LogsState,
    pub chooser: ChooserState,
    pub profile: ProfileState,
    pub help_scroll: u16,
    pub quit: bool,
    /// A slice marked for aligning another file's slice to it.
    pub mark: Option<Mark>,
    /// A one-line notice for the status bar (replaces the summary until the next key).
    pub notice: Option<String>,
    timeline_loading: bool,
    last_reload: Option<Instant>,
    /// How long the last timeline load took: reloads during an import wait three times
    /// that, so the loader takes at most about a third of a core from the importer.
    last_load_took: Duration,
    rows_at_reload: u64,
    /// Where the import writes, readable once writing starts.
    pending_db: Option<PathBuf>,
}

/// How often the timeline reloads while rows land.
const RELOAD_EVERY: Duration = Duration::from_millis(1000);

impl App {
    pub fn new(title: String, theme: Theme, size: Rect, query: QueryState, now: Instant) -> App {
        let input = super::sanitize::sanitize(&title).into_owned();
        App {
            timeline: TimelineState::new(input.clone()),
            title,
            pane: Pane::Timeline,
            theme,
            size,
            import: ImportStatus::Running(Running::new(now)),
            replacing: None,
            db: None,
            stats: StatsState::new(input),
            back: Pane::Timeline,
            clocks: ClocksState::default(),
            query,
            logs: LogsState::default(),
            chooser: ChooserState::default(),
            profile: ProfileState::default(),
            help_scroll: 0,
            quit: false,
            mark: None,
            notice: None,
            timeline_loading: false,
            last_reload: None,
            last_load_took: Duration::ZERO,
            rows_at_reload: 0,
            pending_db: None,
        }
    }

    /// The database the importer is writing, readable from its first commit on.
    pub fn set_pending_db(&mut self, path: PathBuf) {
        self.pending_db = Some(path);
    }

    /// Something is running whose elapsed time is on screen.
    pub fn busy(&self) -> bool {
        matches!(self.import, ImportStatus::Running(_))
            || self.replacing.is_some()
            || self.query.running()
    }

    pub fn tick(&mut self, now: Instant) {
        if let ImportStatus::Running(r) = &mut self.import {
            r.elapsed = now.saturating_duration_since(r.started);
        }
        if let Some(r) = &mut self.replacing {
            r.elapsed = now.saturating_duration_since(r.started);
        }
        self.query.tick(now);
    }

    pub fn handle(&mut self, event: AppEvent, now: Instant) -> Vec<Effect> {
        match event {
            AppEvent::Input(Event::Key(key)) if key.kind != KeyEventKind::Release => {
                // Over SSH an Esc followed quickly by a key arrives as Alt+key: take it as
                // the two keys the user typed.
                if let (KeyCode::Char(c), true) =
                    (key.code, key.modifiers.contains(KeyModifiers::ALT))
                {
                    let mut effects =
                        self.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), now);
                    if !self.quit {
                        let plain =
                            KeyEvent::new(KeyCode::Char(c), key.modifiers - KeyModifiers::ALT);
                        effects.extend(self.on_key(plain, now));
                    }
                    return effects;
                }
                self.on_key(key, now)
            }
            AppEvent::Input(Event::Mouse(m)) if self.pane == Pane::Timeline => {
                let area = ui::body_area(self.size);
                let request = self.timeline.on_mouse(m, area);
                self.timeline_effects(request)
            }
            AppEvent::Input(Event::Resize(w, h)) => {
                self.size = Rect::new(0, 0, w, h);
                Vec::new()
            }
            AppEvent::Input(_) => Vec::new(),
            AppEvent::Import(e) => self.on_import(e, now),
            AppEvent::Data { generation, answer } => self.on_answer(generation, answer, now),
            AppEvent::Query(e) => {
                self.query.on_event(e);
                Vec::new()
            }
            AppEvent::Shutdown(_) => {
                self.quit = true;
                Vec::new()
            }
        }
    }

    fn details_effect(&self, request: Option<DetailsRequest>) -> Vec<Effect> {
        match (request, &self.db) {
            (Some(r), Some(db)) => vec![Effect::Load(db.clone(), Request::Details(r))],
            _ => Vec::new(),
        }
    }

    /// The timeline's work after a key or a click: a details lookup, an area's aggregates.
    fn timeline_effects(&mut self, request: Option<DetailsRequest>) -> Vec<Effect> {
        let mut effects = self.details_effect(request);
        if let (Some(spec), Some(db)) = (self.timeline.take_area_request(), &self.db) {
            effects.push(Effect::Load(db.clone(), Request::Aggregates(spec)));
        }
        effects
    }

    /// A text field has focus: keys type into it.
    fn editing(&self) -> bool {
        match self.pane {
            Pane::Query => self.query.editing,
            Pane::Logs => self.logs.editing(),
            Pane::Timeline => self.timeline.editing(),
            Pane::Profile => self.profile.editing,
            Pane::Clocks => self.clocks.edit.editing(),
            _ => false,
        }
    }

    fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        self.notice = None;
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return Vec::new();
        }
        if !self.editing() {
            let switch_to = match key.code {
                KeyCode::Char('q') => {
                    self.quit = true;
                    return Vec::new();
                }
                // Esc (or the key that opened it) leaves Help and the chooser for the pane
                // they were opened from.
                KeyCode::Esc if matches!(self.pane, Pane::Help | Pane::TraceTime) => {
                    Some(self.back)
                }
                KeyCode::Char(c) if c == self.pane.key() && self.pane == Pane::Help => {
                    Some(self.back)
                }
                KeyCode::Tab => Some(self.next_pane(1)),
                KeyCode::BackTab => Some(self.next_pane(Pane::ALL.len() - 1)),
                KeyCode::Char(c) => Pane::ALL.iter().copied().find(|p| p.key() == c),
                _ => None,
            };
            if let Some(pane) = switch_to {
                if pane == Pane::Help && self.pane != Pane::Help {
                    // Help opens at the keys of the pane the user came from.
                    self.help_scroll =
                        help::section_line_at(self.pane, ui::body_area(self.size).width);
                }
                if matches!(pane, Pane::Help | Pane::TraceTime)
                    && !matches!(self.pane, Pane::Help | Pane::TraceTime)
                {
                    self.back = self.pane;
                }
                self.pane = pane;
                if pane == Pane::Query {
                    self.query.editing = true;
                }
                return Vec::new();
            }
        } else if key.code == KeyCode::Tab || key.code == KeyCode::BackTab {
            // Tab still moves between panes from a text field; Esc is not needed first.
            let step = if key.code == KeyCode::Tab {
                1
            } else {
                Pane::ALL.len() - 1
            };
            self.pane = self.next_pane(step);
            return Vec::new();
        }
        let area = ui::body_area(self.size);
        let page = area.height.saturating_sub(4).max(1) as usize;
        match self.pane {
            Pane::Timeline if key.code == KeyCode::Char('M') && !self.editing() => {
                self.mark_or_align(now)
            }
            Pane::Timeline => {
                let request = self.timeline.on_key(key, area);
                self.timeline_effects(request)
            }
            Pane::Clocks => match self.clocks.on_key(key, page) {
                Some(command) => self.edit_effect(command, now),
                None => Vec::new(),
            },
            Pane::Stats => {
                self.stats.on_key(key, page);
                Vec::new()
            }
            Pane::Profile => {
                self.profile.on_key(key, page);
                Vec::new()
            }
            Pane::Query if !self.query.editing && key.code == KeyCode::Char('T') => {
                self.result_to_timeline();
                Vec::new()
            }
            Pane::Query => match self.query.on_key(key, now, page) {
                Some(QueryCommand::Run { id, sql }) => match &self.db {
                    Some(db) => vec![Effect::RunQuery {
                        db: db.clone(),
                        id,
                        sql,
                    }],
                    None => {
                        self.query.on_event(super::query::QueryEvent::Done {
                            id,
                            result: Err(
                                "there is no database to query yet: wait for the import".into()
                            ),
                            elapsed: Duration::ZERO,
                        });
                        Vec::new()
                    }
                },
                Some(QueryCommand::Interrupt) => vec![Effect::InterruptQuery],
                Some(QueryCommand::Show(row)) => match self.query.row_place(row) {
                    Ok((ts, dur, slice)) => {
                        // The row's slice is selected: its track must show above the details.
                        let timeline_page = super::timeline::selected_page(
                            ui::body_area(self.size),
                            &self.timeline,
                        )
                        .max(1);
                        let request = self.timeline.show_span(ts, dur, slice, timeline_page);
                        self.pane = Pane::Timeline;
                        self.timeline_effects(request)
                    }
                    Err(e) => {
                        self.notice = Some(format!("cannot put the row on the timeline: {e}"));
                        Vec::new()
                    }
                },
                None => Vec::new(),
            },
            Pane::Logs => {
                let data = self.timeline.data.clone();
                let page = super::logs::list_rows(area.height);
                if let Some(LogsCommand::Jump(ts)) = self.logs.on_key(key, page, data.as_deref()) {
                    self.timeline.focus(ts);
                    self.pane = Pane::Timeline;
                }
                Vec::new()
            }
            Pane::TraceTime => match self.chooser.on_key(key) {
                Some(node) => {
                    self.replacing = Some(Running::new(now));
                    vec![Effect::Replace(node)]
                }
                None => Vec::new(),
            },
            Pane::Help => {
                help::on_key(&mut self.help_scroll, key, area);
                Vec::new()
            }
        }
    }

    /// `T` on a query result: its rows become tracks pinned on the timeline.
    fn result_to_timeline(&mut self) {
        let Some(result) = &self.query.result else {
            self.notice = Some("run a query with ts and dur columns first".into());
            return;
        };
        // Named by the query that made the result (a later one may have failed).
        match super::timeline::debug::from_result(&self.query.result_sql, result) {
            Ok(tracks) => {
                self.timeline.add_debug_tracks(tracks);
                self.pane = Pane::Timeline;
            }
            Err(e) => self.notice = Some(format!("cannot put the result on the timeline: {e}")),
        }
    }

    fn edit_effect(&mut self, command: EditCommand, now: Instant) -> Vec<Effect> {
        if matches!(command, EditCommand::Apply(_)) {
            self.replacing = Some(Running::new(now));
        }
        vec![Effect::Edit(command)]
    }

    /// `M` on the timeline: marks the selected slice; on a slice of another file, proposes
    /// the offset that makes the two start together (in the clock graph's editor).
    fn mark_or_align(&mut self, now: Instant) -> Vec<Effect> {
        use super::timeline::details::Source;
        use super::timeline::DetailsView;
        if self.clocks.edit.database {
            self.notice = Some(
                "M re-places files, and a database has none: open the traces (or their archive)"
                    .into(),
            );
            return Vec::new();
        }
        let DetailsView::Ready(d) = &self.timeline.details else {
            self.notice = Some("select a slice first (Enter), then M marks it".into());
            return Vec::new();
        };
        let file = match &d.source {
            Source::File(Some(f)) => f.clone(),
            _ => {
                self.notice = Some(
                    "this slice's file is not known (a single-file trace has nothing to align)"
                        .into(),
                );
                return Vec::new();
            }
        };
        match self.mark.clone() {
            Some(mark) if mark.file != file => {
                let trace_clock = match &self.clocks.graph {
                    Some(Ok(g)) => g
                        .nodes
                        .iter()
                        .find(|n| n.trace_time)
                        .and_then(|n| crate::manifest::clock_id(&n.clock_name)),
                    _ => None,
                };
                let aligned = self
                    .clocks
                    .edit
                    .align(&file, d.ts, &mark.file, mark.ts, trace_clock);
                self.mark = None;
                match aligned {
                    Ok(Some(c)) => {
                        self.pane = Pane::Clocks;
                        self.edit_effect(c, now)
                    }
                    Ok(None) => Vec::new(),
                    // Nothing to edit: the timeline stays, and says why.
                    Err(e) => {
                        self.notice = Some(format!("cannot align: {e}"));
                        Vec::new()
                    }
                }
            }
            _ => {
                self.notice = Some(format!(
                    "marked {} of {file} · M on the slice of another file that happened at the same moment aligns them",
                    super::sanitize::sanitize(&d.name)
                ));
                self.mark = Some(Mark {
                    file,
                    ts: d.ts,
                    name: d.name.clone(),
                });
                Vec::new()
            }
        }
    }

    fn pane_index(&self) -> usize {
        Pane::ALL.iter().position(|p| *p == self.pane).unwrap_or(0)
    }

    /// Whether a pane has its tab: the CPU profile only when the trace has samples, the
    /// Android log only when it has log lines (the key still opens either and says why).
    pub fn pane_shown(&self, pane: Pane) -> bool {
        match pane {
            Pane::Profile => self.profile.has_samples() || self.pane == Pane::Profile,
            Pane::Logs => {
                self.pane == Pane::Logs
                    || self
                        .timeline
                        .data
                        .as_ref()
                        .is_some_and(|d| !d.logs.is_empty())
            }
            _ => true,
        }
    }

    /// The pane `step` tabs on (modulo their number), skipping panes without a tab.
    fn next_pane(&self, step: usize) -> Pane {
        let n = Pane::ALL.len();
        let mut i = self.pane_index();
        for _ in 0..n {
            i = (i + step) % n;
            if Pane::ALL[i] == self.pane || self.pane_shown(Pane::ALL[i]) {
                break;
            }
        }
        Pane::ALL[i]
    }

    /// Every pane's data, from a new database (a new generation: workers reopen).
    fn load_all(&mut self, path: PathBuf, candidates: bool) -> Vec<Effect> {
        let generation = self.db.as_ref().map_or(1, |d| d.generation + 1);
        let db = DbRef { path, generation };
        self.db = Some(db.clone());
        self.timeline_loading = true;
        let mut effects = vec![
            Effect::Load(db.clone(), Request::Timeline),
            Effect::Load(db.clone(), Request::Stats),
            Effect::Load(db.clone(), Request::Clocks),
            Effect::Load(db.clone(), Request::Profile),
        ];
        if candidates {
            effects.push(Effect::Load(db, Request::Candidates));
        }
        effects
    }

    /// A trace_time switch or a manifest edit put a new database in place; the SQL pane's
    /// query runs again on it.
    fn replaced(
        &mut self,
        db: PathBuf,
        summary: ImportSummary,
        candidates: Vec<crate::import::TraceTimeCandidate>,
        now: Instant,
    ) -> Vec<Effect> {
        self.chooser
            .set(candidates.iter().map(Candidate::from).collect());
        self.import = ImportStatus::Done(Some(summary));
        // The old details refer to rows of the old database.
        self.timeline.selection = None;
        self.timeline.details = Default::default();
        let interrupt = self.query.running();
        let mut effects = self.load_all(db, false);
        if let (Some(QueryCommand::Run { id, sql }), Some(db)) =
            (self.query.rerun(now), self.db.clone())
        {
            if interrupt {
                effects.push(Effect::InterruptQuery);
            }
            effects.push(Effect::RunQuery { db, id, sql });
        }
        effects
    }

    fn on_import(&mut self, event: ImportEvent, now: Instant) -> Vec<Effect> {
        match event {
            ImportEvent::Progress(p) => {
                if let Some(r) = &mut self.replacing {
                    r.update(p, now);
                    return Vec::new();
                }
                let writing_rows = (p.stage == Stage::Writing).then_some(p.events);
                if let ImportStatus::Running(r) = &mut self.import {
                    r.update(p, now);
                }
                // Rows are landing: reload the timeline now and then, never twice at once.
                if let (Some(rows), Some(path)) = (writing_rows, &self.pending_db) {
                    let due = self.last_reload.is_none_or(|t| {
                        now.duration_since(t) >= RELOAD_EVERY.max(self.last_load_took * 3)
                    });
                    if rows > self.rows_at_reload && due && !self.timeline_loading {
                        self.timeline_loading = true;
                        self.last_reload = Some(now);
                        self.rows_at_reload = rows;
                        let db = DbRef {
                            path: path.clone(),
                            generation: 0,
                        };
                        self.db = Some(db.clone());
                        return vec![Effect::Load(db, Request::Timeline)];
                    }
                }
                Vec::new()
            }
            ImportEvent::Finished {
                db,
                summary,
                candidates,
            } => {
                self.import = ImportStatus::Done(Some(summary));
                self.chooser.can_switch = true;
                self.chooser
                    .set(candidates.iter().map(Candidate::from).collect());
                self.load_all(db, false)
            }
            ImportEvent::Opened { db } => {
                self.import = ImportStatus::Done(None);
                self.chooser.can_switch = false;
                self.clocks.edit.database = true;
                self.load_all(db, true)
            }
            ImportEvent::Failed(f) if matches!(self.import, ImportStatus::Done(_)) => {
                // The importer stopped during a trace_time switch: the trace on screen is
                // still whole.
                self.on_import(ImportEvent::ReplaceFailed(f.message), now)
            }
            ImportEvent::Failed(f) => {
                self.import = ImportStatus::Failed(f);
                Vec::new()
            }
            ImportEvent::Replaced {
                db,
                summary,
                candidates,
            } => {
                self.replacing = None;
                let label = self.chooser.switching.take().unwrap_or_default();
                self.chooser.message = Some(Ok(format!(
                    "trace time is now on {label}: {} events placed, {} dropped",
                    summary.events, summary.dropped_events
                )));
                self.replaced(db, summary, candidates, now)
            }
            ImportEvent::Manifest { manifest, members } => {
                self.clocks.edit.set_manifest(manifest, members);
                Vec::new()
            }
            ImportEvent::Previewed(result) => {
                self.clocks.edit.on_preview(result);
                Vec::new()
            }
            ImportEvent::Applied {
                db,
                summary,
                candidates,
            } => {
                self.replacing = None;
                self.clocks
                    .edit
                    .on_applied(summary.events as u64, summary.dropped_events);
                self.replaced(db, summary, candidates, now)
            }
            ImportEvent::ApplyFailed(message) => {
                self.replacing = None;
                self.clocks.edit.on_apply_failed(message);
                Vec::new()
            }
            ImportEvent::Written(result) => {
                self.clocks.edit.message = Some(match result {
                    Ok(path) if path.extension().is_some_and(|e| e == "json") => {
                        Ok(format!("wrote {} (the manifest in effect)", path.display()))
                    }
                    Ok(path) => Ok(format!(
                        "wrote {} (the files and the edited manifest)",
                        path.display()
                    )),
                    Err(e) => Err(format!("not written: {e}")),
                });
                Vec::new()
            }
            ImportEvent::ReplaceFailed(message) => {
                self.replacing = None;
                self.chooser.switching = None;
                self.chooser.message = Some(Err(format!("the switch failed: {message}")));
                Vec::new()
            }
        }
    }

    fn on_answer(&mut self, generation: u64, answer: Answer, now: Instant) -> Vec<Effect> {
        let current = self.db.as_ref().map(|d| d.generation);
        if matches!(answer, Answer::Timeline(_)) {
            self.timeline_loading = false;
            if let Some(asked) = self.last_reload {
                self.last_load_took = now.saturating_duration_since(asked);
            }
        }
        if current != Some(generation) {
            return Vec::new();
        }
        match answer {
            Answer::Timeline(Ok(data)) => self.timeline.set_data(data),
            Answer::Timeline(Err(e)) => {
                // While rows are still landing a read can fail harmlessly; the next one follows.
                if !matches!(self.import, ImportStatus::Running(_)) {
                    self.timeline.error = Some(e);
                }
            }
            Answer::Details(request, result) => self.timeline.on_details(request, result),
            Answer::Stats(r) => self.stats.set_rows(r),
            Answer::Clocks(r) => {
                self.clocks.graph = Some(r.map(|mut g| {
                    g.name_lone_file(&self.stats.input);
                    g
                }));
            }
            Answer::Profile(r) => self.profile.set_data(r),
            Answer::Candidates(r) => self.chooser.candidates = Some(r),
            Answer::Aggregates(spec, r) => self.timeline.on_aggregates(&spec, r),
        }
        Vec::new()
    }
}

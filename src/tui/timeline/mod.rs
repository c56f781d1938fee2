//! The timeline pane: a time ruler, tracks grouped machine → process → thread (groups
//! collapsible), slices nested by depth with their names where they fit, counters as bar
//! charts and CPU sched tracks; a details panel for the selected slice with its flows; and
//! search over slice names. Every frame costs the same at any zoom: see [`index`].

pub mod area;
pub mod debug;
pub mod details;
mod draw;
pub mod filter;
mod flows;
pub mod index;
pub mod load;
pub mod ml;
pub mod order;
pub(crate) use draw::truncate_label;

pub use draw::draw;
use draw::*;

use std::collections::HashSet;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use self::details::{Details, DetailsRequest, Source};
use self::index::{Columns, Lane};
use self::load::{TimelineData, TrackData};
use super::format;
use super::input::{InputAction, LineInput};
use super::theme::{ColorMode, Theme};

/// A collapsible group of tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    Machine(i64),
    Process(i64),
    /// A machine's Kernel threads group.
    Kernel(i64),
    /// A collapsed thread shows only the top lane of its tracks.
    Thread(i64),
}

/// One line of the track area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    Machine {
        machine: usize,
    },
    Process {
        machine: usize,
        process: usize,
    },
    /// The header of a machine's Kernel threads group.
    Kernel {
        machine: usize,
    },
    Lane {
        track: usize,
        depth: usize,
        indent: u8,
        /// The thread whose collapse this lane's track follows.
        thread: Option<i64>,
    },
    Counter {
        track: usize,
        indent: u8,
    },
    /// A lane of a query result's track (`debug_tracks[track]`).
    Debug {
        track: usize,
        depth: usize,
    },
}

/// The rows shown for the data with these groups collapsed (no filter, no pins).
pub fn rows(data: &TimelineData, collapsed: &HashSet<Group>) -> Vec<Row> {
    filter::tree_rows(data, collapsed, None)
}

/// The groups a track sits in, outermost first.
fn groups_of(data: &TimelineData, track: usize) -> Vec<Group> {
    for (mi, m) in data.machines.iter().enumerate() {
        if m.tracks.contains(&track) {
            return vec![Group::Machine(m.id)];
        }
        let kernel_from = filter::kernel_from(data, mi);
        for (pi, p) in m.processes.iter().enumerate() {
            let mut groups = vec![Group::Machine(m.id)];
            if pi >= kernel_from {
                groups.push(Group::Kernel(m.id));
            }
            groups.push(Group::Process(p.upid));
            if p.tracks.contains(&track) {
                return groups;
            }
            for th in &p.threads {
                if th.tracks.contains(&track) {
                    groups.push(Group::Thread(th.utid));
                    return groups;
                }
            }
        }
    }
    Vec::new()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub track: usize,
    pub depth: usize,
    pub index: usize,
    pub id: u32,
}

#[derive(Debug, Default)]
pub enum DetailsView {
    #[default]
    None,
    Loading,
    Ready(Box<Details>),
    Failed(String),
}

#[derive(Debug)]
pub struct Search {
    pub text: String,
    /// Which names match, by name index.
    mask: Vec<bool>,
    pub matches: u64,
}

#[derive(Debug, Default)]
pub struct TimelineState {
    pub data: Option<Arc<TimelineData>>,
    pub error: Option<String>,
    pub view_start: i64,
    pub view_span: i64,
    /// The view shows the whole trace and follows it as more data lands.
    following: bool,
    pub collapsed: HashSet<Group>,
    pub cursor: usize,
    pub scroll: usize,
    pub selection: Option<Selection>,
    pub details: DetailsView,
    pub search_input: Option<LineInput>,
    pub search: Option<Search>,
    pub message: Option<String>,
    /// The name of what was opened, shown as the file of rows from the input itself (a
    /// single trace rather than an archive member).
    pub input: String,
    /// The track filter being typed (`T`).
    pub filter_input: Option<LineInput>,
    /// The track filter in effect.
    pub filter: Option<filter::TrackFilter>,
    /// Pinned tracks (indices in `data.tracks`), shown at the top.
    pub pinned: Vec<usize>,
    /// Groups whose default collapse was applied (so a reload does not undo the user's).
    defaulted: HashSet<Group>,
    /// The area selection (`v`, or a mouse drag).
    pub area: Option<area::Area>,
    /// The tracks the finished area covers.
    pub area_tracks: Vec<usize>,
    /// Its aggregates panel.
    pub aggregates: Option<crate::tui::aggregates::AggregatesPanel>,
    /// Aggregates to compute (taken by the app, run on the worker).
    area_request: Option<crate::db::read::AreaSpec>,
    /// Slices picked from an aggregate row (`Enter`), stepped with `n`/`N`.
    pub highlight: Option<area::Highlight>,
    /// The time mark (`m`).
    pub time_mark: Option<i64>,
    /// Where a mouse drag started: time and row.
    drag: Option<(i64, usize)>,
    /// Query results sent from the SQL pane, pinned at the top.
    pub debug_tracks: Vec<debug::DebugTrack>,
}

/// Where the parts of the pane are, for drawing and for mouse clicks.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub ruler: Rect,
    pub labels: Rect,
    pub lanes: Rect,
    pub details: Option<Rect>,
    pub footer: Rect,
}

pub fn geometry(area: Rect, state: &TimelineState) -> Geometry {
    layout(area, state.aggregates.is_some(), state.selection.is_some())
}

/// How many track rows show once a slice is selected (the details panel takes its room):
/// what a key that selects must scroll by so the selected track stays in view.
pub fn selected_page(area: Rect, state: &TimelineState) -> usize {
    layout(area, state.aggregates.is_some(), true).lanes.height as usize
}

fn layout(area: Rect, aggregates: bool, selected: bool) -> Geometry {
    // A quarter of the width: wider terminals show longer names (up to 56 columns).
    let label_w = (area.width / 4)
        .clamp(12, 56)
        .min(area.width.saturating_sub(10));
    let details_h = if aggregates && area.height >= 14 {
        (area.height / 3).clamp(6, 14)
    } else if selected && area.height >= 14 {
        (area.height / 3).clamp(6, 10)
    } else {
        0
    };
    let ruler = Rect::new(area.x, area.y, area.width, 2.min(area.height));
    let footer_y = area.bottom().saturating_sub(1);
    let tracks_y = ruler.bottom();
    let tracks_h = area.height.saturating_sub(ruler.height + details_h + 1);
    let lanes_x = area.x + label_w + 1;
    Geometry {
        ruler,
        labels: Rect::new(area.x, tracks_y, label_w, tracks_h),
        lanes: Rect::new(
            lanes_x,
            tracks_y,
            area.right().saturating_sub(lanes_x),
            tracks_h,
        ),
        details: (details_h > 0)
            .then(|| Rect::new(area.x, tracks_y + tracks_h, area.width, details_h)),
        footer: Rect::new(area.x, footer_y, area.width, 1.min(area.height)),
    }
}

const MIN_SPAN: i64 = 20;

impl TimelineState {
    /// The pane for the input called `input`, before any data.
    pub fn new(input: String) -> TimelineState {
        TimelineState {
            input,
            ..TimelineState::default()
        }
    }

    pub fn columns(&self, width: u16) -> Columns {
        Columns::new(self.view_start, self.view_span, width)
    }

    /// New data from the loader: keep the view, selection and collapsed groups when they
    /// still make sense.
    pub fn set_data(&mut self, data: Arc<TimelineData>) {
        let first = self.data.is_none();
        // A view that shows none of the trace (trace time moved under it) starts over.
        let lost = self.view_start > data.end || self.view_start + self.view_span < data.start;
        if first || self.following || lost {
            self.fit_all_of(&data);
            self.following = true;
        }
        if let (Some(sel), Some(old)) = (self.selection, &self.data) {
            let old_lane = lane(old, sel.track, sel.depth);
            let ts = old_lane.map(|l| l.ts[sel.index]);
            self.selection = ts.and_then(|ts| {
                let track = data
                    .tracks
                    .iter()
                    .position(|t| t.db_id == old.tracks[sel.track].db_id)?;
                let l = lane(&data, track, sel.depth)?;
                let index = find(l, ts, sel.id)?;
                Some(Selection {
                    track,
                    depth: sel.depth,
                    index,
                    id: sel.id,
                })
            });
            if self.selection.is_none() {
                self.details = DetailsView::None;
            }
        }
        if let Some(s) = &mut self.search {
            s.mask = mask(&data, &s.text);
            s.matches = count_matches(&data, &s.mask);
        }
        for g in &data.arrangement.default_collapsed {
            if self.defaulted.insert(*g) {
                self.collapsed.insert(*g);
            }
        }
        if let Some(old) = &self.data {
            self.pinned = self
                .pinned
                .iter()
                .filter_map(|&t| {
                    let key = old.tracks.get(t).map(track_key)?;
                    data.tracks.iter().position(|n| track_key(n) == key)
                })
                .collect();
        }
        self.data = Some(data);
        self.error = None;
    }

    fn fit_all_of(&mut self, data: &TimelineData) {
        let span = (data.end - data.start).max(MIN_SPAN);
        let pad = span / 50;
        self.view_start = data.start - pad;
        self.view_span = span + 2 * pad;
    }

    fn clamp_view(&mut self) {
        let Some(d) = &self.data else { return };
        let total = (d.end - d.start).max(MIN_SPAN);
        self.view_span = self.view_span.clamp(MIN_SPAN, total.saturating_mul(4));
        let lo = d.start - self.view_span / 2;
        let hi = d.end - self.view_span / 2;
        self.view_start = self.view_start.clamp(lo, hi.max(lo));
    }

    /// Zooms by `factor` (< 1 zooms in) keeping time `anchor` at the same column.
    fn zoom(&mut self, factor: f64, anchor: Option<i64>) {
        let anchor = anchor.unwrap_or(self.view_start + self.view_span / 2);
        let new_span = ((self.view_span as f64) * factor)
            .round()
            .max(MIN_SPAN as f64) as i64;
        let rel = (anchor - self.view_start) as f64 / self.view_span as f64;
        self.view_start = anchor - (rel * new_span as f64).round() as i64;
        self.view_span = new_span;
        self.following = false;
        self.clamp_view();
    }

    fn pan(&mut self, fraction: f64) {
        self.view_start += (self.view_span as f64 * fraction).round() as i64;
        self.following = false;
        self.clamp_view();
    }

    /// Centres the view on `ts` (from another pane: a log line), keeping the zoom.
    pub fn focus(&mut self, ts: i64) {
        if self.data.is_none() {
            return;
        }
        self.view_start = ts - self.view_span / 2;
        self.following = false;
        self.clamp_view();
    }

    /// Puts the view on a span (a query row's `ts` and `dur`); when `slice` is the id of a
    /// slice starting at `ts` on the timeline, selects it too.
    pub fn show_span(
        &mut self,
        ts: i64,
        dur: Option<i64>,
        slice: Option<i64>,
        page: usize,
    ) -> Option<DetailsRequest> {
        let data = self.data.clone()?;
        let found = slice.and_then(|id| {
            let id = u32::try_from(id).ok()?;
            slice_lanes(&data).find_map(|(track, depth, l)| {
                find(l, ts, id).map(|index| Selection {
                    track,
                    depth,
                    index,
                    id,
                })
            })
        });
        let request = found.and_then(|sel| self.reveal(sel, page));
        match dur {
            Some(d) if d > 0 => self.fit(ts, ts.saturating_add(d)),
            _ => self.focus(ts),
        }
        request
    }

    fn fit(&mut self, start: i64, end: i64) {
        let span = (end - start).max(MIN_SPAN);
        let pad = (span / 10).max(1);
        self.view_start = start - pad;
        self.view_span = span + 2 * pad;
        self.following = false;
        self.clamp_view();
    }

    /// The rows on screen: the pinned tracks, then the tree narrowed by the filter.
    pub fn visible_rows(&self) -> Vec<Row> {
        let Some(d) = self.data.as_ref() else {
            return Vec::new();
        };
        let mut out = self.debug_rows();
        out.extend(filter::pinned_rows(d, &self.pinned));
        out.extend(filter::tree_rows(d, &self.collapsed, self.filter.as_ref()));
        out
    }

    fn debug_rows(&self) -> Vec<Row> {
        let mut out = Vec::new();
        for (track, t) in self.debug_tracks.iter().enumerate() {
            for depth in 0..t.lanes.len().max(1) {
                out.push(Row::Debug { track, depth });
            }
        }
        out
    }

    /// How many rows the pinned tracks (query results first) take.
    pub fn pinned_count(&self) -> usize {
        self.debug_rows().len()
            + self
                .data
                .as_ref()
                .map_or(0, |d| filter::pinned_rows(d, &self.pinned).len())
    }

    /// A query result's tracks, pinned at the top.
    /// A result pinned already (`T` pressed twice) is not pinned again.
    pub fn add_debug_tracks(&mut self, tracks: Vec<debug::DebugTrack>) {
        let before = tracks.len();
        let tracks: Vec<_> = tracks
            .into_iter()
            .filter(|t| {
                !self
                    .debug_tracks
                    .iter()
                    .any(|d| d.label == t.label && d.order == t.order)
            })
            .collect();
        self.cursor = 0;
        self.scroll = 0;
        if tracks.is_empty() && before > 0 {
            self.message = Some("this result is pinned on top already".into());
            return;
        }
        let n: usize = tracks.iter().map(|t| t.order.len()).sum();
        self.debug_tracks.extend(tracks);
        self.message = Some(format!(
            "{n} query rows pinned on top · ] [ step through them · p removes the track"
        ));
    }

    fn keep_cursor_visible(&mut self, page: usize, total: usize) {
        self.cursor = self.cursor.min(total.saturating_sub(1));
        self.scroll = filter::scroll_for(
            self.cursor,
            self.scroll,
            self.pinned_count(),
            page.max(1),
            total,
        );
    }

    /// `p`: pins the track under the cursor, or unpins it.
    fn toggle_pin(&mut self, page: usize) {
        let all = self.visible_rows();
        let track = match all.get(self.cursor) {
            Some(Row::Lane { track, .. }) | Some(Row::Counter { track, .. }) => *track,
            Some(Row::Debug { track, .. }) => {
                if *track < self.debug_tracks.len() {
                    self.debug_tracks.remove(*track);
                }
                self.message = Some("query track removed".into());
                let total = self.visible_rows().len();
                self.keep_cursor_visible(page, total);
                return;
            }
            _ => {
                self.message = Some("p pins a track: move to one first".into());
                return;
            }
        };
        if let Some(i) = self.pinned.iter().position(|&t| t == track) {
            self.pinned.remove(i);
            self.message = Some("unpinned".into());
        } else {
            self.pinned.push(track);
            let label = self
                .data
                .as_ref()
                .and_then(|d| d.tracks.get(track))
                .map_or(String::new(), |t| t.label.clone());
            self.message = Some(format!("pinned {label} · p on it again unpins"));
        }
        let total = self.visible_rows().len();
        self.keep_cursor_visible(page, total);
    }

    /// A new filter text: the cursor goes back to the top.
    fn set_filter(&mut self, text: &str) {
        let f = filter::TrackFilter::new(text);
        self.filter = (!f.is_empty()).then_some(f);
        self.cursor = 0;
        self.scroll = 0;
    }

    fn toggle(&mut self, group: Group) {
        if !self.collapsed.remove(&group) {
            self.collapsed.insert(group);
        }
    }

    fn select(&mut self, sel: Option<Selection>) -> Option<DetailsRequest> {
        self.selection = sel;
        let request = self.request_for(sel?)?;
        self.details = DetailsView::Loading;
        Some(request)
    }

    /// The details lookup for a selection: which table depends on the track.
    fn request_for(&self, sel: Selection) -> Option<DetailsRequest> {
        let id = i64::from(sel.id);
        Some(match self.data.as_ref()?.tracks.get(sel.track)?.data {
            TrackData::Sched(_) => DetailsRequest::Sched(id),
            TrackData::ThreadState(_) => DetailsRequest::ThreadState(id),
            TrackData::State(_) => DetailsRequest::State(id),
            TrackData::Samples(_) => DetailsRequest::Sample(sel.id),
            TrackData::Slices(_) | TrackData::Counter(_) => DetailsRequest::Slice(id),
        })
    }

    /// Selects and shows a slice: opens its groups, moves the cursor to its lane, scrolls
    /// the view to it if it is off screen.
    fn reveal(&mut self, sel: Selection, page: usize) -> Option<DetailsRequest> {
        let data = self.data.clone()?;
        for g in groups_of(&data, sel.track) {
            if !matches!(g, Group::Thread(_)) || sel.depth > 0 {
                self.collapsed.remove(&g);
            }
        }
        let all = self.visible_rows();
        if let Some(pos) = all.iter().position(
            |r| matches!(r, Row::Lane { track, depth, .. } if *track == sel.track && *depth == sel.depth),
        ) {
            self.cursor = pos;
            self.keep_cursor_visible(page, all.len());
        }
        if let Some(l) = lane(&data, sel.track, sel.depth) {
            let (ts, end) = (l.ts[sel.index], l.end[sel.index]);
            if end < self.view_start || ts > self.view_start + self.view_span {
                self.view_start = ts - self.view_span / 2;
                self.following = false;
                self.clamp_view();
            }
        }
        self.select(Some(sel))
    }

    /// Selects slice `index` of a lane and shows it.
    fn reveal_index(
        &mut self,
        track: usize,
        depth: usize,
        index: usize,
        page: usize,
    ) -> Option<DetailsRequest> {
        let data = self.data.clone()?;
        let id = *lane(&data, track, depth)?.id.get(index)?;
        self.reveal(
            Selection {
                track,
                depth,
                index,
                id,
            },
            page,
        )
    }

    pub fn on_details(&mut self, request: DetailsRequest, result: Result<Box<Details>, String>) {
        let Some(sel) = self.selection else { return };
        let current = self.request_for(sel) == Some(request);
        if current {
            self.details = match result {
                Ok(d) => DetailsView::Ready(d),
                Err(e) => DetailsView::Failed(e),
            };
        }
    }

    /// A key for the timeline; `area` is the pane's area. Returns a details lookup to run.
    pub fn on_key(&mut self, key: KeyEvent, area: Rect) -> Option<DetailsRequest> {
        let geo = geometry(area, self);
        let page = geo.lanes.height as usize;
        // Keys that select a slice scroll for the rows left beside the details panel.
        let select_page = selected_page(area, self);
        self.message = None;
        if let Some(input) = &mut self.filter_input {
            match input.handle(key) {
                InputAction::Cancel => {
                    self.filter_input = None;
                    self.set_filter("");
                }
                InputAction::Submit => self.filter_input = None,
                _ => {
                    let text = input.text.clone();
                    self.set_filter(&text);
                }
            }
            return None;
        }
        if let Some(input) = &mut self.search_input {
            match input.handle(key) {
                InputAction::Cancel => self.search_input = None,
                InputAction::Submit => {
                    let text = input.text.trim().to_string();
                    self.search_input = None;
                    if text.is_empty() {
                        self.search = None;
                        return None;
                    }
                    let data = self.data.clone()?;
                    let mask = mask(&data, &text);
                    let matches = count_matches(&data, &mask);
                    self.search = Some(Search {
                        text,
                        mask,
                        matches,
                    });
                    return self.search_step(true, select_page);
                }
                _ => {}
            }
            return None;
        }
        let panel_page = geo
            .details
            .map_or(1, |r| crate::tui::aggregates::page(r.height));
        if let Some(request) = self.area_key(key, page, panel_page) {
            return request;
        }
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Char('v') => self.start_area(),
            KeyCode::Char('m') => self.set_mark(),
            KeyCode::Char('w') | KeyCode::Char('+') | KeyCode::Char('=') => {
                self.zoom(1.0 / 1.5, None)
            }
            KeyCode::Char('W') => self.zoom(1.0 / 4.0, None),
            KeyCode::Char('s') | KeyCode::Char('-') => self.zoom(1.5, None),
            KeyCode::Char('S') => self.zoom(4.0, None),
            KeyCode::Char('a') | KeyCode::Char('h') | KeyCode::Left => {
                self.pan(if shift { -0.8 } else { -0.2 })
            }
            KeyCode::Char('A') | KeyCode::Char('H') => self.pan(-0.8),
            KeyCode::Char('d') | KeyCode::Char('l') | KeyCode::Right => {
                self.pan(if shift { 0.8 } else { 0.2 })
            }
            KeyCode::Char('D') | KeyCode::Char('L') => self.pan(0.8),
            KeyCode::Char('j') | KeyCode::Down => self.move_cursor(1, page),
            KeyCode::Char('k') | KeyCode::Up => self.move_cursor(-1, page),
            KeyCode::PageDown => self.move_cursor(page as isize, page),
            KeyCode::PageUp => self.move_cursor(-(page as isize), page),
            KeyCode::Home | KeyCode::Char('g') => self.move_cursor(isize::MIN / 2, page),
            KeyCode::End | KeyCode::Char('G') => self.move_cursor(isize::MAX / 2, page),
            KeyCode::Char('0') => {
                if let Some(d) = self.data.clone() {
                    self.fit_all_of(&d);
                    self.following = true;
                }
            }
            KeyCode::Char('f') => {
                // On a query result's track, the row `[`/`]` last went to (it is no slice,
                // so `f` did nothing there).
                if let Some(Row::Debug { track, .. }) = self.visible_rows().get(self.cursor) {
                    let t = self.debug_tracks.get(*track)?;
                    let (ts, end, _, _) = *t.order.get(t.at?)?;
                    self.fit(ts, end);
                    return None;
                }
                let (data, sel) = (self.data.as_ref()?, self.selection?);
                let l = lane(data, sel.track, sel.depth)?;
                let (ts, end) = (l.ts[sel.index], l.end[sel.index]);
                self.fit(ts, end);
            }
            KeyCode::Char('/') => self.search_input = Some(LineInput::default()),
            KeyCode::Char('T') => {
                let mut input = LineInput::default();
                if let Some(f) = &self.filter {
                    input.set(&f.text);
                }
                self.filter_input = Some(input);
            }
            KeyCode::Char('p') => self.toggle_pin(page),
            KeyCode::Char('n') => return self.search_step(true, select_page),
            KeyCode::Char('N') => return self.search_step(false, select_page),
            KeyCode::Char(']') | KeyCode::Char('.') => {
                return self.step_in_lane(true, geo.lanes.width, select_page)
            }
            KeyCode::Char('[') | KeyCode::Char(',') => {
                return self.step_in_lane(false, geo.lanes.width, select_page)
            }
            KeyCode::Char('c') | KeyCode::Char(' ') => self.toggle_at_cursor(page),
            KeyCode::Char('C') => self.collapse_all(),
            KeyCode::Enter => return self.enter(select_page, geo.lanes.width),
            KeyCode::Esc if self.selection.is_none() && self.filter.is_some() => {
                self.set_filter("");
            }
            KeyCode::Esc => {
                self.selection = None;
                self.details = DetailsView::None;
            }
            _ => {}
        }
        None
    }

    fn move_cursor(&mut self, by: isize, page: usize) {
        let total = self.visible_rows().len();
        self.cursor = self
            .cursor
            .saturating_add_signed(by)
            .min(total.saturating_sub(1));
        self.keep_cursor_visible(page, total);
    }

    fn collapse_all(&mut self) {
        let Some(d) = &self.data else { return };
        let all_collapsed = d
            .machines
            .iter()
            .all(|m| self.collapsed.contains(&Group::Machine(m.id)));
        if all_collapsed {
            // Opens the machines only: the groups closed inside them (the Kernel threads,
            // processes that start closed, what the user closed) stay as they were.
            for m in &d.machines {
                self.collapsed.remove(&Group::Machine(m.id));
            }
        } else {
            for m in &d.machines {
                self.collapsed.insert(Group::Machine(m.id));
            }
        }
        self.cursor = 0;
        self.scroll = 0;
    }

    /// The group the cursor row opens or closes.
    fn group_at(&self, row: Row) -> Option<Group> {
        let d = self.data.as_ref()?;
        match row {
            Row::Machine { machine } => Some(Group::Machine(d.machines[machine].id)),
            Row::Process { machine, process } => {
                Some(Group::Process(d.machines[machine].processes[process].upid))
            }
            Row::Kernel { machine } => Some(Group::Kernel(d.machines[machine].id)),
            Row::Lane {
                thread: Some(utid),
                track,
                ..
            } => match &d.tracks[track].data {
                TrackData::Slices(lanes) if lanes.len() > 1 => Some(Group::Thread(utid)),
                _ => None,
            },
            _ => None,
        }
    }

    fn toggle_at_cursor(&mut self, page: usize) {
        let all = self.visible_rows();
        let Some(&row) = all.get(self.cursor) else {
            return;
        };
        if let Some(g) = self.group_at(row) {
            self.toggle(g);
            if let Group::Thread(_) = g {
                // Keep the cursor on the thread's top lane.
                let fresh = self.visible_rows();
                if let Row::Lane { track, .. } = row {
                    if let Some(p) = fresh.iter().position(
                        |r| matches!(r, Row::Lane { track: t, depth: 0, .. } if *t == track),
                    ) {
                        self.cursor = p;
                    }
                }
            }
            let total = self.visible_rows().len();
            self.keep_cursor_visible(page, total);
        }
    }

    fn enter(&mut self, page: usize, width: u16) -> Option<DetailsRequest> {
        let all = self.visible_rows();
        let row = *all.get(self.cursor)?;
        if matches!(
            row,
            Row::Machine { .. } | Row::Process { .. } | Row::Kernel { .. }
        ) {
            self.toggle_at_cursor(page);
            return None;
        }
        // With a slice selected, Enter follows its first flow.
        if let (Some(_), DetailsView::Ready(d)) = (self.selection, &self.details) {
            if let Some(flow) = d.flows.first().cloned() {
                let data = self.data.clone()?;
                let track = data.tracks.iter().position(|t| {
                    t.db_id == flow.track_id && matches!(t.data, TrackData::Slices(_))
                })?;
                let depth = usize::try_from(flow.depth).ok()?;
                let l = lane(&data, track, depth)?;
                let id = u32::try_from(flow.slice_id).ok()?;
                let index = find(l, flow.ts, id)?;
                return self.reveal(
                    Selection {
                        track,
                        depth,
                        index,
                        id,
                    },
                    page,
                );
            }
            self.message = Some("this slice has no flows".into());
            return None;
        }
        if let Row::Counter { track, .. } = row {
            let cols = self.columns(width.max(1));
            self.message = self.counter_reading(track, cols.start + cols.span / 2, &cols);
            return None;
        }
        // Otherwise it selects the slice under the middle of the view on the cursor lane.
        let Row::Lane { track, depth, .. } = row else {
            return None;
        };
        let data = self.data.clone()?;
        let l = lane(&data, track, depth)?;
        let cols = self.columns(width.max(1));
        let mid = cols.start + cols.span / 2;
        let index = l.at(mid).or_else(|| {
            let after = l.first_ending_after(mid);
            let before = after.checked_sub(1);
            match (before, (after < l.len()).then_some(after)) {
                (Some(b), Some(a)) => Some(if mid - l.end[b] <= l.ts[a] - mid {
                    b
                } else {
                    a
                }),
                (b, a) => b.or(a),
            }
        })?;
        self.reveal_index(track, depth, index, page)
    }

    fn step_in_lane(&mut self, forward: bool, width: u16, page: usize) -> Option<DetailsRequest> {
        let all = self.visible_rows();
        if let Some(Row::Debug { track, .. }) = all.get(self.cursor) {
            let start = self.data.as_ref().map_or(0, |d| d.start);
            let view_mid = self.view_start + self.view_span / 2;
            let t = self.debug_tracks.get_mut(*track)?;
            let n = t.order.len();
            if n == 0 {
                return None;
            }
            let i = match t.at {
                Some(i) if forward => (i + 1).min(n - 1),
                Some(i) => i.saturating_sub(1),
                None => {
                    let after = t.order.partition_point(|r| r.0 < view_mid).min(n - 1);
                    if forward {
                        after
                    } else {
                        after.saturating_sub(1)
                    }
                }
            };
            t.at = Some(i);
            let (ts, end, _, _) = t.order[i];
            let text = debug::describe(t, i, start);
            if end - ts > self.view_span
                || ts < self.view_start
                || end > self.view_start + self.view_span
            {
                self.fit(ts, end);
            }
            self.message = Some(text);
            return None;
        }
        let Row::Lane { track, depth, .. } = *all.get(self.cursor)? else {
            return None;
        };
        let data = self.data.clone()?;
        let l = lane(&data, track, depth)?;
        if l.is_empty() {
            return None;
        }
        let index = match self.selection {
            Some(s) if s.track == track && s.depth == depth => {
                if forward {
                    (s.index + 1).min(l.len() - 1)
                } else {
                    s.index.saturating_sub(1)
                }
            }
            _ => {
                let cols = self.columns(width.max(1));
                let first = l.first_ending_after(cols.start).min(l.len() - 1);
                if forward {
                    first
                } else {
                    first.saturating_sub(1)
                }
            }
        };
        self.reveal_index(track, depth, index, page)
    }

    fn search_step(&mut self, forward: bool, page: usize) -> Option<DetailsRequest> {
        let data = self.data.clone()?;
        let search = self.search.as_ref()?;
        if search.matches == 0 {
            self.message = Some(format!("no slice name contains \"{}\"", search.text));
            return None;
        }
        let here = match self.selection {
            Some(s) => {
                lane(&data, s.track, s.depth).map(|l| (l.ts[s.index], s.track, s.depth, s.index))
            }
            None => None,
        };
        let found = next_match(&data, &search.mask, here, forward).or_else(|| {
            // Wrap around.
            next_match(&data, &search.mask, None, forward)
        });
        let (_, track, depth, index) = found?;
        self.reveal_index(track, depth, index, page)
    }

    pub fn on_mouse(&mut self, m: MouseEvent, area: Rect) -> Option<DetailsRequest> {
        let geo = geometry(area, self);
        let in_lanes = geo.lanes.contains((m.column, m.row).into());
        let in_labels = geo.labels.contains((m.column, m.row).into());
        let shift = m.modifiers.contains(KeyModifiers::SHIFT);
        let page = geo.lanes.height as usize;
        let cols = self.columns(geo.lanes.width.max(1));
        let col = m.column.saturating_sub(geo.lanes.x);
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown if in_labels => {
                let by = if m.kind == MouseEventKind::ScrollUp {
                    -3
                } else {
                    3
                };
                self.move_cursor(by, page);
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown if in_lanes && shift => {
                self.pan(if m.kind == MouseEventKind::ScrollUp {
                    -0.1
                } else {
                    0.1
                });
            }
            MouseEventKind::ScrollUp if in_lanes => self.zoom(1.0 / 1.25, Some(cols.time_at(col))),
            MouseEventKind::ScrollDown if in_lanes => self.zoom(1.25, Some(cols.time_at(col))),
            MouseEventKind::ScrollLeft if in_lanes => self.pan(-0.1),
            MouseEventKind::ScrollRight if in_lanes => self.pan(0.1),
            MouseEventKind::Drag(MouseButton::Left) if in_lanes => {
                let line = m.row - geo.lanes.y;
                let all = self.visible_rows();
                let index = filter::screen_rows(
                    all.len(),
                    self.pinned_count(),
                    self.scroll,
                    geo.lanes.height as usize,
                )
                .into_iter()
                .find(|&(_, y)| y == line)
                .map_or(self.cursor, |(i, _)| i);
                let t = cols.time_at(col);
                match &mut self.area {
                    Some(a) if a.editing => {
                        a.t1 = t;
                        a.row1 = index;
                    }
                    _ => {
                        if let Some((t0, row0)) = self.drag {
                            self.drop_area();
                            self.area = Some(area::Area {
                                t0,
                                t1: t,
                                row0,
                                row1: index,
                                editing: true,
                            });
                        }
                    }
                }
            }
            MouseEventKind::Up(MouseButton::Left) => {
                self.drag = None;
                if self.area.is_some_and(|a| a.editing) {
                    self.finish_area();
                }
            }
            MouseEventKind::Down(MouseButton::Left) if in_lanes || in_labels => {
                let all = self.visible_rows();
                let line = m.row - geo.lanes.y;
                let index = filter::screen_rows(
                    all.len(),
                    self.pinned_count(),
                    self.scroll,
                    geo.lanes.height as usize,
                )
                .into_iter()
                .find(|&(_, y)| y == line)?
                .0;
                let row = *all.get(index)?;
                self.cursor = index;
                if in_lanes {
                    self.drag = Some((cols.time_at(col), index));
                }
                if in_labels
                    || matches!(
                        row,
                        Row::Machine { .. } | Row::Process { .. } | Row::Kernel { .. }
                    )
                {
                    if let Some(g) = self.group_at(row) {
                        self.toggle(g);
                    }
                    return None;
                }
                if let Row::Counter { track, .. } = row {
                    self.message = self.counter_reading(track, cols.time_at(col), &cols);
                    return None;
                }
                if let Row::Lane { track, depth, .. } = row {
                    let data = self.data.clone()?;
                    let l = lane(&data, track, depth)?;
                    let i = l.in_column(&cols, col);
                    return match i {
                        Some(index) => self.select(Some(Selection {
                            track,
                            depth,
                            index,
                            id: l.id[index],
                        })),
                        None => {
                            self.selection = None;
                            self.details = DetailsView::None;
                            None
                        }
                    };
                }
            }
            _ => {}
        }
        None
    }

    /// A counter's value at `t`, and its range in the view, for the footer.
    fn counter_reading(&self, track: usize, t: i64, cols: &Columns) -> Option<String> {
        let data = self.data.as_ref()?;
        let TrackData::Counter(c) = &data.tracks.get(track)?.data else {
            return None;
        };
        let at = format::offset(t - data.start);
        let label = &data.tracks[track].label;
        let value = match c.value_at(t) {
            Some(v) => format::value(v),
            None => "no value yet".into(),
        };
        let range = match c.range(cols.start, cols.end()) {
            Some((lo, hi)) => format!(" · in view {} to {}", format::value(lo), format::value(hi)),
            None => String::new(),
        };
        Some(format!("{label} at {at}: {value}{range}"))
    }

    /// True while a text field (search) has focus.
    pub fn editing(&self) -> bool {
        self.search_input.is_some() || self.filter_input.is_some()
    }
}

/// What identifies a track across reloads (its row id and what it draws).
fn track_key(t: &load::Track) -> (i64, std::mem::Discriminant<TrackData>) {
    (t.db_id, std::mem::discriminant(&t.data))
}

fn lane(data: &TimelineData, track: usize, depth: usize) -> Option<&Lane> {
    match &data.tracks.get(track)?.data {
        TrackData::Slices(lanes) => lanes.get(depth),
        data if depth == 0 => data.single_lane(),
        _ => None,
    }
}

/// The index of slice `id` starting at `ts` in a lane.
fn find(l: &Lane, ts: i64, id: u32) -> Option<usize> {
    let start = l.ts.partition_point(|&t| t < ts);
    (start..l.len())
        .take_while(|&i| l.ts[i] == ts)
        .find(|&i| l.id[i] == id)
}

fn mask(data: &TimelineData, text: &str) -> Vec<bool> {
    let needle = text.to_lowercase();
    data.names
        .iter()
        .map(|n| n.to_lowercase().contains(&needle))
        .collect()
}

fn slice_lanes(data: &TimelineData) -> impl Iterator<Item = (usize, usize, &Lane)> {
    data.tracks
        .iter()
        .enumerate()
        .flat_map(|(t, track)| match &track.data {
            TrackData::Slices(lanes) => lanes
                .iter()
                .enumerate()
                .map(move |(d, l)| (t, d, l))
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        })
}

fn count_matches(data: &TimelineData, mask: &[bool]) -> u64 {
    slice_lanes(data)
        .map(|(_, _, l)| {
            l.name
                .iter()
                .filter(|&&n| mask.get(n as usize).copied().unwrap_or(false))
                .count() as u64
        })
        .sum()
}

type Position = (i64, usize, usize, usize);

/// The first matching slice after (or before) `here` in (ts, track, depth) order.
fn next_match(
    data: &TimelineData,
    mask: &[bool],
    here: Option<Position>,
    forward: bool,
) -> Option<Position> {
    let hit = |l: &Lane, i: usize| mask.get(l.name[i] as usize).copied().unwrap_or(false);
    let mut best: Option<Position> = None;
    for (t, d, l) in slice_lanes(data) {
        let candidate = if forward {
            let from = here.map_or(0, |h| l.ts.partition_point(|&x| x < h.0));
            (from..l.len()).find(|&i| here.is_none_or(|h| (l.ts[i], t, d, i) > h) && hit(l, i))
        } else {
            let to = here.map_or(l.len(), |h| l.ts.partition_point(|&x| x <= h.0));
            (0..to)
                .rev()
                .find(|&i| here.is_none_or(|h| (l.ts[i], t, d, i) < h) && hit(l, i))
        };
        if let Some(i) = candidate {
            let pos = (l.ts[i], t, d, i);
            let better = match best {
                None => true,
                Some(b) => (forward && pos < b) || (!forward && pos > b),
            };
            if better {
                best = Some(pos);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_label_keeps_its_pid() {
        let t = truncate_label(
            "▾ androidx.benchmark.integration.macrobenchmark.test 7527",
            30,
        );
        assert_eq!(t.chars().count(), 30);
        assert!(t.ends_with("… 7527"), "{t}");
        let u = truncate_label(
            "▾ androidx.benchmark.integration.macrobenchmark.target 7663",
            30,
        );
        assert_ne!(t, u);
        assert_eq!(
            truncate_label("cpufreq cpu0 ≤1.8M", 30),
            "cpufreq cpu0 ≤1.8M"
        );
        assert_eq!(
            truncate_label("a very long counter name ≤1.8M", 10),
            "a very lo…"
        );
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(1), 1);
        assert_eq!(nice_step(3), 5);
        assert_eq!(nice_step(7), 10);
        assert_eq!(nice_step(1_100), 2_000);
    }
}

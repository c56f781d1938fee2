//! Area selection on the timeline: `v` starts one at the view's middle on the cursor's
//! track (or as the selected slice's span), the movement keys (or a mouse drag) extend it in time and across tracks, `v` or
//! `Enter` ends it and asks the worker for the aggregates once; `Esc` drops it. `Enter` on an
//! aggregate row highlights those slices (or that thread's sched slices, or those states)
//! and `n`/`N` step through them. Also the time mark (`m`) and what both show on the ruler.

use std::collections::HashSet;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Modifier;

use crate::db::read::{Aggregate, AreaSpec, Cell, Table};
use crate::tui::aggregates::{AggregatesPanel, PanelAction};
use crate::tui::format;
use crate::tui::theme::Theme;

use super::details::{describe_task_state, DetailsRequest};
use super::index::Columns;
use super::load::{TimelineData, TrackData};
use super::{filter, groups_of, lane, put, Geometry, Group, Row, TimelineState};

/// An area: a span of time over a range of rows (indices in the visible rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub t0: i64,
    pub t1: i64,
    pub row0: usize,
    pub row1: usize,
    /// Still being drawn (keys extend it); when false the aggregates show.
    pub editing: bool,
}

impl Area {
    pub fn span(&self) -> (i64, i64) {
        (self.t0.min(self.t1), self.t0.max(self.t1))
    }

    pub fn rows(&self) -> (usize, usize) {
        (self.row0.min(self.row1), self.row0.max(self.row1))
    }
}

/// Slices picked from an aggregate row: names (by name index) on some tracks in a span.
#[derive(Clone, Debug)]
pub struct Highlight {
    pub label: String,
    pub mask: Vec<bool>,
    pub tracks: HashSet<usize>,
    pub start: i64,
    pub end: i64,
    pub count: usize,
}

impl Highlight {
    pub fn hits(&self, track: usize, name: u32) -> bool {
        self.tracks.contains(&track) && self.mask.get(name as usize).copied().unwrap_or(false)
    }
}

/// The lanes a track draws (every depth of a slice track, else its one lane).
fn lanes_of(data: &TimelineData, track: usize) -> Vec<(usize, &super::index::Lane)> {
    match data.tracks.get(track).map(|t| &t.data) {
        Some(TrackData::Slices(lanes)) => lanes.iter().enumerate().collect(),
        Some(d) => d.single_lane().map(|l| vec![(0, l)]).unwrap_or_default(),
        None => Vec::new(),
    }
}

/// The tracks a header row stands for (everything in its group).
fn group_tracks(data: &TimelineData, row: Row, out: &mut Vec<usize>) {
    let push_process = |p: &super::load::ProcessNode, out: &mut Vec<usize>| {
        out.extend(p.tracks.iter().copied());
        for th in &p.threads {
            out.extend(th.tracks.iter().copied());
        }
    };
    match row {
        Row::Machine { machine } => {
            if let Some(m) = data.machines.get(machine) {
                out.extend(m.tracks.iter().copied());
                for p in &m.processes {
                    push_process(p, out);
                }
            }
        }
        Row::Kernel { machine } => {
            if let Some(m) = data.machines.get(machine) {
                let from = filter::kernel_from(data, machine);
                for p in m.processes.iter().skip(from) {
                    push_process(p, out);
                }
            }
        }
        Row::Process { machine, process } => {
            if let Some(p) = data
                .machines
                .get(machine)
                .and_then(|m| m.processes.get(process))
            {
                push_process(p, out);
            }
        }
        Row::Lane { track, .. } | Row::Counter { track, .. } => out.push(track),
        Row::Debug { .. } => {}
    }
}

/// The tracks an area covers and what the aggregates read of them.
pub fn spec_of(data: &TimelineData, rows: &[Row], area: &Area) -> (AreaSpec, Vec<usize>) {
    let (r0, r1) = area.rows();
    let mut tracks = Vec::new();
    for row in rows.iter().skip(r0).take(r1 + 1 - r0) {
        group_tracks(data, *row, &mut tracks);
    }
    let mut seen = HashSet::new();
    tracks.retain(|t| seen.insert(*t));
    let (start, end) = area.span();
    let mut spec = AreaSpec {
        start,
        end,
        ..AreaSpec::default()
    };
    for &t in &tracks {
        let Some(track) = data.tracks.get(t) else {
            continue;
        };
        match track.data {
            TrackData::Slices(_) => spec.slice_tracks.push(track.db_id),
            TrackData::ThreadState(_) => spec.state_utids.push(track.db_id),
            TrackData::Sched(_) => spec.ucpus.push(track.db_id),
            TrackData::Counter(_) => spec.counter_tracks.push(track.db_id),
            // Samples are read by thread (below).
            TrackData::State(_) | TrackData::Samples(_) => {}
        }
        if let Some(Group::Thread(utid)) = groups_of(data, t).last() {
            spec.utids.push(*utid);
        } else if let TrackData::ThreadState(_) | TrackData::Samples(_) = track.data {
            spec.utids.push(track.db_id);
        }
    }
    for v in [
        &mut spec.slice_tracks,
        &mut spec.state_utids,
        &mut spec.ucpus,
        &mut spec.counter_tracks,
        &mut spec.utids,
    ] {
        v.sort_unstable();
        v.dedup();
    }
    (spec, tracks)
}

impl TimelineState {
    /// `v`: starts an area at the view's middle on the cursor's row.
    pub(super) fn start_area(&mut self) {
        let t = self.view_start + self.view_span / 2;
        // On a selected slice, the area starts as the slice's span.
        let (t0, t1) = self
            .selection
            .and_then(|s| {
                let d = self.data.as_ref()?;
                lane(d, s.track, s.depth).map(|l| (l.ts[s.index], l.end[s.index]))
            })
            .unwrap_or((t, t));
        self.area = Some(Area {
            t0,
            t1,
            row0: self.cursor,
            row1: self.cursor,
            editing: true,
        });
        self.aggregates = None;
        self.highlight = None;
        self.message =
            Some("area: ←/→ extend in time (Shift more) · j/k across tracks · v or Enter ends · Esc drops".into());
    }

    /// Ends the area being drawn and asks for its aggregates.
    pub(super) fn finish_area(&mut self) {
        let Some(mut area) = self.area else { return };
        if area.t0 == area.t1 {
            self.message = Some("the area has no width yet: extend it with ←/→".into());
            return;
        }
        let Some(data) = self.data.clone() else {
            return;
        };
        area.editing = false;
        self.area = Some(area);
        let rows = self.visible_rows();
        let (spec, tracks) = spec_of(&data, &rows, &area);
        self.area_tracks = tracks;
        self.aggregates = Some(AggregatesPanel::new(spec.clone()));
        self.area_request = Some(spec);
    }

    pub(super) fn drop_area(&mut self) {
        self.area = None;
        self.aggregates = None;
        self.highlight = None;
        self.area_request = None;
        self.area_tracks.clear();
    }

    /// The aggregates to compute, once per area (the app sends them to the worker).
    pub fn take_area_request(&mut self) -> Option<AreaSpec> {
        self.area_request.take()
    }

    pub fn on_aggregates(&mut self, spec: &AreaSpec, result: Result<Vec<Table>, String>) {
        if let Some(p) = &mut self.aggregates {
            p.on_result(spec, result);
        }
    }

    /// Keys while an area exists. `None` when the key is not the area's.
    pub(super) fn area_key(
        &mut self,
        key: KeyEvent,
        page: usize,
        panel_page: usize,
    ) -> Option<Option<DetailsRequest>> {
        let area = self.area?;
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if area.editing {
            let step = (self.view_span / 40).max(1);
            let big = (self.view_span / 8).max(1);
            let by = match key.code {
                KeyCode::Left | KeyCode::Char('h') | KeyCode::Char('a') => {
                    -(if shift { big } else { step })
                }
                KeyCode::Right | KeyCode::Char('l') | KeyCode::Char('d') => {
                    if shift {
                        big
                    } else {
                        step
                    }
                }
                KeyCode::Char('H') | KeyCode::Char('A') => -big,
                KeyCode::Char('L') | KeyCode::Char('D') => big,
                KeyCode::Char('j') | KeyCode::Down | KeyCode::Char('k') | KeyCode::Up => {
                    let down = matches!(key.code, KeyCode::Char('j') | KeyCode::Down);
                    self.move_cursor(if down { 1 } else { -1 }, page);
                    if let Some(a) = &mut self.area {
                        a.row1 = self.cursor;
                    }
                    return Some(None);
                }
                KeyCode::Char('v') | KeyCode::Enter => {
                    self.finish_area();
                    return Some(None);
                }
                KeyCode::Esc => {
                    self.drop_area();
                    return Some(None);
                }
                _ => return None,
            };
            let (lo, hi) = self
                .data
                .as_ref()
                .map_or((i64::MIN / 4, i64::MAX / 4), |d| (d.start, d.end));
            let t1 = (area.t1 + by).clamp(lo.min(area.t0), hi.max(area.t0));
            if let Some(a) = &mut self.area {
                a.t1 = t1;
            }
            // Keep the moving edge on screen.
            if t1 < self.view_start || t1 > self.view_start + self.view_span {
                self.view_start = t1 - self.view_span / 2;
                self.following = false;
                self.clamp_view();
            }
            return Some(None);
        }
        match key.code {
            KeyCode::Esc => {
                self.drop_area();
                return Some(None);
            }
            KeyCode::Char('v') => {
                self.start_area();
                return Some(None);
            }
            KeyCode::Char('n') | KeyCode::Char('N') if self.highlight.is_some() => {
                return Some(self.highlight_step(key.code == KeyCode::Char('n'), page));
            }
            _ => {}
        }
        let action = self.aggregates.as_mut()?.on_key(key, panel_page);
        match action {
            PanelAction::Ignored => None,
            PanelAction::Handled => Some(None),
            PanelAction::Highlight(aggregate, row) => {
                self.set_highlight(aggregate, &row);
                Some(self.highlight_step(true, page))
            }
        }
    }

    /// Highlights what an aggregate row stands for, on the area's tracks.
    fn set_highlight(&mut self, aggregate: Aggregate, row: &[Cell]) {
        let Some(data) = self.data.clone() else {
            return;
        };
        let Some(area) = self.area else { return };
        let text = |i: usize| match row.get(i) {
            Some(Cell::Text(s)) => Some(s.clone()),
            _ => None,
        };
        let int = |i: usize| match row.get(i) {
            Some(Cell::Int(v)) => Some(*v),
            _ => None,
        };
        let (label, names, kind): (String, Vec<String>, fn(&TrackData) -> bool) = match aggregate {
            Aggregate::Slices => {
                let name = text(0).unwrap_or_default();
                (name.clone(), vec![name], |d| {
                    matches!(d, TrackData::Slices(_))
                })
            }
            Aggregate::CpuByThread => {
                let label = format!(
                    "{} {}",
                    text(0).unwrap_or_else(|| "thread".into()),
                    int(1).unwrap_or(0)
                );
                (label.clone(), vec![label], |d| {
                    matches!(d, TrackData::Sched(_))
                })
            }
            Aggregate::ThreadStates => {
                let state = describe_task_state(&text(2).unwrap_or_default());
                let tid = int(1).unwrap_or(-1);
                let thread = format!("{} {tid}", text(0).unwrap_or_else(|| "thread".into()));
                self.highlight = self.highlight_on(
                    &data,
                    &area,
                    &format!("{state} of {thread}"),
                    std::slice::from_ref(&state),
                    |d| matches!(d, TrackData::ThreadState(_)),
                );
                // Only that thread's state track.
                if let Some(h) = &mut self.highlight {
                    h.tracks
                        .retain(|&t| data.tracks[t].label.starts_with(&thread));
                    h.count = count(&data, h);
                }
                return;
            }
            Aggregate::CpuByProcess | Aggregate::Counters | Aggregate::Samples => {
                self.message = Some(
                    "Enter highlights rows of the Slices, Thread states and CPU by thread tabs"
                        .into(),
                );
                return;
            }
        };
        self.highlight = self.highlight_on(&data, &area, &label, &names, kind);
    }

    fn highlight_on(
        &self,
        data: &TimelineData,
        area: &Area,
        label: &str,
        names: &[String],
        kind: fn(&TrackData) -> bool,
    ) -> Option<Highlight> {
        let mask: Vec<bool> = data
            .names
            .iter()
            .map(|n| names.iter().any(|x| **n == **x))
            .collect();
        let tracks: HashSet<usize> = self
            .area_tracks
            .iter()
            .copied()
            .filter(|&t| data.tracks.get(t).is_some_and(|tr| kind(&tr.data)))
            .collect();
        let (start, end) = area.span();
        let mut h = Highlight {
            label: label.to_string(),
            mask,
            tracks,
            start,
            end,
            count: 0,
        };
        h.count = count(data, &h);
        Some(h)
    }

    /// `n`/`N`: the next (previous) highlighted slice in time order.
    fn highlight_step(&mut self, forward: bool, page: usize) -> Option<DetailsRequest> {
        let data = self.data.clone()?;
        let h = self.highlight.clone()?;
        if h.count == 0 {
            self.message = Some(format!("no \"{}\" in the area", h.label));
            return None;
        }
        let here = self.selection.and_then(|s| {
            lane(&data, s.track, s.depth).map(|l| (l.ts[s.index], s.track, s.depth, s.index))
        });
        let all = positions(&data, &h);
        let next = if forward {
            all.iter()
                .find(|p| here.is_none_or(|h| **p > h))
                .or(all.first())
        } else {
            all.iter()
                .rev()
                .find(|p| here.is_none_or(|h| **p < h))
                .or(all.last())
        };
        let &(_, track, depth, index) = next?;
        let nth = all
            .iter()
            .position(|p| p.1 == track && p.2 == depth && p.3 == index)
            .unwrap_or(0);
        let request = self.reveal_index(track, depth, index, page);
        self.message = Some(format!(
            "\"{}\" {}/{} in the area · n next · N previous · Esc drops the area",
            h.label,
            nth + 1,
            h.count
        ));
        request
    }

    /// `m`: marks the start of the selection (or the view's middle).
    pub(super) fn set_mark(&mut self) {
        let t = self.time_cursor();
        self.time_mark = Some(t);
        let start = self.data.as_ref().map_or(0, |d| d.start);
        self.message = Some(format!(
            "marked {} · the ruler shows the distance to the selection · m again moves the mark",
            format::offset(t - start)
        ));
    }

    /// The time the mark measures to: the selection's start, else the view's middle.
    pub fn time_cursor(&self) -> i64 {
        self.selection
            .and_then(|s| {
                let d = self.data.as_ref()?;
                lane(d, s.track, s.depth).map(|l| l.ts[s.index])
            })
            .unwrap_or(self.view_start + self.view_span / 2)
    }
}

type Position = (i64, usize, usize, usize);

/// The highlighted slices that overlap the highlight's span, in (ts, track, depth) order.
fn positions(data: &TimelineData, h: &Highlight) -> Vec<Position> {
    let mut out = Vec::new();
    let mut tracks: Vec<usize> = h.tracks.iter().copied().collect();
    tracks.sort_unstable();
    for t in tracks {
        for (d, l) in lanes_of(data, t) {
            let from = l.first_ending_after(h.start);
            for i in from..l.len() {
                if l.ts[i] >= h.end {
                    break;
                }
                if h.mask.get(l.name[i] as usize).copied().unwrap_or(false) {
                    out.push((l.ts[i], t, d, i));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

fn count(data: &TimelineData, h: &Highlight) -> usize {
    positions(data, h).len()
}

/// Shades the area on the lanes: empty cells dotted, slices underlined.
pub fn draw_area(
    buf: &mut Buffer,
    geo: &Geometry,
    cols: &Columns,
    area: &Area,
    screen: &[(usize, u16)],
    theme: &Theme,
) {
    let (t0, t1) = area.span();
    let (r0, r1) = area.rows();
    let w = i64::from(geo.lanes.width);
    let c0 = cols.col_of(t0).clamp(0, w);
    let c1 = cols.col_of(t1).clamp(0, w - 1).max(c0);
    if cols.col_of(t1) < 0 || cols.col_of(t0) >= w {
        return;
    }
    for &(i, line) in screen {
        if i < r0 || i > r1 {
            continue;
        }
        let y = geo.lanes.y + line;
        for c in c0..=c1 {
            if let Some(cell) = buf.cell_mut((geo.lanes.x + c as u16, y)) {
                if cell.symbol() == " " {
                    cell.set_char('·').set_style(theme.key());
                } else {
                    cell.set_style(cell.style().add_modifier(Modifier::UNDERLINED));
                }
            }
        }
    }
}

/// The columns (in the lanes) the area's bracket takes on the ruler, when it shows.
pub fn bracket_columns(cols: &Columns, state: &TimelineState, width: u16) -> Option<(u16, u16)> {
    let area = state.area.as_ref()?;
    let (t0, t1) = area.span();
    let w = i64::from(width);
    let (a, b) = (cols.col_of(t0), cols.col_of(t1));
    if b < 0 || a >= w {
        return None;
    }
    let a = a.max(0) as u16;
    let b = (b.min(w - 1) as u16).max(a);
    Some((a, b))
}

/// The area's bracket and duration, and the mark with its distance, on the ruler.
pub fn draw_ruler_marks(
    buf: &mut Buffer,
    geo: &Geometry,
    cols: &Columns,
    state: &TimelineState,
    theme: &Theme,
) {
    if geo.ruler.height < 2 {
        return;
    }
    let (x, y, w) = (geo.lanes.x, geo.ruler.y, geo.lanes.width);
    let mut notes = Vec::new();
    if let Some(area) = &state.area {
        let (t0, t1) = area.span();
        notes.push(format!("area {}", format::duration(t1 - t0)));
        if let Some((a, b)) = bracket_columns(cols, state, w) {
            let bar: String = (a..=b)
                .map(|c| {
                    if c == a {
                        '├'
                    } else if c == b {
                        '┤'
                    } else {
                        '─'
                    }
                })
                .collect();
            put(buf, x + a, y + 1, &bar, b - a + 1, theme.key());
        }
    }
    if let Some(mark) = state.time_mark {
        let d = state.time_cursor() - mark;
        notes.push(format!("mark→cursor {}", format::offset(d)));
        let c = cols.col_of(mark);
        if (0..i64::from(w)).contains(&c) {
            put(buf, x + c as u16, y + 1, "▼", 1, theme.warning());
        }
    }
    if notes.is_empty() {
        return;
    }
    let text = format!(" {} ", notes.join(" · "));
    let n = text.chars().count() as u16;
    // Over the view's end time (it would show cut): blank it first.
    let end_w = (format::timestamp(cols.end()).chars().count() as u16 + 1).max(n);
    if end_w <= w {
        put(
            buf,
            x + w - end_w,
            y,
            &" ".repeat(end_w as usize),
            end_w,
            theme.dim(),
        );
    }
    if n <= w {
        put(buf, x + w - n, y, &text, n, theme.key());
    }
}

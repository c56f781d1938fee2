//! The CPU profile pane: the sampled stacks (`cpu_profile_stack_sample` — Chrome's sampler
//! and V8 profiles — and `stack_sample` callstacks: perf's and generic samplers') of the
//! whole trace or of one thread, as a top-down tree (a flame graph in text): each row a
//! frame called from the row above it, with the samples in it and below it (total), in it
//! alone (self), and a bar of its share.
//! Rows open and close, the hottest path is open at first, and `/` finds frames by name.
//!
//! The worker reads sample counts per (callsite, thread) and the callsite tree once
//! ([`load`]); the tree of a thread is built here from those, merging callsites whose
//! frames have the same names (as Perfetto's flame graphs do).

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use rusqlite::Connection;

use super::sanitize::sanitize;
use super::theme::Theme;

/// A thread with samples.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileThread {
    pub utid: i64,
    /// "name tid (process pid)", sanitized.
    pub label: String,
    pub samples: u64,
}

/// What the profile tables hold, read once per database.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProfileData {
    /// Threads by samples, most first.
    pub threads: Vec<ProfileThread>,
    /// Per callsite id: (parent callsite id, index into `names`).
    pub callsites: Vec<(Option<u32>, u32)>,
    /// Frame names, sanitized.
    pub names: Vec<String>,
    /// (callsite, index into `threads`, samples).
    pub samples: Vec<(u32, u32, u64)>,
}

impl ProfileData {
    pub fn total(&self) -> u64 {
        self.threads.iter().map(|t| t.samples).sum()
    }
}

/// Reads the samples and the callsite tree (the worker's job).
pub fn load(conn: &Connection) -> rusqlite::Result<ProfileData> {
    let mut data = ProfileData::default();
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut stmt = conn.prepare(
        "SELECT c.id, c.parent_id, f.deobfuscated_name, f.name, m.name, f.rel_pc,
                (SELECT s.name FROM stack_profile_symbol s
                 WHERE s.symbol_set_id = f.symbol_set_id ORDER BY s.id DESC LIMIT 1)
         FROM stack_profile_callsite c
         JOIN stack_profile_frame f ON f.id = c.frame_id
         LEFT JOIN stack_profile_mapping m ON m.id = f.mapping
         ORDER BY c.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let parent: Option<i64> = r.get(1)?;
        let deobfuscated: Option<String> = r.get(2)?;
        let name: Option<String> = r.get(3)?;
        let mapping: Option<String> = r.get(4)?;
        let rel_pc: Option<i64> = r.get(5)?;
        let symbol: Option<String> = r.get(6)?;
        let shown = [deobfuscated, symbol, name]
            .into_iter()
            .flatten()
            .find(|n| !n.is_empty())
            .unwrap_or_else(|| {
                let module = mapping
                    .as_deref()
                    .and_then(|m| m.rsplit('/').next())
                    .filter(|m| !m.is_empty());
                match module {
                    Some(m) => format!("{m}+0x{:x}", rel_pc.unwrap_or(0)),
                    None => "(anonymous)".to_string(),
                }
            });
        let shown = sanitize(&shown).into_owned();
        let next = names.len() as u32;
        let name = *names.entry(shown).or_insert(next);
        let (Ok(id), parent) = (
            u32::try_from(id),
            parent.and_then(|p| u32::try_from(p).ok()),
        ) else {
            continue;
        };
        if data.callsites.len() <= id as usize {
            data.callsites.resize(id as usize + 1, (None, 0));
        }
        data.callsites[id as usize] = (parent, name);
    }
    data.names = vec![String::new(); names.len()];
    for (n, i) in names {
        data.names[i as usize] = n;
    }
    let mut stmt = conn.prepare(
        "WITH s AS (
           SELECT callsite_id, utid, count(*) AS n FROM (
             SELECT callsite_id, utid FROM cpu_profile_stack_sample
             UNION ALL
             SELECT callsite_id, utid FROM stack_sample WHERE utid IS NOT NULL)
           GROUP BY 1, 2)
         SELECT s.callsite_id, s.utid, s.n, t.tid, t.name, p.pid, p.name
         FROM s LEFT JOIN thread t ON t.utid = s.utid LEFT JOIN process p ON p.upid = t.upid
         ORDER BY s.utid, s.callsite_id",
    )?;
    let mut rows = stmt.query([])?;
    let mut thread_index: HashMap<i64, u32> = HashMap::new();
    while let Some(r) = rows.next()? {
        let callsite: i64 = r.get(0)?;
        let utid: i64 = r.get(1)?;
        let n: i64 = r.get(2)?;
        let index = match thread_index.get(&utid) {
            Some(&i) => i,
            None => {
                let tid: Option<i64> = r.get(3)?;
                let name: Option<String> = r.get(4)?;
                let pid: Option<i64> = r.get(5)?;
                let pname: Option<String> = r.get(6)?;
                let mut label = match (name.filter(|n| !n.is_empty()), tid) {
                    (Some(n), Some(tid)) => format!("{n} {tid}"),
                    (Some(n), None) => n,
                    (None, Some(tid)) => format!("tid {tid}"),
                    (None, None) => format!("utid {utid}"),
                };
                match (pname.filter(|n| !n.is_empty()), pid) {
                    (Some(p), Some(pid)) => label.push_str(&format!(" ({p} {pid})")),
                    (None, Some(pid)) => label.push_str(&format!(" (pid {pid})")),
                    _ => {}
                }
                let i = data.threads.len() as u32;
                data.threads.push(ProfileThread {
                    utid,
                    label: sanitize(&label).into_owned(),
                    samples: 0,
                });
                thread_index.insert(utid, i);
                i
            }
        };
        let n = u64::try_from(n).unwrap_or(0);
        data.threads[index as usize].samples += n;
        if let Ok(callsite) = u32::try_from(callsite) {
            data.samples.push((callsite, index, n));
        }
    }
    // Threads by samples, most first; samples follow their thread's new index.
    let mut order: Vec<u32> = (0..data.threads.len() as u32).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(data.threads[i as usize].samples), i));
    let mut new_index = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old as usize] = new as u32;
    }
    data.threads = order
        .iter()
        .map(|&i| data.threads[i as usize].clone())
        .collect();
    for s in &mut data.samples {
        s.1 = new_index[s.1 as usize];
    }
    Ok(data)
}

/// A node of the top-down tree: a frame name under its caller.
#[derive(Clone, Debug)]
struct Node {
    name: u32,
    parent: Option<u32>,
    depth: u16,
    total: u64,
    own: u64,
    /// Hottest first.
    children: Vec<u32>,
}

/// Callsite chains longer than this are cut (a database with a parent cycle).
const MAX_DEPTH: usize = 4096;

/// The tree of `thread` (`None`: every thread); node 0 is the root (all samples).
fn build(data: &ProfileData, thread: Option<u32>) -> Vec<Node> {
    let mut nodes = vec![Node {
        name: u32::MAX,
        parent: None,
        depth: 0,
        total: 0,
        own: 0,
        children: Vec::new(),
    }];
    let mut child: HashMap<(u32, u32), u32> = HashMap::new();
    let mut of_callsite: Vec<Option<u32>> = vec![None; data.callsites.len()];
    let mut chain = Vec::new();
    for &(callsite, t, n) in &data.samples {
        if thread.is_some_and(|want| want != t) {
            continue;
        }
        // The callsites from this one up to the first already placed (or the root).
        chain.clear();
        let mut c = Some(callsite);
        let mut top = 0u32;
        while let Some(id) = c {
            if let Some(Some(node)) = of_callsite.get(id as usize) {
                top = *node;
                break;
            }
            if id as usize >= data.callsites.len() || chain.len() > MAX_DEPTH {
                break;
            }
            chain.push(id);
            c = data.callsites[id as usize].0;
        }
        let mut node = top;
        for &id in chain.iter().rev() {
            let name = data.callsites[id as usize].1;
            node = *child.entry((node, name)).or_insert_with(|| {
                let new = nodes.len() as u32;
                let depth = nodes[node as usize].depth.saturating_add(1);
                nodes.push(Node {
                    name,
                    parent: Some(node),
                    depth,
                    total: 0,
                    own: 0,
                    children: Vec::new(),
                });
                nodes[node as usize].children.push(new);
                new
            });
            of_callsite[id as usize] = Some(node);
        }
        nodes[node as usize].own += n;
        let mut up = Some(node);
        while let Some(i) = up {
            nodes[i as usize].total += n;
            up = nodes[i as usize].parent;
        }
    }
    let totals: Vec<u64> = nodes.iter().map(|n| n.total).collect();
    let names: Vec<u32> = nodes.iter().map(|n| n.name).collect();
    for n in &mut nodes {
        n.children.sort_by(|&a, &b| {
            totals[b as usize].cmp(&totals[a as usize]).then(
                data.names[names[a as usize] as usize].cmp(&data.names[names[b as usize] as usize]),
            )
        });
    }
    nodes
}

#[derive(Default)]
pub struct ProfileState {
    pub data: Option<Result<Arc<ProfileData>, String>>,
    /// Index into the data's threads, or `None` for the whole trace.
    pub thread: Option<u32>,
    nodes: Vec<Node>,
    open: Vec<bool>,
    /// Visible nodes, in drawing order.
    rows: Vec<u32>,
    cursor: usize,
    scroll: usize,
    pub search: String,
    pub editing: bool,
}

impl ProfileState {
    pub fn set_data(&mut self, data: Result<ProfileData, String>) {
        self.data = Some(data.map(Arc::new));
        self.thread = None;
        self.rebuild();
    }

    /// Whether the trace has samples with stacks (the pane's tab shows only then).
    pub fn has_samples(&self) -> bool {
        matches!(&self.data, Some(Ok(d)) if !d.samples.is_empty())
    }

    fn rebuild(&mut self) {
        let Some(Ok(data)) = &self.data else {
            self.nodes.clear();
            self.rows.clear();
            return;
        };
        self.nodes = build(data, self.thread);
        self.open = vec![false; self.nodes.len()];
        self.open[0] = true;
        // The hottest path is open.
        let mut n = 0usize;
        while let Some(&c) = self.nodes[n].children.first() {
            self.open[n] = true;
            n = c as usize;
        }
        self.cursor = 0;
        self.scroll = 0;
        self.refresh_rows();
    }

    fn refresh_rows(&mut self) {
        let selected = self.rows.get(self.cursor).copied();
        self.rows.clear();
        let mut stack: Vec<u32> = Vec::new();
        if let Some(root) = self.nodes.first() {
            stack.extend(root.children.iter().rev());
        }
        while let Some(n) = stack.pop() {
            self.rows.push(n);
            if self.open[n as usize] {
                stack.extend(self.nodes[n as usize].children.iter().rev());
            }
        }
        if let Some(sel) = selected {
            if let Some(i) = self.rows.iter().position(|&r| r == sel) {
                self.cursor = i;
            }
        }
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
    }

    fn name(&self, node: u32) -> &str {
        match &self.data {
            Some(Ok(d)) => d.names.get(self.nodes[node as usize].name as usize),
            _ => None,
        }
        .map_or("", String::as_str)
    }

    fn matches(&self, node: u32) -> bool {
        !self.search.is_empty()
            && self
                .name(node)
                .to_lowercase()
                .contains(&self.search.to_lowercase())
    }

    /// Moves to the next (or previous) node whose name matches the search, opening its
    /// callers so it shows.
    fn find(&mut self, forward: bool) {
        if self.search.is_empty() || self.nodes.len() < 2 {
            return;
        }
        // Nodes in tree order (as if every node were open).
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<u32> = self.nodes[0].children.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            order.push(n);
            stack.extend(self.nodes[n as usize].children.iter().rev());
        }
        let current = self.rows.get(self.cursor).copied();
        let at = current
            .and_then(|c| order.iter().position(|&n| n == c))
            .unwrap_or(order.len() - 1);
        let len = order.len();
        let found = (1..=len)
            .map(|k| {
                if forward {
                    order[(at + k) % len]
                } else {
                    order[(at + len - k % len) % len]
                }
            })
            .find(|&n| self.matches(n));
        let Some(node) = found else {
            return;
        };
        let mut up = self.nodes[node as usize].parent;
        while let Some(p) = up {
            self.open[p as usize] = true;
            up = self.nodes[p as usize].parent;
        }
        self.refresh_rows();
        if let Some(i) = self.rows.iter().position(|&r| r == node) {
            self.cursor = i;
        }
    }

    fn set_open_below(&mut self, node: u32, open: bool) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            self.open[n as usize] = open;
            stack.extend(self.nodes[n as usize].children.iter().copied());
        }
        self.open[0] = true;
    }

    fn threads(&self) -> usize {
        match &self.data {
            Some(Ok(d)) => d.threads.len(),
            _ => 0,
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, page: usize) {
        if self.editing {
            match key.code {
                KeyCode::Esc => {
                    self.editing = false;
                    self.search.clear();
                }
                KeyCode::Enter => {
                    self.editing = false;
                    self.find(true);
                    self.keep_cursor_visible(page);
                }
                KeyCode::Backspace => {
                    self.search.pop();
                }
                KeyCode::Char(c) => self.search.push(c),
                _ => {}
            }
            return;
        }
        let current = self.rows.get(self.cursor).copied();
        let last = self.rows.len().saturating_sub(1);
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => self.cursor = (self.cursor + 1).min(last),
            KeyCode::Char('k') | KeyCode::Up => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::PageDown => self.cursor = (self.cursor + page).min(last),
            KeyCode::PageUp => self.cursor = self.cursor.saturating_sub(page),
            KeyCode::Char('g') | KeyCode::Home => self.cursor = 0,
            KeyCode::Char('G') | KeyCode::End => self.cursor = last,
            KeyCode::Char('l') | KeyCode::Right => {
                if let Some(n) = current {
                    if self.open[n as usize] {
                        self.cursor = (self.cursor + 1).min(last);
                    }
                    self.open[n as usize] = true;
                    self.refresh_rows();
                }
            }
            KeyCode::Char('h') | KeyCode::Left => {
                if let Some(n) = current {
                    if self.open[n as usize] && !self.nodes[n as usize].children.is_empty() {
                        self.open[n as usize] = false;
                    } else if let Some(p) = self.nodes[n as usize].parent.filter(|&p| p != 0) {
                        if let Some(i) = self.rows.iter().position(|&r| r == p) {
                            self.cursor = i;
                        }
                    }
                    self.refresh_rows();
                }
            }
            KeyCode::Enter | KeyCode::Char(' ') => {
                if let Some(n) = current {
                    self.open[n as usize] = !self.open[n as usize];
                    self.refresh_rows();
                }
            }
            KeyCode::Char('e') => {
                if let Some(n) = current {
                    self.set_open_below(n, true);
                    self.refresh_rows();
                }
            }
            KeyCode::Char('E') => {
                self.set_open_below(0, true);
                self.refresh_rows();
            }
            KeyCode::Char('C') => {
                self.set_open_below(0, false);
                self.cursor = 0;
                self.refresh_rows();
            }
            KeyCode::Char(']') | KeyCode::Char('[') => {
                let n = self.threads() as u32;
                if n > 0 {
                    let forward = key.code == KeyCode::Char(']');
                    // Whole trace, then each thread, round.
                    let pos = self.thread.map_or(0, |t| t + 1);
                    let next = if forward {
                        (pos + 1) % (n + 1)
                    } else {
                        (pos + n) % (n + 1)
                    };
                    self.thread = next.checked_sub(1);
                    self.rebuild();
                }
            }
            KeyCode::Char('/') => {
                self.editing = true;
                self.search.clear();
            }
            KeyCode::Char('n') => self.find(true),
            KeyCode::Char('N') => self.find(false),
            _ => {}
        }
        self.keep_cursor_visible(page);
    }

    /// Scrolls only as far as the cursor needs: moving up within the page moves the cursor,
    /// not the rows.
    fn keep_cursor_visible(&mut self, page: usize) {
        let page = page.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + page {
            self.scroll = self.cursor + 1 - page;
        }
    }
}

/// A bar of `fraction` in `width` cells, eighths included.
fn bar(fraction: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (fraction.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let mut s: String = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8]);
    }
    let used = s.chars().count();
    s.push_str(&" ".repeat(width.saturating_sub(used)));
    s
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn draw(frame: &mut Frame, area: Rect, state: &ProfileState, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(" CPU profile ", theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let data = match &state.data {
        None => {
            let text = "  the profile appears when the import is done…";
            frame.render_widget(Paragraph::new(Line::styled(text, theme.dim())), inner);
            return;
        }
        Some(Err(e)) => {
            let text = format!("  cannot read the profile: {}", sanitize(e));
            frame.render_widget(Paragraph::new(Line::styled(text, theme.error())), inner);
            return;
        }
        Some(Ok(d)) => d,
    };
    if data.samples.is_empty() {
        let lines = vec![
            Line::styled("  no CPU profile in this trace", theme.dim()),
            Line::styled(
                "  (samples with stacks come from V8 profiles in Chrome JSON, Chrome's sampling \
                 profiler and perf samples)",
                theme.dim(),
            ),
        ];
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let width = inner.width as usize;
    let root_total = state.nodes.first().map_or(0, |n| n.total);
    let scope = match state.thread.and_then(|t| data.threads.get(t as usize)) {
        Some(t) => format!("thread {}", t.label),
        None if data.threads.len() == 1 => "whole trace, 1 thread".to_string(),
        None => format!("whole trace, {} threads", data.threads.len()),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!(" {scope}"), theme.title()),
        Span::raw(format!(" · {} samples", thousands(root_total))),
        Span::styled("   [ ] thread", theme.dim()),
    ])];
    let search = if state.editing || !state.search.is_empty() {
        let cursor = if state.editing { "▏" } else { "" };
        format!("   /{}{cursor}", sanitize(&state.search))
    } else {
        String::new()
    };
    let bar_width = if width >= 120 { 20 } else { 8 };
    lines.push(Line::from(vec![
        Span::styled(
            format!(
                " {:>9} {:>6} {:>9}  {:<bar_width$}  stack (callers above callees)",
                "total", "%", "self", "share"
            ),
            theme.dim(),
        ),
        Span::styled(search, theme.key()),
    ]));
    let body = (inner.height as usize).saturating_sub(3);
    let scroll = if state.cursor >= state.scroll + body.max(1) {
        state.cursor + 1 - body.max(1)
    } else {
        state.scroll.min(state.cursor)
    };
    for (i, &n) in state.rows.iter().enumerate().skip(scroll).take(body) {
        let node = &state.nodes[n as usize];
        let fraction = if root_total > 0 {
            node.total as f64 / root_total as f64
        } else {
            0.0
        };
        let marker = if node.children.is_empty() {
            "  "
        } else if state.open[n as usize] {
            "▾ "
        } else {
            "▸ "
        };
        let indent = " ".repeat((usize::from(node.depth).saturating_sub(1)).min(width / 3));
        let prefix = format!(
            " {:>9} {:>5.1}% {:>9}  ",
            thousands(node.total),
            fraction * 100.0,
            thousands(node.own)
        );
        let name_style = if state.matches(n) {
            theme.warning()
        } else {
            ratatui::style::Style::default()
        };
        let mut spans = vec![
            Span::raw(prefix),
            Span::styled(bar(fraction, bar_width), theme.bar()),
            Span::raw(format!("  {indent}{marker}")),
            Span::styled(state.name(n).to_string(), name_style),
        ];
        if i == state.cursor {
            spans = spans
                .into_iter()
                .map(|s| {
                    let style = s.style.patch(theme.cursor());
                    Span::styled(s.content, style)
                })
                .collect();
        }
        lines.push(Line::from(spans));
    }
    while lines.len() < (inner.height as usize).saturating_sub(1) {
        lines.push(Line::raw(""));
    }
    let keys = if width >= 100 {
        " j k move · l h open/close · e E open below/all · C close all · [ ] thread · / search, n N"
    } else {
        " j k · l h open/close · e E C all · [ ] thread · / search, n N"
    };
    lines.push(Line::styled(keys, theme.dim()));
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> ProfileData {
        // main → a → b, main → a (twice), main → c; thread 1 only main → c.
        ProfileData {
            threads: vec![
                ProfileThread {
                    utid: 1,
                    label: "t1".into(),
                    samples: 4,
                },
                ProfileThread {
                    utid: 2,
                    label: "t2".into(),
                    samples: 1,
                },
            ],
            callsites: vec![
                (None, 0),
                (Some(0), 1),
                (Some(1), 2),
                (Some(0), 3),
                (None, 0),
            ],
            names: vec!["main".into(), "a".into(), "b".into(), "c".into()],
            samples: vec![(2, 0, 1), (1, 0, 2), (3, 0, 1), (3, 1, 1)],
        }
    }

    #[test]
    fn the_tree_sums_self_and_total_and_merges_same_named_callers() {
        let nodes = build(&data(), None);
        // Root, main, a, b, c.
        assert_eq!(nodes.len(), 5);
        assert_eq!(nodes[0].total, 5);
        let main = nodes[0].children[0] as usize;
        assert_eq!((nodes[main].total, nodes[main].own), (5, 0));
        let a = nodes[main].children[0] as usize;
        assert_eq!((nodes[a].total, nodes[a].own), (3, 2));
        let only_t2 = build(&data(), Some(1));
        assert_eq!(only_t2[0].total, 1);
    }

    #[test]
    fn keys_open_close_switch_threads_and_search() {
        let mut state = ProfileState::default();
        state.set_data(Ok(data()));
        // The hottest path is open: main, a, b, c.
        assert_eq!(state.rows.len(), 4);
        state.on_key(KeyEvent::from(KeyCode::Char('h')), 10);
        // On main: closes it.
        assert_eq!(state.rows.len(), 1);
        state.on_key(KeyEvent::from(KeyCode::Char('/')), 10);
        for c in "B".chars() {
            state.on_key(KeyEvent::from(KeyCode::Char(c)), 10);
        }
        state.on_key(KeyEvent::from(KeyCode::Enter), 10);
        assert_eq!(state.name(state.rows[state.cursor]), "b");
        state.on_key(KeyEvent::from(KeyCode::Char(']')), 10);
        assert_eq!(state.thread, Some(0));
        state.on_key(KeyEvent::from(KeyCode::Char('[')), 10);
        state.on_key(KeyEvent::from(KeyCode::Char('[')), 10);
        assert_eq!(state.thread, Some(1));
        assert_eq!(state.nodes[0].total, 1);
    }

    /// Moving up inside the page moves the cursor, not the rows: the view keeps its place
    /// (it used to snap so the cursor sat on the last line, or jump back to the top).
    #[test]
    fn the_view_scrolls_only_as_far_as_the_cursor_needs() {
        use ratatui::{backend::TestBackend, Terminal};
        let mut state = ProfileState::default();
        state.set_data(Ok(data()));
        // main, a, b, c: a page of 2 rows (a 6-line pane: border, 2 headers, keys).
        let page = 2;
        for _ in 0..3 {
            state.on_key(KeyEvent::from(KeyCode::Char('j')), page);
        }
        assert_eq!((state.cursor, state.scroll), (3, 2));
        state.on_key(KeyEvent::from(KeyCode::Char('k')), page);
        assert_eq!((state.cursor, state.scroll), (2, 2));
        let mut terminal = Terminal::new(TestBackend::new(60, 6)).unwrap();
        terminal
            .draw(|f| {
                draw(
                    f,
                    f.area(),
                    &state,
                    &Theme::new(super::super::theme::ColorMode::None),
                )
            })
            .unwrap();
        let screen: Vec<String> = (0..6)
            .map(|y| {
                (0..60)
                    .map(|x| terminal.backend().buffer()[(x, y)].symbol().to_string())
                    .collect()
            })
            .collect();
        // b (on the cursor) then c: the rows did not move back to main.
        assert!(screen[3].trim_end().ends_with('b'), "{screen:#?}");
        assert!(screen[4].trim_end().ends_with('c'), "{screen:#?}");
        state.on_key(KeyEvent::from(KeyCode::Char('k')), page);
        state.on_key(KeyEvent::from(KeyCode::Char('k')), page);
        assert_eq!((state.cursor, state.scroll), (0, 0));
    }

    #[test]
    fn bars_have_eighths() {
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(1.0 / 16.0, 2), "▏ ");
        assert_eq!(bar(0.0, 3), "   ");
    }
}

//! The aggregates panel under the timeline while an area is selected: one tab per
//! aggregate (slices, thread states, CPU by thread and by process, counters, samples), each a
//! table from [`crate::db::read`] computed once per area on the worker. Rows sort by any
//! column; `x` shows the SQL that made the tab, to copy into the SQL pane or `sextant query`.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::db::read::{Aggregate, AreaSpec, Cell, Kind, Table};

use super::format;
use super::sanitize::sanitize;
use super::theme::Theme;
use super::timeline::details::describe_task_state;

/// What a key on the panel asks of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub enum PanelAction {
    /// Highlight the slices (or threads, or states) of this row.
    Highlight(Aggregate, Vec<Cell>),
    /// The key was the panel's.
    Handled,
    /// Not a panel key.
    Ignored,
}

#[derive(Debug)]
pub struct AggregatesPanel {
    /// The area the tables are for.
    pub spec: AreaSpec,
    /// `None` while the worker computes them.
    pub result: Option<Result<Vec<Table>, String>>,
    pub tab: usize,
    pub cursor: usize,
    pub scroll: usize,
    /// Sorted by this column, descending when true; `None` keeps the SQL's order.
    pub sort: Option<(usize, bool)>,
    pub show_sql: bool,
}

impl AggregatesPanel {
    pub fn new(spec: AreaSpec) -> AggregatesPanel {
        AggregatesPanel {
            spec,
            result: None,
            tab: 0,
            cursor: 0,
            scroll: 0,
            sort: None,
            show_sql: false,
        }
    }

    /// The worker's answer for `spec` (ignored when the area changed since).
    pub fn on_result(&mut self, spec: &AreaSpec, result: Result<Vec<Table>, String>) {
        if *spec != self.spec {
            return;
        }
        let keep = self.current().map(|t| t.aggregate);
        self.result = Some(result.map(|tables| {
            tables
                .into_iter()
                .map(|mut t| {
                    for row in &mut t.rows {
                        for c in row.iter_mut() {
                            if let Cell::Text(s) = c {
                                *s = sanitize(s).into_owned();
                            }
                        }
                    }
                    t
                })
                .collect()
        }));
        // Stay on the same aggregate when the new area has rows for it, else open the first
        // tab that has any (an area without slices opens on what it has).
        if let Some(Ok(tables)) = &self.result {
            let same = keep.and_then(|a| {
                tables
                    .iter()
                    .position(|t| t.aggregate == a && !t.rows.is_empty())
            });
            let first = tables.iter().position(|t| !t.rows.is_empty());
            self.tab = same.or(first).unwrap_or(0);
        }
        self.cursor = 0;
        self.scroll = 0;
        self.apply_sort();
    }

    pub fn tables(&self) -> &[Table] {
        match &self.result {
            Some(Ok(t)) => t,
            _ => &[],
        }
    }

    pub fn current(&self) -> Option<&Table> {
        self.tables().get(self.tab)
    }

    fn apply_sort(&mut self) {
        let Some((col, desc)) = self.sort else { return };
        let tab = self.tab;
        if let Some(Ok(tables)) = &mut self.result {
            if let Some(t) = tables.get_mut(tab) {
                t.rows.sort_by(|a, b| {
                    let (x, y) = (
                        a.get(col).unwrap_or(&Cell::Null),
                        b.get(col).unwrap_or(&Cell::Null),
                    );
                    let o = x.cmp_value(y);
                    if desc && !matches!((x, y), (Cell::Null, _) | (_, Cell::Null)) {
                        o.reverse()
                    } else {
                        o
                    }
                });
            }
        }
    }

    /// A key while the panel shows; `page` is its number of table rows.
    pub fn on_key(&mut self, key: KeyEvent, page: usize) -> PanelAction {
        let rows = match self.current() {
            // The SQL scrolls by lines.
            // Wrapped on a narrow panel, the SQL has more lines than it holds: the drawing
            // stops at its last.
            Some(t) if self.show_sql => t.sql.len() / 8 + t.sql.lines().count() + 1,
            Some(t) => t.rows.len(),
            None => 0,
        };
        let ntabs = self.tables().len().max(1);
        match key.code {
            KeyCode::Char('>') | KeyCode::Char('}') => {
                self.tab = (self.tab + 1) % ntabs;
                self.cursor = 0;
                self.scroll = 0;
                self.sort = None;
            }
            KeyCode::Char('<') | KeyCode::Char('{') => {
                self.tab = (self.tab + ntabs - 1) % ntabs;
                self.cursor = 0;
                self.scroll = 0;
                self.sort = None;
            }
            KeyCode::Char('j') | KeyCode::Down => {
                self.cursor = (self.cursor + 1).min(rows.saturating_sub(1))
            }
            KeyCode::Char('k') | KeyCode::Up => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::PageDown => self.cursor = (self.cursor + page).min(rows.saturating_sub(1)),
            KeyCode::PageUp => self.cursor = self.cursor.saturating_sub(page),
            KeyCode::Char('o') => {
                let ncols = self.current().map_or(1, |t| t.aggregate.columns().len());
                let kinds = self.current().map(|t| t.aggregate.columns());
                let next = match self.sort {
                    None => 0,
                    Some((c, _)) => (c + 1) % ncols,
                };
                // Text sorts up, numbers down (the biggest first).
                let desc = kinds
                    .and_then(|k| k.get(next))
                    .is_some_and(|(_, k)| !matches!(k, Kind::Text | Kind::State));
                self.sort = Some((next, desc));
                self.apply_sort();
                self.cursor = 0;
            }
            KeyCode::Char('O') => {
                if let Some((c, d)) = self.sort {
                    self.sort = Some((c, !d));
                    self.apply_sort();
                    self.cursor = 0;
                }
            }
            KeyCode::Char('x') => {
                self.show_sql = !self.show_sql;
                self.cursor = 0;
                self.scroll = 0;
            }
            KeyCode::Enter => {
                return match self.current() {
                    Some(t) => match t.rows.get(self.cursor) {
                        Some(row) => PanelAction::Highlight(t.aggregate, row.clone()),
                        None => PanelAction::Handled,
                    },
                    None => PanelAction::Handled,
                }
            }
            _ => return PanelAction::Ignored,
        }
        let page = page.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + page {
            self.scroll = self.cursor + 1 - page;
        }
        PanelAction::Handled
    }
}

/// A cell as shown in a column of this kind.
pub fn show(cell: &Cell, kind: Kind) -> String {
    match (cell, kind) {
        (Cell::Null, _) => "–".into(),
        (Cell::Int(v), Kind::Dur) => format::duration(*v),
        (Cell::Real(v), Kind::Dur) => format::duration(*v as i64),
        (Cell::Int(v), Kind::Count) => format::count(*v as f64),
        (Cell::Int(v), Kind::Id) => v.to_string(),
        (Cell::Int(v), Kind::Percent) => format!("{v}%"),
        (Cell::Real(v), Kind::Percent) => format!("{v:.1}%"),
        (Cell::Int(v), _) => format::value(*v as f64),
        (Cell::Real(v), _) => format::value(*v),
        (Cell::Text(s), Kind::State) => describe_task_state(s),
        (Cell::Text(s), _) => s.clone(),
    }
}

fn fit(s: &str, w: usize, right: bool) -> String {
    let n = s.chars().count();
    if n > w {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        if w > 0 {
            t.push('…');
        }
        t
    } else if right {
        format!("{s:>w$}")
    } else {
        format!("{s:<w$}")
    }
}

/// How many table rows fit in a panel of this height (tabs, border and header take 3).
pub fn page(rect_height: u16) -> usize {
    rect_height.saturating_sub(3) as usize
}

fn width_of(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.content.chars().count()).sum()
}

pub fn draw(frame: &mut Frame, rect: Rect, panel: &AggregatesPanel, span: i64, theme: &Theme) {
    let block = Block::new().borders(Borders::TOP).border_style(theme.dim());
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if inner.height == 0 {
        return;
    }
    let mut tabs = vec![Span::styled(
        format!(" area {} ", format::duration(span)),
        theme.title(),
    )];
    match &panel.result {
        None => {
            tabs.push(Span::styled(" computing…", theme.dim()));
        }
        Some(Err(e)) => {
            tabs.push(Span::styled(
                format!(" cannot aggregate: {e}"),
                theme.error(),
            ));
        }
        Some(Ok(tables)) if tables.is_empty() => {
            tabs.push(Span::styled(
                " no slice, thread state, CPU or counter track in the area",
                theme.dim(),
            ));
        }
        Some(Ok(tables)) => {
            // Every tab in full when they fit; else short titles; else the tabs around the
            // current one, with ◂ ▸ where more are.
            let room = usize::from(inner.width).saturating_sub(width_of(&tabs));
            let label = |t: &Table, short: bool| {
                let title = if short {
                    t.aggregate.short_title()
                } else {
                    t.aggregate.title()
                };
                format!(" {title} {} ", t.rows.len())
            };
            let total = |short: bool| -> usize {
                tables
                    .iter()
                    .map(|t| label(t, short).chars().count() + 1)
                    .sum()
            };
            let short = total(false) > room;
            let labels: Vec<String> = tables.iter().map(|t| label(t, short)).collect();
            let (mut first, mut last) = (0, labels.len());
            let used = |a: usize, b: usize| -> usize {
                labels[a..b]
                    .iter()
                    .map(|l| l.chars().count() + 1)
                    .sum::<usize>()
                    + 4
            };
            while used(first, last) > room && last - first > 1 {
                if panel.tab + 1 < last {
                    last -= 1;
                } else {
                    first += 1;
                }
            }
            if first > 0 {
                tabs.push(Span::styled(" ◂", theme.dim()));
            }
            for (i, l) in labels.iter().enumerate().take(last).skip(first) {
                let style = if i == panel.tab {
                    theme.active_tab()
                } else {
                    theme.dim()
                };
                tabs.push(Span::raw(" "));
                tabs.push(Span::styled(l.clone(), style));
            }
            if last < labels.len() {
                tabs.push(Span::styled(" ▸", theme.dim()));
            }
            let hint = "  </> tab · o sort · Enter highlight · x SQL";
            if width_of(&tabs) + hint.chars().count() <= usize::from(inner.width) {
                tabs.push(Span::styled(hint, theme.dim()));
            }
        }
    }
    frame.render_widget(
        Paragraph::new(Line::from(tabs)),
        Rect::new(inner.x, inner.y, inner.width, 1),
    );
    let Some(table) = panel.current() else {
        return;
    };
    let body = Rect::new(
        inner.x,
        inner.y + 1,
        inner.width,
        inner.height.saturating_sub(1),
    );
    if panel.show_sql {
        let lines: Vec<Line> = std::iter::once(Line::styled(
            " the SQL of this tab (j/k scroll, x hides it):",
            theme.dim(),
        ))
        .chain(table.sql.lines().map(|l| Line::raw(format!(" {l}"))))
        .collect();
        // A long line (an IN (…) list of ids) continues indented under itself.
        let lines = super::wrap::wrap_lines(&lines, usize::from(body.width), 4);
        let skip = panel.cursor.min(lines.len().saturating_sub(1));
        frame.render_widget(Paragraph::new(lines).scroll((skip as u16, 0)), body);
        return;
    }
    let cols = table.aggregate.columns();
    let shown: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|r| {
            cols.iter()
                .enumerate()
                .map(|(i, (_, k))| show(r.get(i).unwrap_or(&Cell::Null), *k))
                .collect()
        })
        .collect();
    // Numbers get what they need; the first (text) column takes the rest.
    let w = body.width as usize;
    let mut widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            shown
                .iter()
                .map(|r| r[i].chars().count())
                .chain(std::iter::once(name.chars().count() + 1))
                .max()
                .unwrap_or(4)
                .min(24)
        })
        .collect();
    let others: usize = widths.iter().skip(1).map(|x| x + 2).sum();
    let need = shown
        .iter()
        .map(|r| r[0].chars().count())
        .max()
        .unwrap_or(0)
        .max(cols[0].0.len() + 1);
    widths[0] = need.min(w.saturating_sub(others + 1)).clamp(6, 60);
    let right = |k: Kind| !matches!(k, Kind::Text | Kind::State);
    let header: String = cols
        .iter()
        .enumerate()
        .map(|(i, (name, k))| {
            let mark = match panel.sort {
                Some((c, true)) if c == i => "↓",
                Some((c, false)) if c == i => "↑",
                _ => "",
            };
            fit(&format!("{name}{mark}"), widths[i], right(*k))
        })
        .collect::<Vec<_>>()
        .join("  ");
    let mut lines = vec![Line::styled(format!(" {header}"), theme.title())];
    if shown.is_empty() {
        lines.push(Line::styled(" nothing in the area", theme.dim()));
    }
    let page = body.height.saturating_sub(1) as usize;
    for (i, r) in shown.iter().enumerate().skip(panel.scroll).take(page) {
        let text: String = r
            .iter()
            .enumerate()
            .map(|(c, v)| fit(v, widths[c], right(cols[c].1)))
            .collect::<Vec<_>>()
            .join("  ");
        let style = if i == panel.cursor {
            theme.cursor()
        } else {
            Style::new()
        };
        lines.push(Line::styled(format!(" {text}"), style));
    }
    frame.render_widget(Paragraph::new(lines), body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An area whose first aggregate is empty opens on the first tab that has rows.
    #[test]
    fn an_area_opens_on_its_first_non_empty_tab() {
        let spec = AreaSpec::default();
        let mut p = AggregatesPanel::new(spec.clone());
        let table = |aggregate, rows: Vec<Vec<Cell>>| Table {
            aggregate,
            sql: String::new(),
            rows,
        };
        p.on_result(
            &spec,
            Ok(vec![
                table(Aggregate::Slices, Vec::new()),
                table(Aggregate::ThreadStates, vec![vec![Cell::Int(1)]]),
            ]),
        );
        assert_eq!(
            p.current().map(|t| t.aggregate),
            Some(Aggregate::ThreadStates)
        );
    }
}

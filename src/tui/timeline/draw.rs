//! Drawing the timeline pane: the ruler, the track labels, slice lanes and counters, the
//! details of the selection and the footer. Reads [`TimelineState`] and the loaded data;
//! changes nothing (the state and its keys are in the parent module).

use super::*;
/// A tick step of 1, 2 or 5 × 10^k ns, at least `min`.
pub(super) fn nice_step(min: i64) -> i64 {
    let mut p: i64 = 1;
    loop {
        for m in [1, 2, 5] {
            let s = p.saturating_mul(m);
            if s >= min {
                return s;
            }
        }
        if p > i64::MAX / 10 {
            return i64::MAX;
        }
        p *= 10;
    }
}

pub(super) fn put(buf: &mut Buffer, x: u16, y: u16, text: &str, max: u16, style: Style) {
    if max > 0 {
        buf.set_stringn(x, y, text, max as usize, style);
    }
}

pub(super) fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else if width <= 1 {
        s.chars().take(width).collect()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}

/// Like [`truncate`], but a label that ends in a pid or tid (`name 7527`) keeps it: the
/// name is cut in the middle, so two processes with one long name stay told apart.
pub(crate) fn truncate_label(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    if let Some((head, id)) = s.rsplit_once(' ') {
        let id_len = id.chars().count() + 1;
        let head_len = head.chars().count();
        let is_id = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
        if is_id && width > id_len + 4 && head_len > 0 {
            let keep = width - id_len - 1;
            let mut t: String = head.chars().take(keep).collect();
            t.push('…');
            t.push(' ');
            t.push_str(id);
            return t;
        }
    }
    truncate(s, width)
}

const BARS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    state: &TimelineState,
    theme: &Theme,
    status: Option<&str>,
) {
    let Some(data) = &state.data else {
        let text = match (&state.error, status) {
            (Some(e), _) => vec![Line::styled(
                format!("  cannot read the timeline: {e}"),
                theme.error(),
            )],
            (None, Some(s)) => vec![Line::styled(format!("  {s}"), theme.dim())],
            (None, None) => vec![Line::styled("  waiting for the first data…", theme.dim())],
        };
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), area);
        return;
    };
    let geo = geometry(area, state);
    let cols = state.columns(geo.lanes.width.max(1));
    let buf = frame.buffer_mut();
    let bracket = area::bracket_columns(&cols, state, geo.lanes.width);
    draw_ruler(buf, &geo, &cols, data, bracket, theme);
    area::draw_ruler_marks(buf, &geo, &cols, state, theme);
    let all = state.visible_rows();
    // The other ends of the selected slice's flows (a binder call's reply, …) are marked.
    let peers: Vec<u32> = match &state.details {
        DetailsView::Ready(d) if state.selection.is_some() => d
            .flows
            .iter()
            .filter_map(|f| u32::try_from(f.slice_id).ok())
            .collect(),
        _ => Vec::new(),
    };
    let pins = state.pinned_count();
    let screen = filter::screen_rows(all.len(), pins, state.scroll, geo.lanes.height as usize);
    for &(i, line) in &screen {
        let row = &all[i];
        let y = geo.lanes.y + line;
        let label_style = if i == state.cursor {
            theme.cursor()
        } else {
            Style::new()
        };
        draw_label(buf, &geo, y, *row, data, state, label_style, theme);
        if i < pins {
            // Pinned tracks: a mark in the label's first cell.
            put(buf, geo.labels.x, y, "▪", 1, theme.key().patch(label_style));
        }
        match *row {
            Row::Lane { track, depth, .. } => {
                if let Some(l) = lane(data, track, depth) {
                    let selected = state
                        .selection
                        .filter(|s| s.track == track && s.depth == depth)
                        .map(|s| s.index);
                    let hl = state
                        .highlight
                        .as_ref()
                        .filter(|h| h.tracks.contains(&track));
                    // Flows join slices: only slice lanes hold their other ends.
                    let peers: &[u32] = match data.tracks[track].data {
                        TrackData::Slices(_) => &peers,
                        _ => &[],
                    };
                    draw_lane(
                        buf,
                        &geo,
                        y,
                        &cols,
                        l,
                        (&data.names, &data.name_hashes, Some(&data.alert_names)),
                        (selected, peers),
                        hl,
                        theme,
                    );
                }
            }
            Row::Counter { track, .. } => {
                if let TrackData::Counter(c) = &data.tracks[track].data {
                    draw_counter(buf, &geo, y, &cols, c, theme);
                }
            }
            Row::Debug { track, depth } => {
                if let Some(t) = state.debug_tracks.get(track) {
                    if let Some(l) = t.lanes.get(depth) {
                        let at = t.at.and_then(|i| t.order.get(i)).filter(|o| o.2 == depth);
                        draw_lane(
                            buf,
                            &geo,
                            y,
                            &cols,
                            l,
                            (&t.names, &t.name_hashes, None),
                            (at.map(|o| o.3), &[]),
                            None,
                            theme,
                        );
                    }
                }
            }
            Row::Machine { .. } | Row::Process { .. } | Row::Kernel { .. } => {
                let rule = "─".repeat(geo.lanes.width as usize);
                put(buf, geo.lanes.x, y, &rule, geo.lanes.width, theme.dim());
            }
        }
    }
    flows::draw_flows(buf, &geo, &cols, data, state, &all, theme);
    if let Some(a) = &state.area {
        area::draw_area(frame.buffer_mut(), &geo, &cols, a, &screen, theme);
    }
    if let Some(rect) = geo.details {
        match &state.aggregates {
            Some(panel) => {
                let span = state.area.map_or(0, |a| a.span().1 - a.span().0);
                crate::tui::aggregates::draw(frame, rect, panel, span, theme);
            }
            None => draw_details(frame, rect, state, theme),
        }
    }
    if all.is_empty() && (state.filter.is_some() || state.filter_input.is_some()) {
        // An empty timeline says why.
        put(
            frame.buffer_mut(),
            geo.labels.x + 1,
            geo.labels.y,
            "no track matches the filter: T edits it, Esc clears it",
            geo.labels.width + geo.lanes.width,
            theme.warning(),
        );
    }
    draw_footer(frame, geo.footer, state, data, all.len(), theme);
}

/// The ruler: the view's start, span and end, and ticks since the trace's start; no tick
/// label is drawn where the area's bracket (`bracket`, columns) goes, so none shows cut.
pub(super) fn draw_ruler(
    buf: &mut Buffer,
    geo: &Geometry,
    cols: &Columns,
    data: &TimelineData,
    bracket: Option<(u16, u16)>,
    theme: &Theme,
) {
    if geo.ruler.height < 2 {
        return;
    }
    let (x, y, w) = (geo.lanes.x, geo.ruler.y, geo.lanes.width);
    put(
        buf,
        geo.ruler.x,
        y,
        " trace time",
        geo.labels.width,
        theme.dim(),
    );
    put(
        buf,
        geo.ruler.x,
        y + 1,
        " since start",
        geo.labels.width,
        theme.dim(),
    );
    let left = format::timestamp(cols.start);
    let right = format::timestamp(cols.end());
    let middle = format!("◂ {} ▸", format::duration(cols.span));
    put(buf, x, y, &left, w, theme.title());
    // The span, centred; when a long start time (a wall clock's seconds) reaches the
    // middle, right after the start rather than not at all.
    let (left_w, mid_w) = (left.chars().count() as u16, middle.chars().count() as u16);
    let centred = (w / 2).saturating_sub(mid_w / 2);
    let mid_off = if centred > left_w {
        Some(centred)
    } else if left_w + 2 + mid_w <= w {
        Some(left_w + 2)
    } else {
        None
    };
    if let Some(mid_x) = mid_off.map(|o| x + o) {
        put(
            buf,
            mid_x,
            y,
            &middle,
            w.saturating_sub(mid_x - x),
            theme.key(),
        );
    }
    let right_w = right.chars().count() as u16;
    if w > right_w + left.chars().count() as u16 + middle.chars().count() as u16 + 2 {
        put(buf, x + w - right_w, y, &right, right_w, theme.title());
    }
    // Ticks at least 12 columns apart, relative to the trace start.
    let step = nice_step((cols.span as i128 * 12 / i128::from(w.max(1))) as i64 + 1);
    let rel_start = cols.start - data.start;
    let mut t = rel_start.div_euclid(step) * step;
    if t < rel_start {
        t += step;
    }
    let mut next_free: i64 = 0;
    let largest = rel_start.abs().max((rel_start + cols.span).abs());
    while t <= rel_start + cols.span {
        let c = cols.col_of(data.start + t);
        let label = format!("╵{}", format::tick(t, step, largest));
        let len = label.chars().count() as i64;
        let under_bracket =
            bracket.is_some_and(|(a, b)| c <= i64::from(b) && c + len >= i64::from(a));
        if c >= next_free && c + len <= i64::from(w) && !under_bracket {
            put(
                buf,
                x + c as u16,
                y + 1,
                &label,
                (i64::from(w) - c) as u16,
                theme.dim(),
            );
            next_free = c + len + 1;
        }
        match t.checked_add(step) {
            Some(n) => t = n,
            None => break,
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn draw_label(
    buf: &mut Buffer,
    geo: &Geometry,
    y: u16,
    row: Row,
    data: &TimelineData,
    state: &TimelineState,
    style: Style,
    theme: &Theme,
) {
    let marker = |g: Group| {
        if state.collapsed.contains(&g) {
            "▸ "
        } else {
            "▾ "
        }
    };
    let (text, base) = match row {
        Row::Machine { machine } => {
            let m = &data.machines[machine];
            (
                format!("{}{}", marker(Group::Machine(m.id)), m.label),
                theme.title(),
            )
        }
        Row::Process { machine, process } => {
            let p = &data.machines[machine].processes[process];
            let pad = if process >= filter::kernel_from(data, machine) {
                "  "
            } else {
                " "
            };
            (
                format!("{pad}{}{}", marker(Group::Process(p.upid)), p.label),
                theme.title(),
            )
        }
        Row::Kernel { machine } => {
            let m = &data.machines[machine];
            let n = m
                .processes
                .len()
                .saturating_sub(filter::kernel_from(data, machine));
            (
                format!(
                    " {}{} ({n})",
                    marker(Group::Kernel(m.id)),
                    filter::KERNEL_LABEL
                ),
                theme.title(),
            )
        }
        Row::Lane {
            track,
            depth,
            indent,
            thread,
        } => {
            let pad = " ".repeat(indent as usize * 2);
            if depth > 0 {
                (String::new(), Style::new())
            } else {
                let t = &data.tracks[track];
                let m = match (&t.data, thread) {
                    (TrackData::Slices(lanes), Some(utid)) if lanes.len() > 1 => {
                        marker(Group::Thread(utid))
                    }
                    _ => "",
                };
                (format!("{pad}{m}{}", t.label), Style::new())
            }
        }
        Row::Debug { track, depth } => match state.debug_tracks.get(track) {
            Some(t) if depth == 0 => (format!("  ◆ {}", t.label), theme.key()),
            _ => (String::new(), Style::new()),
        },
        Row::Counter { track, indent } => {
            let t = &data.tracks[track];
            let max = match &t.data {
                TrackData::Counter(c) => format!(" ≤{}", format::count(c.max)),
                _ => String::new(),
            };
            (
                format!("{}{}{max}", " ".repeat(indent as usize * 2), t.label),
                Style::new(),
            )
        }
    };
    let w = geo.labels.width as usize;
    let text = format!("{:<w$}", truncate_label(&text, w));
    put(
        buf,
        geo.labels.x,
        y,
        &text,
        geo.labels.width,
        base.patch(style),
    );
    put(buf, geo.labels.right(), y, "│", 1, theme.dim());
}

/// A binder transaction's two ends: who called whom, for how long, and the reply.
pub(super) fn binder_line(b: &details::BinderEnds, theme: &Theme) -> Line<'static> {
    let who = |end: &Option<details::BinderEnd>| -> String {
        match end {
            Some(e) => {
                let thread = e.thread.clone().unwrap_or_else(|| "?".into());
                match &e.process {
                    Some(p) => format!("{thread} in {p}"),
                    None => thread,
                }
            }
            None => "not seen".to_string(),
        }
    };
    let dur = |end: &Option<details::BinderEnd>| -> Option<String> {
        let e = end.as_ref()?;
        Some(if e.dur < 0 {
            "did not end".to_string()
        } else {
            format::duration(e.dur)
        })
    };
    let mut spans = vec![
        Span::styled(
            if b.oneway {
                " binder one-way "
            } else {
                " binder "
            },
            theme.dim(),
        ),
        Span::raw(who(&b.client)),
        Span::raw(" → "),
        Span::raw(who(&b.server)),
    ];
    if !b.oneway {
        if let Some(call) = dur(&b.client) {
            spans.push(Span::styled("  call ", theme.dim()));
            spans.push(Span::raw(call));
        }
        spans.push(Span::styled("  reply ", theme.dim()));
        spans.push(Span::raw(
            dur(&b.server).unwrap_or_else(|| "not seen".to_string()),
        ));
    }
    Line::from(spans)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn draw_lane(
    buf: &mut Buffer,
    geo: &Geometry,
    y: u16,
    cols: &Columns,
    l: &Lane,
    (names, hashes, alerts): (&[Box<str>], &[u32], Option<&HashSet<u32>>),
    (selected, peers): (Option<usize>, &[u32]),
    highlight: Option<&area::Highlight>,
    theme: &Theme,
) {
    let mono = theme.mode == ColorMode::None;
    for span in l.spans(cols) {
        let name_id = l.name[span.index];
        let is_selected = selected == Some(span.index);
        let is_peer = !peers.is_empty() && peers.contains(&l.id[span.index]);
        let lit = highlight.is_some_and(|h| h.mask.get(name_id as usize).copied().unwrap_or(false));
        let alert = alerts.is_some_and(|a| a.contains(&name_id));
        let style = if is_selected {
            theme.selected_slice()
        } else if is_peer {
            theme.flow_peer()
        } else if alert {
            theme.alert_slice()
        } else if lit {
            theme
                .slice(hashes.get(name_id as usize).copied().unwrap_or(0))
                .add_modifier(ratatui::style::Modifier::BOLD | ratatui::style::Modifier::UNDERLINED)
        } else {
            theme.slice(hashes.get(name_id as usize).copied().unwrap_or(0))
        };
        let width = span.col_end - span.col_start;
        let x = geo.lanes.x + span.col_start;
        let text = if span.crowded {
            "░".to_string()
        } else if width < 3 {
            // Two cells cannot hold a name worth reading: colour only (and a mark that
            // shows the selection without colour too).
            let mark = if is_selected {
                "◆"
            } else if is_peer {
                "↔"
            } else if alert {
                "!"
            } else {
                " "
            };
            format!("{mark:<w$}", w = width as usize)
        } else {
            let name: &str = names.get(name_id as usize).map_or("", |n| n);
            // A flow's other end reads as one without colour too.
            let shown = if is_peer {
                format!("↔{name}")
            } else if mono {
                format!("▏{name}")
            } else {
                name.to_string()
            };
            format!(
                "{:<w$}",
                truncate(&shown, width as usize),
                w = width as usize
            )
        };
        put(buf, x, y, &text, width, style);
    }
}

pub(super) fn draw_counter(
    buf: &mut Buffer,
    geo: &Geometry,
    y: u16,
    cols: &Columns,
    c: &index::CounterSeries,
    theme: &Theme,
) {
    let base = c.min.min(0.0);
    let range = c.max - base;
    for col in 0..geo.lanes.width {
        let (t0, t1) = (cols.time_at(col), cols.time_at(col + 1));
        let Some((_, hi)) = c.range(t0, t1.max(t0 + 1)) else {
            continue;
        };
        // A series without range (0 throughout: max is then the base) lies on the floor,
        // a flat line that reads as zero, not a half-height bar that reads as a value.
        let level = if range > 0.0 {
            (((hi - base) / range) * 8.0).round().clamp(1.0, 8.0) as usize
        } else {
            1
        };
        if let Some(cell) = buf.cell_mut((geo.lanes.x + col, y)) {
            cell.set_char(BARS[level]).set_style(theme.counter());
        }
    }
}

pub(super) fn draw_details(frame: &mut Frame, rect: Rect, state: &TimelineState, theme: &Theme) {
    let block = Block::new().borders(Borders::TOP).border_style(theme.dim());
    let lines: Vec<Line> = match &state.details {
        DetailsView::None => Vec::new(),
        DetailsView::Loading => vec![Line::styled(" loading…", theme.dim())],
        DetailsView::Failed(e) => vec![Line::styled(
            format!(" cannot read the slice: {e}"),
            theme.error(),
        )],
        DetailsView::Ready(d) => {
            let start = state.data.as_ref().map_or(0, |d| d.start);
            // Names (a GPU kernel's C++ signature) take two lines at most, so the flows and
            // args still show.
            let room = (rect.width as usize * 3 / 2).saturating_sub(24).max(16);
            let mut lines = vec![Line::from(vec![
                Span::styled(format!(" {}", truncate(&d.name, room)), theme.title()),
                Span::styled(
                    d.category
                        .as_ref()
                        .map_or(String::new(), |c| format!("  category {c}")),
                    theme.dim(),
                ),
            ])];
            let dur = if d.dur < 0 {
                "did not end".to_string()
            } else {
                format::duration(d.dur)
            };
            let mut when = vec![
                Span::styled(" ts ", theme.dim()),
                Span::raw(format!(
                    "{} ({})",
                    format::offset(d.ts - start),
                    format::timestamp(d.ts)
                )),
                Span::styled("  dur ", theme.dim()),
                Span::raw(dur),
            ];
            if let Some(cpu) = d.cpu {
                when.push(Span::styled("  cpu ", theme.dim()));
                when.push(Span::raw(cpu.to_string()));
            }
            if let Some(s) = &d.end_state {
                when.push(Span::styled("  end state ", theme.dim()));
                when.push(Span::raw(s.clone()));
            }
            lines.push(Line::from(when));
            let mut whom = Vec::new();
            for (label, value) in [
                ("thread", &d.thread),
                ("process", &d.process),
                ("machine", &d.machine),
            ] {
                if let Some(v) = value {
                    // An unnamed machine is called "machine N" or "host" already.
                    let label = if v.starts_with(&format!("{label} "))
                        || (label == "machine" && v == "host")
                    {
                        " ".to_string()
                    } else {
                        format!(" {label} ")
                    };
                    whom.push(Span::styled(label, theme.dim()));
                    whom.push(Span::raw(v.clone()));
                }
            }
            match &d.source {
                Source::File(file) => {
                    whom.push(Span::styled(" file ", theme.dim()));
                    whom.push(Span::raw(file.as_ref().unwrap_or(&state.input).clone()));
                }
                Source::MachineFiles(files) => match files.as_slice() {
                    [] => {}
                    [file] => {
                        whom.push(Span::styled(" file ", theme.dim()));
                        whom.push(Span::raw(file.clone()));
                    }
                    files => {
                        whom.push(Span::styled(" one of the machine's files ", theme.dim()));
                        whom.push(Span::raw(files.join(", ")));
                    }
                },
            }
            lines.push(Line::from(whom));
            if let Some(b) = &d.binder {
                lines.push(binder_line(b, theme));
            }
            if !d.flows.is_empty() {
                let mut flows = vec![Span::styled(" flows ", theme.dim())];
                for (i, f) in d.flows.iter().enumerate() {
                    let arrow = if f.outgoing { "→" } else { "←" };
                    flows.push(Span::raw(format!(
                        "{}{arrow} {} ({})",
                        if i > 0 { " · " } else { "" },
                        truncate(&f.name, (rect.width as usize / 2).max(16)),
                        format::offset(f.ts - start)
                    )));
                }
                flows.push(Span::styled("  Enter follows the first", theme.key()));
                lines.push(Line::from(flows));
            }
            if !d.args.is_empty() {
                let mut args = vec![Span::styled(" args ", theme.dim())];
                for (i, (k, v)) in d.args.iter().enumerate() {
                    args.push(Span::raw(format!(
                        "{}{k}={v}",
                        if i > 0 { " · " } else { "" }
                    )));
                }
                lines.push(Line::from(args));
            }
            lines
        }
    };
    // Continuation lines (a long file path, many args) start under the text, not at 0.
    frame.render_widget(
        super::super::wrap::paragraph(&lines, rect.width, 2).block(block),
        rect,
    );
}

pub(super) fn draw_footer(
    frame: &mut Frame,
    rect: Rect,
    state: &TimelineState,
    data: &TimelineData,
    rows: usize,
    theme: &Theme,
) {
    let line = if let Some(input) = &state.filter_input {
        let (shown, cursor) = input.view((rect.width as usize).saturating_sub(40));
        frame.set_cursor_position((rect.x + 15 + cursor as u16, rect.y));
        Line::from(vec![
            Span::styled(" filter tracks: ", theme.key()),
            Span::raw(shown),
            if rows == 0 && !input.text.is_empty() {
                Span::styled("  no track matches · Esc clears", theme.warning())
            } else {
                Span::styled(
                    format!("  {rows} rows · Enter keeps · Esc clears"),
                    theme.dim(),
                )
            },
        ])
    } else if let Some(input) = &state.search_input {
        let (shown, cursor) = input.view((rect.width as usize).saturating_sub(12));
        frame.set_cursor_position((rect.x + 9 + cursor as u16, rect.y));
        Line::from(vec![
            Span::styled(" search: ", theme.key()),
            Span::raw(shown),
        ])
    } else if let Some(m) = &state.message {
        Line::styled(format!(" {m}"), theme.warning())
    } else if state.aggregates.is_some() {
        let keys = if rect.width >= 90 {
            " < > tab · j/k row · o/O sort · Enter highlight · n/N step · x SQL · v new · Esc drops"
        } else {
            " <> tab · j/k · o sort · Enter mark · n/N · x SQL · v new · Esc"
        };
        Line::from(vec![
            Span::styled(" area:", theme.key()),
            Span::styled(keys, theme.dim()),
        ])
    } else if state.area.is_some_and(|a| a.editing) {
        let keys = if rect.width >= 90 {
            " ←/→ extend in time (Shift more) · j/k across tracks · v or Enter ends · Esc drops"
        } else {
            " ←/→ time (Shift more) · j/k tracks · v/Enter ends · Esc drops"
        };
        Line::from(vec![
            Span::styled(" area:", theme.key()),
            Span::styled(keys, theme.dim()),
        ])
    } else if let Some(f) = state.filter.as_ref().filter(|_| rows == 0) {
        Line::from(vec![
            Span::styled(
                format!(
                    " no track matches \"{}\" (name, process, thread, pid or tid)",
                    f.text
                ),
                theme.warning(),
            ),
            Span::styled(" · T edit · Esc clears the filter", theme.dim()),
        ])
    } else if let Some(f) = &state.filter {
        Line::from(vec![
            Span::styled(
                format!(" tracks matching \"{}\": {rows} rows", f.text),
                theme.key(),
            ),
            Span::styled(" · T edit · Esc clears the filter", theme.dim()),
        ])
    } else if let Some(s) = &state.search {
        Line::from(vec![
            Span::styled(
                format!(" \"{}\": {} matches", s.text, s.matches),
                theme.key(),
            ),
            Span::styled(" · n next · N previous · / new search", theme.dim()),
        ])
    } else {
        Line::styled(
            format!(
                " {} slices · {} rows · w/s zoom · a/d pan · j/k move · Enter select · / search · ? help",
                format::count(data.slices as f64),
                rows
            ),
            theme.dim(),
        )
    };
    frame.render_widget(Paragraph::new(line), rect);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(samples: Vec<(i64, f64)>) -> String {
        let area = Rect::new(0, 0, 8, 1);
        let geo = Geometry {
            ruler: Rect::default(),
            labels: Rect::default(),
            lanes: area,
            details: None,
            footer: Rect::default(),
        };
        let mut buf = Buffer::empty(area);
        let series = index::CounterSeries::new(samples);
        let cols = Columns::new(0, 80, area.width);
        draw_counter(
            &mut buf,
            &geo,
            0,
            &cols,
            &series,
            &Theme::new(ColorMode::Ansi16),
        );
        (0..area.width).map(|x| buf[(x, 0)].symbol()).collect()
    }

    /// A counter that is 0 throughout is a flat line at the floor (it was a half-height
    /// bar, `mem.locked ≤0` on api32); one that rises fills to its maximum.
    #[test]
    fn a_counter_at_zero_throughout_lies_on_the_floor() {
        assert_eq!(bars(vec![(0, 0.0), (40, 0.0)]), "▁▁▁▁▁▁▁▁");
        assert_eq!(bars(vec![(0, 0.0), (40, 4.0)]), "▁▁▁▁████");
    }
}

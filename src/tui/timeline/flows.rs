//! The selected slice's flows drawn on the timeline: each slice at the other end is
//! highlighted, and a vertical connector runs from the selected slice's lane to the other
//! end's lane at the column where the later of the two begins (a launch → kernel flow
//! reads as a line dropping from `cudaLaunchKernel` to the kernel it queued), over empty
//! cells only, with an arrowhead pointing at the flow's destination.

use ratatui::buffer::Buffer;

use super::index::Columns;
use super::load::{TimelineData, TrackData};
use super::{find, lane, DetailsView, Geometry, Row, TimelineState};
use crate::tui::theme::Theme;

/// The row index of a track's lane among the shown rows.
fn row_of(rows: &[Row], track: usize, depth: usize) -> Option<usize> {
    rows.iter().position(
        |r| matches!(*r, Row::Lane { track: t, depth: d, .. } if t == track && d == depth),
    )
}

pub(super) fn draw_flows(
    buf: &mut Buffer,
    geo: &Geometry,
    cols: &Columns,
    data: &TimelineData,
    state: &TimelineState,
    rows: &[Row],
    theme: &Theme,
) {
    let (Some(sel), DetailsView::Ready(details)) = (state.selection, &state.details) else {
        return;
    };
    let Some(src_row) = row_of(rows, sel.track, sel.depth) else {
        return;
    };
    let Some(src_ts) = lane(data, sel.track, sel.depth).and_then(|l| l.ts.get(sel.index)) else {
        return;
    };
    let lanes = geo.lanes;
    // Where each shown row is on screen (pinned rows stay on top while the rest scrolls).
    let screen = super::filter::screen_rows(
        rows.len(),
        state.pinned_count(),
        state.scroll,
        lanes.height as usize,
    );
    let visible = |row: usize| -> Option<u16> {
        screen
            .iter()
            .find(|(i, _)| *i == row)
            .map(|(_, line)| lanes.y + line)
    };
    let column = |t: i64| -> Option<u16> {
        let c = cols.col_of(t);
        (0..i64::from(lanes.width))
            .contains(&c)
            .then(|| lanes.x + c as u16)
    };
    for flow in &details.flows {
        let Some(track) = data
            .tracks
            .iter()
            .position(|t| t.db_id == flow.track_id && matches!(t.data, TrackData::Slices(_)))
        else {
            continue;
        };
        let Ok(depth) = usize::try_from(flow.depth) else {
            continue;
        };
        let Some(dst_row) = row_of(rows, track, depth) else {
            continue;
        };
        // The other end, highlighted across the columns it covers.
        let l = lane(data, track, depth);
        let end = u32::try_from(flow.slice_id)
            .ok()
            .and_then(|id| find(l?, flow.ts, id))
            .and_then(|i| l.map(|l| l.end[i]))
            .unwrap_or(flow.ts);
        let width = i64::from(lanes.width);
        let (from, to) = (
            cols.col_of(flow.ts),
            cols.col_of(end).max(cols.col_of(flow.ts) + 1),
        );
        if let (Some(y), true) = (visible(dst_row), from < width && to > 0) {
            for c in from.max(0)..to.min(width) {
                let cell = &mut buf[(lanes.x + c as u16, y)];
                cell.set_style(theme.flow_peer());
            }
        }
        // The connector, at the column where the later end begins.
        if src_row == dst_row {
            continue;
        }
        let Some(x) = column(flow.ts.max(*src_ts)) else {
            continue;
        };
        // The arrowhead sits next to the destination: the later slice for an outgoing
        // flow, the selected one for an incoming one.
        let (top, bottom) = (src_row.min(dst_row), src_row.max(dst_row));
        let head_row = if flow.outgoing { dst_row } else { src_row };
        let downward = head_row == bottom;
        for row in top + 1..bottom {
            let Some(y) = visible(row) else { continue };
            let cell = &mut buf[(x, y)];
            // A group's rule is crossed; anything else drawn there stays.
            if cell.symbol() == "─" {
                cell.set_symbol("┼");
                cell.set_style(theme.flow());
                continue;
            }
            if cell.symbol() != " " {
                continue;
            }
            let last = if downward {
                row + 1 == bottom
            } else {
                row == top + 1
            };
            let glyph = match (last, downward) {
                (true, true) => "▼",
                (true, false) => "▲",
                _ => "│",
            };
            cell.set_symbol(glyph);
            cell.set_style(theme.flow());
        }
    }
}

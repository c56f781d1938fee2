//! Which rows the track area shows: the tree (machine → process → thread, with each
//! machine's **Kernel threads** group after its processes), narrowed by a track filter
//! (`T`), with pinned tracks (`p`) first. Also where each row lands on screen, for drawing
//! and for the mouse, with the pinned rows held at the top while the rest scrolls.

use std::collections::HashSet;

use super::load::{TimelineData, TrackData};
use super::{Group, Row};

/// A track filter: tracks whose name, process, thread, pid or tid contain the text
/// (case-insensitive). The groups around a match stay, for context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackFilter {
    pub text: String,
    needle: String,
}

impl TrackFilter {
    pub fn new(text: &str) -> TrackFilter {
        TrackFilter {
            text: text.to_string(),
            needle: text.trim().to_lowercase(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.needle.is_empty()
    }

    fn hit(&self, label: &str) -> bool {
        label.to_lowercase().contains(&self.needle)
    }
}

/// The label of the Kernel threads group.
pub const KERNEL_LABEL: &str = "Kernel threads";

/// Which tracks a filter keeps (all of them without a filter).
fn kept_tracks(data: &TimelineData, filter: Option<&TrackFilter>) -> Option<HashSet<usize>> {
    let f = filter.filter(|f| !f.is_empty())?;
    let mut keep = HashSet::new();
    for (mi, m) in data.machines.iter().enumerate() {
        let kernel_from = kernel_from(data, mi);
        let machine_hit = f.hit(&m.label);
        for &t in &m.tracks {
            if machine_hit || f.hit(&data.tracks[t].label) {
                keep.insert(t);
            }
        }
        let kernel_hit = f.hit(KERNEL_LABEL);
        for (pi, p) in m.processes.iter().enumerate() {
            let process_hit = machine_hit || f.hit(&p.label) || (pi >= kernel_from && kernel_hit);
            for &t in &p.tracks {
                if process_hit || f.hit(&data.tracks[t].label) {
                    keep.insert(t);
                }
            }
            for th in &p.threads {
                // A thread's tracks all carry its label: a match on one keeps them all.
                let thread_hit =
                    process_hit || th.tracks.iter().any(|&t| f.hit(&data.tracks[t].label));
                if thread_hit {
                    keep.extend(th.tracks.iter().copied());
                }
            }
        }
    }
    Some(keep)
}

/// Where machine `mi`'s kernel threads start in its processes.
pub fn kernel_from(data: &TimelineData, mi: usize) -> usize {
    data.arrangement
        .kernel_from
        .get(mi)
        .copied()
        .unwrap_or(usize::MAX)
}

/// The rows of one track.
fn push_track(
    data: &TimelineData,
    collapsed: &HashSet<Group>,
    out: &mut Vec<Row>,
    t: usize,
    indent: u8,
    thread: Option<i64>,
) {
    let Some(track) = data.tracks.get(t) else {
        return;
    };
    match &track.data {
        TrackData::Slices(lanes) => {
            let shown = match thread {
                Some(utid) if collapsed.contains(&Group::Thread(utid)) => 1,
                _ => lanes.len(),
            };
            for depth in 0..shown.min(lanes.len()).max(1) {
                out.push(Row::Lane {
                    track: t,
                    depth,
                    indent,
                    thread,
                });
            }
        }
        TrackData::Sched(_)
        | TrackData::ThreadState(_)
        | TrackData::State(_)
        | TrackData::Samples(_) => out.push(Row::Lane {
            track: t,
            depth: 0,
            indent,
            thread: None,
        }),
        TrackData::Counter(_) => out.push(Row::Counter { track: t, indent }),
    }
}

/// The rows of the pinned tracks, each with all its lanes.
pub fn pinned_rows(data: &TimelineData, pinned: &[usize]) -> Vec<Row> {
    let mut out = Vec::new();
    for &t in pinned {
        push_track(data, &HashSet::new(), &mut out, t, 1, None);
    }
    out
}

/// The rows of the tree with these groups collapsed, narrowed by `filter`. Under a filter,
/// machine, process and kernel groups holding a match open so the match shows.
pub fn tree_rows(
    data: &TimelineData,
    collapsed: &HashSet<Group>,
    filter: Option<&TrackFilter>,
) -> Vec<Row> {
    let keep = kept_tracks(data, filter);
    let kept = |t: &usize| keep.as_ref().is_none_or(|k| k.contains(t));
    let is_collapsed = |g: Group| keep.is_none() && collapsed.contains(&g);
    let mut out = Vec::new();
    for (mi, m) in data.machines.iter().enumerate() {
        let any_kept = keep.is_none()
            || m.tracks.iter().any(kept)
            || m.processes.iter().any(|p| {
                p.tracks.iter().any(kept) || p.threads.iter().any(|th| th.tracks.iter().any(kept))
            });
        if !any_kept {
            continue;
        }
        out.push(Row::Machine { machine: mi });
        if is_collapsed(Group::Machine(m.id)) {
            continue;
        }
        for t in m.tracks.iter().filter(|t| kept(t)) {
            push_track(data, collapsed, &mut out, *t, 1, None);
        }
        let kernel_from = kernel_from(data, mi);
        for (pi, p) in m.processes.iter().enumerate() {
            let in_kernel = pi >= kernel_from;
            if pi == kernel_from {
                let any = keep.is_none()
                    || m.processes[pi..].iter().any(|p| {
                        p.tracks.iter().any(kept)
                            || p.threads.iter().any(|th| th.tracks.iter().any(kept))
                    });
                if !any {
                    break;
                }
                out.push(Row::Kernel { machine: mi });
                if is_collapsed(Group::Kernel(m.id)) {
                    break;
                }
            }
            let own: Vec<usize> = p.tracks.iter().copied().filter(kept).collect();
            let threads: Vec<(i64, Vec<usize>)> = p
                .threads
                .iter()
                .map(|th| (th.utid, th.tracks.iter().copied().filter(kept).collect()))
                .filter(|(_, t): &(i64, Vec<usize>)| !t.is_empty())
                .collect();
            if own.is_empty() && threads.is_empty() {
                continue;
            }
            out.push(Row::Process {
                machine: mi,
                process: pi,
            });
            if is_collapsed(Group::Process(p.upid)) {
                continue;
            }
            let indent = if in_kernel { 3 } else { 2 };
            for t in own {
                push_track(data, collapsed, &mut out, t, indent, None);
            }
            for (utid, tracks) in threads {
                for t in tracks {
                    push_track(data, collapsed, &mut out, t, indent, Some(utid));
                }
            }
        }
    }
    out
}

/// Where the rows go on screen: `(row index, line offset in the lanes area)`. The first
/// `pins` rows (the pinned tracks) stay at the top, at most all but one line; the rest
/// scroll from `scroll` (never above the pinned ones).
pub fn screen_rows(total: usize, pins: usize, scroll: usize, height: usize) -> Vec<(usize, u16)> {
    let pins_shown = pins.min(height.saturating_sub(1)).min(total);
    let mut out: Vec<(usize, u16)> = (0..pins_shown).map(|i| (i, i as u16)).collect();
    let first = scroll.max(pins);
    for (k, i) in (first..total).take(height - pins_shown).enumerate() {
        out.push((i, (pins_shown + k) as u16));
    }
    out
}

/// The scroll that keeps `cursor` on screen, given the pinned rows.
pub fn scroll_for(cursor: usize, scroll: usize, pins: usize, height: usize, total: usize) -> usize {
    let pins_shown = pins.min(height.saturating_sub(1));
    let page = height.saturating_sub(pins_shown).max(1);
    let mut scroll = scroll.max(pins);
    if cursor >= pins {
        if cursor < scroll {
            scroll = cursor;
        } else if cursor >= scroll + page {
            scroll = cursor + 1 - page;
        }
    }
    scroll.min(total.saturating_sub(1).max(pins))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_rows_stay_on_top() {
        // 2 pinned rows, 10 in all, 5 lines: pins on lines 0-1, then rows from the scroll.
        let s = screen_rows(10, 2, 6, 5);
        assert_eq!(s, vec![(0, 0), (1, 1), (6, 2), (7, 3), (8, 4)]);
        let s = screen_rows(10, 0, 0, 3);
        assert_eq!(s, vec![(0, 0), (1, 1), (2, 2)]);
    }

    #[test]
    fn scroll_follows_the_cursor_below_the_pins() {
        assert_eq!(scroll_for(9, 0, 2, 5, 10), 7);
        assert_eq!(scroll_for(0, 7, 2, 5, 10), 7);
        assert_eq!(scroll_for(3, 7, 2, 5, 10), 3);
    }
}

//! Query results on the timeline, as the Perfetto UI's debug tracks: a result of the SQL
//! pane with `ts` and `dur` columns (and optionally `name`, and `utid` or `track_id` to make
//! one track per value) becomes tracks pinned at the top. `[`/`]` on one step through its
//! rows, moving the view to each; `p` removes it.

use std::collections::BTreeMap;

use super::index::Lane;
use crate::tui::format;
use crate::tui::query::{Cell, QueryResult};
use crate::tui::sanitize::sanitize;
use crate::tui::theme::name_hash;

/// At most this many tracks from one result (one per `utid`/`track_id` value).
pub const MAX_TRACKS: usize = 32;

#[derive(Debug, Clone)]
pub struct DebugTrack {
    pub label: String,
    /// Rows nested by overlap: a row goes to the first lane free at its start.
    pub lanes: Vec<Lane>,
    pub names: Vec<Box<str>>,
    pub name_hashes: Vec<u32>,
    /// Every row by start: (ts, end, lane, index in the lane).
    pub order: Vec<(i64, i64, usize, usize)>,
    /// The row `[`/`]` last went to.
    pub at: Option<usize>,
}

impl DebugTrack {
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }
}

fn column(result: &QueryResult, name: &str) -> Option<usize> {
    result
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case(name))
}

fn int(c: &Cell) -> Option<i64> {
    match c {
        Cell::Int(v) => Some(*v),
        Cell::Real(v) => v.is_finite().then_some(*v as i64),
        Cell::Text(t) => t.trim().parse().ok(),
        Cell::Null => None,
    }
}

/// The tracks a result makes, or why it cannot make one.
pub fn from_result(sql: &str, result: &QueryResult) -> Result<Vec<DebugTrack>, String> {
    let ts = column(result, "ts").ok_or("the result has no ts column")?;
    let dur = column(result, "dur").ok_or("the result has no dur column")?;
    let name = column(result, "name");
    let pivot = column(result, "utid")
        .map(|c| ("utid", c))
        .or_else(|| column(result, "track_id").map(|c| ("track_id", c)));
    let mut groups: BTreeMap<Option<i64>, Vec<(i64, i64, String)>> = BTreeMap::new();
    for row in &result.rows {
        let Some(t) = row.get(ts).and_then(int) else {
            continue;
        };
        let d = row.get(dur).and_then(int).unwrap_or(0).max(0);
        let n = match name.and_then(|i| row.get(i)) {
            Some(Cell::Text(s)) => sanitize(s).into_owned(),
            Some(Cell::Int(v)) => v.to_string(),
            Some(Cell::Real(v)) => v.to_string(),
            _ => String::new(),
        };
        let key = pivot.and_then(|(_, c)| row.get(c).and_then(int));
        groups
            .entry(key)
            .or_default()
            .push((t, t.saturating_add(d.max(1)), n));
    }
    if groups.is_empty() {
        return Err("no row of the result has a ts".into());
    }
    let title: String = sanitize(
        sql.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
    )
    .chars()
    .take(60)
    .collect();
    let mut out = Vec::new();
    for (key, mut rows) in groups.into_iter().take(MAX_TRACKS) {
        rows.sort_by_key(|r| (r.0, std::cmp::Reverse(r.1)));
        let mut track = DebugTrack {
            label: match (pivot, key) {
                (Some((col, _)), Some(v)) => format!("{col} {v}: {title}"),
                _ => title.clone(),
            },
            lanes: Vec::new(),
            names: Vec::new(),
            name_hashes: Vec::new(),
            order: Vec::new(),
            at: None,
        };
        let mut ids: BTreeMap<String, u32> = BTreeMap::new();
        let mut lane_end: Vec<i64> = Vec::new();
        for (i, (t, end, n)) in rows.into_iter().enumerate() {
            let id = *ids.entry(n.clone()).or_insert_with(|| {
                track.names.push(n.clone().into());
                track.name_hashes.push(name_hash(&n));
                (track.names.len() - 1) as u32
            });
            let lane = match lane_end.iter().position(|&e| e <= t) {
                Some(l) => l,
                None => {
                    lane_end.push(i64::MIN);
                    track.lanes.push(Lane::default());
                    lane_end.len() - 1
                }
            };
            lane_end[lane] = end;
            let index = track.lanes[lane].len();
            track.lanes[lane].push(t, end, u32::try_from(i).unwrap_or(u32::MAX), id);
            track.order.push((t, end, lane, index));
        }
        out.push(track);
    }
    Ok(out)
}

/// What the footer says of row `i` of a track.
pub fn describe(track: &DebugTrack, i: usize, trace_start: i64) -> String {
    let Some(&(ts, end, lane, index)) = track.order.get(i) else {
        return String::new();
    };
    let name = track
        .lanes
        .get(lane)
        .and_then(|l| l.name.get(index))
        .map_or("", |&n| track.name(n));
    format!(
        "row {}/{}: {name} at {} for {}",
        i + 1,
        track.order.len(),
        format::offset(ts - trace_start),
        format::duration(end - ts)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(columns: &[&str], rows: Vec<Vec<Cell>>) -> QueryResult {
        QueryResult {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
            truncated: false,
            statements: 0,
        }
    }

    #[test]
    fn overlapping_rows_nest_and_utid_splits_tracks() {
        let r = result(
            &["ts", "dur", "name", "utid"],
            vec![
                vec![
                    Cell::Int(0),
                    Cell::Int(10),
                    Cell::Text("a".into()),
                    Cell::Int(1),
                ],
                vec![
                    Cell::Int(5),
                    Cell::Int(2),
                    Cell::Text("b".into()),
                    Cell::Int(1),
                ],
                vec![
                    Cell::Int(20),
                    Cell::Int(1),
                    Cell::Text("c".into()),
                    Cell::Int(1),
                ],
                vec![
                    Cell::Int(3),
                    Cell::Int(1),
                    Cell::Text("d".into()),
                    Cell::Int(2),
                ],
            ],
        );
        let tracks = from_result("select 1", &r).unwrap();
        assert_eq!(tracks.len(), 2);
        assert_eq!(tracks[0].lanes.len(), 2);
        assert_eq!(tracks[0].lanes[0].len(), 2);
        assert!(tracks[0].label.starts_with("utid 1: "));
    }

    #[test]
    fn a_result_without_ts_says_so() {
        let r = result(&["x"], vec![vec![Cell::Int(1)]]);
        assert!(from_result("s", &r).unwrap_err().contains("ts"));
    }
}

//! The timeline's in-memory index: what makes a frame cost the same at any zoom.
//!
//! A [`Lane`] holds the slices of one (track, depth) sorted by start; slices at one depth do
//! not overlap, so their ends are sorted too and one binary search finds the first slice
//! reaching into any time. Drawing a lane walks the screen, not the slices: at each column
//! it seeks the first slice ending after the column's start, draws it across the columns it
//! covers and jumps past them — at most one seek per column whatever the window holds.
//! Counters keep a min/max segment tree, so a column's range of samples is summarised in
//! O(log n) however many samples it spans.

/// Maps trace time to terminal columns for a window of `span` ns starting at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub start: i64,
    pub span: i64,
    pub width: u16,
}

impl Columns {
    pub fn new(start: i64, span: i64, width: u16) -> Columns {
        Columns {
            start,
            span: span.max(1),
            width,
        }
    }

    pub fn end(&self) -> i64 {
        self.start.saturating_add(self.span)
    }

    /// The time at which column `col` begins.
    pub fn time_at(&self, col: u16) -> i64 {
        let offset = i128::from(self.span) * i128::from(col) / i128::from(self.width.max(1));
        self.start.saturating_add(offset as i64)
    }

    /// The column holding time `t` (may lie outside `0..width`).
    pub fn col_of(&self, t: i64) -> i64 {
        let rel = i128::from(t) - i128::from(self.start);
        (rel * i128::from(self.width)).div_euclid(i128::from(self.span)) as i64
    }

    /// The first column starting at or after `t`.
    fn col_ceil(&self, t: i64) -> i64 {
        let rel = i128::from(t) - i128::from(self.start);
        let n = rel * i128::from(self.width);
        let d = i128::from(self.span);
        (n.div_euclid(d) + i128::from(n.rem_euclid(d) != 0)) as i64
    }
}

/// Slices of one (track, depth), sorted by start. `end` is start + max(dur, 1) so instants
/// occupy time; an unfinished slice (dur -1) ends at the end of the trace.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    pub ts: Vec<i64>,
    pub end: Vec<i64>,
    /// Row id in the slice (or sched) table.
    pub id: Vec<u32>,
    /// Index into the timeline's name table.
    pub name: Vec<u32>,
}

/// One run of columns drawn for one slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub col_start: u16,
    pub col_end: u16,
    /// Index of the slice in its lane.
    pub index: usize,
    /// More than one slice shares this single column.
    pub crowded: bool,
}

impl Lane {
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    pub fn push(&mut self, ts: i64, end: i64, id: u32, name: u32) {
        self.ts.push(ts);
        self.end.push(end);
        self.id.push(id);
        self.name.push(name);
    }

    /// Sorts by start; loads arrive in id order, which is usually but not always ts order.
    pub fn sort(&mut self) {
        if !self.ts.windows(2).all(|w| w[0] <= w[1]) {
            let mut order: Vec<usize> = (0..self.len()).collect();
            order.sort_by_key(|&i| (self.ts[i], self.id[i]));
            self.ts = order.iter().map(|&i| self.ts[i]).collect();
            self.end = order.iter().map(|&i| self.end[i]).collect();
            self.id = order.iter().map(|&i| self.id[i]).collect();
            self.name = order.iter().map(|&i| self.name[i]).collect();
        }
        // Ends must stay sorted for the binary search; a slice that overlaps its
        // predecessor (malformed input) is drawn from where the previous one ends.
        for i in 1..self.end.len() {
            if self.end[i] < self.end[i - 1] {
                self.end[i] = self.end[i - 1];
            }
        }
    }

    /// Sorts a lane of back-to-back intervals (a CPU's sched slices, a thread's states):
    /// one whose end is unknown (drawn to the end of the trace) ends where the next begins.
    pub fn sort_sequential(&mut self) {
        self.sort();
        for i in 1..self.ts.len() {
            if self.end[i - 1] > self.ts[i] {
                self.end[i - 1] = self.ts[i].max(self.ts[i - 1].saturating_add(1));
            }
        }
        for i in 1..self.end.len() {
            if self.end[i] < self.end[i - 1] {
                self.end[i] = self.end[i - 1];
            }
        }
    }

    /// The first slice ending after `t`.
    pub fn first_ending_after(&self, t: i64) -> usize {
        self.end.partition_point(|&e| e <= t)
    }

    /// Like [`Lane::first_ending_after`], for a `t` known to lie at or after the end of slice
    /// `from - 1`: gallops forward from `from`, so walking a window's columns left to
    /// right touches nearby memory instead of restarting each search at the middle.
    pub fn first_ending_after_from(&self, t: i64, from: usize) -> usize {
        let n = self.end.len();
        let mut lo = from.min(n);
        let mut step = 1;
        let mut hi = lo;
        while hi < n && self.end[hi] <= t {
            lo = hi + 1;
            hi = lo + step;
            step *= 2;
        }
        let hi = hi.min(n);
        lo + self.end[lo..hi].partition_point(|&e| e <= t)
    }

    /// The slice covering `t`, if any.
    pub fn at(&self, t: i64) -> Option<usize> {
        let i = self.first_ending_after(t);
        (i < self.len() && self.ts[i] <= t).then_some(i)
    }

    /// The slice under a column: the one covering its start, else the first starting in it.
    pub fn in_column(&self, cols: &Columns, col: u16) -> Option<usize> {
        let t0 = cols.time_at(col);
        let t1 = cols.time_at(col + 1).max(t0 + 1);
        let i = self.first_ending_after(t0);
        (i < self.len() && self.ts[i] < t1).then_some(i)
    }

    /// The spans to draw in the window; at most one binary search per column.
    pub fn spans<'a>(&'a self, cols: &'a Columns) -> impl Iterator<Item = Span> + 'a {
        let width = i64::from(cols.width);
        let window_end = cols.end();
        let mut col: i64 = 0;
        let mut next: Option<usize> = None;
        std::iter::from_fn(move || {
            if col >= width {
                return None;
            }
            let t = cols.time_at(col as u16);
            let i = match next {
                Some(from) => self.first_ending_after_from(t, from),
                None => self.first_ending_after(t),
            };
            if i >= self.len() || self.ts[i] >= window_end {
                col = width;
                return None;
            }
            let start = cols.col_of(self.ts[i]).max(col);
            if start >= width {
                col = width;
                return None;
            }
            let end = cols.col_ceil(self.end[i]).clamp(start + 1, width);
            let crowded = end == start + 1
                && self
                    .ts
                    .get(i + 1)
                    .is_some_and(|&next| next < cols.time_at((start + 1) as u16));
            col = end;
            next = Some(i + 1);
            Some(Span {
                col_start: start as u16,
                col_end: end as u16,
                index: i,
                crowded,
            })
        })
    }
}

/// Min/max over index ranges in O(log n): an iterative segment tree.
#[derive(Clone, Debug, Default)]
pub struct MinMaxTree {
    len: usize,
    min: Vec<f64>,
    max: Vec<f64>,
}

impl MinMaxTree {
    pub fn new(values: &[f64]) -> MinMaxTree {
        let len = values.len();
        let mut min = vec![f64::INFINITY; 2 * len];
        let mut max = vec![f64::NEG_INFINITY; 2 * len];
        min[len..].copy_from_slice(values);
        max[len..].copy_from_slice(values);
        for i in (1..len).rev() {
            min[i] = min[2 * i].min(min[2 * i + 1]);
            max[i] = max[2 * i].max(max[2 * i + 1]);
        }
        MinMaxTree { len, min, max }
    }

    /// (min, max) of values[from..to]; None when the range is empty.
    pub fn range(&self, from: usize, to: usize) -> Option<(f64, f64)> {
        let (mut l, mut r) = (from.min(self.len) + self.len, to.min(self.len) + self.len);
        if l >= r {
            return None;
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        while l < r {
            if l & 1 == 1 {
                lo = lo.min(self.min[l]);
                hi = hi.max(self.max[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                lo = lo.min(self.min[r]);
                hi = hi.max(self.max[r]);
            }
            l /= 2;
            r /= 2;
        }
        Some((lo, hi))
    }
}

/// A counter track's samples, sorted by time, with a min/max tree over the values.
#[derive(Clone, Debug, Default)]
pub struct CounterSeries {
    pub ts: Vec<i64>,
    pub value: Vec<f64>,
    pub tree: MinMaxTree,
    pub min: f64,
    pub max: f64,
}

impl CounterSeries {
    pub fn new(mut samples: Vec<(i64, f64)>) -> CounterSeries {
        samples.sort_by_key(|s| s.0);
        let ts: Vec<i64> = samples.iter().map(|s| s.0).collect();
        let value: Vec<f64> = samples.iter().map(|s| s.1).collect();
        let tree = MinMaxTree::new(&value);
        let (min, max) = tree.range(0, value.len()).unwrap_or((0.0, 0.0));
        CounterSeries {
            ts,
            value,
            tree,
            min,
            max,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// (min, max) of the counter over [t0, t1): the samples inside plus the value that was
    /// current at t0. None before the first sample.
    pub fn range(&self, t0: i64, t1: i64) -> Option<(f64, f64)> {
        let a = self.ts.partition_point(|&t| t < t0);
        let b = self.ts.partition_point(|&t| t < t1);
        let carried = a.checked_sub(1).map(|i| self.value[i]);
        let inside = self.tree.range(a, b);
        match (carried, inside) {
            (None, None) => None,
            (Some(v), None) => Some((v, v)),
            (None, Some(r)) => Some(r),
            (Some(v), Some((lo, hi))) => Some((lo.min(v), hi.max(v))),
        }
    }

    /// The value current at `t`.
    pub fn value_at(&self, t: i64) -> Option<f64> {
        let i = self.ts.partition_point(|&x| x <= t);
        i.checked_sub(1).map(|i| self.value[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(slices: &[(i64, i64)]) -> Lane {
        let mut l = Lane::default();
        for (i, &(ts, dur)) in slices.iter().enumerate() {
            l.push(ts, ts + dur.max(1), i as u32, 0);
        }
        l
    }

    #[test]
    fn an_interval_of_unknown_end_stops_where_the_next_begins() {
        // A thread state whose end was lost is drawn to the end of the trace (1000) by the
        // loader; the states after it must stay reachable.
        let mut l = Lane::default();
        l.push(0, 1000, 0, 0);
        l.push(100, 200, 1, 0);
        l.push(200, 1000, 2, 0);
        l.sort_sequential();
        assert_eq!(l.end, [100, 200, 1000]);
        assert_eq!(l.first_ending_after(150), 1);
    }

    #[test]
    fn columns_map_both_ways() {
        let c = Columns::new(1000, 100, 10);
        assert_eq!(c.time_at(0), 1000);
        assert_eq!(c.time_at(5), 1050);
        assert_eq!(c.col_of(1055), 5);
        assert_eq!(c.col_of(990), -1);
        assert_eq!(c.col_ceil(1051), 6);
        assert_eq!(c.col_ceil(1050), 5);
    }

    #[test]
    fn spans_cover_slices_and_skip_gaps() {
        let l = lane(&[(0, 20), (50, 30), (95, 100)]);
        let c = Columns::new(0, 100, 10);
        let spans: Vec<_> = l
            .spans(&c)
            .map(|s| (s.col_start, s.col_end, s.index))
            .collect();
        assert_eq!(spans, vec![(0, 2, 0), (5, 8, 1), (9, 10, 2)]);
    }

    #[test]
    fn crowded_columns_cost_one_span() {
        // 1000 slices of 1 ns inside one column: one span, flagged crowded.
        let slices: Vec<(i64, i64)> = (0..1000).map(|i| (i * 2, 1)).collect();
        let l = lane(&slices);
        let c = Columns::new(0, 1_000_000, 10);
        let spans: Vec<_> = l.spans(&c).collect();
        assert_eq!(spans.len(), 1);
        assert!(spans[0].crowded);
        assert_eq!((spans[0].col_start, spans[0].col_end), (0, 1));
    }

    #[test]
    fn a_window_inside_one_slice_is_one_full_span() {
        let l = lane(&[(0, 1_000_000)]);
        let c = Columns::new(500, 10, 80);
        let spans: Vec<_> = l.spans(&c).collect();
        assert_eq!(spans.len(), 1);
        assert_eq!((spans[0].col_start, spans[0].col_end), (0, 80));
    }

    #[test]
    fn galloping_search_agrees_with_binary_search() {
        let slices: Vec<(i64, i64)> = (0..500).map(|i| (i * 10 + (i % 3), 4 + i % 5)).collect();
        let l = lane(&slices);
        for from in [0, 1, 7, 100, 499, 500] {
            for t in (0..5_100).step_by(7) {
                if from > 0 && l.end[from - 1] > t {
                    continue;
                }
                assert_eq!(
                    l.first_ending_after_from(t, from),
                    l.first_ending_after(t),
                    "t {t} from {from}"
                );
            }
        }
    }

    #[test]
    fn lookup_by_time_and_column() {
        let l = lane(&[(10, 10), (30, 0)]);
        assert_eq!(l.at(15), Some(0));
        assert_eq!(l.at(25), None);
        assert_eq!(l.at(30), Some(1));
        let c = Columns::new(0, 40, 4);
        assert_eq!(l.in_column(&c, 1), Some(0));
        assert_eq!(l.in_column(&c, 2), None);
        assert_eq!(l.in_column(&c, 3), Some(1));
    }

    #[test]
    fn sort_orders_by_start_and_keeps_ends_monotone() {
        let mut l = Lane::default();
        l.push(50, 60, 1, 0);
        l.push(0, 100, 0, 0);
        l.sort();
        assert_eq!(l.ts, vec![0, 50]);
        assert_eq!(l.end, vec![100, 100]);
        assert_eq!(l.id, vec![0, 1]);
    }

    #[test]
    fn min_max_tree_matches_a_scan() {
        let values: Vec<f64> = (0..37).map(|i| ((i * 7919) % 101) as f64 - 50.0).collect();
        let tree = MinMaxTree::new(&values);
        for from in 0..values.len() {
            for to in from..=values.len() {
                let expect = (from < to).then(|| {
                    let s = &values[from..to];
                    (
                        s.iter().cloned().fold(f64::INFINITY, f64::min),
                        s.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                    )
                });
                assert_eq!(tree.range(from, to), expect, "{from}..{to}");
            }
        }
    }

    #[test]
    fn counter_range_carries_the_current_value() {
        let c = CounterSeries::new(vec![(10, 1.0), (20, 5.0), (30, 2.0)]);
        assert_eq!(c.range(0, 5), None);
        assert_eq!(c.range(12, 18), Some((1.0, 1.0)));
        assert_eq!(c.range(12, 25), Some((1.0, 5.0)));
        assert_eq!(c.range(21, 40), Some((2.0, 5.0)));
        assert_eq!(c.value_at(25), Some(5.0));
        assert_eq!((c.min, c.max), (1.0, 5.0));
    }
}

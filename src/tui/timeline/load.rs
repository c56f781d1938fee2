//! Reads the timeline's tracks from the database into the in-memory index: the track tree
//! (machine → process → thread) and, per track, lanes of slices, a counter series or a
//! CPU's sched slices. Runs on the loader thread; the UI only ever reads the result.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::index::{CounterSeries, Lane};
use super::ml;
use crate::tui::sanitize::{sanitize, sanitize_bytes};
use crate::tui::theme::name_hash;

/// What one track draws.
#[derive(Debug)]
pub enum TrackData {
    /// Slices, one lane per depth.
    Slices(Vec<Lane>),
    Counter(CounterSeries),
    /// One CPU's sched slices; `name` indexes thread labels.
    Sched(Lane),
    /// One thread's scheduling states (`thread_state`), named by what they mean.
    ThreadState(Lane),
    /// A state track's values (`state`): each holds until the next.
    State(Lane),
    /// One thread's CPU profile samples (`cpu_profile_stack_sample`, `perf_sample`), each
    /// named by its leaf function and lasting until the thread's next sample; ids of
    /// `perf_sample` rows carry [`PERF_SAMPLE`].
    Samples(Lane),
}

/// Marks a samples lane's id as a `perf_sample` row (else a `cpu_profile_stack_sample`).
pub const PERF_SAMPLE: u32 = 1 << 31;

impl TrackData {
    /// The one lane of a single-lane track (sched, thread state, state).
    pub fn single_lane(&self) -> Option<&Lane> {
        match self {
            TrackData::Sched(l)
            | TrackData::ThreadState(l)
            | TrackData::State(l)
            | TrackData::Samples(l) => Some(l),
            TrackData::Slices(_) | TrackData::Counter(_) => None,
        }
    }
}

#[derive(Debug)]
pub struct Track {
    /// `__intrinsic_track.id`, the `ucpu` of a CPU's sched track, or the `utid` of a
    /// thread-state track.
    pub db_id: i64,
    pub label: String,
    pub data: TrackData,
}

#[derive(Debug)]
pub struct ThreadNode {
    pub utid: i64,
    pub tracks: Vec<usize>,
}

#[derive(Debug)]
pub struct ProcessNode {
    pub upid: i64,
    pub label: String,
    pub tracks: Vec<usize>,
    pub threads: Vec<ThreadNode>,
}

#[derive(Debug)]
pub struct MachineNode {
    pub id: i64,
    pub label: String,
    /// CPU tracks first, then the machine's other tracks.
    pub tracks: Vec<usize>,
    pub processes: Vec<ProcessNode>,
}

/// Everything the timeline draws, indexed for constant-cost frames.
#[derive(Debug, Default)]
pub struct TimelineData {
    pub start: i64,
    pub end: i64,
    /// Sanitized slice names and thread labels; lanes refer to them by index.
    pub names: Vec<Box<str>>,
    /// Colour hash of each name.
    pub name_hashes: Vec<u32>,
    pub machines: Vec<MachineNode>,
    pub tracks: Vec<Track>,
    pub slices: u64,
    /// Where the kernel threads start and which groups start collapsed (see [`super::order`]).
    pub arrangement: super::order::Arrangement,
    /// Names drawn as an alert: janky FrameTimeline frames (their name starts with `!`,
    /// which reads without colour too).
    pub alert_names: std::collections::HashSet<u32>,
    /// Android log lines, in time order (the log pane).
    pub logs: Vec<LogEntry>,
}

/// One `android_logs` line, sanitized for the screen.
#[derive(Debug)]
pub struct LogEntry {
    pub ts: i64,
    /// 2 V, 3 D, 4 I, 5 W, 6 E, 7 F.
    pub prio: i64,
    pub tag: Box<str>,
    pub thread: Box<str>,
    pub msg: Box<str>,
}

impl TimelineData {
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }
}

#[derive(Default)]
struct Names {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

/// Where an interval of `dur` from `ts` ends on screen: an unfinished one (−1) reaches
/// `open_end`, and every interval covers at least 1 ns so it can be drawn and picked.
fn interval_end(ts: i64, dur: i64, open_end: i64) -> i64 {
    if dur < 0 {
        open_end.max(ts.saturating_add(1))
    } else {
        ts.saturating_add(dur.max(1))
    }
}

impl Names {
    /// A name read from the database; anything but text is the empty name.
    fn intern_value(&mut self, v: ValueRef<'_>) -> u32 {
        match v {
            ValueRef::Text(b) => self.intern(&String::from_utf8_lossy(b)),
            _ => self.intern(""),
        }
    }

    fn intern(&mut self, raw: &str) -> u32 {
        if let Some(&id) = self.ids.get(raw) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(sanitize(raw).into());
        self.ids.insert(raw.into(), id);
        id
    }
}

fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(t) => Some(sanitize_bytes(t)),
        ValueRef::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

struct ProcessInfo {
    machine: i64,
    pid: i64,
    label: String,
    /// The process's own name (no pid).
    name: Option<String>,
    /// A GPU device as Kineto writes one (its threads are streams): shown after the CPU
    /// processes, as `GPU <pid>`.
    gpu: bool,
}

struct ThreadInfo {
    machine: i64,
    upid: Option<i64>,
    tid: i64,
    label: String,
    /// The GPU stream this thread is, if Kineto named it so.
    stream: Option<i64>,
}

/// Where a track sits in the tree.
enum Owner {
    Machine(i64),
    Process(i64),
    Thread(i64),
}

/// Loads the whole timeline. Cost is one scan of slice, counter and sched.
/// The Android log lines, with their thread's label (none when the table is missing, as
/// in a database written by an older Sextant).
fn load_logs(conn: &Connection, threads: &HashMap<i64, ThreadInfo>) -> Vec<LogEntry> {
    let read = || -> rusqlite::Result<Vec<LogEntry>> {
        let mut stmt =
            conn.prepare("SELECT ts, prio, tag, msg, utid FROM android_logs ORDER BY ts, id")?;
        let mut rows = stmt.query([])?;
        let mut logs = Vec::new();
        while let Some(r) = rows.next()? {
            let utid: Option<i64> = r.get(4)?;
            let thread = utid
                .and_then(|u| threads.get(&u))
                .map_or("?", |t| t.label.as_str());
            logs.push(LogEntry {
                ts: r.get(0)?,
                prio: r.get::<_, Option<i64>>(1)?.unwrap_or(4),
                tag: sanitize(&text(r.get_ref(2)?).unwrap_or_default()).into(),
                thread: sanitize(thread).into(),
                msg: sanitize(&text(r.get_ref(3)?).unwrap_or_default()).into(),
            });
        }
        Ok(logs)
    };
    read().unwrap_or_default()
}

/// Each sampled thread's samples as a lane: a sample lasts until the thread's next one, or
/// (the last, or one after a pause longer than ten usual intervals) for one usual interval.
/// Tables missing (an older database) give none.
fn load_samples(conn: &Connection, names: &mut Names) -> Vec<(i64, Lane)> {
    let read =
        |sql: &str, flag: u32, names: &mut Names| -> rusqlite::Result<Vec<(i64, i64, u32, u32)>> {
            let mut stmt = conn.prepare(sql)?;
            let mut rows = stmt.query([])?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let Some(utid) = r.get::<_, Option<i64>>(2)? else {
                    continue;
                };
                let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
                    continue;
                };
                if id & PERF_SAMPLE != 0 {
                    continue;
                }
                let name = names.intern(&text(r.get_ref(3)?).unwrap_or_else(|| "?".into()));
                out.push((utid, r.get(1)?, id | flag, name));
            }
            Ok(out)
        };
    let leaf = |table: &str| {
        format!(
            "SELECT s.id, s.ts, s.utid, f.name FROM {table} s
             LEFT JOIN stack_profile_callsite c ON c.id = s.callsite_id
             LEFT JOIN stack_profile_frame f ON f.id = c.frame_id"
        )
    };
    let mut all = read(&leaf("cpu_profile_stack_sample"), 0, names).unwrap_or_default();
    all.extend(read(&leaf("perf_sample"), PERF_SAMPLE, names).unwrap_or_default());
    all.sort_unstable_by_key(|&(utid, ts, id, _)| (utid, ts, id));
    let mut out: Vec<(i64, Lane)> = Vec::new();
    let mut start = 0;
    while start < all.len() {
        let utid = all[start].0;
        let mut end = start;
        while end < all.len() && all[end].0 == utid {
            end += 1;
        }
        let group = &all[start..end];
        let mut gaps: Vec<i64> = group
            .windows(2)
            .map(|w| w[1].1 - w[0].1)
            .filter(|g| *g > 0)
            .collect();
        gaps.sort_unstable();
        let usual = gaps.get(gaps.len() / 2).copied().unwrap_or(1).max(1);
        let mut lane = Lane::default();
        for (i, &(_, ts, id, name)) in group.iter().enumerate() {
            let next = group.get(i + 1).map(|n| n.1);
            let until = match next {
                Some(n) if n > ts && n - ts <= usual.saturating_mul(10) => n,
                _ => ts.saturating_add(usual),
            };
            lane.push(ts, until, id, name);
        }
        out.push((utid, lane));
        start = end;
    }
    out
}

/// What an unnamed machine is called, as the clock graph and `sextant merge` call it: the
/// host (raw id 0), else `machine <raw id>`.
pub fn unnamed_machine(raw: i64) -> String {
    match raw {
        0 => "host".to_string(),
        raw => format!("machine {raw}"),
    }
}

pub fn load(conn: &Connection) -> rusqlite::Result<TimelineData> {
    let mut names = Names::default();
    let machines: Vec<(i64, String)> = {
        let mut stmt = conn.prepare("SELECT id, name, raw_id FROM machine ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            let id: i64 = r.get(0)?;
            let name = text(r.get_ref(1)?).filter(|s| !s.is_empty());
            let raw: Option<i64> = r.get(2)?;
            Ok((
                id,
                name.unwrap_or_else(|| unnamed_machine(raw.unwrap_or(id))),
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut processes: HashMap<i64, ProcessInfo> = HashMap::new();
    {
        let mut stmt = conn.prepare("SELECT upid, pid, name, machine_id FROM process")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let upid: i64 = r.get(0)?;
            let pid: i64 = r.get::<_, Option<i64>>(1)?.unwrap_or(0);
            let name = text(r.get_ref(2)?).filter(|s| !s.is_empty());
            let label = match &name {
                Some(n) => format!("{n} {pid}"),
                None => format!("process {pid}"),
            };
            let machine = r.get::<_, Option<i64>>(3)?.unwrap_or(0);
            processes.insert(
                upid,
                ProcessInfo {
                    machine,
                    pid,
                    label,
                    name,
                    gpu: false,
                },
            );
        }
    }
    let mut threads: HashMap<i64, ThreadInfo> = HashMap::new();
    let mut idle_utids = std::collections::HashSet::new();
    {
        let mut stmt = conn.prepare("SELECT utid, tid, name, upid, machine_id FROM thread")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let utid: i64 = r.get(0)?;
            let tid: i64 = r.get::<_, Option<i64>>(1)?.unwrap_or(0);
            let upid: Option<i64> = r.get(3)?;
            let process = upid.and_then(|u| processes.get(&u));
            let name = text(r.get_ref(2)?).filter(|s| !s.is_empty()).or_else(|| {
                // A main thread without a name goes by its process's name.
                process
                    .filter(|p| p.pid == tid)
                    .and_then(|p| p.label.rsplit_once(' ').map(|(n, _)| n.to_string()))
                    .filter(|n| n != "process")
            });
            if tid == 0 {
                idle_utids.insert(utid);
            }
            threads.insert(
                utid,
                ThreadInfo {
                    machine: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                    upid,
                    tid,
                    label: ml::thread_label(name.as_deref(), tid),
                    stream: name.as_deref().and_then(ml::stream_number),
                },
            );
        }
    }
    // Kineto's GPU devices: processes with stream threads.
    for t in threads.values() {
        if let (Some(_), Some(upid)) = (t.stream, t.upid) {
            if let Some(p) = processes.get_mut(&upid) {
                if !p.gpu {
                    p.gpu = true;
                    p.label = ml::gpu_label(p.pid, p.name.as_deref());
                }
            }
        }
    }

    let mut tracks: Vec<Track> = Vec::new();
    let mut owners: Vec<Owner> = Vec::new();
    // track id → index in `tracks` (ids are dense row ids).
    let mut by_id: HashMap<i64, usize> = HashMap::new();
    {
        let mut stmt = conn.prepare(
            "SELECT id, name, type, event_type, utid, upid, cpu, machine_id, unit
             FROM __intrinsic_track ORDER BY id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let name = text(r.get_ref(1)?).filter(|s| !s.is_empty());
            let kind = text(r.get_ref(2)?).unwrap_or_default();
            let event_type = text(r.get_ref(3)?);
            let is_counter = event_type.as_deref() == Some("counter");
            let is_state = event_type.as_deref() == Some("state");
            let utid: Option<i64> = r.get(4)?;
            let upid: Option<i64> = r.get(5)?;
            let cpu: Option<i64> = r.get(6)?;
            let machine = r.get::<_, Option<i64>>(7)?.unwrap_or(0);
            let unit = text(r.get_ref(8)?).filter(|s| !s.is_empty());
            let mut label = name.unwrap_or_else(|| kind.replace('_', " "));
            if let Some(cpu) = cpu {
                label = format!("{label} cpu{cpu}");
            }
            if let Some(unit) = unit {
                label = format!("{label} ({unit})");
            }
            let owner = match (utid, upid) {
                (Some(utid), _) if threads.contains_key(&utid) => Owner::Thread(utid),
                (_, Some(upid)) if processes.contains_key(&upid) => Owner::Process(upid),
                _ => Owner::Machine(machine),
            };
            by_id.insert(id, tracks.len());
            tracks.push(Track {
                db_id: id,
                label,
                data: if is_counter {
                    TrackData::Counter(CounterSeries::default())
                } else if is_state {
                    TrackData::State(Lane::default())
                } else {
                    TrackData::Slices(Vec::new())
                },
            });
            owners.push(owner);
        }
    }

    // Actual FrameTimeline frames that missed their deadline (any jank but None /
    // Unspecified), marked on the timeline.
    let janky: std::collections::HashSet<i64> = conn
        .prepare(
            "SELECT s.id FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id
             JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'Jank type'
             WHERE t.type = 'android_actual_frame_timeline'
               AND a.string_value NOT IN ('None', 'Unspecified', '')",
        )
        .and_then(|mut stmt| {
            stmt.query_map([], |r| r.get::<_, i64>(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .unwrap_or_default();
    let mut alert_names = std::collections::HashSet::new();
    let mut slices = 0u64;
    let (bounds_start, bounds_end): (Option<i64>, Option<i64>) = conn
        .query_row("SELECT start_ts, end_ts FROM trace_bounds", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap_or((None, None));
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    {
        let mut stmt = conn.prepare("SELECT track_id, depth, ts, dur, id, name FROM slice")?;
        let mut rows = stmt.query([])?;
        let open_end = bounds_end.unwrap_or(i64::MAX / 4);
        while let Some(r) = rows.next()? {
            let Some(&t) = by_id.get(&r.get::<_, i64>(0)?) else {
                continue;
            };
            let depth = r.get::<_, Option<i64>>(1)?.unwrap_or(0).clamp(0, 4096) as usize;
            let ts: i64 = r.get(2)?;
            let dur: i64 = r.get::<_, Option<i64>>(3)?.unwrap_or(0);
            let Ok(id) = u32::try_from(r.get::<_, i64>(4)?) else {
                continue;
            };
            let name = if janky.contains(&i64::from(id)) {
                let raw = text(r.get_ref(5)?).unwrap_or_default();
                let name = names.intern(&format!("! {raw}"));
                alert_names.insert(name);
                name
            } else {
                names.intern_value(r.get_ref(5)?)
            };
            let end = interval_end(ts, dur, open_end);
            lo = lo.min(ts);
            hi = hi.max(end);
            if let TrackData::Slices(lanes) = &mut tracks[t].data {
                if lanes.len() <= depth {
                    lanes.resize_with(depth + 1, Lane::default);
                }
                lanes[depth].push(ts, end, id, name);
                slices += 1;
            }
        }
    }
    {
        let mut samples: HashMap<usize, Vec<(i64, f64)>> = HashMap::new();
        let mut stmt = conn.prepare("SELECT track_id, ts, value FROM counter")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let Some(&t) = by_id.get(&r.get::<_, i64>(0)?) else {
                continue;
            };
            let ts: i64 = r.get(1)?;
            lo = lo.min(ts);
            hi = hi.max(ts);
            samples
                .entry(t)
                .or_default()
                .push((ts, r.get::<_, Option<f64>>(2)?.unwrap_or(0.0)));
        }
        for (t, s) in samples {
            tracks[t].data = TrackData::Counter(CounterSeries::new(s));
        }
    }
    // One sched track per CPU, labelled by the thread that ran.
    let mut cpu_tracks: HashMap<i64, usize> = HashMap::new();
    {
        let mut stmt =
            conn.prepare("SELECT ucpu, cpu, machine_id FROM cpu ORDER BY machine_id, cpu")?;
        let mut rows = stmt.query([])?;
        let mut cpus = Vec::new();
        while let Some(r) = rows.next()? {
            let ucpu: i64 = r.get(0)?;
            let cpu: i64 = r.get::<_, Option<i64>>(1)?.unwrap_or(ucpu);
            let machine: i64 = r.get::<_, Option<i64>>(2)?.unwrap_or(0);
            cpus.push((ucpu, cpu, machine));
        }
        for (ucpu, cpu, machine) in cpus {
            cpu_tracks.insert(ucpu, tracks.len());
            tracks.push(Track {
                db_id: ucpu,
                label: format!("CPU {cpu}"),
                data: TrackData::Sched(Lane::default()),
            });
            owners.push(Owner::Machine(machine));
        }
        let mut thread_names: HashMap<i64, u32> = HashMap::new();
        let mut stmt = conn.prepare("SELECT ucpu, ts, dur, id, utid FROM sched_slice")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let ucpu: i64 = r.get::<_, Option<i64>>(0)?.unwrap_or(-1);
            let utid: i64 = r.get::<_, Option<i64>>(4)?.unwrap_or(-1);
            if idle_utids.contains(&utid) {
                continue;
            }
            let Some(&t) = cpu_tracks.get(&ucpu) else {
                continue;
            };
            let ts: i64 = r.get(1)?;
            let dur: i64 = r.get::<_, Option<i64>>(2)?.unwrap_or(0);
            let Ok(id) = u32::try_from(r.get::<_, i64>(3)?) else {
                continue;
            };
            let name = *thread_names.entry(utid).or_insert_with(|| {
                names.intern(threads.get(&utid).map_or("?", |t| t.label.as_str()))
            });
            let end = interval_end(ts, dur, bounds_end.unwrap_or(i64::MIN));
            lo = lo.min(ts);
            hi = hi.max(end);
            if let TrackData::Sched(lane) = &mut tracks[t].data {
                lane.push(ts, end, id, name);
            }
        }
    }
    {
        let mut stmt = conn.prepare("SELECT track_id, ts, dur, id, value FROM state")?;
        let mut rows = stmt.query([])?;
        let open_end = bounds_end.unwrap_or(i64::MAX / 4);
        while let Some(r) = rows.next()? {
            let Some(&t) = by_id.get(&r.get::<_, i64>(0)?) else {
                continue;
            };
            let ts: i64 = r.get(1)?;
            let dur: i64 = r.get::<_, Option<i64>>(2)?.unwrap_or(-1);
            let Ok(id) = u32::try_from(r.get::<_, i64>(3)?) else {
                continue;
            };
            let name = names.intern_value(r.get_ref(4)?);
            let end = interval_end(ts, dur, open_end);
            lo = lo.min(ts);
            hi = hi.max(end);
            if let TrackData::State(lane) = &mut tracks[t].data {
                lane.push(ts, end, id, name);
            }
        }
    }
    // One thread-state track per thread that has states (the idle thread has none).
    {
        let mut state_tracks: HashMap<i64, usize> = HashMap::new();
        let mut state_names: HashMap<String, u32> = HashMap::new();
        let mut stmt = conn.prepare("SELECT utid, ts, dur, id, state FROM thread_state")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let Some(utid) = r.get::<_, Option<i64>>(0)? else {
                continue;
            };
            if idle_utids.contains(&utid) {
                continue;
            }
            let ts: i64 = r.get(1)?;
            let dur: i64 = r.get::<_, Option<i64>>(2)?.unwrap_or(-1);
            let Ok(id) = u32::try_from(r.get::<_, i64>(3)?) else {
                continue;
            };
            let raw = text(r.get_ref(4)?).unwrap_or_default();
            let name = match state_names.get(&raw) {
                Some(&n) => n,
                None => {
                    let n = names.intern(&super::details::describe_task_state(&raw));
                    state_names.insert(raw, n);
                    n
                }
            };
            let end = interval_end(ts, dur, bounds_end.unwrap_or(i64::MIN));
            lo = lo.min(ts);
            hi = hi.max(end);
            let t = *state_tracks.entry(utid).or_insert_with(|| {
                tracks.push(Track {
                    db_id: utid,
                    label: "thread state".to_string(),
                    data: TrackData::ThreadState(Lane::default()),
                });
                owners.push(Owner::Thread(utid));
                tracks.len() - 1
            });
            if let TrackData::ThreadState(lane) = &mut tracks[t].data {
                lane.push(ts, end, id, name);
            }
        }
    }
    // One samples track per thread with CPU profile samples (a sampled thread may have
    // nothing else: it still gets a row, so an area over it sums its samples).
    for (utid, lane) in load_samples(conn, &mut names) {
        if !threads.contains_key(&utid) {
            continue;
        }
        if let (Some(&first), Some(&last)) = (lane.ts.first(), lane.end.last()) {
            lo = lo.min(first);
            hi = hi.max(last);
        }
        tracks.push(Track {
            db_id: utid,
            label: "CPU samples".to_string(),
            data: TrackData::Samples(lane),
        });
        owners.push(Owner::Thread(utid));
    }
    for track in &mut tracks {
        match &mut track.data {
            TrackData::Slices(lanes) => lanes.iter_mut().for_each(Lane::sort),
            TrackData::Sched(lane)
            | TrackData::ThreadState(lane)
            | TrackData::State(lane)
            | TrackData::Samples(lane) => lane.sort_sequential(),
            TrackData::Counter(_) => {}
        }
    }

    // The tree, with empty tracks, threads and processes left out.
    let is_empty = |t: &Track| match &t.data {
        TrackData::Slices(lanes) => lanes.iter().all(Lane::is_empty),
        TrackData::Counter(c) => c.is_empty(),
        TrackData::Sched(l)
        | TrackData::ThreadState(l)
        | TrackData::State(l)
        | TrackData::Samples(l) => l.is_empty(),
    };
    let mut machine_nodes: Vec<MachineNode> = machines
        .iter()
        .map(|(id, label)| MachineNode {
            id: *id,
            label: label.clone(),
            tracks: Vec::new(),
            processes: Vec::new(),
        })
        .collect();
    let machine_index = |nodes: &mut Vec<MachineNode>, id: i64| -> usize {
        match nodes.iter().position(|m| m.id == id) {
            Some(i) => i,
            None => {
                nodes.push(MachineNode {
                    id,
                    label: format!("machine {id}"),
                    tracks: Vec::new(),
                    processes: Vec::new(),
                });
                nodes.len() - 1
            }
        }
    };
    let mut process_tracks: HashMap<i64, Vec<usize>> = HashMap::new();
    let mut thread_tracks: HashMap<i64, Vec<usize>> = HashMap::new();
    for (t, owner) in owners.iter().enumerate() {
        if is_empty(&tracks[t]) {
            continue;
        }
        match owner {
            Owner::Machine(m) => {
                let i = machine_index(&mut machine_nodes, *m);
                machine_nodes[i].tracks.push(t);
            }
            Owner::Process(upid) => process_tracks.entry(*upid).or_default().push(t),
            Owner::Thread(utid) => thread_tracks.entry(*utid).or_default().push(t),
        }
    }
    // CPU sched tracks first, in CPU order as loaded.
    for m in &mut machine_nodes {
        m.tracks
            .sort_by_key(|&t| (!matches!(tracks[t].data, TrackData::Sched(_)), t));
    }
    let mut upids: Vec<i64> = process_tracks.keys().copied().collect();
    for utid in thread_tracks.keys() {
        if let Some(upid) = threads.get(utid).and_then(|t| t.upid) {
            upids.push(upid);
        }
    }
    // CPU processes first, then the GPUs, each in pid order.
    upids.sort_by_key(|u| {
        processes
            .get(u)
            .map_or((true, i64::MAX, *u), |p| (p.gpu, p.pid, *u))
    });
    upids.dedup();
    for upid in upids {
        let Some(p) = processes.get(&upid) else {
            continue;
        };
        let mut thread_ids: Vec<i64> = thread_tracks
            .keys()
            .copied()
            .filter(|u| threads.get(u).and_then(|t| t.upid) == Some(upid))
            .collect();
        // Main thread first, then by tid; a GPU's streams in stream order.
        thread_ids.sort_by_key(|u| {
            threads.get(u).map_or((true, i64::MAX, i64::MAX), |t| {
                (t.tid != p.pid, t.stream.unwrap_or(i64::MAX), t.tid)
            })
        });
        let node = ProcessNode {
            upid,
            label: p.label.clone(),
            tracks: process_tracks.remove(&upid).unwrap_or_default(),
            threads: thread_ids
                .into_iter()
                .map(|utid| ThreadNode {
                    utid,
                    tracks: thread_tracks.remove(&utid).unwrap_or_default(),
                })
                .collect(),
        };
        let i = machine_index(&mut machine_nodes, p.machine);
        machine_nodes[i].processes.push(node);
    }
    // Thread tracks are labelled by their thread: its state track first, then the first
    // slice track under the thread's own label; other tracks add their name.
    let label_thread_tracks = |tracks: &mut Vec<Track>, utid: i64, own_tracks: &mut Vec<usize>| {
        own_tracks.sort_by_key(|&t| (!matches!(tracks[t].data, TrackData::ThreadState(_)), t));
        let label = threads.get(&utid).map_or("thread", |t| t.label.as_str());
        let mut named = false;
        for &t in own_tracks.iter() {
            let own = std::mem::take(&mut tracks[t].label);
            tracks[t].label = match tracks[t].data {
                TrackData::ThreadState(_) => format!("{label} state"),
                TrackData::Slices(_) if !named => {
                    named = true;
                    label.to_string()
                }
                _ => format!("{label} {own}"),
            };
        }
    };
    for m in &mut machine_nodes {
        for p in &mut m.processes {
            for th in &mut p.threads {
                label_thread_tracks(&mut tracks, th.utid, &mut th.tracks);
            }
        }
    }
    // Threads without a process hang off their machine as tracks of their own; one named as
    // the kernel names its threads (a systrace without a process tree) stands as a process
    // of its own (a negative id: `-1 - utid`), so it joins the Kernel threads group.
    let mut orphans: Vec<(i64, Vec<usize>)> = thread_tracks.into_iter().collect();
    orphans.sort_by_key(|(utid, _)| *utid);
    for (utid, mut own) in orphans {
        label_thread_tracks(&mut tracks, utid, &mut own);
        let info = threads.get(&utid);
        let machine = info.map_or(0, |t| t.machine);
        let i = machine_index(&mut machine_nodes, machine);
        let kernel = info.is_some_and(|t| {
            t.label
                .rsplit_once(' ')
                .is_some_and(|(name, _)| super::order::kernel_name(name))
        });
        if kernel {
            machine_nodes[i].processes.push(ProcessNode {
                upid: -1 - utid,
                label: info.map_or_else(String::new, |t| t.label.clone()),
                tracks: Vec::new(),
                threads: vec![ThreadNode { utid, tracks: own }],
            });
        } else {
            machine_nodes[i].tracks.extend(own);
        }
    }
    let has_tracks = |m: &MachineNode| !m.tracks.is_empty() || !m.processes.is_empty();
    if machine_nodes.iter().any(has_tracks) {
        machine_nodes.retain(has_tracks);
    }

    let (start, end) = match (bounds_start, bounds_end) {
        (Some(s), Some(e)) if e > s => (s, e),
        _ if hi > lo => (lo, hi),
        _ if lo != i64::MAX => (lo, lo + 1),
        _ => (0, 1),
    };
    let name_hashes = names.names.iter().map(|n| name_hash(n)).collect();
    let mut data = TimelineData {
        start,
        end,
        names: names.names,
        name_hashes,
        machines: machine_nodes,
        tracks,
        slices,
        arrangement: Default::default(),
        alert_names,
        logs: load_logs(conn, &threads),
    };
    super::order::arrange(conn, &mut data)?;
    Ok(data)
}

//! What the details panel shows for a selected slice or sched slice, read by the lookup
//! worker with point queries (never on the UI thread).

use rusqlite::{Connection, OptionalExtension};

use crate::tui::sanitize::sanitize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetailsRequest {
    Slice(i64),
    Sched(i64),
    /// A `thread_state` row.
    ThreadState(i64),
    /// A `state` row (a state track's value).
    State(i64),
    /// A CPU profile sample: a `cpu_profile_stack_sample` id, or a `perf_sample` id with
    /// [`super::load::PERF_SAMPLE`] set.
    Sample(u32),
}

/// What a kernel task state code means (`D|K` → `Uninterruptible Sleep | Wakekill`).
pub fn describe_task_state(state: &str) -> String {
    let one = |s: &str| -> String {
        match s {
            "Running" => "Running",
            "R" => "Runnable",
            "R+" => "Runnable (Preempted)",
            "S" => "Sleeping",
            "D" => "Uninterruptible Sleep",
            "T" => "Stopped",
            "t" => "Traced",
            "X" => "Exit (Dead)",
            "Z" => "Exit (Zombie)",
            "x" => "Task Dead",
            "I" => "Idle",
            "K" => "Wakekill",
            "W" => "Waking",
            "P" => "Parked",
            "N" => "No Load",
            other => other,
        }
        .to_string()
    };
    state.split('|').map(one).collect::<Vec<_>>().join(" | ")
}

/// A flow from or to the selected slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowLink {
    pub outgoing: bool,
    pub slice_id: i64,
    pub name: String,
    pub ts: i64,
    pub track_id: i64,
    pub depth: i64,
}

/// Which trace file a row came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The file, by its name in the archive; `None` for the input itself.
    File(Option<String>),
    /// The row does not record its file (sched rows, databases from older versions): the
    /// files placed on its machine.
    MachineFiles(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Details {
    pub name: String,
    pub category: Option<String>,
    pub ts: i64,
    pub dur: i64,
    pub thread: Option<String>,
    pub process: Option<String>,
    pub machine: Option<String>,
    pub source: Source,
    /// CPU and end state for a sched slice.
    pub cpu: Option<i64>,
    pub end_state: Option<String>,
    pub args: Vec<(String, String)>,
    pub flows: Vec<FlowLink>,
    /// Both ends of a binder transaction, when the slice is one of its halves.
    pub binder: Option<Box<BinderEnds>>,
}

/// One side of a binder transaction: the thread, its process, and how long its slice
/// lasted (the client's call, the server's reply).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinderEnd {
    pub thread: Option<String>,
    pub process: Option<String>,
    pub ts: i64,
    /// −1 when it never ended.
    pub dur: i64,
}

/// A binder transaction seen from either of its slices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinderEnds {
    pub oneway: bool,
    pub client: Option<BinderEnd>,
    pub server: Option<BinderEnd>,
}

fn clean(s: Option<String>) -> Option<String> {
    s.map(|s| sanitize(&s).into_owned())
        .filter(|s| !s.is_empty())
}

/// An arg set's keys and values, sanitized, in insertion order.
fn args_of(conn: &Connection, set: Option<i64>) -> rusqlite::Result<Vec<(String, String)>> {
    let Some(set) = set else {
        return Ok(Vec::new());
    };
    let mut stmt =
        conn.prepare("SELECT key, display_value FROM args WHERE arg_set_id = ?1 ORDER BY id")?;
    let rows = stmt.query_map([set], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?,
            r.get::<_, Option<String>>(1)?,
        ))
    })?;
    Ok(rows
        .filter_map(Result::ok)
        .map(|(k, v)| (clean(k).unwrap_or_default(), clean(v).unwrap_or_default()))
        .collect())
}

fn thread_label(
    conn: &Connection,
    utid: Option<i64>,
) -> rusqlite::Result<(Option<String>, Option<i64>)> {
    let Some(utid) = utid else {
        return Ok((None, None));
    };
    let row = conn
        .query_row(
            "SELECT tid, name, upid FROM thread WHERE utid = ?1",
            [utid],
            |r| {
                Ok((
                    r.get::<_, Option<i64>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                ))
            },
        )
        .optional()?;
    Ok(match row {
        Some((tid, name, upid)) => (
            Some(super::ml::thread_label(
                clean(name).as_deref(),
                tid.unwrap_or(0),
            )),
            upid,
        ),
        None => (None, None),
    })
}

fn process_label(conn: &Connection, upid: Option<i64>) -> rusqlite::Result<Option<String>> {
    let Some(upid) = upid else { return Ok(None) };
    let Some((pid, name)) = conn
        .query_row(
            "SELECT pid, name FROM process WHERE upid = ?1",
            [upid],
            |r| Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?)),
        )
        .optional()?
    else {
        return Ok(None);
    };
    let (pid, name) = (pid.unwrap_or(0), clean(name));
    // A GPU device as Kineto writes one (its threads are `stream N`) is labelled so.
    let mut stmt =
        conn.prepare("SELECT name FROM thread WHERE upid = ?1 AND name LIKE 'stream %'")?;
    let streams = stmt.query_map([upid], |r| r.get::<_, Option<String>>(0))?;
    let gpu = streams
        .filter_map(Result::ok)
        .flatten()
        .any(|n| super::ml::stream_number(&n).is_some());
    Ok(Some(if gpu {
        super::ml::gpu_label(pid, name.as_deref())
    } else {
        format!("{} {pid}", name.unwrap_or_else(|| "process".into()))
    }))
}

fn machine_label(conn: &Connection, machine: Option<i64>) -> rusqlite::Result<Option<String>> {
    let Some(m) = machine else { return Ok(None) };
    Ok(conn
        .query_row("SELECT name, raw_id FROM machine WHERE id = ?1", [m], |r| {
            Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Option<i64>>(1)?))
        })
        .optional()?
        .map(|(name, raw)| {
            clean(name).unwrap_or_else(|| super::load::unnamed_machine(raw.unwrap_or(m)))
        }))
}

/// The trace files whose events were placed on this machine.
fn files_of(conn: &Connection, machine: Option<i64>) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT DISTINCT f.name FROM __sextant_file_placement p
         JOIN __intrinsic_trace_file f ON f.id = p.file_id
         WHERE p.machine_id IS ?1 AND p.events > 0 ORDER BY f.id",
    )?;
    let files = stmt
        .query_map([machine], |r| r.get::<_, Option<String>>(0))?
        .filter_map(|r| r.ok().and_then(clean))
        .collect();
    Ok(files)
}

/// The file a slice came from: its own row in `__sextant_slice_file`, else its track's in
/// `__sextant_track_file`; the machine's files when the database does not say.
fn file_of_slice(
    conn: &Connection,
    id: i64,
    track: Option<i64>,
    machine: Option<i64>,
) -> rusqlite::Result<Source> {
    let name = conn
        .query_row(
            "SELECT f.name FROM __intrinsic_trace_file f WHERE f.id = coalesce(
               (SELECT file_id FROM __sextant_slice_file WHERE slice_id = ?1),
               (SELECT file_id FROM __sextant_track_file WHERE track_id = ?2))",
            rusqlite::params![id, track],
            |r| r.get::<_, Option<String>>(0),
        )
        .optional()?;
    Ok(match name {
        Some(name) => Source::File(clean(name)),
        None => Source::MachineFiles(files_of(conn, machine)?),
    })
}

pub fn load(conn: &Connection, request: &DetailsRequest) -> rusqlite::Result<Details> {
    match *request {
        DetailsRequest::Slice(id) => slice(conn, id),
        DetailsRequest::Sched(id) => sched(conn, id),
        DetailsRequest::ThreadState(id) => thread_state(conn, id),
        DetailsRequest::State(id) => state(conn, id),
        DetailsRequest::Sample(id) => sample(conn, id),
    }
}

/// A sample: its leaf function, and its stack (leaf first) as the args.
fn sample(conn: &Connection, id: u32) -> rusqlite::Result<Details> {
    let perf = id & super::load::PERF_SAMPLE != 0;
    let table = if perf {
        "perf_sample"
    } else {
        "cpu_profile_stack_sample"
    };
    let row = i64::from(id & !super::load::PERF_SAMPLE);
    let (ts, utid, callsite): (i64, Option<i64>, Option<i64>) = conn.query_row(
        &format!("SELECT ts, utid, callsite_id FROM {table} WHERE id = ?1"),
        [row],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut frames = Vec::new();
    let mut next = callsite;
    let mut stmt = conn.prepare(
        "SELECT c.parent_id, f.name FROM stack_profile_callsite c
         LEFT JOIN stack_profile_frame f ON f.id = c.frame_id WHERE c.id = ?1",
    )?;
    while let Some(c) = next.filter(|_| frames.len() < 64) {
        let (parent, name): (Option<i64>, Option<String>) =
            stmt.query_row([c], |r| Ok((r.get(0)?, r.get(1)?)))?;
        frames.push(clean(name).unwrap_or_else(|| "?".into()));
        next = parent;
    }
    let (thread, upid) = thread_label(conn, utid)?;
    let machine: Option<i64> = match utid {
        Some(u) => conn
            .query_row("SELECT machine_id FROM thread WHERE utid = ?1", [u], |r| {
                r.get(0)
            })
            .unwrap_or(None),
        None => None,
    };
    let args = frames
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("frame {i}"), f.clone()))
        .collect();
    Ok(Details {
        name: frames.first().cloned().unwrap_or_else(|| "sample".into()),
        category: Some(
            if perf {
                "perf sample"
            } else {
                "CPU profile sample"
            }
            .into(),
        ),
        ts,
        dur: 0,
        thread,
        process: process_label(conn, upid)?,
        machine: machine_label(conn, machine)?,
        source: Source::MachineFiles(files_of(conn, machine).unwrap_or_default()),
        cpu: None,
        end_state: None,
        args,
        flows: Vec::new(),
        binder: None,
    })
}

fn thread_state(conn: &Connection, id: i64) -> rusqlite::Result<Details> {
    #[allow(clippy::type_complexity)]
    let (ts, dur, cpu, utid, state, io_wait, blocked, waker, machine): (
        i64,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<i64>,
        Option<String>,
        Option<i64>,
        Option<i64>,
    ) = conn.query_row(
        "SELECT s.ts, s.dur, s.cpu, s.utid, s.state, s.io_wait, s.blocked_function,
                s.waker_utid, t.machine_id
         FROM thread_state s LEFT JOIN thread t ON t.utid = s.utid WHERE s.id = ?1",
        [id],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        },
    )?;
    let (thread, upid) = thread_label(conn, utid)?;
    let state = clean(state);
    let mut args = Vec::new();
    // The code itself, when its meaning was spelled out in the name.
    if let Some(raw) = state
        .as_ref()
        .filter(|raw| describe_task_state(raw) != **raw)
    {
        args.push(("state".to_string(), raw.clone()));
    }
    if let Some(io_wait) = io_wait {
        args.push(("io_wait".to_string(), io_wait.to_string()));
    }
    if let Some(function) = clean(blocked) {
        args.push(("blocked_function".to_string(), function));
    }
    if let (Some(waker), _) = thread_label(conn, waker)? {
        args.push(("woken by".to_string(), waker));
    }
    Ok(Details {
        name: state
            .as_deref()
            .map_or_else(|| "unknown state".to_string(), describe_task_state),
        category: None,
        ts,
        dur: dur.unwrap_or(0),
        thread,
        process: process_label(conn, upid)?,
        machine: machine_label(conn, machine)?,
        source: Source::MachineFiles(files_of(conn, machine).unwrap_or_default()),
        cpu,
        end_state: None,
        args,
        flows: Vec::new(),
        binder: None,
    })
}

fn state(conn: &Connection, id: i64) -> rusqlite::Result<Details> {
    #[allow(clippy::type_complexity)]
    let (ts, dur, category, value, arg_set, track, utid, upid, machine): (
        i64,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<i64>,
        Option<String>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
    ) = conn.query_row(
        "SELECT s.ts, s.dur, s.category, s.value, s.arg_set_id, t.name, t.utid, t.upid,
                t.machine_id
         FROM state s LEFT JOIN __intrinsic_track t ON t.id = s.track_id WHERE s.id = ?1",
        [id],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        },
    )?;
    let (thread, thread_upid) = thread_label(conn, utid)?;
    let mut args = Vec::new();
    if let Some(track) = clean(track) {
        args.push(("track".to_string(), track));
    }
    args.extend(args_of(conn, arg_set)?);
    Ok(Details {
        name: clean(value).unwrap_or_else(|| "(no value)".to_string()),
        category: clean(category),
        ts,
        dur: dur.unwrap_or(0),
        thread,
        process: process_label(conn, upid.or(thread_upid))?,
        machine: machine_label(conn, machine)?,
        source: Source::MachineFiles(files_of(conn, machine).unwrap_or_default()),
        cpu: None,
        end_state: None,
        args,
        flows: Vec::new(),
        binder: None,
    })
}

fn slice(conn: &Connection, id: i64) -> rusqlite::Result<Details> {
    let (name, category, ts, dur, arg_set, utid, upid, machine, track) = conn.query_row(
        "SELECT s.name, s.category, s.ts, s.dur, s.arg_set_id, t.utid, t.upid, t.machine_id,
                s.track_id
         FROM slice s LEFT JOIN __intrinsic_track t ON t.id = s.track_id WHERE s.id = ?1",
        [id],
        |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, Option<i64>>(6)?,
                r.get::<_, Option<i64>>(7)?,
                r.get::<_, Option<i64>>(8)?,
            ))
        },
    )?;
    let (thread, thread_upid) = thread_label(conn, utid)?;
    let process = process_label(conn, upid.or(thread_upid))?;
    let args = args_of(conn, arg_set)?;
    let mut flows = Vec::new();
    for (outgoing, sql) in [
        (true, "SELECT s.id, s.name, s.ts, s.track_id, s.depth FROM flow f JOIN slice s ON s.id = f.slice_in WHERE f.slice_out = ?1 ORDER BY s.ts"),
        (false, "SELECT s.id, s.name, s.ts, s.track_id, s.depth FROM flow f JOIN slice s ON s.id = f.slice_out WHERE f.slice_in = ?1 ORDER BY s.ts"),
    ] {
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([id], |r| {
            Ok(FlowLink {
                outgoing,
                slice_id: r.get(0)?,
                name: clean(r.get(1)?).unwrap_or_default(),
                ts: r.get(2)?,
                track_id: r.get(3)?,
                depth: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
            })
        })?;
        flows.extend(rows.filter_map(Result::ok));
    }
    let machine_name = machine_label(conn, machine)?;
    let binder = if category.as_deref() == Some("binder") {
        binder_ends(conn, id, name.as_deref().unwrap_or(""), &flows)?
    } else {
        None
    };
    Ok(Details {
        name: clean(name).unwrap_or_default(),
        category: clean(category),
        ts,
        dur,
        thread,
        process,
        machine: machine_name,
        // Databases of older versions do not record it: the machine's files, if they have
        // a placement table at all.
        source: file_of_slice(conn, id, track, machine)
            .unwrap_or_else(|_| Source::MachineFiles(files_of(conn, machine).unwrap_or_default())),
        cpu: None,
        end_state: None,
        args,
        flows,
        binder,
    })
}

/// One slice as a side of a binder transaction.
fn binder_end(conn: &Connection, slice: i64) -> rusqlite::Result<Option<BinderEnd>> {
    let row = conn
        .query_row(
            "SELECT s.ts, s.dur, t.utid FROM slice s
             LEFT JOIN __intrinsic_track t ON t.id = s.track_id WHERE s.id = ?1",
            [slice],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                ))
            },
        )
        .optional()?;
    let Some((ts, dur, utid)) = row else {
        return Ok(None);
    };
    let (thread, upid) = thread_label(conn, utid)?;
    Ok(Some(BinderEnd {
        thread,
        process: process_label(conn, upid)?,
        ts,
        dur: dur.unwrap_or(-1),
    }))
}

/// The client and server sides of the binder transaction a slice belongs to: a
/// transaction's flow leads to its reply (or one-way receive), and back.
fn binder_ends(
    conn: &Connection,
    id: i64,
    name: &str,
    flows: &[FlowLink],
) -> rusqlite::Result<Option<Box<BinderEnds>>> {
    let (client_side, oneway) = match name {
        "binder transaction" => (true, false),
        "binder transaction async" => (true, true),
        "binder reply" => (false, false),
        "binder async rcv" => (false, true),
        _ => return Ok(None),
    };
    let peer = flows
        .iter()
        .find(|f| f.outgoing == client_side)
        .map(|f| f.slice_id);
    let this = binder_end(conn, id)?;
    let other = match peer {
        Some(p) => binder_end(conn, p)?,
        None => None,
    };
    let (client, server) = if client_side {
        (this, other)
    } else {
        (other, this)
    };
    Ok(Some(Box::new(BinderEnds {
        oneway,
        client,
        server,
    })))
}

fn sched(conn: &Connection, id: i64) -> rusqlite::Result<Details> {
    let (ts, dur, cpu, utid, end_state, machine) = conn.query_row(
        "SELECT s.ts, s.dur, s.cpu, s.utid, s.end_state, c.machine_id
         FROM sched_slice s LEFT JOIN cpu c ON c.ucpu = s.ucpu WHERE s.id = ?1",
        [id],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        },
    )?;
    let (thread, upid) = thread_label(conn, utid)?;
    Ok(Details {
        name: thread.clone().unwrap_or_else(|| "sched slice".into()),
        category: None,
        ts,
        dur,
        thread,
        process: process_label(conn, upid)?,
        machine: machine_label(conn, machine)?,
        source: Source::MachineFiles(files_of(conn, machine).unwrap_or_default()),
        cpu,
        end_state: clean(end_state),
        args: Vec::new(),
        flows: Vec::new(),
        binder: None,
    })
}

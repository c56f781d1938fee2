//! Orders the loaded track tree as the Perfetto UI does: per machine, the CPU tracks by
//! number, then the system counters grouped by name (cpu2 before cpu10), then the processes
//! by how much they did (CPU time plus top-level slice time), then one collapsed **Kernel
//! threads** group. Within a process, the main thread comes first, then threads by activity.
//! Processes that have nothing but thread-state rows start collapsed.
//!
//! Which processes are kernel threads: `kthreadd` (pid 2) and every process whose parent is
//! it (`process.parent_upid`), Perfetto's rule. A machine without any parent information (a
//! systrace has no process tree) falls back to names: a single-threaded process whose name
//! is in brackets (`[ksoftirqd/0]`) or starts as the kernel's own threads do (`kworker/`,
//! `ksoftirqd/`, `rcu_`, `migration/`, `irq/`, drivers' `smem_`, `mdss_`, `wlan_logging`,
//! …), see [`KERNEL_PREFIXES`]; a kernel-named thread without a process joins them too.
//!
//! A process's activity is its threads' CPU time (`sched`) plus the time of their top-level
//! thread slices (finished ones: an unfinished slice has no duration yet); slice counts
//! break ties.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::load::{ProcessNode, TimelineData, Track, TrackData};
use super::Group;

/// Names the kernel gives its own threads, used only on machines without a process tree.
pub const KERNEL_PREFIXES: &[&str] = &[
    "kworker/",
    "ksoftirqd/",
    "kswapd",
    "kthreadd",
    "kcompactd",
    "khungtaskd",
    "kauditd",
    "kblockd",
    "kdevtmpfs",
    "khugepaged",
    "ksmd",
    "migration/",
    "rcu_",
    "rcuop/",
    "rcuos/",
    "rcuob/",
    "rcub/",
    "rcuc/",
    "irq/",
    "cpuhp/",
    "watchdog/",
    "watchdogd",
    "jbd2/",
    "writeback",
    "oom_reaper",
    "sugov:",
    "kthrotld",
    "mmcqd/",
    "f2fs_",
    "dm_bufio",
    "scsi_eh_",
    "kverityd",
    "ext4-rsv-conver",
    // Drivers' threads on Android devices (Qualcomm SoCs, display, Wi-Fi, GPU).
    "smem_native_",
    "dsps_smem_glink",
    "glink_",
    "qmi_",
    "msm_",
    "mdss_",
    "sde_",
    "kgsl",
    "vsync_retire",
    "wlan_logging",
    "crtc_commit",
    "crtc_event",
    "card0-crtc",
    "kdmflush",
    "hwrng",
    "spi",
    "irq_",
    "ipa_",
    "dhd_",
    "mali_",
    "kbase_",
    "ion_",
    "lpass_",
    "apr_driver",
    "diag_",
];

/// How the tree was arranged: where each machine's kernel threads start, and which groups
/// start collapsed.
#[derive(Debug, Default, Clone)]
pub struct Arrangement {
    /// Per machine (by index), the index in `processes` where the kernel threads start
    /// (`processes.len()` when there are none).
    pub kernel_from: Vec<usize>,
    pub default_collapsed: Vec<Group>,
}

struct ProcessFacts {
    pid: i64,
    parent: Option<i64>,
    name: String,
}

/// Whether a name looks like one the kernel gives its threads.
pub fn kernel_name(name: &str) -> bool {
    let n = name.trim();
    (n.starts_with('[') && n.ends_with(']') && n.len() > 2)
        || KERNEL_PREFIXES.iter().any(|p| n.starts_with(p))
}

/// Splits a label into text and numbers so that `cpu2` sorts before `cpu10`.
pub fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n: u64 = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                n = n
                    .saturating_mul(10)
                    .saturating_add(u64::from(d as u8 - b'0'));
                chars.next();
            }
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c.to_ascii_lowercase());
        }
    }
    out.push((text, u64::MAX));
    out
}

/// Top-level slice time (unused: the database's durations are read instead) and slice
/// count of a track.
fn track_activity(t: &Track) -> (i64, u64) {
    match &t.data {
        TrackData::Slices(lanes) => (0, lanes.iter().map(|l| l.len() as u64).sum()),
        _ => (0, 0),
    }
}

fn class_of(t: &Track) -> u8 {
    match t.data {
        TrackData::Sched(_) => 0,
        TrackData::Counter(_) => 1,
        TrackData::State(_) => 2,
        _ => 3,
    }
}

/// Orders `data`'s tree in place (see the module doc).
pub fn arrange(conn: &Connection, data: &mut TimelineData) -> rusqlite::Result<()> {
    let mut facts: HashMap<i64, ProcessFacts> = HashMap::new();
    {
        let mut stmt = conn.prepare("SELECT upid, pid, parent_upid, name FROM process")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let upid: i64 = r.get(0)?;
            let name = match r.get_ref(3)? {
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                _ => String::new(),
            };
            facts.insert(
                upid,
                ProcessFacts {
                    pid: r.get::<_, Option<i64>>(1)?.unwrap_or(-1),
                    parent: r.get(2)?,
                    name,
                },
            );
        }
    }
    let mut threads: HashMap<i64, (i64, String)> = HashMap::new();
    {
        let mut stmt = conn.prepare("SELECT utid, tid, name FROM thread")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let name = match r.get_ref(2)? {
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                _ => String::new(),
            };
            threads.insert(r.get(0)?, (r.get::<_, Option<i64>>(1)?.unwrap_or(-1), name));
        }
    }
    let mut cpu_time: HashMap<i64, i64> = HashMap::new();
    {
        let mut stmt = conn.prepare(
            "SELECT utid, SUM(dur) FROM sched_slice WHERE dur > 0 AND utid IS NOT NULL GROUP BY utid",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            cpu_time.insert(r.get(0)?, r.get::<_, Option<i64>>(1)?.unwrap_or(0));
        }
    }
    // Each thread's top-level slice time (finished slices on its thread tracks).
    let mut slice_time: HashMap<i64, i64> = HashMap::new();
    {
        let mut stmt = conn.prepare(
            "SELECT t.utid, SUM(s.dur) FROM slice s JOIN __intrinsic_track t ON t.id = s.track_id
             WHERE s.depth = 0 AND s.dur > 0 AND t.utid IS NOT NULL GROUP BY t.utid",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            slice_time.insert(r.get(0)?, r.get::<_, Option<i64>>(1)?.unwrap_or(0));
        }
    }
    let thread_time = |utid: i64| -> i64 {
        cpu_time
            .get(&utid)
            .copied()
            .unwrap_or(0)
            .saturating_add(slice_time.get(&utid).copied().unwrap_or(0))
    };
    // Tracks of threads without a process hang off the machine: they go after its own.
    let mut thread_owned: HashSet<i64> = HashSet::new();
    {
        let mut stmt = conn.prepare("SELECT id FROM __intrinsic_track WHERE utid IS NOT NULL")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            thread_owned.insert(r.get(0)?);
        }
    }
    let upid_of_pid2: HashSet<i64> = facts
        .iter()
        .filter(|(_, f)| f.pid == 2)
        .map(|(u, _)| *u)
        .collect();

    let tracks = &data.tracks;
    let mut arrangement = Arrangement::default();
    for m in &mut data.machines {
        // Machine tracks: CPUs by number, counters grouped by name, then the rest as they were.
        m.tracks.sort_by_cached_key(|&t| {
            let track = &tracks[t];
            let mut class = class_of(track);
            let per_thread = matches!(track.data, TrackData::ThreadState(_))
                || (class != 0 && thread_owned.contains(&track.db_id));
            if per_thread {
                class = 4;
            }
            let key = if class <= 1 {
                natural_key(&track.label)
            } else {
                Vec::new()
            };
            (class, key)
        });
        let has_tree = m
            .processes
            .iter()
            .any(|p| facts.get(&p.upid).is_some_and(|f| f.parent.is_some()));
        let activity = |p: &ProcessNode| -> (i64, u64) {
            let mut count = 0u64;
            for &t in p
                .tracks
                .iter()
                .chain(p.threads.iter().flat_map(|th| &th.tracks))
            {
                count += track_activity(&tracks[t]).1;
            }
            let dur = p
                .threads
                .iter()
                .map(|th| thread_time(th.utid))
                .fold(0i64, i64::saturating_add);
            (dur, count)
        };
        let is_kernel = |p: &ProcessNode| -> bool {
            // A thread without a process (see `super::load`): by its name.
            if p.upid < 0 {
                return p
                    .threads
                    .iter()
                    .all(|th| threads.get(&th.utid).is_some_and(|(_, n)| kernel_name(n)));
            }
            let Some(f) = facts.get(&p.upid) else {
                return false;
            };
            if f.pid == 2 || f.parent.is_some_and(|u| upid_of_pid2.contains(&u)) {
                return true;
            }
            if has_tree {
                return false;
            }
            let single = p.threads.len() <= 1
                && p.threads
                    .iter()
                    .all(|th| threads.get(&th.utid).is_some_and(|(tid, _)| *tid == f.pid));
            let name = if f.name.is_empty() {
                p.threads
                    .first()
                    .and_then(|th| threads.get(&th.utid))
                    .map_or("", |(_, n)| n.as_str())
            } else {
                f.name.as_str()
            };
            single && kernel_name(name)
        };
        // Kineto's GPU devices (threads named `stream N`) keep the loader's place for them,
        // after the CPU processes, and their streams in stream order (see `super::ml`).
        let is_gpu = |p: &ProcessNode| -> bool {
            p.threads.iter().any(|th| {
                threads
                    .get(&th.utid)
                    .is_some_and(|(_, n)| super::ml::stream_number(n).is_some())
            })
        };
        for p in &mut m.processes {
            // A process without a name (systrace has none) goes by its main thread's.
            if let Some(f) = facts.get(&p.upid).filter(|f| f.name.is_empty()) {
                let main = p
                    .threads
                    .iter()
                    .filter_map(|th| threads.get(&th.utid))
                    .find(|(tid, n)| *tid == f.pid && !n.is_empty());
                if let Some((_, n)) = main {
                    p.label = format!("{} {}", crate::tui::sanitize::sanitize(n), f.pid);
                }
            }
            if is_gpu(p) {
                continue;
            }
            let pid = facts.get(&p.upid).map_or(-1, |f| f.pid);
            p.threads.sort_by_cached_key(|th| {
                let tid = threads.get(&th.utid).map_or(i64::MAX, |t| t.0);
                let count: u64 = th
                    .tracks
                    .iter()
                    .map(|&t| track_activity(&tracks[t]).1)
                    .sum();
                (
                    tid != pid,
                    Reverse(thread_time(th.utid)),
                    Reverse(count),
                    tid,
                )
            });
        }
        type Keyed = (
            (bool, bool, Reverse<i64>, Reverse<u64>, String, i64),
            usize,
            ProcessNode,
        );
        let mut keyed: Vec<Keyed> = std::mem::take(&mut m.processes)
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let f = facts.get(&p.upid);
                let kernel = is_kernel(&p);
                let key = if is_gpu(&p) {
                    // In the loader's order (pid order) after the CPU processes.
                    (kernel, true, Reverse(0), Reverse(0), String::new(), 0)
                } else {
                    let (dur, count) = activity(&p);
                    (
                        kernel,
                        false,
                        Reverse(dur),
                        Reverse(count),
                        f.map_or_else(String::new, |f| f.name.to_lowercase()),
                        f.map_or(i64::MAX, |f| f.pid),
                    )
                };
                (key, i, p)
            })
            .collect();
        keyed.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let kernel_from = keyed.iter().position(|k| k.0 .0).unwrap_or(keyed.len());
        m.processes = keyed.into_iter().map(|k| k.2).collect();
        if kernel_from < m.processes.len() {
            arrangement.default_collapsed.push(Group::Kernel(m.id));
        }
        for p in &m.processes {
            let only_states = p.tracks.is_empty()
                && p.threads.iter().all(|th| {
                    th.tracks
                        .iter()
                        .all(|&t| matches!(tracks[t].data, TrackData::ThreadState(_)))
                });
            if only_states {
                arrangement.default_collapsed.push(Group::Process(p.upid));
            }
        }
        arrangement.kernel_from.push(kernel_from);
    }
    data.arrangement = arrangement;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sort_as_numbers() {
        let mut v = vec![
            "cpuidle cpu10",
            "cpuidle cpu2",
            "cpufreq cpu1",
            "cpuidle cpu1",
        ];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(
            v,
            [
                "cpufreq cpu1",
                "cpuidle cpu1",
                "cpuidle cpu2",
                "cpuidle cpu10"
            ]
        );
    }

    #[test]
    fn kernel_names() {
        assert!(kernel_name("[ksoftirqd/0]"));
        assert!(kernel_name("kworker/u16:11"));
        assert!(kernel_name("rcu_preempt"));
        assert!(!kernel_name("surfaceflinger"));
        assert!(!kernel_name("[]"));
    }
}

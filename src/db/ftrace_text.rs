//! `to_ftrace(id)`: an `ftrace_event` row as the line the kernel's ftrace text output (and
//! Trace Processor's systrace export) would show for it.

use crate::parse::proto::decode_task_state;

/// One raw event with what its line needs.
pub struct RawEventLine {
    pub ts: i64,
    pub cpu: i64,
    pub tid: i64,
    pub thread_name: Option<String>,
    /// The thread's process's pid, when known.
    pub tgid: Option<i64>,
    pub name: String,
    /// (key, value) in the row's arg order.
    pub args: Vec<(String, ArgText)>,
}

pub enum ArgText {
    Int(i64),
    Uint(u64),
    Real(f64),
    Str(String),
}

impl std::fmt::Display for ArgText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgText::Int(v) => write!(f, "{v}"),
            ArgText::Uint(v) => write!(f, "{v}"),
            ArgText::Real(v) => write!(f, "{v}"),
            ArgText::Str(s) => f.write_str(s),
        }
    }
}

impl ArgText {
    fn int(&self) -> i64 {
        match *self {
            ArgText::Int(v) => v,
            ArgText::Uint(v) => v as i64,
            ArgText::Real(v) => v as i64,
            ArgText::Str(_) => 0,
        }
    }
}

impl RawEventLine {
    fn arg(&self, key: &str) -> Option<&ArgText> {
        self.args.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn text(&self, key: &str) -> String {
        self.arg(key).map_or_else(String::new, ToString::to_string)
    }

    fn int(&self, key: &str) -> i64 {
        self.arg(key).map_or(0, ArgText::int)
    }

    /// The line: `<comm>-<tid> (<tgid>) [<cpu>] .... <secs>.<micros>: <event>: <fields>`.
    pub fn line(&self) -> String {
        let mut out = String::new();
        let name = match self.thread_name.as_deref() {
            _ if self.tid == 0 => "<idle>",
            None | Some("") => "<unknown>",
            // The reference's workaround for crbug.com/978093.
            Some("CrRendererMain") => "CrRendererMainThread",
            Some(n) => n,
        };
        out.push_str(&" ".repeat(16usize.saturating_sub(name.chars().count())));
        out.extend(name.chars().map(|c| if c == '-' { '_' } else { c }));
        let tid = self.tid.to_string();
        out.push_str(&format!(
            "-{tid}{}",
            " ".repeat(5usize.saturating_sub(tid.len()))
        ));
        // The idle process (pid 0) has no tgid to show, as in the kernel's output.
        match self.tgid.filter(|&tgid| tgid != 0) {
            Some(tgid) => out.push_str(&format!(" ({tgid:>5})")),
            None => out.push_str(" (-----)"),
        }
        let (secs, nanos) = (
            self.ts.div_euclid(1_000_000_000),
            self.ts.rem_euclid(1_000_000_000),
        );
        out.push_str(&format!(
            " [{:03}] .... {secs}.{:06}: ",
            self.cpu,
            nanos / 1000
        ));
        self.body(&mut out);
        out
    }

    fn body(&self, out: &mut String) {
        match self.name.as_str() {
            "sched_switch" => {
                let state = decode_task_state(self.int("prev_state")).unwrap_or_default();
                out.push_str(&format!(
                    "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={state} ==> \
                     next_comm={} next_pid={} next_prio={}",
                    self.text("prev_comm"),
                    self.int("prev_pid"),
                    self.int("prev_prio"),
                    self.text("next_comm"),
                    self.int("next_pid"),
                    self.int("next_prio"),
                ));
            }
            name @ ("sched_wakeup" | "sched_waking") => {
                out.push_str(&format!(
                    "{name}: comm={} pid={} prio={} target_cpu={:03}",
                    self.text("comm"),
                    self.int("pid"),
                    self.int("prio"),
                    self.int("target_cpu"),
                ));
            }
            "sched_blocked_reason" => {
                out.push_str(&format!(
                    "sched_blocked_reason: pid={} iowait={} caller={}",
                    self.int("pid"),
                    self.int("io_wait"),
                    self.text("caller"),
                ));
            }
            "print" => {
                out.push_str("tracing_mark_write: ");
                out.push_str(self.text("buf").trim_end_matches('\n'));
            }
            // Events Trace Processor's serializer writes in the kernel's own formats.
            "clock_set_rate" => out.push_str(&format!(
                "clock_set_rate: {} state={} cpu_id={}",
                self.text("name"),
                self.text("state"),
                self.text("cpu_id"),
            )),
            "binder_transaction" => out.push_str(&format!(
                "binder_transaction: transaction={} dest_node={} dest_proc={} dest_thread={} \
                 reply={} flags=0x{:x} code=0x{:x}",
                self.int("debug_id") as u32,
                self.int("target_node") as u32,
                self.int("to_proc"),
                self.int("to_thread"),
                self.int("reply"),
                self.int("flags") as u64,
                self.int("code") as u64,
            )),
            "binder_transaction_received" => out.push_str(&format!(
                "binder_transaction_received: transaction={}",
                self.int("debug_id") as u32
            )),
            "binder_transaction_alloc_buf" => out.push_str(&format!(
                "binder_transaction_alloc_buf: transaction={} data_size={} offsets_size={}",
                self.int("debug_id") as u32,
                self.text("data_size"),
                self.text("offsets_size"),
            )),
            "workqueue_execute_start" => out.push_str(&format!(
                "workqueue_execute_start: work struct {:x}: function {:x}",
                self.int("work") as u64,
                self.int("function") as u64,
            )),
            name @ ("workqueue_execute_end" | "workqueue_activate_work") => out.push_str(&format!(
                "{name}: work struct {:x}",
                self.int("work") as u64
            )),
            "mm_filemap_add_to_page_cache" => {
                let dev = self.int("s_dev") as u64;
                out.push_str(&format!(
                    "mm_filemap_add_to_page_cache: dev {}:{} ino {:x} page=0000000000000000 \
                     pfn={} ofs={}",
                    dev >> 20,
                    dev & ((1 << 20) - 1),
                    self.int("i_ino") as u64,
                    self.text("pfn"),
                    (self.int("index") as u64) << 12,
                ));
            }
            name => {
                out.push_str(name);
                out.push(':');
                for (key, value) in &self.args {
                    out.push_str(&format!(" {key}="));
                    match value {
                        ArgText::Uint(v) if key == "gfp_flags" => out.push_str(&gfp_flags(*v)),
                        ArgText::Int(v) if key == "gfp_flags" => {
                            out.push_str(&gfp_flags(*v as u64));
                        }
                        v => out.push_str(&v.to_string()),
                    }
                }
            }
        }
    }
}

/// Allocation flags as the kernel (4.4's `show_gfp_flags`) prints them: composite names
/// first, then single bits, then whatever is left in hex; 0 is `GFP_NOWAIT`.
fn gfp_flags(value: u64) -> String {
    const RECLAIM: u64 = 0x40_0000 | 0x200_0000;
    const IO: u64 = 0x40;
    const FS: u64 = 0x80;
    const HARDWALL: u64 = 0x2_0000;
    const USER: u64 = RECLAIM | IO | FS | HARDWALL;
    const FLAGS: &[(u64, &str)] = &[
        (
            (USER | 0x02 | 0x08 | 0x4000 | 0x1_0000 | 0x1000 | 0x200) & !0x200_0000,
            "GFP_TRANSHUGE",
        ),
        (USER | 0x02 | 0x08, "GFP_HIGHUSER_MOVABLE"),
        (USER | 0x02, "GFP_HIGHUSER"),
        (USER, "GFP_USER"),
        (RECLAIM | IO | FS | 0x10, "GFP_TEMPORARY"),
        (RECLAIM | IO | FS, "GFP_KERNEL"),
        (RECLAIM | IO, "GFP_NOFS"),
        (0x20 | 0x8_0000 | 0x200_0000, "GFP_ATOMIC"),
        (RECLAIM, "GFP_NOIO"),
        (0x20, "GFP_HIGH"),
        (0x8_0000, "GFP_ATOMIC"),
        (IO, "GFP_IO"),
        (FS, "GFP_FS"),
        (0x100, "GFP_COLD"),
        (0x200, "GFP_NOWARN"),
        (0x400, "GFP_REPEAT"),
        (0x800, "GFP_NOFAIL"),
        (0x1000, "GFP_NORETRY"),
        (0x4000, "GFP_COMP"),
        (0x8000, "GFP_ZERO"),
        (0x1_0000, "GFP_NOMEMALLOC"),
        (0x2000, "GFP_MEMALLOC"),
        (HARDWALL, "GFP_HARDWALL"),
        (0x4_0000, "GFP_THISNODE"),
        (0x10, "GFP_RECLAIMABLE"),
        (0x08, "GFP_MOVABLE"),
        (0x20_0000, "GFP_NOTRACK"),
        (0x40_0000, "GFP_DIRECT_RECLAIM"),
        (0x200_0000, "GFP_KSWAPD_RECLAIM"),
        (0x80_0000, "GFP_OTHER_NODE"),
    ];
    if value == 0 {
        return "GFP_NOWAIT".into();
    }
    let mut left = value;
    let mut names = Vec::new();
    for &(bits, name) in FLAGS {
        if left & bits == bits {
            names.push(name.to_string());
            left &= !bits;
        }
    }
    if left != 0 {
        names.push(format!("{left:#x}"));
    }
    names.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, tid: i64, args: Vec<(&str, ArgText)>) -> RawEventLine {
        RawEventLine {
            ts: 1_000_999_999,
            cpu: 2,
            tid,
            thread_name: Some("my-thread".into()),
            tgid: Some(10),
            name: name.into(),
            args: args.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    #[test]
    fn the_prefix_pads_like_ftrace_and_dashes_in_names_become_underscores() {
        let line = event("kfree", 12, vec![("ptr", ArgText::Uint(u64::MAX))]).line();
        assert_eq!(
            line,
            "       my_thread-12    (   10) [002] .... 1.000999: kfree: ptr=18446744073709551615"
        );
    }

    #[test]
    fn scheduler_events_have_their_own_formats() {
        let switch = event(
            "sched_switch",
            0,
            vec![
                ("prev_comm", ArgText::Str("swapper/2".into())),
                ("prev_pid", ArgText::Int(0)),
                ("prev_prio", ArgText::Int(120)),
                ("prev_state", ArgText::Int(2)),
                ("next_comm", ArgText::Str("app".into())),
                ("next_pid", ArgText::Int(7)),
                ("next_prio", ArgText::Int(100)),
            ],
        );
        assert!(switch
            .line()
            .starts_with("          <idle>-0     (   10) [002]"));
        assert!(switch.line().ends_with(
            "sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=D ==> \
             next_comm=app next_pid=7 next_prio=100"
        ));
        let blocked = event(
            "sched_blocked_reason",
            0,
            vec![
                ("pid", ArgText::Int(7)),
                ("caller", ArgText::Str("filemap_fault".into())),
                ("io_wait", ArgText::Uint(1)),
            ],
        );
        assert!(blocked
            .line()
            .ends_with("sched_blocked_reason: pid=7 iowait=1 caller=filemap_fault"));
    }

    #[test]
    fn binder_workqueue_clock_and_page_cache_events_have_the_kernels_formats() {
        let line = |name: &str, args: Vec<(&str, ArgText)>| {
            let line = event(name, 12, args).line();
            line[line.find(": ").unwrap_or(0) + 2..].to_string()
        };
        assert_eq!(
            line(
                "binder_transaction",
                vec![
                    ("debug_id", ArgText::Int(-1)),
                    ("target_node", ArgText::Int(7)),
                    ("to_proc", ArgText::Int(100)),
                    ("to_thread", ArgText::Int(101)),
                    ("reply", ArgText::Int(0)),
                    ("code", ArgText::Uint(0x5f)),
                    ("flags", ArgText::Uint(0x10)),
                ]
            ),
            "binder_transaction: transaction=4294967295 dest_node=7 dest_proc=100 \
             dest_thread=101 reply=0 flags=0x10 code=0x5f"
        );
        assert_eq!(
            line(
                "binder_transaction_received",
                vec![("debug_id", ArgText::Int(9))]
            ),
            "binder_transaction_received: transaction=9"
        );
        assert_eq!(
            line(
                "workqueue_execute_start",
                vec![
                    ("work", ArgText::Uint(0xffff10)),
                    ("function", ArgText::Uint(0xabc))
                ]
            ),
            "workqueue_execute_start: work struct ffff10: function abc"
        );
        assert_eq!(
            line("workqueue_execute_end", vec![("work", ArgText::Uint(0x10))]),
            "workqueue_execute_end: work struct 10"
        );
        assert_eq!(
            line(
                "clock_set_rate",
                vec![
                    ("name", ArgText::Str("clk".into())),
                    ("state", ArgText::Uint(200)),
                    ("cpu_id", ArgText::Uint(3))
                ]
            ),
            "clock_set_rate: clk state=200 cpu_id=3"
        );
        assert_eq!(
            line(
                "mm_filemap_add_to_page_cache",
                vec![
                    ("pfn", ArgText::Uint(5)),
                    ("i_ino", ArgText::Uint(255)),
                    ("index", ArgText::Uint(2)),
                    ("s_dev", ArgText::Uint((8 << 20) | 3)),
                ]
            ),
            "mm_filemap_add_to_page_cache: dev 8:3 ino ff page=0000000000000000 pfn=5 ofs=8192"
        );
        let mut renderer = event("kfree", 12, vec![]);
        renderer.thread_name = Some("CrRendererMain".into());
        assert!(renderer.line().starts_with("CrRendererMainThread-12"));
    }

    #[test]
    fn allocation_flags_are_named() {
        assert_eq!(gfp_flags(0), "GFP_NOWAIT");
        assert_eq!(gfp_flags(0x40_0000 | 0x200_0000 | 0xc0), "GFP_KERNEL");
        assert_eq!(
            gfp_flags(0x40_0000 | 0x200_0000 | 0xc0 | 0x8000),
            "GFP_KERNEL|GFP_ZERO"
        );
        assert_eq!(gfp_flags(0x4000_0000), "0x40000000");
    }
}

//! End to end: the real binary in a pseudo-terminal. It opens the demo, shows both
//! machines, runs a query at the SQL prompt, switches trace_time, quits with status 0, and
//! leaves the terminal as it found it (cooked mode, main screen, cursor shown). However the
//! explorer ends — `q`, a hangup, SIGTERM or SIGINT mid-import, a panic on any thread — the
//! terminal is restored and its temp directory (a fresh one per test) is left empty.

mod common;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};
use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcgetattr, tcsetwinsize, LocalModes, Winsize};

use common::{TempDir, TempFile};

struct Pty {
    master: File,
    slave: File,
    output: Arc<Mutex<Vec<u8>>>,
    child: Child,
    /// The slave's modes before sextant started (read later, sextant may be in raw mode).
    modes_before: LocalModes,
}

impl Pty {
    /// Starts sextant with `args`, its history in `history`, its temp directory `tmp` and
    /// the extra environment `env`.
    fn spawn(args: &[&str], history: &TempFile, tmp: &TempDir, env: &[(&str, &str)]) -> Pty {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let slave = File::options()
            .read(true)
            .write(true)
            .open(name.to_str().expect("pts path"))
            .expect("opening the pty slave");
        tcsetwinsize(
            &slave,
            Winsize {
                ws_row: 30,
                ws_col: 100,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .expect("setting the window size");
        let modes_before = tcgetattr(&slave).expect("termios").local_modes;
        let stdio = |f: &File| Stdio::from(f.try_clone().expect("cloning the slave"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sextant"));
        cmd.args(args)
            .env("TERM", "xterm-256color")
            .env("SEXTANT_HISTORY", &history.0)
            .env("TMPDIR", tmp.path())
            .envs(env.iter().copied())
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave));
        // SAFETY: between fork and exec the closure makes only async-signal-safe syscalls
        // (setsid, ioctl TIOCSCTTY on stdin, so the pty becomes the child's controlling
        // terminal as a shell would arrange; signal, to give sextant the default
        // dispositions an interactive shell gives it even when this test runs as a
        // background job, whose SIGINT a shell ignores); it allocates nothing and touches
        // no locks.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
                for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting sextant");
        let master = File::from(master);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().expect("cloning the master");
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("output lock")
                    .extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            master,
            slave,
            output,
            child,
            modes_before,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().expect("output lock")).into_owned()
    }

    /// Waits until `needle` has been written after byte `from`; returns where it ends.
    fn wait_for(&self, needle: &str, from: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.text();
            if let Some(i) = text.get(from..).and_then(|t| t.find(needle)) {
                return from + i + needle.len();
            }
            assert!(
                Instant::now() < deadline,
                "never saw {needle:?}; the screen stream ends with: {:?}",
                tail(&text)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn pid(&self) -> Pid {
        Pid::from_child(&self.child)
    }

    fn signal(&self, signal: Signal) {
        kill_process(self.pid(), signal).expect("signalling sextant");
    }

    /// Waits for sextant to end (a watchdog, not a timing: it fails only if it never does).
    fn wait_exit(&mut self, what: &str) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.child.try_wait().expect("waiting for sextant") {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "sextant did not end on {what}; the screen stream ends with: {:?}",
                tail(&self.text())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The terminal is as it was before sextant ran: cooked mode and echo back on, the
    /// alternate screen left, mouse reporting off and the cursor shown — all written after
    /// byte `from` of the screen stream. Returns where the alternate screen was left.
    fn assert_restored(&self, from: usize) -> usize {
        let after = tcgetattr(self.slave.as_fd()).expect("termios");
        for flag in [LocalModes::ICANON, LocalModes::ECHO] {
            assert!(
                self.modes_before.contains(flag),
                "{flag:?} was off before sextant ran"
            );
            assert!(after.local_modes.contains(flag), "{flag:?} not restored");
        }
        // The bytes were written before sextant ended; the reader thread may lag.
        let left = self.wait_for("\x1b[?1049l", from);
        let text = self.text();
        let tail = &text[from..];
        for (what, seq) in [
            ("the cursor was not shown again", "\x1b[?25h"),
            ("mouse reporting was not turned off", "\x1b[?1000l"),
        ] {
            assert!(tail.contains(seq), "{what}");
        }
        left
    }

    fn send(&mut self, bytes: &str) {
        self.master
            .write_all(bytes.as_bytes())
            .expect("writing to the pty");
        // Separate keys as a person types them (an Esc right before a key reads as Alt).
        std::thread::sleep(Duration::from_millis(120));
    }
}

/// A failed test leaves no sextant behind (it would hold the terminal and inherited locks).
impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// Filtering tracks and an area on a real trace (issue 14).
#[path = "pty/find.rs"]
mod find;

/// The last 2000 bytes of the screen stream (at a character boundary).
fn tail(text: &str) -> &str {
    let mut at = text.len().saturating_sub(2000);
    while !text.is_char_boundary(at) {
        at += 1;
    }
    &text[at..]
}

#[test]
fn demo_session_query_trace_time_switch_and_clean_exit() {
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let mut pty = Pty::spawn(&[], &history, &tmp, &[]);

    let at = pty.wait_for("phone", 0);
    pty.wait_for("watch", 0);
    // The import finished: its summary replaces the progress bar.
    pty.wait_for("events from", 0);
    // The header says this is the demo and how to open one's own trace.
    pty.wait_for("opens", 0);
    // Idle: nothing more is sent to the terminal, even while the pointer moves over it
    // (SGR mouse reports of motion without a button).
    std::thread::sleep(Duration::from_millis(700));
    let settled = pty.text().len();
    for x in 10..20 {
        pty.send(&format!("\x1b[<35;{x};8M"));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        pty.text().len(),
        settled,
        "an idle session kept writing to the terminal"
    );

    pty.send("4");
    pty.send("select 'answer-' || (6*7) as a\r");
    let at = pty.wait_for("answer-42", at);

    pty.send("\x1b");
    pty.send("t");
    let at = pty.wait_for("Which clock", at);
    // Down to another clock, then switch.
    pty.send("\x1b[B");
    pty.send("\r");
    let at = pty.wait_for("trace time is now on", at);

    pty.send("2");
    pty.wait_for("trace time is on", at);
    pty.send("q");
    let status = pty.wait_exit("q");
    assert!(status.success(), "exit status {status}");
    pty.assert_restored(at);
    // The query went into the history file.
    let saved = std::fs::read_to_string(&history.0).expect("history written");
    assert!(saved.contains("answer-"), "{saved}");
    // Both databases (the import's and the switch's) are gone with their directory.
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

/// The session directory the explorer made in `tmp`, once it made it.
fn session_dir(tmp: &TempDir) -> String {
    let entries = tmp.entries();
    assert_eq!(entries.len(), 1, "one session directory: {entries:?}");
    assert!(entries[0].starts_with("sextant-"), "{entries:?}");
    entries[0].clone()
}

#[test]
fn a_hangup_or_an_interrupt_ends_the_explorer_restores_the_terminal_and_leaves_nothing() {
    for (signal, number) in [(Signal::HUP, 1), (Signal::INT, 2)] {
        let history = TempFile::new("history");
        let tmp = TempDir::new("pty-tmp");
        let mut pty = Pty::spawn(&[], &history, &tmp, &[]);
        let at = pty.wait_for("events from", 0);
        // The import is done: its database is in the session directory.
        let dir = session_dir(&tmp);
        let files = std::fs::read_dir(tmp.path().join(&dir))
            .expect("the session directory")
            .count();
        assert!(files > 0, "the session directory is empty");

        pty.signal(signal);
        let status = pty.wait_exit(&format!("{signal:?}"));
        // It ends by the signal itself, as a shell expects.
        assert_eq!(status.signal(), Some(number), "exit status {status}");
        pty.assert_restored(at);
        assert_eq!(tmp.entries(), Vec::<String>::new(), "after {signal:?}");
    }
}

#[test]
fn sigterm_during_an_import_ends_the_explorer_and_leaves_nothing() {
    let trace = TempFile::with_bytes("big.json", &common::big_json_trace(150_000));
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let mut pty = Pty::spawn(&[&trace.name()], &history, &tmp, &[]);
    // The progress bar: the import is under way (finished or not, the end must be clean).
    let at = pty.wait_for("importing", 0);
    session_dir(&tmp);
    pty.signal(Signal::TERM);
    let status = pty.wait_exit("SIGTERM");
    assert_eq!(status.signal(), Some(15), "exit status {status}");
    pty.assert_restored(at);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

/// Starts the demo with the fault `fault` injected (debug builds read `SEXTANT_FAULT`).
fn with_fault(fault: &str, tmp: &TempDir, history: &TempFile) -> Pty {
    Pty::spawn(&[], history, tmp, &[("SEXTANT_FAULT", fault)])
}

#[test]
fn a_panic_on_another_thread_ends_the_explorer_restores_the_terminal_and_prints_it() {
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let mut pty = with_fault("importer-thread-panic", &tmp, &history);
    let status = pty.wait_exit("a panic on the importer thread");
    assert_eq!(status.code(), Some(101), "exit status {status}");
    let left = pty.assert_restored(0);
    // The message comes after the terminal is restored, so it stays readable.
    let printed = pty.wait_for("injected fault: the importer thread died", left);
    assert!(printed > left);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

#[test]
fn a_panic_on_the_ui_thread_restores_the_terminal_and_prints_it() {
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let mut pty = with_fault("ui-panic", &tmp, &history);
    let status = pty.wait_exit("a panic on the UI thread");
    assert_eq!(status.code(), Some(101), "exit status {status}");
    let left = pty.assert_restored(0);
    pty.wait_for("injected fault: the UI thread panicked", left);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

#[test]
fn a_caught_panic_is_shown_then_printed_once_the_terminal_is_restored() {
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let mut pty = with_fault("importer-job-panic", &tmp, &history);
    // On screen, as the import's failure.
    let at = pty.wait_for("internal error", 0);
    pty.send("q");
    let status = pty.wait_exit("q");
    assert!(status.success(), "exit status {status}");
    let left = pty.assert_restored(at);
    pty.wait_for("injected fault: the import panicked", left);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

#[test]
fn an_offset_edited_in_the_clock_graph_is_applied_and_written_as_a_new_archive() {
    let history = TempFile::new("history");
    let tmp = TempDir::new("pty-tmp");
    let data = TempDir::new("pty-data");
    let trace = data.path().join("run.zip");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.zip"),
        &trace,
    )
    .expect("copying the demo archive");
    let mut pty = Pty::spawn(
        &[trace.to_str().expect("utf-8 temp path")],
        &history,
        &tmp,
        &[],
    );
    let at = pty.wait_for("events from", 0);
    pty.send("2");
    let at = pty.wait_for("edit", at);
    // phone → watch → app_log.json, then its form.
    pty.send("\x1b[C");
    pty.send("\x1b[C");
    pty.send("e");
    let at = pty.wait_for("Edit app_log.json", at);
    // Down to the offset, erase it, type another.
    for _ in 0..4 {
        pty.send("\x1b[B");
    }
    for _ in 0..11 {
        pty.send("\x7f");
    }
    pty.send("12.3s");
    pty.send("\r");
    let at = pty.wait_for("moves +2 s", at);
    pty.send("\r");
    let at = pty.wait_for("applied:", at);
    pty.send("w");
    // The archive is written beside the trace and renamed into place when complete (the
    // screen's text arrives as a diff of the last frame, so watch the file).
    let written = data.path().join("run.edited.zip");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !written.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never written",
            written.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // And the manifest alone.
    pty.send("W");
    let json = data.path().join("run.edited.manifest.json");
    while !json.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never written",
            json.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    pty.send("q");
    let status = pty.wait_exit("q");
    assert!(status.success(), "exit status {status}");
    pty.assert_restored(at);
    assert_eq!(
        data.entries(),
        vec![
            "run.edited.manifest.json".to_string(),
            "run.edited.zip".to_string(),
            "run.zip".to_string()
        ]
    );
    let saved = std::fs::read_to_string(&json).expect("the manifest written");
    assert!(saved.contains("12300000000"), "{saved}");
    // The edited archive's app log lands exactly 2 s later than the original's.
    let first = |archive: &std::path::Path| -> i64 {
        let out = Command::new(env!("CARGO_BIN_EXE_sextant"))
            .arg("query")
            .arg(archive)
            .arg("SELECT min(ts) FROM slice WHERE name = 'upload photo'")
            .output()
            .expect("running sextant query");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("no ts in {text:?}"))
    };
    assert_eq!(first(&written) - first(&trace), 2_000_000_000);
    // The new archive holds the edited manifest.
    let out = Command::new(env!("CARGO_BIN_EXE_sextant"))
        .arg("manifest")
        .arg(&written)
        .output()
        .expect("running sextant manifest");
    let manifest = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{manifest}");
    assert!(manifest.contains("12300000000"), "{manifest}");
}

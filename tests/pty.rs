//! End to end: the real binary in a pseudo-terminal. It opens the demo, shows both
//! machines, runs a query at the SQL prompt, switches trace_time, quits with status 0, and
//! leaves the terminal as it found it (cooked mode, main screen, cursor shown).

mod common;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcgetattr, tcsetwinsize, LocalModes, Winsize};

use common::TempFile;

struct Pty {
    master: File,
    slave: File,
    output: Arc<Mutex<Vec<u8>>>,
    child: Child,
    /// The slave's modes before sextant started (read later, sextant may be in raw mode).
    modes_before: LocalModes,
}

impl Pty {
    fn spawn(args: &[&str], history: &TempFile) -> Pty {
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
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave));
        // SAFETY: between fork and exec the closure makes only two syscalls (setsid, and
        // ioctl TIOCSCTTY on stdin) so the pty becomes the child's controlling terminal,
        // as a shell would arrange; it allocates nothing and touches no locks.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
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
                &text[text.len().saturating_sub(2000)..]
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn send(&mut self, bytes: &str) {
        self.master
            .write_all(bytes.as_bytes())
            .expect("writing to the pty");
        // Separate keys as a person types them (an Esc right before a key reads as Alt).
        std::thread::sleep(Duration::from_millis(120));
    }
}

#[test]
fn demo_session_query_trace_time_switch_and_clean_exit() {
    let history = TempFile::new("history");
    let mut pty = Pty::spawn(&[], &history);

    let at = pty.wait_for("phone", 0);
    pty.wait_for("watch", 0);
    // The import finished: its summary replaces the progress bar.
    pty.wait_for("events from", 0);
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

    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = pty.child.try_wait().expect("waiting for sextant") {
            break s;
        }
        assert!(Instant::now() < deadline, "sextant did not quit on q");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}");

    // Restored: cooked mode and echo back on, as before; alternate screen left, mouse
    // reporting off, cursor shown.
    let after = tcgetattr(pty.slave.as_fd()).expect("termios");
    for flag in [LocalModes::ICANON, LocalModes::ECHO] {
        assert!(
            pty.modes_before.contains(flag),
            "{flag:?} was off before sextant ran"
        );
        assert!(after.local_modes.contains(flag), "{flag:?} not restored");
    }
    std::thread::sleep(Duration::from_millis(200));
    let text = pty.text();
    let tail = &text[text.rfind("answer-42").unwrap_or(0)..];
    for (what, seq) in [
        ("the alternate screen was not left", "\x1b[?1049l"),
        ("the cursor was not shown again", "\x1b[?25h"),
        ("mouse reporting was not turned off", "\x1b[?1000l"),
    ] {
        assert!(tail.contains(seq), "{what}");
    }
    // The query went into the history file.
    let saved = std::fs::read_to_string(&history.0).expect("history written");
    assert!(saved.contains("answer-"), "{saved}");
}

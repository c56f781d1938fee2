//! How the process ends when it is asked to (SIGINT, SIGTERM, SIGHUP — what a closed SSH
//! connection sends) or when a thread panics: the terminal is restored, the panic's message
//! is printed, and no temporary file survives ([`crate::cleanup`]).
//!
//! A signal is received on a thread of its own (signal-hook's self-pipe), never in a signal
//! handler, so what follows may lock, allocate and remove files:
//! - While the explorer runs it has registered a [`listen`]er: the signal becomes an event
//!   of its loop, which quits as on `q` — it restores the terminal, cancels and joins the
//!   importer, query and data threads, removes the session's databases — and `main` then
//!   calls [`finish`], which ends the process by the same signal (so a shell sees it).
//!   Should that take longer than [`GRACE`], or should a second signal come, the signal
//!   thread [`force`]s the end itself.
//! - Without a listener (`sextant query`, `sextant import`), the signal thread removes the
//!   registered temporary files at once and ends the process by the signal. Threads still
//!   writing them write into unlinked files; nothing is created after the removal but by
//!   the exiting process itself.
//!
//! A panic inside [`crate::tui::terminal::catch`] (a worker's job) becomes an error on
//! screen and its message is kept to print once the terminal is restored. Any other panic
//! while the explorer owns the terminal: on the UI thread, the hook restores the terminal
//! before the message is printed and unwinding cleans up; on another thread, the message
//! is kept and the explorer is asked to quit (as for a signal), then prints it.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::tui::terminal;

/// Why the process is being asked to end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// This signal arrived.
    Signal(i32),
    /// A thread other than the UI's panicked.
    Panic,
}

/// How long an orderly shutdown may take before the signal thread ends the process itself.
pub const GRACE: Duration = Duration::from_secs(5);

/// Exit status of a process ended because a thread panicked (Rust's own for a panic).
const PANIC_STATUS: i32 = 101;

type Listener = Arc<dyn Fn(Reason) -> bool + Send + Sync>;

/// Who hears a shutdown request (the explorer's loop), if anyone.
static LISTENER: Mutex<Option<Listener>> = Mutex::new(None);
/// The first request: 0 none, a signal number, or -1 for a panic.
static REQUESTED: AtomicI32 = AtomicI32::new(0);
/// The process is being ended by [`force`]: nothing else should start.
static FORCING: AtomicBool = AtomicBool::new(false);
/// Panic messages kept to be printed on a restored terminal: (fatal, message).
static PANICS: Mutex<Vec<(bool, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// Depth of [`crate::tui::terminal::catch`] calls on this thread.
    static CATCHING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Formats a panic's report (color-eyre's, in the binary).
pub type PanicReport = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) -> String + Send + Sync>;

/// How panics are reported: set by [`install`]; without it the previous hook prints.
static REPORT: std::sync::OnceLock<PanicReport> = std::sync::OnceLock::new();

/// Installs the panic hook (printing panics as `report` formats them) and starts the signal
/// thread. Call once, early in `main`.
pub fn install(report: PanicReport) -> std::io::Result<()> {
    let _ = REPORT.set(report);
    install_panic_hook();
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        // A signal the parent set to be ignored stays ignored: `nohup sextant …` survives
        // the hangup, a background job of a script the interrupt.
        let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
            .into_iter()
            .filter(|&s| !ignored(s))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let mut signals = signal_hook::iterator::Signals::new(wanted)?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    on_signal(signal);
                }
            })?;
    }
    Ok(())
}

/// Whether `signal` is ignored now (as the parent left it).
#[cfg(unix)]
fn ignored(signal: i32) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, sigaction only writes the current disposition into
    // `old`, a properly sized and aligned sigaction we own; it is read only if the call
    // succeeded (and a zeroed sigaction is a valid value anyway).
    unsafe {
        libc::sigaction(signal, std::ptr::null(), old.as_mut_ptr()) == 0
            && old.assume_init().sa_sigaction == libc::SIG_IGN
    }
}

/// While the guard lives, shutdown requests go to `listener` (which returns whether it took
/// the request) instead of ending the process at once.
pub fn listen(listener: impl Fn(Reason) -> bool + Send + Sync + 'static) -> Listening {
    *LISTENER.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(listener));
    Listening(())
}

/// Unregisters the listener on drop.
pub struct Listening(());

impl Drop for Listening {
    fn drop(&mut self) {
        *LISTENER.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// The first shutdown request, if there was one.
pub fn requested() -> Option<Reason> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        -1 => Some(Reason::Panic),
        signal => Some(Reason::Signal(signal)),
    }
}

/// Records the first request; true if this one is it.
fn request(reason: Reason) -> bool {
    let code = match reason {
        Reason::Signal(s) => s,
        Reason::Panic => -1,
    };
    REQUESTED
        .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Hands the request to the listener; true if one took it. The listener is called with
/// the lock released.
fn notify(reason: Reason) -> bool {
    let listener = LISTENER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    listener.is_some_and(|l| l(reason))
}

fn on_signal(signal: i32) {
    if request(Reason::Signal(signal)) && notify(Reason::Signal(signal)) {
        watchdog(Reason::Signal(signal));
        return;
    }
    // A second signal, or nobody to shut down in order.
    force(Reason::Signal(signal));
}

/// Ends the process after [`GRACE`] unless the orderly shutdown has by then.
fn watchdog(reason: Reason) {
    let started = std::thread::Builder::new()
        .name("shutdown-watchdog".into())
        .spawn(move || {
            std::thread::sleep(GRACE);
            force(reason);
        });
    if started.is_err() {
        force(reason);
    }
}

/// The end that needs nobody's cooperation: remove the temporary files, restore the
/// terminal (without waiting on a terminal that no longer reads), print the kept panic
/// messages, and end the process — by the signal itself when there was one.
pub fn force(reason: Reason) {
    if FORCING.swap(true, Ordering::SeqCst) {
        return;
    }
    crate::cleanup::remove_registered();
    let (done, restored) = std::sync::mpsc::channel();
    let restorer = std::thread::Builder::new().spawn(move || {
        terminal::restore();
        let _ = done.send(());
    });
    if restorer.is_ok() {
        let _ = restored.recv_timeout(Duration::from_millis(500));
    }
    print_panics(&take_panics());
    exit_for(reason);
}

/// Called by `main` when everything is cleaned up: a process asked to end by a signal ends
/// by that signal, one whose thread panicked with a panic's status.
pub fn finish() {
    if let Some(reason) = requested() {
        exit_for(reason);
    }
}

fn exit_for(reason: Reason) -> ! {
    match reason {
        Reason::Signal(signal) => {
            #[cfg(unix)]
            {
                let _ = signal_hook::low_level::emulate_default_handler(signal);
            }
            std::process::exit(128 + signal)
        }
        Reason::Panic => std::process::exit(PANIC_STATUS),
    }
}

// ---------------------------------------------------------------------------------------
// Panics
// ---------------------------------------------------------------------------------------

/// Runs `job` marked as caught: a panic in it is kept for later instead of printed.
pub fn catching<T>(job: impl FnOnce() -> T) -> std::thread::Result<T> {
    CATCHING.with(|c| c.set(c.get() + 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    CATCHING.with(|c| c.set(c.get().saturating_sub(1)));
    result
}

/// The panic messages kept so far, oldest first: (fatal, message). Fatal ones ended the
/// session; the others were shown on screen as errors.
pub fn take_panics() -> Vec<(bool, String)> {
    std::mem::take(&mut *PANICS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Prints kept panic messages to stderr (ignoring a stderr that is gone).
pub fn print_panics(panics: &[(bool, String)]) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for (fatal, message) in panics {
        let what = if *fatal {
            "sextant stopped on an internal error (a bug in Sextant; please report it)"
        } else {
            "sextant met an internal error, shown on screen (a bug in Sextant; please report it)"
        };
        let _ = writeln!(err, "{what}:\n{message}");
    }
}

/// Prints a panic as the installed report formats it, or through the previous hook. The
/// report is written without `eprintln!`: a panic while the hook runs would abort the
/// process before any cleanup, and stderr may be a terminal that hung up.
fn report(
    info: &std::panic::PanicHookInfo<'_>,
    previous: &(dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync),
) {
    use std::io::Write;
    match REPORT.get() {
        Some(format) => {
            let text = format(info);
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
        None => previous(info),
    }
}

fn keep_panic(fatal: bool, message: String) {
    // `try_lock`: a panic while the list is locked (only ever held to push or take) must
    // not wait on itself.
    if let Ok(mut p) = PANICS.try_lock() {
        p.push((fatal, message));
    }
}

fn describe(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into());
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("<unnamed>");
    match info.location() {
        Some(at) => format!("thread '{name}' panicked at {at}:\n{what}"),
        None => format!("thread '{name}' panicked:\n{what}"),
    }
}

/// Replaces the current hook, which it calls when no report is installed. Idempotent.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) > 0 {
                keep_panic(false, describe(info));
                return;
            }
            if !terminal::is_active() || FORCING.load(Ordering::SeqCst) {
                report(info, &*previous);
                return;
            }
            if terminal::is_ui_thread() {
                terminal::restore();
                report(info, &*previous);
                return;
            }
            // Another thread died while the UI draws: printing now would land on the
            // alternate screen. Keep the message; the explorer quits and prints it.
            keep_panic(true, describe(info));
            if request(Reason::Panic) {
                if notify(Reason::Panic) {
                    watchdog(Reason::Panic);
                } else {
                    force(Reason::Panic);
                }
            }
        }));
    });
}

/// Fault injection for the end-to-end tests of the paths above: true when the environment
/// variable `SEXTANT_FAULT` names `point`. Debug builds only; always false in a release.
pub fn fault(point: &str) -> bool {
    #[cfg(debug_assertions)]
    {
        std::env::var("SEXTANT_FAULT").is_ok_and(|v| v == point)
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = point;
        false
    }
}

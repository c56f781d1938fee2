//! The terminal: raw mode, the alternate screen and mouse reporting, always undone — on a
//! normal exit, on an error (the guard's `Drop`) and on a panic (a hook that restores
//! before the panic message is printed, so the message is readable).

use std::io::{self, Stdout};

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::Terminal;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Owns the terminal while the UI runs.
pub struct TerminalGuard {
    pub terminal: Term,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enable_raw_mode()?;
        let mut stdout = io::stdout();
        if let Err(e) = execute!(stdout, EnterAlternateScreen, EnableMouseCapture) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(mut terminal) => {
                let _ = terminal.hide_cursor();
                Ok(TerminalGuard { terminal })
            }
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
        let _ = self.terminal.show_cursor();
    }
}

/// Puts the terminal back as the shell expects it; safe to call more than once.
pub fn restore() {
    let _ = execute!(io::stdout(), DisableMouseCapture, LeaveAlternateScreen);
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), ratatui::crossterm::cursor::Show);
}

/// A panic on the UI thread ends the program: the terminal is restored first, so the
/// message lands on the normal screen. A panic on a worker thread is caught there and shown
/// in the UI as an error ([`catch`]); printing it would scribble over the screen, so it
/// is not printed.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let ui_thread = std::thread::current().id();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == ui_thread {
                restore();
                previous(info);
            }
        }));
    });
}

/// Runs a worker's job; a panic becomes an error message instead of a dead thread.
pub fn catch<T>(job: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        format!("internal error (a bug in Sextant; please report it): {what}")
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panicking_job_becomes_an_error() {
        assert_eq!(super::catch(|| 7), Ok(7));
        let e = super::catch(|| -> u8 { panic!("boom {}", 1) }).unwrap_err();
        assert!(e.contains("boom 1"), "{e}");
    }
}

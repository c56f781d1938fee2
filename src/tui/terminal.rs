//! The terminal: raw mode, the alternate screen and mouse reporting, always undone — on a
//! normal exit, on an error (the guard's `Drop`), on a panic (the hook in
//! [`crate::shutdown`] restores before the message is printed, so it is readable) and on
//! SIGINT, SIGTERM and SIGHUP ([`crate::shutdown`] too).

use std::cell::Cell;
use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::Terminal;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// The terminal is in the UI's modes (raw, alternate screen, mouse capture).
static ACTIVE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread entered the terminal (it draws).
    static UI_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether the UI owns the terminal now.
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Whether the calling thread is the one that draws.
pub fn is_ui_thread() -> bool {
    UI_THREAD.with(Cell::get)
}

/// Owns the terminal while the UI runs.
pub struct TerminalGuard {
    /// Always there until the guard drops.
    terminal: Option<Term>,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        crate::shutdown::install_panic_hook();
        UI_THREAD.with(|t| t.set(true));
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        if let Err(e) = execute!(stdout, EnterAlternateScreen, EnableMouseCapture) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(mut terminal) => {
                let _ = terminal.hide_cursor();
                Ok(TerminalGuard {
                    terminal: Some(terminal),
                })
            }
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl TerminalGuard {
    /// Draws a frame.
    pub fn draw(&mut self, render: impl FnOnce(&mut ratatui::Frame<'_>)) -> io::Result<()> {
        match &mut self.terminal {
            Some(t) => t.draw(render).map(|_| ()),
            None => Ok(()),
        }
    }

    /// The terminal's size.
    pub fn size(&self) -> io::Result<ratatui::layout::Size> {
        match &self.terminal {
            Some(t) => t.size(),
            None => Ok(ratatui::layout::Size::default()),
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
        UI_THREAD.with(|t| t.set(false));
        // ratatui's own drop shows a hidden cursor and, when that fails (a terminal hung
        // up), prints with `eprintln!`, which panics on a stderr that is gone. The cursor
        // is shown by `restore` already; a terminal that cannot be written to is let go.
        if let Some(mut terminal) = self.terminal.take() {
            if terminal.show_cursor().is_err() {
                std::mem::forget(terminal);
            }
        }
    }
}

/// Puts the terminal back as the shell expects it. Only the first call after
/// [`TerminalGuard::enter`] writes anything, so the UI thread, a panic and a signal may all
/// call it.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = execute!(io::stdout(), DisableMouseCapture, LeaveAlternateScreen);
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), ratatui::crossterm::cursor::Show);
}

/// Runs a worker's job; a panic becomes an error message instead of a dead thread (and its
/// message is printed once the terminal is restored, see [`crate::shutdown`]).
pub fn catch<T>(job: impl FnOnce() -> T) -> Result<T, String> {
    crate::shutdown::catching(job).map_err(|payload| {
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

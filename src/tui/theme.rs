//! Colours: 256 colours when the terminal says it has them, the 16 ANSI colours
//! otherwise, and none at all under `NO_COLOR` (reverse video and bold carry the meaning).

use ratatui::style::{Color, Modifier, Style};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    None,
    Ansi16,
    Indexed256,
}

impl ColorMode {
    /// From the environment, as terminal programs conventionally read it.
    pub fn detect() -> ColorMode {
        Self::from_env(
            std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            std::env::var("TERM").unwrap_or_default().as_str(),
            std::env::var("COLORTERM").unwrap_or_default().as_str(),
        )
    }

    pub fn from_env(no_color: bool, term: &str, colorterm: &str) -> ColorMode {
        if no_color || term == "dumb" {
            ColorMode::None
        } else if term.contains("256color")
            || matches!(colorterm, "truecolor" | "24bit")
            || term.contains("direct")
        {
            ColorMode::Indexed256
        } else {
            ColorMode::Ansi16
        }
    }
}

/// Styles for everything the panes draw.
#[derive(Clone, Copy, Debug)]
pub struct Theme {
    pub mode: ColorMode,
}

/// Slice colours in 256-colour mode: mid-tone backgrounds that keep black text readable.
const PALETTE_256: [u8; 12] = [74, 80, 114, 150, 179, 173, 168, 140, 110, 108, 186, 145];
const PALETTE_16: [Color; 6] = [
    Color::Cyan,
    Color::Green,
    Color::Yellow,
    Color::Magenta,
    Color::Blue,
    Color::Red,
];

impl Theme {
    pub fn new(mode: ColorMode) -> Theme {
        Theme { mode }
    }

    fn colored(&self, style: Style, plain: Style) -> Style {
        if self.mode == ColorMode::None {
            plain
        } else {
            style
        }
    }

    /// A slice, coloured by its name so equal names look alike across tracks.
    pub fn slice(&self, name_hash: u32) -> Style {
        match self.mode {
            ColorMode::None => Style::new().add_modifier(Modifier::REVERSED),
            ColorMode::Ansi16 => Style::new()
                .bg(PALETTE_16[name_hash as usize % PALETTE_16.len()])
                .fg(Color::Black),
            ColorMode::Indexed256 => Style::new()
                .bg(Color::Indexed(
                    PALETTE_256[name_hash as usize % PALETTE_256.len()],
                ))
                .fg(Color::Black),
        }
    }

    pub fn selected_slice(&self) -> Style {
        self.colored(
            Style::new()
                .bg(Color::White)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }

    /// A flow's connector on the timeline.
    pub fn flow(&self) -> Style {
        self.colored(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The slice at the other end of the selected slice's flow.
    pub fn flow_peer(&self) -> Style {
        self.colored(
            Style::new()
                .bg(Color::Yellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }

    /// A slice that needs attention (a janky frame): red, and bold without colour.
    pub fn alert_slice(&self) -> Style {
        self.colored(
            Style::new()
                .bg(Color::Red)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    pub fn counter(&self) -> Style {
        self.colored(Style::new().fg(Color::Green), Style::new())
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn dim(&self) -> Style {
        self.colored(Style::new().fg(Color::DarkGray), Style::new())
    }

    pub fn key(&self) -> Style {
        self.colored(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub fn error(&self) -> Style {
        self.colored(
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub fn warning(&self) -> Style {
        self.colored(Style::new().fg(Color::Yellow), Style::new())
    }

    pub fn ok(&self) -> Style {
        self.colored(Style::new().fg(Color::Green), Style::new())
    }

    /// The row under the cursor in lists and the timeline.
    pub fn cursor(&self) -> Style {
        self.colored(
            Style::new().bg(Color::DarkGray).fg(Color::White),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    pub fn active_tab(&self) -> Style {
        self.colored(
            Style::new()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    pub fn bar(&self) -> Style {
        self.colored(Style::new().fg(Color::Cyan), Style::new())
    }
}

/// A stable small hash of a name, for picking its colour.
pub fn name_hash(name: &str) -> u32 {
    // FNV-1a: stable across runs and platforms, unlike std's RandomState.
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_wins_over_everything() {
        assert_eq!(
            ColorMode::from_env(true, "xterm-256color", "truecolor"),
            ColorMode::None
        );
        assert_eq!(ColorMode::from_env(false, "xterm", ""), ColorMode::Ansi16);
        assert_eq!(ColorMode::from_env(false, "linux", ""), ColorMode::Ansi16);
        assert_eq!(
            ColorMode::from_env(false, "screen-256color", ""),
            ColorMode::Indexed256
        );
        assert_eq!(
            ColorMode::from_env(false, "xterm", "truecolor"),
            ColorMode::Indexed256
        );
    }

    #[test]
    fn sixteen_colour_mode_uses_only_ansi_colours() {
        let theme = Theme::new(ColorMode::Ansi16);
        for h in 0..32 {
            let bg = theme.slice(h).bg.unwrap_or(Color::Reset);
            assert!(!matches!(bg, Color::Indexed(_) | Color::Rgb(..)), "{bg:?}");
        }
    }
}

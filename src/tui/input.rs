//! A one-line text field (the SQL prompt, timeline search): editing keys, cursor moves.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key did to the field.
#[derive(Debug, PartialEq, Eq)]
pub enum InputAction {
    Edited,
    Moved,
    Submit,
    Cancel,
    HistoryPrevious,
    HistoryNext,
    /// Not a key the field uses.
    Ignored,
}

#[derive(Clone, Debug, Default)]
pub struct LineInput {
    pub text: String,
    /// Cursor position in chars.
    pub cursor: usize,
}

impl LineInput {
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.chars().count();
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
    }

    fn byte_at(&self, char_pos: usize) -> usize {
        self.text
            .char_indices()
            .nth(char_pos)
            .map_or(self.text.len(), |(i, _)| i)
    }

    pub fn handle(&mut self, key: KeyEvent) -> InputAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let len = self.text.chars().count();
        match key.code {
            KeyCode::Enter => InputAction::Submit,
            KeyCode::Esc => InputAction::Cancel,
            KeyCode::Up => InputAction::HistoryPrevious,
            KeyCode::Down => InputAction::HistoryNext,
            KeyCode::Left => {
                self.cursor = self.cursor.saturating_sub(1);
                InputAction::Moved
            }
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(len);
                InputAction::Moved
            }
            KeyCode::Home => {
                self.cursor = 0;
                InputAction::Moved
            }
            KeyCode::End => {
                self.cursor = len;
                InputAction::Moved
            }
            KeyCode::Char('a') if ctrl => {
                self.cursor = 0;
                InputAction::Moved
            }
            KeyCode::Char('e') if ctrl => {
                self.cursor = len;
                InputAction::Moved
            }
            KeyCode::Char('u') if ctrl => {
                let at = self.byte_at(self.cursor);
                self.text.replace_range(..at, "");
                self.cursor = 0;
                InputAction::Edited
            }
            KeyCode::Char('k') if ctrl => {
                let at = self.byte_at(self.cursor);
                self.text.truncate(at);
                InputAction::Edited
            }
            KeyCode::Char('w') if ctrl => {
                let chars: Vec<char> = self.text.chars().collect();
                let mut start = self.cursor;
                while start > 0 && chars[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && chars[start - 1] != ' ' {
                    start -= 1;
                }
                let (a, b) = (self.byte_at(start), self.byte_at(self.cursor));
                self.text.replace_range(a..b, "");
                self.cursor = start;
                InputAction::Edited
            }
            KeyCode::Backspace => {
                if self.cursor > 0 {
                    let (a, b) = (self.byte_at(self.cursor - 1), self.byte_at(self.cursor));
                    self.text.replace_range(a..b, "");
                    self.cursor -= 1;
                }
                InputAction::Edited
            }
            KeyCode::Delete => {
                if self.cursor < len {
                    let (a, b) = (self.byte_at(self.cursor), self.byte_at(self.cursor + 1));
                    self.text.replace_range(a..b, "");
                }
                InputAction::Edited
            }
            KeyCode::Tab => {
                self.insert(' ');
                InputAction::Edited
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                self.insert(c);
                InputAction::Edited
            }
            _ => InputAction::Ignored,
        }
    }

    fn insert(&mut self, c: char) {
        let at = self.byte_at(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    /// The visible part of the text for a field `width` cells wide, and the cursor's
    /// column in it (scrolls horizontally to keep the cursor in view).
    pub fn view(&self, width: usize) -> (String, usize) {
        let width = width.max(1);
        let first = (self.cursor + 1).saturating_sub(width);
        let shown: String = self.text.chars().skip(first).take(width).collect();
        (shown, self.cursor - first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn typing_editing_and_moving() {
        let mut f = LineInput::default();
        for c in "selct".chars() {
            f.handle(key(KeyCode::Char(c)));
        }
        f.handle(key(KeyCode::Left));
        f.handle(key(KeyCode::Left));
        f.handle(key(KeyCode::Char('e')));
        assert_eq!(f.text, "select");
        f.handle(key(KeyCode::End));
        f.handle(key(KeyCode::Backspace));
        assert_eq!(f.text, "selec");
        f.handle(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!((f.text.as_str(), f.cursor), ("", 0));
        assert_eq!(f.handle(key(KeyCode::Enter)), InputAction::Submit);
        assert_eq!(f.handle(key(KeyCode::Esc)), InputAction::Cancel);
    }

    #[test]
    fn multibyte_text_is_edited_by_char() {
        let mut f = LineInput::default();
        f.set("aµb");
        f.handle(key(KeyCode::Left));
        f.handle(key(KeyCode::Backspace));
        assert_eq!(f.text, "ab");
    }

    #[test]
    fn view_scrolls_to_the_cursor() {
        let mut f = LineInput::default();
        f.set("0123456789");
        assert_eq!(f.view(4), ("789".to_string(), 3));
        f.cursor = 0;
        assert_eq!(f.view(4), ("0123".to_string(), 0));
    }
}

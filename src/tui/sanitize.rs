//! The one sanitizer every trace string passes before it reaches the terminal.
//!
//! Trace files are untrusted: a slice name holding `ESC ] 52 ;…` or a bare `\r` could
//! rewrite the user's clipboard or overdraw the screen. Control characters (C0, DEL, C1)
//! and the Unicode bidi overrides that reorder text are replaced by `�`; tabs and newlines
//! become spaces so one string stays on one line.

use std::borrow::Cow;

const REPLACEMENT: char = '\u{FFFD}';

fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// `s` made safe to print: borrowed when nothing needed replacing.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| match c {
                '\t' | '\n' | '\r' => ' ',
                c if is_unsafe(c) => REPLACEMENT,
                c => c,
            })
            .collect(),
    )
}

/// Like [`sanitize`], for bytes that may not be UTF-8 (SQL results, file names).
pub fn sanitize_bytes(b: &[u8]) -> String {
    sanitize(&String::from_utf8_lossy(b)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_strings_are_borrowed() {
        assert!(matches!(sanitize("frame 42 µs"), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_and_controls_are_replaced() {
        assert_eq!(sanitize("a\x1b]52;c;x\x07b"), "a\u{FFFD}]52;c;x\u{FFFD}b");
        assert_eq!(sanitize("line\nnext\tcol\r"), "line next col ");
        assert_eq!(sanitize("\u{9b}31m"), "\u{FFFD}31m");
        assert_eq!(sanitize("abc\u{202E}def"), "abc\u{FFFD}def");
        assert_eq!(sanitize("\x7f"), "\u{FFFD}");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_passed() {
        assert_eq!(sanitize_bytes(b"ok\xff\x1b"), "ok\u{FFFD}\u{FFFD}");
    }
}

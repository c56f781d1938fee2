//! Wraps styled lines at word boundaries to a width, continuation lines indented under the
//! text they continue (ratatui's own wrapping restarts them at column 0). The panes that
//! wrap long texts (help, clock graph, editor, SQL view) lay out with it, so the number of
//! lines they scroll through is the number drawn.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Display width of a string (every char one column, as the sanitizer leaves them).
fn width(s: &str) -> usize {
    s.chars().count()
}

/// `line` wrapped `max` columns wide. Continuation lines start under the line's text: its
/// leading spaces plus `indent` more (capped so at least half the width is left for text).
pub fn wrap_line(line: &Line<'_>, max: usize, indent: usize) -> Vec<Line<'static>> {
    let max = max.max(1);
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    if width(&text) <= max {
        return vec![owned(line)];
    }
    let leading = text.chars().take_while(|c| *c == ' ').count();
    let indent = (leading + indent).min(max / 2);
    // Words with their style: a word keeps the spaces that follow it.
    let mut words: Vec<(String, Style)> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for word in span.content.split_inclusive(' ') {
            words.push((word.to_string(), style));
        }
    }
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut col = 0usize;
    let mut push_line = |current: &mut Vec<Span<'static>>, col: &mut usize| {
        // Spaces at a break are not drawn.
        while let Some(last) = current.last_mut() {
            let trimmed = last.content.trim_end().to_string();
            if trimmed.is_empty() {
                current.pop();
                continue;
            }
            last.content = trimmed.into();
            break;
        }
        out.push(Line::from(std::mem::take(current)));
        current.push(Span::raw(" ".repeat(indent)));
        *col = indent;
    };
    for (word, style) in words {
        let w = width(&word);
        let w_visible = width(word.trim_end());
        if col + w_visible > max && col > indent {
            push_line(&mut current, &mut col);
            if word.trim().is_empty() {
                continue;
            }
        }
        if col + w_visible <= max {
            current.push(Span::styled(word, style));
            col += w;
            continue;
        }
        // A word longer than a line: cut it.
        let mut rest: Vec<char> = word.chars().collect();
        while !rest.is_empty() {
            let room = max.saturating_sub(col).max(1);
            let take = room.min(rest.len());
            let piece: String = rest.drain(..take).collect();
            col += width(&piece);
            current.push(Span::styled(piece, style));
            if !rest.is_empty() {
                push_line(&mut current, &mut col);
            }
        }
    }
    if current.iter().any(|s| !s.content.trim().is_empty()) {
        push_line(&mut current, &mut col);
    }
    out
}

/// Every line wrapped (see [`wrap_line`]).
pub fn wrap_lines(lines: &[Line<'_>], max: usize, indent: usize) -> Vec<Line<'static>> {
    lines
        .iter()
        .flat_map(|l| wrap_line(l, max, indent))
        .collect()
}

/// A paragraph of lines wrapped `max` wide with continuation lines indented.
pub fn paragraph(lines: &[Line<'_>], max: u16, indent: usize) -> Paragraph<'static> {
    Paragraph::new(wrap_lines(lines, usize::from(max), indent))
}

fn owned(line: &Line<'_>) -> Line<'static> {
    let spans: Vec<Span<'static>> = line
        .spans
        .iter()
        .map(|s| Span::styled(s.content.to_string(), s.style))
        .collect();
    Line::from(spans).style(line.style)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn continuation_lines_are_indented_under_the_text() {
        let line = Line::from(vec![
            Span::raw("   key   "),
            Span::raw("time, j k across tracks and more words here"),
        ]);
        let out = wrap_line(&line, 24, 2);
        assert_eq!(
            texts(&out),
            vec![
                "   key   time, j k",
                "     across tracks and",
                "     more words here",
            ]
        );
        for l in &out {
            assert!(l.width() <= 24, "{l:?}");
        }
    }

    #[test]
    fn a_word_longer_than_the_line_is_cut() {
        let out = wrap_line(&Line::raw("ab abcdefghijkl"), 6, 0);
        assert_eq!(texts(&out), vec!["ab", "abcdef", "ghijkl"]);
    }

    #[test]
    fn short_lines_stay_whole() {
        assert_eq!(
            texts(&wrap_line(&Line::raw("  short"), 20, 4)),
            vec!["  short"]
        );
    }
}

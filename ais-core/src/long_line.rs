//! A window of a long source line for rendering: the renderer's cost grows with the length of
//! the line it shows, once per finding, so 20,000 findings on one 200 KB line would cost
//! 4·10⁹ character steps. Only [`WINDOW`] characters on each side of the underlined span are
//! shown, with `…` where the line was cut.

use crate::render::SourceLines;
use crate::source::Pos;

/// Lines longer than this many bytes are shown as a window.
pub(crate) const LONG_LINE: usize = 1024;
/// Characters shown on each side of the underlined span.
pub(crate) const WINDOW: usize = 60;

/// The shown part of `line` around `span` (byte offsets into `line`), and the span's byte range
/// within it.
pub(crate) fn window(line: &str, span: std::ops::Range<usize>) -> (String, std::ops::Range<usize>) {
    let start = line[..span.start.min(line.len())]
        .char_indices()
        .rev()
        .nth(WINDOW - 1)
        .map_or(0, |(i, _)| i);
    let span_end = span.end.clamp(span.start, line.len());
    // The span itself is shown up to WINDOW characters.
    let shown_end = line[span.start.min(line.len())..]
        .char_indices()
        .nth(WINDOW)
        .map_or(line.len(), |(i, _)| span.start + i);
    let span_end = span_end.min(shown_end);
    let end = line[span_end..]
        .char_indices()
        .nth(WINDOW)
        .map_or(line.len(), |(i, _)| span_end + i);
    let mut out = String::with_capacity(end - start + 8);
    if start > 0 {
        out.push('…');
    }
    let offset = out.len();
    out.push_str(&line[start..end]);
    if end < line.len() {
        out.push('…');
    }
    (out, span.start - start + offset..span_end - start + offset)
}

/// The byte offset of a 1-based character column in `line` (its end when the column is past
/// it). ASCII lines, the common case, are indexed directly rather than walked.
pub(crate) fn byte_of_column(line: &str, column: u32) -> usize {
    let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    if line.is_ascii() {
        return skip.min(line.len());
    }
    line.char_indices().nth(skip).map_or(line.len(), |(i, _)| i)
}

/// The rendered text of a finding at `pos` with the header's column made true again: the
/// renderer counted it within the window of a long line.
pub(crate) fn true_column(
    rendered: String,
    pos: Option<Pos>,
    lines: &SourceLines<'_>,
    file_name: &str,
) -> String {
    let Some(pos) = pos else { return rendered };
    let Some((line, at)) = lines
        .column_at(pos.line, pos.column)
        .filter(|(l, _)| l.len() > LONG_LINE)
    else {
        return rendered;
    };
    let (window, span) = window(line, at..at);
    let shown = window[..span.start].chars().count() + 1;
    let wrong = format!("{file_name}:{}:{shown}", pos.line);
    let right = format!("{file_name}:{}:{}", pos.line, pos.column);
    rendered.replacen(&wrong, &right, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_the_span_and_marks_the_cuts() {
        let line = format!("{}needle{}", "a".repeat(500), "b".repeat(500));
        let (w, span) = window(&line, 500..506);
        assert_eq!(&w[span.clone()], "needle");
        assert!(w.starts_with('…') && w.ends_with('…'));
        assert_eq!(w.chars().count(), 2 + WINDOW + 6 + WINDOW);
        // At the start and end of the line nothing is cut there.
        let (w, span) = window(&line, 0..1);
        assert!(!w.starts_with('…'));
        assert_eq!(span, 0..1);
        let (w, span) = window(&line, line.len() - 1..line.len());
        assert!(!w.ends_with('…'));
        assert_eq!(&w[span], "b");
        // Multi-byte characters are cut on their boundaries.
        let line = "π".repeat(2000);
        let (w, span) = window(&line, 2000..2002);
        assert_eq!(&w[span], "π");
    }
}

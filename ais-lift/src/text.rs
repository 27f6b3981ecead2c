//! Spans, line:column positions, and the grounding normalization.
//!
//! # The normalization
//!
//! A quote is *verbatim* in a skill when its normalized text is a substring of the skill's
//! normalized text. [`normalize`] is one function applied to both sides, character by
//! character, keeping for every character it emits the source bytes it came from:
//!
//! 1. **Escapes.** A backslash before ASCII punctuation (`\*`, `\_`) is dropped; the punctuation
//!    is kept (and then treated by the rules below like any other character).
//! 2. **Typography.** `‘ ’ ‚ ‛ ′` become `'`; `“ ” „ ‟ ″` become `"`; `– — −` become `-`;
//!    `…` becomes `...`; every Unicode white space (NBSP included) is white space.
//! 3. **Inline decoration.** `*` and `` ` `` are dropped wherever they stand (emphasis, strong,
//!    code spans); `_` is dropped unless it stands between two alphanumeric characters
//!    (`snake_case` keeps its underscore, `_emphasis_` and `__strong__` lose theirs).
//! 4. **Block markers.** At the start of a line, after indentation: any `>` (block quotes),
//!    then one of `#`…`######`, `-`, `*`, `+` or a number of up to nine digits with `.` or `)`
//!    — when followed by white space — is dropped (headings, bullets, list numbers).
//! 5. **White space.** Every run of white space becomes one space; leading and trailing space
//!    is removed.
//!
//! Case, every word, every other punctuation mark and word order are kept: the comparison is
//! verbatim about the words and indifferent to the typography a model drifts on when it copies
//! (`**MUST**`, list numbers, backticks, smart quotes, line breaks). It is not tolerant of
//! paraphrase: one changed, added or dropped word and the quote is not in the skill. Link syntax
//! is not removed: a quote of `[FORMS.md](FORMS.md)` must include the brackets, or quote the
//! text around the link.

use ais_core::Pos;
use serde::{Deserialize, Serialize};

/// A place in the skill's text: a byte range and where it starts and ends as 1-based
/// line:column (columns in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Where it starts.
    pub line: u32,
    /// The column where it starts (1-based, in characters).
    pub column: u32,
    /// The line of its last character.
    pub end_line: u32,
    /// The column just past its last character.
    pub end_column: u32,
}

impl Span {
    /// The span's start as a [`Pos`].
    pub fn pos(&self) -> Pos {
        Pos::new(self.line, self.column)
    }

    /// Whether `other` lies within this span.
    pub fn contains(&self, other: &Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    /// Whether the byte `at` lies within this span.
    pub fn covers(&self, at: usize) -> bool {
        self.start <= at && at < self.end.max(self.start + 1)
    }
}

/// Where each line of a text starts, to turn byte offsets into line:column.
///
/// Columns count characters. So that a position costs the same on a one-megabyte line as on a
/// short one, the index also keeps the number of characters before every 4 KiB mark.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
    /// `(byte, characters before it)`, every `MARK` bytes (at a char boundary).
    marks: Vec<(usize, usize)>,
}

const MARK: usize = 4096;

impl LineIndex {
    /// Indexes `text`'s lines (`\n` ends a line).
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut marks = vec![(0, 0)];
        let (mut next, mut chars) = (MARK, 0);
        for (i, _) in text.char_indices() {
            if i >= next {
                marks.push((i, chars));
                next = i + MARK;
            }
            chars += 1;
        }
        LineIndex { starts, marks }
    }

    /// The number of characters of `text` before byte `at` (a char boundary).
    fn chars_before(&self, text: &str, at: usize) -> usize {
        let k = self.marks.partition_point(|&(b, _)| b <= at) - 1;
        let (b, n) = self.marks[k];
        n + text[b..at].chars().count()
    }

    /// The position of byte `at` of `text` (clamped to the text, and back to a char boundary).
    pub fn pos(&self, text: &str, at: usize) -> Pos {
        let mut at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= at) - 1;
        let column = self.chars_before(text, at) - self.chars_before(text, self.starts[line]) + 1;
        Pos::new(
            u32::try_from(line + 1).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }

    /// The [`Span`] of bytes `start..end` of `text`.
    pub fn span(&self, text: &str, start: usize, end: usize) -> Span {
        let (a, b) = (self.pos(text, start), self.pos(text, end));
        Span {
            start,
            end,
            line: a.line,
            column: a.column,
            end_line: b.line,
            end_column: b.column,
        }
    }
}

/// A normalized text and, for each of its bytes, the source bytes the character came from.
#[derive(Clone, Debug)]
pub struct Normalized {
    /// The normalized text (see the [module docs](self)).
    pub text: String,
    /// For each byte of `text`, the source range of the character that produced it.
    origin: Vec<(usize, usize)>,
}

impl Normalized {
    /// The source byte range that the normalized bytes `start..end` came from.
    pub fn source_range(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        if start >= end || end > self.origin.len() {
            return None;
        }
        Some((self.origin[start].0, self.origin[end - 1].1))
    }
}

fn typographic(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => "\"",
        '\u{2013}' | '\u{2014}' | '\u{2212}' => "-",
        '\u{2026}' => "...",
        _ => return None,
    })
}

/// The length in bytes of a block marker (rule 4) at the start of `rest`, with the white space
/// after it; 0 when none stands there.
fn block_marker(rest: &str) -> usize {
    let mut i = 0;
    let b = rest.as_bytes();
    let mut quoted = false;
    loop {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i < b.len() && b[i] == b'>' {
            i += 1;
            quoted = true;
        } else {
            break;
        }
    }
    let before = i;
    let marker_end = if i < b.len() && b[i] == b'#' {
        let n = b[i..].iter().take_while(|&&c| c == b'#').count();
        (n <= 6).then_some(i + n)
    } else if i < b.len() && matches!(b[i], b'-' | b'*' | b'+') {
        Some(i + 1)
    } else {
        let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        (1..=9)
            .contains(&n)
            .then(|| i + n)
            .filter(|&j| j < b.len() && matches!(b[j], b'.' | b')'))
            .map(|j| j + 1)
    };
    match marker_end {
        Some(j) if j < b.len() && (b[j] == b' ' || b[j] == b'\t') => j + 1,
        Some(j) if j == b.len() || b[j] == b'\n' || b[j] == b'\r' => j,
        _ if quoted => before,
        _ => 0,
    }
}

/// Normalizes `source` by the rules of the [module docs](self).
pub fn normalize(source: &str) -> Normalized {
    let mut text = String::with_capacity(source.len());
    let mut origin = Vec::with_capacity(source.len());
    let mut pending_space: Option<(usize, usize)> = None;
    let mut line_start = true;
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut k = 0;
    let mut emit = |text: &mut String, s: &str, from: (usize, usize), pending: &mut Option<_>| {
        if let Some(space) = pending.take()
            && !text.is_empty()
        {
            text.push(' ');
            origin.push(space);
        }
        text.push_str(s);
        origin.extend(std::iter::repeat_n(from, s.len()));
    };
    while k < chars.len() {
        let (at, c) = chars[k];
        let end = chars.get(k + 1).map_or(source.len(), |&(i, _)| i);
        if line_start {
            line_start = false;
            let skip = block_marker(&source[at..]);
            if skip > 0 {
                pending_space.get_or_insert((at, at + skip));
                while k < chars.len() && chars[k].0 < at + skip {
                    k += 1;
                }
                continue;
            }
        }
        if c == '\n' {
            line_start = true;
        }
        if c.is_whitespace() {
            pending_space.get_or_insert((at, end));
            k += 1;
            continue;
        }
        match c {
            '\\' if chars
                .get(k + 1)
                .is_some_and(|&(_, n)| n.is_ascii_punctuation()) => {}
            '*' | '`' => {}
            '_' => {
                let prev = k.checked_sub(1).map(|p| chars[p].1);
                let next = chars.get(k + 1).map(|&(_, n)| n);
                if prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(char::is_alphanumeric)
                {
                    emit(&mut text, "_", (at, end), &mut pending_space);
                }
            }
            _ => {
                let mut buf = [0; 4];
                let s = typographic(c).unwrap_or_else(|| c.encode_utf8(&mut buf));
                emit(&mut text, s, (at, end), &mut pending_space);
            }
        }
        k += 1;
    }
    Normalized { text, origin }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_rules() {
        let cases = [
            ("**MUST** run `cargo test`", "MUST run cargo test"),
            ("1. Read the   input\n   file.", "Read the input file."),
            ("## Required steps", "Required steps"),
            ("> - quoted item", "quoted item"),
            (
                "use snake_case, not __init__ or _this_",
                "use snake_case, not init or this",
            ),
            (
                "\u{201C}smart\u{201D} \u{2018}quotes\u{2019} \u{2014} dash\u{2026}",
                "\"smart\" 'quotes' - dash...",
            ),
            ("a\u{a0}b", "a b"),
            ("escaped \\*star\\* stays", "escaped star stays"),
            ("2-5 minutes", "2-5 minutes"),
            ("-not a bullet", "-not a bullet"),
            ("1000000000. ten digits", "1000000000. ten digits"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(input).text, want, "{input:?}");
        }
    }

    #[test]
    fn origins_map_back_to_the_source() {
        let src = "x\n- **Always** run it.";
        let n = normalize(src);
        let at = n.text.find("Always run").unwrap();
        let (s, e) = n.source_range(at, at + "Always run".len()).unwrap();
        assert_eq!(&src[s..e], "Always** run");
    }

    #[test]
    fn positions_count_characters() {
        let text = "ab\nçd e";
        let lines = LineIndex::new(text);
        assert_eq!(lines.pos(text, 0), Pos::new(1, 1));
        assert_eq!(lines.pos(text, 3), Pos::new(2, 1));
        assert_eq!(lines.pos(text, 6), Pos::new(2, 3));
        // Past the 4 KiB marks, on a long line of multi-byte characters.
        let long = format!("x\n{}", "é".repeat(10_000));
        let lines = LineIndex::new(&long);
        assert_eq!(lines.pos(&long, long.len()), Pos::new(2, 10_001));
        assert_eq!(lines.pos(&long, 2 + 2 * 5_000), Pos::new(2, 5_001));
    }
}

//! How the writer prints a piece of text so that it reads back as exactly the same text: plain
//! when that is safe, a `|` block for multi-line text, double quotes otherwise.

use super::tree::{is_core_float, is_null_text, resolve_plain};
use crate::value::Value;
use std::fmt::Write as _;

/// The canonical style of a text field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextStyle {
    /// Names, labels and values: plain when it reads back as the same string under the core
    /// schema (so `true`, `12`, `null` are quoted), quoted otherwise.
    Name,
    /// Free text (`doc`, `sig`, `guard`, `reason`): always double-quoted on one line, a `|`
    /// block when it spans lines.
    Prose,
    /// Code (a CODE or tool `body`, a tool's `command`): a `|` block even on one line (§8.1:
    /// "put code in block scalars"), so its quotes and backslashes read as written; quoted
    /// only when no block can hold it.
    Code,
    /// `agir_version`: the reader keeps its text as written, so `0.1` stays plain.
    Version,
}

/// True for a character YAML prints as itself everywhere (printable, and not a line or
/// paragraph separator, NEL or a byte-order mark).
fn safe_char(c: char) -> bool {
    matches!(c,
        ' '..='~'
        | '\u{A0}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
        && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

/// True when `s` may be written as a plain scalar and parse back as the same text.
fn plain_ok(s: &str, flow: bool) -> bool {
    let (Some(first), Some(last)) = (s.chars().next(), s.chars().last()) else {
        return false;
    };
    if first == ' ' || last == ' ' || !s.chars().all(safe_char) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || last == ':' {
        return false;
    }
    if flow && s.chars().any(|c| ",[]{}:".contains(c)) {
        return false;
    }
    true
}

/// True for text another YAML reader (1.1 or 1.2) could take for something other than a string.
fn looks_typed(s: &str) -> bool {
    // Fast path: text starting with a letter that begins none of the typed spellings.
    if s.starts_with(|c: char| c.is_ascii_alphabetic() && !"tTfFnNyYoO".contains(c)) {
        return false;
    }
    if !matches!(resolve_plain(s), Value::Str(_)) || is_core_float(s) {
        return true;
    }
    if matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | "="
            | "<<"
    ) {
        return true;
    }
    // Numbers with `_` or `:` (YAML 1.1 ints, floats and sexagesimals), and out-of-range ints.
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "_:.+-xXoO".contains(c))
}

/// The text written on one line: plain or double-quoted.
pub(crate) fn inline(s: &str, style: TextStyle, flow: bool) -> String {
    let plain = match style {
        TextStyle::Prose | TextStyle::Code => false,
        TextStyle::Name => plain_ok(s, flow) && !looks_typed(s),
        TextStyle::Version => plain_ok(s, flow) && !is_null_text(s),
    };
    if plain { s.to_owned() } else { quoted(s) }
}

/// Double-quoted, with escapes for `"`, `\` and every character that is not safe as itself.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if safe_char(c) => out.push(c),
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08X}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// The header (`|`, `|-` or `|+`) and the content lines of a literal block holding exactly `s`,
/// when a literal block can hold it: it spans lines, holds only safe characters and tabs, its
/// first non-empty line does not start with white space, and no line is only white space.
pub(crate) fn block_ok(s: &str) -> Option<(&'static str, Vec<&str>)> {
    if !s.contains('\n') || !s.chars().all(|c| c == '\n' || c == '\t' || safe_char(c)) {
        return None;
    }
    let content = s.trim_end_matches('\n');
    let trailing = s.len() - content.len();
    let lines: Vec<&str> = content.split('\n').collect();
    let first = lines.iter().find(|l| !l.is_empty())?;
    if first.starts_with([' ', '\t']) {
        return None;
    }
    if lines
        .iter()
        .any(|l| !l.is_empty() && l.chars().all(|c| c == ' ' || c == '\t'))
    {
        return None;
    }
    let header = match trailing {
        0 => "|-",
        1 => "|",
        _ => "|+",
    };
    let mut all = lines;
    all.extend(std::iter::repeat_n("", trailing.saturating_sub(1)));
    Some((header, all))
}

/// [`block_ok`], and for code also one line (`|-`): text with no line break, starting with no
/// white space, holding only safe characters and tabs.
pub(crate) fn block_for(s: &str, style: TextStyle) -> Option<(&'static str, Vec<&str>)> {
    if style == TextStyle::Code
        && !s.contains('\n')
        && !s.is_empty()
        && !s.starts_with([' ', '\t'])
        && !s.chars().all(|c| c == ' ' || c == '\t')
        && s.chars().all(|c| c == '\t' || safe_char(c))
    {
        return Some(("|-", vec![s]));
    }
    block_ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_only_when_they_read_back_as_the_same_string() {
        for s in [
            "task",
            "note-writer",
            "Write a short note to a file.",
            "ACT·artifact",
            "a:b",
        ] {
            assert_eq!(inline(s, TextStyle::Name, false), s);
        }
        for s in [
            "", "true", "null", "~", "12", "0.1", "1e3", "yes", "-x", " a", "a ", "a: b", "a #b",
            "#a", "a:", "[x]", "{x", "'a", "\"a", "*a", "&a", "!a", "|", ">", "%a", "@a", "`a",
            "1_000", "12:30", ".inf", "a\nb", "a\tb", "\u{2028}",
        ] {
            assert!(inline(s, TextStyle::Name, false).starts_with('"'), "{s:?}");
        }
        assert_eq!(inline("a:b", TextStyle::Name, true), "\"a:b\"");
        assert_eq!(inline("a,b", TextStyle::Name, true), "\"a,b\"");
        assert_eq!(inline("0.1", TextStyle::Version, false), "0.1");
        assert_eq!(inline("x", TextStyle::Prose, false), "\"x\"");
        assert_eq!(
            quoted("a\"\\\u{1}\u{10FFFE}é"),
            "\"a\\\"\\\\\\u0001\u{10FFFE}é\""
        );
    }

    #[test]
    fn blocks_pick_the_chomping_that_keeps_the_text() {
        assert_eq!(block_ok("a\nb"), Some(("|-", vec!["a", "b"])));
        assert_eq!(block_ok("a\nb\n"), Some(("|", vec!["a", "b"])));
        assert_eq!(block_ok("a\n\n"), Some(("|+", vec!["a", ""])));
        assert_eq!(block_ok("\na\n  b"), Some(("|-", vec!["", "a", "  b"])));
        assert_eq!(block_ok("one line"), None);
        assert_eq!(block_ok(" a\nb"), None);
        assert_eq!(block_ok("a\n  \nb"), None);
        assert_eq!(block_ok("a\r\nb"), None);
        assert_eq!(block_ok("\n\n"), None);
    }
}

//! The text-level steps before YAML parsing: the optional Markdown code fence (§8.1), and the
//! relaxations of strict YAML that authored documents commonly contain (§8.1, MAY).
//!
//! Relaxations are applied only where strict parsing failed, one line at a time, and each is
//! recorded. They never add or remove lines, and a [`ColumnMap`] maps every column of a relaxed
//! line back to the original text, so positions stay true. There are three, applied identically
//! to every section by the one reader:
//!
//! 1. a flow collection glued to its key (`drafted_note:{ type: str }`) gets its space back;
//! 2. a plain scalar holding flow indicators inside a flow mapping (`{ type: list[str] }`) is
//!    quoted;
//! 3. a plain block-mapping value holding `: ` (`doc: Title : <title>`) is quoted.

use crate::source::Pos;
use std::collections::HashMap;

/// Maps positions in the relaxed text back to the original text.
#[derive(Clone, Debug, Default)]
pub(crate) struct ColumnMap {
    /// For each relaxed line (1-based): the original 0-based column of each character of the
    /// relaxed line, and the original line's length in characters.
    lines: HashMap<usize, (Vec<usize>, usize)>,
}

impl ColumnMap {
    /// The original position of a 1-based line and a 0-based character column of the relaxed text.
    pub fn pos(&self, line: usize, col0: usize) -> Pos {
        let orig = match self.lines.get(&line) {
            None => col0,
            Some((cols, orig_len)) => match cols.get(col0) {
                Some(c) => *c,
                None => orig_len + (col0 - cols.len()),
            },
        };
        Pos::new(to_u32(line), to_u32(orig.saturating_add(1)))
    }

    /// The original column (0-based) of a column of the current text of a line.
    fn orig_col(&self, line: usize, col0: usize) -> usize {
        self.pos(line, col0).column as usize - 1
    }

    fn record(&mut self, line: usize, new_cols: Vec<usize>, current_len: usize) {
        // `new_cols` maps relaxed columns to columns of the current text; compose with what the
        // line already had.
        let (composed, orig_len) = match self.lines.get(&line) {
            None => (new_cols, current_len),
            Some((cols, orig_len)) => (
                new_cols
                    .iter()
                    .map(|c| match cols.get(*c) {
                        Some(o) => *o,
                        None => orig_len + (c - cols.len()),
                    })
                    .collect(),
                *orig_len,
            ),
        };
        self.lines.insert(line, (composed, orig_len));
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Blanks a Markdown code fence around the whole document (the opening ```` ```yaml ```` line
/// and a closing ```` ``` ```` line), keeping every line where it was.
pub(crate) fn strip_fence(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    if !first.trim_start().starts_with("```") {
        return None;
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if let Some(l) = lines.first_mut() {
        *l = "";
    }
    if let Some(last) = lines.iter_mut().rev().find(|l| !l.trim().is_empty())
        && last.trim() == "```"
    {
        *last = "";
    }
    Some(lines.join("\n"))
}

/// One relaxation to apply to a line.
struct Edit {
    /// The new line.
    line: String,
    /// For each character of the new line, its column in the old line.
    cols: Vec<usize>,
    /// Where (0-based column of the old line) and what, for each change on the line.
    changes: Vec<(usize, String)>,
}

/// Builds a relaxed line while remembering where each character came from.
struct LineBuilder {
    out: String,
    cols: Vec<usize>,
}

impl LineBuilder {
    fn new() -> Self {
        LineBuilder {
            out: String::new(),
            cols: Vec::new(),
        }
    }
    fn push(&mut self, c: char, from: usize) {
        self.out.push(c);
        self.cols.push(from);
    }
    fn push_quoted(&mut self, chars: &[char], from: usize) {
        self.push('"', from);
        for (i, c) in chars.iter().enumerate() {
            if matches!(c, '"' | '\\') {
                self.push('\\', from + i);
            }
            self.push(*c, from + i);
        }
        self.push('"', from + chars.len().saturating_sub(1));
    }
}

/// Tries the relaxations on one line, in order; the first that applies wins.
fn relax_line(line: &str) -> Option<Edit> {
    let chars: Vec<char> = line.chars().collect();
    glued_flow(&chars)
        .or_else(|| flow_indicators_in_flow_map(&chars))
        .or_else(|| colon_in_plain_value(&chars))
}

/// The start of a line's content after indentation and `- ` sequence markers.
fn content_start(chars: &[char]) -> usize {
    let mut i = 0;
    loop {
        while chars.get(i) == Some(&' ') {
            i += 1;
        }
        if chars.get(i) == Some(&'-') && chars.get(i + 1) == Some(&' ') {
            i += 2;
        } else {
            return i;
        }
    }
}

/// A plain key (no spaces, quotes or flow indicators) from `start`; returns the index of the
/// character after it.
fn plain_key_end(chars: &[char], start: usize) -> Option<usize> {
    let first = *chars.get(start)?;
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) || first.is_whitespace() {
        return None;
    }
    let mut i = start;
    while let Some(&c) = chars.get(i) {
        if c == ':' || c.is_whitespace() || "[]{}\"'#,".contains(c) {
            break;
        }
        i += 1;
    }
    Some(i)
}

/// Relaxation 1: `key:{ … }` or `key:[ … ]` → `key: { … }`.
fn glued_flow(chars: &[char]) -> Option<Edit> {
    let start = content_start(chars);
    let end = plain_key_end(chars, start)?;
    if chars.get(end) != Some(&':') || !matches!(chars.get(end + 1), Some('{' | '[')) {
        return None;
    }
    let mut b = LineBuilder::new();
    for (i, c) in chars.iter().enumerate() {
        if i == end + 1 {
            b.push(' ', i);
        }
        b.push(*c, i);
    }
    let key: String = chars[start..end].iter().collect();
    Some(Edit {
        line: b.out,
        cols: b.cols,
        changes: vec![(
            end,
            format!(
                "added the missing space after `{key}:`, whose flow collection was glued to it"
            ),
        )],
    })
}

/// Relaxation 2: inside a flow mapping, a plain value holding `[`/`]` (`list[str]`,
/// `dict[str, int]`) is quoted.
fn flow_indicators_in_flow_map(chars: &[char]) -> Option<Edit> {
    let mut b = LineBuilder::new();
    let mut changes = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            b.push(c, i);
            i += 1;
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '#' if i == 0 || chars.get(i - 1) == Some(&' ') => {
                // A comment: the rest of the line is kept as it is.
                for (j, c) in chars.iter().enumerate().skip(i) {
                    b.push(*c, j);
                }
                break;
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ':' if depth > 0 && matches!(chars.get(i + 1), Some(' ')) => {
                b.push(':', i);
                let mut j = i + 1;
                while chars.get(j) == Some(&' ') {
                    b.push(' ', j);
                    j += 1;
                }
                let start = j;
                if chars
                    .get(start)
                    .is_some_and(|c| !"\"'[{,}#&*!|>".contains(*c))
                {
                    let mut brackets = 0usize;
                    let mut end = start;
                    let mut has_bracket = false;
                    while let Some(&v) = chars.get(end) {
                        match v {
                            '[' => {
                                brackets += 1;
                                has_bracket = true;
                            }
                            ']' => {
                                brackets = brackets.saturating_sub(1);
                                has_bracket = true;
                            }
                            ',' | '}' if brackets == 0 => break,
                            _ => {}
                        }
                        end += 1;
                    }
                    let mut value_end = end;
                    while value_end > start && chars.get(value_end - 1) == Some(&' ') {
                        value_end -= 1;
                    }
                    if has_bracket {
                        let value = &chars[start..value_end];
                        b.push_quoted(value, start);
                        for (k, c) in chars.iter().enumerate().take(end).skip(value_end) {
                            b.push(*c, k);
                        }
                        let text: String = value.iter().collect();
                        changes.push((
                            start,
                            format!(
                                "quoted the plain scalar `{text}`, whose brackets are flow \
                                 indicators inside a flow mapping"
                            ),
                        ));
                        i = end;
                        continue;
                    }
                }
                i = j;
                continue;
            }
            _ => {}
        }
        b.push(c, i);
        i += 1;
    }
    (!changes.is_empty()).then_some(Edit {
        line: b.out,
        cols: b.cols,
        changes,
    })
}

/// Relaxation 3: a plain block-mapping value holding `: ` (`doc: Title : <title>`) is quoted.
fn colon_in_plain_value(chars: &[char]) -> Option<Edit> {
    let start = content_start(chars);
    let key_end = plain_key_end(chars, start)?;
    if chars.get(key_end) != Some(&':') || chars.get(key_end + 1) != Some(&' ') {
        return None;
    }
    let mut v = key_end + 1;
    while chars.get(v) == Some(&' ') {
        v += 1;
    }
    let first = *chars.get(v)?;
    if "\"'[{|>&*!#%@`".contains(first) {
        return None;
    }
    // The value runs to a comment (` #`) or the end of the line.
    let mut end = chars.len();
    for k in v..chars.len() {
        if chars[k] == '#' && k > 0 && chars.get(k - 1).is_some_and(|c| c.is_whitespace()) {
            end = k;
            break;
        }
    }
    while end > v && chars.get(end - 1).is_some_and(|c| c.is_whitespace()) {
        end -= 1;
    }
    let value = &chars[v..end];
    let holds_colon = value
        .windows(2)
        .any(|w| w[0] == ':' && w[1].is_whitespace())
        || value.last() == Some(&':');
    if !holds_colon {
        return None;
    }
    let mut b = LineBuilder::new();
    for (k, c) in chars.iter().enumerate().take(v) {
        b.push(*c, k);
    }
    b.push_quoted(value, v);
    for (k, c) in chars.iter().enumerate().skip(end) {
        b.push(*c, k);
    }
    let text: String = value.iter().collect();
    Some(Edit {
        line: b.out,
        cols: b.cols,
        changes: vec![(
            v,
            format!("quoted the plain scalar `{text}`, which holds `: `"),
        )],
    })
}

/// A text being relaxed: its lines (split only once a relaxation is needed), and where each
/// column came from.
#[derive(Default)]
pub(crate) struct Relaxer {
    lines: Vec<String>,
    /// The column map for the current text.
    pub map: ColumnMap,
}

impl Relaxer {
    /// The current text.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// Applies a relaxation to the line where parsing failed (1-based), or to the line before
    /// it. Returns the positions (in the original text) and descriptions of what was changed,
    /// or `None` when no relaxation applies there.
    /// `text` is the text as first given; it is split into lines on the first relaxation.
    pub fn relax_near(&mut self, text: &str, line: usize) -> Option<Vec<(Pos, String)>> {
        self.relax_lines(text, &[line, line.saturating_sub(1)])
    }

    /// Applies a relaxation to exactly this line (1-based), if one applies there.
    pub fn relax_at(&mut self, text: &str, line: usize) -> Option<Vec<(Pos, String)>> {
        self.relax_lines(text, &[line])
    }

    fn relax_lines(&mut self, text: &str, candidates: &[usize]) -> Option<Vec<(Pos, String)>> {
        if self.lines.is_empty() {
            self.lines = text.split('\n').map(str::to_owned).collect();
        }
        for &l in candidates {
            let Some(idx) = l.checked_sub(1) else {
                continue;
            };
            let Some(current) = self.lines.get(idx) else {
                continue;
            };
            let (body, cr) = match current.strip_suffix('\r') {
                Some(b) => (b, true),
                None => (current.as_str(), false),
            };
            let Some(edit) = relax_line(body) else {
                continue;
            };
            let current_len = current.chars().count();
            let mut cols = edit.cols;
            let mut new_line = edit.line;
            if cr {
                new_line.push('\r');
                cols.push(current_len - 1);
            }
            let changes = edit
                .changes
                .into_iter()
                .map(|(col, what)| {
                    (
                        Pos::new(to_u32(l), to_u32(self.map.orig_col(l, col) + 1)),
                        what,
                    )
                })
                .collect();
            self.map.record(l, cols, current_len);
            if let Some(slot) = self.lines.get_mut(idx) {
                *slot = new_line;
            }
            return Some(changes);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relaxed(line: &str) -> Option<String> {
        relax_line(line).map(|e| e.line)
    }

    #[test]
    fn each_relaxation_fixes_its_construct() {
        assert_eq!(
            relaxed("    drafted_note:{ type: str, produced_by: draft }").as_deref(),
            Some("    drafted_note: { type: str, produced_by: draft }")
        );
        assert_eq!(
            relaxed("    c: { type: list[str], produced_by: extract }").as_deref(),
            Some("    c: { type: \"list[str]\", produced_by: extract }")
        );
        assert_eq!(
            relaxed("  x: {type: dict[str, int], doc: 'a: b'}").as_deref(),
            Some("  x: {type: \"dict[str, int]\", doc: 'a: b'}")
        );
        assert_eq!(
            relaxed("    doc: Title : <title>  # note").as_deref(),
            Some("    doc: \"Title : <title>\"  # note")
        );
        assert_eq!(relaxed("    doc: \"Title : <title>\""), None);
        assert_eq!(relaxed("    reads: [task]"), None);
        assert_eq!(relaxed("  - {from: a, to: b}"), None);
    }

    #[test]
    fn columns_map_back_to_the_original_line() {
        let mut r = Relaxer::default();
        let changes = r
            .relax_near("a: 1\n  x: {t: list[str], u: v}\n", 2)
            .unwrap();
        assert_eq!(changes[0].0, Pos::new(2, 10));
        assert_eq!(r.text(), "a: 1\n  x: {t: \"list[str]\", u: v}\n");
        // `u` stands at 0-based column 22 of the relaxed line, and at column 21 (1-based) of
        // the original.
        assert_eq!(r.map.pos(2, 22), Pos::new(2, 21));
        assert_eq!(r.map.pos(1, 0), Pos::new(1, 1));
    }

    #[test]
    fn a_fence_is_blanked_in_place() {
        assert_eq!(
            strip_fence("```yaml\na: 1\n```\n").as_deref(),
            Some("\na: 1\n\n")
        );
        assert_eq!(strip_fence("a: 1\n"), None);
    }
}

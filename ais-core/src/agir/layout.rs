//! What canonical writing alone would lose: comments, and the text of sections the reader does
//! not know. [`write_keeping`] writes a program canonically and puts them back.
//!
//! - **Comments** are attached to the element they precede (an own-line comment: the first
//!   element, field or list entry that starts after it) or trail (a comment after content on
//!   its line: the first element that starts on that line before it). In the canonical text,
//!   a preceding comment goes on its own line(s) just above that element's line, indented as
//!   that line; a trailing one goes at the end of that element's line. A comment after the
//!   last element goes at the end.
//! - **Unknown top-level sections** (kept in [`Program::extra`]) are written as they were
//!   written — anchors, aliases, tags, `.inf`, big integers, comments and all — when each
//!   was a block entry at the start of a line and the text needed no relaxation; otherwise they
//!   are written canonically from their values.
//!
//! The result is always read back (within the caller's limits) and compared with the program; if it does not read back to
//! the same program, the unknown sections are written canonically instead, and if that fails
//! too, [`write_keeping`] fails and nothing should be written.

use super::tree::{RawComment, TopEntry};
use super::{Document, Limits, ReadError};
use crate::model::Program;
use crate::source::{Locus, Pos, SourceMap};

/// A comment of the source text.
#[derive(Clone, Debug, PartialEq)]
pub struct Comment {
    /// Where its `#` stands.
    pub pos: Pos,
    /// Its text after `#`, as written.
    pub text: String,
    /// True when it trails content on its line (`reads: [a] # why`); false for a comment on a
    /// line of its own.
    pub trailing: bool,
    /// True when it stands inside an unknown section kept verbatim (it travels with that text).
    in_verbatim: bool,
    /// True when the next line of content is a bare `key:` line (whose value starts on a later
    /// line, where the element's position is recorded).
    before_bare_key: bool,
}

/// How the source text was laid out beyond what the program holds: its comments and the
/// verbatim text of its unknown top-level sections.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    comments: Vec<Comment>,
    /// For each unknown top-level section, in order: its key and its text as written (ending
    /// with a line break). Empty when any of them could not be kept verbatim.
    verbatim: Vec<(String, String)>,
}

impl Layout {
    /// The comments, in source order.
    pub fn comments(&self) -> &[Comment] {
        &self.comments
    }

    /// The unknown top-level sections kept as written: key and text, in order.
    pub fn verbatim_sections(&self) -> &[(String, String)] {
        &self.verbatim
    }

    /// Builds the layout from what the tree builder saw. `text` is the text that was parsed
    /// (byte offsets refer to it); `exact` is false when it is a relaxed copy of the source, in
    /// which case no section is kept verbatim.
    pub(crate) fn new(
        text: &str,
        exact: bool,
        comments: Vec<RawComment>,
        top: &[TopEntry],
        body: Option<usize>,
        program: &Program,
    ) -> Layout {
        let verbatim = if exact {
            verbatim_sections(text, top, body, program)
        } else {
            Vec::new()
        };
        let spans: Vec<(usize, usize)> = if verbatim.is_empty() {
            Vec::new()
        } else {
            top.iter()
                .filter(|t| Some(t.doc) == body && program.extra.iter().any(|(k, _)| *k == t.key))
                .filter_map(|t| t.bytes)
                .map(|(start, end)| (start, line_end(text, end)))
                .collect()
        };
        let lines: Vec<&str> = text.lines().collect();
        let bare_key_next = |line: u32| {
            lines
                .iter()
                .skip(line as usize)
                .map(|l| l.trim())
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .is_some_and(|l| l.ends_with(':') && !l.starts_with("- "))
        };
        let comments = comments
            .into_iter()
            .map(|c| Comment {
                before_bare_key: !c.trailing && bare_key_next(c.pos.line),
                in_verbatim: c
                    .bytes
                    .is_some_and(|(start, _)| spans.iter().any(|(s, e)| (*s..*e).contains(&start))),
                pos: c.pos,
                text: c.text,
                trailing: c.trailing,
            })
            .collect();
        Layout { comments, verbatim }
    }
}

/// The byte just past the line break that ends the line holding byte `at` (or the text's end).
fn line_end(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|rest| rest.find('\n'))
        .map_or(text.len(), |i| at + i + 1)
}

/// The verbatim text of every unknown top-level section of the body, or nothing when any of
/// them cannot be cut out cleanly (all or none, so their order survives).
fn verbatim_sections(
    text: &str,
    top: &[TopEntry],
    body: Option<usize>,
    program: &Program,
) -> Vec<(String, String)> {
    if program.extra.is_empty()
        || program
            .extra
            .iter()
            .any(|(k, _)| k == "name" || k == "description")
    {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(program.extra.len());
    for (key, _) in &program.extra {
        let Some(entry) = top.iter().find(|t| Some(t.doc) == body && t.key == *key) else {
            return Vec::new();
        };
        let Some((start, end)) = entry.bytes else {
            return Vec::new();
        };
        let at_line_start = start == 0 || text.as_bytes().get(start - 1) == Some(&b'\n');
        let end = line_end(text, end);
        match text.get(start..end) {
            Some(raw) if at_line_start && start < end => {
                let mut raw = raw.to_owned();
                if !raw.ends_with('\n') {
                    raw.push('\n');
                }
                out.push((key.clone(), raw));
            }
            _ => return Vec::new(),
        }
    }
    out
}

/// Writes `program` as canonical AG-IR with the comments and unknown sections of `like` (the
/// document it was read as, or derived from) put back; see the module docs. The program may
/// differ from `like.program` (a repaired copy): comments stay with the elements they were
/// attached to, found by their place in the program (`nodes[3].reads`), not by their text.
///
/// The text is what a reader with `limits` accepts: it fails when the text would be larger
/// than `limits.max_bytes` (a program read near the limit can grow past it when written
/// canonically), and when it does not read back to `program`. Write nothing then.
pub fn write_keeping(
    program: &Program,
    like: &Document,
    limits: &Limits,
) -> Result<String, ReadError> {
    let keep_sections = !like.layout.verbatim.is_empty() && like.program.extra == program.extra;
    let mut attempts = vec![keep_sections];
    if keep_sections {
        attempts.push(false);
    }
    for verbatim in attempts {
        let Some(text) = compose(program, like, verbatim, limits) else {
            continue;
        };
        if text.len() > limits.max_bytes {
            return Err(ReadError {
                message: format!(
                    "the text would be {} bytes, more than the {} bytes the reader accepts",
                    text.len(),
                    limits.max_bytes
                ),
                pos: None,
                help: Some(
                    "split the module into smaller programs joined by CALL; nothing was written"
                        .to_owned(),
                ),
            });
        }
        if super::read_with_limits(&text, limits).is_ok_and(|d| d.program == *program) {
            return Ok(text);
        }
    }
    Err(ReadError {
        message: "the canonical form with the comments put back does not read back to the \
                  same program"
            .to_owned(),
        pos: None,
        help: Some(
            "this is a bug in ais; please report it with the file attached. Nothing was written"
                .to_owned(),
        ),
    })
}

/// The canonical text, the verbatim sections (when `verbatim`) and the comments.
fn compose(program: &Program, like: &Document, verbatim: bool, limits: &Limits) -> Option<String> {
    let mut text = if verbatim {
        let mut p = program.clone();
        p.extra.clear();
        let mut base = super::write(&p);
        if base.ends_with("{}\n") {
            base.truncate(base.len() - 3);
        }
        for (_, raw) in &like.layout.verbatim {
            base.push_str(raw);
        }
        base
    } else {
        super::write(program)
    };
    let comments: Vec<&Comment> = like
        .layout
        .comments
        .iter()
        .filter(|c| !(verbatim && c.in_verbatim))
        .collect();
    if comments.is_empty() || text.len() > limits.max_bytes {
        return Some(text);
    }
    let canonical = super::read_with_limits(&text, limits).ok()?;
    text = place_comments(&text, &comments, &like.source_map, &canonical.source_map);
    Some(text)
}

/// How coarse a locus is: an element before its fields, a field before its entries.
fn depth(l: &Locus) -> u8 {
    match (&l.field, l.index) {
        (None, _) => 0,
        (Some(_), None) => 1,
        (Some(_), Some(_)) => 2,
    }
}

/// For each line, the index of the block scalar header (`doc: |`) whose content it is, if any:
/// a comment must never land inside a block scalar's text, so one aimed there goes to the
/// header's line instead. (A block scalar's position is recorded where its text starts.)
pub(crate) fn block_headers(lines: &[&str]) -> Vec<Option<usize>> {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let mut out = vec![None; lines.len()];
    let mut open: Option<(usize, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let blank = line.trim().is_empty();
        if let Some((header, at)) = open {
            if blank || indent(line) > at {
                out[i] = Some(header);
                continue;
            }
            open = None;
        }
        let t = line.trim_end();
        let token = t.rsplit(' ').next().unwrap_or("");
        let is_header = token.len() < t.len()
            && token.starts_with(['|', '>'])
            && token[1..]
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
            && (t[..t.len() - token.len()].ends_with(": ")
                || t[..t.len() - token.len()].trim_start() == "- ");
        if is_header {
            open = Some((i, indent(line)));
        }
    }
    out
}

/// True for a line holding only a mapping key (`walker:`), its value on the lines after it.
fn is_bare_key(line: &str) -> bool {
    let t = line.trim();
    t.ends_with(':') && !t.starts_with('#') && !t.starts_with("- ")
}

/// Puts each comment above (or at the end of) the canonical line of the element it belongs to.
fn place_comments(
    text: &str,
    comments: &[&Comment],
    source: &SourceMap,
    canonical: &SourceMap,
) -> String {
    let mut anchors: Vec<(Pos, u8, &Locus)> =
        source.iter().map(|(l, p)| (p, depth(l), l)).collect();
    anchors.sort_by_key(|(p, d, _)| (*p, *d));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut above: Vec<Vec<&str>> = vec![Vec::new(); lines.len()];
    let mut after: Vec<Vec<&str>> = vec![Vec::new(); lines.len()];
    let mut at_end: Vec<&str> = Vec::new();
    let headers = block_headers(&lines);
    for c in comments {
        let line_of = |l: &Locus| {
            canonical
                .lookup(l)
                .map(|p| p.line as usize)
                .filter(|n| (1..=lines.len()).contains(n))
                .map(|n| headers[n - 1].map_or(n, |h| h + 1))
        };
        let on_its_line = c
            .trailing
            .then(|| {
                anchors
                    .iter()
                    .find(|(p, _, _)| p.line == c.pos.line && p.column < c.pos.column)
                    .and_then(|(_, _, l)| line_of(l))
            })
            .flatten();
        if let Some(n) = on_its_line {
            after[n - 1].push(&c.text);
            continue;
        }
        let next = anchors
            .iter()
            .find(|(p, _, _)| p.line > c.pos.line)
            .and_then(|(_, _, l)| line_of(l));
        match next {
            // `# about walker` above `walker:`: the element's position is on the line after
            // the key, so the comment goes above the key's line.
            Some(n) if c.before_bare_key && n >= 2 && is_bare_key(lines[n - 2]) => {
                above[n - 2].push(&c.text)
            }
            Some(n) => above[n - 1].push(&c.text),
            None => at_end.push(&c.text),
        }
    }
    let mut out = String::with_capacity(text.len() + comments.len() * 40);
    for (i, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        for c in &above[i] {
            out.push_str(&line[..indent]);
            out.push('#');
            out.push_str(c);
            out.push('\n');
        }
        if after[i].is_empty() {
            out.push_str(line);
        } else {
            let body = line.strip_suffix('\n').unwrap_or(line);
            out.push_str(body);
            for c in &after[i] {
                out.push_str(" #");
                out.push_str(c);
            }
            out.push('\n');
        }
    }
    for c in at_end {
        out.push('#');
        out.push_str(c);
        out.push('\n');
    }
    out
}

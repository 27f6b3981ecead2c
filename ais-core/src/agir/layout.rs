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
//! - **Unknown fields of elements** (each element's `extra`) likewise, in place of their
//!   canonical form and moved to its indentation, when the field and its canonical form are
//!   both block entries starting their line (an edge is canonically a flow mapping, so its
//!   unknown fields are written canonically). The comments inside such a field and just above
//!   it travel with it.
//!
//! The result is always read back (within the caller's limits) and compared with the program; if it does not read back to
//! the same program, the unknown element fields, then the unknown sections too, are written
//! canonically instead, and if that fails too, [`write_keeping`] fails and nothing should be
//! written.

use super::tree::{EntrySpan, RawComment, TopEntry};
use super::{Document, Limits, ReadError};
use crate::program::{Extras, Program, TypeKind};
use crate::source::{Element, Locus, Pos, SourceMap};
use std::collections::HashMap;

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
    /// The unknown element field (an index into [`Layout::fields`]) it stands inside, if any:
    /// it travels with that field's text when the field is kept as written.
    in_field: Option<usize>,
    /// The unknown element field whose key line comes next after it (an own-line comment
    /// only): it goes just above that field when the field is kept as written.
    above_field: Option<usize>,
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
    /// The unknown fields of elements (an instruction's, a carry's, a tool's, the
    /// frontmatter's, …) that can be kept as written: block entries whose key starts its line.
    fields: Vec<KeptField>,
}

/// An unknown field of an element as written: `x_review:` and its value's lines.
#[derive(Clone, Debug, PartialEq)]
struct KeptField {
    /// The element and field.
    locus: Locus,
    /// Its byte range in the parsed text: the key's start to the end of the value's last line,
    /// line break included.
    bytes: (usize, usize),
    /// The key's column: the spaces before it on its line.
    indent: usize,
    /// The key's line (1-based).
    line: usize,
    /// The text of that range.
    raw: String,
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
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        text: &str,
        exact: bool,
        comments: Vec<RawComment>,
        top: &[TopEntry],
        entries: &[EntrySpan],
        body: Option<usize>,
        program: &Program,
        source_map: &SourceMap,
    ) -> Layout {
        let (verbatim, fields) = if exact {
            (
                verbatim_sections(text, top, body, program),
                kept_fields(text, entries, program, source_map),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let spans: Vec<(usize, usize)> = if verbatim.is_empty() {
            Vec::new()
        } else {
            top.iter()
                .filter(|t| Some(t.doc) == body && program.extra.iter().any(|(k, _)| *k == t.key))
                .filter_map(|t| t.bytes)
                .map(|(start, end)| (start, entry_end(text, end)))
                .collect()
        };
        let lines: Vec<&str> = text.lines().collect();
        // The next line of content after a line (1-based number and text).
        let next_content = |line: u32| {
            lines
                .iter()
                .enumerate()
                .skip(line as usize)
                .map(|(i, l)| (i + 1, l.trim()))
                .find(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        };
        let comments = comments
            .into_iter()
            .map(|c| {
                // What an own-line comment stands above.
                let next = if c.trailing {
                    None
                } else {
                    next_content(c.pos.line)
                };
                Comment {
                    before_bare_key: next.is_some_and(|(_, l)| is_bare_key(l)),
                    above_field: next.and_then(|(n, _)| fields.iter().position(|f| f.line == n)),
                    in_verbatim: c.bytes.is_some_and(|(start, _)| {
                        spans.iter().any(|(s, e)| (*s..*e).contains(&start))
                    }),
                    in_field: c.bytes.and_then(|(start, _)| {
                        fields
                            .iter()
                            .position(|f| (f.bytes.0..f.bytes.1).contains(&start))
                    }),
                    pos: c.pos,
                    text: c.text,
                    trailing: c.trailing,
                }
            })
            .collect();
        Layout {
            comments,
            verbatim,
            fields,
        }
    }
}

/// Every unknown field of an element of the program, as a locus (in the order the reader
/// records them: `autonomy.x` and `concurrency.x` on their instruction).
fn unknown_fields(p: &Program) -> Vec<Locus> {
    let mut out = Vec::new();
    let mut add = |el: Element, prefix: &str, extra: &Extras| {
        for (key, _) in extra {
            out.push(Locus::field(el, format!("{prefix}{key}").as_str()));
        }
    };
    add(Element::Frontmatter, "", &p.frontmatter_extra);
    for (i, t) in p.types.iter().flatten().enumerate() {
        add(Element::Type(i), "", &t.extra);
        if let TypeKind::Object(fields) = &t.kind {
            for (j, f) in fields.iter().enumerate() {
                add(Element::TypeField(i, j), "", &f.extra);
            }
        }
    }
    for (i, k) in p.knowledge.iter().flatten().enumerate() {
        add(Element::Knowledge(i), "", &k.extra);
    }
    for (i, t) in p.tools.iter().flatten().enumerate() {
        add(Element::Tool(i), "", &t.extra);
    }
    if let Some(w) = &p.walker {
        add(Element::Walker, "", &w.extra);
        for (i, c) in w.carries.iter().flatten().enumerate() {
            add(Element::Carry(i), "", &c.extra);
        }
    }
    for (i, ins) in p.nodes.iter().flatten().enumerate() {
        let el = Element::Instruction(i);
        add(el, "", &ins.extra);
        if let Some(a) = &ins.autonomy {
            add(el, "autonomy.", &a.extra);
        }
        if let Some(c) = &ins.concurrency {
            add(el, "concurrency.", &c.extra);
        }
    }
    for (i, e) in p.edges.iter().flatten().enumerate() {
        add(Element::Edge(i), "", &e.extra);
    }
    if let Some(c) = &p.concurrency {
        add(Element::Concurrency, "", &c.extra);
    }
    if let Some(f) = &p.faithfulness {
        add(Element::Faithfulness, "", &f.extra);
        for (i, o) in f.obligation_list().iter().enumerate() {
            add(Element::Obligation(i), "", &o.extra);
        }
        for (i, d) in f.deviation_list().iter().enumerate() {
            add(Element::AcceptedDeviation(i), "", &d.extra);
        }
    }
    out
}

/// The unknown element fields that can be kept as written: block entries whose key is the
/// first thing on its line, every later line of whose value is indented at least as far (so
/// the text can be moved to another indentation by whole columns).
fn kept_fields(
    text: &str,
    entries: &[EntrySpan],
    program: &Program,
    source_map: &SourceMap,
) -> Vec<KeptField> {
    let loci = unknown_fields(program);
    if loci.is_empty() {
        return Vec::new();
    }
    // By the value's position; a position two entries share finds neither.
    let mut by_pos: HashMap<Pos, Option<(usize, usize)>> = HashMap::new();
    for e in entries {
        by_pos
            .entry(e.value_pos)
            .and_modify(|b| *b = None)
            .or_insert(e.bytes());
    }
    let mut out = Vec::new();
    for locus in loci {
        let Some(Some((start, end))) = source_map.lookup(&locus).and_then(|p| by_pos.get(&p))
        else {
            continue;
        };
        let (start, value_end, end) = (*start, *end, entry_end(text, *end));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let (Some(raw), Some(after)) = (text.get(start..end), text.get(value_end.min(end)..end))
        else {
            continue;
        };
        let indent = start - line_start;
        // The key starts its line, and nothing but a comment follows the value on its last
        // line (not the `,` of a flow mapping written over several lines).
        let at_line_start = text[line_start..start].bytes().all(|b| b == b' ')
            && (after.trim().is_empty() || after.trim_start().starts_with('#'));
        let movable = raw
            .split_inclusive('\n')
            .skip(1)
            .all(|l| l.trim().is_empty() || l.bytes().take(indent).all(|b| b == b' '));
        if at_line_start && movable {
            let mut raw = raw.to_owned();
            if !raw.ends_with('\n') {
                raw.push('\n');
            }
            out.push(KeptField {
                locus,
                bytes: (start, end),
                indent,
                line: text[..start].bytes().filter(|b| *b == b'\n').count() + 1,
                raw,
            });
        }
    }
    out
}

/// `raw` (a field's text whose key stood at column `from`) moved to column `to`: every line
/// after the first shifted by the difference; a blank line short of `from` left empty.
fn reindent(raw: &str, from: usize, to: usize) -> String {
    let pad = " ".repeat(to);
    let mut out = String::with_capacity(raw.len() + raw.len() / 8);
    for (i, line) in raw.split_inclusive('\n').enumerate() {
        if i == 0 {
            out.push_str(line);
        } else if line.bytes().take(from).all(|b| b == b' ') && line.len() > from {
            // Spaces past the old column are kept (in a block scalar they are text).
            out.push_str(&pad);
            out.push_str(&line[from..]);
        } else {
            // A blank line short of the old column.
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
        }
    }
    out
}

/// The end of an entry whose value's last token ends at byte `end`: past the line break of
/// that token's line — or, when the token (a block scalar) ran on into the indentation of the
/// next line, the start of that line.
fn entry_end(text: &str, end: usize) -> usize {
    let Some(before) = text.get(..end) else {
        return text.len();
    };
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    if line_start > 0 && before[line_start..].bytes().all(|b| b == b' ') {
        line_start
    } else {
        line_end(text, end)
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
        let end = entry_end(text, end);
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
    let keep_fields = !like.layout.fields.is_empty();
    // As written where possible; then unknown element fields canonically; then everything.
    let mut attempts = vec![(keep_sections, keep_fields)];
    for next in [(keep_sections, false), (false, false)] {
        if attempts.last() != Some(&next) {
            attempts.push(next);
        }
    }
    for (sections, fields) in attempts {
        let Some(text) = compose(program, like, sections, fields, limits) else {
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

/// The canonical text, with the unknown top-level sections (when `sections`) and unknown
/// element fields (when `fields`) as written, and the comments.
fn compose(
    program: &Program,
    like: &Document,
    sections: bool,
    fields: bool,
    limits: &Limits,
) -> Option<String> {
    let mut text = if sections {
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
    let mut kept = vec![false; like.layout.fields.len()];
    if fields && text.len() <= limits.max_bytes {
        let canonical = super::read_with_limits(&text, limits).ok()?;
        text = put_back_fields(&text, &like.layout, &canonical.layout.fields, &mut kept);
    }
    let comments: Vec<&Comment> = like
        .layout
        .comments
        .iter()
        .filter(|c| !(sections && c.in_verbatim))
        .filter(|c| !c.in_field.or(c.above_field).is_some_and(|i| kept[i]))
        .collect();
    if comments.is_empty() || text.len() > limits.max_bytes {
        return Some(text);
    }
    let canonical = super::read_with_limits(&text, limits).ok()?;
    text = place_comments(&text, &comments, &like.source_map, &canonical.source_map);
    Some(text)
}

/// `text` (canonical) with each unknown element field of `like` kept as written put back in
/// place of its canonical form (with the comments just above it), where that form too is a
/// block entry starting its line. `kept[i]` tells whether field `i` was put back.
fn put_back_fields(
    text: &str,
    like: &Layout,
    canonical: &[KeptField],
    kept: &mut [bool],
) -> String {
    let source = &like.fields;
    let at: HashMap<&Locus, &KeptField> = canonical.iter().map(|c| (&c.locus, c)).collect();
    let mut edits: Vec<(usize, &KeptField, &KeptField)> = source
        .iter()
        .enumerate()
        .filter_map(|(i, f)| at.get(&f.locus).map(|c| (i, f, *c)))
        .collect();
    edits.sort_by_key(|(_, _, c)| c.bytes.0);
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut done = 0;
    for (i, f, c) in edits {
        let (start, end) = c.bytes;
        if start < done {
            continue;
        }
        out.push_str(&text[done..start]);
        for comment in like.comments.iter().filter(|k| k.above_field == Some(i)) {
            out.push('#');
            out.push_str(&comment.text);
            out.push('\n');
            out.push_str(&" ".repeat(c.indent));
        }
        out.push_str(&reindent(&f.raw, f.indent, c.indent));
        done = end;
        kept[i] = true;
    }
    out.push_str(&text[done..]);
    out
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

/// True for a line holding only a mapping key (`walker:`), its value on the lines after it;
/// an anchor or a tag may stand after the key (`x_review: &r`, `x_meta: !tag`).
fn is_bare_key(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with('#') || t.starts_with("- ") {
        return false;
    }
    if t.ends_with(':') {
        return true;
    }
    t.split_once(": ").is_some_and(|(_, rest)| {
        rest.split(' ')
            .all(|w| w.starts_with('!') || (w.len() > 1 && w.starts_with('&')))
    })
}

/// Puts each comment above (or at the end of) the canonical line of the element it belongs to.
fn place_comments(
    text: &str,
    comments: &[&Comment],
    source: &SourceMap,
    canonical: &SourceMap,
) -> String {
    let mut anchors: Vec<(Pos, u8, Locus)> =
        source.iter().map(|(l, p)| (p, depth(&l), l)).collect();
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

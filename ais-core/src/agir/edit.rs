//! Minimal text edits: apply the difference between a program and its repaired copy to the
//! source text at the repaired spans only, the way rustfix applies suggestions, leaving every
//! other byte alone.
//!
//! The validator's mechanical repairs change a carry's `type` or `produced_by`, an
//! instruction's `owner`, or add a carry. Each becomes one edit: a field's value replaced in
//! place, a missing field added to its element (`, owner: model` before a flow mapping's `}`,
//! or a new line under a block mapping's field), or a new entry after the last carry, in the
//! spelling the section already uses. Anything else — a difference elsewhere, a document that
//! needed a relaxation or sits in a code fence, a section in a shape these edits do not cover —
//! is declined (`None`), and so is an edited text that does not read back as the repaired
//! program: the caller then writes the program whole.

use super::scalar::{TextStyle, inline};
use super::write::{carry_flow, key_text};
use super::{Document, Limits};
use crate::program::{Carry, Instruction, Program};
use crate::source::{Element, Locus, Pos};
use granit_parser::{Event, Parser};
use std::collections::HashMap;

/// The source text with the repairs that turn `doc.program` into `repaired` applied as minimal
/// edits, or `None` when they cannot be (see the module docs).
pub fn edit_minimally(source: &str, doc: &Document, repaired: &Program) -> Option<String> {
    if !doc.relaxations.is_empty() || super::relax::strip_fence(source).is_some() {
        return None;
    }
    let before = &doc.program;
    if !same_outside(before, repaired) {
        return None;
    }
    let cx = Cx::new(source, doc)?;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let (old_c, new_c) = (before.carries(), repaired.carries());
    if new_c.len() < old_c.len() {
        return None;
    }
    for (i, (a, b)) in old_c.iter().zip(new_c).enumerate() {
        if a != b {
            carry_edits(&cx, i, a, b, &mut edits)?;
        }
    }
    if new_c.len() > old_c.len() {
        edits.push(new_carries(&cx, old_c.len(), &new_c[old_c.len()..])?);
    }
    let (old_n, new_n) = (before.instructions(), repaired.instructions());
    if old_n.len() != new_n.len() {
        return None;
    }
    for (i, (a, b)) in old_n.iter().zip(new_n).enumerate() {
        if a != b {
            instruction_edits(&cx, i, a, b, &mut edits)?;
        }
    }
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    if edits.windows(2).any(|w| w[1].1 > w[0].0) {
        return None; // overlapping edits
    }
    let mut out = source.to_owned();
    for (start, end, text) in edits {
        out.replace_range(start..end, &text);
    }
    let limits = Limits {
        max_bytes: usize::MAX,
        ..Limits::default()
    };
    let back = super::read_with_limits(&out, &limits).ok()?;
    (back.program == *repaired).then_some(out)
}

/// True when the two programs differ at most in their carries and instructions.
fn same_outside(a: &Program, b: &Program) -> bool {
    let strip = |p: &Program| {
        let mut p = p.clone();
        if let Some(w) = p.walker.as_mut() {
            w.carries = None;
        }
        p.nodes = None;
        p
    };
    strip(a) == strip(b)
}

/// What the edits need to know about the source: byte offsets of lines, where each scalar
/// ends, and where each mapping stands.
struct Cx<'a> {
    text: &'a str,
    doc: &'a Document,
    line_starts: Vec<usize>,
    /// Scalar start byte → end byte.
    scalars: HashMap<usize, usize>,
    /// Mappings: start byte, end byte, and whether flow (`{…}`; its end is the `}`).
    maps: Vec<(usize, usize, bool)>,
    /// Recorded positions, exactly as recorded (no fallback to coarser places).
    exact: HashMap<Locus, Pos>,
}

impl<'a> Cx<'a> {
    fn new(text: &'a str, doc: &'a Document) -> Option<Self> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut scalars = HashMap::new();
        let mut maps = Vec::new();
        let mut open: Vec<(usize, bool)> = Vec::new();
        for event in Parser::new_from_str(text) {
            let (event, span) = event.ok()?;
            let (start, end) = (span.start.byte_offset()?, span.end.byte_offset()?);
            match event {
                Event::Scalar(..) => {
                    scalars.insert(start, end);
                }
                Event::MappingStart(style, ..) => {
                    open.push((start, style == granit_parser::StructureStyle::Flow));
                }
                Event::MappingEnd => {
                    let (s, flow) = open.pop()?;
                    maps.push((s, start.max(s), flow));
                }
                _ => {}
            }
        }
        let mut exact = HashMap::new();
        for (l, p) in doc.source_map.iter() {
            exact.entry(l).or_insert(p);
        }
        Some(Cx {
            text,
            doc,
            line_starts,
            scalars,
            maps,
            exact,
        })
    }

    /// The byte offset of a position (1-based line, character column).
    fn byte(&self, pos: Pos) -> Option<usize> {
        let start = *self.line_starts.get(pos.line.checked_sub(1)? as usize)?;
        let line = &self.text[start..];
        let col = pos.column.checked_sub(1)? as usize;
        let off = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        Some(start + off)
    }

    /// The byte range of a field's scalar value, when it was written.
    fn value(&self, el: Element, field: &str) -> Option<(usize, usize)> {
        let pos = *self.exact.get(&Locus::field(el, field))?;
        let start = self.byte(pos)?;
        Some((start, *self.scalars.get(&start)?))
    }

    /// The innermost mapping holding byte `at`.
    fn map_at(&self, at: usize) -> Option<(usize, usize, bool)> {
        self.maps
            .iter()
            .filter(|(s, e, _)| *s <= at && at < *e)
            .max_by_key(|(s, _, _)| *s)
            .copied()
    }

    /// The line (0-based) holding byte `at`, and the byte just past its line break.
    fn line_of(&self, at: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|s| *s <= at) - 1;
        let end = self
            .line_starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        (line, end)
    }

    /// The recorded fields of an element with their value's byte range.
    fn fields_of(&self, el: Element) -> Vec<(usize, usize)> {
        self.doc
            .source_map
            .iter()
            .filter(|(l, _)| l.element == el && l.field.is_some() && l.index.is_none())
            .filter_map(|(_, p)| {
                let start = self.byte(p)?;
                Some((start, *self.scalars.get(&start)?))
            })
            .collect()
    }
}

/// The edit that gives `field` of element `el` the text `value` (`None`: the field goes away,
/// which these edits do not do).
fn set_field(
    cx: &Cx,
    el: Element,
    field: &str,
    value: Option<&str>,
) -> Option<(usize, usize, String)> {
    let value = value?;
    if let Some((start, end)) = cx.value(el, field) {
        let flow = cx.map_at(start).is_some_and(|m| m.2);
        return Some((start, end, inline(value, TextStyle::Name, flow)));
    }
    // A new field: beside one the element already has, in the same style.
    let fields = cx.fields_of(el);
    let &(start, end) = fields.iter().min_by_key(|(s, _)| *s)?;
    let (map_start, map_end, flow) = cx.map_at(start)?;
    if flow {
        let text = format!(", {field}: {}", inline(value, TextStyle::Name, true));
        return Some((map_end, map_end, text));
    }
    // Block style: a new line after the first field's line, at its key's column.
    let (line, line_end) = cx.line_of(end);
    if cx.line_of(start).0 != line || map_start > start {
        return None; // a value spanning lines
    }
    let line_text = &cx.text[cx.line_starts[line]..line_end];
    let key_col = line_text.find(|c: char| c != ' ' && c != '-')?;
    let text = format!(
        "{}{field}: {}\n",
        " ".repeat(key_col),
        inline(value, TextStyle::Name, false)
    );
    if !cx.text[..line_end].ends_with('\n') {
        return None;
    }
    Some((line_end, line_end, text))
}

fn carry_edits(
    cx: &Cx,
    i: usize,
    a: &Carry,
    b: &Carry,
    edits: &mut Vec<(usize, usize, String)>,
) -> Option<()> {
    let mut rest = b.clone();
    rest.ty = a.ty.clone();
    rest.produced_by = a.produced_by.clone();
    if rest != *a {
        return None;
    }
    let el = Element::Carry(i);
    if a.ty != b.ty {
        let ty = b.ty.as_ref().map(|t| t.to_string());
        edits.push(set_field(cx, el, "type", ty.as_deref())?);
    }
    if a.produced_by != b.produced_by {
        edits.push(set_field(cx, el, "produced_by", b.produced_by.as_deref())?);
    }
    Some(())
}

fn instruction_edits(
    cx: &Cx,
    i: usize,
    a: &Instruction,
    b: &Instruction,
    edits: &mut Vec<(usize, usize, String)>,
) -> Option<()> {
    let mut rest = b.clone();
    rest.owner = a.owner.clone();
    if rest != *a {
        return None;
    }
    let owner = b.owner.as_ref().map(|o| o.as_str().to_owned());
    edits.push(set_field(
        cx,
        Element::Instruction(i),
        "owner",
        owner.as_deref(),
    )?);
    Some(())
}

/// The edit that adds `added` after carry `last` (the last one written), one line each, in the
/// section's spelling: `name: {…}` entries of a block mapping, or `- {name: …}` list entries.
fn new_carries(cx: &Cx, count: usize, added: &[Carry]) -> Option<(usize, usize, String)> {
    let last = Element::Carry(count.checked_sub(1)?);
    let pos = *cx.exact.get(&Locus::element(last))?;
    let start = cx.byte(pos)?;
    // The end of the last carry: its own line, or the last line of its fields' values.
    let end = cx
        .fields_of(last)
        .iter()
        .map(|(_, e)| *e)
        .chain(std::iter::once(start))
        .max()?;
    if cx.map_at(start).is_some_and(|m| m.2) {
        return None; // `carries: {a: …, b: …}` written as one flow mapping
    }
    let (line, _) = cx.line_of(start);
    let line_text = &cx.text[cx.line_starts[line]..cx.line_of(start).1];
    let indent = line_text.len() - line_text.trim_start_matches(' ').len();
    let listed = line_text[indent..].starts_with("- ");
    if !listed && indent != pos.column as usize - 1 {
        return None;
    }
    let (_, at) = cx.line_of(end);
    if !cx.text[..at].ends_with('\n') {
        return None;
    }
    let mut text = String::new();
    for c in added {
        if listed {
            text.push_str(&format!(
                "{}- {}\n",
                " ".repeat(indent),
                carry_flow(c, true)
            ));
        } else {
            text.push_str(&format!(
                "{}{}: {}\n",
                " ".repeat(indent),
                key_text(&c.name),
                carry_flow(c, false)
            ));
        }
    }
    Some((at, at, text))
}

//! A positioned YAML node tree, built from the events of `granit-parser` (a pure-Rust,
//! non-recursive YAML 1.2 parser, the one serde-saphyr is built on).
//!
//! The tree is deliberately small: scalars keep their source text and style, collections keep
//! their entries in document order (duplicate keys included, so the reader can report them), and
//! every node keeps the position where it starts. Aliases are expanded here, within
//! [`Limits::max_alias_nodes`] and [`Limits::max_alias_bytes`]; the whole tree within
//! [`Limits::max_nodes`]; nesting is bounded by [`Limits::max_depth`].

use super::relax::ColumnMap;
use super::{Limits, ReadError};
use crate::source::Pos;
use crate::value::Value;
use granit_parser::{
    ErrorKind, Event, Options, Parser, Placement, ScalarStyle, ScanError, Span, StructureStyle, Tag,
};
use indexmap::IndexMap;
use std::borrow::Cow;
use std::collections::HashMap;

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// Plain: resolved by the YAML 1.2 core schema.
    Plain,
    /// Quoted, block, or tagged `!!str`: always a string.
    Text,
}

/// A YAML node with the position where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node<'a> {
    /// Where the node starts (1-based line and character column of the original text).
    pub pos: Pos,
    /// What it is.
    pub kind: Kind<'a>,
}

/// The shape of a node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind<'a> {
    /// A scalar: its text after escape processing, and how it was written.
    Scalar(Cow<'a, str>, Style),
    /// A sequence.
    Seq(Vec<Node<'a>>),
    /// A mapping, entries in document order.
    Map(Vec<(Node<'a>, Node<'a>)>),
}

impl Node<'_> {
    /// A word for what the node is, for messages: "a mapping", "a list", "the text `x`".
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Map(_) => "a mapping".to_owned(),
            Kind::Seq(_) => "a list".to_owned(),
            Kind::Scalar(text, Style::Plain) => match resolve_plain(text) {
                Value::Null => "nothing (null)".to_owned(),
                Value::Bool(b) => format!("the bool `{b}`"),
                Value::Int(i) => format!("the int `{i}`"),
                Value::Float(_) => format!("the float `{text}`"),
                _ => format!("the text `{}`", clip(text)),
            },
            Kind::Scalar(text, Style::Text) => format!("the text `{}`", clip(text)),
        }
    }

    /// True for a plain scalar that resolves to null (empty, `~`, `null`).
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, Kind::Scalar(t, Style::Plain) if is_null_text(t))
    }

    /// The node as a [`Value`] (core-schema resolution of plain scalars).
    pub fn to_value(&self) -> Result<Value, ReadError> {
        Ok(match &self.kind {
            Kind::Scalar(text, Style::Plain) => resolve_plain(text),
            Kind::Scalar(text, Style::Text) => Value::Str(text.to_string()),
            Kind::Seq(items) => {
                Value::List(items.iter().map(Node::to_value).collect::<Result<_, _>>()?)
            }
            Kind::Map(entries) => {
                let mut map = IndexMap::with_capacity(entries.len());
                for (k, v) in entries {
                    let Kind::Scalar(key, _) = &k.kind else {
                        return Err(ReadError {
                            message: format!(
                                "a mapping key must be a name, found {}",
                                k.describe()
                            ),
                            pos: Some(k.pos),
                            help: Some("write the key as plain text".to_owned()),
                        });
                    };
                    if map.insert(key.to_string(), v.to_value()?).is_some() {
                        return Err(duplicate_key(key, k.pos));
                    }
                }
                Value::Map(map)
            }
        })
    }
}

/// The error for a key written twice in one mapping.
pub(crate) fn duplicate_key(key: &str, pos: Pos) -> ReadError {
    ReadError {
        message: format!("the key `{key}` is written twice in this mapping"),
        pos: Some(pos),
        help: Some(format!("keep one `{key}:` and delete the other")),
    }
}

fn clip(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(MAX).collect();
        s.push('…');
        s
    }
}

/// True for the plain spellings of null in the YAML 1.2 core schema.
pub(crate) fn is_null_text(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// Resolves a plain scalar by the YAML 1.2 core schema: null, bool, int (decimal, `0o`, `0x`),
/// float. Integers that do not fit an `i64`, and `.inf` / `.nan` (a [`Value::Float`] is always
/// finite), stay text, as written.
pub(crate) fn resolve_plain(text: &str) -> Value {
    if is_null_text(text) {
        return Value::Null;
    }
    match text {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(i) = parse_core_int(text) {
        return i.map_or_else(|| Value::Str(text.to_owned()), Value::Int);
    }
    if is_core_float(text)
        && let Ok(f) = text.parse::<f64>()
        && f.is_finite()
    {
        return Value::Float(f);
    }
    Value::Str(text.to_owned())
}

/// `Some(Some(i))` for a core-schema int that fits, `Some(None)` for one that does not fit,
/// `None` for text that is not an int.
fn parse_core_int(text: &str) -> Option<Option<i64>> {
    if let Some(oct) = text.strip_prefix("0o") {
        return (!oct.is_empty() && oct.bytes().all(|b| (b'0'..=b'7').contains(&b)))
            .then(|| i64::from_str_radix(oct, 8).ok());
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return (!hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| i64::from_str_radix(hex, 16).ok());
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok())
}

/// True for the core-schema float syntax `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
/// (and `.inf` / `.nan` spellings, which [`resolve_plain`] nonetheless keeps as text).
pub(crate) fn is_core_float(text: &str) -> bool {
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(t, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            int.bytes().all(|b| b.is_ascii_digit())
                && frac.bytes().all(|b| b.is_ascii_digit())
                && !(int.is_empty() && frac.is_empty())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    };
    let exp_ok = exp.is_none_or(|e| {
        let d = e.strip_prefix(['-', '+']).unwrap_or(e);
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exp_ok
}

/// The documents of a YAML stream: at most two (a frontmatter block and the body).
pub(crate) struct Stream<'a> {
    /// Each document's root node.
    pub docs: Vec<Node<'a>>,
    /// How many nodes the documents hold in all.
    pub nodes: usize,
    /// The comments, in source order.
    pub comments: Vec<RawComment>,
    /// Where each entry of a document's top-level mapping stands in the parsed text.
    pub top: Vec<TopEntry>,
    /// Where each mapping entry of the outer levels (those that hold the program's elements
    /// and their fields) stands in the parsed text, found by its value's position.
    pub entries: Vec<EntrySpan>,
}

/// A mapping entry's place in the parsed text: its value's position, and the byte range from
/// its key's start to the end of its value's last token (when known). 20 bytes: a document
/// records one for most of its entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntrySpan {
    /// Where the value starts.
    pub value_pos: Pos,
    /// Byte offsets: the key's start and the value's end (unknown past 4 GiB).
    bytes: Option<(u32, u32)>,
}

impl EntrySpan {
    /// Byte offsets: the key's start and the value's end.
    pub fn bytes(&self) -> Option<(usize, usize)> {
        self.bytes
            .map(|(start, end)| (start as usize, end as usize))
    }
}

/// The deepest collection nesting whose mapping entries are recorded as [`EntrySpan`]s: deep
/// enough for every element field (a type's object field's fields sit at five).
const ENTRY_DEPTH: usize = 5;

/// A comment as the parser reported it.
#[derive(Clone, Debug)]
pub(crate) struct RawComment {
    /// Where its `#` stands.
    pub pos: Pos,
    /// The text after `#`.
    pub text: String,
    /// True when it trails content on its line.
    pub trailing: bool,
    /// Its byte range in the parsed text, when known.
    pub bytes: Option<(usize, usize)>,
}

/// An entry of a document's top-level mapping: its key and the byte range from the key's
/// start to the end of the value's last token, in the parsed text (when known).
#[derive(Clone, Debug)]
pub(crate) struct TopEntry {
    /// Which document (0: the first).
    pub doc: usize,
    /// The key's text.
    pub key: String,
    /// Byte offsets: the key's start and the value's end.
    pub bytes: Option<(usize, usize)>,
}

impl Stream<'_> {
    /// The lines of plain mapping keys that swallowed a glued flow collection: strict YAML reads
    /// `b:{ type: str }` as the key `b:{ type` with the value `str }`, which no author means.
    pub fn glued_key_lines(&self) -> Vec<usize> {
        let mut lines = Vec::new();
        let mut todo: Vec<&Node> = self.docs.iter().collect();
        while let Some(node) = todo.pop() {
            match &node.kind {
                Kind::Scalar(..) => {}
                Kind::Seq(items) => todo.extend(items),
                Kind::Map(entries) => {
                    for (k, v) in entries {
                        if let Kind::Scalar(text, Style::Plain) = &k.kind
                            && text.split_once(':').is_some_and(|(head, rest)| {
                                !head.is_empty()
                                    && !head.contains(char::is_whitespace)
                                    && rest.starts_with(['{', '['])
                            })
                        {
                            lines.push(k.pos.line as usize);
                        }
                        todo.push(v);
                    }
                }
            }
        }
        lines.sort_unstable();
        lines.dedup();
        lines
    }
}

/// A collection being built.
struct Frame<'a> {
    pos: Pos,
    /// In a mapping: the byte start of the key whose value is being read.
    key_start: Option<usize>,
    anchor: usize,
    /// True for a flow collection (`[…]`, `{…}`), whose end token ends its content.
    flow: bool,
    kind: FrameKind<'a>,
}

enum FrameKind<'a> {
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>, Option<Node<'a>>),
}

/// True for a syntax error (which a relaxation may cure), false for a limit or input failure.
pub(crate) fn is_syntax(err: &ScanError) -> bool {
    !matches!(
        err.kind(),
        ErrorKind::RecursionLimitExceeded | ErrorKind::InputIo { .. }
    )
}

/// Where an error happened, as a read error. `text` is the text that was scanned.
pub(crate) fn scan_error(
    err: &ScanError,
    text: &str,
    map: &ColumnMap,
    limits: &Limits,
) -> ReadError {
    let m = err.marker();
    let mut pos = map.pos(m.line(), m.col());
    if matches!(err.kind(), ErrorKind::RecursionLimitExceeded) {
        return too_deep(pos, limits);
    }
    let mut info = err.info();
    // The scanner places a bad escape at the scalar's opening quote, which in a long scalar
    // is far from the mistake: find the escape itself.
    let escape_error = matches!(
        err.kind(),
        ErrorKind::UnknownQuotedScalarEscape
            | ErrorKind::InvalidQuotedScalarHexEscape
            | ErrorKind::InvalidLowSurrogateHexEscape
            | ErrorKind::InvalidLowSurrogate
            | ErrorKind::MissingLowSurrogate
            | ErrorKind::UnpairedLowSurrogate
            | ErrorKind::InvalidUnicodeEscape
    );
    if escape_error && let Some(bad) = super::escape::bad_escape(text, m.line(), m.col()) {
        pos = map.pos(bad.line, bad.col0);
        info = format!("{info} `{}`", bad.written);
    }
    ReadError {
        message: format!("not valid YAML: {info}"),
        pos: Some(pos),
        help: Some(
            "fix the YAML syntax at this place (quote text that holds `: `, `#`, `[` or `{`, \
             and close every bracket and quote)"
                .to_owned(),
        ),
    }
}

/// Parses a YAML stream into positioned nodes, within the limits. Returns the scan error
/// separately so that the caller can try a relaxation and parse again.
pub(crate) fn parse<'a>(
    text: &'a str,
    map: &ColumnMap,
    limits: &Limits,
) -> Result<Result<Stream<'a>, ReadError>, ScanError> {
    let mut options = Options::default();
    // One more level than the limit, so that our own check (with its clearer message) fires first.
    options.flow_nesting_limit = limits.max_depth.saturating_add(1);
    options.block_nesting_limit = limits.max_depth.saturating_add(1);
    let parser = Parser::new_from_str_with_options(text, options);
    let mut b = Builder {
        limits,
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        alias_bytes: 0,
        docs: Vec::new(),
        nodes: 0,
        comments: Vec::new(),
        top: Vec::new(),
        entries: Vec::new(),
        last_end: None,
    };
    for event in parser {
        let (event, span) = event?;
        let pos = map.pos(span.start.line(), span.start.col());
        if let Err(e) = b.event(event, pos, span) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(Stream {
        docs: b.docs,
        nodes: b.nodes,
        comments: b.comments,
        top: b.top,
        entries: b.entries,
    }))
}

struct Builder<'a, 'l> {
    limits: &'l Limits,
    stack: Vec<Frame<'a>>,
    /// Anchored nodes by id, with their measure.
    anchors: HashMap<usize, (Node<'a>, Measure)>,
    /// Nodes and bytes of scalar text that aliases expanded into so far.
    alias_nodes: usize,
    alias_bytes: usize,
    docs: Vec<Node<'a>>,
    nodes: usize,
    comments: Vec<RawComment>,
    top: Vec<TopEntry>,
    entries: Vec<EntrySpan>,
    /// The byte end of the last token that ends content (a scalar, an alias, a flow end).
    last_end: Option<usize>,
}

impl<'a> Builder<'a, '_> {
    /// Takes one parser event: notes where content and keys stand, then builds the tree.
    fn event(&mut self, event: Event<'a>, pos: Pos, span: Span) -> Result<(), ReadError> {
        self.note_bounds(&event, span);
        match event {
            Event::Comment(text, placement) => {
                self.comments.push(RawComment {
                    pos,
                    text: text.into_owned(),
                    trailing: placement == Placement::Right,
                    bytes: span.byte_range().map(|r| (r.start, r.end)),
                });
                Ok(())
            }
            Event::DocumentStart(..) => self.document_start(pos),
            Event::Scalar(text, style, anchor, tag) => {
                let node = Node {
                    pos,
                    kind: Kind::Scalar(text, scalar_style(style, tag.as_deref())),
                };
                self.complete(node, anchor)
            }
            Event::SequenceStart(style, anchor, _) => self.open(pos, style, anchor, true),
            Event::MappingStart(style, anchor, _) => self.open(pos, style, anchor, false),
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            Event::Alias(id) => self.alias(id, pos),
            _ => Ok(()),
        }
    }

    /// Records the byte bounds an event gives: the end of content (a scalar, an alias, a flow
    /// collection's end), and the start of a node that begins as a key of an outer mapping.
    fn note_bounds(&mut self, event: &Event<'a>, span: Span) {
        match event {
            Event::Scalar(..) | Event::Alias(_) => self.last_end = span.end.byte_offset(),
            Event::SequenceEnd | Event::MappingEnd if self.stack.last().is_some_and(|f| f.flow) => {
                self.last_end = span.end.byte_offset();
            }
            _ => {}
        }
        // A scalar or collection starting as a key of a mapping: remember where.
        if matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
        ) && self.stack.len() <= ENTRY_DEPTH
            && let Some(frame) = self.stack.last_mut()
            && matches!(&frame.kind, FrameKind::Map(_, None))
        {
            frame.key_start = span.start.byte_offset();
        }
    }

    /// A document starts: at most two (frontmatter and body); anchors do not cross documents.
    fn document_start(&mut self, pos: Pos) -> Result<(), ReadError> {
        if self.docs.len() >= 2 {
            return Err(ReadError {
                message: "a third YAML document starts here; AG-IR is one frontmatter \
                          block and one document"
                    .to_owned(),
                pos: Some(pos),
                help: Some(
                    "remove this `---` line, or split the text into separate files".to_owned(),
                ),
            });
        }
        self.anchors.clear();
        Ok(())
    }

    /// A sequence (`seq`) or mapping starts: push its frame, within the depth limit.
    fn open(
        &mut self,
        pos: Pos,
        style: StructureStyle,
        anchor: usize,
        seq: bool,
    ) -> Result<(), ReadError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(too_deep(pos, self.limits));
        }
        self.stack.push(Frame {
            pos,
            key_start: None,
            anchor,
            flow: style == StructureStyle::Flow,
            kind: if seq {
                FrameKind::Seq(Vec::new())
            } else {
                FrameKind::Map(Vec::new(), None)
            },
        });
        Ok(())
    }

    /// A collection ends: pop its frame and complete it as a node.
    fn close(&mut self) -> Result<(), ReadError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        // Exactly sized: a document's many small collections would otherwise keep the room
        // their growth made (a 20,000-instruction chain's tree: 37 MB, of which 15 spare).
        let kind = match frame.kind {
            FrameKind::Seq(mut items) => {
                items.shrink_to_fit();
                Kind::Seq(items)
            }
            FrameKind::Map(mut entries, _) => {
                entries.shrink_to_fit();
                Kind::Map(entries)
            }
        };
        let node = Node {
            pos: frame.pos,
            kind,
        };
        self.complete(node, frame.anchor)
    }

    /// An alias: expand a copy of its anchored node here, within the alias budgets, the depth
    /// limit and the node limit.
    fn alias(&mut self, id: usize, pos: Pos) -> Result<(), ReadError> {
        let Some((node, m)) = self.anchors.get(&id) else {
            return Err(ReadError {
                message: "this alias names no anchor defined before it".to_owned(),
                pos: Some(pos),
                help: Some("define the anchor (`&name`) before using `*name`".to_owned()),
            });
        };
        self.alias_nodes = self.alias_nodes.saturating_add(m.size);
        self.alias_bytes = self.alias_bytes.saturating_add(m.bytes);
        if self.alias_nodes > self.limits.max_alias_nodes {
            return Err(alias_limit(
                pos,
                format!("{} nodes", self.limits.max_alias_nodes),
            ));
        }
        if self.alias_bytes > self.limits.max_alias_bytes {
            return Err(alias_limit(
                pos,
                format!("{} bytes of text", self.limits.max_alias_bytes),
            ));
        }
        if self.stack.len().saturating_add(m.height) > self.limits.max_depth {
            return Err(too_deep(pos, self.limits));
        }
        // The expansion's nodes count toward the document's node budget (the alias
        // itself is counted when it completes).
        self.nodes = self.nodes.saturating_add(m.size - 1);
        let mut node = node.clone();
        node.pos = pos;
        self.complete(node, 0)
    }

    fn complete(&mut self, node: Node<'a>, anchor: usize) -> Result<(), ReadError> {
        self.nodes = self.nodes.saturating_add(1);
        if self.nodes > self.limits.max_nodes {
            return Err(ReadError {
                message: format!(
                    "the document holds more than {} YAML nodes (the node limit)",
                    self.limits.max_nodes
                ),
                pos: Some(node.pos),
                help: Some(
                    "split the module into smaller programs joined by CALL (library callers: \
                     `agir::Limits::max_nodes`)"
                        .to_owned(),
                ),
            });
        }
        if anchor != 0 {
            let m = measure(&node);
            self.anchors.insert(anchor, (node.clone(), m));
        }
        // A value of a mapping of the outer levels: record where its entry stands.
        if self.stack.len() <= ENTRY_DEPTH
            && let Some(frame) = self.stack.last()
            && let FrameKind::Map(_, Some(key)) = &frame.kind
        {
            let bytes = frame.key_start.zip(self.last_end);
            let small = |(start, end): (usize, usize)| {
                Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
            };
            self.entries.push(EntrySpan {
                value_pos: node.pos,
                bytes: bytes.and_then(small),
            });
            if self.stack.len() == 1
                && let Kind::Scalar(text, _) = &key.kind
            {
                self.top.push(TopEntry {
                    doc: self.docs.len(),
                    key: text.to_string(),
                    bytes,
                });
            }
        }
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Frame {
                kind: FrameKind::Seq(items),
                ..
            }) => items.push(node),
            Some(Frame {
                kind: FrameKind::Map(entries, pending),
                ..
            }) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => entries.push((key, node)),
            },
        }
        Ok(())
    }
}

/// How a scalar counts: plain (resolved by the core schema) unless quoted, block or `!!str`.
fn scalar_style(style: ScalarStyle, tag: Option<&Tag>) -> Style {
    match style {
        ScalarStyle::Plain if !tag.is_some_and(|t| t.is_yaml_core_schema_tag("str")) => {
            Style::Plain
        }
        _ => Style::Text,
    }
}

/// The error for collections nested past [`Limits::max_depth`].
fn too_deep(pos: Pos, limits: &Limits) -> ReadError {
    ReadError {
        message: format!(
            "collections nest deeper than {} levels (the depth limit)",
            limits.max_depth
        ),
        pos: Some(pos),
        help: Some(
            "flatten this structure: move the inner part to a declared type or a knowledge \
             item (library callers: `agir::Limits::max_depth`)"
                .to_owned(),
        ),
    }
}

/// The error for an alias that takes the expansions past a budget (`what`: "100000 nodes").
fn alias_limit(pos: Pos, what: String) -> ReadError {
    ReadError {
        message: format!("aliases expand to more than {what} in all (the alias limit)"),
        pos: Some(pos),
        help: Some(
            "write the repeated content out once instead of aliasing it again and again \
             (library callers: `agir::Limits::max_alias_nodes` and `max_alias_bytes`)"
                .to_owned(),
        ),
    }
}

/// What a node expands to: its node count, its height (collection nesting) and the bytes of
/// scalar text it holds.
#[derive(Clone, Copy, Debug)]
struct Measure {
    size: usize,
    height: usize,
    bytes: usize,
}

/// Measures a node. Iterative.
fn measure(node: &Node<'_>) -> Measure {
    let mut size = 0usize;
    let mut height = 0usize;
    let mut bytes = 0usize;
    let mut todo = vec![(node, 0usize)];
    while let Some((n, depth)) = todo.pop() {
        size += 1;
        match &n.kind {
            Kind::Scalar(text, _) => {
                height = height.max(depth);
                bytes = bytes.saturating_add(text.len());
            }
            Kind::Seq(items) => {
                height = height.max(depth + 1);
                todo.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Kind::Map(entries) => {
                height = height.max(depth + 1);
                for (k, v) in entries {
                    todo.push((k, depth + 1));
                    todo.push((v, depth + 1));
                }
            }
        }
    }
    Measure {
        size,
        height,
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_resolve_by_the_core_schema() {
        assert_eq!(resolve_plain(""), Value::Null);
        assert_eq!(resolve_plain("~"), Value::Null);
        assert_eq!(resolve_plain("True"), Value::Bool(true));
        assert_eq!(resolve_plain("-12"), Value::Int(-12));
        assert_eq!(resolve_plain("0x1F"), Value::Int(31));
        assert_eq!(resolve_plain("0o17"), Value::Int(15));
        assert_eq!(resolve_plain("0.1"), Value::Float(0.1));
        assert_eq!(resolve_plain(".5"), Value::Float(0.5));
        assert_eq!(resolve_plain("1e3"), Value::Float(1000.0));
        assert_eq!(resolve_plain("-1.5E-2"), Value::Float(-0.015));
        for text in [
            "yes", "1_000", "0x", ".", "e3", "1e", ".inf", ".nan", "12a", "+",
        ] {
            assert_eq!(resolve_plain(text), Value::Str(text.into()), "{text}");
        }
        assert_eq!(
            resolve_plain("99999999999999999999"),
            Value::Str("99999999999999999999".into())
        );
    }
}

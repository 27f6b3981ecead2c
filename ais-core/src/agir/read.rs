//! From the positioned node tree to a [`Program`]: the top level, the frontmatter, the three
//! spellings of a name-keyed section, and the typed field readers every element uses.

use super::ReadError;
use super::elements;
use super::tree::{Kind, Node, duplicate_key};
use crate::program::{Program, Type};
use crate::source::{Element, Locus, Pos, SourceMap};
use crate::value::Value;
use std::fmt;

pub(crate) type R<T> = Result<T, ReadError>;

/// Reads the documents of a stream (frontmatter, then body) into a program. The documents are
/// consumed: each top-level section's nodes are freed once it is read, so the tree and the
/// program it becomes are not both whole at once.
pub(crate) fn program(docs: Vec<Node>, sm: &mut SourceMap) -> R<Program> {
    let mut p = Program::default();
    let body_at = body_index(&docs);
    let mut docs = docs.into_iter();
    let (front, body) = match body_at {
        Some(1) => (docs.next(), docs.next()),
        Some(_) => (None, docs.next()),
        None => (None, None),
    };
    if let Some(front) = &front {
        frontmatter(front, &mut p, sm)?;
    }
    if let Some(body) = body {
        top_level(body, front.is_none(), &mut p, sm)?;
    }
    Ok(p)
}

/// Which document of the stream is the body (the other, before it, is the frontmatter).
pub(crate) fn body_index(docs: &[Node]) -> Option<usize> {
    match docs {
        [] => None,
        [_] => Some(0),
        // `--- <body> ---` with nothing after: the block holds the program, not a frontmatter.
        [first, rest] if rest.is_null() && holds_sections(first) => Some(0),
        _ => Some(1),
    }
}

/// Keys that mark a lone `--- … ---` block as the body rather than a frontmatter.
pub(crate) const BODY_SECTIONS: [&str; 7] = [
    "agir_version",
    "types",
    "knowledge",
    "tools",
    "walker",
    "nodes",
    "edges",
];

/// True for a mapping holding one of the [`BODY_SECTIONS`].
fn holds_sections(node: &Node) -> bool {
    matches!(&node.kind, Kind::Map(entries) if entries.iter().any(|(k, _)| {
        matches!(&k.kind, Kind::Scalar(t, _) if BODY_SECTIONS.contains(&t.as_ref()))
    }))
}

fn frontmatter(node: &Node, p: &mut Program, sm: &mut SourceMap) -> R<()> {
    let el = Element::Frontmatter;
    sm.insert(Locus::element(el), node.pos);
    for (key, value) in fields(node, "frontmatter", "a mapping of `name`, `description`, …")? {
        sm.insert(Locus::field(el, key), value.pos);
        match key {
            "name" => p.name = opt_text(value, "frontmatter.name")?,
            "description" => p.description = opt_text(value, "frontmatter.description")?,
            _ => p
                .frontmatter_extra
                .push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(())
}

fn top_level(node: Node, no_frontmatter: bool, p: &mut Program, sm: &mut SourceMap) -> R<()> {
    if node.is_null() {
        return Ok(());
    }
    let el = Element::Program;
    sm.insert(Locus::element(el), node.pos);
    // Every key is checked (a name, written once) before any section is read.
    fields(
        &node,
        "the document",
        "a mapping of sections (`walker:`, `nodes:`, `edges:`, …)",
    )?;
    let Kind::Map(entries) = node.kind else {
        return Ok(());
    };
    // Each section is taken out of the tree, read, and freed.
    for (key_node, value) in entries {
        let Kind::Scalar(key, _) = &key_node.kind else {
            continue;
        };
        let key: &str = key;
        sm.insert(Locus::field(el, key), value.pos);
        // The two long sections are read entry by entry, each entry freed once read.
        let value = match key {
            "nodes" => {
                p.nodes = Some(elements::nodes(value, sm)?);
                continue;
            }
            "edges" => {
                p.edges = Some(elements::edges(value, sm)?);
                continue;
            }
            _ => value,
        };
        let value = &value;
        match key {
            "agir_version" => p.agir_version = opt_text(value, "agir_version")?,
            "standalone" => p.standalone = opt_bool(value, "standalone")?,
            "shape" => p.shape = opt_text(value, "shape")?,
            "types" => p.types = Some(elements::types(value, sm)?),
            "knowledge" => p.knowledge = Some(elements::knowledge(value, sm)?),
            "tools" => p.tools = Some(elements::tools(value, sm)?),
            "walker" => p.walker = Some(elements::walker(value, sm)?),
            "concurrency" => {
                p.concurrency = Some(elements::concurrency(
                    value,
                    "concurrency",
                    Element::Concurrency,
                    "",
                    sm,
                )?)
            }
            "mcp_servers" => p.mcp_servers = Some(super::mcp::servers(value)?),
            "faithfulness" => p.faithfulness = Some(super::provenance::faithfulness(value, sm)?),
            "name" if no_frontmatter => {
                sm.insert(Locus::field(Element::Frontmatter, "name"), value.pos);
                p.name = opt_text(value, "name")?;
            }
            "description" if no_frontmatter => {
                sm.insert(Locus::field(Element::Frontmatter, "description"), value.pos);
                p.description = opt_text(value, "description")?;
            }
            _ => p.extra.push((key.to_owned(), value.to_value()?)),
        }
    }
    Ok(())
}

/// A field's path in messages (`nodes[2].reads`), formatted only when a message needs it.
#[derive(Clone, Copy)]
pub(crate) struct Path<'a>(pub &'a str, pub &'a str);

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// The error for a field holding the wrong kind of node.
pub(crate) fn wrong(
    path: impl fmt::Display,
    node: &Node,
    expected: &str,
    help: impl Into<String>,
) -> ReadError {
    ReadError {
        message: format!(
            "`{path}` should be {expected}, but it is {}",
            node.describe()
        ),
        pos: Some(node.pos),
        help: Some(help.into()),
    }
}

/// The text of a mapping key.
fn key_text<'a>(key: &'a Node<'a>, path: impl fmt::Display) -> R<&'a str> {
    match &key.kind {
        Kind::Scalar(t, _) => Ok(t),
        _ => Err(wrong(
            format!("{path} (a key)"),
            key,
            "a name",
            "write the key as plain text followed by `:`",
        )),
    }
}

/// The fields of an element's mapping, keys as text, duplicates rejected. A null node (`x:` with
/// nothing after it) has no fields.
pub(crate) fn fields<'n>(
    node: &'n Node<'n>,
    path: impl fmt::Display,
    expected: &str,
) -> R<Vec<(&'n str, &'n Node<'n>)>> {
    let entries = match &node.kind {
        Kind::Map(entries) => entries.as_slice(),
        _ if node.is_null() => &[],
        _ => {
            return Err(wrong(
                &path,
                node,
                expected,
                format!("write `{path}` as `key: value` lines (or `{{key: value, …}}`)"),
            ));
        }
    };
    let mut out: Vec<(&str, &Node)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let key = key_text(k, &path)?;
        if out.iter().any(|(seen, _)| *seen == key) {
            return Err(duplicate_key(key, k.pos));
        }
        out.push((key, v));
    }
    Ok(out)
}

/// One element of a name-keyed section, whichever way it was spelled.
pub(crate) struct Named<'n> {
    /// The element's name.
    pub name: String,
    /// Where the name is written.
    pub name_pos: Pos,
    /// Where the element starts.
    pub pos: Pos,
    /// Its fields (the inline `name:`/`id:` excluded), in document order.
    pub fields: Vec<(&'n str, &'n Node<'n>)>,
    /// The path to the element, for messages: `tools.upcase`.
    pub path: String,
}

/// Reads a name-keyed section in any of its three spellings (§8.1): a mapping of name → fields;
/// a sequence of entries naming themselves with `name:` (or `id:`); a sequence of single-entry
/// mappings name → fields. A bare scalar entry in a sequence is an element with only a name.
pub(crate) fn named<'n>(node: &'n Node<'n>, section: &str) -> R<Vec<Named<'n>>> {
    let mut out = Vec::new();
    match &node.kind {
        _ if node.is_null() => {}
        Kind::Map(entries) => {
            for (k, v) in entries {
                let name = key_text(k, section)?;
                let path = format!("{section}.{name}");
                let fields = fields(v, &path, "a mapping of fields")?;
                out.push(Named {
                    name: name.to_owned(),
                    name_pos: k.pos,
                    pos: k.pos,
                    fields,
                    path,
                });
            }
        }
        Kind::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                out.push(named_entry(item, section, i)?);
            }
        }
        Kind::Scalar(..) => {
            return Err(wrong(
                section,
                node,
                "a mapping (or a list) of named entries",
                format!("write `{section}:` followed by `name: {{…}}` entries"),
            ));
        }
    }
    Ok(out)
}

fn named_entry<'n>(item: &'n Node<'n>, section: &str, i: usize) -> R<Named<'n>> {
    let at = format!("{section}[{i}]");
    if let Kind::Scalar(..) = &item.kind
        && !item.is_null()
    {
        let name = text(item, &at)?;
        return Ok(Named {
            path: format!("{section}.{name}"),
            name,
            name_pos: item.pos,
            pos: item.pos,
            fields: Vec::new(),
        });
    }
    let entries = fields(item, &at, "a named entry (a mapping)")?;
    // A single-entry mapping whose value is a mapping (or empty): name → fields.
    if let [(key, value)] = entries.as_slice()
        && (matches!(value.kind, Kind::Map(_)) || value.is_null())
    {
        let path = format!("{section}.{key}");
        let name_pos = match &item.kind {
            Kind::Map(e) => e.first().map_or(item.pos, |(k, _)| k.pos),
            _ => item.pos,
        };
        return Ok(Named {
            name: (*key).to_owned(),
            name_pos,
            pos: item.pos,
            fields: fields(value, &path, "a mapping of fields")?,
            path,
        });
    }
    let name_key = ["name", "id"]
        .into_iter()
        .find(|k| entries.iter().any(|(key, _)| key == k));
    let Some(name_key) = name_key else {
        let keys: Vec<String> = entries.iter().map(|(k, _)| format!("`{k}`")).collect();
        return Err(ReadError {
            message: format!(
                "entry {} of `{section}` has no name: it is a list entry with the keys {} \
                 and none of them is `name`",
                i + 1,
                if keys.is_empty() {
                    "(none)".to_owned()
                } else {
                    keys.join(", ")
                }
            ),
            pos: Some(item.pos),
            help: Some(format!(
                "add `name: <its name>` to the entry, or write it as `- <its name>: {{…}}`, \
                 or write `{section}` as a mapping of name → fields"
            )),
        });
    };
    let mut name = String::new();
    let mut name_pos = item.pos;
    let mut rest = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        if key == name_key {
            name = text(value, format!("{at}.{key}"))?;
            name_pos = value.pos;
        } else {
            rest.push((key, value));
        }
    }
    Ok(Named {
        path: format!("{section}.{name}"),
        name,
        name_pos,
        pos: item.pos,
        fields: rest,
    })
}

/// A piece of text: a scalar's text as written (plain scalars are not resolved, so
/// `agir_version: 0.1` is the text `0.1`).
pub(crate) fn text(node: &Node, path: impl fmt::Display) -> R<String> {
    match &node.kind {
        Kind::Scalar(t, _) => Ok(t.to_string()),
        _ => Err(wrong(
            &path,
            node,
            "a piece of text",
            "write the text on the same line after the `:` (quote it if it holds `: ` or `#`), \
             or as a `|` block",
        )),
    }
}

/// Optional text: an absent value (`x:`, `~`, `null`) is `None`.
pub(crate) fn opt_text(node: &Node, path: impl fmt::Display) -> R<Option<String>> {
    if node.is_null() {
        Ok(None)
    } else {
        text(node, path).map(Some)
    }
}

/// An optional type expression (§6.1).
pub(crate) fn opt_type(node: &Node, path: impl fmt::Display) -> R<Option<Type>> {
    Ok(opt_text(node, path)?.map(|t| Type::parse(&t)))
}

/// An optional `true` / `false`.
pub(crate) fn opt_bool(node: &Node, path: impl fmt::Display) -> R<Option<bool>> {
    if node.is_null() {
        return Ok(None);
    }
    match node.to_value()? {
        Value::Bool(b) => Ok(Some(b)),
        _ => Err(wrong(
            &path,
            node,
            "`true` or `false`",
            format!("write `{path}: true` or `false`"),
        )),
    }
}

/// An optional integer.
pub(crate) fn opt_int(node: &Node, path: impl fmt::Display) -> R<Option<i64>> {
    if node.is_null() {
        return Ok(None);
    }
    match node.to_value()? {
        Value::Int(i) => Ok(Some(i)),
        _ => Err(wrong(
            &path,
            node,
            "a whole number",
            format!("write a number without quotes, such as `{path}: 3`"),
        )),
    }
}

/// A list of names (`[a, b]`). A single name is read as a one-element list, and an absent
/// value as an empty list.
pub(crate) fn names(node: &Node, path: impl fmt::Display) -> R<Vec<(String, Pos)>> {
    match &node.kind {
        _ if node.is_null() => Ok(Vec::new()),
        Kind::Scalar(t, _) => Ok(vec![(t.to_string(), node.pos)]),
        Kind::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(j, item)| match &item.kind {
                Kind::Scalar(t, _) => Ok((t.to_string(), item.pos)),
                _ => Err(wrong(
                    format!("{path}[{j}]"),
                    item,
                    "a name",
                    format!("write `{path}` as a list of plain names: `[a, b]`"),
                )),
            })
            .collect(),
        Kind::Map(_) => Err(wrong(
            &path,
            node,
            "a list of names",
            format!("write `{path}` as a list of plain names: `[a, b]`"),
        )),
    }
}

/// Reads a list of names and records each entry's position.
pub(crate) fn name_list(
    node: &Node,
    path: impl fmt::Display,
    el: Element,
    field: &str,
    sm: &mut SourceMap,
) -> R<Vec<String>> {
    let list = names(node, path)?;
    let mut out: Vec<String> = list
        .into_iter()
        .enumerate()
        .map(|(j, (name, pos))| {
            sm.insert(Locus::entry(el, field, j), pos);
            name
        })
        .collect();
    // The collection reuses the (name, position) list's buffer, five times the size of the
    // names: every instruction keeps two such lists.
    out.shrink_to_fit();
    Ok(out)
}

/// True when the node is a quoted or block scalar with this exact text, or a plain one.
pub(crate) fn scalar_is(node: &Node, want: &str) -> bool {
    matches!(&node.kind, Kind::Scalar(t, _) if t == want)
}

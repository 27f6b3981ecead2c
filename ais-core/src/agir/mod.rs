//! AG-IR, the YAML encoding of an AIS module (spec §8): reading and canonical writing.
//!
//! Reading ([`read`], [`read_with_limits`]) accepts everything §8.1 requires: an optional
//! Markdown code fence around the document, an optional `--- … ---` frontmatter block (a
//! document without one may carry `name` and `description` at top level), and every name-keyed
//! section (`types`, `tools`, `knowledge`, `walker.carries`, a type's `fields`, an enum's
//! `members`) spelled as a mapping, as a list of entries naming themselves with `name:` (or
//! `id:`), or as a list of single-entry mappings (a bare name in such a list is an element with
//! no fields; an enum's `members` may also be a list of names or a mapping name → doc). A list
//! entry with no name is an error that says "no name" and lists the keys it has. Where strict
//! YAML parsing fails (or reads `key:{…}` as one strange key), three
//! relaxations that authored documents commonly need are tried, each recorded as a
//! [`Relaxation`]: a flow collection glued to its key (`key:{…}`), a plain scalar holding
//! brackets inside a flow mapping (`{type: list[str]}`), and a plain value holding `: `.
//!
//! Text fields keep the scalar's text as written (`agir_version: 0.1` is the text `0.1`); an
//! absent value (`doc:`, `~`, `null`) of an optional field is `None`. Lists of names (`reads`,
//! `writes`, `serves`, `resident_on`, `traces_to`, `autonomy.tools`) also accept a single name,
//! read as a one-element list. Unknown fields are kept, in order, in each element's `extra`;
//! values there follow the YAML 1.2 core schema (integers beyond `i64`, `.inf` and `.nan` stay
//! text). Every element, field and list entry gets its line and column in the
//! [`SourceMap`]: an element where its entry (or its name key) starts, a field where its value
//! starts, a list entry where it stands; top-level sections as fields of [`Element::Program`],
//! a SPAWN's `concurrency.isolation` and an SU slot's `autonomy.tools` as dotted fields of their
//! instruction.
//!
//! Writing ([`write()`]) produces strict, canonical YAML: frontmatter as a `---` prelude, sections
//! in a fixed order, fields in a fixed order with unknown fields last, mappings for every
//! name-keyed section, `|` blocks (with the chomping indicator that keeps the text exact) for
//! multi-line text, and quotes wherever a plain scalar would not read back as the same text.
//! `read(&write(p))` gives back `p`, and writing a program read from canonical text gives the
//! same text byte for byte. (Three spellings are normalized on the way, since the model cannot
//! hold them apart: a type's text as [`Type::parse`](crate::program::Type::parse) reads it, a
//! tool surface as [`ToolSurface::parse`](crate::program::ToolSurface::parse) reads it, and a
//! `concurrency.spawn` given as `none` or as a list of names.)
//!
//! Canonical writing from the program alone drops what the program does not hold: comments,
//! and the exact text of sections the reader does not know. The reader records both in
//! [`Document::layout`], and [`write_keeping`] writes a program canonically with them put back
//! — each comment beside the element it preceded or trailed, each unknown top-level section as
//! written — and checks that the result reads back to the same program. That is what `ais fmt`
//! and `ais fix` write.
//!
//! ```
//! let text = "walker:\n  carries:\n    - {name: task, type: str, role: input}\n";
//! let doc = ais_core::agir::read(text).unwrap();
//! assert_eq!(doc.program.carries()[0].name, "task");
//! assert_eq!(
//!     ais_core::agir::write(&doc.program),
//!     "walker:\n  carries:\n    task:\n      type: str\n      role: input\n"
//! );
//! ```

mod data;
mod edit;
mod elements;
mod escape;
mod layout;
mod mcp;
mod provenance;
mod read;
mod relax;
mod scalar;
mod tree;
mod write;

use crate::program::Program;
#[cfg(doc)]
use crate::source::Element;
use crate::source::{Pos, SourceMap};
pub use data::{Data, DataPos, Duplicate, pointer_token, read_data};
pub use edit::edit_minimally;
pub use layout::{Comment, Layout, write_keeping};

/// A program read from AG-IR text, with where each element stood.
#[derive(Clone, Debug)]
pub struct Document {
    /// The program.
    pub program: Program,
    /// Positions of its elements, fields and list entries.
    pub source_map: SourceMap,
    /// The relaxations of strict YAML that reading this text needed (§8.1), in source order.
    /// Empty for a strictly valid document.
    pub relaxations: Vec<Relaxation>,
    /// The comments and the verbatim text of unknown sections, which [`write_keeping`] puts
    /// back around the canonical text.
    pub layout: Layout,
}

/// One relaxation of strict YAML applied while reading (§8.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Relaxation {
    /// Where it was applied.
    pub pos: Pos,
    /// What was relaxed, in words: "quoted the plain scalar `list[str]` inside a flow mapping".
    pub what: String,
}

/// Bounds on what the reader accepts, so that no input can hang it or exhaust memory.
///
/// The defaults: 8 MiB of text, collections nested 64 deep, aliases expanding to 100,000 nodes
/// and 8 MiB of scalar text in all, and 4,000,000 nodes in the whole document (aliases
/// included). Each limit, when exceeded, is a [`ReadError`] with a position. Independently of
/// these, a document gets at most 100 relaxations (fewer for a document over 640 KiB, so that
/// the re-parsing stays within 64 MiB).
///
/// The alias budgets bound what a document *expands* to, not only what it holds: a 100 KB
/// file whose anchor holds a 100,000-character string aliased 10,000 times would otherwise
/// expand to a gigabyte. Every alias adds the nodes and the bytes of scalar text of the node it
/// names to running totals, checked as each alias is read.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Largest accepted document, in bytes.
    pub max_bytes: usize,
    /// Deepest accepted nesting of YAML collections.
    pub max_depth: usize,
    /// Most YAML nodes aliases may expand into, summed over the document.
    pub max_alias_nodes: usize,
    /// Most bytes of scalar text aliases may expand into, summed over the document.
    pub max_alias_bytes: usize,
    /// Most YAML nodes in the whole document, alias expansions included.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 8 * 1024 * 1024,
            max_depth: 64,
            max_alias_nodes: 100_000,
            max_alias_bytes: 8 * 1024 * 1024,
            max_nodes: 4_000_000,
        }
    }
}

/// Why a text could not be read as AG-IR: what, where, and what to do next.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ReadError {
    /// What is wrong.
    pub message: String,
    /// Where, when known.
    pub pos: Option<Pos>,
    /// The next step.
    pub help: Option<String>,
}

/// Reads AG-IR text with the default [`Limits`].
pub fn read(text: &str) -> Result<Document, ReadError> {
    read_with_limits(text, &Limits::default())
}

/// The most relaxations one document may need before reading gives up.
const MAX_RELAXATIONS: usize = 100;

/// Each relaxation costs one more parse of the whole text; a large document gets fewer of them,
/// so that the re-parsing stays within about this many bytes.
const RELAXATION_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// How many relaxations a text of this size may get: at most [`MAX_RELAXATIONS`], at least 8.
fn relaxation_limit(len: usize) -> usize {
    (RELAXATION_BUDGET_BYTES / len.max(1)).clamp(8, MAX_RELAXATIONS)
}

/// Reads AG-IR text within the given limits.
///
/// Fails with a located [`ReadError`] on text larger than `limits.max_bytes`, on YAML that is
/// invalid even after the relaxations, on nesting deeper than `limits.max_depth`, on aliases
/// expanding past `limits.max_alias_nodes` nodes or `limits.max_alias_bytes` bytes, on a
/// document of more than `limits.max_nodes` nodes, and on a field holding the wrong kind of value
/// (the message names the field's path, what was expected and what was found).
pub fn read_with_limits(text: &str, limits: &Limits) -> Result<Document, ReadError> {
    if text.len() > limits.max_bytes {
        return Err(too_large(text, limits.max_bytes));
    }
    let unfenced = relax::strip_fence(text);
    let original = unfenced.as_deref().unwrap_or(text);
    let mut relaxer = relax::Relaxer::default();
    let mut relaxations = Vec::new();
    let max_relaxations = relaxation_limit(original.len());
    let mut current: Option<String> = None;
    let stream = loop {
        let attempt = match &current {
            Some(t) => tree::parse(t, &relaxer.map, limits),
            None => tree::parse(original, &relaxer.map, limits),
        };
        match attempt {
            Ok(result) => {
                let stream = result?;
                // Strict YAML reads `key:{ a: b }` as a strange key; relax those lines too.
                let mut changed = false;
                for line in stream.glued_key_lines() {
                    if relaxations.len() >= max_relaxations {
                        break;
                    }
                    if let Some(changes) = relaxer.relax_at(original, line) {
                        relaxations.extend(
                            changes
                                .into_iter()
                                .map(|(pos, what)| Relaxation { pos, what }),
                        );
                        changed = true;
                    }
                }
                if !changed {
                    break stream;
                }
                current = Some(relaxer.text());
            }
            Err(scan) => {
                let line = scan.marker().line();
                let changes = if relaxations.len() < max_relaxations && tree::is_syntax(&scan) {
                    relaxer.relax_near(original, line)
                } else {
                    None
                };
                let Some(changes) = changes else {
                    let scanned = current.as_deref().unwrap_or(original);
                    let mut err = tree::scan_error(&scan, scanned, &relaxer.map, limits);
                    if relaxations.len() >= max_relaxations {
                        err.message.push_str(&format!(
                            " (after {} relaxations, the most one document of this size may get)",
                            relaxations.len()
                        ));
                    }
                    return Err(err);
                };
                relaxations.extend(
                    changes
                        .into_iter()
                        .map(|(pos, what)| Relaxation { pos, what }),
                );
                current = Some(relaxer.text());
            }
        }
    };
    relaxations.sort_by_key(|r| r.pos);
    let mut source_map = SourceMap::new();
    source_map.attach_source(text);
    // About three positions are recorded for every four nodes of a typical program.
    source_map.reserve(stream.nodes / 4 * 3);
    let body = read::body_index(&stream.docs);
    let program = read::program(stream.docs, &mut source_map)?;
    source_map.shrink_to_fit();
    let parsed = current.as_deref().unwrap_or(original);
    let layout = Layout::new(
        parsed,
        current.is_none(),
        stream.comments,
        &stream.top,
        &stream.entries,
        body,
        &program,
        &source_map,
    );
    Ok(Document {
        program,
        source_map,
        relaxations,
        layout,
    })
}

/// The error for a document over the size limit, located where the limit is crossed.
fn too_large(text: &str, max: usize) -> ReadError {
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let line = head.bytes().filter(|b| *b == b'\n').count() + 1;
    let column = head.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ReadError {
        message: format!(
            "the document is {} bytes, more than the limit of {max} bytes",
            text.len()
        ),
        pos: Some(Pos::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )),
        help: Some(
            "split the module into smaller programs joined by CALL (library callers: \
             `agir::Limits::max_bytes`)"
                .to_owned(),
        ),
    }
}

/// Writes a program as canonical, strictly valid AG-IR.
pub fn write(program: &Program) -> String {
    write::program(program)
}

#[cfg(test)]
mod tests;

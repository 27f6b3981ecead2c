//! AG-IR, the YAML encoding of an AIS module (spec §8): reading and canonical writing.
//!
//! INTERFACE STUB — the agir helper replaces the bodies; keep the public signatures.

use crate::model::Program;
use crate::source::{Pos, SourceMap};

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
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Largest accepted document, in bytes.
    pub max_bytes: usize,
    /// Deepest accepted nesting of YAML collections.
    pub max_depth: usize,
    /// Most YAML nodes an alias may expand into, summed over the document.
    pub max_alias_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 8 * 1024 * 1024,
            max_depth: 64,
            max_alias_nodes: 100_000,
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

/// Reads AG-IR text within the given limits.
pub fn read_with_limits(_text: &str, _limits: &Limits) -> Result<Document, ReadError> {
    unimplemented!("agir::read is being built")
}

/// Writes a program as canonical, strictly valid AG-IR.
pub fn write(_program: &Program) -> String {
    unimplemented!("agir::write is being built")
}

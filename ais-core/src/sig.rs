//! Tool signatures: `"(param, …) -> type"` (spec §5.4).
//!
//! INTERFACE STUB — the bind helper replaces the bodies; keep the public signatures.

use crate::model::Type;

/// A parsed tool signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// The parameters, in order: the binding surface of §7.
    pub params: Vec<Param>,
    /// The result: a type, or a tuple of names (`-> (errors, ok)`) for a multi-write tool.
    pub ret: Return,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its annotated type (`text: str`), if annotated.
    pub ty: Option<Type>,
}

/// A signature's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Return {
    /// No `->` given.
    None,
    /// A single type (`-> str`).
    Type(Type),
    /// A tuple of result names (`-> (errors, ok)`), recovered into `writes` by name.
    Tuple(Vec<String>),
}

/// A signature that does not parse: what and where (a byte offset into the text).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SigError {
    /// What is wrong.
    pub message: String,
    /// Byte offset in the signature text.
    pub offset: usize,
}

/// Parses a signature.
pub fn parse(_text: &str) -> Result<Signature, SigError> {
    unimplemented!("sig::parse is being built")
}

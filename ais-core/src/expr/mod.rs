//! The expression language of guards and CODE bodies.
//!
//! INTERFACE STUB — the expr helper replaces this module; keep the public signatures.

use crate::model::{Program, Type};

/// An error category (after the Aegis seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// The text is not an expression.
    SyntaxError,
    /// A name that is no carry, enum, function or field.
    NameError,
    /// An operation on values of the wrong type.
    TypeError,
    /// A right type with a wrong value (division by zero, index out of range, missing key).
    ValueError,
    /// A host-set limit was exceeded.
    LimitError,
}

/// An expression error: category, position within the expression, message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    /// The category.
    pub category: Category,
    /// 1-based line within the expression.
    pub line: u32,
    /// 1-based column within the expression.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

/// True when a guard's text is a sentinel meaning "default edge" (Appendix A.3).
pub fn is_sentinel(_guard: &str) -> bool {
    unimplemented!("expr is being built")
}

/// Parses and type-checks a guard against a program's carries and types; the guard must be a
/// `bool`. Sentinels are not guards: check [`is_sentinel`] first.
pub fn check_guard(_program: &Program, _guard: &str) -> Result<(), ExprError> {
    unimplemented!("expr is being built")
}

/// Parses and type-checks a CODE body; returns its type, for comparison with `writes[0]`.
pub fn check_body(_program: &Program, _body: &str) -> Result<Type, ExprError> {
    unimplemented!("expr is being built")
}

//! The calling convention (spec §7): how an instruction's reads become a tool's arguments.
//!
//! INTERFACE STUB — the bind helper replaces the bodies; keep the public signatures.

use crate::model::{Instruction, Program};
use crate::sig::Signature;

/// The cap on operands bound to one SU slot (Appendix A.2, §7.6).
pub const SLOT_ARITY_CAP: usize = 12;

/// The rule that bound a parameter (§7.1), in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// 1: the carry whose name equals the parameter's.
    Name,
    /// 2: the field of an object-typed read carry whose name equals the parameter's.
    ObjectField,
    /// 3: content or path role (§7.2).
    Role,
    /// 4: the i-th read carry (never a non-path carry into a path parameter).
    Position,
    /// 5: a filename recovered from the invocation text (§7.3).
    InvocationFallback,
    /// 6: nothing bound; the argument is null.
    Unbound,
}

/// What a parameter is bound to.
#[derive(Clone, Debug, PartialEq)]
pub enum BindSource {
    /// A carry.
    Carry(String),
    /// A field of an object-typed carry.
    Field {
        /// The carry.
        carry: String,
        /// The field.
        field: String,
    },
    /// A filename from the invocation text: `Some` when the text was given, `None` when it will
    /// be resolved from the task at run time.
    Invocation(Option<String>),
    /// Nothing (null).
    Null,
}

/// One parameter's binding.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamBinding {
    /// The parameter's name.
    pub param: String,
    /// The rule that bound it.
    pub rule: Rule,
    /// What it is bound to.
    pub source: BindSource,
}

/// Binds each parameter of `sig` for `instr` (§7.1–§7.3). `invocation` is the task text when
/// known (at run time); statically it is `None`.
pub fn bind_tool(
    _program: &Program,
    _instr: &Instruction,
    _sig: &Signature,
    _invocation: Option<&str>,
) -> Vec<ParamBinding> {
    unimplemented!("bind::bind_tool is being built")
}

//! The calling convention (spec §7): how an instruction's reads become a tool's arguments.
//!
//! Everything here is a pure function of the program, the instruction and (for tools) the
//! signature, so the validator, the `ais!` macro and the runtime bind the same way and can never
//! disagree. The pieces:
//!
//! - [`ProgramIndex`]: the program's names indexed once — build it once per program and bind
//!   every instruction through it, each call costing time in the size of the instruction, not
//!   the program:
//!   - [`ProgramIndex::bind_tool`]: each parameter of a DU tool, bound by the first of the six
//!     rules of §7.1 that applies, with the [`Rule`] that bound it;
//!   - [`ProgramIndex::access`]: which side of §7.3 an instruction is on;
//!   - [`ProgramIndex::bind_slot`]: the operands of an SU slot (§7.1 last paragraph, §7.6),
//!     capped at [`SLOT_ARITY_CAP`];
//!   - [`ProgramIndex::bound_tools`], [`ProgramIndex::read_carries`],
//!     [`ProgramIndex::is_path_shaped_carry`], [`ProgramIndex::object_fields`].
//! - [`invocation_filename`]: the invocation fallback of §7.3, write side or read side.
//! - [`recover_writes`]: write-back of a result into `writes` (§2.3 step 4).
//! - The vocabularies of Appendix A.4 ([`CONTENT_NAMES`], [`PATH_NAMES`],
//!   [`is_path_shaped`]) and the carry-naming rule of §7.4 ([`is_bare_param_name`]).
//!
//! # The six rules, one example each
//!
//! The examples share a hidden helper that builds a one-instruction program; `ACT` instructions
//! are writes, `SENSE` instructions reads.
//!
//! **1. By name** — the carry whose name equals the parameter's. This looks at *every* carry of
//! the module, not only the instruction's reads: §7.4 says a carry literally named `path`
//! "hijacks the `path` parameter of *every* tool in the module", which is only true if rule 1
//! is not limited to `reads`. That is exactly why W13 forbids such names; the binding shows the
//! hijack (rule [`Rule::Name`], a carry the instruction does not read) so the validator can
//! point at it.
//!
//! ```
//! # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
//! # fn carry(n: &str) -> Carry { Carry { name: n.into(), ty: Some(Type::Str), ..Default::default() } }
//! # fn one(op: Opcode, carries: Vec<Carry>, reads: &[&str]) -> (Program, Instruction) {
//! #     let i = Instruction { id: "x".into(), opcode: op, reads: reads.iter().map(|s| s.to_string()).collect(), ..Default::default() };
//! #     (Program { walker: Some(Walker { carries: Some(carries), ..Default::default() }), nodes: Some(vec![i.clone()]), ..Default::default() }, i)
//! # }
//! // `search_path` was (wrongly) named `path`; the save reads only `report_md`.
//! let (p, save) = one(Opcode::Act, vec![carry("path"), carry("report_md")], &["report_md"]);
//! let b = ProgramIndex::new(&p).bind_tool(&save, &parse("(content, path) -> str").unwrap(), None);
//! assert_eq!(b[1].rule, Rule::Name);
//! assert_eq!(b[1].source, BindSource::Carry("path".into())); // the hijack of §7.4
//! ```
//!
//! **2. By object field** — `width` binds `spec.width` when `spec` is a carry of a declared
//! object type with a field `width`. The instruction's read carries are searched first (in
//! `reads` order), then the module's other carries (in declaration order), mirroring rule 1's
//! reach. The built-in object `outcome` has the fields `ok`, `error`, `output` and `value`.
//! Binding a field does not use up the carry: a later parameter may still bind the carry
//! itself.
//!
//! ```
//! # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
//! # fn one(op: Opcode, carries: Vec<Carry>, reads: &[&str]) -> (Program, Instruction) {
//! #     let i = Instruction { id: "x".into(), opcode: op, reads: reads.iter().map(|s| s.to_string()).collect(), ..Default::default() };
//! #     (Program { walker: Some(Walker { carries: Some(carries), ..Default::default() }), nodes: Some(vec![i.clone()]), ..Default::default() }, i)
//! # }
//! let spec = Carry { name: "spec".into(), ty: Some(Type::Named("Args".into())), ..Default::default() };
//! let (mut p, render) = one(Opcode::Code, vec![spec], &["spec"]);
//! p.types = Some(vec![TypeDecl {
//!     name: "Args".into(),
//!     kind: TypeKind::Object(vec![Field { name: "width".into(), ty: Some(Type::Int), ..Default::default() }]),
//!     ..Default::default()
//! }]);
//! let b = ProgramIndex::new(&p).bind_tool(&render, &parse("(width: int) -> str").unwrap(), None);
//! assert_eq!(b[0].rule, Rule::ObjectField);
//! assert_eq!(b[0].source, BindSource::Field { carry: "spec".into(), field: "width".into() });
//! ```
//!
//! **3. By role** (§7.2) — a content-named parameter ([`CONTENT_NAMES`]) binds the first
//! non-path-shaped read carry; a path parameter ([`PATH_NAMES`], or annotated `: path`) binds
//! the first path-shaped read carry. A carry counts as path-shaped by its name
//! ([`is_path_shaped`]) or by its declared type `path`; `task` never is.
//!
//! ```
//! # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
//! # fn carry(n: &str) -> Carry { Carry { name: n.into(), ty: Some(Type::Str), ..Default::default() } }
//! # fn one(op: Opcode, carries: Vec<Carry>, reads: &[&str]) -> (Program, Instruction) {
//! #     let i = Instruction { id: "x".into(), opcode: op, reads: reads.iter().map(|s| s.to_string()).collect(), ..Default::default() };
//! #     (Program { walker: Some(Walker { carries: Some(carries), ..Default::default() }), nodes: Some(vec![i.clone()]), ..Default::default() }, i)
//! # }
//! let (p, save) = one(Opcode::Act, vec![carry("out_file"), carry("document")], &["out_file", "document"]);
//! let b = ProgramIndex::new(&p).bind_tool(&save, &parse("(content, path) -> str").unwrap(), None);
//! assert_eq!((b[0].rule, b[0].carry()), (Rule::Role, Some("document")));
//! assert_eq!((b[1].rule, b[1].carry()), (Rule::Role, Some("out_file")));
//! ```
//!
//! **4. Positionally** — the i-th read carry for the i-th parameter, except that a path
//! parameter never binds a non-path-shaped carry this way: that refusal is what keeps
//! `save(path, content)` reading `[document]` from writing an empty file named after the
//! document (§7.1).
//!
//! ```
//! # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
//! # fn carry(n: &str) -> Carry { Carry { name: n.into(), ty: Some(Type::Str), ..Default::default() } }
//! # fn one(op: Opcode, carries: Vec<Carry>, reads: &[&str]) -> (Program, Instruction) {
//! #     let i = Instruction { id: "x".into(), opcode: op, reads: reads.iter().map(|s| s.to_string()).collect(), ..Default::default() };
//! #     (Program { walker: Some(Walker { carries: Some(carries), ..Default::default() }), nodes: Some(vec![i.clone()]), ..Default::default() }, i)
//! # }
//! let (p, join) = one(Opcode::Code, vec![carry("header_md"), carry("body_md")], &["header_md", "body_md"]);
//! let b = ProgramIndex::new(&p).bind_tool(&join, &parse("(a, b) -> str").unwrap(), None);
//! assert_eq!((b[0].rule, b[0].carry()), (Rule::Position, Some("header_md")));
//! assert_eq!((b[1].rule, b[1].carry()), (Rule::Position, Some("body_md")));
//! ```
//!
//! **5. Invocation fallback** (§7.3) — a path parameter still unbound takes a filename from
//! the invocation's task text ([`invocation_filename`]), write side for an `ACT` (or a `CODE`
//! served by an `ACT·artifact` tool), read side otherwise. Statically, with no invocation text,
//! the binding is `Invocation(None)`: resolved from the task at run time.
//!
//! ```
//! # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
//! # fn carry(n: &str) -> Carry { Carry { name: n.into(), ty: Some(Type::Str), ..Default::default() } }
//! # fn one(op: Opcode, carries: Vec<Carry>, reads: &[&str]) -> (Program, Instruction) {
//! #     let i = Instruction { id: "x".into(), opcode: op, reads: reads.iter().map(|s| s.to_string()).collect(), ..Default::default() };
//! #     (Program { walker: Some(Walker { carries: Some(carries), ..Default::default() }), nodes: Some(vec![i.clone()]), ..Default::default() }, i)
//! # }
//! let (p, save) = one(Opcode::Act, vec![carry("plan_md")], &["plan_md"]);
//! let sig = parse("(plan_md, path) -> str").unwrap();
//! let b = ProgramIndex::new(&p).bind_tool(&save, &sig, None);
//! assert_eq!((b[1].rule, &b[1].source), (Rule::InvocationFallback, &BindSource::Invocation(None)));
//! let b = ProgramIndex::new(&p).bind_tool(&save, &sig, Some("clean data.csv and save as out.csv"));
//! assert_eq!(b[1].source, BindSource::Invocation(Some("out.csv".into())));
//! ```
//!
//! **6. Unbound** — anything left is null. A path parameter whose invocation text names no
//! usable file ends here too; for a write, the runtime then derives a program-controlled
//! destination inside the run directory (§7.3), never an empty path.
//!
//! ```
//! # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
//! # fn one(op: Opcode, carries: Vec<Carry>, reads: &[&str]) -> (Program, Instruction) {
//! #     let i = Instruction { id: "x".into(), opcode: op, reads: reads.iter().map(|s| s.to_string()).collect(), ..Default::default() };
//! #     (Program { walker: Some(Walker { carries: Some(carries), ..Default::default() }), nodes: Some(vec![i.clone()]), ..Default::default() }, i)
//! # }
//! let (p, look) = one(Opcode::Sense, vec![], &[]);
//! let b = ProgramIndex::new(&p).bind_tool(&look, &parse("(query, path) -> str").unwrap(), Some("say hello"));
//! assert_eq!((b[0].rule, &b[0].source), (Rule::Unbound, &BindSource::Null));
//! assert_eq!((b[1].rule, &b[1].source), (Rule::Unbound, &BindSource::Null));
//! ```
//!
//! # Decisions where the spec is silent
//!
//! - **Read carries.** The "read carries" of rules 3 and 4 are the names in `reads` that are
//!   declared carries, in order, each once. A knowledge key is not a carry and takes no
//!   position; nor does a dangling name (the validator reports it). `task` counts even when it
//!   is not declared, since it always resolves to the invocation input (§5.1). A name that is
//!   both a carry and a knowledge key is a carry.
//! - **A carry binds one parameter by role or position.** Without this, `f(content, text)`
//!   reading `[a, b]` would pass `a` twice and drop `b`. The rules claim carries in order of
//!   strength: rule 1 first for every parameter (a name is an explicit choice and is never
//!   blocked), then rule 3 for every parameter in signature order, then rule 4 — each taking
//!   only carries no stronger rule (or earlier parameter under the same rule) has bound. So a
//!   weaker rule never takes a carry from a stronger one: in `grep(pattern, path)` reading
//!   `[search_path]` (§7.4), `path` binds `search_path` by role and `pattern` is left unbound
//!   instead of receiving the directory positionally. Rule 2 binds a field, not the carry, and
//!   claims nothing. Each parameter still ends up with the first rule that applies to it.
//! - **Case.** Rule 1 compares names exactly. The vocabularies of Appendix A.4 (content names,
//!   path names, path-shaped suffixes) are matched ASCII-case-insensitively, so `Path` and
//!   `OUT_FILE` are recognized; [`is_bare_param_name`] is exact, since only an exact name
//!   hijacks rule 1.
//! - **Typed paths.** A parameter annotated `: path` is a path parameter and a carry declared
//!   `type: path` is path-shaped, whatever their names: `path` is the type of a
//!   program-controlled file path, and a carry of that type handed to a content parameter by
//!   rule 3 would write the path's text instead of the content.
//! - **Which side.** Every instruction that is not a write ([`ProgramIndex::access`]) resolves its path
//!   parameters read side, as a `SENSE` does.

pub(crate) mod index;
mod invocation;
mod writeback;

pub(crate) use index::Map;
pub use index::ProgramIndex;
pub use invocation::{BARE_EXTENSIONS, FileMention, filename_mentions, invocation_filename};
pub use writeback::recover_writes;

use crate::program::{Instruction, ToolSurface, Type};
use crate::sig::{Param, Signature};

/// The cap on operands bound to one SU slot (Appendix A.2, §7.6).
pub const SLOT_ARITY_CAP: usize = 12;

/// Content names (§7.2, Appendix A.4): a parameter with one of these names binds by role to the
/// instruction's first non-path-shaped read carry.
pub const CONTENT_NAMES: [&str; 9] = [
    "content", "text", "data", "body", "code", "source", "markdown", "html", "payload",
];

/// Path names (§7.2, Appendix A.4): a parameter with one of these names binds by role to a
/// path-shaped read carry, never positionally to a non-path-shaped one, and falls back to the
/// invocation text (§7.3).
pub const PATH_NAMES: [&str; 12] = [
    "path",
    "out",
    "dest",
    "outfile",
    "filename",
    "file",
    "out_path",
    "output_path",
    "outpath",
    "target",
    "target_path",
    "dest_path",
];

/// Carry names that are path-shaped in full (Appendix A.4).
pub const PATH_SHAPED_NAMES: [&str; 2] = ["path", "filename"];

/// Suffixes that make a carry name path-shaped (Appendix A.4).
pub const PATH_SHAPED_SUFFIXES: [&str; 6] =
    ["_path", "_file", "_filename", "_dest", "_out", "_target"];

/// The bare tool-parameter names no carry may have (§7.4, W13) — exactly the spec's list.
pub const BARE_PARAM_NAMES: [&str; 7] = ["path", "content", "text", "data", "file", "out", "dest"];

/// True when `name` is a content name (ASCII case-insensitive).
///
/// ```
/// assert!(ais_core::bind::is_content_name("markdown"));
/// assert!(!ais_core::bind::is_content_name("plan_md"));
/// ```
pub fn is_content_name(name: &str) -> bool {
    CONTENT_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// True when `name` is a path name (ASCII case-insensitive).
///
/// ```
/// assert!(ais_core::bind::is_path_name("out_path"));
/// assert!(!ais_core::bind::is_path_name("src_path")); // path-shaped as a carry, but not a path *name*
/// ```
pub fn is_path_name(name: &str) -> bool {
    PATH_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// True when a carry with this name is path-shaped (§7.2): `path`, `filename`, or a name ending
/// in `_path`, `_file`, `_filename`, `_dest`, `_out` or `_target` (ASCII case-insensitive).
/// `task` never is.
///
/// ```
/// use ais_core::bind::is_path_shaped;
/// assert!(is_path_shaped("search_path") && is_path_shaped("out_file") && is_path_shaped("filename"));
/// assert!(!is_path_shaped("task") && !is_path_shaped("document") && !is_path_shaped("_path"));
/// ```
pub fn is_path_shaped(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower == "task" {
        return false;
    }
    PATH_SHAPED_NAMES.contains(&lower.as_str())
        || PATH_SHAPED_SUFFIXES
            .iter()
            .any(|s| lower.len() > s.len() && lower.ends_with(s))
}

/// True when `name` is one of the bare tool-parameter names a carry must not have (§7.4, W13):
/// `path`, `content`, `text`, `data`, `file`, `out`, `dest`. Exact: rule 1 compares names
/// exactly, so only the exact name hijacks.
///
/// ```
/// use ais_core::bind::is_bare_param_name;
/// assert!(is_bare_param_name("path") && is_bare_param_name("out"));
/// assert!(!is_bare_param_name("search_path") && !is_bare_param_name("body") && !is_bare_param_name("Path"));
/// ```
pub fn is_bare_param_name(name: &str) -> bool {
    BARE_PARAM_NAMES.contains(&name)
}

/// True when `param` is a path parameter: a path name, or annotated `: path`.
pub fn is_path_param(param: &Param) -> bool {
    is_path_name(&param.name) || param.ty == Some(Type::Path)
}

/// True when `param` is a content parameter: a content name that is not a path parameter.
pub fn is_content_param(param: &Param) -> bool {
    is_content_name(&param.name) && !is_path_param(param)
}

/// True when a tool of this surface writes across the user line: `ACT·artifact`, or a surface
/// that is not one (§12.2 reads it as `ACT·artifact`). Such a tool makes the instruction it
/// serves a write ([`ProgramIndex::access`]).
///
/// ```
/// use ais_core::{ToolSurface, bind::is_artifact_surface};
/// assert!(is_artifact_surface(&ToolSurface::ActArtifact));
/// assert!(is_artifact_surface(&ToolSurface::Unknown("write".into())));
/// assert!(!is_artifact_surface(&ToolSurface::Act) && !is_artifact_surface(&ToolSurface::Sense));
/// ```
pub fn is_artifact_surface(surface: &ToolSurface) -> bool {
    matches!(surface, ToolSurface::ActArtifact | ToolSurface::Unknown(_))
}

/// The rule that bound a parameter (§7.1), in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// 1: the carry whose name equals the parameter's.
    Name,
    /// 2: the field of an object-typed carry (read carries first) whose name equals the
    /// parameter's.
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

impl Rule {
    /// The rule's number in §7.1 (1–6).
    pub fn number(self) -> u8 {
        match self {
            Rule::Name => 1,
            Rule::ObjectField => 2,
            Rule::Role => 3,
            Rule::Position => 4,
            Rule::InvocationFallback => 5,
            Rule::Unbound => 6,
        }
    }

    /// The rule's name as §7.1 words it: `by name`, `by object field`, `by role`,
    /// `positionally`, `by invocation fallback`, `unbound`.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::Name => "by name",
            Rule::ObjectField => "by object field",
            Rule::Role => "by role",
            Rule::Position => "positionally",
            Rule::InvocationFallback => "by invocation fallback",
            Rule::Unbound => "unbound",
        }
    }
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

impl ParamBinding {
    /// The carry this binding reads, whole or through a field.
    pub fn carry(&self) -> Option<&str> {
        match &self.source {
            BindSource::Carry(c) | BindSource::Field { carry: c, .. } => Some(c),
            _ => None,
        }
    }
}

/// Which side of §7.3 an instruction's path parameters resolve on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// A read: path parameters take the filename following a read verb.
    Read,
    /// A write: path parameters take the filename following a save/output/write verb.
    Write,
}

/// [`ProgramIndex::bind_tool`]: time in the size of the instruction and the signature.
fn bind_tool_with(
    ix: &ProgramIndex,
    instr: &Instruction,
    sig: &Signature,
    invocation: Option<&str>,
) -> Vec<ParamBinding> {
    let reads = ix.read_carries(instr);
    let side = ix.access(instr);
    let mut bound: Vec<Option<(Rule, BindSource)>> = vec![None; sig.params.len()];
    // Carries bound so far by name, role or position: a weaker rule never binds them again.
    let mut used: Vec<&str> = Vec::new();

    // Rule 1, for every parameter: a carry named like a parameter is that parameter's.
    for (slot, p) in bound.iter_mut().zip(&sig.params) {
        let declared = ix.carry(&p.name).is_some();
        let task_input = p.name == "task" && reads.contains(&"task");
        if declared || task_input {
            used.push(p.name.as_str());
            *slot = Some((Rule::Name, BindSource::Carry(p.name.clone())));
        }
    }
    // Rule 2: a field binds without using up its carry.
    for (slot, p) in bound.iter_mut().zip(&sig.params) {
        if slot.is_none()
            && let Some(carry) = ix.field_carry(&reads, &p.name)
        {
            let (carry, field) = (carry.name.clone(), p.name.clone());
            *slot = Some((Rule::ObjectField, BindSource::Field { carry, field }));
        }
    }
    // Rule 3, in signature order.
    for (slot, p) in bound.iter_mut().zip(&sig.params) {
        if slot.is_none()
            && let Some(c) = role_binding(ix, &reads, &used, p)
        {
            used.push(c);
            *slot = Some((Rule::Role, BindSource::Carry(c.to_owned())));
        }
    }
    // Rule 4: the i-th read carry, never a non-path-shaped one into a path parameter.
    for (i, (slot, p)) in bound.iter_mut().zip(&sig.params).enumerate() {
        if slot.is_none()
            && let Some(c) = reads
                .get(i)
                .copied()
                .filter(|c| !used.contains(c) && (!is_path_param(p) || ix.is_path_shaped_carry(c)))
        {
            used.push(c);
            *slot = Some((Rule::Position, BindSource::Carry(c.to_owned())));
        }
    }
    // Rules 5 and 6.
    let fallback = invocation.map(|text| invocation_filename(text, side));
    sig.params
        .iter()
        .zip(bound)
        .map(|(p, slot)| {
            let (rule, source) = slot.unwrap_or_else(|| {
                if !is_path_param(p) {
                    return (Rule::Unbound, BindSource::Null);
                }
                match &fallback {
                    None => (Rule::InvocationFallback, BindSource::Invocation(None)),
                    Some(Some(f)) => (
                        Rule::InvocationFallback,
                        BindSource::Invocation(Some(f.clone())),
                    ),
                    Some(None) => (Rule::Unbound, BindSource::Null),
                }
            });
            ParamBinding {
                param: p.name.clone(),
                rule,
                source,
            }
        })
        .collect()
}

/// Rule 3: a content parameter takes the first unused non-path-shaped read carry; a path
/// parameter the first unused path-shaped one.
fn role_binding<'i>(
    ix: &ProgramIndex,
    reads: &[&'i str],
    used: &[&str],
    p: &Param,
) -> Option<&'i str> {
    let want_path = if is_path_param(p) {
        true
    } else if is_content_param(p) {
        false
    } else {
        return None;
    };
    reads
        .iter()
        .copied()
        .find(|c| !used.contains(c) && ix.is_path_shaped_carry(c) == want_path)
}

/// One operand of an SU slot.
#[derive(Clone, Debug, PartialEq)]
pub enum SlotOperand {
    /// A read carry, passed as the parameter of the same name.
    Carry(String),
    /// The composed context operand holding the reads beyond the cap, by name (§7.6).
    Context {
        /// The parameter name: `context`, or `context_2`, `context_3`, … when a carry operand
        /// of the slot already has that name.
        name: String,
        /// The carries it holds, in `reads` order; at run time a map from each name to its value.
        carries: Vec<String>,
    },
}

impl SlotOperand {
    /// The operand's parameter name in the slot's declaration and at its call site.
    pub fn name(&self) -> &str {
        match self {
            SlotOperand::Carry(c) => c,
            SlotOperand::Context { name, .. } => name,
        }
    }
}

/// The operands of an SU slot (§7.1 last paragraph, §7.6).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SlotOperands {
    /// At most [`SLOT_ARITY_CAP`] operands: the instruction's read carries in `reads` order;
    /// past the cap, the first `SLOT_ARITY_CAP - 1` carries and then one
    /// [`SlotOperand::Context`] holding the rest.
    pub operands: Vec<SlotOperand>,
    /// The knowledge folded into the slot's semantic operand, in `knowledge` declaration order:
    /// the items resident on the instruction (§5.2) and any knowledge key its `reads` names.
    /// None of them is a parameter.
    pub knowledge: Vec<String>,
}

impl SlotOperands {
    /// The operands' parameter names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.operands.iter().map(SlotOperand::name).collect()
    }
}

/// [`ProgramIndex::bind_slot`]: time in the size of the instruction.
fn bind_slot_with(ix: &ProgramIndex, instr: &Instruction) -> SlotOperands {
    let reads = ix.read_carries(instr);
    let operands = if reads.len() <= SLOT_ARITY_CAP {
        reads
            .iter()
            .map(|c| SlotOperand::Carry((*c).to_owned()))
            .collect()
    } else {
        let (kept, rest) = reads.split_at(SLOT_ARITY_CAP - 1);
        let mut name = "context".to_owned();
        let mut n = 1;
        while kept.contains(&name.as_str()) {
            n += 1;
            name = format!("context_{n}");
        }
        let mut ops: Vec<SlotOperand> = kept
            .iter()
            .map(|c| SlotOperand::Carry((*c).to_owned()))
            .collect();
        ops.push(SlotOperand::Context {
            name,
            carries: rest.iter().map(|c| (*c).to_owned()).collect(),
        });
        ops
    };
    // The items resident on the instruction, and for each knowledge key its `reads` names (a
    // name that is not a carry) the first item so named: that is the earliest item the key
    // selects, so taking the names in the order of these indices, each once, is the
    // declaration order of §7.6.
    let mut selected: Vec<usize> = ix.resident_on(&instr.id).to_vec();
    selected.extend(
        instr
            .reads
            .iter()
            .filter(|r| ix.carry(r).is_none())
            .filter_map(|r| ix.knowledge_item(r).map(|(k, _)| k)),
    );
    selected.sort_unstable();
    selected.dedup();
    let mut knowledge: Vec<String> = Vec::new();
    for k in selected {
        if let Some(item) = ix.program().knowledge_list().get(k)
            && !knowledge.contains(&item.name)
        {
            knowledge.push(item.name.clone());
        }
    }
    SlotOperands {
        operands,
        knowledge,
    }
}

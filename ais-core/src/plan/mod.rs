//! The plan: a program lowered to the runnable form the runtime interprets.
//!
//! [`lower`] turns a [`Program`] whose check outcome is not `failed` (no X5 finding) into a
//! [`Plan`]: one [`Step`] per instruction with its unit, its executor (a tool pipeline with
//! every parameter bound, a **compiled** CODE body, a model slot with its operands and tools,
//! a fan-out, a sub-program, …), the carries it reads and writes (resolved to indices into
//! [`Plan::carries`]), its result type (§6.4), its LOOP control, and its outgoing edges split
//! into guarded (with **compiled** guards) and default, each in edge order. Nothing in a plan
//! is parsed again at run time, and every name a step uses is resolved to an index where the
//! program declares it.
//!
//! The plan holds only owned, immutable data: it is `Send + Sync` and can be shared across
//! tasks behind an `Arc`.
//!
//! ```
//! use ais_core::plan::{self, Executor, Next};
//! use ais_core::{Carry, Edge, Instruction, Opcode, Owner, Program, Type, Walker};
//! use ais_core::Value;
//!
//! let carry = |name: &str, ty| Carry { name: name.into(), ty: Some(ty), ..Carry::default() };
//! let program = Program {
//!     walker: Some(Walker {
//!         carries: Some(vec![carry("task", Type::Str), carry("n", Type::Int)]),
//!         ..Walker::default()
//!     }),
//!     nodes: Some(vec![
//!         Instruction {
//!             id: "count".into(),
//!             opcode: Opcode::Code,
//!             reads: vec!["task".into()],
//!             writes: vec!["n".into()],
//!             body: Some("len(task)".into()),
//!             ..Instruction::default()
//!         },
//!         Instruction { id: "long".into(), opcode: Opcode::Terminal, ..Instruction::default() },
//!         Instruction { id: "short".into(), opcode: Opcode::Terminal, ..Instruction::default() },
//!     ]),
//!     edges: Some(vec![
//!         Edge { from: "count".into(), to: "long".into(), guard: Some("n > 3".into()), ..Edge::default() },
//!         Edge { from: "count".into(), to: "short".into(), ..Edge::default() },
//!     ]),
//!     ..Program::default()
//! };
//! let plan = plan::lower(&program).expect("the program lowers");
//! let count = &plan.steps[0];
//! assert_eq!(count.writes[0].index, Some(1)); // `n` is carry 1
//! let Executor::Inline(body) = &count.executor else { panic!("a compiled body") };
//!
//! let mut carries = indexmap::IndexMap::new();
//! carries.insert("task".to_owned(), Value::from("hello"));
//! let n = body.compiled.eval(&carries).unwrap();
//! assert_eq!(n, Value::Int(5));
//! carries.insert("n".to_owned(), n);
//! let Ok(Next::Take(t)) = count.next(&carries) else { panic!("an edge") };
//! assert_eq!(plan.steps[t.to].id, "long");
//! ```

mod build;
pub mod builtins;

use crate::bind::{Access, ParamBinding, SlotOperands};
use crate::diag::Finding;
use crate::expr::{Carries, Compiled, ExprError};
use crate::program::{Isolation, Opcode, Program, ToolSurface, Type};
use crate::sig::Signature;
use crate::value::Value;

pub use builtins::{BUILTINS, Builtin, BuiltinSurface, builtin};

/// Lowers a program to its plan, or returns the X5 findings (fatal) that say why it does not
/// lower. Only X5 stops lowering: a program with other residual findings (a hollow step, an
/// undeclared carry) still lowers, and those steps say so in their executor or in an unresolved
/// [`CarryRef`].
pub fn lower(program: &Program) -> Result<Plan, Vec<Finding>> {
    let ix = crate::check::index::Index::new(program);
    let errs = crate::check::x5::x5_findings(&ix);
    lower_indexed(&ix, &errs)
}

/// [`lower`] over an index already built, with its X5 findings already found (the validator's,
/// when it lowers what it checked: [`crate::check::check_lowering`]).
pub(crate) fn lower_indexed(
    ix: &crate::check::index::Index,
    x5: &[Finding],
) -> Result<Plan, Vec<Finding>> {
    if x5.is_empty() {
        build::build(ix)
    } else {
        Err(x5.to_vec())
    }
}

/// The lowered program.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The entry step (`nodes[0]`), when there is one.
    pub entry: Option<usize>,
    /// One step per instruction, in program order (indices match `Program::nodes`).
    pub steps: Vec<Step>,
    /// The declared carries, in declaration order (indices match `walker.carries`); a
    /// [`CarryRef::index`] points in here.
    pub carries: Vec<PlanCarry>,
}

/// A declared carry, as the runtime needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanCarry {
    /// Its name.
    pub name: String,
    /// Its declared type (`None`: untyped, checked at run time).
    pub ty: Option<Type>,
    /// `role: input`: supplied by the caller (or, other than `task`, asked of a human).
    pub input: bool,
    /// Its declared `default`.
    pub default: Option<Value>,
}

/// A carry a step names, resolved.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CarryRef {
    /// The name as the instruction spells it.
    pub name: String,
    /// The index of its first declaration in [`Plan::carries`]; `None` when it is not declared
    /// (a W8/W9 finding, not fatal: the runtime keeps it by name).
    pub index: Option<usize>,
}

/// One lowered instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The instruction's id.
    pub id: String,
    /// Its opcode.
    pub opcode: Opcode,
    /// The unit that runs it.
    pub unit: Unit,
    /// What runs.
    pub executor: Executor,
    /// The carries it reads, in `reads` order.
    pub reads: Vec<CarryRef>,
    /// The carries it writes, in `writes` order; `writes[0]` receives the result.
    pub writes: Vec<CarryRef>,
    /// The type of the value it writes to `writes[0]` (§6.4); `None` when it writes nothing.
    pub result: Option<Type>,
    /// Whether its path parameters resolve on the read or the write side (§7.3).
    pub access: Access,
    /// For a `LOOP`: its verdict, cap, counter and which edges go back and which advance
    /// (boxed, as are the executor's larger forms: a plan of many steps holds every step).
    pub looping: Option<Box<LoopControl>>,
    /// Its guarded outgoing edges, in edge order (guards are tried in this order).
    pub guarded: Vec<Transition>,
    /// Its unguarded (or sentinel-guarded) outgoing edges: the default transitions.
    pub default: Vec<Transition>,
}

/// The transition a step takes (spec §4.4.1), from [`Step::next`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next<'a> {
    /// Take this transition.
    Take(&'a Transition),
    /// Several guarded edges, none holds, and no default: the run must fault, reporting that
    /// the discriminator fell outside the guard set.
    DeadEnd,
    /// No outgoing edges: the step halts.
    Halt,
}

impl Step {
    /// The transition to take after this step, by spec §4.4.1: the first guarded edge whose
    /// guard holds; otherwise the first default edge; otherwise, when exactly one edge is
    /// guarded and none is default, that edge (its guard is a precondition of a transition that
    /// must happen); otherwise [`Next::DeadEnd`]. A guard that fails to evaluate is returned
    /// with its edge's index. A `LOOP` chooses by its [`LoopControl`] instead.
    pub fn next<C: Carries + ?Sized>(&self, carries: &C) -> Result<Next<'_>, (usize, ExprError)> {
        next(&self.guarded, &self.default, carries)
    }
}

/// [`Step::next`] over a step's `guarded` and `default` transitions alone, for a caller that
/// keeps only those of the step.
pub fn next<'a, C: Carries + ?Sized>(
    guarded: &'a [Transition],
    default: &'a [Transition],
    carries: &C,
) -> Result<Next<'a>, (usize, ExprError)> {
    if guarded.is_empty() && default.is_empty() {
        return Ok(Next::Halt);
    }
    if default.is_empty() && guarded.len() == 1 {
        return Ok(Next::Take(&guarded[0]));
    }
    for t in guarded {
        if let Some(g) = &t.guard
            && g.compiled.eval_bool(carries).map_err(|e| (t.edge, e))?
        {
            return Ok(Next::Take(t));
        }
    }
    Ok(default.first().map_or(Next::DeadEnd, Next::Take))
}

/// The execution unit of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// The Deterministic Unit (code).
    Code,
    /// The Stochastic Unit (a model).
    Model,
}

/// An expression compiled once, with the text it was compiled from (for traces and messages).
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledExpr {
    /// The source text, as written.
    pub text: String,
    /// The checked, compiled form: evaluate it with [`Compiled::eval`] /
    /// [`Compiled::eval_bool`].
    pub compiled: Compiled,
}

/// One outgoing transition.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The edge's index in `edges`.
    pub edge: usize,
    /// The target step.
    pub to: usize,
    /// The compiled guard, for a guarded edge (`None` for a default edge), boxed: most
    /// transitions have none.
    pub guard: Option<Box<CompiledExpr>>,
}

/// A `LOOP`'s control (§4.4.2): advance when the verdict holds or the cap is reached, else
/// take the back edge. The fields are `None` where the program does not declare them (X2
/// reports it; the step budget still bounds the run).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopControl {
    /// The bool verdict carry.
    pub verdict: Option<CarryRef>,
    /// The iteration cap (at least 1 when declared validly; a cap below 1 is `None`).
    pub cap: Option<u64>,
    /// The int counter carry.
    pub counter: Option<CarryRef>,
    /// The edges (indices in `edges`) that go back into the loop's strongly connected
    /// component, in edge order.
    pub back: Vec<usize>,
    /// The edges that leave the loop (advance), in edge order.
    pub advance: Vec<usize>,
}

/// What a step runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Executor {
    /// Tools in pipeline order; the last one's result is the step's result (§5.4).
    Tools(Vec<ToolCall>),
    /// A CODE instruction's inline single-expression body, compiled.
    Inline(Box<CompiledExpr>),
    /// A model slot: its operands, folded knowledge and the tools it may reach for.
    Slot(Box<Slot>),
    /// A tool-less ACT that writes a text carry to a program-controlled path (§4.2.2).
    WriteOut(CarryRef),
    /// A tool-less ACT that runs a program carry (§4.1 author-then-run).
    RunProgram(CarryRef),
    /// A DU ROUTE or LOOP with no tool: it only branches.
    Branch,
    /// A SPAWN: fan out, run the siblings concurrently, join into `writes[0]` (§4.4.4).
    Spawn(Box<Spawn>),
    /// A CALL of a sub-program (`target`), or a nested slot when there is none (§4.4.3).
    Call(Box<Call>),
    /// The TERMINAL: serialize the report and halt.
    Terminal,
    /// A hollow DU instruction (X1): at run time it yields an error value. The reason.
    Hollow(String),
    /// An unknown opcode (W2): never skipped; at run time it yields an error value.
    Unsupported(String),
}

/// A model slot (§7.1 last paragraph, §7.6).
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    /// The operands (read carries, capped, with the excess in one context operand) and the
    /// knowledge folded into the semantic operand.
    pub operands: SlotOperands,
    /// The tools of its `autonomy`, in the order written: the model supplies their arguments.
    pub tools: Vec<ToolRef>,
}

/// A SPAWN's fan-out (§4.4.4). The join fills the step's `writes[0]` only: a list or text
/// join has nothing to recover further writes from (§2.3), and the check reports any (G8).
#[derive(Clone, Debug, PartialEq)]
pub struct Spawn {
    /// Where the sub-tasks come from.
    pub source: FanOut,
    /// The declared isolation; an unknown or missing mode is `orchestrator_owned` (§12.2).
    pub isolation: Isolation,
    /// The most siblings run at once, when declared (a value below 1 is `None`).
    pub max_parallel: Option<usize>,
    /// The worker slot each sibling runs over its sub-task.
    pub worker: SlotOperands,
}

/// The fan-out source of a SPAWN, resolved in the order of §4.4.4.
#[derive(Clone, Debug, PartialEq)]
pub enum FanOut {
    /// A list-typed read carry: one sibling per element.
    Carry(CarryRef),
    /// A literal `concurrency.spawn` list: one sibling per entry.
    List(Vec<String>),
    /// Neither: the invocation's `task`, a fan-out of one.
    Task,
}

/// A CALL (§4.4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The sub-program (`target`), or `None` for a nested slot.
    pub target: Option<String>,
    /// The operands it binds (its reads, capped as for a slot).
    pub operands: SlotOperands,
}

/// A tool a step can run: declared (by index) or built in, with how it runs and its signature.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRef {
    /// The tool's name.
    pub name: String,
    /// Its index in `tools`, or `None` for a built-in the program does not declare.
    pub index: Option<usize>,
    /// How it runs.
    pub kind: ToolKind,
    /// Its signature (declared, derived from its body's `def`, or the built-in's).
    pub signature: Signature,
    /// Where its effect lands (a built-in's own surface when undeclared).
    pub surface: Option<ToolSurface>,
}

/// One bound tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// Its index in `tools`, or `None` for a built-in the program does not declare.
    pub index: Option<usize>,
    /// How it runs.
    pub kind: ToolKind,
    /// Each parameter's binding, in signature order. A path parameter bound
    /// [`BindSource::Invocation(None)`](crate::bind::BindSource::Invocation) takes its
    /// filename from the task at run time, on the step's [`Step::access`] side.
    pub bindings: Vec<ParamBinding>,
    /// Its declared result type, when it declares one.
    pub returns: Option<Type>,
    /// Its full signature (a multi-value return recovers into several writes).
    pub signature: Signature,
    /// Where its effect lands.
    pub surface: Option<ToolSurface>,
}

/// How a tool runs (the embodiment ladder, §5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolKind {
    /// Its `body`, in `lang` (`python` unless stated).
    Body(String),
    /// Its `command`.
    Command,
    /// The implementation's built-in of that name.
    Builtin,
}

#[cfg(all(test, feature = "agir"))]
mod tests;

//! Lowering: the executable plan the runtime runs, and X5 — the compile oracle (G4) — which is
//! exactly the failure of lowering.
//!
//! Per instruction the plan holds its unit, its resolved executor (a tool pipeline, an inline
//! CODE body, a model slot, a tool-less ACT's write-out, a branch, a fan-out, a sub-program,
//! the terminal), the parameter bindings of each tool (from [`crate::bind`]), its result type
//! (§6.4) and its outgoing edges split into guarded and default.
//!
//! Lowering fails (X5, fatal) when a tool signature does not parse or is missing, bindings
//! transpose a path and its content, the binding mechanisms of §5.4 disagree, a type does not
//! resolve, a guard or CODE body does not parse or type-check, or a GEN-ENUM has no enum to
//! produce. Conditions with their own check (a hollow instruction, X1; an unknown opcode, W2)
//! lower to [`Executor::Hollow`] / [`Executor::Unsupported`] so the program still has a plan,
//! and those checks report them.

use super::executable::{hollow_reason, implicit_act_source, real_guard};
use super::index::Map as HashMap;
use super::index::{Index, ToolRef};
use crate::bind::{BindSource, ParamBinding, Rule, is_content_param, is_path_param};
use crate::diag::{CheckId, Finding, Repair, Severity, did_you_mean};
use crate::model::{Opcode, Owner, Program, Type, TypeKind};
use crate::sig::Return;
use crate::source::{Element, Locus};

type Demands = HashMap<String, Vec<super::types::Demand>>;

/// The lowered program.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The entry step (`nodes[0]`), when there is one.
    pub entry: Option<usize>,
    /// One step per instruction, in program order (indices match `Program::nodes`).
    pub steps: Vec<Step>,
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
    /// The type of the value it writes to `writes[0]` (§6.4); `None` when it writes nothing.
    pub result: Option<Type>,
    /// Its guarded outgoing edges, in edge order (guards are tried in this order).
    pub guarded: Vec<Transition>,
    /// Its unguarded (or sentinel-guarded) outgoing edges: the default transitions.
    pub default: Vec<Transition>,
}

/// The execution unit of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// The Deterministic Unit (code).
    Code,
    /// The Stochastic Unit (a model).
    Model,
}

/// One outgoing transition.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The edge's index in `edges`.
    pub edge: usize,
    /// The target step.
    pub to: usize,
    /// The guard, for a guarded edge.
    pub guard: Option<String>,
}

/// What a step runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Executor {
    /// Tools in pipeline order; the last one's result is the step's result (§5.4).
    Tools(Vec<ToolCall>),
    /// A CODE instruction's inline single-expression body.
    Inline(String),
    /// A model slot: its operands (the read carries, capped at
    /// [`crate::bind::SLOT_ARITY_CAP`] with the excess folded into one context operand) and
    /// the knowledge folded into its semantic operand (§7.1, §7.6).
    Slot(crate::bind::SlotOperands),
    /// A tool-less ACT that writes a text carry to a program-controlled path (§4.2.2).
    WriteOut(String),
    /// A tool-less ACT that runs a program carry (§4.1 author-then-run).
    RunProgram(String),
    /// A DU ROUTE with no tool: it only branches.
    Branch,
    /// A SPAWN: fan out over the list operand, `concurrency.spawn`, or the task.
    Spawn,
    /// A CALL of a sub-program (`target`), or a nested slot when there is none.
    Call(Option<String>),
    /// The TERMINAL: serialize the report and halt.
    Terminal,
    /// A hollow DU instruction (X1): at run time it yields an error value.
    Hollow(String),
    /// An unknown opcode (W2): never skipped; at run time it yields an error value.
    Unsupported(String),
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
    /// Each parameter's binding, in signature order.
    pub bindings: Vec<ParamBinding>,
    /// Its declared result type, when it declares one.
    pub returns: Option<Type>,
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

/// Lowers a program to its plan, or returns the X5 findings that say why it does not lower.
pub fn lower(program: &Program) -> Result<Plan, Vec<Finding>> {
    lower_with(&Index::new(program))
}

/// Lowers with a prebuilt index.
pub(crate) fn lower_with(ix: &Index) -> Result<Plan, Vec<Finding>> {
    let mut errs: Vec<Finding> = super::required::no_program(ix).into_iter().collect();
    types_resolve(ix, &mut errs);
    signatures_parse(ix, &mut errs);
    guards_check(ix, &mut errs);
    let demands = super::types::demands(ix);
    let steps: Vec<Step> = (0..ix.p.instructions().len())
        .map(|i| lower_step(ix, i, &demands, &mut errs))
        .collect();
    if errs.is_empty() {
        Ok(Plan {
            entry: (!steps.is_empty()).then_some(0),
            steps,
        })
    } else {
        Err(errs)
    }
}

fn x5(locus: Locus, message: String, repair: String) -> Finding {
    Finding::new(CheckId::X5, Severity::Fatal, locus, message).with_repair(Repair::manual(repair))
}

/// Every declared type resolves: carry types, instruction `output`s and object field types are
/// primitives, declared enums/objects, or `outcome`.
fn types_resolve(ix: &Index, errs: &mut Vec<Finding>) {
    let names: Vec<&str> =
        ix.p.type_list()
            .iter()
            .map(|t| t.name.as_str())
            .chain(std::iter::once(super::index::OUTCOME))
            .collect();
    let mut unresolved = |ty: &Type, locus: Locus, owner: String, instr: Option<String>| {
        if ix.type_resolves(ty) {
            return;
        }
        let text = ty.to_string();
        let base = text
            .trim_start_matches("list[")
            .trim_start_matches("dict[str,")
            .trim_end_matches(']')
            .trim();
        let sugg = did_you_mean(base, names.iter().copied());
        let repair = match sugg.first() {
            Some(s) => format!("change `{text}` to use `{s}` on {owner}"),
            None => format!(
                "declare type `{base}` under `types`, or use a primitive (str, int, float, bool, list, dict) on {owner}"
            ),
        };
        let mut f = x5(locus, format!("{owner} has type `{text}`, which does not resolve to a primitive or a declared type"), repair)
            .with_suggestions(sugg);
        f.instruction = instr;
        errs.push(f);
    };
    for (c, carry) in ix.p.carries().iter().enumerate() {
        if let Some(t) = &carry.ty {
            unresolved(
                t,
                Locus::field(Element::Carry(c), "type"),
                format!("carry `{}`", carry.name),
                None,
            );
        }
    }
    for (i, n) in ix.p.instructions().iter().enumerate() {
        if let Some(t) = &n.output {
            unresolved(
                t,
                Locus::field(Element::Instruction(i), "output"),
                format!("the `output` of `{}`", n.id),
                Some(n.id.clone()),
            );
        }
    }
    for (t, decl) in ix.p.type_list().iter().enumerate() {
        if let TypeKind::Object(fields) = &decl.kind {
            for (j, f) in fields.iter().enumerate() {
                if let Some(ty) = &f.ty {
                    unresolved(
                        ty,
                        Locus::element(Element::TypeField(t, j)),
                        format!("field `{}.{}`", decl.name, f.name),
                        None,
                    );
                }
            }
        }
    }
}

/// Every tool an instruction runs has a signature that parses.
fn signatures_parse(ix: &Index, errs: &mut Vec<Finding>) {
    for (t, tool) in ix.p.tool_list().iter().enumerate() {
        let used = ix.tool_users.get(t).is_some_and(|u| !u.is_empty());
        match ix.sigs.get(t) {
            Some(Some(Err(e))) => errs.push(x5(
                Locus::field(Element::Tool(t), "sig"),
                format!("the signature of tool `{}` does not parse: {e}", tool.name),
                format!("write `sig` of `{}` as `\"(param, …) -> type\"`", tool.name),
            )),
            Some(None) if used && super::executable::tool_runs(tool) => errs.push(x5(
                Locus::element(Element::Tool(t)),
                format!("tool `{}` has no `sig` (and its body has no `def {}(…)`), so its parameters cannot be bound", tool.name, tool.name),
                format!("add `sig: \"(param, …) -> type\"` to tool `{}`", tool.name),
            )),
            _ => {}
        }
    }
}

/// Every real guard parses and type-checks as a `bool` over the program's carries.
fn guards_check(ix: &Index, errs: &mut Vec<Finding>) {
    for (e, edge) in ix.p.edge_list().iter().enumerate() {
        let Some(g) = real_guard(edge.guard.as_deref()) else {
            continue;
        };
        if let Err(err) = ix.check_guard(g) {
            let mut f = x5(
                Locus::field(Element::Edge(e), "guard"),
                format!(
                    "the guard `{g}` on edge `{}` -> `{}` does not check ({} at {}:{}): {}",
                    edge.from, edge.to, err.category, err.line, err.column, err.message
                ),
                "write the guard as a comparison over a carry, e.g. `<carry> == true`, or drop it to make the edge the default".to_owned(),
            );
            f.instruction = Some(edge.from.clone());
            errs.push(f);
        }
    }
}

fn lower_step(ix: &Index, i: usize, demands: &Demands, errs: &mut Vec<Finding>) -> Step {
    let Some(n) = ix.node(i) else {
        return Step {
            id: String::new(),
            opcode: Opcode::Unknown(String::new()),
            unit: Unit::Code,
            executor: Executor::Unsupported(String::new()),
            result: None,
            guarded: Vec::new(),
            default: Vec::new(),
        };
    };
    let unit = match n.effective_owner() {
        Some(Owner::Model) => Unit::Model,
        _ => Unit::Code,
    };
    let el = Element::Instruction(i);
    let fail = |errs: &mut Vec<Finding>, locus: Locus, message: String, repair: String| {
        let mut f = x5(locus, message, repair);
        f.instruction = Some(n.id.clone());
        errs.push(f);
    };
    let binding = &ix.binding[i];
    if let Some(c) = &binding.conflict {
        fail(
            errs,
            Locus::field(el, "tool"),
            format!("the tool binding of `{}` is ambiguous: {c}", n.id),
            format!(
                "bind `{}` one way only: drop its `tool` field, or make that tool the one that `serves` it",
                n.id
            ),
        );
    }
    let calls = ix.calls.get(i).cloned().unwrap_or_default();
    for call in &calls {
        let name = tool_name(ix, call.tool);
        for (p, b) in call.sig.params.iter().zip(&call.bindings) {
            if let Some((problem, repair)) = transposition(ix, &n.id, p, b) {
                let j = match &b.source {
                    BindSource::Carry(c) => n.reads.iter().position(|r| r == c),
                    _ => None,
                };
                let locus = match j {
                    Some(j) => Locus::entry(el, "reads", j),
                    None => Locus::field(el, "reads"),
                };
                fail(
                    errs,
                    locus,
                    format!(
                        "`{}` would call `{name}` with {problem}: the call writes or reads the wrong thing",
                        n.id
                    ),
                    repair,
                );
            }
        }
    }
    for (k, t) in n.autonomy.iter().flat_map(|a| a.tools.iter()).enumerate() {
        if ix.tool_index(t).is_none() && super::builtins::builtin(t).is_none() {
            let names =
                ix.p.tool_list()
                    .iter()
                    .map(|t| t.name.as_str())
                    .chain(super::builtins::BUILTINS.iter().map(|b| b.name));
            let sugg = did_you_mean(t, names);
            let repair = match sugg.first() {
                Some(s) => format!("change `{t}` to `{s}` in `{}`.autonomy.tools", n.id),
                None => format!(
                    "declare tool `{t}` under `tools`, or remove it from `{}`.autonomy.tools",
                    n.id
                ),
            };
            fail(
                errs,
                Locus::entry(el, "autonomy", k),
                format!(
                    "`{}` may reach for tool `{t}`, which is neither declared nor built in",
                    n.id
                ),
                repair,
            );
            if let Some(last) = errs.last_mut() {
                last.did_you_mean = sugg;
            }
        }
    }
    if n.opcode == Opcode::GenEnum {
        let ty = n
            .output
            .clone()
            .or_else(|| n.writes.first().and_then(|w| ix.carry_type(w).cloned()));
        if ty.as_ref().and_then(|t| ix.enum_members(t)).is_none() {
            fail(
                errs,
                Locus::element(el),
                match &ty {
                    Some(t) => format!(
                        "GEN-ENUM `{}` produces `{t}`, not a declared enum, so there is no set to choose from",
                        n.id
                    ),
                    None => format!(
                        "GEN-ENUM `{}` has no `output` and no typed write, so there is no enum to choose from",
                        n.id
                    ),
                },
                format!(
                    "declare an enum under `types` and type `{}`'s write carry (or its `output`) with it",
                    n.id
                ),
            );
        }
        if n.autonomy.as_ref().is_some_and(|a| !a.tools.is_empty()) {
            fail(
                errs,
                Locus::field(el, "autonomy"),
                format!(
                    "GEN-ENUM `{}` declares `autonomy.tools`; enum decoding and a tool loop do not compose",
                    n.id
                ),
                format!(
                    "drop `autonomy` from `{}`, or gather the context in a SENSE first",
                    n.id
                ),
            );
        }
    }
    if n.opcode == Opcode::Code
        && binding.pipeline.is_empty()
        && let Some(body) = n.body.as_deref().filter(|b| !b.trim().is_empty())
        && let Err(err) = ix.check_body(body)
    {
        fail(
            errs,
            Locus::field(el, "body"),
            format!(
                "the body of CODE `{}` does not check ({} at {}:{}): {}",
                n.id, err.category, err.line, err.column, err.message
            ),
            format!("fix the expression in `{}`.body, or bind a tool", n.id),
        );
    }

    let executor = executor(ix, i, calls);
    let result = result_type(ix, i, demands);
    let mut guarded = Vec::new();
    let mut default = Vec::new();
    for (e, to) in ix.targets(i) {
        let guard =
            ix.p.edge_list()
                .get(e)
                .and_then(|edge| real_guard(edge.guard.as_deref()));
        match guard {
            Some(g) => guarded.push(Transition {
                edge: e,
                to,
                guard: Some(g.to_owned()),
            }),
            None => default.push(Transition {
                edge: e,
                to,
                guard: None,
            }),
        }
    }
    Step {
        id: n.id.clone(),
        opcode: n.opcode.clone(),
        unit,
        executor,
        result,
        guarded,
        default,
    }
}

fn tool_name(ix: &Index, r: ToolRef) -> String {
    match r {
        ToolRef::Declared(t) => ix.tool_at(t).map(|t| t.name.clone()).unwrap_or_default(),
        ToolRef::Builtin(b) => b.name.to_owned(),
    }
}

/// A binding that hands a path parameter content, or a content parameter a path (the
/// transposition §7.1 rule 4's exception exists to prevent), with its repair.
fn transposition(
    ix: &Index,
    instr: &str,
    p: &crate::sig::Param,
    b: &ParamBinding,
) -> Option<(String, String)> {
    let BindSource::Carry(c) = &b.source else {
        return None;
    };
    if b.rule == Rule::Name {
        return None;
    }
    let param = p.name.as_str();
    // Path-shaped exactly as the binder judges it (§7.2): by name or declared `path` type.
    let path_shaped = ix.bind.is_path_shaped_carry(c);
    if is_path_param(p) && !path_shaped {
        Some((
            format!("the non-path carry `{c}` in its path parameter `{param}`"),
            format!(
                "if `{c}` holds a path, rename it to a path-shaped name such as `{c}_path`; else drop it from `{instr}`.reads so `{param}` falls to the invocation fallback"
            ),
        ))
    } else if is_content_param(p) && path_shaped {
        Some((
            format!("the path carry `{c}` in its content parameter `{param}`"),
            format!("add the carry holding the text itself to `{instr}`.reads, ahead of `{c}`"),
        ))
    } else {
        None
    }
}

fn executor(ix: &Index, i: usize, calls: Vec<super::index::Call>) -> Executor {
    let Some(n) = ix.node(i) else {
        return Executor::Unsupported(String::new());
    };
    if let Opcode::Unknown(op) = &n.opcode {
        return Executor::Unsupported(op.clone());
    }
    if let Some(reason) = hollow_reason(ix, i) {
        return Executor::Hollow(reason);
    }
    match n.opcode {
        Opcode::Terminal => return Executor::Terminal,
        Opcode::Spawn => return Executor::Spawn,
        _ => {}
    }
    if !calls.is_empty() {
        return Executor::Tools(
            calls
                .into_iter()
                .map(|c| {
                    let (index, kind) = match c.tool {
                        ToolRef::Declared(t) => {
                            let tool = ix.tool_at(t);
                            let kind = match tool {
                                Some(tl)
                                    if tl.body.as_deref().is_some_and(|b| !b.trim().is_empty()) =>
                                {
                                    ToolKind::Body(
                                        tl.lang.clone().unwrap_or_else(|| "python".into()),
                                    )
                                }
                                Some(tl)
                                    if tl
                                        .command
                                        .as_deref()
                                        .is_some_and(|b| !b.trim().is_empty()) =>
                                {
                                    ToolKind::Command
                                }
                                _ => ToolKind::Builtin,
                            };
                            (Some(t), kind)
                        }
                        ToolRef::Builtin(_) => (None, ToolKind::Builtin),
                    };
                    ToolCall {
                        tool: tool_name(ix, c.tool),
                        index,
                        kind,
                        returns: match c.sig.ret {
                            Return::Type(t) => Some(t),
                            _ => None,
                        },
                        bindings: c.bindings,
                    }
                })
                .collect(),
        );
    }
    if n.is_du() {
        return match n.opcode {
            Opcode::Code => Executor::Inline(n.body.clone().unwrap_or_default()),
            Opcode::Act => match implicit_act_source(ix, n) {
                Some((c, true)) => Executor::RunProgram(c),
                Some((c, false)) => Executor::WriteOut(c),
                None => Executor::Hollow("no tool".into()),
            },
            _ => Executor::Branch,
        };
    }
    if n.opcode == Opcode::Call {
        return Executor::Call(n.target.clone());
    }
    Executor::Slot(ix.bind.bind_slot(n))
}

/// The result type of §6.4: an SU instruction's `output`, else `writes[0]`'s declared type,
/// else `str` (when that is `any`, the type its DU consumers agree on); a DU instruction's
/// code result, else `writes[0]`'s type.
fn result_type(ix: &Index, i: usize, demands: &Demands) -> Option<Type> {
    let n = ix.node(i)?;
    if n.opcode == Opcode::Terminal {
        return Some(Type::Dict(None));
    }
    let w = n.writes.first()?;
    let declared = ix.carry_type(w).cloned();
    if n.is_su() {
        let ty = n.output.clone().or(declared).unwrap_or(Type::Str);
        if ty != Type::Any {
            return Some(ty);
        }
        let agreed = demands
            .get(w)
            .and_then(|ds| ds.iter().find_map(|d| d.ty.clone()));
        return Some(agreed.unwrap_or(Type::Str));
    }
    super::types::du_result_type(ix, i).or(declared)
}

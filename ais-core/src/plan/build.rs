//! Building the plan from the validator's index, for a program with no X5 finding.

use super::{
    Call, CarryRef, CompiledExpr, Executor, FanOut, LoopControl, Plan, PlanCarry, Slot, Spawn,
    Step, ToolCall, ToolKind, ToolRef, Transition, Unit, builtins,
};
use crate::check::executable::{hollow_reason, implicit_act_source, real_guard};
use crate::check::index::{self, Index, Map as HashMap};
use crate::check::types::{Demand, du_result_type, fan_out_source};
use crate::diag::{CheckId, Finding, Severity};
use crate::expr::{Guard, Limits};
use crate::program::{Isolation, Opcode, Owner, SpawnSource, Type};
use crate::sig::{Return, Signature};
use crate::source::{Element, FieldKey, Locus};

type Demands = HashMap<String, Vec<Demand>>;

/// Builds the plan. The X5 checks have passed, so every guard and body compiles; should one
/// not (the checks and this builder disagreeing), it is returned as an X5 finding rather than
/// lowered into something that would misbehave at run time.
pub(super) fn build(ix: &Index) -> Result<Plan, Vec<Finding>> {
    let demands = crate::check::types::demands(ix);
    let mut errs = Vec::new();
    let guards = compile_guards(ix, &mut errs);
    let steps: Vec<Step> = (0..ix.p.instructions().len())
        .map(|i| build_step(ix, i, &demands, &guards, &mut errs))
        .collect();
    if !errs.is_empty() {
        return Err(errs);
    }
    let carries =
        ix.p.carries()
            .iter()
            .map(|c| PlanCarry {
                name: c.name.clone(),
                ty: c.ty.clone(),
                input: c.is_input(),
                default: c.default.clone(),
            })
            .collect();
    Ok(Plan {
        entry: (!steps.is_empty()).then_some(0),
        steps,
        carries,
    })
}

fn fatal(locus: Locus, message: String) -> Finding {
    Finding::new(CheckId::X5, Severity::Fatal, locus, message)
}

/// Every guarded edge's guard, compiled once, by edge index; a default (absent or sentinel)
/// guard has no entry (a chain of default edges holds nothing here).
fn compile_guards(ix: &Index, errs: &mut Vec<Finding>) -> HashMap<usize, Box<CompiledExpr>> {
    let limits = Limits::default();
    ix.p.edge_list()
        .iter()
        .enumerate()
        .filter_map(|(e, edge)| {
            let text = real_guard(edge.guard.as_deref())?;
            match crate::expr::compile_guard_with(&ix.env, text, &limits, Some(ix)) {
                Ok(Guard::Cond(c)) => Some((
                    e,
                    Box::new(CompiledExpr {
                        text: text.to_owned(),
                        compiled: *c,
                    }),
                )),
                Ok(Guard::Default) => None,
                Err(err) => {
                    errs.push(fatal(
                        Locus::field(Element::Edge(e), FieldKey::Guard),
                        format!("the guard `{text}` does not compile: {err}"),
                    ));
                    None
                }
            }
        })
        .collect()
}

fn carry_ref(ix: &Index, name: &str) -> CarryRef {
    CarryRef {
        name: name.to_owned(),
        index: ix.bind.carry(name).map(|(c, _)| c),
    }
}

fn build_step(
    ix: &Index,
    i: usize,
    demands: &Demands,
    guards: &HashMap<usize, Box<CompiledExpr>>,
    errs: &mut Vec<Finding>,
) -> Step {
    let Some(n) = ix.node(i) else {
        return Step {
            id: String::new(),
            opcode: Opcode::Unknown(String::new()),
            unit: Unit::Code,
            executor: Executor::Unsupported(String::new()),
            reads: Vec::new(),
            writes: Vec::new(),
            result: None,
            access: crate::bind::Access::Read,
            looping: None,
            guarded: Vec::new(),
            default: Vec::new(),
        };
    };
    let unit = match n.effective_owner() {
        Some(Owner::Model) => Unit::Model,
        _ => Unit::Code,
    };
    // Sized exactly: a plan of many steps keeps every one of these vectors.
    let n_guarded = ix
        .targets(i)
        .filter(|(e, _)| guards.contains_key(e))
        .count();
    let mut guarded = Vec::with_capacity(n_guarded);
    let mut default = Vec::with_capacity(ix.targets(i).count() - n_guarded);
    for (e, to) in ix.targets(i) {
        match guards.get(&e).cloned() {
            Some(g) => guarded.push(Transition {
                edge: e,
                to,
                guard: Some(g),
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
        executor: executor(ix, i, errs),
        reads: n.reads.iter().map(|r| carry_ref(ix, r)).collect(),
        writes: n.writes.iter().map(|w| carry_ref(ix, w)).collect(),
        result: result_type(ix, i, demands),
        access: ix.bind.access(n),
        looping: (n.opcode == Opcode::Loop).then(|| Box::new(loop_control(ix, i))),
        guarded,
        default,
    }
}

fn loop_control(ix: &Index, i: usize) -> LoopControl {
    let n = &ix.p.instructions()[i];
    let (back, advance) = ix
        .targets(i)
        .partition::<Vec<_>, _>(|&(_, t)| ix.scc.get(t) == ix.scc.get(i));
    LoopControl {
        verdict: n.verdict.as_deref().map(|v| carry_ref(ix, v)),
        cap: n
            .cap
            .and_then(|c| u64::try_from(c).ok())
            .filter(|&c| c >= 1),
        counter: n.counter.as_deref().map(|c| carry_ref(ix, c)),
        back: back.into_iter().map(|(e, _)| e).collect(),
        advance: advance.into_iter().map(|(e, _)| e).collect(),
    }
}

/// A tool of the pipeline or of a slot's `autonomy`, with how it runs.
fn tool_ref(ix: &Index, r: index::ToolRef, signature: Signature) -> ToolRef {
    match r {
        index::ToolRef::Declared(t) => {
            let tool = ix.tool_at(t);
            let present = |s: Option<&str>| s.is_some_and(|b| !b.trim().is_empty());
            let kind = match tool {
                Some(tl) if present(tl.body.as_deref()) => {
                    ToolKind::Body(tl.lang.clone().unwrap_or_else(|| "python".into()))
                }
                Some(tl) if present(tl.command.as_deref()) => ToolKind::Command,
                _ => ToolKind::Builtin,
            };
            let name = tool.map(|t| t.name.clone()).unwrap_or_default();
            let surface = tool
                .and_then(|t| t.surface.clone())
                .or_else(|| builtins::builtin(&name).map(|b| b.surface.to_surface()));
            ToolRef {
                name,
                index: Some(t),
                kind,
                signature,
                surface,
            }
        }
        index::ToolRef::Builtin(b) => ToolRef {
            name: b.name.to_owned(),
            index: None,
            kind: ToolKind::Builtin,
            signature,
            surface: Some(b.surface.to_surface()),
        },
    }
}

fn executor(ix: &Index, i: usize, errs: &mut Vec<Finding>) -> Executor {
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
        Opcode::Spawn => return Executor::Spawn(Box::new(spawn(ix, i))),
        _ => {}
    }
    let calls = ix.calls.get(i).map(Vec::as_slice).unwrap_or_default();
    if !calls.is_empty() {
        return Executor::Tools(
            calls
                .iter()
                .map(|c| {
                    let r = tool_ref(ix, c.tool, c.sig.clone());
                    ToolCall {
                        tool: r.name,
                        index: r.index,
                        kind: r.kind,
                        bindings: c.bindings.clone(),
                        returns: match &c.sig.ret {
                            Return::Type(t) => Some(t.clone()),
                            _ => None,
                        },
                        signature: r.signature,
                        surface: r.surface,
                    }
                })
                .collect(),
        );
    }
    if n.is_du() {
        return match n.opcode {
            Opcode::Code => inline(ix, i, errs),
            Opcode::Act => match implicit_act_source(ix, n) {
                Some((c, true)) => Executor::RunProgram(carry_ref(ix, &c)),
                Some((c, false)) => Executor::WriteOut(carry_ref(ix, &c)),
                None => Executor::Hollow("no tool".into()),
            },
            _ => Executor::Branch,
        };
    }
    if n.opcode == Opcode::Call {
        return Executor::Call(Box::new(Call {
            target: n.target.clone(),
            operands: ix.bind.bind_slot(n),
        }));
    }
    Executor::Slot(Box::new(Slot {
        operands: ix.bind.bind_slot(n),
        tools: autonomy_tools(ix, i),
    }))
}

/// A tool-less CODE step's body, compiled.
fn inline(ix: &Index, i: usize, errs: &mut Vec<Finding>) -> Executor {
    let n = &ix.p.instructions()[i];
    let text = n.body.clone().unwrap_or_default();
    match crate::expr::compile_str_with(&text, &ix.env, &Limits::default(), Some(ix)) {
        Ok(compiled) => Executor::Inline(Box::new(CompiledExpr { text, compiled })),
        Err(err) => {
            errs.push(
                fatal(
                    Locus::field(Element::Instruction(i), FieldKey::Body),
                    format!("the body of CODE `{}` does not compile: {err}", n.id),
                )
                .with_instruction(n.id.clone()),
            );
            Executor::Hollow(format!("its body does not compile: {err}"))
        }
    }
}

/// The tools a slot may reach for: its `autonomy.tools`, declared or built in.
fn autonomy_tools(ix: &Index, i: usize) -> Vec<ToolRef> {
    let n = &ix.p.instructions()[i];
    n.autonomy
        .iter()
        .flat_map(|a| a.tools.iter())
        .filter_map(|name| {
            if let Some(t) = ix.tool_index(name) {
                let sig = ix.sigs.get(t)?.clone()?.ok()?;
                Some(tool_ref(ix, index::ToolRef::Declared(t), sig))
            } else {
                let b = builtins::builtin(name)?;
                Some(tool_ref(
                    ix,
                    index::ToolRef::Builtin(b),
                    index::builtin_signature(b),
                ))
            }
        })
        .collect()
}

/// A SPAWN's fan-out source (§4.4.4): a list-typed read, else a literal `concurrency.spawn`
/// list, else the task.
fn spawn(ix: &Index, i: usize) -> Spawn {
    let n = &ix.p.instructions()[i];
    let list_read = fan_out_source(ix, i);
    let conc = n.concurrency.as_ref();
    let source = match (list_read, conc.and_then(|c| c.spawn.as_ref())) {
        (Some(r), _) => FanOut::Carry(carry_ref(ix, r)),
        (None, Some(SpawnSource::List(items))) => FanOut::List(items.clone()),
        _ => FanOut::Task,
    };
    let isolation = match conc.and_then(|c| c.isolation.clone()) {
        Some(Isolation::Unknown(_)) | None => Isolation::OrchestratorOwned,
        Some(known) => known,
    };
    Spawn {
        source,
        isolation,
        max_parallel: conc
            .and_then(|c| c.max_parallel)
            .and_then(|m| usize::try_from(m).ok())
            .filter(|&m| m >= 1),
        worker: ix.bind.bind_slot(n),
    }
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
    du_result_type(ix, i).or(declared)
}

//! Executability (spec §9.3): X1–X4. X5, the compile oracle, is the failure of
//! [`super::lower`].

use super::Ctx;
use super::guards;
use super::index::{Index, ToolRef, quote_list};
use crate::diag::{CheckId, FindingKind, Repair};
use crate::edit::Edit;
use crate::program::{Instruction, Isolation, Opcode, Owner, Type};
use crate::source::{Element, FieldKey, Locus};
use crate::suggest::did_you_mean;

/// Runs X1–X4.
pub(super) fn run(cx: &mut Ctx) {
    x1_no_hollow_du(cx);
    x2_loop_bounded(cx);
    x3_spawn_isolation(cx);
    x4_route_default(cx);
}

/// Why a DU instruction is hollow, or `None` when it resolves to executable code.
pub(crate) fn hollow_reason(ix: &Index, i: usize) -> Option<String> {
    let n = ix.node(i)?;
    if !n.is_du()
        || matches!(
            n.opcode,
            Opcode::Terminal | Opcode::Spawn | Opcode::Unknown(_)
        )
    {
        return None;
    }
    let b = ix.binding.get(i)?;
    if let Some(t) = &b.unknown_tool {
        return Some(format!(
            "its `tool: {t}` names no declared or built-in tool"
        ));
    }
    let missing: Vec<String> = b
        .pipeline
        .iter()
        .filter_map(|r| match r {
            ToolRef::Declared(t) => ix
                .tool_at(*t)
                .filter(|tl| !tool_runs(tl))
                .map(|tl| tl.name.clone()),
            ToolRef::Builtin(_) => None,
        })
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "its tool {} has no `body` or `command` and is not a built-in",
            quote_list(&missing)
        ));
    }
    let has_tool = !b.pipeline.is_empty();
    let needs = match n.opcode {
        Opcode::Code => !has_tool && n.body.as_deref().is_none_or(|b| b.trim().is_empty()),
        Opcode::Act => !has_tool && implicit_act_source(ix, n).is_none(),
        Opcode::Route => !has_tool && !n.writes.is_empty(),
        _ => !has_tool,
    };
    needs.then(|| match n.opcode {
        Opcode::Code => "it has no tool and no inline `body`".to_owned(),
        Opcode::Act => "it has no tool and reads no text or program carry to write out".to_owned(),
        Opcode::Route => format!(
            "it writes {} but has no tool to compute it, so its guards would test a default forever",
            quote_list(&n.writes)
        ),
        _ => "it has no tool".to_owned(),
    })
}

/// True when a declared tool reaches something that runs: a body, a command, a built-in, or
/// an MCP server's tool (whether that server is declared is M1's concern).
pub(crate) fn tool_runs(t: &crate::program::Tool) -> bool {
    t.mcp.is_some()
        || t.body.as_deref().is_some_and(|b| !b.trim().is_empty())
        || t.command.as_deref().is_some_and(|c| !c.trim().is_empty())
        || crate::plan::builtins::builtin(&t.name).is_some()
}

/// What a tool-less ACT writes out (§4.2.2): a program carry it runs, else a text carry it
/// writes to a program-controlled path. `(carry, is_program)`.
pub(crate) fn implicit_act_source(ix: &Index, n: &Instruction) -> Option<(String, bool)> {
    if let Some(p) = n
        .reads
        .iter()
        .find(|r| is_program_carry(r) && ix.is_carry(r))
    {
        return Some((p.clone(), true));
    }
    n.reads
        .iter()
        .find(|r| {
            r.as_str() != "task"
                && ix.is_carry(r)
                && matches!(ix.carry_type(r), None | Some(Type::Str | Type::Any))
        })
        .map(|r| (r.clone(), false))
}

/// True for a carry holding a program (the author-then-run pattern, §4.1): `script` or
/// `*_script`.
pub(crate) fn is_program_carry(name: &str) -> bool {
    name == "script" || name.ends_with("_script")
}

/// X1: every DU instruction resolves to executable code — a bound tool with a body, a
/// `command`, a built-in, or (CODE) an inline body; a DU ACT may also write out or run a carry
/// it reads (§4.2.2). A hollow instruction is an error. Mechanical repair: re-own a hollow
/// SENSE, ACT, ROUTE or LOOP that has a `doc` to a model slot; one without a `doc` is not
/// re-owned (no doc is synthesized) and the repair says to write one.
fn x1_no_hollow_du(cx: &mut Ctx) {
    for i in 0..cx.ix.p.instructions().len() {
        let Some(reason) = hollow_reason(&cx.ix, i) else {
            continue;
        };
        let n = &cx.ix.p.instructions()[i];
        let dual = n.opcode.fixed_owner().is_none();
        let has_doc = n.doc.as_deref().is_some_and(|d| !d.trim().is_empty());
        let unknown = cx.ix.binding[i].unknown_tool.clone();
        let suggestions = unknown
            .as_deref()
            .map(|t| cx.ix.suggest_tool(t))
            .unwrap_or_default();
        let repair = if let Some(s) = suggestions.first() {
            Repair::manual(format!(
                "change `tool: {}` to `tool: {s}` on `{}`",
                unknown.as_deref().unwrap_or_default(),
                n.id
            ))
        } else if dual && has_doc {
            Repair::mechanical(
                Edit::ReownToModel {
                    instruction: n.id.clone(),
                    opcode: n.opcode.clone(),
                },
                format!(
                    "bind a tool with a body to `{}` (`tool: <name>`), or re-own it to a model slot with `owner: model`",
                    n.id
                ),
            )
        } else if dual {
            Repair::manual(format!(
                "bind a tool with a body to `{}`, or write a `doc` stating what it must do and set `owner: model`",
                n.id
            ))
        } else {
            Repair::manual(format!(
                "bind a tool with a body to `{}` (`tool: <name>`){}",
                n.id,
                if n.opcode == Opcode::Code {
                    ", or give it an inline `body`"
                } else {
                    ""
                }
            ))
        };
        let locus = if unknown.is_some() {
            Locus::field(Element::Instruction(i), FieldKey::Tool)
        } else {
            Locus::element(Element::Instruction(i))
        };
        let message = format!(
            "DU instruction `{}` ({}) is hollow: {reason}; it has nothing to execute",
            n.id, n.opcode
        );
        let f = cx.report_instr(CheckId::X1, i, locus, message);
        f.did_you_mean = suggestions;
        f.repair = Some(repair);
    }
}

/// X2: every LOOP declares a verdict (a bool carry produced by a DU instruction), a cap of at
/// least one, and a counter (an int carry); it has a back edge and an advance edge, and is
/// not an unconditional self-transition (§4.4.2).
fn x2_loop_bounded(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if n.opcode != Opcode::Loop {
            continue;
        }
        let mut problems: Vec<Problem> = Vec::new();
        let by_model = loop_verdict(&cx.ix, i, n, &mut problems);
        loop_cap(i, n, &mut problems);
        loop_counter(&cx.ix, i, n, &mut problems);
        loop_edges(&cx.ix, i, n, &mut problems);
        for (k, (locus, message, repair)) in problems.into_iter().enumerate() {
            let f = cx.report_instr(CheckId::X2, i, locus, message);
            f.repair = Some(Repair::manual(repair));
            if by_model == Some(k) {
                f.kind = Some(FindingKind::LoopVerdictNotCode);
            }
        }
    }
}

/// One X2 problem: where, what, and the manual repair.
type Problem = (Locus, String, String);

/// X2's verdict: declared, a carry, typed `bool`, produced by DU instructions only. Returns
/// which of `problems` says that a model (or nothing) produces it, if one does.
fn loop_verdict(
    ix: &Index,
    i: usize,
    n: &Instruction,
    problems: &mut Vec<Problem>,
) -> Option<usize> {
    let el = Element::Instruction(i);
    match &n.verdict {
        None => problems.push((
            Locus::element(el),
            format!(
                "LOOP `{}` declares no `verdict`, so nothing says when the work is acceptable",
                n.id
            ),
            format!(
                "add `verdict: <bool carry>` to `{}`, produced by a DU check",
                n.id
            ),
        )),
        Some(v) if !ix.is_carry(v) => problems.push((
            Locus::field(el, FieldKey::Verdict),
            format!("LOOP `{}` has `verdict: {v}`, which is no carry", n.id),
            format!("declare `{v}: {{type: bool, produced_by: <DU check>}}` in walker.carries"),
        )),
        Some(v) => {
            if ix.carry_type(v) != Some(&Type::Bool) {
                problems.push((
                    Locus::field(el, FieldKey::Verdict),
                    format!("the verdict `{v}` of LOOP `{}` is not typed `bool`", n.id),
                    format!("declare carry `{v}` with `type: bool`"),
                ));
            }
            let writers = ix.writers.get(v.as_str()).cloned().unwrap_or_default();
            let by_model: Vec<String> = writers
                .iter()
                .filter_map(|&w| ix.node(w))
                .filter(|w| !w.is_du())
                .map(|w| w.id.clone())
                .collect();
            if writers.is_empty() {
                problems.push((
                    Locus::field(el, FieldKey::Verdict),
                    format!(
                        "the verdict `{v}` of LOOP `{}` is written by no instruction, so it never says the work passes",
                        n.id
                    ),
                    format!("produce `{v}` with an `owner: code` SENSE or CODE that checks the work"),
                ));
            } else if !by_model.is_empty() {
                problems.push((
                    Locus::field(el, FieldKey::Verdict),
                    format!(
                        "the verdict `{v}` of LOOP `{}` is written by {} on a model, so the loop's exit is a model's opinion; a verdict must be computed by code (§4.4.2)",
                        n.id,
                        quote_list(&by_model)
                    ),
                    format!(
                        "compute `{v}` in an `owner: code` SENSE or CODE that checks the work, in place of {}",
                        quote_list(&by_model)
                    ),
                ));
                return Some(problems.len() - 1);
            }
        }
    }
    None
}

/// X2's cap: declared and at least one.
fn loop_cap(i: usize, n: &Instruction, problems: &mut Vec<Problem>) {
    let el = Element::Instruction(i);
    match n.cap {
        None => problems.push((
            Locus::element(el),
            format!(
                "LOOP `{}` declares no `cap`; on a weak model it may never terminate",
                n.id
            ),
            format!("add `cap: 3` (or another bound) to `{}`", n.id),
        )),
        Some(c) if c < 1 => problems.push((
            Locus::field(el, FieldKey::Cap),
            format!("LOOP `{}` has `cap: {c}`; the cap must be at least 1", n.id),
            format!("set `cap` on `{}` to a positive bound", n.id),
        )),
        _ => {}
    }
}

/// X2's counter: declared, a carry, typed `int`.
fn loop_counter(ix: &Index, i: usize, n: &Instruction, problems: &mut Vec<Problem>) {
    let el = Element::Instruction(i);
    match &n.counter {
        None => problems.push((
            Locus::element(el),
            format!(
                "LOOP `{}` declares no `counter` carry to count iterations against its cap",
                n.id
            ),
            format!(
                "add `counter: {}_round` to `{}` and declare it `{{type: int, produced_by: {}}}`",
                n.id, n.id, n.id
            ),
        )),
        Some(c) if !ix.is_carry(c) => problems.push((
            Locus::field(el, FieldKey::Counter),
            format!("LOOP `{}` has `counter: {c}`, which is no carry", n.id),
            format!(
                "declare `{c}: {{type: int, produced_by: {}}}` in walker.carries",
                n.id
            ),
        )),
        Some(c) if ix.carry_type(c) != Some(&Type::Int) => problems.push((
            Locus::field(el, FieldKey::Counter),
            format!("the counter `{c}` of LOOP `{}` is not typed `int`", n.id),
            format!("declare carry `{c}` with `type: int`"),
        )),
        _ => {}
    }
}

/// X2's edges: no edge to itself, a back edge and an advance edge.
fn loop_edges(ix: &Index, i: usize, n: &Instruction, problems: &mut Vec<Problem>) {
    let el = Element::Instruction(i);
    let targets: Vec<(usize, usize)> = ix.targets(i).collect();
    if targets.iter().any(|&(_, t)| t == i) {
        problems.push((
            Locus::element(el),
            format!("LOOP `{}` has an edge to itself; a LOOP must not be an unconditional self-transition", n.id),
            format!("route the back edge of `{}` to the step that redoes the work", n.id),
        ));
    } else {
        let back = targets
            .iter()
            .filter(|&&(_, t)| ix.scc[t] == ix.scc[i])
            .count();
        if back == 0 {
            problems.push((
                Locus::element(el),
                format!(
                    "LOOP `{}` has no back edge to an earlier step, so it cannot repeat",
                    n.id
                ),
                format!(
                    "add an edge from `{}` to the step that redoes the work",
                    n.id
                ),
            ));
        }
        if back == targets.len() {
            problems.push((
                Locus::element(el),
                format!(
                    "LOOP `{}` has no advance edge, so it can never move on",
                    n.id
                ),
                format!(
                    "add an edge from `{}` to the step that follows the loop",
                    n.id
                ),
            ));
        }
    }
}

/// X3: every SPAWN declares `concurrency.isolation` as `private_write`, `shared_read` or
/// `orchestrator_owned` (§4.4.4); an unknown mode is reported and treated as
/// `orchestrator_owned` (§12.2).
fn x3_spawn_isolation(cx: &mut Ctx) {
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if n.opcode != Opcode::Spawn {
            continue;
        }
        let iso = n.concurrency.as_ref().and_then(|c| c.isolation.as_ref());
        let (locus, message) = match iso {
            None => (
                Locus::element(Element::Instruction(i)),
                format!(
                    "SPAWN `{}` declares no isolation mode, so nothing says whether its siblings may write shared state",
                    n.id
                ),
            ),
            Some(Isolation::Unknown(m)) => (
                Locus::field(Element::Instruction(i), FieldKey::ConcurrencyIsolation),
                format!(
                    "SPAWN `{}` has isolation `{m}`, which is not a mode; it is treated as `orchestrator_owned`",
                    n.id
                ),
            ),
            Some(_) => continue,
        };
        let close = match iso {
            Some(Isolation::Unknown(m)) => {
                did_you_mean(m, Isolation::ALL.iter().map(Isolation::as_str))
            }
            _ => Vec::new(),
        };
        let f = cx.report_instr(CheckId::X3, i, locus, message);
        f.did_you_mean = close;
        f.repair = Some(Repair::manual(format!(
            "add `concurrency: {{isolation: private_write}}` to `{}` (or `shared_read` / `orchestrator_owned`)",
            n.id
        )));
    }
}

/// The guard of an edge when it is a real condition (not absent, not a sentinel, A.3).
pub(crate) fn real_guard(guard: Option<&str>) -> Option<&str> {
    guard.filter(|g| !crate::expr::is_sentinel(g))
}

/// X4: every branching DU instruction (a ROUTE, or any instruction with guarded edges) with
/// several guarded edges declares a default edge, unless its guards are exhaustive over one
/// bool or enum carry; otherwise a discriminator outside the guard set faults the run (§4.4.1).
/// A model-owned ROUTE chooses among its edges itself and LOOP/SPAWN have their own control.
fn x4_route_default(cx: &mut Ctx) {
    let edges = cx.ix.p.edge_list();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if matches!(n.opcode, Opcode::Loop | Opcode::Spawn | Opcode::Terminal)
            || (n.opcode == Opcode::Route && n.effective_owner() == Some(Owner::Model))
        {
            continue;
        }
        let mut guards = Vec::new();
        let mut has_default = false;
        for &e in &cx.ix.out[i] {
            match real_guard(edges[e].guard.as_deref()) {
                Some(g) => guards.push(g),
                None => has_default = true,
            }
        }
        if guards.len() < 2 || has_default || guards::exhaustive(&cx.ix, guards.iter().copied()) {
            continue;
        }
        let target = cx
            .ix
            .p
            .instructions()
            .iter()
            .find(|t| t.opcode == Opcode::Terminal)
            .map(|t| t.id.clone())
            .unwrap_or_else(|| "<fallback step>".into());
        let message = format!(
            "`{}` branches on {} guards with no default edge; when none holds the run faults with a route dead-end",
            n.id,
            guards.len()
        );
        cx.report_instr(
            CheckId::X4,
            i,
            Locus::element(Element::Instruction(i)),
            message,
        )
        .repair = Some(Repair::manual(format!(
            "add an edge `{{from: {}, to: {target}}}` with no guard as the default",
            n.id
        )));
    }
}

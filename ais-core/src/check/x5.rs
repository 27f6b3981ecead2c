//! X5 — the compile oracle (G4): every condition under which a program does not lower to a
//! [`Plan`](crate::plan::Plan). The plan itself is built by [`crate::plan`], only for a
//! program these checks pass.
//!
//! A program does not lower (X5, fatal) when a tool signature does not parse or is missing,
//! bindings transpose a path and its content, the binding mechanisms of §5.4 disagree, a type
//! does not resolve, a guard or CODE body does not parse or type-check, or a GEN-ENUM has no
//! enum to produce. Conditions with their own check (a hollow instruction, X1; an unknown
//! opcode, W2) lower to [`Executor::Hollow`](crate::plan::Executor::Hollow) /
//! [`Executor::Unsupported`](crate::plan::Executor::Unsupported) so the program still has a
//! plan, and those checks report them.

use super::executable::real_guard;
use super::index::{Index, ToolRef};
use crate::bind::{BindSource, ParamBinding, Rule, is_content_param, is_path_param};
use crate::diag::{CheckId, Finding, Repair, Severity};
use crate::edit::{Edit, Wording};
use crate::program::{Instruction, Opcode, Type, TypeKind};
use crate::source::{Element, FieldKey, Locus};
use crate::suggest::did_you_mean;

/// Every X5 finding of a program, in check order.
pub(crate) fn x5_findings(ix: &Index) -> Vec<Finding> {
    let mut errs: Vec<Finding> = super::required::no_program(ix).into_iter().collect();
    types_resolve(ix, &mut errs);
    signatures_parse(ix, &mut errs);
    guards_check(ix, &mut errs);
    for i in 0..ix.p.instructions().len() {
        step_lowers(ix, i, &mut errs);
    }
    errs
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
            .chain(std::iter::once(crate::program::OUTCOME))
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
                Locus::field(Element::Carry(c), FieldKey::Type),
                format!("carry `{}`", carry.name),
                None,
            );
        }
    }
    for (i, n) in ix.p.instructions().iter().enumerate() {
        if let Some(t) = &n.output {
            unresolved(
                t,
                Locus::field(Element::Instruction(i), FieldKey::Output),
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
            Some(Some(Err(e))) => {
                let f = x5(
                    Locus::field(Element::Tool(t), FieldKey::Sig),
                    format!("the signature of tool `{}` does not parse: {e}", tool.name),
                    format!("write `sig` of `{}` as `\"(param, …) -> type\"`", tool.name),
                );
                // A written `sig` is pointed into; one derived from a body's `def` is not.
                errs.push(match &tool.sig {
                    Some(text) => f.with_inner(crate::diag::sig_range(e, text)),
                    None => f,
                });
            }
            Some(None) if used && let Some(m) = &tool.mcp => errs.push(x5(
                Locus::element(Element::Tool(t)),
                format!(
                    "tool `{}` is bound to MCP server `{}` and has no `sig`, and no lock gives it one, so its parameters cannot be bound",
                    tool.name, m.server
                ),
                format!(
                    "run `ais mcp lock PROGRAM` to record `{}`'s schema beside the program (or add `sig: \"(param, …) -> type\"` to tool `{}`)",
                    m.server, tool.name
                ),
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

/// Every real guard parses and type-checks as a `bool` over the program's carries. The finding
/// points inside the guard at the offending token; a name that is no carry gets its
/// did-you-mean, and a mechanical rename when one declared name is a single typo away.
fn guards_check(ix: &Index, errs: &mut Vec<Finding>) {
    for (e, edge) in ix.p.edge_list().iter().enumerate() {
        let Some(g) = real_guard(edge.guard.as_deref()) else {
            continue;
        };
        let Err(err) = ix.check_guard(g) else {
            continue;
        };
        let summary = "write the guard as a comparison over a carry, e.g. `<carry> == true`, or drop it to make the edge the default";
        let name = (err.len > 0 && err.line == 1)
            .then(|| {
                let skip = usize::try_from(err.column.saturating_sub(1)).ok()?;
                let len = usize::try_from(err.len).ok()?;
                Some(
                    g.lines()
                        .next()?
                        .chars()
                        .skip(skip)
                        .take(len)
                        .collect::<String>(),
                )
            })
            .flatten();
        let repair = match (&name, unambiguous(name.as_deref(), &err.did_you_mean)) {
            (Some(name), Some(to)) => {
                let edit = Edit::RenameInGuard {
                    edge: e,
                    from_step: edge.from.clone(),
                    to_step: edge.to.clone(),
                    name: name.clone(),
                    to: to.to_owned(),
                    column: err.column,
                };
                Repair::mechanical(edit.clone(), edit.describe(Wording::Agir))
            }
            _ => Repair::manual(summary),
        };
        let mut f = Finding::new(
            CheckId::X5,
            Severity::Fatal,
            Locus::field(Element::Edge(e), FieldKey::Guard),
            format!(
                "the guard `{g}` on edge `{}` -> `{}` does not check ({}): {}",
                edge.from, edge.to, err.category, err.message
            ),
        )
        .with_inner(err.range())
        .with_suggestions(err.did_you_mean.clone())
        .with_repair(repair);
        f.instruction = Some(edge.from.clone());
        errs.push(f);
    }
}

/// The one suggestion a misspelled `name` can only have meant: the only candidate a single
/// edit (insertion, deletion, substitution or transposition) away.
pub(crate) fn unambiguous<'a>(name: Option<&str>, suggestions: &'a [String]) -> Option<&'a str> {
    let name = name?;
    let mut close = suggestions
        .iter()
        .filter(|s| strsim::osa_distance(name, s) == 1);
    let first = close.next()?;
    close.next().is_none().then_some(first.as_str())
}

/// Instruction `i` lowers: its tool binding is unambiguous, no binding transposes a path and
/// its content, its `autonomy` tools exist, a GEN-ENUM has an enum to produce and no tool
/// loop, and a tool-less CODE body checks.
fn step_lowers(ix: &Index, i: usize, errs: &mut Vec<Finding>) {
    let Some(n) = ix.node(i) else {
        return;
    };
    let el = Element::Instruction(i);
    let binding = &ix.binding[i];
    if let Some(c) = &binding.conflict {
        errs.push(x5(
            Locus::field(el, FieldKey::Tool),
            format!("the tool binding of `{}` is ambiguous: {c}", n.id),
            format!(
                "bind `{}` one way only: drop its `tool` field, or make that tool the one that `serves` it",
                n.id
            ),
        ).with_instruction(&n.id));
    }
    let calls = ix.calls.get(i).map(Vec::as_slice).unwrap_or_default();
    for call in calls {
        let name = tool_name(ix, call.tool);
        for (p, b) in call.sig.params.iter().zip(&call.bindings) {
            if let Some((problem, repair)) = transposition(ix, &n.id, p, b) {
                let j = match &b.source {
                    BindSource::Carry(c) => n.reads.iter().position(|r| r == c),
                    _ => None,
                };
                let locus = match j {
                    Some(j) => Locus::entry(el, FieldKey::Reads, j),
                    None => Locus::field(el, FieldKey::Reads),
                };
                errs.push(x5(
                    locus,
                    format!(
                        "`{}` would call `{name}` with {problem}: the call writes or reads the wrong thing",
                        n.id
                    ),
                    repair,
                ).with_instruction(&n.id));
            }
        }
    }
    for (k, t) in n.autonomy.iter().flat_map(|a| a.tools.iter()).enumerate() {
        if ix.tool_index(t).is_none() && crate::plan::builtins::builtin(t).is_none() {
            let sugg = ix.suggest_tool(t);
            let repair = match sugg.first() {
                Some(s) => format!("change `{t}` to `{s}` in `{}`.autonomy.tools", n.id),
                None => format!(
                    "declare tool `{t}` under `tools`, or remove it from `{}`.autonomy.tools",
                    n.id
                ),
            };
            errs.push(
                x5(
                    Locus::entry(el, FieldKey::Autonomy, k),
                    format!(
                        "`{}` may reach for tool `{t}`, which is neither declared nor built in",
                        n.id
                    ),
                    repair,
                )
                .with_instruction(&n.id)
                .with_suggestions(sugg),
            );
        }
    }
    gen_enum_lowers(ix, n, el, errs);
    if n.opcode == Opcode::Code
        && binding.pipeline.is_empty()
        && n.body.as_deref().is_some_and(|b| !b.trim().is_empty())
        && let Err(err) = ix.check_body(i)
    {
        errs.push(
            x5(
                Locus::field(el, FieldKey::Body),
                format!(
                    "the body of CODE `{}` does not check ({}): {}",
                    n.id, err.category, err.message
                ),
                format!("fix the expression in `{}`.body, or bind a tool", n.id),
            )
            .with_inner(err.range())
            .with_suggestions(err.did_you_mean.clone())
            .with_instruction(&n.id),
        );
    }
}

/// A GEN-ENUM has an enum to produce, and no tool loop (`autonomy.tools`) to compose with it.
fn gen_enum_lowers(ix: &Index, n: &Instruction, el: Element, errs: &mut Vec<Finding>) {
    if n.opcode == Opcode::GenEnum {
        let ty = n
            .output
            .clone()
            .or_else(|| n.writes.first().and_then(|w| ix.carry_type(w).cloned()));
        if ty.as_ref().and_then(|t| ix.enum_members(t)).is_none() {
            // Point at what gives the type: the `output`, else the written carry's type.
            let typed_write = n
                .writes
                .first()
                .and_then(|w| ix.p.carry(w))
                .filter(|(_, c)| n.output.is_none() && c.ty.is_some());
            let locus = match (&n.output, typed_write) {
                (Some(_), _) => Locus::field(el, FieldKey::Output),
                (None, Some((c, _))) => Locus::field(Element::Carry(c), FieldKey::Type),
                (None, None) => Locus::element(el),
            };
            errs.push(x5(
                locus,
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
            ).with_instruction(&n.id).with_kind(crate::diag::FindingKind::GenEnumNotEnum));
        }
        if n.autonomy.as_ref().is_some_and(|a| !a.tools.is_empty()) {
            errs.push(x5(
                Locus::field(el, FieldKey::Autonomy),
                format!(
                    "GEN-ENUM `{}` declares `autonomy.tools`; enum decoding and a tool loop do not compose",
                    n.id
                ),
                format!(
                    "drop `autonomy` from `{}`, or gather the context in a SENSE first",
                    n.id
                ),
            ).with_instruction(&n.id));
        }
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

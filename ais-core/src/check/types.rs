//! Type unification (spec §6.3–§6.4, battery G9): carry types against the tools that consume
//! and produce them, and the model→code crossing that must be typed.

use super::Ctx;
use super::index::Map as HashMap;
use super::index::{Index, ToolRef};
use crate::bind::BindSource;
use crate::diag::{CheckId, Repair};
use crate::edit::Edit;
use crate::program::{Opcode, Type};
use crate::sig::Return;
use crate::source::{Element, FieldKey, Locus};

/// Runs G9.
pub(super) fn run(cx: &mut Ctx) {
    let demands = demands(&cx.ix);
    g9_consumers_agree(cx, &demands);
    g9_model_to_code_typed(cx, &demands);
    g9_code_reads_produced(cx);
    g9_results_fit(cx);
    g9_program_failures_routed(cx);
    g9_failures_tested(cx);
    g9_reads_bound(cx);
}

/// A consumer's demand on a carry: the type a DU tool parameter bound to it requires.
#[derive(Clone, Debug)]
pub(crate) struct Demand {
    /// The instruction whose tool consumes the carry.
    pub instr: usize,
    /// The tool's name.
    pub tool: String,
    /// The parameter's name.
    pub param: String,
    /// The demanded type (`None`: the parameter states no demand). For a SPAWN's fan-out
    /// source this is the list of what the parameter demands of each element.
    pub ty: Option<Type>,
    /// The parameter receives one element of the carry per sibling (the carry is the fan-out
    /// source of a SPAWN, §4.4.4), not the carry itself.
    pub per_element: bool,
}

/// Every DU consumer of every carry, by carry name, in program order.
pub(crate) fn demands(ix: &Index) -> HashMap<String, Vec<Demand>> {
    let mut out: HashMap<String, Vec<Demand>> = HashMap::default();
    for (i, calls) in ix.calls.iter().enumerate() {
        for call in calls {
            let (name, body) = match call.tool {
                ToolRef::Declared(t) => match ix.tool_at(t) {
                    Some(tl) => (tl.name.clone(), tl.body.as_deref()),
                    None => continue,
                },
                ToolRef::Builtin(b) => (b.name.to_owned(), None),
            };
            let source = fan_out_source(ix, i);
            for (param, binding) in call.sig.params.iter().zip(&call.bindings) {
                let BindSource::Carry(c) = &binding.source else {
                    continue;
                };
                let ty = param
                    .ty
                    .clone()
                    .filter(|t| !matches!(t, Type::Any | Type::Invalid(_)))
                    .or_else(|| body.and_then(|b| body_demand(b, &name, &param.name)));
                // A SPAWN's tool runs once per element of its fan-out source: what it demands
                // of its parameter, the carry's elements must be.
                let per_element = source == Some(c.as_str());
                let ty = match ty {
                    Some(t) if per_element => Some(Type::List(Some(Box::new(t)))),
                    t => t,
                };
                out.entry(c.clone()).or_default().push(Demand {
                    instr: i,
                    tool: name.clone(),
                    param: param.name.clone(),
                    ty,
                    per_element,
                });
            }
        }
    }
    out
}

/// The carry a SPAWN at `i` fans out over, when it is one (§4.4.4: its first list-typed read).
/// The plan's SPAWN control and G9's demands both resolve it here.
pub(crate) fn fan_out_source<'p>(ix: &Index<'p>, i: usize) -> Option<&'p str> {
    let n = ix.node(i)?;
    if n.opcode != Opcode::Spawn {
        return None;
    }
    n.reads
        .iter()
        .find(|r| matches!(ix.carry_type(r), Some(Type::List(_))))
        .map(String::as_str)
}

/// The type a Python tool body demands of a parameter: its annotation on the body's `def`
/// line, else an `isinstance` test that raises when it fails (a guard-raise). A test that
/// coerces instead of raising is not a demand.
pub(crate) fn body_demand(body: &str, tool: &str, param: &str) -> Option<Type> {
    let prefix = format!("def {tool}(");
    if let Some(start) = body.find(&prefix) {
        let rest = &body[start + prefix.len()..];
        let params = rest.split(')').next().unwrap_or_default();
        for p in params.split(',') {
            if let Some((name, ann)) = p.split_once(':')
                && name.trim() == param
            {
                let ann = ann.split('=').next().unwrap_or_default().trim();
                let ty = Type::parse(&ann.to_ascii_lowercase());
                if !matches!(ty, Type::Invalid(_) | Type::Named(_) | Type::Any) {
                    return Some(ty);
                }
            }
        }
    }
    let lines: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for (k, line) in lines.iter().enumerate() {
        if !line.starts_with("if not") && !line.starts_with("if (not") {
            continue;
        }
        let raises = line.contains("raise ")
            || lines
                .get(k + 1)
                .is_some_and(|next| next.starts_with("raise"));
        if !raises {
            continue;
        }
        let needle = format!("isinstance({param},");
        let Some(at) = line.find(&needle) else {
            continue;
        };
        let ty_text = line[at + needle.len()..]
            .split(')')
            .next()
            .unwrap_or_default()
            .trim();
        let base = match ty_text {
            "list" | "tuple" => Type::List(None),
            "dict" => Type::Dict(None),
            "str" => Type::Str,
            "int" => Type::Int,
            "float" => Type::Float,
            "bool" => Type::Bool,
            _ => continue,
        };
        if base == Type::List(None) {
            for elem in ["str", "int", "float", "bool", "dict"] {
                let each = format!(", {elem}) for ");
                if line.contains("all(isinstance(")
                    && line.contains(&each)
                    && line.contains(&format!(" in {param})"))
                {
                    return Some(Type::List(Some(Box::new(Type::parse(elem)))));
                }
            }
        }
        return Some(base);
    }
    None
}

/// True when a value of type `have` may flow where `want` is demanded (§6.3): equal types,
/// `any` on either side, `path` and `str`, an enum member as `str`, `int` into `float`, an
/// object as a `dict`, and bare `list`/`dict` against their parameterized forms.
pub(crate) fn compatible(ix: &Index, have: &Type, want: &Type) -> bool {
    match (have, want) {
        (Type::Any, _) | (_, Type::Any) => true,
        (a, b) if a == b => true,
        (Type::Str | Type::Path, Type::Str | Type::Path) => true,
        (Type::Int, Type::Float) => true,
        (Type::List(a), Type::List(b)) | (Type::Dict(a), Type::Dict(b)) => match (a, b) {
            (Some(a), Some(b)) => compatible(ix, a, b),
            _ => true,
        },
        (Type::Named(_), Type::Str) => ix.enum_members(have).is_some(),
        (Type::Named(_), Type::Dict(_)) | (Type::Dict(_), Type::Named(_)) => {
            let named = if matches!(have, Type::Named(_)) {
                have
            } else {
                want
            };
            ix.object_fields(named).is_some()
        }
        _ => false,
    }
}

/// The demands with a type, and the one type they all agree on, if they do.
fn agreed(ix: &Index, ds: &[Demand]) -> (Vec<Demand>, Option<Type>) {
    let typed: Vec<Demand> = ds.iter().filter(|d| d.ty.is_some()).cloned().collect();
    let first = typed.first().and_then(|d| d.ty.clone());
    let agree = first.filter(|f| {
        typed.iter().all(|d| {
            d.ty.as_ref()
                .is_some_and(|t| compatible(ix, t, f) && compatible(ix, f, t))
        })
    });
    (typed, agree)
}

/// G9: a carry read by a tool is typed compatibly with the tool's parameter (the signature is
/// ground truth), and no two consumers demand incompatible types. Mechanical repair: when every
/// consumer agrees on one type, adopt it as the carry's type.
fn g9_consumers_agree(cx: &mut Ctx, demands: &HashMap<String, Vec<Demand>>) {
    for (c, carry) in cx.ix.p.carries().iter().enumerate() {
        let Some(ds) = demands.get(&carry.name) else {
            continue;
        };
        let (typed, agree) = agreed(&cx.ix, ds);
        if typed.is_empty() {
            continue;
        }
        let declared = carry.ty.clone();
        match (&declared, &agree) {
            (Some(d), _) if !matches!(d, Type::Any) => {
                let Some(bad) = typed
                    .iter()
                    .find(|dm| dm.ty.as_ref().is_some_and(|t| !compatible(&cx.ix, d, t)))
                    .cloned()
                else {
                    continue;
                };
                let want = bad.ty.clone().unwrap_or(Type::Any);
                let consumer = cx.ix.p.instructions()[bad.instr].id.clone();
                let passes = match (&want, bad.per_element) {
                    (Type::List(Some(each)), true) => format!(
                        "passes each element of it to `{}`, whose `{}` parameter demands `{each}`",
                        bad.tool, bad.param
                    ),
                    _ => format!(
                        "passes it to `{}`, whose `{}` parameter demands `{want}`",
                        bad.tool, bad.param
                    ),
                };
                let repair = match &agree {
                    Some(a) => Repair::mechanical(
                        Edit::AdoptType {
                            carry: carry.name.clone(),
                            ty: a.clone(),
                        },
                        format!(
                            "change carry `{}` to `type: {a}`, the type its consumers demand",
                            carry.name
                        ),
                    ),
                    None => Repair::manual(format!(
                        "split carry `{}` into one carry per demanded type, or make its consumers agree",
                        carry.name
                    )),
                };
                cx.report_instr(
                    CheckId::G9,
                    bad.instr,
                    Locus::field(Element::Carry(c), FieldKey::Type),
                    format!(
                        "carry `{}` is `{d}` but `{consumer}` {passes}; the call crashes or misbehaves at run time",
                        carry.name
                    ),
                )
                .repair = Some(repair);
            }
            (_, None) => {
                let names: Vec<String> = typed
                    .iter()
                    .map(|d| {
                        format!(
                            "`{}`.{}: {}",
                            d.tool,
                            d.param,
                            d.ty.clone().unwrap_or(Type::Any)
                        )
                    })
                    .collect();
                cx.report_instr(
                    CheckId::G9,
                    typed[0].instr,
                    Locus::element(Element::Carry(c)),
                    format!(
                        "the consumers of carry `{}` demand incompatible types ({}); one of them crashes at run time",
                        carry.name,
                        names.join(", ")
                    ),
                )
                .repair = Some(Repair::manual(format!(
                    "split carry `{}` into one carry per demanded type",
                    carry.name
                )));
            }
            _ => {}
        }
    }
}

/// G9: a carry written by an SU instruction and read by a DU tool must be typed (§6.3) — the
/// one crossing where an untyped value compiles green and crashes at run time. Mechanical
/// repair: adopt the type every DU consumer agrees on, when they state one.
fn g9_model_to_code_typed(cx: &mut Ctx, demands: &HashMap<String, Vec<Demand>>) {
    for (c, carry) in cx.ix.p.carries().iter().enumerate() {
        if !matches!(carry.ty, None | Some(Type::Any)) {
            continue;
        }
        let Some(ds) = demands.get(&carry.name) else {
            continue;
        };
        let model_writer = cx.ix.writers.get(carry.name.as_str()).and_then(|ws| {
            ws.iter()
                .copied()
                .find(|&w| cx.ix.node(w).is_some_and(|n| n.is_su()))
        });
        let Some(w) = model_writer else { continue };
        let Some(consumer) = ds.first() else { continue };
        let (typed, agree) = agreed(&cx.ix, ds);
        if !typed.is_empty() && agree.is_none() {
            continue; // reported as a conflict
        }
        let writer = cx.ix.p.instructions()[w].id.clone();
        let reader = cx.ix.p.instructions()[consumer.instr].id.clone();
        let repair = match agree {
            Some(a) => Repair::mechanical(
                Edit::AdoptType {
                    carry: carry.name.clone(),
                    ty: a.clone(),
                },
                format!(
                    "declare carry `{}` as `type: {a}`, the type `{}` demands",
                    carry.name, consumer.tool
                ),
            ),
            None => Repair::manual(format!(
                "declare the type `{}` must produce on carry `{}` (e.g. `type: str`), and annotate `{}`'s `{}` parameter with it",
                writer, carry.name, consumer.tool, consumer.param
            )),
        };
        let what = if carry.ty.is_none() {
            "untyped"
        } else {
            "typed `any`"
        };
        cx.report_instr(
            CheckId::G9,
            consumer.instr,
            Locus::element(Element::Carry(c)),
            format!(
                "carry `{}` is {what} but crosses from the model (`{writer}`) into code (`{reader}` via `{}`); no check stands between a model's output and the tool",
                carry.name, consumer.tool
            ),
        )
        .repair = Some(repair);
    }
}

/// G9: a DU instruction with a tool reads no carry that nothing produces — neither an input
/// nor written by any instruction (a disconnected artifact: the tool runs on a default).
fn g9_code_reads_produced(cx: &mut Ctx) {
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if !n.is_du() || cx.ix.binding[i].pipeline.is_empty() {
            continue;
        }
        for (j, r) in n.reads.iter().enumerate() {
            let Some((_, carry)) = cx.ix.bind.carry(r) else {
                continue;
            };
            if carry.is_input() || cx.ix.writers.contains_key(r.as_str()) {
                continue;
            }
            found.push((i, j, r.clone(), n.id.clone()));
        }
    }
    for (i, j, r, id) in found {
        cx.report_instr(
            CheckId::G9,
            i,
            Locus::entry(Element::Instruction(i), FieldKey::Reads, j),
            format!(
                "`{id}` runs its tool on carry `{r}`, which no instruction writes and the caller does not supply; the tool only ever sees its default"
            ),
        )
        .repair = Some(Repair::manual(format!(
            "add the instruction that produces `{r}` before `{id}`, or declare `{r}` with `role: input`"
        )));
    }
}

/// G9: what an instruction produces fits the carry it lands in: a DU tool's declared return
/// type, or a CODE body's type, is compatible with `writes[0]`'s type (any result fits an
/// `outcome` carry; with several writes, an object result's field of `writes[0]`'s name).
fn g9_results_fit(cx: &mut Ctx) {
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if !n.is_du() {
            continue;
        }
        let Some(w) = n.writes.first() else { continue };
        let Some(declared) = cx.ix.carry_type(w) else {
            continue;
        };
        // Any result fits the built-in `outcome`: a success lands as `{ok: true, value}`, a
        // failure as the error value a ROUTE tests (§10.2).
        if matches!(declared, Type::Named(n) if n == crate::program::OUTCOME) {
            continue;
        }
        let Some(produced) = du_result_type(&cx.ix, i) else {
            continue;
        };
        // Several writes from an object result: each carry takes the field of its name (the
        // write-back by name), so `writes[0]` gets that field.
        let field = (n.writes.len() >= 2)
            .then(|| cx.ix.object_fields(&produced))
            .flatten()
            .and_then(|fields| fields.into_iter().find(|(name, _)| name == w));
        let produced = match field {
            Some((_, Some(t))) => t,
            Some((_, None)) => continue,
            None => produced,
        };
        // A SPAWN's tool produces one sibling's result; the join (§4.4.4) collects them into a
        // list-typed carry, or concatenates them into a text carry.
        let produced = match declared {
            _ if n.opcode != Opcode::Spawn => produced,
            Type::Str => continue,
            Type::List(_) => Type::List(Some(Box::new(produced))),
            _ => produced,
        };
        if !compatible(&cx.ix, &produced, declared) {
            found.push((i, n.id.clone(), w.clone(), produced, declared.clone()));
        }
    }
    for (i, id, w, produced, declared) in found {
        cx.report_instr(
            CheckId::G9,
            i,
            Locus::entry(Element::Instruction(i), FieldKey::Writes, 0),
            format!(
                "`{id}` produces `{produced}` but writes it into carry `{w}`, declared `{declared}`; readers of `{w}` get a value of the wrong type"
            ),
        )
        .repair = Some(Repair::manual(format!(
            "declare carry `{w}` as `type: {produced}`, or make `{id}` produce `{declared}`"
        )));
    }
}

/// The type a DU instruction's code produces: the last pipeline tool's declared return type,
/// or a CODE body's type. `None` when unknown.
pub(crate) fn du_result_type(ix: &Index, i: usize) -> Option<Type> {
    let n = ix.node(i)?;
    if let Some(call) = ix.calls.get(i).and_then(|c| c.last()) {
        return match &call.sig.ret {
            // `-> all_ok` names the result rather than typing it: a name that is no declared
            // type says nothing about the type.
            Return::Type(t)
                if !matches!(t, Type::Any | Type::Invalid(_)) && ix.type_resolves(t) =>
            {
                Some(t.clone())
            }
            _ => None,
        };
    }
    if n.opcode == Opcode::Code
        && ix.binding.get(i).is_some_and(|b| b.pipeline.is_empty())
        && n.body.as_deref().is_some_and(|b| !b.trim().is_empty())
    {
        return ix
            .check_body(i)
            .ok()
            .filter(|t| !matches!(t, Type::Any | Type::Invalid(_)))
            .cloned();
    }
    None
}

/// The type instruction `i` produces into `writes[0]`, for minting a missing carry: a DU
/// instruction's code result; an SU instruction's `output`, else `str` for text-producing
/// opcodes (§6.4).
pub(crate) fn result_type_of(ix: &Index, i: usize) -> Option<Type> {
    let n = ix.node(i)?;
    if n.is_du() {
        return du_result_type(ix, i);
    }
    if let Some(o) = &n.output {
        return Some(o.clone());
    }
    match n.opcode {
        Opcode::GenRaw | Opcode::GenEdit | Opcode::Call => Some(Type::Str),
        _ if n.is_su() && ix.binding.get(i).is_some_and(|b| b.pipeline.is_empty()) => {
            Some(Type::Str)
        }
        _ => None,
    }
}

/// True when instruction `i` executes a program whose failure is a value (§10.1): a `command`
/// tool, the built-in `run_command`, or a tool-less ACT that runs a program carry.
fn runs_a_program(ix: &Index, i: usize) -> bool {
    let Some(n) = ix.node(i) else { return false };
    let Some(b) = ix.binding.get(i) else {
        return false;
    };
    if b.pipeline.is_empty() {
        return n.is_du()
            && n.opcode == Opcode::Act
            && super::executable::implicit_act_source(ix, n).is_some_and(|(_, program)| program);
    }
    b.pipeline.iter().any(|r| match r {
        ToolRef::Builtin(b) => b.name == "run_command",
        ToolRef::Declared(t) => ix.tool_at(*t).is_some_and(|t| {
            t.name == "run_command"
                || (t.body.as_deref().is_none_or(|b| b.trim().is_empty())
                    && t.command.as_deref().is_some_and(|c| !c.trim().is_empty()))
        }),
    })
}

/// G9 (§10.2, the design's error values): an instruction that runs a program lands its result
/// in an `outcome`-typed carry, or a ROUTE tests the carry it lands in; otherwise a failed run
/// is indistinguishable from success.
fn g9_program_failures_routed(cx: &mut Ctx) {
    let edges = cx.ix.p.edge_list();
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if !runs_a_program(&cx.ix, i) {
            continue;
        }
        let Some(w) = n.writes.first() else {
            found.push((i, n.id.clone(), None));
            continue;
        };
        if matches!(cx.ix.carry_type(w), Some(Type::Named(t)) if t == crate::program::OUTCOME) {
            continue;
        }
        let routed = cx.ix.readers.get(w.as_str()).is_some_and(|rs| {
            rs.iter()
                .any(|&r| cx.ix.node(r).is_some_and(|r| r.opcode == Opcode::Route))
        }) || edges.iter().any(|e| {
            e.guard
                .as_deref()
                .is_some_and(|g| super::guards::names(g).contains(w))
        });
        if !routed {
            found.push((i, n.id.clone(), Some(w.clone())));
        }
    }
    for (i, id, w) in found {
        let (locus, message, repair) = match w {
            Some(w) => (
                Locus::entry(Element::Instruction(i), FieldKey::Writes, 0),
                format!(
                    "`{id}` runs a program whose failure arrives as an error value, but it lands in `{w}`, which is not `outcome`-typed and no ROUTE tests: a failed run would look like success"
                ),
                format!(
                    "declare carry `{w}` as `type: outcome` and add a ROUTE after `{id}` guarded on `{w}.ok`"
                ),
            ),
            None => (
                Locus::element(Element::Instruction(i)),
                format!("`{id}` runs a program but writes nothing, so its failure is never seen"),
                format!(
                    "add `writes: [{id}_outcome]`, declare `{id}_outcome: {{type: outcome, produced_by: {id}}}`, and route on `{id}_outcome.ok`"
                ),
            ),
        };
        let f = cx.report_instr(CheckId::G9, i, locus, message);
        f.repair = Some(Repair::manual(repair));
        f.kind = Some(crate::diag::FindingKind::UnroutedProgramFailure);
    }
}

/// The tool through which read-side instruction `i` reads a file: a call with a path
/// parameter (§7.2) to a tool that fails with an error value the AG-IR can see — a declared
/// tool with a Python `body` or a `command`, or a built-in (`read_file` on a missing file). A
/// `lang: rust` body's fallibility is a fact of its Rust type, which `ais!` checks.
fn file_reading_tool(ix: &Index, i: usize) -> Option<String> {
    let n = ix.node(i)?;
    if !n.is_du() || ix.bind.access(n) != crate::bind::Access::Read {
        return None;
    }
    ix.calls.get(i)?.iter().find_map(|call| {
        if !call.sig.params.iter().any(crate::bind::is_path_param) {
            return None;
        }
        match call.tool {
            ToolRef::Builtin(b) => (b.name != "ask_user").then(|| b.name.to_owned()),
            ToolRef::Declared(t) => ix.tool_at(t).and_then(|t| {
                let rust = t
                    .lang
                    .as_deref()
                    .is_some_and(|l| l.eq_ignore_ascii_case("rust"));
                let body = t.body.as_deref().is_some_and(|b| !b.trim().is_empty());
                let command = t.command.as_deref().is_some_and(|c| !c.trim().is_empty());
                ((body && !rust) || command).then(|| t.name.clone())
            }),
        }
    })
}

/// G9 (§10.2): a step that reads a file ([`file_reading_tool`]) fails for reasons outside the
/// program — the file the task names is missing, unreadable, malformed — and its failure is
/// routed only where a guard tests the error value itself (`c.ok`, `c.error`) or a LOOP
/// verdict is the carry; a guard that merely reads the carry (`len(rows) == 3`) is no route,
/// and a carry whose type cannot hold `{ok, error, output}` never receives one. Unrouted, the
/// run fails closed at that step; this warning says so before any run, with the ROUTE to add.
/// (Other fallible steps — a verification, a save — ending the run on a failure is the
/// documented default and not reported; steps that run a program are
/// [`g9_program_failures_routed`]'s.)
fn g9_failures_tested(cx: &mut Ctx) {
    let edges = cx.ix.p.edge_list();
    let verdicts: Vec<&str> = cx
        .ix
        .p
        .instructions()
        .iter()
        .filter(|n| n.opcode == Opcode::Loop)
        .filter_map(|n| n.verdict.as_deref())
        .collect();
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        if runs_a_program(&cx.ix, i) {
            continue;
        }
        let Some(tool) = file_reading_tool(&cx.ix, i) else {
            continue;
        };
        let w = n.writes.first();
        if w.is_some_and(|w| verdicts.contains(&w.as_str())) {
            continue;
        }
        let mut reading = None;
        let mut tested = false;
        for e in edges {
            let (Some(g), Some(w)) = (e.guard.as_deref(), w) else {
                continue;
            };
            if crate::expr::errors_tested(g).contains(w) {
                tested = true;
            } else if reading.is_none() && super::guards::names(g).contains(w) {
                reading = Some(format!(
                    "; the guard `{g}` on `{} -> {}` reads `{w}` but does not test whether `{}` failed",
                    e.from, e.to, n.id
                ));
            }
        }
        if !tested {
            found.push((
                i,
                n.id.clone(),
                tool,
                w.cloned(),
                reading.unwrap_or_default(),
            ));
        }
    }
    for (i, id, tool, w, reading) in found {
        let lands = match &w {
            None => "lands in no carry".to_owned(),
            Some(w) => match cx.ix.carry_type(w) {
                None | Some(Type::Any | Type::Dict(_)) => format!("lands in `{w}`"),
                Some(Type::Named(t)) if t == crate::program::OUTCOME => format!("lands in `{w}`"),
                Some(t) => format!("cannot land in `{w}` (`{t}` cannot hold an error value)"),
            },
        };
        let message = format!(
            "`{id}` reads a file through `{tool}`, which fails when the file is missing or unreadable; the failure {lands} and no guard tests it{reading}: a failure ends the run at `{id}` as an error (§10.2)"
        );
        let next = edges
            .iter()
            .find(|e| e.from == id)
            .map_or("NEXT", |e| e.to.as_str());
        let repair = format!(
            "route the failure: write an outcome (`writes: [{id}_outcome]`, `{id}_outcome: {{type: outcome, produced_by: {id}}}`), add the edges `{{from: {id}, to: {next}, guard: \"{id}_outcome.ok\"}}` and `{{from: {id}, to: ON_ERROR}}`, and read the result as `{id}_outcome.value`"
        );
        let locus = match w {
            Some(_) => Locus::entry(Element::Instruction(i), FieldKey::Writes, 0),
            None => Locus::element(Element::Instruction(i)),
        };
        let f = cx.report_instr(CheckId::G9, i, locus, message);
        f.severity = crate::diag::Severity::Warn;
        f.repair = Some(Repair::manual(repair));
        f.kind = Some(crate::diag::FindingKind::UnroutedProgramFailure);
    }
}

/// G9 (§7.1): every carry a DU instruction reads reaches a parameter of its tool. A read that
/// no parameter binds is dropped without a word — the tool runs on the other operands (often a
/// carry rule 1 took by name from outside the instruction's reads) and the program is wrong.
/// Reported at the read, naming what each parameter took and by which rule. `task` is exempt:
/// reading it is how a step takes a path from the task (§7.3). A SPAWN's fan-out source is its
/// siblings', not its tool's.
fn g9_reads_bound(cx: &mut Ctx) {
    let mut found = Vec::new();
    for (i, n) in cx.ix.p.instructions().iter().enumerate() {
        let Some(calls) = cx.ix.calls.get(i) else {
            continue;
        };
        if !n.is_du() || calls.is_empty() || n.opcode == Opcode::Spawn {
            continue;
        }
        let bound: Vec<&str> = calls
            .iter()
            .flat_map(|c| c.bindings.iter().filter_map(|b| b.carry()))
            .collect();
        for (k, r) in n.reads.iter().enumerate() {
            if r == "task" || cx.ix.bind.carry(r).is_none() {
                continue;
            }
            if bound.contains(&r.as_str()) || n.reads[..k].contains(r) {
                continue;
            }
            found.push((
                i,
                k,
                n.id.clone(),
                r.clone(),
                describe_bindings(&cx.ix, calls, n),
            ));
        }
    }
    for (i, k, id, read, (tool, took)) in found {
        let message = format!(
            "`{id}` reads `{read}`, but no parameter of `{tool}` takes it, so the operand is dropped: {took}"
        );
        let repair = format!(
            "name a parameter of `{tool}` `{read}` (rule 1 binds by name), or rename the carry a parameter took by name so `{read}` reaches it by position or role; or drop `{read}` from the reads of `{id}`"
        );
        let locus = Locus::entry(Element::Instruction(i), FieldKey::Reads, k);
        let f = cx.report_instr(CheckId::G9, i, locus, message);
        f.repair = Some(Repair::manual(repair));
        f.kind = Some(crate::diag::FindingKind::ReadUnbound);
    }
}

/// The tool (or pipeline) of `calls` as `name(params)`, and what each parameter took, in
/// words: "`summary_md` took the carry `summary_md` by name (rule 1), which `save` does not
/// read; `path` took `summary_file` by role (rule 3)".
fn describe_bindings(
    ix: &Index,
    calls: &[super::index::Call],
    n: &crate::program::Instruction,
) -> (String, String) {
    let mut names = Vec::new();
    let mut took = Vec::new();
    for call in calls {
        let name = match call.tool {
            ToolRef::Declared(t) => ix.tool_at(t).map_or_else(String::new, |t| t.name.clone()),
            ToolRef::Builtin(b) => b.name.to_owned(),
        };
        let params: Vec<&str> = call.sig.params.iter().map(|p| p.name.as_str()).collect();
        names.push(format!("{name}({})", params.join(", ")));
        for b in &call.bindings {
            let rule = format!("{} (rule {})", b.rule.describe(), b.rule.number());
            took.push(match &b.source {
                BindSource::Carry(c) if !n.reads.contains(c) => format!(
                    "`{}` took the carry `{c}` {rule}, which `{}` does not read",
                    b.param, n.id
                ),
                BindSource::Carry(c) => format!("`{}` took `{c}` {rule}", b.param),
                BindSource::Field { carry, field } => {
                    format!("`{}` took `{carry}.{field}` {rule}", b.param)
                }
                BindSource::Invocation(_) => {
                    format!("`{}` takes a filename from the task {rule}", b.param)
                }
                BindSource::Null => format!("`{}` is unbound (rule 6)", b.param),
            });
        }
    }
    (names.join(" | "), took.join("; "))
}

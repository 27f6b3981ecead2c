//! The validator's findings, placed at the DSL's tokens and worded in the DSL's terms.
//!
//! Both drivers use this: the macro turns each [`Diagnostic`] into a compile error (or, for a
//! warn finding, a compiler warning), `build.rs` export prints it with file, line and column.
//! A repair is never applied to Rust source; it is shown as the diagnostic's `help`, written as
//! the line to change in the DSL ([`help`] is the one place the wording lives).

use crate::ast::Site;
use crate::lower::Lowered;
use ais_core::{
    CheckId, Code, Edit, Element, Finding, FindingKind, Instruction, Locus, Owner, Program,
    Repairs, Severity, SourceMap, Wording, check,
};

/// One finding of the validator, where and how the DSL user should read it.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// The check (or, for a finding the validator did not make, what kind it is).
    pub id: Code,
    /// Its severity: `Warn` is a compiler warning, the others are errors.
    pub severity: Severity,
    /// The message, led by the check id: "W8: `draft` reads `taks`, …; did you mean `task`?".
    pub message: String,
    /// The change that resolves it, in the DSL's terms.
    pub help: Option<String>,
    /// The tokens it is about.
    pub site: Site,
}

impl Diagnostic {
    /// True for an error or fatal finding (a compile error); false for a warning.
    pub fn is_error(&self) -> bool {
        self.severity != Severity::Warn
    }

    /// The message with its help on a second line, as a compile error shows it.
    pub fn full_message(&self) -> String {
        match &self.help {
            Some(h) => format!("{}\n  = help: {h}", self.message),
            None => self.message.clone(),
        }
    }
}

/// Validates a lowered program and places every finding at its token, followed by the DSL's
/// own warnings ([`crate::unrouted_failures`]: fallible Rust tools whose failure is not routed).
/// `fallback` is where a finding with no recorded place points (the program's name).
pub fn diagnose(lowered: &Lowered, fallback: Site) -> Vec<Diagnostic> {
    diagnose_with(lowered, fallback, &mut |_| None)
}

/// [`diagnose`], and the CALLs checked against their targets (`ais_core::check_calls`):
/// `targets` finds the program a CALL names (the macro: the programs of the same `ais!`), or
/// `None` when it cannot say.
pub fn diagnose_with(
    lowered: &Lowered,
    fallback: Site,
    targets: &mut dyn FnMut(&str) -> Option<Program>,
) -> Vec<Diagnostic> {
    let checked = check(&lowered.program, &SourceMap::new(), Repairs::Off);
    let mut findings = checked.findings;
    findings.extend(ais_core::check_calls(
        &lowered.program,
        targets,
        &SourceMap::new(),
    ));
    findings.extend(ais_core::check_mcp(
        &lowered.program,
        lowered.mcp_lock.as_ref(),
        &SourceMap::new(),
    ));
    let findings = without_consequences(findings);
    let findings = without_allowed(findings, lowered);
    // (instruction, mergeable, diagnostic)
    let mut out: Vec<(Option<String>, bool, Diagnostic)> = Vec::new();
    for f in &findings {
        let d = Diagnostic {
            id: f.id,
            severity: f.severity,
            message: message(f),
            help: help(f, &lowered.program),
            site: site(lowered, &f.locus, f).unwrap_or(fallback),
        };
        // Two findings of one check about one instruction are one mistake (a LOOP with neither
        // cap nor counter): one error that says both.
        let mergeable = f.instruction.is_some() && f.locus.index.is_none();
        if let Some((_, _, prev)) = out
            .iter_mut()
            .find(|(instr, m, prev)| *m && mergeable && prev.id == d.id && *instr == f.instruction)
        {
            let extra = d
                .message
                .trim_start_matches(&format!("{}: ", d.id))
                .to_owned();
            prev.message = format!("{}; and {extra}", prev.message);
            if let Some(h) = d.help
                && prev.help.as_ref() != Some(&h)
            {
                prev.help = Some(match prev.help.take() {
                    Some(p) => format!("{p}; and {h}"),
                    None => h,
                });
            }
            continue;
        }
        out.push((f.instruction.clone(), mergeable, d));
    }
    let mut out: Vec<Diagnostic> = out.into_iter().map(|(_, _, d)| d).collect();
    out.extend(crate::routing::unrouted_failures(lowered, fallback));
    out
}

/// Drops the validator's unrouted program failures (G9: a step that runs a `command` tool or a
/// produced program) at instructions marked `#[allow(unrouted_failure)]`: the mark accepts a
/// failure ending the run as an error for every fallible tool kind, Rust or subprocess.
fn without_allowed(findings: Vec<Finding>, lowered: &Lowered) -> Vec<Finding> {
    if lowered.unrouted_allowed.is_empty() {
        return findings;
    }
    let allowed: Vec<&str> = lowered
        .unrouted_allowed
        .iter()
        .filter_map(|&i| lowered.program.instructions().get(i))
        .map(|n| n.id.as_str())
        .collect();
    findings
        .into_iter()
        .filter(|f| {
            !(f.id == CheckId::G9
                && is_unrouted_program(f)
                && f.instruction
                    .as_deref()
                    .is_some_and(|i| allowed.contains(&i)))
        })
        .collect()
}

/// Whether a finding is the validator's unrouted program failure (G9).
fn is_unrouted_program(f: &Finding) -> bool {
    f.kind == Some(FindingKind::UnroutedProgramFailure)
}

/// Drops the findings that only restate another one's consequence, so one mistake shows as
/// one error: an unreachable instruction or TERMINAL when an edge names no instruction (W4),
/// and a carry with no producer (W10) when a write was misspelled for it (W9's suggestion).
fn without_consequences(findings: Vec<Finding>) -> Vec<Finding> {
    let dangling_edge = findings.iter().any(|f| f.id == CheckId::W4);
    let meant: Vec<String> = findings
        .iter()
        .filter(|f| f.id == CheckId::W9)
        .filter_map(|f| f.did_you_mean.first().cloned())
        .collect();
    findings
        .into_iter()
        .filter(|f| {
            let unreachable = (f.id == CheckId::W6 || f.id == CheckId::W7)
                && f.message.contains("cannot be reached");
            let orphan =
                f.id == CheckId::W10 && meant.iter().any(|m| f.message.contains(&format!("`{m}`")));
            !(orphan || dangling_edge && unreachable)
        })
        .collect()
}

fn site(lowered: &Lowered, locus: &Locus, f: &Finding) -> Option<Site> {
    // A finding inside a guard points at the offending name: the core's sub-range when it
    // gives one, else the first name the message quotes.
    if let (Element::Edge(e), Some("guard")) = (locus.element, locus.field_str())
        && let Some(guard) = lowered
            .program
            .edge_list()
            .get(e)
            .and_then(|edge| edge.guard.as_deref())
        && let Some(offset) = inner_offset(guard, f).or_else(|| offending_offset(guard, f))
        && let Some(span) = lowered.spans.guard_token(e, offset)
    {
        return Some(Site::one(span));
    }
    // A finding about a carry as one instruction uses it (a type the call cannot take) points
    // at the operand where that instruction reads it.
    if let (Element::Carry(c), Some(id)) = (locus.element, f.instruction.as_deref())
        && let Some(carry) = lowered.program.carries().get(c)
        && let Some((i, instr)) = lowered.program.instruction(id)
        && let Some(j) = instr.reads.iter().position(|r| *r == carry.name)
        && let Some(site) = lowered
            .spans
            .lookup(&Locus::entry(Element::Instruction(i), "reads", j))
    {
        return Some(site);
    }
    lowered.spans.lookup(locus)
}

/// The byte offset in a (one-line) guard of the finding's sub-range.
fn inner_offset(guard: &str, f: &Finding) -> Option<usize> {
    let inner = f.inner?;
    if inner.line != 1 {
        return None;
    }
    let column = usize::try_from(inner.column).ok()?.checked_sub(1)?;
    guard
        .char_indices()
        .nth(column)
        .map(|(i, _)| i)
        .or((column == guard.chars().count()).then_some(guard.len()))
}

/// The offset in a guard of the first name quoted in the finding's message (`plan_okk`).
fn offending_offset(guard: &str, f: &Finding) -> Option<usize> {
    let mut parts = f.message.split('`').skip(1).step_by(2);
    parts.find_map(|name| {
        if name.is_empty() || name == guard {
            return None;
        }
        guard.match_indices(name).map(|(i, _)| i).find(|&i| {
            let before = guard[..i].chars().last();
            let after = guard[i + name.len()..].chars().next();
            let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            boundary(before) && boundary(after)
        })
    })
}

fn message(f: &Finding) -> String {
    let mut m = format!("{}: {}", f.id, f.message);
    if let Some(first) = f.did_you_mean.first()
        && !f.message.to_lowercase().contains("did you mean")
    {
        m.push_str(&format!("; did you mean `{first}`?"));
    }
    m
}

/// The repair, worded for the DSL: the line to write, not the YAML to edit.
pub fn help(f: &Finding, program: &Program) -> Option<String> {
    let instr = f
        .instruction
        .as_deref()
        .and_then(|id| program.instruction(id))
        .map(|(_, i)| i);
    if let Some(edit) = f.repair.as_ref().and_then(|r| r.edit.as_ref()) {
        return Some(edit_help(edit, f, instr));
    }
    if let Some(first) = f.did_you_mean.first() {
        return Some(format!("write `{first}`"));
    }
    check_help(f.id.check()?, f, program, instr)
}

/// G9's dropped operand, in the DSL's terms: the parameter that took a carry by name from
/// outside the call is the likely slip — pass that carry, or rename the parameter so the
/// operand binds by name (rule 1) — else rename a parameter, or remove the operand.
fn dropped_operand_help(f: &Finding, program: &Program, instr: &Instruction) -> Option<String> {
    let read = instr.reads.get(f.locus.index?)?;
    let tool = instr.tool.as_deref()?;
    let sig = program
        .tool(tool)
        .and_then(|(_, t)| t.sig.as_deref())
        .and_then(|s| ais_core::sig::parse(s).ok());
    let by_name = sig
        .iter()
        .flat_map(|s| s.params.iter())
        .find(|p| !instr.reads.contains(&p.name) && program.carry(&p.name).is_some());
    Some(match by_name {
        Some(p) => format!(
            "parameter `{0}` of `{tool}` took the carry `{0}` by name. If that carry is what `{1}` should use, pass it: `{tool}({0}, …)`. If `{read}` is, rename the parameter `{0}` to `{read}` in the tool's `fn` so `{read}` binds by name. Otherwise remove `{read}` from the call",
            p.name, instr.id
        ),
        None => format!(
            "rename a parameter of `{tool}` to `{read}` in the tool's `fn` so `{read}` binds by name, or remove `{read}` from the call"
        ),
    })
}

/// The help for a finding whose repair is an edit of the program.
fn edit_help(edit: &Edit, f: &Finding, instr: Option<&Instruction>) -> String {
    match edit {
        // A misspelling is likelier than a missing carry: offer the close name first.
        Edit::MintCarry { .. } if !f.did_you_mean.is_empty() => format!(
            "write `{}`, or {}",
            f.did_you_mean[0],
            edit.describe(Wording::RustDsl)
        ),
        // The consumer's demand may be the thing to change, not the carry: its writer
        // may well produce what the carry says.
        Edit::AdoptType { carry, ty } if let Some(i) = instr => format!(
            "read a `{ty}` carry in place of `{carry}` in `{}`, or declare `{carry}: \
             {ty},` if what writes `{carry}` produces `{ty}`",
            i.id
        ),
        other => other.describe(Wording::RustDsl),
    }
}

/// The help for a finding with no edit and no close name: a dispatch from the check (and, where
/// one check has several findings, the message's kind) to the line to write. `instr` is the
/// instruction the finding is about, if any.
fn check_help(
    check: CheckId,
    f: &Finding,
    program: &Program,
    instr: Option<&Instruction>,
) -> Option<String> {
    let id = instr.map(|i| i.id.clone()).unwrap_or_default();
    let op = instr.map(|i| i.opcode.to_string()).unwrap_or_default();
    let text = match check {
        CheckId::W3 => owner_help(instr, &id, &op),
        CheckId::G9 if is_unrouted_program(f) => match instr.and_then(|i| i.writes.first()) {
            Some(w) => format!(
                "route it: declare `{w}: outcome,` and branch on it (`{id} -> next if {w}.ok;` and `{id} -> on_error else;`), or mark `{id}` `#[allow(unrouted_failure)]` to let a failure end the run"
            ),
            None => format!(
                "write its outcome (`-> {id}_outcome` with `{id}_outcome: outcome,`) and branch on `{id}_outcome.ok`, or mark `{id}` `#[allow(unrouted_failure)]` to let a failure end the run"
            ),
        },
        // Worded without AG-IR terms by the validator itself.
        CheckId::G9
            if matches!(
                f.kind,
                Some(FindingKind::CallWriteUnproduced | FindingKind::FillNotObject)
            ) =>
        {
            f.repair.as_ref()?.summary.clone()
        }
        CheckId::G9 if f.kind == Some(FindingKind::ReadUnbound) => {
            dropped_operand_help(f, program, instr?)?
        }
        CheckId::X5 if f.kind == Some(FindingKind::GenEnumNotEnum) => {
            let w = instr
                .and_then(|i| i.writes.first())
                .map_or("choice", String::as_str);
            let mut name: Vec<char> = w.chars().filter(|c| *c != '_').collect();
            if let Some(c) = name.first_mut() {
                *c = c.to_ascii_uppercase();
            }
            let name: String = name.into_iter().collect();
            format!(
                "declare an enum of the choices and type `{w}` with it: `enum {name} {{ first, second }}` and `{w}: {name},`"
            )
        }
        CheckId::W5 => transitions_help(program),
        CheckId::W12 if f.message.contains("resident") => format!(
            "say which slots receive it: `#[resident_on(instruction)] knowledge {} = ..;`",
            quoted(f, 0).unwrap_or("item")
        ),
        CheckId::W6 if f.message.contains("second TERMINAL") => format!(
            "end every path at one TERMINAL: remove `{}` and lead its edges to `{}`",
            quoted(f, 0).unwrap_or("it"),
            quoted(f, 1).unwrap_or("the first")
        ),
        CheckId::W6 => {
            "end the program with an instruction such as `done: TERMINAL(result);`".into()
        }
        CheckId::W1 => format!(
            "give each instruction its own id: rename this `{id}` (edges name instructions by id)"
        ),
        CheckId::W7 => unreached_help(f, &id),
        CheckId::W10 if f.message.starts_with("carry `") => unwritten_carry_help(f, program),
        CheckId::W13 => {
            let name = quoted(f, 0).unwrap_or("it");
            format!(
                "rename `{name}` after what it holds (`note_{name}`, `report_{name}`), so it binds \
                 only where an instruction reads it"
            )
        }
        CheckId::W14 => format!(
            "list its members: `enum {} {{ first, second }}`",
            quoted(f, 0).unwrap_or("Kind")
        ),
        CheckId::G3 if f.message.contains("is the artifact step") => format!(
            "make `{}` write the deliverable: `#[surface(ACT, artifact)]` and a \
             `path: &ais::ArtifactPath` parameter to write through (or run the built-in \
             `write_file` in `{id}`)",
            quoted(f, 1).unwrap_or("its tool")
        ),
        CheckId::X3 => {
            format!("declare the isolation: `#[concurrency(isolation = private_write)]` on `{id}`")
        }
        CheckId::W12 => "give the knowledge item its content: `knowledge name = \"...\";`".into(),
        CheckId::X1 => format!(
            "give `{id}` a tool (`{id}: {op} my_tool(..)`), or let a model do it with a doc comment and `{op}(model)`"
        ),
        CheckId::X2 => loop_help(f, instr?)?,
        CheckId::X4 => format!("add a default edge: `{id} -> fallback else;`"),
        CheckId::G5 if f.message.contains("obligations") => format!(
            "split `{id}` into one step per obligation, each with its own doc comment and one \
             `#[traces_to(..)]` rule"
        ),
        CheckId::G5 => format!("say what `{id}` must produce in a doc comment above it"),
        CheckId::G6
            if f.kind == Some(FindingKind::HumanGateOnDerived)
                && f.message.contains("has no explicit guards") =>
        {
            let on = quoted(f, 1).unwrap_or("the answer");
            format!(
                "guard `{id}`'s edges on `{on}`: `{id} -> next if {on} == …;` and a default edge `{id} -> fallback else;`"
            )
        }
        CheckId::G6 if f.message.contains("has no explicit guards") => {
            let answer = quoted(f, 1).unwrap_or("the answer");
            format!(
                "parse `{answer}` into a carry in a step of its own (`parse: CODE({answer}) -> approved = {answer} == \"yes\";`), then guard `{id}`'s edges on it: `{id} -> next if approved == true;` and a default edge `{id} -> fallback else;`"
            )
        }
        CheckId::G6 if f.kind == Some(FindingKind::HumanGateOnDerived) => {
            let on = quoted(f, 1).unwrap_or("it");
            format!(
                "decide in code: `{id}: ROUTE(code)({on});` with guards over it (`{id} -> next if {on} == …;` and a default edge)"
            )
        }
        CheckId::G6 => format!(
            "decide in code: `{id}: ROUTE(code)(..)` with guards over a carry a DU step parses from the answer"
        ),
        CheckId::G8 if f.message.contains("sequential") => {
            "chain the dependent steps (`a -> b;`) instead of fanning them out".to_owned()
        }
        CheckId::G8 if f.message.contains("isolation") => {
            format!("declare the isolation: `#[concurrency(isolation = private_write)]` on `{id}`")
        }
        CheckId::G1 if f.message.contains("prose pointer") => {
            "put the text itself in the knowledge item, not a reference to it".to_owned()
        }
        CheckId::X5 if f.message.contains("in its content parameter") => format!(
            "read the carry that holds the text itself ahead of `{}` in `{id}`",
            quoted(f, 2).unwrap_or("the path")
        ),
        CheckId::X5 if f.message.contains("in its path parameter") => {
            let carry = quoted(f, 2).unwrap_or("it");
            format!(
                "if `{carry}` holds a path, name it like one (`{carry}_path`); else drop it from \
                 `{id}`'s reads so the path comes from the task"
            )
        }
        _ => return None,
    };
    Some(text)
}

/// X2: the attributes the LOOP lacks (and only those), or, for a verdict a model writes, that
/// code must compute it.
fn loop_help(f: &Finding, instr: &Instruction) -> Option<String> {
    let id = &instr.id;
    if f.kind == Some(FindingKind::LoopVerdictNotCode) {
        let v = instr.verdict.as_deref().unwrap_or("ok");
        let by = quoted(f, 2).unwrap_or("the model step");
        let work = instr.reads.first().map_or("draft", String::as_str);
        return Some(format!(
            "compute `{v}` in code, in place of `{by}`: a SENSE or CODE step that checks the \
             work (`check: SENSE passes({work}) -> {v};` or `check: CODE({work}) -> {v} = \
             len({work}) > 200;`), with the loop's back edge leading through it"
        ));
    }
    let missing: Vec<&str> = [
        (instr.verdict.is_none(), "#[verdict(ok)]"),
        (instr.cap.is_none(), "#[cap(3)]"),
        (instr.counter.is_none(), "#[counter(round)]"),
    ]
    .into_iter()
    .filter_map(|(gone, attr)| gone.then_some(attr))
    .collect();
    if missing.is_empty() {
        return f.repair.as_ref().map(|r| r.summary.clone());
    }
    Some(format!("bound the loop: `{}` on `{id}`", missing.join(" ")))
}

/// The `n`-th name (from 0) the finding's message quotes in backticks.
fn quoted(f: &Finding, n: usize) -> Option<&str> {
    f.message.split('`').nth(2 * n + 1)
}

/// W3: an owner written where the opcode fixes it, or none where the opcode needs one.
fn owner_help(instr: Option<&Instruction>, id: &str, op: &str) -> String {
    match instr.and_then(|i| i.opcode.fixed_owner()) {
        Some(owner) => format!(
            "remove the owner: {op} always runs on the {} (`{id}: {op}(..)`)",
            if owner == Owner::Model {
                "model"
            } else {
                "code"
            }
        ),
        None => format!("say who runs it: `{id}: {op}(code) ..` or `{id}: {op}(model) ..`"),
    }
}

/// W5: no transitions at all; offers the instructions chained in the order written.
fn transitions_help(program: &Program) -> String {
    let ids: Vec<&str> = program
        .instructions()
        .iter()
        .map(|i| i.id.as_str())
        .collect();
    format!("add the transitions: `{};`", ids.join(" -> "))
}

/// W7: an instruction no path reaches; offers an edge from the entry the message names.
fn unreached_help(f: &Finding, id: &str) -> String {
    let entry = f
        .message
        .split_once("from the entry `")
        .and_then(|(_, rest)| rest.split('`').next())
        .unwrap_or("a step");
    format!("add an edge that leads to it (`{entry} -> {id};`), or remove `{id}`")
}

/// W10: a carry nothing writes; offers a write, or making it an input of its declared type.
fn unwritten_carry_help(f: &Finding, program: &Program) -> String {
    let name = quoted(f, 0).unwrap_or("it");
    let ty = program
        .carry(name)
        .and_then(|(_, c)| c.ty.as_ref())
        .map_or("str".to_owned(), ToString::to_string);
    format!(
        "write `{name}` from an instruction (`step: .. -> {name};`), or make it an input: \
         `{name}: {ty} = input,`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offending_name_is_found_inside_a_guard() {
        let f = Finding::new(
            CheckId::X5,
            Severity::Fatal,
            Locus::field(Element::Edge(0), "guard"),
            "guard: `plan_okk` is not a carry",
        );
        assert_eq!(offending_offset("ok and plan_okk == true", &f), Some(7));
        assert_eq!(offending_offset("plan_okkk", &f), None);
    }
}

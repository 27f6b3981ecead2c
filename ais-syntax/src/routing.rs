//! Error routing for fallible Rust tools (spec §10.2): a tool whose Rust result is a `Result`
//! fails with a routable error value, and the program is told — a warning at the instruction's
//! tool — where such a failure is not routed.
//!
//! This check is the DSL's own, not the validator's: whether a tool is fallible is a fact of its
//! Rust return type, which the AG-IR does not record (a `.agir` file holds the Rust body as
//! text; the core never reads Rust). The validator's G9 covers the failures it can see in the
//! model itself (a step that runs a program), so the warning is filed under G9 too.
//!
//! # What "routed" means
//!
//! The runtime lands a failed tool's error value (`{ok: false, error, output}`) in the
//! instruction's first write and keeps the failure *unrouted* until a step tests that carry;
//! a run that ends with an unrouted failure reports status `error` (`RunError::Failed`), never
//! `ok`. Statically, then, a DU instruction that runs a fallible Rust tool is routed when it
//! writes a carry and
//!
//! - a guard on some edge tests that carry's error value (`save -> done if plan_file.ok;`:
//!   its `.ok` or `.error`; a guard that merely reads the carry, `len(rows) > 0`, does not), the
//!   edge leaving an instruction that decides in code (a model-owned ROUTE chooses by itself
//!   and tests nothing), or
//! - a LOOP's `#[verdict(..)]` is that carry.
//!
//! Declaring the carry `outcome` lets the guard read the error (`plan_file.ok`,
//! `plan_file.error`); it is not by itself a route: an error value that no edge tests is
//! indistinguishable from success (§10.2). An instruction marked `#[allow(unrouted_failure)]`
//! says that a failure there is meant to end the run as an error, and is not warned about.

use crate::ast::Site;
use crate::diagnose::Diagnostic;
use crate::lower::Lowered;
use ais_core::bind::ProgramIndex;
use ais_core::expr;
use ais_core::{CheckId, Code, Element, Locus, OUTCOME, Opcode, Program, Severity, Type};

/// A warning for each DU instruction that runs a fallible Rust tool whose failure no guard or
/// LOOP verdict tests. `fallback` is where a warning with no recorded place points.
pub fn unrouted_failures(lowered: &Lowered, fallback: Site) -> Vec<Diagnostic> {
    if lowered.fallible_tools.is_empty() {
        return Vec::new();
    }
    let program = &lowered.program;
    let ix = ProgramIndex::new(program);
    let tested = tested_carries(program);
    let mut out = Vec::new();
    for (i, instr) in program.instructions().iter().enumerate() {
        if !instr.is_du() || lowered.unrouted_allowed.contains(&i) {
            continue;
        }
        let Some(tool) = ix
            .bound_tools(instr)
            .into_iter()
            .find(|t| lowered.fallible_tools.contains(&t.name))
        else {
            continue;
        };
        let first = instr.writes.first();
        if first.is_some_and(|w| tested.contains(&w.as_str())) {
            continue;
        }
        let id = &instr.id;
        let next = program
            .edge_list()
            .iter()
            .find(|e| e.from == *id)
            .map_or("next", |e| e.to.as_str());
        let (message, help) = match first {
            Some(w) => (
                format!(
                    "G9: `{id}` runs `{}`, which returns a `Result`: its `Err` lands in `{w}` as \
                     an error value, but no guard tests `{w}`, so a failure ends the run as an \
                     error instead of taking a route (spec §10.2)",
                    tool.name
                ),
                {
                    // A carry already declared `outcome` needs only the guard.
                    let is_outcome = program.carry(w).is_some_and(
                        |(_, c)| matches!(&c.ty, Some(Type::Named(n)) if n == OUTCOME),
                    );
                    let declare = if is_outcome {
                        String::new()
                    } else {
                        format!("declare `{w}: outcome,` and ")
                    };
                    format!(
                        "route it: {declare}branch on `{w}.ok` (`{id} -> {next} if {w}.ok;` and \
                         `{id} -> on_error else;`), or mark `{id}` \
                         `#[allow(unrouted_failure)]` to let a failure end the run"
                    )
                },
            ),
            None => (
                format!(
                    "G9: `{id}` runs `{}`, which returns a `Result`, but writes nothing, so its \
                     `Err` can never be routed: a failure ends the run as an error (spec §10.2)",
                    tool.name
                ),
                format!(
                    "give it a result to route on: `{id}: .. -> {id}_outcome;`, declare \
                     `{id}_outcome: outcome,` and branch on `{id}_outcome.ok`; or mark `{id}` \
                     `#[allow(unrouted_failure)]`"
                ),
            ),
        };
        let el = Element::Instruction(i);
        let site = lowered
            .spans
            .lookup(&Locus::field(el, "tool"))
            .or_else(|| lowered.spans.element(el))
            .unwrap_or(fallback);
        out.push(Diagnostic {
            id: Code::Check(CheckId::G9),
            severity: Severity::Warn,
            message,
            help: Some(help),
            site,
        });
    }
    out
}

/// The carries whose failure some step tests: the carries guards read as `c.ok` or `c.error`
/// on edges that leave an instruction deciding in code, and every LOOP's verdict. A guard that
/// merely reads a carry (`len(rows) > 0`) routes nothing (§10.2).
fn tested_carries(program: &Program) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let chooses_itself = |from: &str| {
        program
            .instruction(from)
            .is_some_and(|(_, n)| n.opcode == Opcode::Route && n.is_su())
    };
    for e in program.edge_list() {
        let Some(guard) = e.guard.as_deref() else {
            continue;
        };
        if chooses_itself(&e.from) {
            continue;
        }
        for name in expr::errors_tested(guard) {
            if let Some((_, c)) = program.carry(&name) {
                out.push(c.name.as_str());
            }
        }
    }
    for n in program.instructions() {
        if n.opcode == Opcode::Loop
            && let Some(v) = n.verdict.as_deref()
        {
            out.push(v);
        }
    }
    out
}

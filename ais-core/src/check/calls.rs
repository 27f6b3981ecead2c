//! G9 for CALL writes (§4.4.3, §2.3 step 4): a CALL with several writes fills each from its
//! target's report by name — the report holds the carries the target writes and its TERMINAL
//! reads — else from the TERMINAL read at the write's position. A write that neither reaches
//! can never be produced: it stays unproduced, and a guard on it silently takes its `else`.
//! The target is another program, so this check takes a way to find it; `ais check` (targets
//! found as the runtime finds them, beside the file) and the `ais!` macro (the programs of the
//! same invocation) both call [`check_calls`].

use super::finish;
use crate::diag::{CheckId, Finding, FindingKind, Repair};
use crate::program::{Opcode, Program};
use crate::source::{Element, FieldKey, Locator, Locus};
use crate::suggest::did_you_mean;

/// The CALL-write findings of `program` (G9, error): each write of a CALL with several writes
/// that its target can never produce, with did-you-mean over the target's TERMINAL reads.
/// `target` finds the program a CALL's `target` names, or `None` when it cannot say (the
/// CALL is then not checked). Placed by `locator`.
pub fn check_calls<M: Locator>(
    program: &Program,
    target: &mut dyn FnMut(&str) -> Option<Program>,
    locator: &M,
) -> Vec<Finding<M::Location>> {
    let mut found = Vec::new();
    for (i, n) in program.instructions().iter().enumerate() {
        if n.opcode != Opcode::Call || n.writes.len() < 2 {
            continue;
        }
        let Some(name) = n.target.as_deref() else {
            continue;
        };
        let Some(callee) = target(name) else { continue };
        let terminal: Vec<&str> = callee
            .instructions()
            .iter()
            .find(|t| t.opcode == Opcode::Terminal)
            .map(|t| t.reads.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let written: Vec<&str> = callee
            .instructions()
            .iter()
            .flat_map(|t| t.writes.iter().map(String::as_str))
            .collect();
        for (k, w) in n.writes.iter().enumerate() {
            if terminal.contains(&w.as_str()) || written.contains(&w.as_str()) || k < terminal.len()
            {
                continue;
            }
            found.push(unproduced(n, i, k, name, &terminal));
        }
    }
    finish(found, locator, program)
}

/// The finding for write `k` of CALL `n` (instruction `i`), which `name` never produces.
fn unproduced(
    n: &crate::program::Instruction,
    i: usize,
    k: usize,
    name: &str,
    terminal: &[&str],
) -> Finding {
    let (id, w) = (&n.id, &n.writes[k]);
    let reads = if terminal.is_empty() {
        "none".to_owned()
    } else {
        format!("`{}`", terminal.join("`, `"))
    };
    let message = format!(
        "CALL `{id}` writes `{w}`, which `{name}` never produces: its report has no `{w}`, and its TERMINAL has no read at position {} to fill it from (its TERMINAL reads: {reads}); `{w}` would stay unproduced",
        k + 1
    );
    let repair = match terminal.first() {
        Some(_) => format!(
            "write one of `{name}`'s TERMINAL reads ({reads}) in place of `{w}`, or make `{name}` produce `{w}` and read it in its TERMINAL"
        ),
        None => format!("make `{name}` produce `{w}` and read it in its TERMINAL"),
    };
    Finding::new(
        CheckId::G9,
        super::severity_of(CheckId::G9),
        Locus::entry(Element::Instruction(i), FieldKey::Writes, k),
        message,
    )
    .with_instruction(id.clone())
    .with_suggestions(did_you_mean(w, terminal.iter().copied()))
    .with_repair(Repair::manual(repair))
    .with_kind(FindingKind::CallWriteUnproduced)
}

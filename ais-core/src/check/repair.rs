//! Mechanical repair, ladder step 1 (spec §9.1): deterministic fixes, each applied to a copy,
//! re-checked, and kept only when the finding it targets is gone and no new error appeared.
//! Every kept repair is recorded as a [`Deviation`] (§10.3). Passes are bounded.

use super::run_checks;
use crate::diag::{CheckId, Deviation, Finding, MechanicalRepair, Severity};
use crate::model::{Carry, Owner, Program, Walker};
use crate::source::Locus;
use std::collections::{HashMap, HashSet};

/// The most passes over the findings; each pass tries every untried mechanical repair once.
const MAX_PASSES: usize = 4;
/// The most repairs tried in total, so repair cost stays bounded on any input.
const MAX_ATTEMPTS: usize = 256;

/// Applies mechanical repairs until none is left to try; returns the repaired program, its
/// findings and the deviations recorded.
pub(super) fn repair(program: &Program) -> (Program, Vec<Finding>, Vec<Deviation>) {
    let mut prog = program.clone();
    let mut findings = run_checks(&prog);
    let mut deviations = Vec::new();
    let mut tried: HashSet<String> = HashSet::new();
    let mut attempts = 0;
    for _ in 0..MAX_PASSES {
        let candidates: Vec<(CheckId, Locus, MechanicalRepair)> = findings
            .iter()
            .filter_map(|f| {
                let m = f.repair.as_ref()?.mechanical.clone()?;
                Some((f.id, f.locus.clone(), m))
            })
            .collect();
        let mut progressed = false;
        for (id, locus, m) in candidates {
            if attempts >= MAX_ATTEMPTS || !tried.insert(format!("{m:?}")) {
                continue;
            }
            if !findings.iter().any(|f| f.id == id && f.locus == locus) {
                continue; // an earlier repair already resolved it
            }
            attempts += 1;
            let Some((next, deviation)) = apply(&prog, &m, id) else {
                continue;
            };
            let after = run_checks(&next);
            let target_gone = !after.iter().any(|f| f.id == id && f.locus == locus);
            let (before_errors, after_errors) = (error_counts(&findings), error_counts(&after));
            let new_error = after_errors
                .iter()
                .any(|(k, n)| before_errors.get(k).is_none_or(|b| n > b));
            if target_gone && !new_error {
                prog = next;
                findings = after;
                deviations.push(deviation);
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    (prog, findings, deviations)
}

/// How many error-or-worse findings each (check, place) has: a repair that raises any count
/// introduced a new error, even where an error of that check stood before.
fn error_counts(findings: &[Finding]) -> HashMap<(CheckId, &Locus), usize> {
    let mut counts = HashMap::new();
    for f in findings.iter().filter(|f| f.severity >= Severity::Error) {
        *counts.entry((f.id, &f.locus)).or_insert(0) += 1;
    }
    counts
}

/// Applies one repair to a copy of the program, with the deviation that records it.
fn apply(p: &Program, m: &MechanicalRepair, check: CheckId) -> Option<(Program, Deviation)> {
    let mut next = p.clone();
    let deviation = match m {
        MechanicalRepair::MintCarry {
            name,
            ty,
            produced_by,
        } => {
            if next.carry(name).is_some() {
                return None;
            }
            let walker = next.walker.get_or_insert_with(Walker::default);
            walker.carries.get_or_insert_with(Vec::new).push(Carry {
                name: name.clone(),
                ty: ty.clone(),
                produced_by: produced_by.clone(),
                ..Carry::default()
            });
            let ty_text = ty
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_else(|| "untyped".into());
            Deviation {
                check: Some(check),
                subject: name.clone(),
                intended: format!(
                    "carry `{name}` written by `{}` without a declaration",
                    produced_by.as_deref().unwrap_or("?")
                ),
                substituted: format!(
                    "declared `{name}: {{type: {ty_text}, produced_by: {}}}`",
                    produced_by.as_deref().unwrap_or("?")
                ),
            }
        }
        MechanicalRepair::ReownToModel { instruction } => {
            let n = next
                .nodes
                .as_mut()?
                .iter_mut()
                .find(|n| n.id == *instruction)?;
            if n.doc.as_deref().is_none_or(|d| d.trim().is_empty()) {
                return None;
            }
            let opcode = n.opcode.to_string();
            n.owner = Some(Owner::Model);
            Deviation {
                check: Some(check),
                subject: instruction.clone(),
                intended: format!("{opcode} `{instruction}` run by code, with nothing to execute"),
                substituted: "a model slot (`owner: model`) filled from its `doc`".to_owned(),
            }
        }
        MechanicalRepair::AdoptType { carry, ty } => {
            let c = carry_mut(&mut next, carry)?;
            let before =
                c.ty.as_ref()
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "untyped".into());
            c.ty = Some(ty.clone());
            Deviation {
                check: Some(check),
                subject: carry.clone(),
                intended: format!("carry `{carry}` typed `{before}`"),
                substituted: format!("carry `{carry}` typed `{ty}`, the type its consumers demand"),
            }
        }
        MechanicalRepair::SetProducer { carry, instruction } => {
            let c = carry_mut(&mut next, carry)?;
            let before = c.produced_by.clone();
            c.produced_by = Some(instruction.clone());
            Deviation {
                check: Some(check),
                subject: carry.clone(),
                intended: match before {
                    Some(b) => {
                        format!("carry `{carry}` produced by `{b}`, which is no instruction")
                    }
                    None => format!("carry `{carry}` with no declared origin"),
                },
                substituted: format!("`produced_by: {instruction}`, its only writer"),
            }
        }
    };
    Some((next, deviation))
}

/// The carry named `name` in `p`'s walker, to change in place; `None` when there is none.
fn carry_mut<'a>(p: &'a mut Program, name: &str) -> Option<&'a mut Carry> {
    p.walker
        .as_mut()?
        .carries
        .as_mut()?
        .iter_mut()
        .find(|c| c.name == name)
}

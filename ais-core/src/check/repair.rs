//! Mechanical repair, ladder step 1 (spec §9.1): deterministic fixes, each applied to a copy,
//! re-checked, and kept only when the finding it targets is gone and no new error appeared.
//! Every kept repair is recorded as a [`Deviation`] (§10.3). Passes are bounded.

use super::run_checks;
use crate::diag::{CheckId, Code, Deviation, Finding, Severity};
use crate::edit::Edit;
use crate::program::Program;
use crate::source::Locus;
use std::collections::{HashMap, HashSet};

/// The most passes over the findings; each pass tries every untried mechanical repair once.
const MAX_PASSES: usize = 4;
/// The most repairs tried in total, so repair cost stays bounded on any input.
const MAX_ATTEMPTS: usize = 256;

/// Applies mechanical repairs until none is left to try; returns the repaired program (`None`
/// when no repair landed: the program is copied only for an attempt), its findings and the
/// deviations recorded.
/// With `lower`, also the program as given lowered from the first check's index (the caller
/// drops it when a repair landed).
pub(super) fn repair(
    program: &Program,
    lower: bool,
) -> (
    Option<Program>,
    Vec<Finding>,
    Vec<Deviation>,
    Option<super::Lowered>,
) {
    let mut prog: Option<Program> = None;
    let (mut findings, plan) = super::run_checks_lowering(program, lower);
    let mut deviations = Vec::new();
    let mut tried: HashSet<String> = HashSet::new();
    let mut attempts = 0;
    for _ in 0..MAX_PASSES {
        let candidates: Vec<(CheckId, Locus, Edit)> = findings
            .iter()
            .filter_map(|f| offered(f).map(|(id, m)| (id, f.locus.clone(), m.clone())))
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
            let Some((next, deviation)) = apply(prog.as_ref().unwrap_or(program), &m, id) else {
                continue;
            };
            let after = run_checks(&next);
            let target_gone = !after.iter().any(|f| f.id == id && f.locus == locus);
            let (before_errors, after_errors) = (error_counts(&findings), error_counts(&after));
            let new_error = after_errors
                .iter()
                .any(|(k, n)| before_errors.get(k).is_none_or(|b| n > b));
            if target_gone && !new_error {
                prog = Some(next);
                findings = after;
                deviations.push(deviation);
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    (prog, findings, deviations, plan)
}

/// The mechanical repair `f` offers, with the check it is for: what [`repair`] tries.
pub(super) fn offered(f: &Finding) -> Option<(CheckId, &Edit)> {
    let r = f.repair.as_ref().filter(|r| r.mechanical)?;
    Some((f.id.check()?, r.edit.as_ref()?))
}

/// How many error-or-worse findings each (check, place) has: a repair that raises any count
/// introduced a new error, even where an error of that check stood before.
fn error_counts(findings: &[Finding]) -> HashMap<(Code, &Locus), usize> {
    let mut counts = HashMap::new();
    for f in findings.iter().filter(|f| f.severity >= Severity::Error) {
        *counts.entry((f.id, &f.locus)).or_insert(0) += 1;
    }
    counts
}

/// Applies one repair to a copy of the program, with the deviation that records it.
fn apply(p: &Program, m: &Edit, check: CheckId) -> Option<(Program, Deviation)> {
    let mut next = p.clone();
    let change = m.apply(&mut next)?;
    Some((
        next,
        Deviation {
            check: Some(check),
            subject: change.subject,
            intended: change.intended,
            substituted: change.substituted,
        },
    ))
}

//! `ais check --budget`: a program's static worst case ([`ais::budget`]), with CALL
//! targets found as the runtime finds them — a `.agir` path under the program's directory, else
//! the one `.agir` file directly in it whose `walker.name` or `name` the target is.

use ais::budget::{Budget, BudgetLimits, budget};
use ais::{Outcome, Program, Repairs, agir, check};
use serde_json::{Value as Json, json};
use std::path::{Component, Path};

/// The limits the runtime runs under (its slot options and the providers' token limit), so
/// the bound is of the runs `ais run` makes.
pub fn runtime_limits() -> BudgetLimits {
    let slot = ais::rt::llm::SlotOptions::default();
    BudgetLimits {
        max_repairs: u64::from(slot.max_repairs),
        max_tool_rounds: u64::from(slot.max_tool_rounds),
        max_calls_per_round: ais::rt::llm::MAX_CALLS_PER_ROUND as u64,
        max_tokens: u64::from(ais::rt::llm::ProviderOptions::default().max_tokens),
        ..BudgetLimits::default()
    }
}

/// The budget of `program`, read from a file in `dir` (`None`: standard input, whose CALL
/// targets are looked up in the working directory), at CALL nesting `depth`. `Err` says why
/// the program has no plan.
pub fn of(program: &Program, dir: &Path, depth: usize) -> Result<Budget, String> {
    let limits = runtime_limits();
    let plan = ais::plan::lower(program).map_err(|f| {
        format!(
            "it does not lower ({})",
            f.first().map_or("X5", |f| f.message.as_str())
        )
    })?;
    let mut targets = |target: &str, depth: usize| -> Result<Budget, String> {
        let doc = find(dir, target)?;
        let checked = check(&doc.program, &doc.source_map, Repairs::Mechanical);
        if checked.outcome == Outcome::Failed {
            return Err("is not runnable (its check fails)".into());
        }
        of(checked.program(&doc.program), dir, depth)
    };
    Ok(budget(program, &plan, &limits, depth, &mut targets))
}

/// The AG-IR document a CALL `target` names, found under `dir`.
pub fn find(dir: &Path, target: &str) -> Result<agir::Document, String> {
    let rel = Path::new(target);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err("leaves the program directory".into());
    }
    let path = dir.join(rel);
    if path.is_file() {
        let text = ais::files::read_regular_text(&path, MAX_PROGRAM_BYTES)
            .map_err(|e| format!("cannot be read ({e})"))?;
        return agir::read(&text).map_err(|e| format!("does not read as AG-IR ({e})"));
    }
    let mut found = None;
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot be looked up in {} ({e})", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "agir") && p.is_file())
        .collect();
    files.sort();
    for file in files.into_iter().take(1024) {
        let Some(doc) = ais::files::read_regular_text(&file, MAX_PROGRAM_BYTES)
            .ok()
            .and_then(|t| agir::read(&t).ok())
        else {
            continue;
        };
        let p = &doc.program;
        let walker = p.walker.as_ref().and_then(|w| w.name.as_deref());
        if walker == Some(target) || p.name.as_deref() == Some(target) {
            if found.is_some() {
                return Err(format!("is the name of two programs in {}", dir.display()));
            }
            found = Some(doc);
        }
    }
    found.ok_or_else(|| format!("is no file or program name in {}", dir.display()))
}

/// A bound of `what` as text: the number and the noun (plural unless 1), or `unbounded`.
/// The largest CALL target read (the AG-IR reader's own limit).
const MAX_PROGRAM_BYTES: u64 = 64 * 1024 * 1024;

fn n(b: Option<u64>, what: &str) -> String {
    match b {
        None => format!("unbounded {what}s"),
        Some(1) => format!("1 {what}"),
        Some(n) => format!("{n} {what}s"),
    }
}

/// The budget for a human: one summary line, a line per LOOP, and each unbounded cause with
/// what would bound it.
pub fn human(b: &Budget, limits: &BudgetLimits) -> String {
    let mut out = format!(
        "budget: at most {}, {} ({}, {} at {} per exchange), {}\n",
        n(b.steps, "step"),
        n(b.slot_calls, "slot fill"),
        n(b.model_exchanges, "model exchange"),
        n(b.completion_tokens, "completion token"),
        limits.max_tokens,
        n(b.tool_calls, "tool call"),
    );
    for l in &b.loops {
        out.push_str(&format!(
            "  LOOP `{}`: cap {}{}, at most {}\n",
            l.instruction,
            l.cap,
            if l.imposed {
                " (imposed by the runtime)"
            } else {
                ""
            },
            n(l.iterations, "iteration")
        ));
    }
    for u in &b.unbounded {
        out.push_str(&format!(
            "  unbounded: {}\n    help: {}\n",
            u.message, u.help
        ));
    }
    out
}

/// The budget as the `budget` member of `ais check --format json` (a bound is a number, or
/// `null` when unbounded).
pub fn json(b: &Budget, limits: &BudgetLimits) -> Json {
    let mut v = serde_json::to_value(b).unwrap_or(Json::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("max_tokens_per_exchange".into(), json!(limits.max_tokens));
        o.insert(
            "visits".into(),
            b.visits
                .iter()
                .map(|(id, v)| json!({"instruction": id, "visits": v}))
                .collect(),
        );
    }
    v
}

#[cfg(test)]
mod tests {
    /// The core's defaults are the runtime's, so a budget computed without the runtime (the
    /// library, the macro) bounds the runs the runtime makes.
    #[test]
    fn the_cores_default_limits_are_the_runtimes() {
        assert_eq!(
            super::runtime_limits(),
            ais::budget::BudgetLimits::default()
        );
    }
}

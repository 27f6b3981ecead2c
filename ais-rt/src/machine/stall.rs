//! Stall detection: a cycle that can never progress faults at once (an extension of §10.4).
//!
//! When the cursor comes back to an instruction with every carry equal to its value at the
//! previous visit there, and every step since was *pure* — a CODE (§4.3: a function of its
//! operands), a code-decided ROUTE, or a slot that failed — the run would repeat the same steps
//! on the same values until the step budget ran out. A cycle through a SENSE, an ACT, a
//! successful slot, a LOOP, a SPAWN or a CALL is not stalled: the world or a model may answer
//! differently, and polling loops are legitimate.
//!
//! The check is exact and costs a few integer operations per step: [`Run::set`] notes the step
//! at which a carry's value last actually changed (a write of the value a carry already holds
//! changes nothing), each instruction keeps the step of its last visit, and a visit is stalled
//! when neither a change nor an impure step happened since the previous one. A cycle that
//! changes a carry and changes it back within one turn is not caught (it runs into the budget,
//! as before).
//!
//! [`Run::set`]: super::Run::set

use super::plan::{Control, Prepared, Step, Work};
use ais_core::Opcode;

/// The most recent steps kept to name a stalled cycle's instructions.
const TRAIL: usize = 4096;

/// The detector's state for one run.
#[derive(Default)]
pub(crate) struct Stall {
    /// Per step: the step number of its last visit (0: never visited).
    visits: Vec<u64>,
    /// The step number at which a carry's value last changed.
    last_change: u64,
    /// The step number of the last impure step.
    last_impure: u64,
    /// Failures landed so far (a slot that failed is a pure step).
    failures: u64,
    /// The failure count when the current step began.
    failures_before: u64,
    /// The steps since the last impure one (at most [`TRAIL`]), as plan indices, with the
    /// step number of the first.
    trail: std::collections::VecDeque<usize>,
    trail_start: u64,
}

impl Stall {
    /// A carry's value changed during step `now`.
    #[inline]
    pub(crate) fn changed(&mut self, now: u64) {
        self.last_change = now;
    }

    /// A failure landed.
    #[inline]
    pub(crate) fn failed(&mut self) {
        self.failures += 1;
    }

    /// The cursor arrives at step `at` as step number `now`: the cycle's plan indices when
    /// the run is stalled there.
    pub(crate) fn visit(&mut self, at: usize, now: u64, steps: usize) -> Option<Vec<usize>> {
        if self.visits.len() < steps {
            self.visits.resize(steps, 0);
        }
        let prev = std::mem::replace(&mut self.visits[at], now);
        self.failures_before = self.failures;
        if self.trail.is_empty() {
            self.trail_start = now;
        }
        if self.trail.len() == TRAIL {
            self.trail.pop_front();
            self.trail_start += 1;
        }
        self.trail.push_back(at);
        let stalled = prev > 0 && self.last_change < prev && self.last_impure < prev;
        stalled.then(|| {
            let from = prev.saturating_sub(self.trail_start) as usize;
            self.trail.iter().skip(from).copied().collect()
        })
    }

    /// Step `step` (step number `now`) ran: an impure one starts the trail afresh.
    pub(crate) fn after(&mut self, step: &Step, now: u64) {
        let failed = self.failures > self.failures_before;
        if !pure(step, failed) {
            self.last_impure = now;
            self.trail.clear();
        }
    }
}

/// Whether a step is a function of the carries alone: CODE, a code-decided ROUTE, a slot that
/// failed. SENSE, ACT, a successful slot, LOOP (its count), SPAWN, CALL are not.
fn pure(step: &Step, failed: bool) -> bool {
    match step.opcode {
        Opcode::Code => !step.model || failed,
        Opcode::Route => matches!(step.control, Control::Edges) && !step.model,
        _ => matches!(step.work, Work::Slot(_)) && failed && step.spawn.is_none(),
    }
}

/// The fault message for a stalled cycle: its instructions, and the carries its steps write
/// or test, all unchanged.
pub(crate) fn message(prep: &Prepared, cycle: &[usize]) -> String {
    let mut ids: Vec<&str> = Vec::new();
    let mut carries: Vec<usize> = Vec::new();
    for &i in cycle {
        let s = &prep.steps[i];
        if !ids.contains(&s.id.as_str()) {
            ids.push(&s.id);
        }
        carries.extend(s.writes.iter().chain(&s.tests));
    }
    carries.sort_unstable();
    carries.dedup();
    let names: Vec<String> = carries
        .iter()
        .map(|&c| format!("`{}`", prep.names.list[c]))
        .collect();
    let at = ids.first().copied().unwrap_or("?");
    let path: Vec<String> = ids.iter().map(|i| format!("`{i}`")).collect();
    format!(
        "stalled at `{at}`: the cycle {} → `{at}` came back with every carry unchanged ({}), and its steps are all pure (CODE, a code-decided ROUTE, a failed slot), so it would repeat until the step budget ran out; make a step in the cycle change a carry, test a failure it keeps producing, or bound it with a LOOP cap",
        path.join(" → "),
        if names.is_empty() {
            "it writes and tests none".to_owned()
        } else {
            names.join(", ")
        }
    )
}

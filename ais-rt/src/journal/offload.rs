//! The sibling-runner hook: work the machine hands to its journal to run elsewhere.
//!
//! A SPAWN's siblings are independent of each other (each reads a frozen snapshot of the carry
//! file and writes no carry, §4.4.4), so a backend that can run work on other processes — the
//! Restate backend runs each sibling as its own invocation, on any registered endpoint — may
//! take them over. A journal says it can through [`Journal::offload`](super::Journal::offload);
//! the default is `None`, and the machine runs the siblings in this process, as always.
//!
//! What crosses the hook is plain data, so it can cross a network: a [`SiblingJob`] (which
//! step of which program, the sibling's index and sub-task, the snapshot, the human's answer
//! for a resumed sibling) goes out, a [`SiblingOutcome`] (its value or error value, a question
//! for the human, or a fault) comes back. The process that receives a job runs it with
//! `ais_rt::Runtime::run_sibling`, over the same program — the one machine, binder and
//! validator — so a sibling does there exactly what it does in process.
//!
//! The machine keeps everything else: the sibling cap and the step budget are checked before
//! any job is handed over, the results are joined in sibling order, a failed sibling is an
//! error value of the join, a fault of any sibling is the run's fault, a sibling's question
//! pauses the SPAWN before its join. Siblings of a CALL's sub-run stay in process.
//!
//! Siblings whose writes the orchestrator applies (`orchestrator_owned`) are handed over too,
//! and then the runner owes the machine their staged files: a sibling stages its writes on the
//! disk of the process that ran it, and before its outcome comes back the runner must have put
//! them in this run's stage for that sibling ([`crate::stage_dir`] under the output root), each
//! path checked as any destination is — the SPAWN then applies them after the join exactly as it
//! applies siblings staged in process. (The Restate runner carries them in the sibling's journaled
//! effect results, so a sibling replayed on another endpoint brings them back too.)
//!
//! A CALL's callee may run elsewhere too ([`Offload::call`]): a [`CallJob`] (the callee's
//! program by digest, the values the CALL binds, the caller's remaining step budget, the
//! nesting depth) goes out, the callee's report comes back as a [`CallOutcome`], and the
//! caller lands it as it lands an in-process sub-run's (`ais_rt::Runtime::run_callee` runs it
//! there). A runner that does not serve the callee answers `None`: the callee runs in process.

use super::{BoxFuture, JournalError, Json};
use crate::model::Usage;
use crate::report::{FaultKind, RunUsage, Status};
use serde::{Deserialize, Serialize};

/// One SPAWN sibling, as work another process can run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiblingJob {
    /// The id of the run the SPAWN belongs to.
    pub run: String,
    /// The digest of the program ([`crate::Prepared::digest`]): a process serving another
    /// version of the program refuses the job.
    pub digest: String,
    /// The SPAWN's position among the program's steps.
    pub step: usize,
    /// The SPAWN's instruction id (checked against `step`).
    pub instruction: String,
    /// The run's step count at the SPAWN (the step of the sibling's effect keys).
    pub at_step: u64,
    /// The sibling's index (its place in the join).
    pub index: usize,
    /// The sibling's sub-task: its element of the fan-out.
    pub subtask: Json,
    /// The run's task text.
    pub task: String,
    /// The carry file at the fork, by name.
    pub carries: Vec<(String, Json)>,
    /// For a sibling resumed at its `ask_user` call: the human's answer and the call's
    /// position in the pipeline.
    pub answer: Option<(Json, usize)>,
}

/// What one sibling did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SiblingOutcome {
    /// It finished: its result (an error value when its work failed) and the tokens it spent.
    Done {
        /// The result, or the failure message.
        value: Result<Json, String>,
        /// The tokens its slot spent (`None`: no slot).
        usage: Option<Usage>,
        /// Its slot's cost and failovers.
        #[serde(default, skip_serializing_if = "super::Spend::is_none")]
        spend: super::Spend,
    },
    /// It stopped at an `ask_user` call.
    Waiting {
        /// The call's position in the pipeline.
        tool: usize,
        /// The question.
        prompt: String,
    },
    /// It stopped the run (§10.1).
    Fault {
        /// Which fault.
        kind: FaultKind,
        /// What happened, naming the SPAWN.
        message: String,
    },
}

/// A CALL's callee, as a run another process can run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallJob {
    /// The id of the calling run.
    pub run: String,
    /// The CALL's instruction id.
    pub instruction: String,
    /// The calling run's step count at the CALL (with `run`, it names the callee's run).
    pub at_step: u64,
    /// The digest of the callee's program ([`crate::Prepared::digest`]).
    pub digest: String,
    /// The task text (the caller's).
    pub task: String,
    /// The values the CALL binds, by the callee's carry names.
    pub values: Vec<(String, Json)>,
    /// The caller's remaining step budget: the callee spends it.
    pub max_steps: u64,
    /// How deep the callee is nested (the caller's depth + 1).
    pub depth: usize,
}

/// How a callee's run ended: the parts of its report object (`RunOutcome::to_json`) the
/// caller lands.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CallOutcome {
    /// How it ended.
    pub status: Status,
    /// Its report.
    pub report: serde_json::Map<String, Json>,
    /// Its deviations, as `ais run --format json` prints them.
    #[serde(default)]
    pub deviations: Vec<Json>,
    /// Its fault.
    pub fault: Option<CallFault>,
    /// The steps it executed.
    pub steps: u64,
    /// The tokens it spent.
    pub usage: RunUsage,
    /// Its pause (a callee that needs human input).
    pub pause: Option<CallPause>,
}

/// A callee's fault.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CallFault {
    /// Which fault.
    pub kind: FaultKind,
    /// Where.
    pub instruction: String,
    /// What happened.
    pub message: String,
}

/// A callee's pause.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CallPause {
    /// The carry the answer would fill.
    pub carry: String,
}

/// A journal's way to run a SPAWN's siblings, and a CALL's callee, elsewhere.
pub trait Offload: Send + Sync {
    /// Runs `jobs` — one SPAWN's siblings, in sibling order — and returns their outcomes in
    /// the same order. `limit` is the SPAWN's own `max_parallel` when the program declares
    /// one: no more of its siblings may run at once. An error is the journal's own (it could
    /// not hand the work over or get it back) and stops the run with the fault `journal`.
    fn siblings<'a>(
        &'a self,
        jobs: Vec<SiblingJob>,
        limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<SiblingOutcome>, JournalError>>;

    /// Runs a CALL's callee elsewhere and returns its report; `None` when this runner does
    /// not serve the callee's program (the default): it runs in process.
    fn call<'a>(
        &'a self,
        job: CallJob,
    ) -> Option<BoxFuture<'a, Result<CallOutcome, JournalError>>> {
        let _ = job;
        None
    }
}

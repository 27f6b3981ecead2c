//! Placement: where a run's SPAWN siblings and CALL callees run (documented on [`Placement`]).

use crate::Prepared;
use crate::journal::{BoxFuture, Json, Spend};
use crate::llm::Usage;
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
        #[serde(default, skip_serializing_if = "Spend::is_none")]
        spend: Spend,
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
/// caller lands, and — when it paused for a human — its saved state, which the caller keeps in
/// its own pause (a CALLed program's question is the caller's, spec §4.4.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

impl CallOutcome {
    /// The callee's outcome `out` as it crosses the seam, with its saved state when it paused.
    pub(crate) fn of(out: &crate::RunOutcome, saved: Option<SavedCall>) -> CallOutcome {
        let deviations = match out.to_json().get_mut("deviations").map(Json::take) {
            Some(Json::Array(d)) => d,
            _ => Vec::new(),
        };
        CallOutcome {
            status: out.status,
            report: out.report.clone(),
            deviations,
            fault: out.fault.as_ref().map(|f| CallFault {
                kind: f.kind,
                instruction: f.instruction.clone(),
                message: f.message.clone(),
            }),
            steps: out.steps,
            usage: out.usage,
            pause: out.pause.as_ref().zip(saved).map(|(p, saved)| CallPause {
                carry: p.carry.clone(),
                saved,
            }),
        }
    }
}

/// A callee's fault.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallFault {
    /// Which fault.
    pub kind: FaultKind,
    /// Where.
    pub instruction: String,
    /// What happened.
    pub message: String,
}

/// A callee's pause: what it asks, and its saved state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallPause {
    /// The carry the answer would fill.
    pub carry: String,
    /// The callee's saved state, which the caller's pause keeps and its resume continues.
    pub saved: SavedCall,
}

/// A paused callee's saved state as it crosses the seam: the pause record a paused run keeps
/// (format `ais-resume/2`), opaque here. It is data from another process: the caller checks
/// that it is of the program it called before it pauses with it, and a resume rebuilds the
/// callee from it failing closed, as from any pause record.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "Json", into = "Json")]
pub struct SavedCall(pub(crate) crate::machine::saved::Saved);

impl PartialEq for SavedCall {
    fn eq(&self, other: &SavedCall) -> bool {
        Json::from(self.clone()) == Json::from(other.clone())
    }
}

impl TryFrom<Json> for SavedCall {
    type Error = String;

    fn try_from(json: Json) -> Result<SavedCall, String> {
        crate::machine::pause::read_record(json).map(SavedCall)
    }
}

impl From<SavedCall> for Json {
    fn from(saved: SavedCall) -> Json {
        crate::machine::pause::record(saved.0)
    }
}

/// Where a run's SPAWN siblings and CALL callees run.
///
/// Each kind of work is asked about first ([`places_siblings`](Self::places_siblings),
/// [`places_call`](Self::places_call)), so a run whose work stays in this process builds no job;
/// the machine hands work over ([`siblings`](Self::siblings), [`call`](Self::call)) only when
/// the answer was yes. Every method has a default that keeps the work here: an implementation
/// overrides the pairs it takes.
///
/// # The seam
///
/// Placement: where a run's SPAWN siblings and CALL callees run — in this process, or
/// elsewhere. The scheduler's seam, apart from the store's ([`crate::journal`]): a journal
/// records what a run did; a [`Placement`] decides where its independent work runs.
///
/// A SPAWN's siblings are independent of each other (each reads a frozen snapshot of the carry
/// file and writes no carry, §4.4.4), so a placement that can run work on other processes — the
/// Restate one runs each sibling as an invocation of its own, on any registered endpoint — may
/// take them over. The runtime is given one with [`RuntimeBuilder::placement`] (or, for one
/// run, [`Runtime::placed`]); the default takes nothing, and the machine runs the
/// siblings and callees in this process, as always.
///
/// What crosses the seam is plain data, so it can cross a network: a [`SiblingJob`] (which
/// step of which program, the sibling's index and sub-task, the snapshot, the human's answer
/// for a resumed sibling) goes out, a [`SiblingOutcome`] (its value or error value, a question
/// for the human, or a fault) comes back. The process that receives a job runs it with
/// [`Runtime::run_sibling`], over the same program — the one machine, binder and validator — so
/// a sibling does there exactly what it does in process; its effects go to the journal that
/// process gives it.
///
/// The machine keeps everything else: the sibling cap and the step budget are checked before
/// any job is handed over, the results are joined in sibling order, a failed sibling is an
/// error value of the join, a fault of any sibling is the run's fault, a sibling's question
/// pauses the SPAWN before its join. Only a run journaled as itself places work (the jobs name
/// it by its journal's run id); the siblings and callees of a CALL's sub-run stay in process.
///
/// Siblings whose writes the orchestrator applies (`orchestrator_owned`) are handed over too,
/// and then the placement owes the machine their staged files: a sibling stages its writes on
/// the disk of the process that ran it, and before its outcome comes back the placement must
/// have put them in this run's stage for that sibling ([`crate::stage_dir`] under the output
/// root), each path checked as any destination is — the SPAWN then applies them after the join
/// exactly as it applies siblings staged in process. (The Restate placement carries them in the
/// sibling's journaled effect results, so a sibling replayed on another endpoint brings them
/// back too.)
///
/// A CALL's callee may run elsewhere too ([`Placement::call`]): a [`CallJob`] (the callee's
/// program by digest, the values the CALL binds, the caller's remaining step budget, the
/// nesting depth) goes out, the callee's report comes back as a [`CallOutcome`], and the
/// caller lands it as it lands an in-process sub-run's ([`Runtime::run_callee`] runs it there).
/// A callee that pauses for a human comes back with its saved state ([`CallPause`]): the
/// caller pauses with it, as with an in-process callee's, once it is a pause of the program
/// called; the answer continues the callee from that state in the caller's process, then the
/// caller.
///
/// [`RuntimeBuilder::placement`]: crate::RuntimeBuilder::placement
/// [`Runtime::placed`]: crate::Runtime::placed
/// [`Runtime::run_sibling`]: crate::Runtime::run_sibling
/// [`Runtime::run_callee`]: crate::Runtime::run_callee
pub trait Placement: Send + Sync {
    /// Whether a SPAWN's siblings run elsewhere, through [`siblings`](Self::siblings). The
    /// default, `false`: they run in this process.
    fn places_siblings(&self) -> bool {
        false
    }

    /// Runs `jobs` — one SPAWN's siblings, in sibling order — and returns their outcomes in
    /// the same order. `limit` is the SPAWN's own `max_parallel` when the program declares
    /// one: no more of its siblings may run at once. An error (the work could not be handed
    /// over, or its outcome did not come back) stops the run with the fault `placement`.
    ///
    /// Called only when [`places_siblings`](Self::places_siblings) is true; the default
    /// refuses.
    fn siblings<'a>(
        &'a self,
        jobs: Vec<SiblingJob>,
        limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<SiblingOutcome>, PlacementError>> {
        let _ = (jobs, limit);
        Box::pin(std::future::ready(Err(PlacementError::new(
            "this placement runs no SPAWN siblings elsewhere",
        ))))
    }

    /// Whether a CALL of `callee` runs elsewhere, through [`call`](Self::call) (a placement
    /// that serves some programs only tells them by [`Prepared::digest`]). The default,
    /// `false`: it runs in this process.
    fn places_call(&self, callee: &Prepared) -> bool {
        let _ = callee;
        false
    }

    /// Runs a CALL's callee elsewhere and returns its report. An error stops the run with the
    /// fault `placement`.
    ///
    /// Called only when [`places_call`](Self::places_call) is true for the callee; the
    /// default refuses.
    fn call<'a>(&'a self, job: CallJob) -> BoxFuture<'a, Result<CallOutcome, PlacementError>> {
        Box::pin(std::future::ready(Err(PlacementError::new(format!(
            "this placement runs no CALL elsewhere (CALL `{}`)",
            job.instruction
        )))))
    }
}

/// The default placement: every sibling and callee runs in this process.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Local;

impl Placement for Local {}

/// Work a [`Placement`] could not hand over, or whose outcome did not come back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlacementError(pub String);

impl PlacementError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> PlacementError {
        PlacementError(message.into())
    }
}

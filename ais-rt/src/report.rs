//! What a run returns: its status, the report, the deviations, the fault or the pause.

use ais_core::{Deviation, Finding};
use serde::Serialize;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The TERMINAL ran and no unrouted failure happened.
    Ok,
    /// A tool, script or slot failed and no ROUTE tested it (§10.2): either the run stopped
    /// at the failing step, because nothing in the program tests where its error value landed
    /// (fail closed), or it reached its end with the failure still untested.
    Error,
    /// A fault of §10.1 (or an unsupported construct) aborted the run.
    Fault,
    /// The run needs a human answer it was not given; it can be resumed.
    InputRequired,
    /// The run stopped at an effect that was in flight when an earlier attempt of it was
    /// killed and that may not run twice; the fault (kind `effect_in_flight`) names the step
    /// and the two ways to continue (`ais resume RUN --retry` or `--mark-done`).
    Interrupted,
}

/// The faults of spec §10.1, and an unsupported construct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// A ROUTE with several guarded edges, no default, and no guard holding.
    RouteDeadEnd,
    /// An operand that does not resolve to a value.
    UnresolvableOperand,
    /// The step budget ran out.
    BudgetExhausted,
    /// A construct this runtime cannot execute (an unknown opcode, a hollow instruction, a
    /// tool with no implementation).
    Unsupported,
    /// The program cannot start: its check outcome is `failed`, or it has slots and the runtime
    /// has no model.
    NotRunnable,
    /// A resume handle that is malformed, or that belongs to another program or run.
    InvalidHandle,
    /// An effect that may not be repeated was in flight when the run was last stopped.
    EffectInFlight,
    /// The run's journal failed, or holds a row that is malformed or contradicts the rest.
    Journal,
    /// The run came back to an instruction with every carry unchanged through pure steps
    /// only (CODE, a code-decided ROUTE, failed slots), so it could never progress: an
    /// extension of §10.4, raised at once instead of at the end of the step budget.
    Stalled,
}

/// A fault: what, at which instruction, where in the source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fault {
    /// The kind of fault.
    pub kind: FaultKind,
    /// The instruction it happened at.
    pub instruction: String,
    /// The instruction's source line, when the program came from a file.
    pub line: Option<usize>,
    /// What happened and what to do about it.
    pub message: String,
}

/// A run paused for a human answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pause {
    /// The carry the answer fills.
    pub carry: String,
    /// The prompt: the carry's `doc` (or the `ask_user` prompt).
    pub prompt: String,
    /// The instruction that needs it.
    pub instruction: String,
    /// The instruction's source line, when known.
    pub line: Option<usize>,
    /// The resumable handle (a file under the output root), when one was written.
    pub handle: Option<std::path::PathBuf>,
}

/// Token usage of a run, summed over its slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RunUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cached prompt tokens, where providers said.
    pub cached_tokens: u64,
    /// Slots filled.
    pub slots: u64,
    /// Moves to the next model of a fallback chain (a slot's model gave no acceptable value).
    #[serde(default)]
    pub failovers: u64,
}

impl RunUsage {
    /// Counts one filled slot: its tokens and its failovers.
    pub fn add_slot(&mut self, slot: &crate::model::slot::SlotOutcome) {
        self.prompt_tokens += slot.usage.prompt_tokens;
        self.completion_tokens += slot.usage.completion_tokens;
        self.cached_tokens += slot.usage.cached_tokens.unwrap_or(0);
        self.failovers += slot.failovers.len() as u64;
        self.slots += 1;
    }
}

/// What a run returns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunOutcome {
    /// How it ended.
    pub status: Status,
    /// The report (spec §4.5): the carries the run produced, as JSON (empty unless the
    /// TERMINAL ran). A carry is produced when a step wrote it, or, for a `role: input` carry,
    /// when the invocation supplied it (the caller, the task text, or its declared default). A
    /// carry nothing produced is absent — never reported with its starting value.
    pub report: serde_json::Map<String, serde_json::Value>,
    /// When the run stopped at a pause or a fault (so `report` is empty): the carries it had
    /// written by then, as JSON — what a harness shows of the steps before the stop (an AGS run
    /// record's node states). Not part of [`RunOutcome::to_json`]: a stopped run reports nothing.
    #[serde(skip)]
    pub written: serde_json::Map<String, serde_json::Value>,
    /// The TERMINAL's reads that the run did not produce on the path it took, in the
    /// TERMINAL's order: they are absent from `report`.
    pub unproduced: Vec<String>,
    /// Deviations recorded while checking and running (§10.3).
    pub deviations: Vec<Deviation>,
    /// The findings of the program's check (a `degraded` program runs with them; a `failed`
    /// one does not run).
    pub findings: Vec<Finding>,
    /// The fault, when the status is `fault`.
    pub fault: Option<Fault>,
    /// The pause, when the status is `input_required`.
    pub pause: Option<Pause>,
    /// Steps executed.
    pub steps: u64,
    /// Token usage.
    pub usage: RunUsage,
    /// True when the model was scripted.
    pub scripted: bool,
}

impl RunOutcome {
    /// The report object of `ais run --format json`, a stable interface: `status`, `report`,
    /// `deviations`, `fault`, `steps` (in that order), then `unproduced`, `pause`, `usage` and
    /// `scripted`. The CLI prints it and a Restate workflow returns it, so a run answers the
    /// same object wherever it runs.
    ///
    /// ```
    /// # use ais_rt::{RunOutcome, RunUsage, Status};
    /// let outcome = RunOutcome {
    ///     status: Status::Ok,
    ///     report: serde_json::Map::new(),
    ///     written: serde_json::Map::new(),
    ///     unproduced: vec![],
    ///     deviations: vec![],
    ///     findings: vec![],
    ///     fault: None,
    ///     pause: None,
    ///     steps: 3,
    ///     usage: RunUsage::default(),
    ///     scripted: false,
    /// };
    /// let json = outcome.to_json();
    /// assert_eq!(json["status"], "ok");
    /// assert_eq!(json["steps"], 3);
    /// ```
    pub fn to_json(&self) -> serde_json::Value {
        let deviations: Vec<serde_json::Value> = self
            .deviations
            .iter()
            .map(ais_core::render::deviation_json)
            .collect();
        serde_json::json!({
            "status": self.status,
            "report": self.report,
            "deviations": deviations,
            "fault": self.fault,
            "steps": self.steps,
            "unproduced": self.unproduced,
            "pause": self.pause,
            "usage": self.usage,
            "scripted": self.scripted,
        })
    }
}

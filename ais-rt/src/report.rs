//! What a run returns: its status, the report, the deviations, the fault or the pause.

use ais_core::{Deviation, Finding};
use serde::Serialize;

ais_core::spelled! {
    /// How a run ended. Spelled (journal, JSON report, MCP, Restate, OTLP) as `ok`, `error`,
    /// `fault`, `input_required`, `interrupted`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Status {
        /// The TERMINAL ran and no unrouted failure happened.
        Ok => "ok",
        /// A tool, script or slot failed and no ROUTE tested it (§10.2): either the run stopped
        /// at the failing step, because nothing in the program tests where its error value
        /// landed (fail closed), or it reached its end with the failure still untested; the
        /// outcome's `failures` name each.
        Error => "error",
        /// A fault of §10.1 (or an unsupported construct) aborted the run.
        Fault => "fault",
        /// The run needs a human answer it was not given; it can be resumed.
        InputRequired => "input_required",
        /// The run stopped at an effect that was in flight when an earlier attempt of it was
        /// killed and that may not run twice; the fault (kind `effect_in_flight`) names the
        /// step and the two ways to continue (`ais resume RUN --retry` or `--mark-done`).
        Interrupted => "interrupted",
    }
    serde
}

ais_core::spelled! {
    /// The faults of spec §10.1, and an unsupported construct.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum FaultKind {
        /// A ROUTE with several guarded edges, no default, and no guard holding.
        RouteDeadEnd => "route_dead_end",
        /// An operand that does not resolve to a value.
        UnresolvableOperand => "unresolvable_operand",
        /// A budget ran out: the step budget (`--max-steps`), the sibling cap of a SPAWN
        /// (`--max-siblings`), or the cost budget (`--max-cost`).
        BudgetExhausted => "budget_exhausted",
        /// A construct this runtime cannot execute (an unknown opcode, a hollow instruction, a
        /// tool with no implementation).
        Unsupported => "unsupported",
        /// The program cannot start: its check outcome is `failed`, or it has slots and the
        /// runtime has no model.
        NotRunnable => "not_runnable",
        /// A resume handle that is malformed, or that belongs to another program or run.
        InvalidHandle => "invalid_handle",
        /// An effect that may not be repeated was in flight when the run was last stopped.
        EffectInFlight => "effect_in_flight",
        /// The run's journal failed, or holds a row that is malformed or contradicts the rest.
        Journal => "journal",
        /// The run's [placement](crate::placement) could not hand a SPAWN's siblings or a
        /// CALL's callee over, or their outcomes did not come back.
        Placement => "placement",
        /// The run came back to an instruction with every carry unchanged through pure steps
        /// only (CODE, a code-decided ROUTE, failed slots), so it could never progress: an
        /// extension of §10.4, raised at once instead of at the end of the step budget.
        Stalled => "stalled",
    }
    serde
}

/// A failure no ROUTE tested (§10.2): the step whose tool, script or slot failed, and its
/// error — what makes a run's status `error`, as a value (its deviation says the same for a
/// reader).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Failure {
    /// The instruction that failed.
    pub instruction: String,
    /// Its error.
    pub message: String,
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Pause {
    /// The carry the answer fills.
    pub carry: String,
    /// The prompt: the carry's `doc` (or the `ask_user` prompt).
    pub prompt: String,
    /// The run's own instruction that waits: the one that needs the answer, or the CALL whose
    /// program asked (then `called` says where in it).
    pub instruction: String,
    /// For a question a CALLed program asked: the programs the CALL at `instruction` leads
    /// into, outermost first, each with its instruction that waits — the last one's asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub called: Vec<Called>,
    /// The instruction's source line, when known.
    pub line: Option<usize>,
    /// The resumable handle (a file under the output root), when one was written.
    pub handle: Option<std::path::PathBuf>,
    /// What the answer must be when it fills a typed carry or call result (`an integer`,
    /// `one of low, high`); `None` when any text is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expects: Option<String>,
    /// Why the answer a resume gave was refused; the run still waits for another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl Pause {
    /// The instruction that asked, as every surface names it (the one spelling): `` `check` ``
    /// for the run's own step, or — for a question of a CALLed program — the callee's step,
    /// its program and the CALL that led there, `` `review` (in `inner`, called by `check`) ``
    /// (each further CALL inward adds its link: `` `r` (in `b`, called by `c` in `a`, called
    /// by `check`) ``).
    ///
    /// ```
    /// use ais_rt::{Called, Pause};
    /// let mut p = Pause {
    ///     carry: "ok".into(),
    ///     prompt: "Go on?".into(),
    ///     instruction: "check".into(),
    ///     called: Vec::new(),
    ///     line: None,
    ///     handle: None,
    ///     expects: None,
    ///     refused: None,
    /// };
    /// assert_eq!(p.asker(), "`check`");
    /// p.called.push(Called { program: "inner".into(), instruction: "review".into() });
    /// assert_eq!(p.asker(), "`review` (in `inner`, called by `check`)");
    /// ```
    pub fn asker(&self) -> String {
        self.asker_at(None)
    }

    /// [`asker`](Self::asker) with where the run's own instruction is in its source (`at`,
    /// `publish.agir:14`): `` `ask` (publish.agir:14) ``, or `` `decide` (in `confirm`, called
    /// by `ask` at publish.agir:14) ``.
    pub fn asker_at(&self, at: Option<&str>) -> String {
        let Some((asked, outer)) = self.called.split_last() else {
            return match at {
                Some(at) => format!("`{}` ({at})", self.instruction),
                None => format!("`{}`", self.instruction),
            };
        };
        let mut by = String::new();
        for c in outer.iter().rev() {
            by += &format!("`{}` in `{}`, called by ", c.instruction, c.program);
        }
        let at = at.map(|at| format!(" at {at}")).unwrap_or_default();
        format!(
            "`{}` (in `{}`, called by {by}`{}`{at})",
            asked.instruction, asked.program, self.instruction
        )
    }

    /// The question as every surface asks it: who asks ([`asker_at`](Self::asker_at), with
    /// `at`), the carry, what the answer must be when that is typed, and the prompt —
    /// `` `decide` (in `confirm`, called by `ask`) needs `confirm` (true or false): Publish? ``.
    pub fn question(&self, at: Option<&str>) -> String {
        let expects = self
            .expects
            .as_ref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        format!(
            "{} needs `{}`{expects}: {}",
            self.asker_at(at),
            self.carry,
            self.prompt.trim()
        )
    }
}

/// A CALLed program a pause waits in, and its instruction that waits there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Called {
    /// The program's name (its `name`, else its walker's; else the CALL's target).
    pub program: String,
    /// Its instruction that waits: the one that asked, or a CALL further in.
    pub instruction: String,
}

/// Token usage and cost of a run, summed over its slots (its SPAWN siblings' and CALL
/// sub-runs' included; a resumed run's include the steps before the resume).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
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
    /// What the slots whose models have a price cost, in US dollars (`None`: no slot had a
    /// price). Slots without a price are counted in `unpriced_slots`, not here.
    #[serde(default)]
    pub cost: Option<f64>,
    /// Slots that asked a model without a price (their cost is not in `cost`).
    #[serde(default)]
    pub unpriced_slots: u64,
}

impl RunUsage {
    /// What one filled slot spent: its tokens, its failovers and its cost.
    pub fn of_slot(slot: &crate::llm::slot::SlotOutcome) -> RunUsage {
        RunUsage {
            prompt_tokens: slot.usage.prompt_tokens,
            completion_tokens: slot.usage.completion_tokens,
            cached_tokens: slot.usage.cached_tokens.unwrap_or(0),
            slots: 1,
            failovers: slot.failovers.len() as u64,
            cost: slot.cost,
            unpriced_slots: u64::from(slot.cost.is_none() && !slot.exchanges.is_empty()),
        }
    }

    /// Counts one filled slot: its tokens, its failovers and its cost.
    pub fn add_slot(&mut self, slot: &crate::llm::slot::SlotOutcome) {
        self.add(&RunUsage::of_slot(slot));
    }

    /// Adds what another part of the run spent (a SPAWN sibling, a CALL's sub-run).
    pub fn add(&mut self, other: &RunUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.slots += other.slots;
        self.failovers += other.failovers;
        self.cost = match (self.cost, other.cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.unpriced_slots += other.unpriced_slots;
    }
}

/// One slot's tokens, as a sibling run elsewhere reports them (no failovers, no cost).
impl From<crate::llm::Usage> for RunUsage {
    fn from(u: crate::llm::Usage) -> RunUsage {
        RunUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cached_tokens: u.cached_tokens.unwrap_or(0),
            slots: 1,
            ..RunUsage::default()
        }
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
    /// The failures no ROUTE tested, when the status is `error` (a callee's run elsewhere
    /// reports its own through its deviations). Not part of [`RunOutcome::to_json`], whose
    /// deviations name them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
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
    ///     failures: vec![],
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

//! The machine: the execution cycle of spec §2.3 over a [`Prepared`] program.
//!
//! Visit → bind → execute → write back → transition, one step at a time, with a step budget
//! (§10.4), the faults of §10.1, deviation records (§10.3), error values that must be routed
//! (§10.2), a trace event per step (§10.5) and the human-input pause (§7.5).
//!
//! - [`plan`]: the program checked, lowered and resolved once.
//! - `carries`: the carry file, zero values, typed invocation values.
//! - `exec`: the Deterministic Unit's work (tools, CODE bodies, write-out, produced programs).
//! - `slot`: the Stochastic Unit's work (slots, SU ROUTE choices, the slot's tool surface).
//! - `spawn`: SPAWN's fan-out, isolation and join; `call`: CALL's sub-runs.
//! - `handover`: siblings and callees handed to the run's [placement](crate::placement) as
//!   jobs, and a job handed over from elsewhere run here.
//! - `object_of_writes`: the object a slot with several writes contracts for.
//! - `saved`: the one saved run state and the one rebuild of a run from it.
//! - `pause`: the human-input pause and its record (in the journal, or a handle file).
//! - `durable`: the journal seam's call sites (step commits, resuming a journaled run).

mod call;
pub(crate) mod carries;
pub(crate) mod durable;
pub(crate) mod effects;
mod exec;
pub(crate) mod handover;
mod object_of_writes;
pub(crate) mod pause;
pub(crate) mod plan;
pub(crate) mod replay;
pub(crate) mod saved;
mod slot;
pub(crate) mod spawn;
mod stall;

use crate::llm::Models;
use crate::report::{Failure, Fault, FaultKind, RunOutcome, RunUsage, Status};
use crate::tools::{ToolContext, ToolLimits, ToolRegistry};
use crate::trace::{SlotTrace, StepEvent, TraceSink};
use ais_core::plan::Next;
use ais_core::{Deviation, Program, Value};
use carries::CarryFile;
use plan::{Control, Prepared, Step, Work};
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// The runtime's settings, shared by every run (and every SPAWN sibling and CALL sub-run).
#[derive(Clone)]
pub(crate) struct Settings {
    /// The models: tiers and the default chain (merge hazard: was `model`).
    pub models: Models,
    pub tools: ToolRegistry,
    pub out_dir: PathBuf,
    pub max_steps: u64,
    pub max_parallel: usize,
    pub trace: Option<Arc<dyn TraceSink>>,
    /// The top-level run's position, for a watcher.
    pub pulse: Option<Arc<crate::trace::Pulse>>,
    pub limits: ToolLimits,
    /// Where CALL targets given as paths resolve.
    pub program_dir: PathBuf,
    /// Programs registered by name for CALL.
    pub programs: HashMap<String, Arc<Program>>,
    /// The largest model answer accepted, in bytes.
    pub max_answer_bytes: usize,
    /// The most siblings one SPAWN may fork.
    pub max_siblings: usize,
    /// What the built-ins may read and fetch.
    pub policy: Arc<crate::tools::AccessPolicy>,
    /// The cost budget in US dollars (`--max-cost`), across SPAWN siblings, CALL sub-runs and
    /// resumes.
    pub max_cost: Option<f64>,
    /// Who watches the answers stream in (a terminal), if anyone.
    pub live: Option<Arc<dyn crate::llm::live::Live>>,
    /// Where a journaled run's SPAWN siblings and CALL callees run.
    pub placement: Arc<dyn crate::placement::Placement>,
}

/// How a step ended.
pub(crate) enum Flow {
    /// Go to this step.
    Goto(usize),
    /// No outgoing edge: the run halts here.
    End,
    /// The TERMINAL ran.
    Terminal,
}

/// Why a run stops before a TERMINAL.
pub(crate) enum Stop {
    Fault(FaultKind, String),
    Pause {
        carry: String,
        prompt: String,
        /// An `ask_user` call: the answer is the step's result.
        ask: bool,
        /// The `ask_user` call's position in the step's pipeline: the tools before it ran and
        /// are not run again on resume.
        tool: usize,
        /// A CALL whose program paused: the callee's state, its question inside.
        call: Option<Box<saved::Saved>>,
    },
}

/// A human's answer to the `ask_user` call a resumed step paused at.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    /// The answer, as the call's result.
    pub value: Value,
    /// The call's position in the pipeline: the tools before it already ran.
    pub tool: usize,
}

/// A failure value produced and not yet tested by a guard (§10.2).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Unrouted {
    pub carry: Option<usize>,
    pub instruction: String,
    pub message: String,
}

/// What a step recorded for the trace (only when tracing is on).
#[derive(Default)]
pub(crate) struct StepNotes {
    pub operands: Vec<(String, serde_json::Value)>,
    pub written: Vec<(String, serde_json::Value)>,
    pub tool: Option<String>,
    pub slot: Option<SlotTrace>,
    pub error: Option<String>,
}

/// One run's mutable state.
pub(crate) struct Run {
    pub settings: Arc<Settings>,
    pub prep: Arc<Prepared>,
    pub carries: CarryFile,
    pub supplied: Vec<bool>,
    /// Per carry: the step that last wrote it (0: never written).
    pub written: Vec<u64>,
    /// This run's steps: one per instruction visit, numbered from 1 — the number the trace,
    /// the journal, the progress line and the outcome give a step.
    pub steps: u64,
    /// Steps run under this run's steps — SPAWN siblings (step `N.i` under the SPAWN's step
    /// `N`) and a CALLed program's steps —: counted against the step budget with `steps`,
    /// never numbered among them.
    pub sub_steps: u64,
    pub max_steps: u64,
    pub deviations: Vec<Deviation>,
    pub unrouted: Vec<Unrouted>,
    pub usage: RunUsage,
    /// LOOP iterations of loops with no counter carry, by step.
    pub loop_counts: Vec<i64>,
    /// Pending branches of a structural fan-out: (branch start, join step).
    pub branches: Vec<(usize, usize)>,
    pub task: String,
    pub depth: usize,
    /// For a CALL's sub-run: the step numbers of the CALLs it runs under, outermost first
    /// (its trace events are sub-steps of theirs).
    pub under: Vec<u64>,
    pub tracing: bool,
    pub notes: StepNotes,
    /// A human's answer to the `ask_user` call the run resumes at.
    pub answer: Option<Answer>,
    /// A SPAWN paused for a sibling's human input: what its siblings did before the pause.
    pub spawn_pending: Option<spawn::Pending>,
    /// A CALLed program rebuilt from its pause with the answer: the CALL continues it.
    pub callee: Option<Box<saved::Callee>>,
    /// The context of the run's own tool calls (built once).
    pub tool_ctx: ToolContext,
    /// What the current step changed since the last commit (`None`: not journaled).
    pub durable: Option<Box<durable::Durable>>,
    /// Where every effect of the run goes through: its journal, or straight through.
    pub effects: Arc<effects::Effects>,
    /// A failure that no guard or LOOP verdict of the program can ever test happened in the
    /// current step: the run stops after it (fail closed, §10.2).
    pub closed: bool,
    /// Stall detection (`stall.rs`).
    pub(crate) stall: stall::Stall,
}

impl Run {
    /// A fresh run: the carry file seeded from `inputs` (§7.5).
    pub(crate) fn new(
        settings: Arc<Settings>,
        prep: Arc<Prepared>,
        task: Option<String>,
        values: &[(usize, Value)],
        depth: usize,
    ) -> Run {
        let n = prep.names.list.len();
        let mut carries = CarryFile {
            names: prep.names.clone(),
            values: prep.initial.clone(),
        };
        let mut supplied = vec![false; n];
        let task_text = task.unwrap_or_default();
        carries.set(prep.task, Value::Str(task_text.clone()));
        supplied[prep.task] = true;
        for (c, v) in values {
            carries.set(*c, v.clone());
            if let Some(s) = supplied.get_mut(*c) {
                *s = true;
            }
        }
        // Inputs with a declared default are supplied by it.
        for &c in &prep.inputs {
            let name = &prep.names.list[c];
            if prep
                .program
                .carry(name)
                .is_some_and(|(_, k)| k.default.is_some())
            {
                supplied[c] = true;
            }
        }
        // §7.5: the task text is the fallback for a `str` input the entry instruction reads,
        // unless that input gates a human decision (a guard, a ROUTE or a LOOP verdict tests it).
        if !task_text.is_empty()
            && let Some(entry) = prep.steps.first()
        {
            for &c in &prep.inputs {
                let gates = prep.steps.iter().any(|s| {
                    s.tests.contains(&c)
                        || (s.opcode == ais_core::Opcode::Route && s.reads.contains(&c))
                });
                let is_str = matches!(
                    prep.names.types.get(c).and_then(Option::as_ref),
                    Some(ais_core::Type::Str)
                );
                if !supplied[c] && is_str && !gates && entry.reads.contains(&c) {
                    carries.set(c, Value::Str(task_text.clone()));
                    supplied[c] = true;
                }
            }
        }
        let tracing = settings.trace.is_some();
        let mut tool_ctx = ToolContext::new(settings.out_dir.clone());
        tool_ctx.limits = settings.limits.clone();
        tool_ctx.policy = settings.policy.clone();
        Run {
            tool_ctx,
            max_steps: settings.max_steps,
            loop_counts: vec![0; prep.steps.len()],
            written: vec![0; n],
            supplied,
            carries,
            settings,
            prep,
            steps: 0,
            sub_steps: 0,
            // No Landlock on this kernel: the run's tools are unconfined, and the run says so.
            deviations: crate::sandbox::unconfined_deviation().into_iter().collect(),
            unrouted: Vec::new(),
            usage: RunUsage::default(),
            branches: Vec::new(),
            task: task_text,
            depth,
            under: Vec::new(),
            tracing,
            notes: StepNotes::default(),
            answer: None,
            spawn_pending: None,
            callee: None,
            durable: None,
            effects: effects::Effects::direct(),
            closed: false,
            stall: stall::Stall::default(),
        }
    }

    /// The tool context of a call made by the run itself (not a sibling).
    pub(crate) fn ctx(&self) -> ToolContext {
        self.tool_ctx.clone()
    }

    /// A fault outcome at step `at`.
    fn fault(&self, kind: FaultKind, at: Option<usize>, message: String) -> RunOutcome {
        let step = at.and_then(|i| self.prep.steps.get(i));
        let status = if kind == FaultKind::EffectInFlight {
            Status::Interrupted
        } else {
            Status::Fault
        };
        let mut out = self.outcome(status);
        out.written = self.report(None).0;
        out.fault = Some(Fault {
            kind,
            instruction: step.map(|s| s.id.clone()).unwrap_or_default(),
            line: step.and_then(|s| s.line),
            message,
        });
        out
    }

    /// The outcome skeleton with this run's counters.
    pub(crate) fn outcome(&self, status: Status) -> RunOutcome {
        let mut deviations = self.prep.deviations.clone();
        deviations.extend(self.deviations.iter().cloned());
        RunOutcome {
            status,
            report: serde_json::Map::new(),
            written: serde_json::Map::new(),
            unproduced: Vec::new(),
            deviations,
            findings: self.prep.findings.clone(),
            failures: Vec::new(),
            fault: None,
            pause: None,
            steps: self.steps,
            usage: self.usage,
            scripted: self.settings.models.is_scripted(),
        }
    }

    /// The current step's number and sub-steps as the trace gives them ([`StepEvent::sub`]):
    /// the run's own step, or for a CALL's sub-run the outermost CALL's, this run's step
    /// under it.
    pub(crate) fn trace_step(&self) -> (u64, Vec<u64>) {
        match self.under.split_first() {
            None => (self.steps, Vec::new()),
            Some((&top, inner)) => {
                let mut sub = inner.to_vec();
                sub.push(self.steps);
                (top, sub)
            }
        }
    }

    /// The step budget spent so far: this run's steps and the steps run under them.
    pub(crate) fn budget_spent(&self) -> u64 {
        self.steps.saturating_add(self.sub_steps)
    }

    /// Records a deviation once (a LOOP's cap may be reached on many visits).
    pub(crate) fn deviate(&mut self, subject: &str, intended: String, substituted: String) {
        let d = Deviation {
            check: None,
            subject: subject.to_owned(),
            intended,
            substituted,
        };
        if !self.deviations.contains(&d) {
            self.deviations.push(d);
        }
    }

    /// Runs from step `cursor` until a TERMINAL, a fault, a pause or the end of the graph; a
    /// journaled run records how it ended, a paused one its state ([`Run::pause`]).
    pub(crate) async fn drive(mut self, cursor: usize) -> RunOutcome {
        let journal = match (self.durable.as_deref(), self.effects.journal()) {
            (Some(d), Some(j)) if d.commits => j.clone(),
            _ => {
                return match self.drive_steps(cursor).await {
                    Ok(out) => out,
                    Err(waits) => self.pause(*waits).await,
                };
            }
        };
        let out = match Box::pin(self.drive_steps(cursor)).await {
            Ok(out) => out,
            Err(waits) => return Box::pin(self.pause(*waits)).await,
        };
        Run::end_journal(journal.as_ref(), &out).await;
        out
    }

    /// [`Run::drive`]'s loop: the outcome, or where the run waits for a human answer.
    pub(crate) async fn drive_steps(
        &mut self,
        mut cursor: usize,
    ) -> Result<RunOutcome, Box<saved::Waits>> {
        if let Some(why) = &self.prep.not_runnable {
            return Ok(self.fault(FaultKind::NotRunnable, None, why.clone()));
        }
        if self.prep.steps.is_empty() {
            return Ok(self.fault(
                FaultKind::NotRunnable,
                None,
                "the program has no instructions, so there is nothing to run; add `nodes`".into(),
            ));
        }
        // The plan never changes during a drive: borrow its steps from one handle.
        let prep = self.prep.clone();
        loop {
            // A structural fan-out's join waits for its other branches first.
            if let Some(pos) = self.branches.iter().rposition(|&(_, j)| j == cursor) {
                let (start, _) = self.branches.remove(pos);
                cursor = start;
                continue;
            }
            if self.budget_spent() >= self.max_steps {
                let limit = self.max_steps;
                let under = match self.sub_steps {
                    0 => String::new(),
                    n => format!(
                        " ({} steps and {n} SPAWN siblings or CALLed steps under them)",
                        self.steps
                    ),
                };
                return Ok(self.fault(
                    FaultKind::BudgetExhausted,
                    Some(cursor),
                    format!("step budget exhausted: {limit} steps ran{under} before a TERMINAL executed; raise it with `--max-steps`, or make the loop through here converge"),
                ));
            }
            self.steps += 1;
            self.effects.begin(self.steps);
            if let Some(p) = self.settings.pulse.as_ref().filter(|_| self.depth == 0) {
                p.beat(self.steps, cursor);
            }
            let started = (self.tracing || self.durable.is_some()).then(Instant::now);
            let step = &prep.steps[cursor];
            if let Some(&c) = step.human.iter().find(|&&c| !self.supplied[c]) {
                let name = prep.names.list[c].clone();
                let prompt = prep
                    .program
                    .carry(&name)
                    .and_then(|(_, k)| k.doc.clone())
                    .unwrap_or_else(|| format!("a value for `{name}`"));
                self.steps -= 1;
                let waits = saved::Waits::new(&prep, cursor, name, prompt, None, None);
                return Err(Box::new(waits));
            }
            if let Some(cycle) = self.stall.visit(cursor, self.steps, prep.steps.len()) {
                let message = stall::message(&prep, &cycle);
                return Ok(self.fault(FaultKind::Stalled, Some(cursor), message));
            }
            let result = self.step(cursor, step).await;
            self.stall.after(step, self.steps);
            if let Some(started) = started.filter(|_| self.tracing) {
                self.emit(step, started);
            }
            match result {
                Ok(Flow::Goto(next)) => {
                    if self.durable.is_some()
                        && let Err(Stop::Fault(kind, message)) =
                            self.commit_step(step, next, started).await
                    {
                        return Ok(self.fault(kind, Some(cursor), message));
                    }
                    if self.closed {
                        return Ok(self.finish_closed(step));
                    }
                    cursor = next;
                }
                Ok(Flow::End) => {
                    self.deviate(
                        &step.id,
                        "a run that ends at a TERMINAL".into(),
                        format!("halted at `{}`, which has no outgoing edge", step.id),
                    );
                    return Ok(self.finish(None));
                }
                Ok(Flow::Terminal) => return Ok(self.finish(Some(step))),
                Err(Stop::Fault(kind, message)) => {
                    return Ok(self.fault(kind, Some(cursor), message));
                }
                Err(Stop::Pause {
                    carry,
                    prompt,
                    ask,
                    tool,
                    call,
                }) => {
                    self.steps -= 1;
                    let ask = ask.then_some(tool);
                    let mut waits = saved::Waits::new(&prep, cursor, carry, prompt, ask, call);
                    waits.spawn = self.spawn_pending.take();
                    return Err(Box::new(waits));
                }
            }
        }
    }

    fn emit(&mut self, step: &Step, started: Instant) {
        let notes = std::mem::take(&mut self.notes);
        let Some(sink) = &self.settings.trace else {
            return;
        };
        let started_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
            .saturating_sub(started.elapsed().as_millis() as u64);
        let (step_no, sub) = self.trace_step();
        sink.event(&StepEvent {
            step: step_no,
            sub,
            instruction: step.id.clone(),
            opcode: step.mnemonic().to_owned(),
            unit: if step.model { "model" } else { "code" },
            sibling: None,
            operands: notes.operands,
            written: notes.written,
            tool: notes.tool,
            slot: notes.slot,
            error: notes.error,
            started_ms,
            elapsed_us: started.elapsed().as_micros() as u64,
        });
    }

    /// Executes one step: its work, its write-back, its transition. The rare, heavy paths
    /// (SPAWN, slots, CALL, write-outs) are boxed so the common DU step's future stays small.
    async fn step(&mut self, at: usize, step: &Step) -> Result<Flow, Stop> {
        if let Control::Loop(ctl) = &step.control {
            return self.run_loop(at, step, ctl).await;
        }
        if step.spawn.is_some() {
            let fut: Pin<Box<dyn Future<Output = Result<Flow, Stop>> + Send + '_>> =
                Box::pin(self.spawn(at, step));
            return fut.await;
        }
        self.work(step).await?;
        self.transition(step).await
    }

    /// The work of a step and its write-back.
    pub(crate) async fn work(&mut self, step: &Step) -> Result<(), Stop> {
        match &step.work {
            Work::Tools(calls) => self.run_tools(step, calls).await,
            Work::Inline(body) => {
                self.inline(step, body);
                Ok(())
            }
            Work::Slot(ops) => {
                // §4.2.1: an SU SENSE with no tool and no writes performs no computation.
                let silent = step.writes.is_empty()
                    && matches!(
                        step.opcode,
                        ais_core::Opcode::Sense | ais_core::Opcode::Route
                    );
                if silent {
                    return Ok(());
                }
                boxed(self.slot(step, ops)).await
            }
            Work::WriteOut(c) => boxed(self.write_out(step, *c)).await,
            Work::RunProgram(c) => boxed(self.run_program(step, *c)).await,
            Work::None | Work::Terminal => Ok(()),
            Work::Call(target) => boxed(self.call(step, target.as_deref())).await,
            Work::Hollow(reason) => Err(Stop::Fault(
                FaultKind::Unsupported,
                format!(
                    "`{}` is a hollow {} instruction ({reason}): the Deterministic Unit has nothing to execute; bind a tool, or give it a `doc` and `owner: model`",
                    step.id,
                    step.mnemonic()
                ),
            )),
            Work::Unsupported(op) => Err(Stop::Fault(
                FaultKind::Unsupported,
                format!(
                    "`{}` has opcode `{op}`, which is not one of the twelve AIS opcodes; this runtime cannot execute it",
                    step.id
                ),
            )),
        }
    }

    /// Leaves a step by its guards (§4.4.1; for any instruction, an unguarded edge is taken
    /// unconditionally) or, for an SU ROUTE, by the model's choice.
    async fn transition(&mut self, step: &Step) -> Result<Flow, Stop> {
        if step.work_is_terminal() {
            return Ok(Flow::Terminal);
        }
        match &step.control {
            Control::Edges => {
                // Testing a carry's error value routes the failure it holds (§10.2).
                if !step.routes.is_empty() {
                    self.unrouted
                        .retain(|u| u.carry.is_none_or(|c| !step.routes.contains(&c)));
                }
                self.edges(step)
            }
            Control::Choose(targets) => {
                let fut: Pin<Box<dyn Future<Output = Result<Flow, Stop>> + Send + '_>> =
                    Box::pin(self.choose(step, targets));
                fut.await
            }
            Control::Loop(_) => Ok(Flow::End),
        }
    }

    /// The transition of §4.4.1 over the step's compiled guards.
    pub(crate) fn edges(&self, step: &Step) -> Result<Flow, Stop> {
        match ais_core::plan::next(&step.guarded, &step.default, &self.carries) {
            Ok(Next::Take(t)) => Ok(Flow::Goto(t.to)),
            Ok(Next::Halt) => Ok(Flow::End),
            Ok(Next::DeadEnd) => {
                let values: Vec<String> = step
                    .tests
                    .iter()
                    .map(|&c| format!("{} = {}", self.carries.names.list[c], self.carries.get(c)))
                    .collect();
                Err(Stop::Fault(
                    FaultKind::RouteDeadEnd,
                    format!(
                        "route dead-end at `{}`: the discriminator fell outside the guard set ({}) and no default edge is declared; add an edge from `{}` with no guard",
                        step.id,
                        values.join(", "),
                        step.id
                    ),
                ))
            }
            Err((edge, e)) => {
                let to = step
                    .guarded
                    .iter()
                    .find(|t| t.edge == edge)
                    .map_or("?", |t| self.prep.steps[t.to].id.as_str());
                Err(Stop::Fault(
                    FaultKind::RouteDeadEnd,
                    format!(
                        "the guard on the edge from `{}` to `{to}` could not be evaluated ({} at {}:{}: {}), so no transition can be chosen",
                        step.id, e.category, e.line, e.column, e.message
                    ),
                ))
            }
        }
    }

    /// LOOP (§4.4.2): verdict passes → advance; counter at cap → advance with a deviation;
    /// else count, do the work, take the back edge.
    async fn run_loop(
        &mut self,
        at: usize,
        step: &Step,
        ctl: &plan::LoopCtl,
    ) -> Result<Flow, Stop> {
        if ctl.cap_imposed {
            self.deviate(
                &step.id,
                "a LOOP bounded by its declared cap".into(),
                format!("no cap was declared; a cap of {} was imposed", ctl.cap),
            );
        }
        if let Some(v) = ctl.verdict {
            self.unrouted.retain(|u| u.carry != Some(v));
        }
        let advance = ctl.advance.map_or(Flow::End, Flow::Goto);
        if ctl
            .verdict
            .is_some_and(|v| matches!(self.carries.get(v), Value::Bool(true)))
        {
            return Ok(advance);
        }
        let count = match ctl.counter {
            Some(c) => match self.carries.get(c) {
                Value::Int(i) => *i,
                _ => 0,
            },
            None => self.loop_counts[at],
        };
        if count >= ctl.cap {
            self.deviate(
                &step.id,
                "a LOOP that advances when its verdict passes".into(),
                format!(
                    "advanced at its cap of {} iterations without the verdict passing",
                    ctl.cap
                ),
            );
            return Ok(advance);
        }
        let before = ctl
            .counter
            .map(|c| (self.carries.get(c).clone(), self.written[c]));
        match ctl.counter {
            Some(c) => {
                self.carries.set(c, Value::Int(count + 1));
                self.written[c] = self.steps;
                self.note_written(c);
            }
            None => {
                self.loop_counts[at] = count + 1;
                self.note_loop(at, count + 1);
            }
        }
        if let Err(stop) = self.work(step).await {
            // A pause saves the state the step began with: the resumed step counts this
            // iteration once.
            if matches!(stop, Stop::Pause { .. }) {
                match (ctl.counter, before) {
                    (Some(c), Some((value, written))) => {
                        self.carries.set(c, value);
                        self.written[c] = written;
                    }
                    _ => self.loop_counts[at] = count,
                }
            }
            return Err(stop);
        }
        Ok(ctl.back.map_or(advance, Flow::Goto))
    }

    /// Ends the run: the report of the produced carries (§4.5), `ok` unless an error value
    /// went unrouted.
    fn finish(&self, terminal: Option<&Step>) -> RunOutcome {
        let status = if self.unrouted.is_empty() {
            Status::Ok
        } else {
            Status::Error
        };
        let mut out = self.outcome(status);
        (out.report, out.unproduced) = self.report(terminal);
        out.failures = self
            .unrouted
            .iter()
            .map(|u| Failure {
                instruction: u.instruction.clone(),
                message: u.message.clone(),
            })
            .collect();
        if !self.unrouted.is_empty() {
            out.deviations
                .extend(self.unrouted.iter().map(|u| Deviation {
                    check: None,
                    subject: u.instruction.clone(),
                    intended: "a failure routed by a ROUTE that tests it (§10.2)".into(),
                    substituted: format!("unrouted failure: {}", u.message),
                }));
        }
        out
    }

    /// Ends the run at `step`, whose failure no guard or LOOP verdict tests (§10.2): status
    /// `error`, the report of what was produced so far, and a deviation naming the step. No
    /// later instruction runs, so no effect is performed on the empty or default values the
    /// failure left behind.
    fn finish_closed(&mut self, step: &Step) -> RunOutcome {
        self.deviate(
            &step.id,
            "a failure that a guard or LOOP verdict tests, so the program decides what follows (§10.2)".into(),
            format!(
                "the run stopped at `{}`: no guard tests its error value (`.ok`/`.error` of an `outcome` carry it writes) and no LOOP verdict looks at it, so no later instruction ran",
                step.id
            ),
        );
        self.finish(None)
    }

    /// The report (§4.5): the produced carries — the TERMINAL's reads first (its hint of what
    /// matters most), then every other carry the run wrote, in declaration order — and the
    /// TERMINAL's reads the run did not produce, which the report leaves out (§4.5: the report
    /// is a function of the *produced* carries, so a starting value is never reported as if a
    /// step had computed it).
    pub(crate) fn report(
        &self,
        terminal: Option<&Step>,
    ) -> (serde_json::Map<String, serde_json::Value>, Vec<String>) {
        let mut report = serde_json::Map::new();
        let mut unproduced = Vec::new();
        let names = &self.carries.names.list;
        if let Some(t) = terminal {
            for &c in &t.reads {
                if self.produced(c) {
                    report.insert(names[c].clone(), self.carries.get(c).to_json());
                } else if !unproduced.contains(&names[c]) {
                    unproduced.push(names[c].clone());
                }
            }
        }
        for c in (0..names.len()).filter(|&c| self.written[c] > 0) {
            if !report.contains_key(&names[c]) {
                report.insert(names[c].clone(), self.carries.get(c).to_json());
            }
        }
        (report, unproduced)
    }

    /// Whether the run produced carry `c`: a step wrote it, or the invocation supplied it (an
    /// input given by the caller, filled from the task text, or by its declared default; the
    /// `task` itself).
    pub(crate) fn produced(&self, c: usize) -> bool {
        self.written.get(c).is_some_and(|&w| w > 0) || self.supplied.get(c).is_some_and(|&s| s)
    }

    /// Writes a step's result back (§2.3 step 4): one write takes the whole result; several
    /// are recovered by field name, then position (`bind::recover_writes`).
    pub(crate) fn write_back(&mut self, step: &Step, result: Value, ret: &ais_core::sig::Return) {
        match step.writes.len() {
            0 => {}
            1 if !ret.is_multi() => {
                let c = step.writes[0];
                let v = self.conform(c, result);
                self.set(c, v);
            }
            _ => {
                let recovered = ais_core::bind::recover_writes(&step.write_names, &result, ret);
                for (k, v) in recovered.into_iter().enumerate() {
                    if let (Some(v), Some(&c)) = (v, step.writes.get(k)) {
                        let v = self.conform(c, v);
                        self.set(c, v);
                    }
                }
            }
        }
    }

    pub(crate) fn conform(&self, c: usize, v: Value) -> Value {
        match self.carries.names.types.get(c).and_then(Option::as_ref) {
            Some(t) => carries::conform(&self.prep.program, v, t),
            None => v,
        }
    }

    /// Sets a carry, marking it written (and noting it for the trace).
    pub(crate) fn set(&mut self, c: usize, v: Value) {
        if self.tracing {
            self.notes
                .written
                .push((self.carries.names.list[c].clone(), v.to_json()));
        }
        if *self.carries.get(c) != v {
            self.stall.changed(self.steps);
        }
        self.carries.set(c, v);
        if let Some(w) = self.written.get_mut(c) {
            *w = self.steps.max(1);
        }
        if let Some(d) = self.durable.as_deref_mut() {
            d.dirty.push(c);
        }
    }

    /// Lands a failure (§10.1, §10.2): the error value `{ok: false, error, output}` goes to
    /// `writes[0]` when that carry can hold it (an `outcome`, a dict, an untyped carry); the
    /// failure stays unrouted until a guard tests that carry.
    pub(crate) fn fail(&mut self, step: &Step, message: String, output: String) {
        self.fail_into(step, step.writes.first().copied(), message, output);
    }

    /// [`Run::fail`] into a given carry.
    pub(crate) fn fail_into(
        &mut self,
        step: &Step,
        target: Option<usize>,
        message: String,
        output: String,
    ) {
        let value = carries::outcome(false, &message, &output, Value::Null);
        let holds = target.is_some_and(|c| {
            matches!(
                self.carries.names.types.get(c).and_then(Option::as_ref),
                None | Some(ais_core::Type::Any | ais_core::Type::Dict(_))
            ) || matches!(self.carries.names.types.get(c).and_then(Option::as_ref), Some(ais_core::Type::Named(n)) if n == "outcome")
        });
        if let (true, Some(c)) = (holds, target) {
            self.set(c, value);
        }
        // A carry whose declared type cannot hold the error value never receives it, so no
        // guard can ever test it there: the failure is unrouted, and the run fails closed.
        let target = target.filter(|_| holds);
        if self.tracing {
            self.notes.error = Some(message.clone());
        }
        self.stall.failed();
        self.unrouted_failure(Unrouted {
            carry: target,
            instruction: step.id.clone(),
            message,
        });
    }

    /// Records a failure not yet tested. When no step of the program tests the error value in
    /// the carry it landed in (no guard reading its `ok`/`error`, no LOOP verdict) — or it
    /// landed in no carry — nothing can ever route it, and the run stops after this step (fail
    /// closed).
    pub(crate) fn unrouted_failure(&mut self, u: Unrouted) {
        let routable = u
            .carry
            .is_some_and(|c| self.prep.steps.iter().any(|s| s.routes.contains(&c)));
        self.closed |= !routable;
        self.unrouted.push(u);
    }
}

/// A rare step's future, boxed.
fn boxed<'a>(
    fut: impl Future<Output = Result<(), Stop>> + Send + 'a,
) -> Pin<Box<dyn Future<Output = Result<(), Stop>> + Send + 'a>> {
    Box::pin(fut)
}

impl Step {
    fn work_is_terminal(&self) -> bool {
        matches!(self.work, Work::Terminal)
    }
}

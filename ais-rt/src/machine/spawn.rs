//! SPAWN (§4.4.4): fork one sibling per sub-task, run them concurrently on tokio under a
//! parallelism limit, wait for all of them, join their results into `writes[0]`.
//!
//! - **Fan-out source**: a list-typed read carry (one sibling per element), else the literal
//!   `concurrency.spawn` list, else the task (a fan-out of one).
//! - **Work**: the SPAWN's bound tools (a DU sibling: the element replaces the list carry, a
//!   literal sub-task replaces `task`), else one worker slot per sibling (`sibling: Some(i)`).
//! - **Isolation**: every sibling reads a frozen snapshot of the carry file taken at the fork
//!   and writes no carry (`shared_read`); `private_write` siblings get their own scratch
//!   directory (`.ais/spawn/<id>/<i>/` under the output root) for relative writes;
//!   `orchestrator_owned` siblings stage their writes (`.ais/stage/<id>/<i>/`) and the
//!   orchestrator applies them to the output root once, after the barrier, in sibling order.
//! - **Join**: a list carry receives the results in sibling order; a text carry their
//!   concatenation, one result per line. A failed sibling is an error value in a list join and an
//!   unrouted failure of the SPAWN either way.
//!
//! - **Human input**: a DU sibling whose pipeline calls `ask_user` pauses, not the run's other
//!   siblings: they finish, and then the whole SPAWN pauses before its join (a pause is no fault
//!   of §10.1, and the join waits for every sibling, §4.4.4). The handle keeps what the finished
//!   siblings produced and where each waiting sibling stopped; a resume runs only the answered
//!   sibling, from its `ask_user` call, and pauses again for the next waiting one, until all are
//!   answered and the join runs. No sibling's tools run twice.
//!
//! A SPAWN with no work of its own (no tool, no writes) and several unguarded outgoing edges is
//! a structural fan-out (the reference implementation's form): each branch runs to the first
//! step all branches reach (the join), one after the other, then the run continues there.

use super::carries::{CarryFile, Overlay};
use super::effects::spawn_dir;
use super::exec::{Hooks, run_pipeline, text_of};
use super::plan::{Prepared, SpawnCtl, Step, Work};
use super::slot::request;
use super::{Answer, Flow, Run, Settings, Stop};
use crate::journal::Spend;
use crate::llm::slot::{self, SlotOptions};
use crate::llm::{Operand, Usage};
use crate::report::{FaultKind, RunUsage};
use crate::tools::ToolContext;
use ais_core::{Isolation, Type, Value};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// How one sibling ended, short of stopping the run.
pub(super) enum Ran {
    /// It finished.
    Done(SiblingResult),
    /// It stopped at an `ask_user` call.
    Waiting(Waiting),
}

/// What one sibling produced.
pub(super) struct SiblingResult {
    pub value: Result<Value, String>,
    pub usage: Option<Usage>,
    /// Its slot's cost and failovers.
    pub spend: Spend,
}

/// The siblings to run now (index, sub-task, answer), the results so far, the waiting ones.
type SiblingPlan = (
    Vec<(usize, Value, Option<Answer>)>,
    Vec<Option<SiblingResult>>,
    Vec<Waiting>,
);

/// A SPAWN paused for its siblings' human input, as the resume handle keeps it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Pending {
    /// The SPAWN's step.
    pub at: usize,
    /// The siblings that finished before the pause.
    pub done: Vec<Done>,
    /// The siblings waiting for an answer, in sibling order; the first is the one asked.
    pub waiting: Vec<Waiting>,
}

/// A finished sibling's result, kept across a pause.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Done {
    pub index: usize,
    pub value: Result<serde_json::Value, String>,
    pub usage: Option<Usage>,
    #[serde(default)]
    pub spend: Spend,
}

/// A sibling stopped at an `ask_user` call.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Waiting {
    pub index: usize,
    /// The `ask_user` call's position in the pipeline.
    pub tool: usize,
    pub prompt: String,
}

impl Pending {
    /// Whether this state fits a SPAWN of `n` siblings: every index in range, none twice, and
    /// at least one sibling waiting.
    pub(crate) fn fits(&self, n: usize) -> bool {
        let mut seen = vec![false; n];
        !self.waiting.is_empty()
            && self
                .done
                .iter()
                .map(|d| d.index)
                .chain(self.waiting.iter().map(|w| w.index))
                .all(|i| i < n && !std::mem::replace(&mut seen[i], true))
    }
}

impl Run {
    pub(crate) async fn spawn(&mut self, at: usize, step: &Step) -> Result<Flow, Stop> {
        let Some(ctl) = &step.spawn else {
            return Ok(Flow::End);
        };
        if matches!(step.work, Work::None) {
            return self.structural(step, ctl);
        }
        // The cap is checked before anything is copied or forked: a model-produced list of
        // any length costs nothing past it.
        self.cap_siblings(step, self.fan_out_len(ctl))?;
        let subtasks: Vec<Value> = match (ctl.list, &ctl.literal) {
            (Some(c), _) => match self.carries.get(c) {
                Value::List(items) => items.clone(),
                Value::Null => Vec::new(),
                other => vec![other.clone()],
            },
            (None, Some(items)) => items.iter().cloned().map(Value::Str).collect(),
            (None, None) => vec![Value::Str(self.task.clone())],
        };
        let limit = ctl
            .max_parallel
            .unwrap_or(self.settings.max_parallel)
            .min(self.settings.max_parallel)
            .max(1);
        let (to_run, mut results, mut waiting) = self.siblings_to_run(at, step, subtasks)?;
        self.count_siblings(step, to_run.len())?;
        let ran = match self.runner() {
            Some(runner) => self.run_elsewhere(runner, at, step, ctl, to_run).await?,
            None => self.run_here(at, step, ctl, to_run, limit).await?,
        };
        for (i, r) in ran {
            match r {
                Ran::Done(r) => results[i] = Some(r),
                Ran::Waiting(w) => waiting.push(w),
            }
        }
        if !waiting.is_empty() {
            return Err(self.pause_siblings(at, step, results, waiting));
        }
        if ctl.isolation == Isolation::OrchestratorOwned {
            let root = self.settings.out_dir.clone();
            if let Err(e) = self.effects.apply_staged(&step.id, root).await? {
                self.fail(
                    step,
                    format!(
                        "applying the staged effects of SPAWN `{}` failed: {}",
                        step.id, e.message
                    ),
                    String::new(),
                );
            }
        }
        self.join(step, results);
        self.transition_after_spawn(step)
    }

    /// Runs the siblings in this process, at most `limit` at a time, on tokio tasks; the first
    /// sibling to stop the run stops it (the others are dropped with the task set).
    async fn run_here(
        &mut self,
        at: usize,
        step: &Step,
        ctl: &SpawnCtl,
        to_run: Vec<(usize, Value, Option<Answer>)>,
        limit: usize,
    ) -> Result<Vec<(usize, Ran)>, Stop> {
        let semaphore = Arc::new(Semaphore::new(limit));
        let snapshot = Arc::new(self.carries.clone());
        let mut set = tokio::task::JoinSet::new();
        for (i, sub, answer) in to_run {
            let sib = Sibling {
                settings: self.settings.clone(),
                prep: self.prep.clone(),
                at,
                index: i,
                subtask: sub,
                snapshot: snapshot.clone(),
                task: self.task.clone(),
                ctx: self.sibling_ctx(step, &ctl.isolation, i).await?,
                list: ctl.list,
                answer,
                effects: self.effects.below(&format!("s{i}"), self.steps),
                step: self.trace_step(),
            };
            let semaphore = semaphore.clone();
            set.spawn(async move {
                let _permit = semaphore.acquire_owned().await;
                (i, sib.run().await)
            });
        }
        let mut ran = Vec::new();
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok((i, Ok(r))) => ran.push((i, Ran::Done(r))),
                Ok((index, Err(Stop::Pause { prompt, tool, .. }))) => ran.push((
                    index,
                    Ran::Waiting(Waiting {
                        index,
                        tool,
                        prompt,
                    }),
                )),
                Ok((_, Err(stop))) => return Err(stop),
                Err(e) => {
                    return Err(Stop::Fault(
                        FaultKind::Unsupported,
                        format!("a sibling of SPAWN `{}` stopped abnormally: {e}", step.id),
                    ));
                }
            }
        }
        Ok(ran)
    }

    /// How many siblings the SPAWN forks: one per element of its list carry, else one per
    /// literal sub-task, else one (the task).
    fn fan_out_len(&self, ctl: &SpawnCtl) -> usize {
        fan_out_len(ctl, &self.carries)
    }

    /// A fan-out of more than the runtime's sibling cap is the fault `budget_exhausted`,
    /// naming the SPAWN, the count, the cap and the flag that raises it.
    fn cap_siblings(&self, step: &Step, n: usize) -> Result<(), Stop> {
        let cap = self.settings.max_siblings;
        if n > cap {
            return Err(Stop::Fault(
                FaultKind::BudgetExhausted,
                format!(
                    "SPAWN `{}` would fork {n} siblings, more than the cap of {cap}; raise it with `--max-siblings` (`RuntimeBuilder::max_siblings`), or fan out over fewer items",
                    step.id
                ),
            ));
        }
        Ok(())
    }

    /// Counts the `running` siblings that run now (all of them, or the one a resume answers)
    /// toward the step budget, each one step of the budget (the SPAWN itself is one already),
    /// so a fan-out cannot do unbounded work in one step. They are sub-steps `N.1`, `N.2`, …
    /// of the SPAWN's step `N`, not numbered among the run's steps.
    fn count_siblings(&mut self, step: &Step, running: usize) -> Result<(), Stop> {
        let after = self.budget_spent().saturating_add(running as u64);
        if after > self.max_steps {
            let limit = self.max_steps;
            return Err(Stop::Fault(
                FaultKind::BudgetExhausted,
                format!(
                    "step budget exhausted: SPAWN `{}` forks {running} siblings, each a step, and only {} of the {limit} steps are left; raise it with `--max-steps`",
                    step.id,
                    limit.saturating_sub(self.budget_spent())
                ),
            ));
        }
        self.sub_steps += running as u64;
        Ok(())
    }

    /// The siblings to run now, the results of those that already finished and those still
    /// waiting: fresh, every sibling runs; resumed after a sibling's question, only the
    /// answered one runs (from its `ask_user` call), the others keep what the handle holds.
    fn siblings_to_run(
        &mut self,
        at: usize,
        step: &Step,
        subtasks: Vec<Value>,
    ) -> Result<SiblingPlan, Stop> {
        let n = subtasks.len();
        let mut results: Vec<Option<SiblingResult>> = Vec::new();
        results.resize_with(n, || None);
        let Some(p) = self.spawn_pending.take().filter(|p| p.at == at) else {
            let all = subtasks
                .into_iter()
                .enumerate()
                .map(|(i, s)| (i, s, None))
                .collect();
            return Ok((all, results, Vec::new()));
        };
        if !p.fits(n) {
            return Err(Stop::Fault(
                FaultKind::InvalidHandle,
                format!(
                    "the resumed SPAWN `{}` has {n} siblings, which the paused siblings recorded in the handle do not match",
                    step.id
                ),
            ));
        }
        for d in p.done {
            results[d.index] = Some(SiblingResult {
                value: d.value.map(|j| Value::from_json(&j)),
                usage: d.usage,
                spend: d.spend,
            });
        }
        let mut waiting = p.waiting.into_iter();
        let asked = waiting.next();
        let answer = self.answer.take();
        let run = asked
            .map(|w| (w.index, subtasks[w.index].clone(), answer))
            .into_iter()
            .collect();
        Ok((run, results, waiting.collect()))
    }

    /// Pauses the SPAWN at step `at` for the first waiting sibling, keeping what the finished
    /// ones produced (the barrier has not passed: nothing is joined or applied yet).
    fn pause_siblings(
        &mut self,
        at: usize,
        step: &Step,
        results: Vec<Option<SiblingResult>>,
        mut waiting: Vec<Waiting>,
    ) -> Stop {
        waiting.sort_by_key(|w| w.index);
        let done = results
            .into_iter()
            .enumerate()
            .filter_map(|(index, r)| {
                r.map(|r| Done {
                    index,
                    value: r.value.map(|v| v.to_json()),
                    usage: r.usage,
                    spend: r.spend,
                })
            })
            .collect();
        let first = &waiting[0];
        let carry = format!(
            "{}[{}]",
            step.write_names.first().map_or("answer", String::as_str),
            first.index
        );
        let stop = Stop::Pause {
            carry,
            prompt: first.prompt.clone(),
            ask: true,
            tool: first.tool,
            call: None,
        };
        self.spawn_pending = Some(Pending { at, done, waiting });
        stop
    }

    /// The tool context of sibling `i` under the SPAWN's isolation.
    pub(super) async fn sibling_ctx(
        &self,
        step: &Step,
        isolation: &Isolation,
        i: usize,
    ) -> Result<ToolContext, Stop> {
        let mut ctx = self.ctx();
        let dir = match isolation {
            Isolation::PrivateWrite => {
                Some(spawn_dir(&self.settings.out_dir, "spawn", &step.id, i))
            }
            Isolation::SharedRead => None,
            _ => Some(spawn_dir(&self.settings.out_dir, "stage", &step.id, i)),
        };
        if let Some(d) = &dir {
            self.effects.scratch_dir(d).await.map_err(|e| {
                Stop::Fault(
                    FaultKind::Unsupported,
                    format!(
                        "cannot create the scratch directory {} of SPAWN `{}`: {e}",
                        d.display(),
                        step.id
                    ),
                )
            })?;
        }
        ctx.scratch = dir;
        Ok(ctx)
    }

    /// Joins the siblings' results into `writes[0]` (§4.4.4).
    fn join(&mut self, step: &Step, results: Vec<Option<SiblingResult>>) {
        let mut values = Vec::with_capacity(results.len());
        let mut failures = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            let Some(r) = r else { continue };
            if let Some(u) = r.usage {
                let k = u.cached_tokens.unwrap_or(0);
                let one = (u.prompt_tokens, u.completion_tokens, k, 1);
                self.usage.add(&crate::journal::usage_of(one, r.spend));
            }
            match r.value {
                Ok(v) => values.push(v),
                Err(e) => {
                    values.push(super::carries::outcome(false, &e, "", Value::Null));
                    failures.push(format!("sibling {}: {e}", i + 1));
                }
            }
        }
        if let Some(&c) = step.writes.first() {
            let ty = self.carries.names.types.get(c).cloned().flatten();
            let joined = match ty {
                Some(Type::Str | Type::Path) => Value::Str(
                    values
                        .iter()
                        .filter(|v| !super::carries::is_outcome(v) || failures.is_empty())
                        .map(text_of)
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => Value::List(values),
            };
            self.set(c, joined);
        }
        if !failures.is_empty() {
            let message = format!("SPAWN `{}`: {}", step.id, failures.join("; "));
            let target = step.writes.first().copied();
            self.unrouted_failure(super::Unrouted {
                carry: target,
                instruction: step.id.clone(),
                message: message.clone(),
            });
            if self.tracing {
                self.notes.error = Some(message);
            }
        }
    }

    fn transition_after_spawn(&mut self, step: &Step) -> Result<Flow, Stop> {
        if !step.routes.is_empty() {
            self.unrouted
                .retain(|u| u.carry.is_none_or(|c| !step.routes.contains(&c)));
        }
        self.edges(step)
    }

    /// A structural fan-out: run each unguarded branch up to the join, then continue there.
    fn structural(&mut self, step: &Step, ctl: &SpawnCtl) -> Result<Flow, Stop> {
        let branches: Vec<usize> = step.default.iter().map(|t| t.to).collect();
        match (branches.as_slice(), ctl.join) {
            ([], _) => self.transition_after_spawn(step),
            ([first], _) => Ok(Flow::Goto(*first)),
            ([first, rest @ ..], Some(join)) => {
                for &b in rest.iter().rev() {
                    self.branches.push((b, join));
                }
                Ok(Flow::Goto(*first))
            }
            ([first, ..], None) => {
                self.deviate(
                    &step.id,
                    "a fan-out whose branches meet at a join".into(),
                    format!(
                        "its branches never meet, so only the first (`{}`) runs",
                        self.prep.steps[*first].id
                    ),
                );
                Ok(Flow::Goto(*first))
            }
        }
    }
}

/// How many siblings a SPAWN forks over `carries`: the items of its list carry, its literal
/// sub-tasks, else one (the task).
fn fan_out_len(ctl: &SpawnCtl, carries: &CarryFile) -> usize {
    match (ctl.list, &ctl.literal) {
        (Some(c), _) => match carries.get(c) {
            Value::List(items) => items.len(),
            Value::Null => 0,
            _ => 1,
        },
        (None, Some(items)) => items.len(),
        (None, None) => 1,
    }
}

/// One sibling of a data fan-out, owning everything it needs to run on its own task.
pub(super) struct Sibling {
    pub settings: Arc<Settings>,
    pub prep: Arc<Prepared>,
    pub at: usize,
    pub index: usize,
    pub subtask: Value,
    pub snapshot: Arc<CarryFile>,
    pub task: String,
    pub ctx: ToolContext,
    pub list: Option<usize>,
    /// The human's answer, for a sibling resumed at its `ask_user` call.
    pub answer: Option<Answer>,
    /// Where its effects go through.
    pub effects: Arc<super::effects::Effects>,
    /// The SPAWN's step number and, in a CALLed program, its sub-steps (`Run::trace_step`):
    /// this sibling is the sub-step `step.sub….(index + 1)`.
    pub step: (u64, Vec<u64>),
}

impl Sibling {
    pub(super) async fn run(mut self) -> Result<SiblingResult, Stop> {
        let step = &self.prep.steps[self.at];
        // The sibling's view: the frozen snapshot with its own sub-task in place (no copy).
        let (task, as_task) = match self.list {
            Some(_) => (self.task.clone(), None),
            None => {
                let t = text_of(&self.subtask);
                (t.clone(), Some(Value::Str(t)))
            }
        };
        let view = Overlay {
            base: &self.snapshot,
            at: self.list.unwrap_or(self.prep.task),
            value: as_task.as_ref().unwrap_or(&self.subtask),
        };
        let started = std::time::Instant::now();
        let result = match &step.work {
            Work::Tools(calls) => {
                let mut answer = self.answer.take();
                let hooks = Hooks {
                    trace: None,
                    answer: &mut answer,
                    effects: &self.effects,
                };
                match run_pipeline(step, calls, &view, &task, &self.ctx, hooks).await? {
                    Ok((v, _)) => SiblingResult {
                        value: Ok(v),
                        usage: None,
                        spend: Spend::default(),
                    },
                    Err(e) => SiblingResult {
                        value: Err(format!(
                            "{} ({})",
                            e.message,
                            e.output.chars().take(200).collect::<String>()
                        )),
                        usage: None,
                        spend: Spend::default(),
                    },
                }
            }
            Work::Slot(ops) => {
                let chain = self
                    .settings
                    .models
                    .for_slot(step.tier.as_deref())
                    .map_err(|why| {
                        Stop::Fault(
                            FaultKind::NotRunnable,
                            format!(
                                "SPAWN `{}` runs a worker slot per sibling, which cannot be filled: {why}",
                                step.id
                            ),
                        )
                    })?;
                // A sibling answers one element of the join: an item of a list carry, else text.
                let element = match &step.result {
                    Some(Type::List(Some(t))) => (**t).clone(),
                    Some(Type::List(None)) => Type::Any,
                    _ => Type::Str,
                };
                let (mut req, schema) = request(&self.prep, step, ops, &view, &element);
                req.sibling = Some(self.index);
                // The frozen snapshot holds the whole list, here and on another endpoint.
                req.siblings = step
                    .spawn
                    .as_ref()
                    .map(|ctl| fan_out_len(ctl, &self.snapshot));
                req.operands
                    .retain(|o| o.name != self.prep.names.list[view.at]);
                req.operands.insert(0, self.subtask_operand());
                let reach = super::slot::SlotReach::new(
                    &self.settings,
                    &self.prep,
                    step,
                    self.ctx.clone(),
                    &self.effects,
                    crate::journal::EffectKind::Slot,
                );
                let options = SlotOptions {
                    max_answer_bytes: self.settings.max_answer_bytes,
                    ..SlotOptions::default()
                };
                let out = reach
                    .fill(&chain, req, &options, &schema.compiled)
                    .await
                    .map_err(|stopped| stopped.stop)?;
                self.trace(step, started, &out);
                let spend = crate::journal::spend_of(&RunUsage::of_slot(&out));
                SiblingResult {
                    value: out
                        .value
                        .map(|j| Value::from_json(&j))
                        .map_err(|e| e.message),
                    usage: Some(out.usage),
                    spend,
                }
            }
            _ => SiblingResult {
                value: Ok(Value::Null),
                usage: None,
                spend: Spend::default(),
            },
        };
        Ok(result)
    }

    /// The sibling's own sub-task as its slot's first operand, labelled with its own type: an
    /// item of the list carry it replaces in the sibling's view (that carry's operand, which
    /// would hold the same item under the list's type, is left out), else a literal sub-task
    /// or the task, as text.
    fn subtask_operand(&self) -> Operand {
        let (ty, doc) = match self.list {
            Some(c) => {
                let name = &self.prep.names.list[c];
                let item = match self.prep.names.types.get(c).cloned().flatten() {
                    Some(Type::List(Some(t))) => super::slot::type_label(&self.prep, &t),
                    _ => "any".to_owned(),
                };
                let carry_doc = self
                    .prep
                    .program
                    .carry(name)
                    .and_then(|(_, k)| k.doc.as_deref())
                    .map(|d| format!(" ({})", d.trim()))
                    .unwrap_or_default();
                (
                    item,
                    format!("this sibling's own sub-task: one item of `{name}`{carry_doc}"),
                )
            }
            None => ("str".to_owned(), "this sibling's own sub-task".to_owned()),
        };
        Operand {
            name: "subtask".into(),
            ty,
            doc: Some(doc),
            value: self.subtask.to_json(),
        }
    }

    fn trace(&self, step: &Step, started: std::time::Instant, out: &slot::SlotOutcome) {
        let Some(sink) = &self.settings.trace else {
            return;
        };
        let started_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
            .saturating_sub(started.elapsed().as_millis() as u64);
        sink.event(&crate::trace::StepEvent {
            step: self.step.0,
            sub: self.step.1.clone(),
            instruction: step.id.clone(),
            opcode: step.mnemonic().to_owned(),
            unit: "model",
            sibling: Some(self.index),
            operands: vec![("subtask".into(), self.subtask.to_json())],
            written: Vec::new(),
            tool: None,
            slot: Some(crate::trace::SlotTrace::of(out)),
            error: out.value.as_ref().err().map(|e| e.message.clone()),
            started_ms,
            elapsed_us: started.elapsed().as_micros() as u64,
        });
    }
}

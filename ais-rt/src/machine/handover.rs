//! Work handed over to the run's [placement](crate::placement): the orchestrating side
//! (a SPAWN's siblings and a CALL's callee as jobs out, their outcomes in, in sibling order)
//! and the running side ([`run_job`], behind `Runtime::run_sibling`).

use super::carries::CarryFile;
use super::effects::Effects;
use super::plan::{Prepared, SpawnCtl, Step};
use super::spawn::{Ran, Sibling, SiblingResult, Waiting};
use super::{Answer, Run, Settings, Stop};
use crate::journal::{Journal, Json};
use crate::placement::{
    CallJob, CallOutcome, CallPause, Placement, PlacementError, SavedCall, SiblingJob,
    SiblingOutcome,
};
use crate::report::{Fault, FaultKind, RunOutcome, Status};
use ais_core::Value;
use std::sync::Arc;

/// Where a journaled run hands work over: the run the jobs name (its journal's id) and the
/// runtime's placement.
#[derive(Clone, Copy)]
pub(super) struct Runner<'j> {
    run: &'j str,
    placement: &'j dyn Placement,
}

impl Run {
    /// The run's placement with the run's id, when the run is journaled as itself (it is not
    /// a CALL's sub-run: its program is not the one the journal serves) — only such a run
    /// hands work over.
    fn placed(&self) -> Option<Runner<'_>> {
        self.durable.as_deref().filter(|d| d.commits)?;
        Some(Runner {
            run: self.effects.journal()?.run_id(),
            placement: &*self.settings.placement,
        })
    }

    /// Where a SPAWN's siblings go when the run's placement takes them. `orchestrator_owned`
    /// ones too: such a sibling stages its writes where it runs, and the placement brings them
    /// back into this run's stage (`.ais/stage/<id>/<i>/` under the output root,
    /// [`stage_dir`](crate::stage_dir)) before it returns the outcome, so the SPAWN applies
    /// them as it applies siblings staged in process.
    pub(super) fn runner(&self) -> Option<Runner<'_>> {
        self.placed().filter(|r| r.placement.places_siblings())
    }

    /// The callee of a CALL as a job, with where it goes, when the run's placement takes it.
    pub(super) fn call_job(
        &self,
        step: &Step,
        prep: &Prepared,
        values: &[(usize, Value)],
    ) -> Option<(Runner<'_>, CallJob)> {
        let runner = self.placed().filter(|r| r.placement.places_call(prep))?;
        let job = CallJob {
            run: runner.run.to_owned(),
            instruction: step.id.clone(),
            at_step: self.steps,
            digest: prep.digest().to_owned(),
            task: self.task.clone(),
            values: values
                .iter()
                .map(|(c, v)| (prep.names.list[*c].clone(), v.to_json()))
                .collect(),
            max_steps: self.max_steps.saturating_sub(self.budget_spent()),
            depth: self.depth + 1,
        };
        Some((runner, job))
    }

    /// Hands the siblings to `runner` and reads their outcomes back, in order: a fault of any
    /// sibling (the first in sibling order) stops the run, as in process.
    pub(super) async fn run_elsewhere(
        &self,
        runner: Runner<'_>,
        at: usize,
        step: &Step,
        ctl: &SpawnCtl,
        to_run: Vec<(usize, Value, Option<Answer>)>,
    ) -> Result<Vec<(usize, Ran)>, Stop> {
        let carries: Vec<(String, Json)> = self
            .carries
            .names
            .list
            .iter()
            .zip(&self.carries.values)
            .map(|(n, v)| (n.clone(), v.to_json()))
            .collect();
        let indexes: Vec<usize> = to_run.iter().map(|(i, _, _)| *i).collect();
        let jobs: Vec<SiblingJob> = to_run
            .into_iter()
            .map(|(index, sub, answer)| SiblingJob {
                run: runner.run.to_owned(),
                digest: self.prep.digest().to_owned(),
                step: at,
                instruction: step.id.clone(),
                at_step: self.steps,
                index,
                subtask: sub.to_json(),
                task: self.task.clone(),
                carries: carries.clone(),
                answer: answer.map(|a| (a.value.to_json(), a.tool)),
            })
            .collect();
        let outcomes = runner
            .placement
            .siblings(jobs, ctl.max_parallel)
            .await
            .map_err(placement_stop)?;
        if outcomes.len() != indexes.len() {
            return Err(Stop::Fault(
                FaultKind::Placement,
                format!(
                    "SPAWN `{}` handed over {} siblings and got {} outcomes back",
                    step.id,
                    indexes.len(),
                    outcomes.len()
                ),
            ));
        }
        let mut ran = Vec::with_capacity(indexes.len());
        for (index, outcome) in indexes.into_iter().zip(outcomes) {
            let r = match outcome {
                SiblingOutcome::Done {
                    value,
                    usage,
                    spend,
                } => Ran::Done(SiblingResult {
                    value: value.map(|j| Value::from_json(&j)),
                    usage,
                    spend,
                }),
                SiblingOutcome::Waiting { tool, prompt } => Ran::Waiting(Waiting {
                    index,
                    tool,
                    prompt,
                }),
                SiblingOutcome::Fault { kind, message } => {
                    return Err(Stop::Fault(kind, message));
                }
            };
            ran.push((index, r));
        }
        Ok(ran)
    }
}

/// Runs one sibling another process handed over, over `prep` — the same program, checked by
/// its digest and the SPAWN's position — with its effects journaled on `journal` when given.
pub(crate) async fn run_job(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    job: SiblingJob,
    journal: Option<Arc<dyn Journal>>,
) -> SiblingOutcome {
    let refuse = |why: String| SiblingOutcome::Fault {
        kind: FaultKind::InvalidHandle,
        message: format!(
            "sibling {} of SPAWN `{}` (run {}): {why}",
            job.index + 1,
            job.instruction,
            job.run
        ),
    };
    if job.digest != prep.digest() {
        return refuse(format!(
            "it belongs to another version of the program (digest {}, this endpoint serves {}); serve the same program on every endpoint",
            job.digest,
            prep.digest()
        ));
    }
    let Some((step, ctl)) = prep
        .steps
        .get(job.step)
        .filter(|s| s.id == job.instruction)
        .and_then(|s| Some((s, s.spawn.as_ref()?)))
    else {
        return refuse(format!(
            "step {} of the program is not that SPAWN",
            job.step
        ));
    };
    let mut snapshot = CarryFile {
        names: prep.names.clone(),
        values: prep.initial.clone(),
    };
    for (name, v) in &job.carries {
        if let Some(c) = prep.names.index(name) {
            snapshot.set(c, Value::from_json(v));
        }
    }
    let run = Run::new(
        settings.clone(),
        prep.clone(),
        Some(job.task.clone()),
        &[],
        0,
    );
    let ctx = match run.sibling_ctx(step, &ctl.isolation, job.index).await {
        Ok(ctx) => ctx,
        Err(stop) => return outcome(Err(stop)),
    };
    let sibling = Sibling {
        settings,
        prep: prep.clone(),
        at: job.step,
        index: job.index,
        subtask: Value::from_json(&job.subtask),
        snapshot: Arc::new(snapshot),
        task: job.task,
        ctx,
        list: ctl.list,
        answer: job.answer.map(|(v, tool)| Answer {
            value: Value::from_json(&v),
            tool,
        }),
        effects: Effects::sibling(journal, job.index, job.at_step),
        step: (job.at_step, Vec::new()),
    };
    outcome(sibling.run().await)
}

/// A sibling's end as the data that crosses the hook.
fn outcome(r: Result<SiblingResult, Stop>) -> SiblingOutcome {
    match r {
        Ok(r) => SiblingOutcome::Done {
            value: r.value.map(|v| v.to_json()),
            usage: r.usage,
            spend: r.spend,
        },
        Err(Stop::Pause { prompt, tool, .. }) => SiblingOutcome::Waiting { tool, prompt },
        Err(Stop::Fault(kind, message)) => SiblingOutcome::Fault { kind, message },
    }
}

/// Runs a CALL's callee (of `callee`) through `runner`'s placement. A callee that paused for
/// a human pauses this run, its saved state kept in this run's pause as an in-process
/// callee's is — once it is known to be a pause of the program called.
pub(super) async fn call_elsewhere(
    runner: Runner<'_>,
    job: CallJob,
    callee: &Prepared,
) -> Result<RunOutcome, Stop> {
    let instruction = job.instruction.clone();
    let mut o = runner.placement.call(job).await.map_err(placement_stop)?;
    match o.pause.take() {
        Some(CallPause { saved, .. }) if o.status == Status::InputRequired => {
            let saved = saved.0;
            let asked = (saved.program == callee.digest())
                .then_some(saved.waits.as_ref())
                .flatten()
                .map(|w| w.innermost());
            let Some(asked) = asked else {
                return Err(Stop::Fault(
                    FaultKind::Placement,
                    format!(
                        "CALL `{instruction}`: the callee paused and sent back a saved state that is not a pause of the program called"
                    ),
                ));
            };
            Err(Stop::Pause {
                carry: asked.carry.clone(),
                prompt: asked.prompt.clone(),
                ask: false,
                tool: 0,
                call: Some(Box::new(saved)),
            })
        }
        _ => Ok(outcome_of_call(o)),
    }
}

/// Runs `run`, a CALL's callee another process's placement handed over, to its end or its
/// pause: what the caller lands, or the state it pauses with.
pub(crate) async fn run_call(mut run: Run) -> CallOutcome {
    let journal = run.effects.journal().cloned();
    match Box::pin(run.drive_steps(0)).await {
        Ok(out) => {
            if let Some(journal) = journal {
                Run::end_journal(journal.as_ref(), &out).await;
            }
            CallOutcome::of(&out, None)
        }
        Err(waits) => {
            let saved = SavedCall(run.saved(Some((*waits).clone())));
            let out = Box::pin(run.pause(*waits)).await;
            CallOutcome::of(&out, Some(saved))
        }
    }
}

/// A placement's error as what stops the run.
fn placement_stop(e: PlacementError) -> Stop {
    Stop::Fault(FaultKind::Placement, e.to_string())
}

/// A callee's report as the outcome an in-process sub-run returns (what the caller lands).
fn outcome_of_call(o: CallOutcome) -> RunOutcome {
    let text = |v: &Json, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    RunOutcome {
        status: o.status,
        report: o.report,
        written: serde_json::Map::new(),
        unproduced: Vec::new(),
        deviations: o
            .deviations
            .iter()
            .map(|d| ais_core::Deviation {
                check: d["check"].as_str().and_then(ais_core::CheckId::parse),
                subject: text(d, "subject"),
                intended: text(d, "intended"),
                substituted: text(d, "substituted"),
            })
            .collect(),
        findings: Vec::new(),
        failures: Vec::new(),
        fault: o.fault.map(|f| Fault {
            kind: f.kind,
            instruction: f.instruction,
            line: None,
            message: f.message,
        }),
        pause: None,
        steps: o.steps,
        usage: o.usage,
        scripted: false,
    }
}

//! The machine's side of the journal seam ([`crate::journal`]): the step commit at each step
//! boundary and the rebuild of a run from its journal (every effect goes through
//! [`super::effects`]).
//!
//! With no journal none of this costs anything but a `None` test: the hot loop stays as it is.

use super::effects::{Effects, journal_stop};
use super::plan::{Prepared, Step};
use super::saved::{self, Saved, Unfit};
use super::{Run, Settings, Stop};
use crate::journal::{Journal, JournalError, Json, RunEnd, RunStart, StepCommit, fold, spend_of};
use crate::report::{Fault, FaultKind, RunOutcome, RunUsage, Status};
use ais_core::Value;
use std::sync::Arc;

/// What a journaled run changed since its last commit (the run's journal is its
/// [`Effects`]'s).
pub(crate) struct Durable {
    /// Whether this run commits its steps (a CALL's sub-run journals only its effects: its
    /// step is the CALL, which commits in the calling run).
    pub commits: bool,
    /// Carries written during the step.
    pub dirty: Vec<usize>,
    /// Counter-less LOOP counts changed during the step.
    pub loops: Vec<(usize, i64)>,
    /// Carries supplied during the step (a human's answer), with their values.
    pub supplied: Vec<usize>,
    /// Deviations already committed.
    pub deviations: usize,
    /// Whether the last commit recorded unrouted failures (so an emptied list is committed).
    pub unrouted: bool,
    /// Whether the last commit recorded pending branches.
    pub branches: bool,
}

impl Durable {
    /// The durable state of a fresh run.
    pub(crate) fn new(commits: bool) -> Box<Durable> {
        Box::new(Durable {
            commits,
            dirty: Vec::new(),
            loops: Vec::new(),
            supplied: Vec::new(),
            deviations: 0,
            unrouted: false,
            branches: false,
        })
    }
}

/// When a step that started at `started` started (ms since the Unix epoch), and how long it
/// took (µs).
fn step_time(started: std::time::Instant) -> (u64, u64) {
    let took = started.elapsed();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (
        now_ms.saturating_sub(took.as_millis() as u64),
        took.as_micros() as u64,
    )
}

impl Run {
    /// A CALL sub-run's durable state (its effects are journaled below this step, as
    /// [`Effects::below`] keys them): no commits.
    pub(crate) fn call_durable(&self) -> Option<Box<Durable>> {
        self.durable.as_ref().map(|_| Durable::new(false))
    }

    /// Notes a carry written outside [`Run::set`] (a LOOP's counter).
    pub(crate) fn note_written(&mut self, c: usize) {
        if let Some(d) = self.durable.as_deref_mut() {
            d.dirty.push(c);
        }
    }

    /// Notes a counter-less LOOP's new count.
    pub(crate) fn note_loop(&mut self, at: usize, count: i64) {
        if let Some(d) = self.durable.as_deref_mut() {
            d.loops.push((at, count));
        }
    }

    /// Commits the step that just completed (the run continues at `next`), in one transaction,
    /// before the next step starts.
    pub(crate) async fn commit_step(
        &mut self,
        step: &Step,
        next: usize,
        started: Option<std::time::Instant>,
    ) -> Result<(), Stop> {
        let (Some(d), Some(journal)) = (self.durable.as_deref_mut(), self.effects.journal()) else {
            return Ok(());
        };
        let pure = self.effects.keyed() == 0 && d.supplied.is_empty() && is_pure(step);
        if !d.commits {
            d.dirty.clear();
            d.loops.clear();
            d.supplied.clear();
            return Ok(());
        }
        let names = &self.carries.names.list;
        d.dirty.sort_unstable();
        d.dirty.dedup();
        let json = |c: usize| (names[c].clone(), self.carries.get(c).to_json());
        let unrouted = (d.unrouted || !self.unrouted.is_empty())
            .then(|| serde_json::to_value(&self.unrouted).unwrap_or(Json::Null));
        d.unrouted = !self.unrouted.is_empty();
        let branches = (d.branches || !self.branches.is_empty()).then(|| self.branches.clone());
        d.branches = !self.branches.is_empty();
        let commit = StepCommit {
            step: self.steps,
            instruction: step.id.clone(),
            cursor: next,
            written: d.dirty.drain(..).map(json).collect(),
            supplied: d.supplied.drain(..).map(json).collect(),
            loops: std::mem::take(&mut d.loops),
            deviations: self.deviations[d.deviations.min(self.deviations.len())..]
                .iter()
                .map(|x| (x.subject.clone(), x.intended.clone(), x.substituted.clone()))
                .collect(),
            unrouted,
            branches,
            usage: (
                self.usage.prompt_tokens,
                self.usage.completion_tokens,
                self.usage.cached_tokens,
                self.usage.slots,
            ),
            spend: spend_of(&self.usage),
            sub_steps: self.sub_steps,
            time: started.map(step_time),
        };
        d.deviations = self.deviations.len();
        let done = if pure {
            journal.commit_pure(&commit).await
        } else {
            journal.commit(&commit).await
        };
        done.map_err(journal_stop)
    }

    /// Records how the run ended (a pause records itself, with its state).
    pub(crate) async fn end_journal(journal: &dyn Journal, out: &RunOutcome) {
        if out.status == Status::InputRequired {
            return;
        }
        let end = RunEnd {
            status: out.status,
            steps: out.steps,
            outcome: serde_json::to_value(out).unwrap_or(Json::Null),
            pause: None,
        };
        // A failed end leaves the run `running`: a later resume finds every step committed and
        // ends it again.
        if let Err(e) = journal.end(&end).await {
            tracing::warn!("{e}");
        }
    }
}

/// Whether `step` is pure by what it is (contract 5 of [`crate::journal`]): a CODE body, a
/// code-decided ROUTE, a LOOP whose work is a body or nothing — no tool, no slot, no model
/// choice, no SPAWN, no CALL, no write-out. (The caller adds: it ran no effect and took no
/// human answer.)
fn is_pure(step: &Step) -> bool {
    use super::plan::{Control, Work};
    step.spawn.is_none()
        && !matches!(step.control, Control::Choose(_))
        && matches!(step.work, Work::Inline(_) | Work::None)
}

/// A fault outcome before any step ran (the journal could not be read, the resume handle or
/// the answer did not fit).
pub(super) fn refused(
    settings: &Settings,
    prep: &Prepared,
    kind: FaultKind,
    message: String,
) -> RunOutcome {
    RunOutcome {
        status: Status::Fault,
        report: serde_json::Map::new(),
        written: serde_json::Map::new(),
        unproduced: Vec::new(),
        deviations: prep.deviations.clone(),
        findings: prep.findings.clone(),
        failures: Vec::new(),
        fault: Some(Fault {
            kind,
            instruction: String::new(),
            line: None,
            message,
        }),
        pause: None,
        steps: 0,
        usage: RunUsage::default(),
        scripted: settings.models.is_scripted(),
    }
}

fn corrupt(run: &str, row: String, message: String) -> JournalError {
    JournalError::Corrupt {
        run: run.to_owned(),
        row,
        message,
    }
}

/// Starts a fresh run on `journal`.
pub(crate) fn fresh(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    task: Option<String>,
    values: &[(usize, Value)],
    journal: Arc<dyn Journal>,
) -> Run {
    let mut run = Run::new(settings, prep, task, values, 0);
    run.durable = Some(Durable::new(true));
    run.effects = Effects::journaled(journal);
    run
}

/// Continues a journaled run that did not finish: rebuilt from its saved state
/// ([`super::saved::rebuild`]) — its commits folded (nothing completed runs again; the step in
/// flight reruns with its recorded effects answered from the journal), or, paused for a human,
/// its pause record with `answer`.
pub(crate) async fn resume(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    journal: Arc<dyn Journal>,
    start: &RunStart,
    answer: Option<String>,
) -> RunOutcome {
    let rebuilt = rebuild(
        settings.clone(),
        prep.clone(),
        journal.clone(),
        start,
        answer,
    )
    .await;
    match rebuilt {
        Ok(Ok((run, cursor))) => run.drive(cursor).await,
        Ok(Err(out)) => out,
        Err(e) => {
            let out = refused(&settings, &prep, FaultKind::Journal, e.to_string());
            Run::end_journal(journal.as_ref(), &out).await;
            out
        }
    }
}

type Rebuilt = Result<(Run, usize), RunOutcome>;

async fn rebuild(
    settings: Arc<Settings>,
    prep: Arc<Prepared>,
    journal: Arc<dyn Journal>,
    start: &RunStart,
    answer: Option<String>,
) -> Result<Rebuilt, JournalError> {
    let id = journal.run_id().to_owned();
    if let Some(why) = &prep.not_runnable {
        return Ok(Err(refused(
            &settings,
            &prep,
            FaultKind::NotRunnable,
            format!("the program cannot run, so run {id} cannot resume: {why}"),
        )));
    }
    let history = journal.history().await?;
    let folded = fold(&id, &history.commits)?;
    let (row, saved) = match history.pause {
        Some(record) => {
            if answer.is_none() {
                return Ok(Err(refused(
                    &settings,
                    &prep,
                    FaultKind::InvalidHandle,
                    format!(
                        "run {id} paused for a human answer; give it with `ais resume {id} --answer TEXT`"
                    ),
                )));
            }
            let row = "runs row (its pause record)".to_owned();
            let saved =
                super::pause::read_record(record).map_err(|m| corrupt(&id, row.clone(), m))?;
            (row, saved)
        }
        None => (
            format!("steps (step {})", folded.steps),
            Saved {
                program: prep.digest().to_owned(),
                name: None,
                task: start.task.clone(),
                inputs: start.inputs.clone(),
                state: folded.clone(),
                waits: None,
            },
        ),
    };
    let shown = saved.shown(&prep, None);
    let steps = saved.state.steps;
    let r = match saved::rebuild(settings.clone(), prep.clone(), saved, answer.as_deref(), 0) {
        Ok(r) => r,
        // The answer is refused and the run still waits for one: nothing is journaled.
        Err(Unfit::Answer(m)) => {
            return Ok(Err(match shown {
                Some(pause) => super::pause::still_waiting(&settings, &prep, pause, steps, m),
                None => refused(&settings, &prep, FaultKind::InvalidHandle, m),
            }));
        }
        Err(Unfit::Record(m)) => return Err(corrupt(&id, row, m)),
    };
    let mut run = r.run;
    // What the commits hold already is not committed again.
    let mut d = Durable::new(true);
    d.deviations = folded.deviations.len();
    d.unrouted = folded
        .unrouted
        .as_ref()
        .is_some_and(|u| u.as_array().is_some_and(|a| !a.is_empty()));
    d.branches = folded.branches.as_ref().is_some_and(|b| !b.is_empty());
    d.supplied.extend(r.supplied);
    run.durable = Some(d);
    run.effects = Effects::journaled(journal);
    run.effects.meter().restart(run.cost_spent());
    Ok(Ok((run, r.cursor)))
}

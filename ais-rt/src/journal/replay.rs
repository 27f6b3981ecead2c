//! Replay: a finished, journaled run re-executed with every slot answered from its journal —
//! a recorded run becomes a deterministic, offline regression test of its program.
//!
//! A replay is one more [`Journal`] on the same seam: [`ReplayJournal`] answers each effect
//! the machine asks for from a [`Recording`] (read from the SQLite store, or from a
//! [`MemoryJournal`]) and writes nothing anywhere — its commits
//! and its end stay in memory, so replaying a run never changes it.
//!
//! - **Slots** (and model-owned ROUTE choices) are answered by instruction and request: a
//!   recorded effect of the same instruction whose request digest ([`super::request`]) is the
//!   same. A request that changed — another doc, another operand, another schema — is a
//!   [`Miss`] naming the instruction and the parts that differ; the replay answers it with the
//!   instruction's recorded answer anyway (the one at the same key when there is one), so it
//!   goes on and shows every miss of the run, not only the first. An instruction the
//!   recording never asked at all stops the replay ([`JournalError::Miss`]).
//! - **Tools** ([`ToolReplay`]): `Live` runs them again for real; `Journal` answers them from
//!   the recording like slots, and a tool the recording cannot answer stops the replay rather
//!   than running — a replay from the journal touches nothing outside the process.
//!
//! The model is never asked: [`crate::Runtime::replay`] runs with a model that refuses
//! every exchange.

use super::memory::{MemoryJournal, Steps};
use super::request::differences;
#[cfg(feature = "sqlite")]
use super::sqlite::{SqliteStore, recorded_outcome};
use super::{
    BoxFuture, Effect, EffectKey, EffectKind, History, Journal, JournalError, Json, RunEnd,
    RunStart, RunState, StepCommit,
};
use crate::Status;
use std::fmt;
use std::sync::Mutex;

/// Where a replay's tool results come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolReplay {
    /// From the journal: no tool runs, no artifact is written (the default).
    #[default]
    Journal,
    /// Live: every tool runs again (its effects happen again).
    Live,
}

/// A finished run as a journal recorded it: what it started with, every effect with its
/// result, its step commits and its outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    /// What the run started with (program, digest, task, inputs).
    pub start: RunStart,
    /// Where it stands as recorded (ended `ok`, `error` or `fault`; running, paused for a
    /// human or interrupted did not finish).
    pub status: RunState,
    /// Its effects in key order, each with its result (`None`: only the intent).
    pub effects: Vec<(Effect, Option<Json>)>,
    /// Its step commits, in order.
    pub commits: Vec<StepCommit>,
    /// Its outcome (the `RunOutcome` as JSON), once it finished.
    pub outcome: Option<Json>,
}

impl Recording {
    /// Reads run `id` from a SQLite journal; every row is checked ([`JournalError::Corrupt`]
    /// names the first that does not read, or that names an instruction the run's recorded
    /// program does not have).
    #[cfg(feature = "sqlite")]
    pub fn from_sqlite(store: &SqliteStore, id: &str) -> Result<Recording, JournalError> {
        let record = store
            .run(id)?
            .ok_or_else(|| JournalError::NoRun(id.to_owned()))?;
        let rec = Recording {
            start: store.start(id)?,
            status: record.status,
            effects: store
                .effects(id)?
                .into_iter()
                .map(|r| (r.effect, r.result))
                .collect(),
            commits: store.steps(id)?.into_iter().map(|r| r.commit).collect(),
            outcome: recorded_outcome(store, id)?,
        };
        rec.check()?;
        Ok(rec)
    }

    /// Reads a run from an in-memory journal, given what it started with.
    pub async fn from_memory(
        journal: &MemoryJournal,
        start: RunStart,
    ) -> Result<Recording, JournalError> {
        let mut effects = journal.effects();
        effects.sort_by(|(a, _), (b, _)| {
            (a.key.step, &a.key.path, a.key.index).cmp(&(b.key.step, &b.key.path, b.key.index))
        });
        let end = journal.ended();
        let rec = Recording {
            start,
            status: end
                .as_ref()
                .map_or(RunState::Running, |e| RunState::Ended(e.status)),
            effects,
            commits: journal.history().await?.commits,
            outcome: end.map(|e| e.outcome),
        };
        rec.check()?;
        Ok(rec)
    }

    /// The recorded outcome of a run that finished; a run that did not is refused, saying how
    /// to finish it.
    pub fn finished(&self) -> Result<&Json, ReplayError> {
        let id = &self.start.id;
        let why = match self.status {
            RunState::Ended(Status::Ok | Status::Error | Status::Fault) => {
                return self.outcome.as_ref().ok_or_else(|| {
                    ReplayError::Journal(corrupt(
                        id,
                        "runs row",
                        format!("it ended `{}` and records no outcome", self.status),
                    ))
                });
            }
            RunState::Ended(Status::InputRequired) => "it is paused for a human answer",
            RunState::Ended(Status::Interrupted) => {
                "it stopped at an effect that was in flight when it was killed"
            }
            RunState::Running => "it is still running, or it crashed",
        };
        Err(ReplayError::Unfinished {
            run: id.clone(),
            status: self.status,
            why: why.to_owned(),
        })
    }

    /// Every effect and commit names an instruction of the program the run recorded.
    fn check(&self) -> Result<(), JournalError> {
        let id = &self.start.id;
        let program = ais_core::agir::read(&self.start.source).map_err(|e| {
            corrupt(
                id,
                "runs row",
                format!("its recorded program does not read ({e})"),
            )
        })?;
        let ids: Vec<&str> = program
            .program
            .instructions()
            .iter()
            .map(|i| i.id.as_str())
            .collect();
        let known = |name: &str| ids.contains(&name);
        for (e, _) in &self.effects {
            if !known(&e.instruction) {
                return Err(corrupt(
                    id,
                    &format!("effects row ({})", e.key),
                    format!(
                        "it belongs to instruction `{}`, which the run's program does not have",
                        e.instruction
                    ),
                ));
            }
        }
        for (k, c) in self.commits.iter().enumerate() {
            if !known(&c.instruction) {
                return Err(corrupt(
                    id,
                    &format!("steps row {} (step {})", k + 1, c.step),
                    format!(
                        "it commits instruction `{}`, which the run's program does not have",
                        c.instruction
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Why a run cannot be replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The run did not finish: there is no recorded outcome to compare with.
    #[error(
        "run {run} did not finish ({why}; status `{status}`): only a finished run can be replayed; finish it with `ais resume {run}`, then replay it"
    )]
    Unfinished {
        /// The run.
        run: String,
        /// Where it stands.
        status: RunState,
        /// What that status means.
        why: String,
    },
    /// The journal could not be read, or a row of it is malformed.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

fn corrupt(run: &str, row: &str, message: String) -> JournalError {
    JournalError::Corrupt {
        run: run.to_owned(),
        row: row.to_owned(),
        message,
    }
}

/// A request the recording answered for another request: the instruction, where it was
/// asked, and what differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Miss {
    /// The effect the replay asked for.
    pub effect: Effect,
    /// The recorded effect that answered it, when the instruction had one.
    pub answered_by: Option<EffectKey>,
    /// What differs, in words (`the doc changed`, `operand `task` changed`).
    pub differs: Vec<String>,
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.effect;
        write!(
            f,
            "`{}` ({} `{}`, {}): {}",
            e.instruction,
            e.kind.as_str(),
            e.name,
            e.key,
            self.differs.join(", ")
        )
    }
}

/// One recorded effect and whether the replay used it.
struct Entry {
    effect: Effect,
    result: Option<Json>,
    used: bool,
}

#[derive(Default)]
struct State {
    entries: Vec<Entry>,
    misses: Vec<Miss>,
    steps: Steps,
}

/// A journal that answers a replay from a [`Recording`] and records nothing durable.
pub(crate) struct ReplayJournal {
    id: String,
    tools: ToolReplay,
    state: Mutex<State>,
}

impl ReplayJournal {
    /// A replay of `recording`, with tools from `tools`.
    pub(crate) fn new(recording: &Recording, tools: ToolReplay) -> ReplayJournal {
        let entries = recording
            .effects
            .iter()
            .map(|(effect, result)| Entry {
                effect: effect.clone(),
                result: result.clone(),
                used: false,
            })
            .collect();
        ReplayJournal {
            id: recording.start.id.clone(),
            tools,
            state: Mutex::new(State {
                entries,
                ..State::default()
            }),
        }
    }

    /// The misses so far, in the order the replay met them.
    pub(crate) fn misses(&self) -> Vec<Miss> {
        self.lock().misses.clone()
    }

    /// The recorded effects the replay never asked for (tools too when they come from the
    /// journal), in key order.
    pub(crate) fn unasked(&self) -> Vec<Effect> {
        let s = self.lock();
        s.entries
            .iter()
            .filter(|e| !e.used && (is_model(e.effect.kind) || self.tools == ToolReplay::Journal))
            .map(|e| e.effect.clone())
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The recorded answer for `effect`: the same instruction and request (at the same key
    /// when one is), else — a miss — the instruction's next unused answer.
    fn answer(&self, effect: &Effect) -> Result<Json, JournalError> {
        let mut s = self.lock();
        let same = |e: &Entry| {
            !e.used
                && e.effect.kind == effect.kind
                && e.effect.instruction == effect.instruction
                && e.effect.name == effect.name
        };
        let pick = |entries: &[Entry], f: &dyn Fn(&Entry) -> bool| {
            entries
                .iter()
                .position(|e| f(e) && e.effect.key == effect.key)
                .or_else(|| entries.iter().position(f))
        };
        let hit = pick(&s.entries, &|e| {
            same(e) && e.effect.request == effect.request
        });
        let at = match hit {
            Some(at) => at,
            None => {
                let Some(at) = pick(&s.entries, &same) else {
                    s.misses.push(Miss {
                        effect: effect.clone(),
                        answered_by: None,
                        differs: vec!["the recorded run never asked it".into()],
                    });
                    return Err(JournalError::Miss {
                        run: self.id.clone(),
                        effect: Box::new(effect.clone()),
                        message: "was never asked in the recorded run, so the journal has no answer for it".into(),
                    });
                };
                let recorded = &s.entries[at].effect;
                let miss = Miss {
                    effect: effect.clone(),
                    answered_by: Some(recorded.key.clone()),
                    differs: differences(recorded.request.as_deref(), effect.request.as_deref()),
                };
                s.misses.push(miss);
                at
            }
        };
        let entry = &mut s.entries[at];
        entry.used = true;
        entry.result.clone().ok_or_else(|| {
            corrupt(
                &self.id,
                &format!("effects row ({})", entry.effect.key),
                "the run finished, and this effect records an intent and no result".into(),
            )
        })
    }
}

fn is_model(kind: EffectKind) -> bool {
    matches!(kind, EffectKind::Slot | EffectKind::Choice)
}

impl Journal for ReplayJournal {
    fn run_id(&self) -> &str {
        &self.id
    }

    fn effect<'a>(
        &'a self,
        effect: Effect,
        work: BoxFuture<'a, Json>,
    ) -> BoxFuture<'a, Result<Json, JournalError>> {
        Box::pin(async move {
            if !is_model(effect.kind) && self.tools == ToolReplay::Live {
                return Ok(work.await);
            }
            drop(work);
            self.answer(&effect)
        })
    }

    fn commit<'a>(&'a self, commit: &'a StepCommit) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.lock().steps.commit(commit);
            Ok(())
        })
    }

    fn end<'a>(&'a self, end: &'a RunEnd) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.lock().steps.end = Some(end.clone());
            Ok(())
        })
    }

    fn history(&self) -> BoxFuture<'_, Result<History, JournalError>> {
        Box::pin(async move { Ok(self.lock().steps.history()) })
    }
}

/// What a replay found: its outcome, the requests the recording answered for another
/// request, the recorded effects it never asked for, and how its outcome differs from the
/// recorded one.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The replay's outcome.
    pub outcome: crate::RunOutcome,
    /// The requests that changed (each answered with the instruction's recorded answer).
    pub misses: Vec<Miss>,
    /// The recorded effects the replay never asked for.
    pub unasked: Vec<Effect>,
    /// How the outcome differs from the recorded one (status, report entries, fault).
    pub differences: Vec<Difference>,
    /// Whether the program replayed is not the one recorded (its digest differs).
    pub program_changed: bool,
}

impl Replay {
    /// True when the replay met the recording exactly: no miss, nothing unasked, the same
    /// outcome.
    pub fn matches(&self) -> bool {
        self.misses.is_empty() && self.unasked.is_empty() && self.differences.is_empty()
    }
}

/// One way the replay's outcome differs from the recorded one: a field (`status`,
/// `report.summary`, `fault`) and its value in each (`None`: absent).
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The field.
    pub field: String,
    /// Its recorded value.
    pub recorded: Option<Json>,
    /// Its replayed value.
    pub replayed: Option<Json>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Json>| match v {
            Some(v) => short(v),
            None => "(absent)".to_owned(),
        };
        write!(
            f,
            "- {}: {}\n+ {}: {}",
            self.field,
            show(&self.recorded),
            self.field,
            show(&self.replayed)
        )
    }
}

/// A value as one line of at most ~200 characters.
fn short(v: &Json) -> String {
    let text = v.to_string();
    if text.chars().count() <= 200 {
        return text;
    }
    let head: String = text.chars().take(200).collect();
    format!("{head}…")
}

/// How the replayed outcome differs from the recorded one: the status, each report entry, and
/// the fault's kind and instruction.
pub(crate) fn compare(recorded: &Json, replayed: &Json) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut field = |name: String, a: Option<&Json>, b: Option<&Json>| {
        if a != b {
            out.push(Difference {
                field: name,
                recorded: a.cloned(),
                replayed: b.cloned(),
            });
        }
    };
    field(
        "status".into(),
        recorded.get("status"),
        replayed.get("status"),
    );
    let empty = serde_json::Map::new();
    let report = |v: &'_ Json| v.get("report").and_then(Json::as_object).cloned();
    let (a, b) = (
        report(recorded).unwrap_or_else(|| empty.clone()),
        report(replayed).unwrap_or(empty),
    );
    for (k, v) in &a {
        field(format!("report.{k}"), Some(v), b.get(k));
    }
    for (k, v) in &b {
        if !a.contains_key(k) {
            field(format!("report.{k}"), None, Some(v));
        }
    }
    let fault = |v: &Json| {
        v.get("fault").filter(|f| !f.is_null()).map(
            |f| serde_json::json!({"kind": f.get("kind"), "instruction": f.get("instruction")}),
        )
    };
    field(
        "fault".into(),
        fault(recorded).as_ref(),
        fault(replayed).as_ref(),
    );
    out
}

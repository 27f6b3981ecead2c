//! An in-memory journal: the contract of [`Journal`] without a store, for tests and benches
//! (and for a run that should be replayable within one process).

use super::{
    BoxFuture, Effect, EffectKey, History, InFlight, Journal, JournalError, Json, RunEnd,
    StepCommit,
};
use std::collections::HashMap;
use std::sync::Mutex;

/// What the memory journal holds.
#[derive(Default)]
struct State {
    effects: HashMap<EffectKey, (Effect, Option<Json>)>,
    steps: Steps,
}

/// A run's step commits and its end, kept in memory: what a [`MemoryJournal`] and a replay's
/// journal record of the steps.
#[derive(Default)]
pub(super) struct Steps {
    pub(super) commits: Vec<StepCommit>,
    pub(super) end: Option<RunEnd>,
}

impl Steps {
    /// Records a completed step; a run that commits a step is no longer paused.
    pub(super) fn commit(&mut self, commit: &StepCommit) {
        self.commits.push(commit.clone());
        if let Some(end) = &mut self.end {
            end.pause = None;
        }
    }

    /// The history a resume reads: the commits, and the pause the run ended with.
    pub(super) fn history(&self) -> History {
        History {
            commits: self.commits.clone(),
            pause: self.end.as_ref().and_then(|e| e.pause.clone()),
        }
    }
}

/// A run's journal kept in memory.
pub struct MemoryJournal {
    id: String,
    in_flight: InFlight,
    state: Mutex<State>,
}

impl MemoryJournal {
    /// An empty journal for run `id`.
    pub fn new(id: impl Into<String>) -> MemoryJournal {
        MemoryJournal {
            id: id.into(),
            in_flight: InFlight::Stop,
            state: Mutex::new(State::default()),
        }
    }

    /// What to do with an effect found in flight.
    pub fn with_in_flight(mut self, policy: InFlight) -> Self {
        self.in_flight = policy;
        self
    }

    /// Forgets every result recorded after the last commit, keeping their intents: the state
    /// a crash in the middle of the next step leaves behind.
    pub fn crash(&self) {
        let mut s = self.lock();
        let last = s.steps.commits.last().map_or(0, |c| c.step);
        for (key, (_, result)) in s.effects.iter_mut() {
            if key.step > last {
                *result = None;
            }
        }
        s.steps.end = None;
    }

    /// The effects recorded so far (intent and result), in no particular order.
    pub fn effects(&self) -> Vec<(Effect, Option<Json>)> {
        self.lock().effects.values().cloned().collect()
    }

    /// How the run ended, once it has.
    pub fn ended(&self) -> Option<RunEnd> {
        self.lock().steps.end.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Journal for MemoryJournal {
    fn run_id(&self) -> &str {
        &self.id
    }

    fn effect<'a>(
        &'a self,
        effect: Effect,
        work: BoxFuture<'a, Json>,
    ) -> BoxFuture<'a, Result<Json, JournalError>> {
        Box::pin(async move {
            {
                let mut s = self.lock();
                if let Some((prior, result)) = s.effects.get(&effect.key) {
                    check_same(&self.id, prior, &effect)?;
                    match (result, self.in_flight, effect.idempotency) {
                        (Some(v), _, _) => return Ok(v.clone()),
                        (None, _, super::Idempotency::Retry) => {}
                        (None, InFlight::MarkDone, super::Idempotency::Once) => {
                            s.effects
                                .insert(effect.key.clone(), (effect, Some(Json::Null)));
                            return Ok(Json::Null);
                        }
                        (None, InFlight::Stop, super::Idempotency::Once) => {
                            return Err(in_flight(&self.id, &effect));
                        }
                        _ => {}
                    }
                }
                s.effects.insert(effect.key.clone(), (effect.clone(), None));
            }
            let v = work.await;
            let mut s = self.lock();
            match s.effects.get_mut(&effect.key) {
                Some(row) => row.1 = Some(v.clone()),
                None => {
                    s.effects
                        .insert(effect.key.clone(), (effect, Some(v.clone())));
                }
            }
            Ok(v)
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

/// The error for an effect in flight that may not be repeated.
pub(crate) fn in_flight(run: &str, e: &Effect) -> JournalError {
    JournalError::InFlight {
        run: run.to_owned(),
        effect: Box::new(e.clone()),
    }
}

/// A key recorded with another kind or name contradicts the program now asking for it.
pub(crate) fn check_same(run: &str, prior: &Effect, now: &Effect) -> Result<(), JournalError> {
    if prior.kind != now.kind || prior.name != now.name || prior.instruction != now.instruction {
        return Err(JournalError::Corrupt {
            run: run.to_owned(),
            row: format!("effect ({})", now.key),
            message: format!(
                "it records {} `{}` of `{}`, and the run now asks for {} `{}` of `{}` there",
                prior.kind.as_str(),
                prior.name,
                prior.instruction,
                now.kind.as_str(),
                now.name,
                now.instruction
            ),
        });
    }
    Ok(())
}

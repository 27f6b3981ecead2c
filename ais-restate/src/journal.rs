//! The journal seam on Restate: every effect of a run is one `ctx.run` of the workflow's
//! invocation, so Restate's journal holds each result and replays it after a failure.
//!
//! This backend keeps no commits of its own across failures (the seam allows it, contract 4 of
//! `ais_rt::journal`): an invocation that Restate retries — on this endpoint or any other —
//! re-executes the program from its first step, and every effect the journal recorded answers
//! from it without running again. Commits and the pause record are kept in memory for the life
//! of one attempt (a pause's answer resumes from them); a replay rebuilds them, since the
//! machine commits the same steps again on the way.
//!
//! # Using the context serially (restatedev/sdk-rust #89)
//!
//! The SDK's context may not be used by two futures at once, and a replay must ask for the
//! same entries in the same order. So effects take a FIFO turn ([`tokio::sync::Mutex`]) around
//! their `ctx.run`; a SPAWN's siblings and a CALL's callee leave the invocation as calls of
//! their own, placed by [`crate::siblings::RestatePlacement`] on the same context and made and
//! awaited in order within one turn of this journal; and what stays
//! in the invocation (the siblings of a CALL run in process) runs one sibling at a time on the
//! endpoint's current-thread runtime (see [`crate::endpoint`]): the order of the entries is
//! then the program's own, the same in every attempt.
//!
//! # Staged writes
//!
//! An `orchestrator_owned` sibling's journal (`RestateJournal::with_stage`) records, with
//! each effect's result, the files of the sibling's stage after it ran, and writes them back
//! when the effect is answered from the journal: a sibling retried on another endpoint, whose
//! disk never saw the first attempt's writes, stages them again without running them again
//! ([`crate::stage`]).
//!
//! # Effects that must not repeat
//!
//! Restate retries a `ctx.run` that was in flight at a crash (at least once). An effect the
//! runtime marks [`Idempotency::Once`] (an ACT, a `command` tool, an append) is preceded by an
//! *intent* entry: if a later attempt finds the intent recorded and not the result, the effect
//! may have happened once, and the journal records that as the effect's entry (a typed value,
//! `in_flight`, not an error message to recognise) and stops the run `interrupted` — never a
//! silent second e-mail.

use ais_rt::journal::{
    BoxFuture, Effect, History, Idempotency, Journal, JournalError, Json, RunEnd, StepCommit,
};
use restate_sdk::context::RunFuture;
use restate_sdk::endpoint::ContextInternal;
use restate_sdk::errors::{HandlerError, TerminalError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// What an effect's entry in Restate's journal records: the effect's result, or that an
/// attempt found it in flight at a crash (its intent recorded, its result not) — recorded as a
/// value, so every later attempt reads the same answer and stops the run `interrupted`.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Entry {
    /// The effect's result (for a staged sibling, `{"value", "staged"}`).
    Done(Json),
    /// Found in flight at a crash: it may have run once.
    InFlight,
}

/// One run's journal: the invocation's Restate context.
pub struct RestateJournal {
    id: String,
    ctx: ContextInternal,
    /// The entries' turn: one `ctx.run` (or one SPAWN's sibling calls) at a time.
    pub(crate) turn: tokio::sync::Mutex<()>,
    state: Mutex<History>,
    /// The endpoint's lanes, when each effect's work takes one (a sibling's journal,
    /// [`crate::siblings`]).
    lanes: Option<Arc<Semaphore>>,
    /// The stage of an `orchestrator_owned` sibling: each effect records what it holds, and a
    /// replayed effect writes it back ([`crate::stage`]).
    stage: Option<PathBuf>,
}

impl RestateJournal {
    /// The journal of run `id` on the invocation context `ctx`.
    pub fn new(id: impl Into<String>, ctx: ContextInternal) -> RestateJournal {
        RestateJournal {
            id: id.into(),
            ctx,
            turn: tokio::sync::Mutex::new(()),
            state: Mutex::new(History::default()),
            lanes: None,
            stage: None,
        }
    }

    /// Records the files of the stage `dir` with each effect's result, and writes them back
    /// into it when an effect is answered from the journal (an `orchestrator_owned` sibling
    /// retried after a crash, [`crate::stage`]).
    pub(crate) fn with_stage(mut self, dir: PathBuf) -> RestateJournal {
        self.stage = Some(dir);
        self
    }

    /// Runs each effect's work in one of `lanes`: waits for a lane when all are taken, and
    /// holds it while the work runs — not while the server records the result, nor while the
    /// effect is answered from the journal.
    pub(crate) fn with_lanes(mut self, lanes: Arc<Semaphore>) -> RestateJournal {
        self.lanes = Some(lanes);
        self
    }

    /// The invocation context: the workflow's own entries (promises, state) between runs, and
    /// the sibling calls.
    pub(crate) fn ctx(&self) -> &ContextInternal {
        &self.ctx
    }

    /// A staged sibling's effect result as recorded (`{"value", "staged"}`): the value, with
    /// the stage written back from the record when the effect was `replayed`.
    fn unstage(
        &self,
        dir: &Path,
        recorded: Json,
        replayed: bool,
        effect: &Effect,
    ) -> Result<Json, TerminalError> {
        let entry: crate::stage::Staged = serde_json::from_value(recorded).map_err(|e| {
            TerminalError::new(format!(
                "the journal entry of {} is not a staged effect's: {e}",
                effect.key
            ))
        })?;
        if replayed {
            crate::stage::write(dir, &entry.staged).map_err(TerminalError::new)?;
        }
        Ok(entry.value)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, History> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The entry's name in Restate's journal: the effect's kind, name and key, so a replay that
/// asks for another effect at the same position is a journal mismatch, not a wrong answer.
fn entry_name(e: &Effect) -> String {
    format!(
        "{} {} `{}` ({})",
        e.kind.as_str(),
        e.instruction,
        e.name,
        e.key
    )
}

impl Journal for RestateJournal {
    fn run_id(&self) -> &str {
        &self.id
    }

    fn effect<'a>(
        &'a self,
        effect: Effect,
        work: BoxFuture<'a, Json>,
    ) -> BoxFuture<'a, Result<Json, JournalError>> {
        Box::pin(async move {
            let _turn = self.turn.lock().await;
            let name = entry_name(&effect);
            let once = effect.idempotency == Idempotency::Once;
            let fresh = AtomicBool::new(false);
            if once {
                self.ctx
                    .run(|| async {
                        fresh.store(true, Ordering::SeqCst);
                        Ok::<(), HandlerError>(())
                    })
                    .name(format!("intent {name}"))
                    .await
                    .map_err(|e| JournalError::Store(e.message().to_owned()))?;
            }
            let fresh = &fresh;
            let lanes = self.lanes.as_deref();
            let stage = self.stage.as_deref();
            let ran = AtomicBool::new(false);
            let ran = &ran;
            let result = self
                .ctx
                .run(move || async move {
                    if once && !fresh.load(Ordering::SeqCst) {
                        return Ok(restate_sdk::serde::Json(Entry::InFlight));
                    }
                    ran.store(true, Ordering::SeqCst);
                    let value = {
                        // A closed semaphore (never: the endpoint holds it) would only mean no
                        // lane.
                        let _lane = match lanes {
                            Some(l) => l.acquire().await.ok(),
                            None => None,
                        };
                        work.await
                    };
                    let Some(dir) = stage else {
                        return Ok(restate_sdk::serde::Json(Entry::Done(value)));
                    };
                    let staged = crate::stage::snapshot(dir)
                        .map_err(|e| HandlerError::from(TerminalError::new(e)))?;
                    let entry = crate::stage::Staged { value, staged };
                    serde_json::to_value(entry)
                        .map(|v| restate_sdk::serde::Json(Entry::Done(v)))
                        .map_err(|e| HandlerError::from(TerminalError::new(e.to_string())))
                })
                .name(name)
                .await;
            let result = match (result, stage) {
                (Ok(restate_sdk::serde::Json(Entry::InFlight)), _) => {
                    return Err(JournalError::InFlight {
                        run: self.id.clone(),
                        effect: Box::new(effect),
                    });
                }
                (Ok(restate_sdk::serde::Json(Entry::Done(v))), Some(dir)) => {
                    self.unstage(dir, v, !ran.load(Ordering::SeqCst), &effect)
                }
                (Ok(restate_sdk::serde::Json(Entry::Done(v))), None) => Ok(v),
                (Err(e), _) => Err(e),
            };
            match result {
                Ok(v) => Ok(v),
                Err(e) => Err(JournalError::Store(format!(
                    "Restate recorded a failure for {}: {}",
                    effect.key,
                    e.message()
                ))),
            }
        })
    }

    fn commit<'a>(&'a self, commit: &'a StepCommit) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let mut s = self.lock();
            s.commits.push(commit.clone());
            s.pause = None;
            Ok(())
        })
    }

    fn end<'a>(&'a self, end: &'a RunEnd) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.lock().pause.clone_from(&end.pause);
            Ok(())
        })
    }

    fn history(&self) -> BoxFuture<'_, Result<History, JournalError>> {
        Box::pin(async move { Ok(self.lock().clone()) })
    }
}

//! [`SqliteJournal`]: one run's journal in a [`SqliteStore`], written with as few
//! transactions as the contract allows.
//!
//! - **An intent is one transaction, written before the effect starts**, for every effect that
//!   must not silently run twice ([`Idempotency::Once`]) and for every slot, choice and
//!   artifact write. A [`Idempotency::Retry`] tool or MCP call (a read, or a tool declared
//!   idempotent) gets no intent row: a crash while it runs leaves no row and it runs again —
//!   exactly what an intent without a result would make it do.
//! - **A result is held until the next transaction**: the next effect's start (any pending
//!   result is written before another effect starts), the step's commit, the run's end — or at
//!   once when another effect of the run is still running (SPAWN siblings), so a result never
//!   waits on another effect's work. Between an effect's end and that transaction the machine
//!   only computes (write-back, guards), so a crash there is a crash just before the result
//!   was recorded, which the contract already covers: a `Retry` effect runs again, a `Once`
//!   one stops the run as in flight.
//! - **A step is one transaction**: its delta row, which carries the results of its effects
//!   (its `effects` column), and — at the run's first commit, then about once a second — the
//!   run's row. A step whose effects are all reads is one transaction in all, and writes one
//!   row.
//! - **A pure step is no transaction of its own** ([`Journal::commit_pure`]): its delta row is
//!   held and written, in order, with the next transaction that happens anyway — the next
//!   intent, the next effectful step's commit, the run's end —, or on its own once
//!   [`PURE_STEPS`] rows are held or the oldest has waited [`PURE_WAIT`]. A start of an
//!   effect that needs no intent writes nothing for them. The first commit of a journal
//!   (which marks the run `running` and clears a pause) is never held. A crash loses at most
//!   those held rows: pure steps, which the resume computes again exactly as they were.
//! - A journal that [`SqliteStore::begin`] opened for a new run looks nothing up: a new run
//!   has no recorded effect. A resumed one looks up each key.

use super::{EffectRow, SqliteStore, StepKeys, checkpoint, corrupt, now, rows, store_err};
use crate::journal::memory::{check_same, in_flight};
use crate::journal::{
    BoxFuture, Effect, EffectKey, EffectKind, History, Idempotency, InFlight, Journal,
    JournalError, Json, RunEnd, StepCommit,
};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// An effect row to write: the intent (`result` `None`) or the intent and its result (JSON).
struct Row {
    effect: Effect,
    result: Option<String>,
}

/// A step's delta row to write: (step, instruction, delta JSON).
type Delta = (u64, String, String);

/// The most pure steps' rows held before they are written on their own.
pub(crate) const PURE_STEPS: usize = 256;

/// The longest a pure step's row is held before it is written on their own.
pub(crate) const PURE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// What waits for the next transaction.
#[derive(Default)]
struct Pending {
    /// Effect results.
    results: Vec<Row>,
    /// Pure steps' delta rows, in order.
    steps: Vec<Delta>,
    /// When the oldest of `steps` was held.
    since: Option<std::time::Instant>,
}

/// One run's journal in a [`SqliteStore`] (the [`sqlite`](super) module docs say when it
/// writes).
pub struct SqliteJournal {
    id: String,
    /// Where the run's rows lie in `steps`.
    keys: StepKeys,
    /// The sequence number of the run's last steps row. Only this journal writes the run's
    /// rows (it holds the lease), and only under the store's lock.
    last_seq: AtomicU64,
    store: SqliteStore,
    in_flight: InFlight,
    /// The run began in this journal: there is no recorded effect to look up.
    fresh: bool,
    /// Results and pure steps not written yet: they go with the next transaction.
    pending: Mutex<Pending>,
    /// Effects of this run running now.
    running: AtomicUsize,
    /// Whether a commit of this journal already set the run `running` and cleared its pause.
    opened: AtomicBool,
    /// When a commit last updated the run's row (seconds since the epoch).
    updated: AtomicI64,
    /// A resumed run's recorded effects by key, read at its first lookup: every key this
    /// journal writes afterwards is one the run had not reached, which it never asks again.
    recorded: OnceLock<HashMap<EffectKey, EffectRow>>,
}

/// Counts an effect as running while it lives (a dropped effect future stops counting).
struct Running<'a>(&'a AtomicUsize);

impl<'a> Running<'a> {
    fn start(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Running(n)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether an intent row must be durable before the effect starts (see the module docs).
fn needs_intent(e: &Effect) -> bool {
    e.idempotency == Idempotency::Once || !matches!(e.kind, EffectKind::Tool | EffectKind::Mcp)
}

/// Writes a step's delta row as sequence number `seq` of its run, with the results of its
/// effects (`effects`, JSON) when it has some.
fn write_delta(
    (run, keys, seq): (&str, &StepKeys, u64),
    conn: &Connection,
    (step, instruction, delta): &Delta,
    effects: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?
        .execute(params![
            keys.key(seq),
            run,
            seq,
            step,
            instruction,
            delta,
            effects
        ])?;
    Ok(())
}

fn write_row(run: &str, conn: &Connection, row: &Row) -> rusqlite::Result<()> {
    let e = &row.effect;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO effects VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        run,
        e.key.step,
        e.key.path,
        e.key.index,
        e.kind.as_str(),
        e.instruction,
        e.name,
        e.idempotency.as_str(),
        e.request,
        row.result,
    ])?;
    Ok(())
}

impl SqliteJournal {
    pub(super) fn new(
        store: SqliteStore,
        id: &str,
        (keys, last_seq): (StepKeys, u64),
        in_flight: InFlight,
        fresh: bool,
    ) -> Self {
        SqliteJournal {
            id: id.to_owned(),
            keys,
            last_seq: AtomicU64::new(last_seq),
            store,
            in_flight,
            fresh,
            pending: Mutex::new(Pending::default()),
            running: AtomicUsize::new(0),
            opened: AtomicBool::new(false),
            updated: AtomicI64::new(0),
            recorded: OnceLock::new(),
        }
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
        store_err(&self.store.path)
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take_pending(&self) -> Pending {
        std::mem::take(&mut *self.pending())
    }

    /// The recorded effect at `effect`'s key, with its result wherever it lives.
    fn lookup(&self, effect: &Effect) -> Result<Option<EffectRow>, JournalError> {
        let recorded = match self.recorded.get() {
            Some(r) => r,
            None => {
                let rows = self.store.effects(&self.id)?;
                self.recorded.get_or_init(|| {
                    rows.into_iter()
                        .map(|r| (r.effect.key.clone(), r))
                        .collect()
                })
            }
        };
        Ok(recorded.get(&effect.key).cloned())
    }

    /// Writes `extra` with whatever is pending, in one transaction; with no `extra` and no
    /// pending result, nothing — held pure steps wait for a transaction that happens anyway —
    /// unless `all`.
    fn flush(&self, extra: Option<Row>, all: bool) -> Result<(), JournalError> {
        let pending = {
            let mut p = self.pending();
            if extra.is_none() && p.results.is_empty() && (p.steps.is_empty() || !all) {
                return Ok(());
            }
            std::mem::take(&mut *p)
        };
        self.transact(pending, |tx, _| {
            extra
                .as_ref()
                .map_or(Ok(()), |row| write_row(&self.id, tx, row))
        })
    }

    /// One transaction: the `pending` steps and results, then `more` (given the run's last
    /// sequence number, which it advances by the steps rows it writes).
    fn transact(
        &self,
        pending: Pending,
        more: impl FnOnce(&Connection, &mut u64) -> rusqlite::Result<()>,
    ) -> Result<(), JournalError> {
        let checkpointer = self.store.checkpointer();
        let conn = self.store.lock();
        // `BEGIN` and `COMMIT` as cached statements: a step's commit is the journal's hot
        // path, and `Connection::transaction` parses both anew each time.
        let mut seq = self.last_seq.load(Ordering::Relaxed);
        let work = || -> rusqlite::Result<()> {
            conn.prepare_cached("BEGIN")?.execute([])?;
            for delta in &pending.steps {
                seq += 1;
                write_delta((&self.id, &self.keys, seq), &conn, delta, None)?;
            }
            for row in &pending.results {
                write_row(&self.id, &conn, row)?;
            }
            more(&conn, &mut seq)?;
            checkpoint::before_commit();
            conn.prepare_cached("COMMIT")?.execute([])?;
            Ok(())
        };
        work().map_err(|e| {
            // Nothing of a failed transaction is kept (a no-op when it never began).
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            self.err()(e)
        })?;
        self.last_seq.store(seq, Ordering::Relaxed);
        checkpoint::after_commit(&conn, checkpointer);
        Ok(())
    }

    /// The statement updating the run's row with a commit of step `(step, instruction)` at
    /// time `t`: its status and pause at the first commit, its counters when the second
    /// changed (a reader takes the steps from the last steps row), else none.
    fn run_row(&self, t: i64) -> Option<&'static str> {
        if !self.opened.load(Ordering::Relaxed) {
            Some(
                "UPDATE runs SET steps=?2, last_step=?3, updated=?4, pause=NULL, status='running' WHERE id=?1",
            )
        } else if self.updated.load(Ordering::Relaxed) != t {
            Some("UPDATE runs SET steps=?2, last_step=?3, updated=?4 WHERE id=?1")
        } else {
            None
        }
    }

    /// Writes `pending` (steps last among them, or `commit` after them, holding the pending
    /// results) and the run's row in one transaction.
    fn write_commit(
        &self,
        mut pending: Pending,
        commit: Option<Delta>,
    ) -> Result<(), JournalError> {
        let last = commit
            .as_ref()
            .or(pending.steps.last())
            .map(|(step, instruction, _)| (*step, instruction.clone()));
        let t = now();
        let runs = self.run_row(t);
        let embedded = match &commit {
            Some(_) => rows::embed(
                std::mem::take(&mut pending.results)
                    .iter()
                    .map(|r| (&r.effect, r.result.as_deref().unwrap_or("null"))),
            ),
            None => None,
        };
        self.transact(pending, |tx, seq| {
            if let Some(delta) = &commit {
                *seq += 1;
                write_delta((&self.id, &self.keys, *seq), tx, delta, embedded.as_deref())?;
            }
            if let (Some(sql), Some((step, instruction))) = (runs, &last) {
                tx.prepare_cached(sql)?
                    .execute(params![self.id, step, instruction, t])?;
            }
            Ok(())
        })?;
        self.opened.store(true, Ordering::Relaxed);
        if runs.is_some() {
            self.updated.store(t, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Drop for SqliteJournal {
    /// A journal dropped with results pending (its run cancelled) writes them: they ran.
    fn drop(&mut self) {
        if let Err(e) = self.flush(None, true) {
            tracing::warn!("{e}");
        }
    }
}

impl Journal for SqliteJournal {
    fn run_id(&self) -> &str {
        &self.id
    }

    fn effect<'a>(
        &'a self,
        effect: Effect,
        work: BoxFuture<'a, Json>,
    ) -> BoxFuture<'a, Result<Json, JournalError>> {
        Box::pin(async move {
            let mut intent = needs_intent(&effect);
            if !self.fresh
                && let Some(prior) = self.lookup(&effect)?
            {
                check_same(&self.id, &prior.effect, &effect)?;
                match (prior.result, self.in_flight, effect.idempotency) {
                    (Some(v), _, _) => return Ok(v),
                    // A read, a model exchange, a CODE step's work: it simply runs again,
                    // whatever the user said of effects that may have changed the world.
                    (None, _, Idempotency::Retry) => intent = false,
                    (None, InFlight::MarkDone, Idempotency::Once) => {
                        self.flush(
                            Some(Row {
                                effect,
                                result: Some("null".to_owned()),
                            }),
                            true,
                        )?;
                        return Ok(Json::Null);
                    }
                    (None, InFlight::Stop, Idempotency::Once) => {
                        return Err(in_flight(&self.id, &effect));
                    }
                    // The user said to run it again: its intent is there already.
                    (None, InFlight::Retry, Idempotency::Once) => intent = false,
                }
            }
            // Pending results are written before this effect starts, with its intent (and the
            // held pure steps with them).
            self.flush(
                intent.then(|| Row {
                    effect: effect.clone(),
                    result: None,
                }),
                false,
            )?;
            let running = Running::start(&self.running);
            let v = work.await;
            drop(running);
            let row = Row {
                effect,
                result: Some(v.to_string()),
            };
            if self.running.load(Ordering::SeqCst) > 0 {
                // Another effect is running: this result does not wait for it.
                self.flush(Some(row), false)?;
            } else {
                self.pending().results.push(row);
            }
            Ok(v)
        })
    }

    fn commit<'a>(&'a self, commit: &'a StepCommit) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let delta = rows::delta(commit);
            let pending = self.take_pending();
            self.write_commit(
                pending,
                Some((commit.step, commit.instruction.clone(), delta)),
            )
        })
    }

    fn commit_pure<'a>(
        &'a self,
        commit: &'a StepCommit,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            if !self.opened.load(Ordering::Relaxed) {
                return self.commit(commit).await;
            }
            let delta = rows::delta(commit);
            let pending = {
                let mut p = self.pending();
                p.steps
                    .push((commit.step, commit.instruction.clone(), delta));
                let since = *p.since.get_or_insert_with(std::time::Instant::now);
                if p.steps.len() < PURE_STEPS && since.elapsed() < PURE_WAIT {
                    return Ok(());
                }
                std::mem::take(&mut *p)
            };
            self.write_commit(pending, None)
        })
    }

    fn end<'a>(&'a self, end: &'a RunEnd) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let pending = self.take_pending();
            self.transact(pending, |tx, _| {
                tx.execute(
                    "UPDATE runs SET status=?2, steps=MAX(steps, ?3), outcome=?4, pause=?5, updated=?6, lease_pid=NULL, lease_since=NULL WHERE id=?1",
                    params![
                        self.id,
                        end.status.as_str(),
                        end.steps,
                        end.outcome.to_string(),
                        end.pause.as_ref().map(Json::to_string),
                        now()
                    ],
                )?;
                Ok(())
            })
        })
    }

    fn history(&self) -> BoxFuture<'_, Result<History, JournalError>> {
        Box::pin(async move {
            self.flush(None, true)?;
            let commits = self
                .store
                .steps(&self.id)?
                .into_iter()
                .map(|r| r.commit)
                .collect();
            let pause: Option<String> = self
                .store
                .lock()
                .query_row("SELECT pause FROM runs WHERE id=?1", [&self.id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(self.err())?
                .flatten();
            let pause = pause
                .map(|t| serde_json::from_str(&t))
                .transpose()
                .map_err(|e| {
                    corrupt(
                        &self.id,
                        "runs row".into(),
                        format!("its pause record is not JSON ({e})"),
                    )
                })?;
            Ok(History { commits, pause })
        })
    }
}

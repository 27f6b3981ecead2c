//! The SQLite journal: one database file (by default `<out>/.ais/runs.db`) holding every run
//! of an output root.
//!
//! WAL mode; `synchronous=NORMAL` by default, which survives a crash of the process (a
//! committed step is never lost to `kill -9`) but not necessarily a power loss; `FULL`
//! ([`Durability::Full`]) syncs each commit to the disk and survives that too, at the cost of
//! an fsync per step. A step commit is one transaction (its delta row, which also carries the
//! results of the step's effects, and now and then the run's counters); an effect's intent,
//! when it needs one, is one more (`writer`'s module docs say which, and when a result is
//! written).
//!
//! **Where a result lives.** An effect's result is stored in the `steps` row of the step that
//! ran it (its `effects` column) when the step's commit is the transaction that writes it —
//! the common case, which keeps a step's commit to one B-tree. A result written by any other
//! transaction (an effect of a SPAWN sibling ending while another still runs, an effect before
//! the run's end, a `--mark-done`) is an `effects` row, as is every intent. A key has at most
//! one result in all; [`SqliteStore::effects`] merges the two places and refuses a journal that
//! records two results, or a result whose effect contradicts its intent.
//!
//! **How a step's row is written** (the `rows` module): short, its delta without what its
//! columns say and its effects as arrays, so that a leaf page holds several and most commits
//! rewrite that one page only. **When the WAL is copied into the database**: by a thread of its
//! own (the `checkpoint` module), so that no step waits for a checkpoint.
//!
//! **Where a step lives.** Each run has a number (`runs.num`), and its steps are the rows of
//! `steps` whose integer key is `(num << 32) | seq`: the table is SQLite's rowid B-tree, where
//! a commit appends at the right edge (its leaf rewritten, never its siblings rebalanced, as
//! a `WITHOUT ROWID` table does) and a step's row of a few hundred bytes stays in its leaf.
//! Its `run` and `seq` columns say the same again, and a row whose key disagrees with them is
//! refused.
//!
//! The schema is versioned (`meta.schema`, [`SCHEMA`]): a database of another version (0.1.0
//! is unreleased, so no earlier version is upgraded), or one that is not an ais journal, is
//! refused with the command that starts afresh, never read or overwritten. Each run row
//! carries a lease (the pid holding it): a second process opening a run held by a live process
//! is refused ([`JournalError::Held`]); a lease held by a process that no longer exists is
//! taken over.
//! Leases assume one host (a pid means nothing on another machine).

use super::{
    Effect, EffectKey, EffectKind, Idempotency, InFlight, JournalError, Json, RunStart, RunState,
    StepCommit,
};
use crate::sandbox::process_alive as alive;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

mod checkpoint;
mod rows;
mod writer;
pub use writer::SqliteJournal;

/// The schema version this build reads and writes.
pub const SCHEMA: &str = "ais-journal/4";

const SCHEMA_SQL: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, program TEXT NOT NULL, digest TEXT NOT NULL, source TEXT NOT NULL,
  task TEXT NOT NULL, inputs TEXT NOT NULL, meta TEXT NOT NULL, status TEXT NOT NULL,
  steps INTEGER NOT NULL, started INTEGER NOT NULL, updated INTEGER NOT NULL,
  last_step TEXT, outcome TEXT, pause TEXT, lease_pid INTEGER, lease_since INTEGER, num INTEGER);
CREATE TABLE IF NOT EXISTS effects (
  run TEXT NOT NULL, step INTEGER NOT NULL, path TEXT NOT NULL, idx INTEGER NOT NULL,
  kind TEXT NOT NULL, instruction TEXT NOT NULL, name TEXT NOT NULL, idempotency TEXT NOT NULL,
  request TEXT, result TEXT, PRIMARY KEY (run, step, path, idx)) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS runs_num ON runs (num);
CREATE TABLE IF NOT EXISTS steps (
  key INTEGER PRIMARY KEY, run TEXT NOT NULL,
  seq INTEGER NOT NULL CHECK (seq BETWEEN 1 AND 4294967295), step INTEGER NOT NULL,
  instruction TEXT NOT NULL, delta TEXT NOT NULL, effects TEXT);
";

/// The page size of a new journal. A step's commit rewrites the last leaf page of `steps`
/// (and, when it starts a new leaf, its parent and the database header's page; one page of
/// `runs` about once a second), each a WAL frame. A row of the rowid table `steps` stays in
/// its leaf up to about a page (989 bytes on 1 KiB pages), and a step's row with its effects'
/// results is typically 250–450 bytes. Measured against SQLite's own commit of the same row
/// (the journal bench), 1 KiB pages came out ahead of 2 and 4 KiB: more frames per commit,
/// each smaller. (An existing database keeps its page size.)
const PAGE: u32 = 1024;

/// The WAL's length at which it is checkpointed into the database, in bytes (see
/// [`CHECKPOINT`]).
const CHECKPOINT_BYTES: u32 = 4 << 20;

/// The WAL's length, in frames, at which it is checkpointed into the database, by a thread of
/// its own (the `checkpoint` module) — each checkpoint syncs twice, even with
/// `synchronous=NORMAL`: 4 MiB of 1 KiB pages make it about once every two thousand steps.
/// The WAL goes away when the last connection closes.
const CHECKPOINT: u32 = CHECKPOINT_BYTES / PAGE;

/// How hard each commit is pushed to the disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=NORMAL`: survives a process crash (the default).
    #[default]
    Normal,
    /// `synchronous=FULL`: survives a power loss too.
    Full,
}

/// A run as the `runs` table lists it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunRecord {
    /// The run id.
    pub id: String,
    /// The program's name.
    pub program: String,
    /// The program's digest.
    pub digest: String,
    /// Where it stands: running (or crashed), or how it ended.
    pub status: RunState,
    /// Steps completed.
    pub steps: u64,
    /// Started, seconds since the epoch.
    pub started: i64,
    /// Last change, seconds since the epoch.
    pub updated: i64,
    /// The instruction of the last committed step.
    pub last_step: Option<String>,
    /// The task text.
    pub task: String,
    /// The caller's record (CLI: program path, model, output root, step budget).
    pub meta: Json,
    /// The pid holding the run, if any.
    pub lease: Option<u32>,
}

/// A committed step, as `ais runs show` prints it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StepRow {
    /// The commit's sequence number.
    pub seq: u64,
    /// The delta.
    pub commit: StepCommit,
}

/// One recorded effect.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EffectRow {
    /// The effect.
    pub effect: Effect,
    /// Its result (`None`: intent only, in flight when the run stopped).
    pub result: Option<Json>,
}

/// A journal database.
#[derive(Clone)]
pub struct SqliteStore {
    path: PathBuf,
    /// The thread checkpointing the database, started by the first step's commit (`None`
    /// inside: it could not start, and commits checkpoint inline). Declared before `conn`:
    /// it stops before the writing connection closes.
    checkpointer: Arc<OnceLock<Option<checkpoint::Checkpointer>>>,
    conn: Arc<Mutex<Connection>>,
}

fn store_err(path: &Path) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
    move |e| JournalError::Store(format!("{}: {e}", path.display()))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl SqliteStore {
    /// Opens (creating if needed) the journal at `path`.
    pub fn open(path: &Path, durability: Durability) -> Result<SqliteStore, JournalError> {
        super::path::check(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| JournalError::Store(format!("{}: {e}", dir.display())))?;
        }
        let err = store_err(path);
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = Connection::open_with_flags(path, flags).map_err(&err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(&err)?;
        let sync = match durability {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        };
        conn.execute_batch(&format!(
            "PRAGMA page_size={PAGE}; PRAGMA journal_mode=WAL; PRAGMA synchronous={sync};"
        ))
        .map_err(|e| {
            JournalError::Store(format!(
                "{} is not a journal this build can open: {e}",
                path.display()
            ))
        })?;
        // One writer at a time decides what the file is and sets it up: two processes opening
        // a new file at once create its schema once.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&err)?;
        setup(&tx, path)?;
        tx.commit().map_err(&err)?;
        checkpoint::hook(&conn);
        Ok(SqliteStore {
            path: path.to_owned(),
            checkpointer: Arc::new(OnceLock::new()),
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The database's checkpointer, started at the first call.
    fn checkpointer(&self) -> Option<&checkpoint::Checkpointer> {
        self.checkpointer
            .get_or_init(|| {
                checkpoint::Checkpointer::start(&self.path)
                    .map_err(|e| {
                        tracing::warn!("{e}: the journal checkpoints as it commits instead")
                    })
                    .ok()
            })
            .as_ref()
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a new run (held by this process) and returns its journal.
    pub fn begin(&self, start: &RunStart) -> Result<SqliteJournal, JournalError> {
        let err = store_err(&self.path);
        let inputs =
            serde_json::to_string(&start.inputs).map_err(|e| JournalError::Store(e.to_string()))?;
        let t = now();
        let num: i64 = self
            .lock()
            .query_row(
                "INSERT INTO runs (id, program, digest, source, task, inputs, meta, status, steps, started, updated, lease_pid, lease_since, num)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', 0, ?8, ?8, ?9, ?8, (SELECT COALESCE(MAX(num), 0) + 1 FROM runs))
                 RETURNING num",
                params![start.id, start.program, start.digest, start.source, start.task, inputs, start.meta.to_string(), t, std::process::id()],
                |r| r.get(0),
            )
            .map_err(&err)?;
        let keys = StepKeys::of(&start.id, Some(num))?;
        Ok(SqliteJournal::new(
            self.clone(),
            &start.id,
            (keys, 0),
            InFlight::Stop,
            true,
        ))
    }

    /// Takes the lease of run `id` for this process and returns the run, what it started with
    /// and its journal: refused when a live process holds it. The status stays as it was until
    /// the resumed run commits a step (`running`) or ends.
    pub fn resume(
        &self,
        id: &str,
        in_flight: InFlight,
    ) -> Result<(RunRecord, RunStart, SqliteJournal), JournalError> {
        let err = store_err(&self.path);
        let mut conn = self.lock();
        // Immediate: of two resumes reading the lease as free at once, one waits for the other's
        // write and then sees its lease.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&err)?;
        let (record, keys, last_seq) =
            read_run(&tx, id)?.ok_or_else(|| JournalError::NoRun(id.to_owned()))?;
        if let Some(pid) = record.lease
            && pid != std::process::id()
            && alive(pid)
        {
            let since: i64 = tx
                .query_row(
                    "SELECT COALESCE(lease_since, updated) FROM runs WHERE id=?1",
                    [id],
                    |r| r.get(0),
                )
                .map_err(&err)?;
            return Err(JournalError::Held {
                run: id.to_owned(),
                pid,
                since,
            });
        }
        tx.execute(
            "UPDATE runs SET lease_pid=?2, lease_since=?3 WHERE id=?1",
            params![id, std::process::id(), now()],
        )
        .map_err(&err)?;
        let start = read_start(&tx, id)?;
        tx.commit().map_err(&err)?;
        drop(conn);
        Ok((
            record,
            start,
            SqliteJournal::new(self.clone(), id, (keys, last_seq), in_flight, false),
        ))
    }

    /// The run `id`, if the journal has it.
    pub fn run(&self, id: &str) -> Result<Option<RunRecord>, JournalError> {
        Ok(read_run(&self.lock(), id)?.map(|(record, ..)| record))
    }

    /// What run `id` was started with.
    pub fn start(&self, id: &str) -> Result<RunStart, JournalError> {
        read_start(&self.lock(), id)
    }

    /// Every run, newest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>, JournalError> {
        let ids: Vec<String> = {
            let conn = self.lock();
            let mut s = conn
                .prepare("SELECT id FROM runs ORDER BY started DESC, id DESC")
                .map_err(store_err(&self.path))?;
            s.query_map([], |r| r.get(0))
                .and_then(|rows| rows.collect())
                .map_err(store_err(&self.path))?
        };
        ids.iter()
            .filter_map(|id| self.run(id).transpose())
            .collect()
    }

    /// Run `id`'s committed steps, in order.
    pub fn steps(&self, id: &str) -> Result<Vec<StepRow>, JournalError> {
        let rows = step_rows(&self.lock(), &self.path, id, StepText::Delta)?;
        rows.into_iter()
            .map(|(seq, step, instruction, delta)| {
                let commit = rows::read_delta(&delta, step, &instruction).map_err(|m| {
                    corrupt(
                        id,
                        format!("steps row {seq} (step {step}, `{instruction}`)"),
                        m,
                    )
                })?;
                Ok(StepRow { seq, commit })
            })
            .collect()
    }

    /// Run `id`'s recorded effects, in key order: the `effects` rows, and the results its
    /// steps' rows hold (the [module docs](self), "Where a result lives"), merged.
    pub fn effects(&self, id: &str) -> Result<Vec<EffectRow>, JournalError> {
        let err = store_err(&self.path);
        let (rows, embedded) = {
            let conn = self.lock();
            let rows = conn
                .prepare_cached("SELECT step, path, idx, kind, instruction, name, idempotency, request, result FROM effects WHERE run=?1")
                .and_then(|mut s| s.query_map([id], effect_row)?.collect::<Result<Vec<_>, _>>())
                .map_err(&err)?;
            let embedded = step_rows(&conn, &self.path, id, StepText::Results)?;
            (rows, embedded)
        };
        let mut by_key = std::collections::BTreeMap::new();
        for raw in rows {
            let r = parse_effect(id, raw, |key| format!("effects row ({key})"))?;
            by_key.insert(sort_key(&r.effect.key), r);
        }
        for (seq, step, instruction, text) in embedded {
            let row = || format!("steps row {seq} (step {step}, `{instruction}`)");
            let results = rows::read_embedded(&text).map_err(|e| {
                corrupt(
                    id,
                    row(),
                    format!("its effects are not the effects this build writes ({e})"),
                )
            })?;
            for raw in results {
                let EffectRow { effect, result } =
                    parse_effect(id, raw, |key| format!("{} ({key})", row()))?;
                let result = result.unwrap_or(Json::Null);
                match by_key.entry(sort_key(&effect.key)) {
                    std::collections::btree_map::Entry::Vacant(v) => {
                        v.insert(EffectRow {
                            effect,
                            result: Some(result),
                        });
                    }
                    std::collections::btree_map::Entry::Occupied(mut o) => {
                        let prior = o.get_mut();
                        if prior.result.is_some() {
                            return Err(corrupt(
                                id,
                                row(),
                                format!(
                                    "it records a result for {}, which an effects row records already",
                                    effect.key
                                ),
                            ));
                        }
                        let (a, b) = (&prior.effect, &effect);
                        if (a.kind, &a.name, &a.instruction) != (b.kind, &b.name, &b.instruction) {
                            return Err(corrupt(
                                id,
                                row(),
                                format!(
                                    "its result for {} is of {} `{}` of `{}`, and the intent there is of {} `{}` of `{}`",
                                    effect.key,
                                    effect.kind.as_str(),
                                    effect.name,
                                    effect.instruction,
                                    prior.effect.kind.as_str(),
                                    prior.effect.name,
                                    prior.effect.instruction
                                ),
                            ));
                        }
                        prior.result = Some(result);
                    }
                }
            }
        }
        Ok(by_key.into_values().collect())
    }

    /// Removes run `id` (its steps and effects too); false when there was none. A run held by a
    /// live process is refused.
    pub fn remove(&self, id: &str) -> Result<bool, JournalError> {
        let err = store_err(&self.path);
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(&err)?;
        let Some((record, keys, _)) = read_run(&tx, id)? else {
            return Ok(false);
        };
        if let Some(pid) = record
            .lease
            .filter(|&p| p != std::process::id() && alive(p))
        {
            return Err(JournalError::Held {
                run: id.to_owned(),
                pid,
                since: record.updated,
            });
        }
        tx.execute(
            "DELETE FROM steps WHERE key > ?1 AND key < ?2",
            keys.range(),
        )
        .map_err(&err)?;
        tx.execute("DELETE FROM effects WHERE run=?1", [id])
            .map_err(&err)?;
        tx.execute("DELETE FROM runs WHERE id=?1", [id])
            .map_err(&err)?;
        tx.commit().map_err(&err)?;
        Ok(true)
    }

    /// Removes every run not held by a live process whose last change is older than `secs`
    /// seconds; returns the ids removed.
    pub fn gc(&self, secs: u64) -> Result<Vec<String>, JournalError> {
        let cutoff = now() - secs as i64;
        let old: Vec<String> = self
            .runs()?
            .into_iter()
            .filter(|r| r.updated <= cutoff && r.lease.is_none_or(|p| !alive(p)))
            .map(|r| r.id)
            .collect();
        for id in &old {
            self.remove(id)?;
        }
        Ok(old)
    }
}

/// Checks that the database `tx` opened is a journal of this build's schema, creating one in
/// an empty database; anything else is refused with the command that starts afresh.
fn setup(tx: &rusqlite::Transaction<'_>, path: &Path) -> Result<(), JournalError> {
    let err = store_err(path);
    let tables: Vec<String> = tx
        .prepare("SELECT name FROM sqlite_master WHERE type='table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(&err)?;
    if tables.is_empty() {
        tx.execute_batch(SCHEMA_SQL).map_err(&err)?;
        tx.execute("INSERT INTO meta VALUES ('schema', ?1)", [SCHEMA])
            .map_err(&err)?;
        return Ok(());
    }
    if !tables.iter().any(|t| t == "meta") {
        return Err(JournalError::Store(format!(
            "{} is an SQLite database but not an ais journal (it has tables {}); name another file with `--journal PATH`",
            path.display(),
            tables.join(", ")
        )));
    }
    let version: Option<String> = tx
        .query_row("SELECT value FROM meta WHERE key='schema'", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(&err)?;
    let what = match version.as_deref() {
        Some(SCHEMA) => return Ok(()),
        Some(v) => format!("has journal schema `{v}`"),
        None => "has a `meta` table but no schema version".to_owned(),
    };
    Err(JournalError::Store(format!(
        "the journal {shown} {what}, and this build reads `{SCHEMA}` only; start afresh with `rm {shown}` (its runs are lost; use the ais that wrote it to finish them first), or keep it and name another journal with `--journal PATH`",
        shown = path.display()
    )))
}

/// Where one run's rows lie in `steps`: keys `(num << 32) | seq`, `seq` from 1.
#[derive(Clone, Copy, Debug)]
pub(super) struct StepKeys {
    /// `num << 32`: the key of sequence number 0, which no row has.
    base: i64,
}

impl StepKeys {
    /// The keys of run `id`, numbered `num` (`None`, or a number no key can hold: a corrupt
    /// run row).
    fn of(id: &str, num: Option<i64>) -> Result<StepKeys, JournalError> {
        match num.filter(|n| (1..=i64::from(i32::MAX)).contains(n)) {
            Some(n) => Ok(StepKeys { base: n << 32 }),
            None => Err(corrupt(
                id,
                "runs row".into(),
                format!("its number is {num:?}, not one from 1 to 2^31 - 1"),
            )),
        }
    }

    /// The key of sequence number `seq`.
    pub(super) fn key(&self, seq: u64) -> i64 {
        self.base + seq as i64
    }

    /// The sequence number of `key`, one of this run's keys.
    fn seq(&self, key: i64) -> u64 {
        (key - self.base) as u64
    }

    /// The keys as SQL parameters: greater than the first, less than the second.
    pub(super) fn range(&self) -> [i64; 2] {
        [self.base, self.base + (1 << 32)]
    }

    /// Checks that a row read by its key, of run `id`, says so: its `run` column is `id` and
    /// its `seq` column is the key's sequence number.
    fn check(
        &self,
        id: &str,
        (key, run, seq): (i64, &str, u64),
        row: impl Fn() -> String,
    ) -> Result<(), JournalError> {
        if run != id {
            return Err(corrupt(
                id,
                row(),
                format!("its key {key} is this run's, but it says it is run {run}'s"),
            ));
        }
        if u64::try_from(key - self.base).ok() != Some(seq) {
            return Err(corrupt(
                id,
                row(),
                format!("its key {key} is not sequence number {seq} of this run"),
            ));
        }
        Ok(())
    }
}

/// Which text of a `steps` row [`step_rows`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StepText {
    /// The delta, of every row.
    Delta,
    /// The effects' results, of the rows that hold some.
    Results,
}

/// Run `id`'s `steps` rows in order, each checked against its key: (seq, step, instruction,
/// text).
fn step_rows(
    conn: &Connection,
    path: &Path,
    id: &str,
    text: StepText,
) -> Result<Vec<(u64, u64, String, String)>, JournalError> {
    let keys = step_keys(conn, id)?;
    let sql = match text {
        StepText::Delta => {
            "SELECT key, run, seq, step, instruction, delta FROM steps WHERE key > ?1 AND key < ?2 ORDER BY key"
        }
        StepText::Results => {
            "SELECT key, run, seq, step, instruction, effects FROM steps WHERE key > ?1 AND key < ?2 AND effects IS NOT NULL ORDER BY key"
        }
    };
    let raw: Vec<(i64, String, u64, u64, String, String)> = conn
        .prepare_cached(sql)
        .and_then(|mut s| s.query_map(keys.range(), |r| r.try_into())?.collect())
        .map_err(store_err(path))?;
    raw.into_iter()
        .map(|(key, run, seq, step, instruction, text)| {
            keys.check(id, (key, &run, seq), || {
                format!("steps row {seq} (step {step}, `{instruction}`)")
            })?;
            Ok((seq, step, instruction, text))
        })
        .collect()
}

/// The step keys of run `id`, from its row.
fn step_keys(conn: &Connection, id: &str) -> Result<StepKeys, JournalError> {
    let num: Option<Option<i64>> = conn
        .query_row("SELECT num FROM runs WHERE id=?1", [id], |r| r.get(0))
        .optional()
        .map_err(|e| corrupt(id, "runs row".into(), e.to_string()))?;
    match num {
        Some(num) => StepKeys::of(id, num),
        None => Err(JournalError::NoRun(id.to_owned())),
    }
}

/// An effect key in the order `effects` lists them (SQLite compares text byte by byte, as
/// `String` does).
fn sort_key(key: &EffectKey) -> (u64, String, u32) {
    (key.step, key.path.clone(), key.index)
}

type RawEffect = (
    u64,
    String,
    u32,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

fn effect_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawEffect> {
    r.try_into()
}

/// An effect as a row records it (`place` names that row, given the effect's key).
fn parse_effect(
    run: &str,
    r: RawEffect,
    place: impl Fn(&EffectKey) -> String,
) -> Result<EffectRow, JournalError> {
    let (step, path, index, kind, instruction, name, idem, request, result) = r;
    let key = EffectKey { step, path, index };
    let row = || place(&key);
    let kind = EffectKind::parse(&kind).ok_or_else(|| {
        corrupt(
            run,
            row(),
            format!("its kind `{kind}` is none this build knows"),
        )
    })?;
    let idempotency = Idempotency::parse(&idem).ok_or_else(|| {
        corrupt(
            run,
            row(),
            format!("its idempotency `{idem}` is none this build knows"),
        )
    })?;
    let result = result
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| corrupt(run, row(), format!("its result is not JSON ({e})")))?;
    Ok(EffectRow {
        effect: Effect {
            key,
            kind,
            instruction,
            name,
            idempotency,
            request,
        },
        result,
    })
}

fn corrupt(run: &str, row: String, message: String) -> JournalError {
    JournalError::Corrupt {
        run: run.to_owned(),
        row,
        message,
    }
}

/// The run row of `id` as a record, with where its steps lie and the sequence number of the
/// last (0: none yet).
fn read_run(
    conn: &Connection,
    id: &str,
) -> Result<Option<(RunRecord, StepKeys, u64)>, JournalError> {
    type RunRow = (
        String,
        String,
        String,
        String,
        i64,
        i64,
        i64,
        Option<String>,
        String,
        String,
        Option<i64>,
        Option<i64>,
    );
    let row: Option<RunRow> = conn
        .query_row(
            "SELECT id, program, digest, status, steps, started, updated, last_step, task, meta, lease_pid, num FROM runs WHERE id=?1",
            [id],
            |r| r.try_into(),
        )
        .optional()
        .map_err(|e| corrupt(id, "runs row".into(), e.to_string()))?;
    let Some((
        id,
        program,
        digest,
        status,
        steps,
        started,
        updated,
        last_step,
        task,
        meta,
        lease,
        num,
    )) = row
    else {
        return Ok(None);
    };
    let keys = StepKeys::of(&id, num)?;
    let row = || "runs row".to_owned();
    let Some(status) = RunState::parse(&status) else {
        return Err(corrupt(
            &id,
            row(),
            format!("its status `{status}` is none this build knows"),
        ));
    };
    let meta = serde_json::from_str(&meta)
        .map_err(|e| corrupt(&id, row(), format!("its meta is not JSON ({e})")))?;
    // A commit updates the run's row about once a second: its last steps row is what it did.
    let last: Option<(i64, i64, String)> = conn
        .prepare_cached(
            "SELECT key, step, instruction FROM steps WHERE key > ?1 AND key < ?2 ORDER BY key DESC LIMIT 1",
        )
        .and_then(|mut s| s.query_row(keys.range(), |r| r.try_into()).optional())
        .map_err(|e| corrupt(&id, "steps".into(), e.to_string()))?;
    let (steps, last_step, last_seq) = match last {
        Some((key, n, instruction)) => (n.max(steps), Some(instruction), keys.seq(key)),
        None => (steps, last_step, 0),
    };
    let record = RunRecord {
        steps: u64::try_from(steps)
            .map_err(|_| corrupt(&id, row(), format!("it counts {steps} steps")))?,
        id,
        program,
        digest,
        status,
        started,
        updated,
        last_step,
        task,
        meta,
        lease: lease.and_then(|p| u32::try_from(p).ok()),
    };
    Ok(Some((record, keys, last_seq)))
}

fn read_start(conn: &Connection, id: &str) -> Result<RunStart, JournalError> {
    let (program, digest, source, task, inputs, meta): (
        String,
        String,
        String,
        String,
        String,
        String,
    ) = conn
        .query_row(
            "SELECT program, digest, source, task, inputs, meta FROM runs WHERE id=?1",
            [id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .optional()
        .map_err(|e| corrupt(id, "runs row".into(), e.to_string()))?
        .ok_or_else(|| JournalError::NoRun(id.to_owned()))?;
    let bad = |what: &str, e: serde_json::Error| {
        corrupt(
            id,
            "runs row".into(),
            format!("its {what} is not JSON ({e})"),
        )
    };
    Ok(RunStart {
        id: id.to_owned(),
        program,
        digest,
        source,
        task,
        inputs: serde_json::from_str(&inputs).map_err(|e| bad("inputs", e))?,
        meta: serde_json::from_str(&meta).map_err(|e| bad("meta", e))?,
    })
}

/// The outcome JSON a finished run recorded (for `ais replay` and `ais runs show`).
pub fn recorded_outcome(store: &SqliteStore, id: &str) -> Result<Option<Json>, JournalError> {
    let text: Option<String> = store
        .lock()
        .query_row("SELECT outcome FROM runs WHERE id=?1", [id], |r| r.get(0))
        .optional()
        .map_err(store_err(&store.path))?
        .flatten();
    text.map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| {
            corrupt(
                id,
                "runs row".into(),
                format!("its outcome is not JSON ({e})"),
            )
        })
}

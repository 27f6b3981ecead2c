//! The journal: the one seam every step boundary and every effect of a run passes through.
//!
//! The machine never talks to a database. It talks to a [`Journal`], one per run, at exactly
//! two kinds of point:
//!
//! - **Around each effect** — a slot's exchanges with the model, a tool call, an artifact
//!   write, an MCP call — through [`Journal::effect`], closure-style like Restate's
//!   `ctx.run(name, || …)`: the machine hands over a deterministic [`EffectKey`], the
//!   [`Effect`]'s kind and [`Idempotency`], and the (not yet started) future that performs it.
//!   The journal either answers with the result it recorded (a resume or a replay: the effect
//!   does not run) or runs the future and records intent and result.
//! - **At each step boundary** — through [`Journal::commit`], once per completed step, before
//!   the next step starts: a [`StepCommit`] holds what the step *changed* (the carries it
//!   wrote, the cursor, LOOP counters, new deviations, usage), never the whole carry file.
//!
//! plus [`Journal::end`] when the run stops (finished, faulted, paused for a human, or
//! interrupted at an effect that may not be repeated) and [`Journal::history`] to rebuild a
//! run that did not finish.
//!
//! # The contract every backend meets
//!
//! 1. **A recorded effect never runs again.** `effect` with a key whose result is recorded
//!    returns that result and drops the future unpolled.
//! 2. **Intent before, result after.** A backend that can crash between the two (ours) records
//!    the intent durably before polling the future. On a later `effect` for a key with an
//!    intent and no result (the effect was in flight at a crash) it reruns the effect when its
//!    idempotency is [`Idempotency::Retry`] — a read, a model exchange, the work of a CODE step
//!    (§4.3: a deterministic function of its operands), whatever the user chose —, or when the
//!    user chose [`InFlight::Retry`]; records a `null` result when the user chose
//!    [`InFlight::MarkDone`] (for an effect that may have changed the world: `--retry` and
//!    `--mark-done` decide only those); and otherwise fails with
//!    [`JournalError::InFlight`], which stops the run with status `interrupted` — never a
//!    silent second run of an e-mail. An intent's only use is that decision, so a backend may
//!    skip it for a [`Idempotency::Retry`] tool or MCP call (a read, or a tool declared
//!    idempotent): with no row, the call simply runs again — what its intent would have said.
//!    A result may wait for the backend's next transaction as long as no other effect starts
//!    meanwhile (a crash before it is a crash during the effect); the SQLite journal does that
//!    to write a step in one transaction.
//! 3. **Keys are deterministic.** The machine derives a key from the run's step number, the
//!    SPAWN sibling / CALL path and the effect's index within the step, so re-executing the
//!    same program over the same journal asks for the same keys in the same order *per path*.
//!    Keys of different paths may interleave (SPAWN siblings run concurrently); a backend that
//!    needs a serial context (Restate: restatedev/sdk-rust #89) serializes per path, or as a
//!    whole.
//! 4. **A commit is atomic** and ordered: one transaction per step, applied in order by
//!    `fold`. A backend may also keep no commits ([`Journal::history`] empty) and rely on
//!    effect replay alone — re-executing from the first step with every effect answered from
//!    the journal reaches the same state, because guards, CODE bodies and write-back are
//!    deterministic (this is how a Restate backend resumes).
//! 5. **A pure step may wait.** The machine hands a *pure* step — one that ran no effect,
//!    took no human answer and is no SPAWN or CALL: a CODE body, a code-decided ROUTE, a LOOP
//!    whose work is a body or nothing, each a deterministic function of journaled values
//!    (spec §4.3) — to [`Journal::commit_pure`]. A backend may hold it and write it, in order
//!    and atomically with them, with its next transaction: the next effect's intent, the next
//!    other step's commit, the run's end, or a bound of its own. A crash before that loses
//!    only pure steps, which the resume computes again from the last durable commit, exactly
//!    as they were, repeating no effect and no model exchange. Every other step is handed to
//!    [`Journal::commit`] and is durable before the next step starts. (The default
//!    `commit_pure` is `commit`.)
//! 6. **Fail closed.** A row that is malformed, belongs to another run or program, or
//!    contradicts the rest (a key recorded with another kind or name) is a
//!    [`JournalError::Corrupt`] naming the run and the row; never a guessed state.
//!
//! The in-memory journal ([`memory::MemoryJournal`]) serves tests and benches; the SQLite one
//! ([`sqlite::SqliteStore`]) is what `ais run` uses by default.
//!
//! A journal records; it does not decide where work runs. Where a SPAWN's siblings and a
//! CALL's callee run — in this process or elsewhere — is the [`Placement`](crate::Placement)'s,
//! given to the runtime on its own.

mod fits;
pub(crate) use fits::fits;
pub(crate) mod memory;
#[cfg(feature = "sqlite")]
pub(crate) mod path;
pub(crate) mod replay;
pub(crate) mod request;
pub(crate) mod seal;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use memory::MemoryJournal;
pub use replay::{Difference, Miss, Recording, Replay, ReplayError, ToolReplay};
pub use seal::{Seal, SealKey, seal_key_dir};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what the object-safe [`Journal`] methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The JSON a journal stores for an effect's result.
pub type Json = serde_json::Value;

/// Where an effect happens, deterministically: the same program over the same journal asks for
/// the same keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EffectKey {
    /// The run's step number (1 for the first step) — for a SPAWN sibling, its SPAWN's step.
    pub step: u64,
    /// The path below the run: empty for the run itself, `s3` for sibling 3 of the step's
    /// SPAWN, `c7` for the sub-run of the CALL at step 7 (whose own step number is then
    /// `step`), `/`-joined when nested (`c7/s2`: sibling 2 of the SPAWN at the sub-run's step
    /// `step`).
    pub path: String,
    /// The effect's index within the step and path, from 0.
    pub index: u32,
}

impl fmt::Display for EffectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "step {} effect {}", self.step, self.index)
        } else {
            write!(
                f,
                "step {} path {} effect {}",
                self.step, self.path, self.index
            )
        }
    }
}

ais_core::spelled! {
    /// What kind of effect it is, stored as its spelling (`slot`, `tool`, …).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum EffectKind {
        /// One exchange of a slot with its model (a slot's tool calls are effects of their
        /// own).
        Slot => "slot",
        /// One exchange of a model-owned ROUTE's choice.
        Choice => "choice",
        /// A tool call (a `command`, a Python body, a native or built-in tool).
        Tool => "tool",
        /// An artifact written under the output root.
        Artifact => "artifact",
        /// A call to an MCP server's tool.
        Mcp => "mcp",
    }
    serde
}

ais_core::spelled! {
    /// Whether an effect in flight at a crash may simply run again, stored as its spelling
    /// (`retry`, `once`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Idempotency {
        /// Running it twice has the effect of running it once (an atomic artifact write of the
        /// same content, a read, a tool declared `idempotent`, a model exchange).
        Retry => "retry",
        /// It may have happened once already (an e-mail sent, a row appended): rerun it only
        /// when the user says so.
        Once => "once",
    }
    serde
}

/// One effect as the machine hands it to [`Journal::effect`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// Where it happens.
    pub key: EffectKey,
    /// What it is.
    pub kind: EffectKind,
    /// The instruction it belongs to.
    pub instruction: String,
    /// The tool's name, or the instruction's for a slot.
    pub name: String,
    /// Whether it may run again after a crash.
    pub idempotency: Idempotency,
    /// A digest of what was asked (a slot's request, a tool's arguments), when there is one:
    /// a hash of the whole and of each part (`request`), so a replay can say which changed.
    pub request: Option<String>,
}

/// What the user decided about an effect that was in flight at a crash
/// (`ais resume --retry` / `--mark-done`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InFlight {
    /// Stop with [`JournalError::InFlight`] unless the effect is idempotent (the default).
    Stop,
    /// Run it again.
    Retry,
    /// Treat it as done with a `null` result and go on.
    MarkDone,
}

/// What one completed step changed: the delta a backend commits in one transaction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepCommit {
    /// The run's step count once this step completed.
    pub step: u64,
    /// The instruction that ran.
    pub instruction: String,
    /// The index of the step the run continues at.
    pub cursor: usize,
    /// The carries the step wrote, with their new values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<(String, Json)>,
    /// Carries newly supplied (a human's answer applied on resume), with their values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supplied: Vec<(String, Json)>,
    /// LOOP iteration counts of counter-less loops that changed: (step index, count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<(usize, i64)>,
    /// Deviations recorded during the step: (subject, intended, substituted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<(String, String, String)>,
    /// The unrouted failures after the step, when they changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrouted: Option<Json>,
    /// The pending structural fan-out branches after the step, when they changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branches: Option<Vec<(usize, usize)>>,
    /// The run's usage after the step: (prompt, completion, cached tokens, slots); zero when
    /// left out.
    #[serde(default)]
    pub usage: (u64, u64, u64, u64),
    /// The run's cost and failovers after the step; none when left out.
    #[serde(default, skip_serializing_if = "Spend::is_none")]
    pub spend: Spend,
    /// The steps run under the run's steps so far (SPAWN siblings, a CALLed program's
    /// steps), counted against the step budget; zero when left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sub_steps: u64,
    /// When the step started (ms since the Unix epoch) and how long it took (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<(u64, u64)>,
}

/// What a run spent beyond its tokens, as its commits record it: the cost of its priced
/// slots, the slots without a price, the failovers — so a resumed run's totals include the
/// steps before the resume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// The cost in US dollars of the slots whose models have a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Slots that asked a model without a price.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_slots: u64,
    /// Moves to the next model of a fallback chain.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failovers: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Spend {
    /// True when nothing was spent (what a commit leaves out).
    pub fn is_none(&self) -> bool {
        *self == Spend::default()
    }
}

/// What a run's usage records beyond its tokens, as a commit keeps it.
pub(crate) fn spend_of(u: &crate::RunUsage) -> Spend {
    Spend {
        cost: u.cost,
        unpriced_slots: u.unpriced_slots,
        failovers: u.failovers,
    }
}

/// A run's usage from what its commits (or pause record) kept: the tokens and slots, the cost
/// and failovers.
pub fn usage_of((p, c, k, s): (u64, u64, u64, u64), spend: Spend) -> crate::RunUsage {
    crate::RunUsage {
        prompt_tokens: p,
        completion_tokens: c,
        cached_tokens: k,
        slots: s,
        failovers: spend.failovers,
        cost: spend.cost,
        unpriced_slots: spend.unpriced_slots,
    }
}

/// How a run ended, as [`Journal::end`] records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEnd {
    /// How it ended.
    pub status: crate::Status,
    /// The step count.
    pub steps: u64,
    /// The outcome as the run returned it (its JSON form).
    pub outcome: Json,
    /// For a pause: the whole state the resume needs (the machine's pause record).
    pub pause: Option<Json>,
}

/// Where a run stands, as a journal lists it: still running (or killed while it ran), or
/// ended (or paused) with a [`Status`](crate::Status). Spelled `running` or as the status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunState {
    /// Running, or killed while it ran: `ais resume` continues it.
    Running,
    /// Ended, or paused for a human, with this status.
    Ended(crate::Status),
}

impl RunState {
    /// The spelling: `running`, or the status's.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Ended(s) => s.as_str(),
        }
    }

    /// The state a spelling names; `None` for any other text.
    pub fn parse(text: &str) -> Option<RunState> {
        match text {
            "running" => Some(RunState::Running),
            other => crate::Status::parse(other).map(RunState::Ended),
        }
    }
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

ais_core::spelled!(@serialize RunState);

/// Read from its spelling.
impl<'de> Deserialize<'de> for RunState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        RunState::parse(&text).ok_or_else(|| {
            <D::Error as serde::de::Error>::invalid_value(
                serde::de::Unexpected::Str(&text),
                &"`running` or a run status",
            )
        })
    }
}

/// What a run was started with, as a backend records it at the start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunStart {
    /// The run's id.
    pub id: String,
    /// The program's name.
    pub program: String,
    /// The SHA-256 of the program's canonical AG-IR.
    pub digest: String,
    /// The program's canonical AG-IR, to say what changed when a resume finds another.
    pub source: String,
    /// The task text.
    pub task: String,
    /// The invocation's input values, by carry name.
    pub inputs: Vec<(String, Json)>,
    /// What the caller needs to continue the run (for the CLI: the program's path, the model
    /// spec, the output root, the step budget).
    pub meta: Json,
}

/// What a journal holds of a run that did not finish.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// The step commits, in order.
    pub commits: Vec<StepCommit>,
    /// The pause record, when the run paused for a human.
    pub pause: Option<Json>,
}

/// Why a journal could not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    /// An effect that may not be repeated was in flight when the run stopped.
    #[error(
        "run {run}: `{}` ({} `{}`, {}) was in flight when the run stopped and may have run once; retry it with `ais resume {run} --retry`, or mark it done and go on with `ais resume {run} --mark-done`",
        effect.instruction, effect.kind.as_str(), effect.name, effect.key
    )]
    InFlight {
        /// The run.
        run: String,
        /// The effect.
        effect: Box<Effect>,
    },
    /// A row that is malformed, foreign or contradicts the rest.
    #[error("the journal of run {run} is not usable at {row}: {message}")]
    Corrupt {
        /// The run.
        run: String,
        /// The row (table and key).
        row: String,
        /// What is wrong with it.
        message: String,
    },
    /// Another process holds the run.
    #[error(
        "run {run} is held by process {pid} (since {since}); wait for it to finish, or stop it"
    )]
    Held {
        /// The run.
        run: String,
        /// The holder's process id.
        pid: u32,
        /// When it took the lease (seconds since the epoch).
        since: i64,
    },
    /// A replay found an effect the recording cannot answer: the recorded run never asked for
    /// it (and, for a tool replayed from the journal, it may not run live).
    #[error(
        "replay of run {run}: `{}` ({} `{}`, {}) {message}",
        effect.instruction, effect.kind.as_str(), effect.name, effect.key
    )]
    Miss {
        /// The recorded run.
        run: String,
        /// The effect the replay asked for.
        effect: Box<Effect>,
        /// Why the recording has no answer for it.
        message: String,
    },
    /// No such run.
    #[error("there is no run `{0}` in this journal; list the runs with `ais runs`")]
    NoRun(String),
    /// The store failed (I/O, SQLite).
    #[error("the journal failed: {0}")]
    Store(String),
}

/// One run's journal. See the [module docs](self) for the contract.
pub trait Journal: Send + Sync {
    /// The run's id.
    fn run_id(&self) -> &str;

    /// Answers `effect` from the journal, or runs `work` and records intent and result.
    fn effect<'a>(
        &'a self,
        effect: Effect,
        work: BoxFuture<'a, Json>,
    ) -> BoxFuture<'a, Result<Json, JournalError>>;

    /// Commits a completed step, atomically, before the next starts.
    fn commit<'a>(&'a self, commit: &'a StepCommit) -> BoxFuture<'a, Result<(), JournalError>>;

    /// Commits a completed *pure* step (contract 5 of the [module docs](self)): the backend
    /// may hold it until its next transaction, writing it in order with that one.
    fn commit_pure<'a>(
        &'a self,
        commit: &'a StepCommit,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        self.commit(commit)
    }

    /// Records how the run ended (or paused), and releases the run.
    fn end<'a>(&'a self, end: &'a RunEnd) -> BoxFuture<'a, Result<(), JournalError>>;

    /// The commits of the run so far, and its pause record when it is paused (a commit after
    /// a pause means the pause was answered: the record is gone).
    fn history(&self) -> BoxFuture<'_, Result<History, JournalError>>;
}

/// A run's state folded from its commits — and, with where it waits, the state a paused run
/// saves (its pause record, or the handle file of a run with no journal).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Folded {
    /// The step count.
    pub steps: u64,
    /// Where the run continues (`None`: no step completed, start at the first).
    pub cursor: Option<usize>,
    /// Each written carry's last value and the step that wrote it, in first-written order.
    pub written: indexmap::IndexMap<String, (Json, u64)>,
    /// Carries supplied on resume, with their values.
    pub supplied: Vec<(String, Json)>,
    /// Counter-less LOOP counts.
    pub loops: Vec<(usize, i64)>,
    /// The deviations recorded.
    pub deviations: Vec<(String, String, String)>,
    /// The unrouted failures, as last committed.
    pub unrouted: Option<Json>,
    /// The pending branches, as last committed.
    pub branches: Option<Vec<(usize, usize)>>,
    /// The usage after the last step.
    pub usage: (u64, u64, u64, u64),
    /// The cost and failovers after the last step.
    #[serde(default)]
    pub spend: Spend,
    /// The steps run under the run's steps (SPAWN siblings, CALLed steps) after the last step.
    #[serde(default)]
    pub sub_steps: u64,
}

/// Folds `commits` in order; a commit whose step count goes backwards contradicts the rest.
pub(crate) fn fold(run: &str, commits: &[StepCommit]) -> Result<Folded, JournalError> {
    let mut f = Folded::default();
    for (k, c) in commits.iter().enumerate() {
        if c.step < f.steps {
            return Err(JournalError::Corrupt {
                run: run.to_owned(),
                row: format!("commit {} (`{}`)", k + 1, c.instruction),
                message: format!(
                    "it records step {} after step {} was committed",
                    c.step, f.steps
                ),
            });
        }
        f.steps = c.step;
        f.cursor = Some(c.cursor);
        for (name, v) in &c.written {
            f.written.insert(name.clone(), (v.clone(), c.step));
        }
        f.supplied.extend(c.supplied.iter().cloned());
        for &(at, n) in &c.loops {
            match f.loops.iter_mut().find(|(a, _)| *a == at) {
                Some(slot) => slot.1 = n,
                None => f.loops.push((at, n)),
            }
        }
        f.deviations.extend(c.deviations.iter().cloned());
        if c.unrouted.is_some() {
            f.unrouted.clone_from(&c.unrouted);
        }
        if c.branches.is_some() {
            f.branches.clone_from(&c.branches);
        }
        f.usage = c.usage;
        f.spend = c.spend;
        f.sub_steps = c.sub_steps;
    }
    Ok(f)
}

/// A short hex SHA-256 of `bytes` (16 bytes), for request hashes.
pub(crate) fn hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let d = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(32);
    for b in &d[..16] {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// A fresh run id: the start time in seconds (hex) and 4 random-ish hex digits.
pub fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mix =
        (now.subsec_nanos() as u64) ^ ((std::process::id() as u64) << 16) ^ (now.as_secs() << 7);
    let short = hash(&mix.to_le_bytes());
    format!("{:x}-{}", now.as_secs(), &short[..6])
}

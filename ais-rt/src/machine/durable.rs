//! The machine's side of the journal seam ([`crate::journal`]): the step commit at each step
//! boundary, the wrapper every effect goes through, and the rebuild of a run from its journal.
//!
//! With no journal none of this costs anything but a `None` test: the hot loop stays as it is.

use super::carries::CarryFile;
use super::plan::{Prepared, Step};
use super::{Run, Settings, Stop, Unrouted};
use crate::journal::{
    Effect, EffectKey, EffectKind, Idempotency, Journal, JournalError, Json, RunEnd, RunStart,
    StepCommit, fold,
};
use crate::model::Usage;
use crate::model::slot::{SlotError, SlotOutcome};
use crate::report::{Fault, FaultKind, RunOutcome, RunUsage, Status};
use crate::tools::{ToolError, ToolErrorKind};
use ais_core::{Deviation, Value};
use std::future::Future;
use std::sync::Arc;

/// A run's journal and what it changed since the last commit.
pub(crate) struct Durable {
    pub journal: Arc<dyn Journal>,
    /// The path of this run below the journaled run (empty for the run itself).
    pub path: Arc<str>,
    /// The next effect index within the current step.
    pub seq: u32,
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
    /// The durable state of a fresh run on `journal`.
    pub(crate) fn new(journal: Arc<dyn Journal>, path: Arc<str>, commits: bool) -> Box<Durable> {
        Box::new(Durable {
            journal,
            path,
            seq: 0,
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

/// `base/seg`, or `seg` below the root.
pub(crate) fn sub_path(base: &str, seg: &str) -> Arc<str> {
    if base.is_empty() {
        Arc::from(seg)
    } else {
        Arc::from(format!("{base}/{seg}"))
    }
}

/// Where the effects of one step (of one path) draw their keys from.
pub(crate) struct Scope {
    pub journal: Arc<dyn Journal>,
    pub step: u64,
    pub path: Arc<str>,
    pub seq: u32,
}

/// What an effect is, short of its key.
pub(crate) struct Spec<'a> {
    pub kind: EffectKind,
    pub instruction: &'a str,
    pub name: &'a str,
    pub idempotency: Idempotency,
    pub request: Option<String>,
}

/// A result the journal can keep: encoded to JSON when it runs, decoded when it is replayed.
pub(crate) trait Record: Sized {
    fn encode(&self) -> Json;
    fn decode(json: Json) -> Result<Self, String>;
}

/// Runs `work` as an effect: with no scope, directly; else through the journal, which answers
/// it from its record or runs it and records it. The live result is returned as it is (a slot's
/// exchanges stay in its trace); a replayed one is decoded.
pub(crate) async fn guard<T, F>(
    scope: Option<&mut Scope>,
    spec: Spec<'_>,
    work: F,
) -> Result<T, Stop>
where
    T: Record + Send,
    F: Future<Output = T> + Send,
{
    let Some(scope) = scope else {
        return Ok(work.await);
    };
    let key = EffectKey {
        step: scope.step,
        path: scope.path.to_string(),
        index: scope.seq,
    };
    scope.seq += 1;
    let effect = Effect {
        key,
        kind: spec.kind,
        instruction: spec.instruction.to_owned(),
        name: spec.name.to_owned(),
        idempotency: spec.idempotency,
        request: spec.request,
    };
    let mut live: Option<T> = None;
    let slot = &mut live;
    let fut = Box::pin(async move {
        let t = work.await;
        let json = t.encode();
        *slot = Some(t);
        json
    });
    // Named only when a replayed result does not decode (a root path's key allocates nothing).
    let key = effect.key.clone();
    let recorded = scope
        .journal
        .effect(effect, fut)
        .await
        .map_err(journal_stop)?;
    match live {
        Some(t) => Ok(t),
        None => T::decode(recorded).map_err(|message| {
            journal_stop(JournalError::Corrupt {
                run: scope.journal.run_id().to_owned(),
                row: format!("effect ({key})"),
                message,
            })
        }),
    }
}

/// A journal error as the stop it causes.
pub(crate) fn journal_stop(e: JournalError) -> Stop {
    let kind = match e {
        JournalError::InFlight { .. } => FaultKind::EffectInFlight,
        _ => FaultKind::Journal,
    };
    Stop::Fault(kind, e.to_string())
}

/// What the journal must know of a called tool beyond its name.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ToolClass {
    /// Declared idempotent.
    pub idempotent: bool,
    /// A read ([`super::plan::ToolStep::read`]).
    pub read: bool,
    /// Bound to an MCP server's tool.
    pub mcp: bool,
}

/// How a tool call is journaled: an MCP call is kind `mcp`, a `write_file` an artifact, any
/// other a tool. A read (a read-only built-in, a native `SENSE` tool, an MCP tool its server
/// marks read-only), an artifact write and a tool declared idempotent may run again; any other
/// call — an MCP call included — runs at most once unless the user says so.
pub(crate) fn tool_spec<'a>(
    instruction: &'a str,
    name: &'a str,
    class: ToolClass,
    args: &crate::tools::ToolArgs,
) -> Spec<'a> {
    let retry = class.read || class.idempotent;
    let (kind, idempotency) = match name {
        _ if class.mcp => (
            EffectKind::Mcp,
            if retry {
                Idempotency::Retry
            } else {
                Idempotency::Once
            },
        ),
        "write_file" => (EffectKind::Artifact, Idempotency::Retry),
        "read_file" | "list_dir" | "glob_files" | "grep" => (EffectKind::Tool, Idempotency::Retry),
        _ if retry => (EffectKind::Tool, Idempotency::Retry),
        _ => (EffectKind::Tool, Idempotency::Once),
    };
    let request: serde_json::Map<String, Json> = args
        .params
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
    Spec {
        kind,
        instruction,
        name,
        idempotency,
        request: Some(crate::journal::request::tool(&request)),
    }
}

/// How a slot (or a model-owned ROUTE's choice) is journaled: a model exchange may be asked
/// again (it costs tokens, not an effect in the world), keyed by a hash of its request.
pub(crate) fn slot_spec<'a>(
    kind: EffectKind,
    step: &'a Step,
    request: &crate::model::SlotRequest,
) -> Spec<'a> {
    Spec {
        kind,
        instruction: &step.id,
        name: &step.id,
        idempotency: Idempotency::Retry,
        request: Some(crate::journal::request::slot(request)),
    }
}

fn kind_name(k: ToolErrorKind) -> &'static str {
    match k {
        ToolErrorKind::Failed => "failed",
        ToolErrorKind::Timeout => "timeout",
        ToolErrorKind::OutputLimit => "output_limit",
        ToolErrorKind::PathEscape => "path_escape",
        ToolErrorKind::BadArguments => "bad_arguments",
        ToolErrorKind::Io => "io",
        ToolErrorKind::NotFound => "not_found",
    }
}

impl Record for Result<Value, ToolError> {
    fn encode(&self) -> Json {
        match self {
            Ok(v) => serde_json::json!({"ok": v.to_json()}),
            Err(e) => {
                serde_json::json!({"err": {"kind": kind_name(e.kind), "message": e.message, "output": e.output}})
            }
        }
    }

    fn decode(json: Json) -> Result<Self, String> {
        // A `null` result: the user marked the in-flight call done (`--mark-done`).
        if json.is_null() {
            return Ok(Ok(Value::Null));
        }
        if let Some(v) = json.get("ok") {
            return Ok(Ok(Value::from_json(v)));
        }
        let e = json
            .get("err")
            .ok_or("its result is neither `ok` nor `err`")?;
        let text = |k: &str| {
            e.get(k)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let kind = [
            ToolErrorKind::Failed,
            ToolErrorKind::Timeout,
            ToolErrorKind::OutputLimit,
            ToolErrorKind::PathEscape,
            ToolErrorKind::BadArguments,
            ToolErrorKind::Io,
            ToolErrorKind::NotFound,
        ]
        .into_iter()
        .find(|k| kind_name(*k) == text("kind"))
        .ok_or_else(|| format!("its error kind `{}` is none this build knows", text("kind")))?;
        Ok(Err(ToolError {
            kind,
            message: text("message"),
            output: text("output"),
        }))
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

/// The most exchanges of one slot the journal keeps (a slot's repair and tool rounds are
/// bounded; this bounds the journal's row whatever the limits).
pub(crate) const KEPT_EXCHANGES: usize = 32;

/// The longest string of a kept exchange, in bytes; longer ones are cut as the trace cuts them
/// ([`crate::trace::bound_values`]).
pub(crate) const KEPT_EXCHANGE_BYTES: usize = 16 * 1024;

/// The scrubber of the journal's kept exchanges: this process's secrets, read once.
static SCRUB: std::sync::LazyLock<crate::trace::Scrubber> =
    std::sync::LazyLock::new(crate::trace::Scrubber::from_env);

/// A slot's outcome as the journal keeps it: the value (or the error), the usage, how many
/// exchanges it took (what a scripted model must skip on resume), and the exchanges themselves
/// for the report — at most [`KEPT_EXCHANGES`], each string at most [`KEPT_EXCHANGE_BYTES`],
/// secrets scrubbed as the trace scrubs them.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct SlotRecord {
    pub value: Result<Json, String>,
    pub usage: Usage,
    pub exchanges: usize,
    pub repairs: u32,
    pub tool_rounds: u32,
    /// The kept exchanges: `{request, response}` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<Json>,
    /// The model that answered (absent in records written before tiers).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// True when that model is scripted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scripted: bool,
    /// The tier the slot named.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tier: String,
    /// Each move to the next model of the tier's chain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<crate::model::slot::Failover>,
    /// The cost in US dollars, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// A slot's exchanges as the journal keeps them (see [`SlotRecord`]).
fn kept_exchanges(exchanges: &[crate::model::Exchange]) -> Vec<Json> {
    exchanges
        .iter()
        .take(KEPT_EXCHANGES)
        .map(|x| {
            let mut v = serde_json::json!({"request": x.request, "response": x.response});
            SCRUB.scrub(&mut v);
            crate::trace::bound_values(&mut v, KEPT_EXCHANGE_BYTES);
            v
        })
        .collect()
}

impl Record for SlotOutcome {
    fn encode(&self) -> Json {
        serde_json::to_value(SlotRecord {
            value: self.value.clone().map_err(|e| e.message),
            usage: self.usage,
            exchanges: self.exchanges.len(),
            repairs: self.repairs,
            tool_rounds: self.tool_rounds,
            log: kept_exchanges(&self.exchanges),
            model: self.model.clone(),
            scripted: self.scripted,
            tier: self.tier.clone(),
            failovers: self.failovers.clone(),
            cost: self.cost,
        })
        .unwrap_or(Json::Null)
    }

    fn decode(json: Json) -> Result<Self, String> {
        let r: SlotRecord =
            serde_json::from_value(json).map_err(|e| format!("it is no slot's record ({e})"))?;
        Ok(SlotOutcome {
            value: r.value.map_err(SlotError::invalid),
            usage: r.usage,
            exchanges: Vec::new(),
            repairs: r.repairs,
            tool_rounds: r.tool_rounds,
            model: r.model,
            scripted: r.scripted,
            tier: r.tier,
            failovers: r.failovers,
            cost: r.cost,
        })
    }
}

impl Run {
    /// The scope of the current step's effects (`None` without a journal).
    pub(crate) fn scope(&mut self) -> Option<Scope> {
        let d = self.durable.as_deref()?;
        Some(Scope {
            journal: d.journal.clone(),
            step: self.steps,
            path: d.path.clone(),
            seq: d.seq,
        })
    }

    /// Hands a scope's next index back to the run.
    pub(crate) fn unscope(&mut self, scope: Option<Scope>) {
        if let (Some(d), Some(s)) = (self.durable.as_deref_mut(), scope) {
            d.seq = s.seq;
        }
    }

    /// The scope of sibling `i` of the current step's SPAWN.
    pub(crate) fn sibling_scope(&self, i: usize) -> Option<Scope> {
        let d = self.durable.as_deref()?;
        Some(Scope {
            journal: d.journal.clone(),
            step: self.steps,
            path: sub_path(&d.path, &format!("s{i}")),
            seq: 0,
        })
    }

    /// A CALL sub-run's durable state: its effects journaled below this step, no commits.
    pub(crate) fn call_durable(&self) -> Option<Box<Durable>> {
        let d = self.durable.as_deref()?;
        let path = sub_path(&d.path, &format!("c{}", self.steps));
        Some(Durable::new(d.journal.clone(), path, false))
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
        let Some(d) = self.durable.as_deref_mut() else {
            return Ok(());
        };
        let pure = d.seq == 0 && d.supplied.is_empty() && is_pure(step);
        d.seq = 0;
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
            time: started.map(step_time),
        };
        d.deviations = self.deviations.len();
        let done = if pure {
            d.journal.commit_pure(&commit).await
        } else {
            d.journal.commit(&commit).await
        };
        done.map_err(journal_stop)
    }

    /// Records how the run ended (a pause records itself, with its state).
    pub(crate) async fn end_journal(journal: &dyn Journal, out: &RunOutcome) {
        if out.status == Status::InputRequired {
            return;
        }
        let end = RunEnd {
            status: status_name(out.status).to_owned(),
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

/// A status as the journal stores it.
pub(crate) fn status_name(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Error => "error",
        Status::Fault => "fault",
        Status::InputRequired => "input_required",
        Status::Interrupted => "interrupted",
    }
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

/// The invocation values a run was started with.
fn start_values(prep: &Prepared, start: &RunStart) -> Result<Vec<(usize, Value)>, JournalError> {
    start
        .inputs
        .iter()
        .map(|(name, v)| {
            prep.names
                .index(name)
                .map(|c| (c, Value::from_json(v)))
                .ok_or_else(|| {
                    corrupt(
                        &start.id,
                        "runs row".into(),
                        format!("its input `{name}` is no carry of this program"),
                    )
                })
        })
        .collect()
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
    run.durable = Some(Durable::new(journal, Arc::from(""), true));
    run
}

/// Continues a journaled run that did not finish: rebuilt from its commits (nothing completed
/// runs again; the step in flight reruns with its recorded effects answered from the journal),
/// or — paused for a human — from its pause record with `answer`.
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
    if let Some(pause) = history.pause {
        let Some(answer) = answer else {
            return Ok(Err(refused(
                &settings,
                &prep,
                FaultKind::InvalidHandle,
                format!(
                    "run {id} paused for a human answer; give it with `ais resume {id} --answer TEXT`"
                ),
            )));
        };
        let restored = super::pause::restore_value(settings.clone(), prep.clone(), pause, &answer);
        let (mut run, cursor, supplied) = match restored {
            Ok(r) => r,
            // The answer is refused and the run still waits for one: nothing is journaled.
            Err(super::pause::Unfit::Answer(m)) => {
                return Ok(Err(refused(
                    &settings,
                    &prep,
                    FaultKind::InvalidHandle,
                    format!(
                        "the answer cannot continue run {id}: {m}; the run still waits: `ais resume {id} --answer TEXT`"
                    ),
                )));
            }
            Err(super::pause::Unfit::Record(m)) => {
                return Err(corrupt(&id, "runs row (its pause record)".into(), m));
            }
        };
        let mut d = Durable::new(journal, Arc::from(""), true);
        d.deviations = folded.deviations.len();
        d.unrouted = folded
            .unrouted
            .as_ref()
            .is_some_and(|u| u.as_array().is_some_and(|a| !a.is_empty()));
        d.branches = folded.branches.as_ref().is_some_and(|b| !b.is_empty());
        d.supplied.extend(supplied);
        run.durable = Some(d);
        return Ok(Ok((run, cursor)));
    }
    let values = start_values(&prep, start)?;
    let mut run = Run::new(settings, prep.clone(), Some(start.task.clone()), &values, 0);
    let names = prep.names.clone();
    let carry = |name: &str, at: u64| {
        names.index(name).ok_or_else(|| {
            corrupt(
                &id,
                format!("steps (step {at})"),
                format!("it writes carry `{name}`, which this program does not declare"),
            )
        })
    };
    let mut values = run.carries.values.clone();
    for (name, (v, at)) in &folded.written {
        let c = carry(name, *at)?;
        values[c] = Value::from_json(v);
        run.written[c] = *at;
    }
    for (name, v) in &folded.supplied {
        let c = carry(name, folded.steps)?;
        values[c] = Value::from_json(v);
        run.supplied[c] = true;
    }
    run.carries = CarryFile {
        names: names.clone(),
        values,
    };
    let n = prep.steps.len();
    let cursor = folded.cursor.unwrap_or(0);
    let bad_step = |what: String| corrupt(&id, format!("steps (step {})", folded.steps), what);
    if cursor >= n {
        return Err(bad_step(format!(
            "it continues at step index {cursor}, and this program has {n} steps"
        )));
    }
    for &(at, count) in &folded.loops {
        *run.loop_counts.get_mut(at).ok_or_else(|| {
            bad_step(format!(
                "it counts a LOOP at step index {at}, and this program has {n} steps"
            ))
        })? = count;
    }
    if let Some(b) = &folded.branches {
        if b.iter().any(|&(a, j)| a >= n || j >= n) {
            return Err(bad_step(
                "its pending branches name steps this program does not have".into(),
            ));
        }
        run.branches = b.clone();
    }
    if let Some(u) = &folded.unrouted {
        run.unrouted = serde_json::from_value::<Vec<Unrouted>>(u.clone())
            .map_err(|e| bad_step(format!("its unrouted failures do not parse ({e})")))?;
    }
    run.deviations = folded
        .deviations
        .iter()
        .map(|(subject, intended, substituted)| Deviation {
            check: None,
            subject: subject.clone(),
            intended: intended.clone(),
            substituted: substituted.clone(),
        })
        .collect();
    run.steps = folded.steps;
    let (p, c, k, s) = folded.usage;
    run.usage = RunUsage {
        prompt_tokens: p,
        completion_tokens: c,
        cached_tokens: k,
        slots: s,
        ..RunUsage::default()
    };
    let mut d = Durable::new(journal, Arc::from(""), true);
    d.deviations = run.deviations.len();
    d.unrouted = !run.unrouted.is_empty();
    d.branches = !run.branches.is_empty();
    run.durable = Some(d);
    Ok(Ok((run, cursor)))
}

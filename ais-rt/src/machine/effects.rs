//! The effect layer: the one wrapper every effect of the machine passes through, in the spirit
//! of tower's `Layer` and Restate's `ctx.run`.
//!
//! A run (a SPAWN sibling, a CALL's sub-run) holds one [`Effects`]: the journal it records
//! to — or none, and then the layer passes every effect straight through —, its path below
//! the journaled run, and the numbering of its effects. The numbering is the layer's own: the
//! machine says when a step begins ([`Effects::begin`]) and every effect of the step takes
//! the next index as it passes ([`Effects::run`]), so no caller copies a counter out and hands
//! it back. Each effect names what it is ([`Spec`]: kind, instruction, tool, idempotency,
//! request digest), built only when a journal will record it.
//!
//! What goes through it: every tool call of a DU pipeline, of a write-out and of a produced
//! program; each exchange of a slot with its model and each tool call the model makes inside
//! the slot (`machine/slot.rs`: a resume continues a slot mid-conversation, asking the model
//! nothing it answered and running none of its tools again); an `ask_user` answer; saving a
//! produced program before it runs ([`Effects::save_program`]) and applying a SPAWN's staged
//! files after its barrier ([`Effects::apply_staged`]), both artifacts. A sibling's scratch
//! directory ([`Effects::scratch_dir`]) passes through the layer unrecorded: creating it is
//! its own replay. The machine's modules hold no file-system call of their own; the layer's
//! blocking work runs on tokio's blocking pool.

use super::Stop;
use crate::journal::{
    Effect, EffectKey, EffectKind, Idempotency, Journal, JournalError, Json, request,
};
use crate::llm::{Completion, Exchange, ModelError, SlotRequest};
use crate::report::FaultKind;
use crate::tools::{ArtifactRoot, RelativeDest, ToolArgs, ToolError, ToolErrorKind};
use ais_core::Value;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The effects of one run path: where they are recorded and how they are numbered.
pub(crate) struct Effects {
    /// The journal, or `None`: every effect passes through unrecorded.
    journal: Option<Arc<dyn Journal>>,
    /// The path of this run below the journaled run (empty for the run itself).
    path: Arc<str>,
    /// The step the current effects belong to.
    step: AtomicU64,
    /// The next effect index within the step.
    seq: AtomicU32,
    /// What the run has spent toward its cost budget: one meter for the run, its SPAWN
    /// siblings and its CALL sub-runs (each [`below`](Self::below) shares it).
    meter: Arc<Meter>,
}

/// What a run spends on its models, counted toward `--max-cost` across its SPAWN siblings and
/// CALL sub-runs as they run: the cost of the answers so far, and what the calls in flight may
/// still cost at most (reserved before each call, so that siblings asking at once cannot
/// together pass the budget a lone call would be refused at).
#[derive(Debug, Default)]
pub(crate) struct Meter {
    /// (spent, reserved) in US dollars.
    state: std::sync::Mutex<(f64, f64)>,
}

impl Meter {
    fn lock(&self) -> std::sync::MutexGuard<'_, (f64, f64)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts counting from `spent` (a resumed run: what its steps before the resume cost).
    pub(crate) fn restart(&self, spent: f64) {
        *self.lock() = (spent, 0.0);
    }

    /// Reserves `worst` (what the next call may cost at most) under `limit`: refused, with
    /// what is spent and reserved, when the reservation does not fit.
    pub(crate) fn reserve(&self, limit: f64, worst: f64) -> Result<(), (f64, f64)> {
        let mut s = self.lock();
        if s.0 >= limit || s.0 + s.1 + worst > limit {
            return Err(*s);
        }
        s.1 += worst;
        Ok(())
    }

    /// A call that reserved `worst` cost `cost`: the reservation is released and the cost
    /// spent; returns what is spent now.
    pub(crate) fn settle(&self, worst: f64, cost: f64) -> f64 {
        let mut s = self.lock();
        s.1 = (s.1 - worst).max(0.0);
        s.0 += cost;
        s.0
    }
}

impl Effects {
    /// Effects that pass straight through (a run with no journal).
    pub(crate) fn direct() -> Arc<Effects> {
        Effects::new(None, Arc::from(""), 0, Arc::default())
    }

    /// The effects of the journaled run itself, recorded in `journal`.
    pub(crate) fn journaled(journal: Arc<dyn Journal>) -> Arc<Effects> {
        Effects::new(Some(journal), Arc::from(""), 0, Arc::default())
    }

    fn new(
        journal: Option<Arc<dyn Journal>>,
        path: Arc<str>,
        step: u64,
        meter: Arc<Meter>,
    ) -> Arc<Effects> {
        Arc::new(Effects {
            journal,
            path,
            step: AtomicU64::new(step),
            seq: AtomicU32::new(0),
            meter,
        })
    }

    /// What the run has spent toward its cost budget.
    pub(crate) fn meter(&self) -> &Meter {
        &self.meter
    }

    /// The effects of a run below this one: SPAWN sibling `s3`, or the CALL's sub-run `c7`,
    /// keyed from `step` (the sibling's SPAWN step; a sub-run's own steps re-[`begin`](Self::begin) it).
    pub(crate) fn below(&self, segment: &str, step: u64) -> Arc<Effects> {
        let path = match (&self.journal, self.path.is_empty()) {
            (None, _) => Arc::from(""),
            (Some(_), true) => Arc::from(segment),
            (Some(_), false) => Arc::from(format!("{}/{segment}", self.path)),
        };
        Effects::new(self.journal.clone(), path, step, self.meter.clone())
    }

    /// A sibling handed over by another process's [placement](crate::placement): its effects
    /// under `s<index>` at its SPAWN's step, recorded in `journal` when there is one.
    pub(crate) fn sibling(
        journal: Option<Arc<dyn Journal>>,
        index: usize,
        step: u64,
    ) -> Arc<Effects> {
        let path = match journal {
            Some(_) => Arc::from(format!("s{index}")),
            None => Arc::from(""),
        };
        Effects::new(journal, path, step, Arc::default())
    }

    /// The journal the effects are recorded in, when there is one.
    pub(crate) fn journal(&self) -> Option<&Arc<dyn Journal>> {
        self.journal.as_ref()
    }

    /// Step `step` begins: its effects are numbered from 0.
    pub(crate) fn begin(&self, step: u64) {
        self.step.store(step, Ordering::Relaxed);
        self.seq.store(0, Ordering::Relaxed);
    }

    /// How many effects the current step has keyed so far.
    pub(crate) fn keyed(&self) -> u32 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Skips `n` indices: a pipeline resumed at its `ask_user` call, whose `n` calls before it
    /// ran before the pause (each took one index), keys the rest as an uninterrupted run did.
    pub(crate) fn skip(&self, n: usize) {
        self.seq.fetch_add(n as u32, Ordering::Relaxed);
    }

    /// Runs `work(input)` as the step's next effect: with no journal, directly; else through
    /// the journal, which answers it from its record (the work is dropped unpolled: nothing
    /// runs) or runs it and records intent and result. `spec(&input)` says what the effect is,
    /// asked only when a journal records it. The live result is returned as it is; a recorded
    /// one is decoded.
    pub(crate) async fn run<'s, I, T, F>(
        &self,
        input: I,
        spec: impl FnOnce(&I) -> Spec<'s>,
        work: impl FnOnce(I) -> F + Send,
    ) -> Result<T, Stop>
    where
        I: Send,
        T: Record + Send,
        F: Future<Output = T> + Send,
    {
        let Some(journal) = &self.journal else {
            return Ok(work(input).await);
        };
        let spec = spec(&input);
        let key = EffectKey {
            step: self.step.load(Ordering::Relaxed),
            path: self.path.to_string(),
            index: self.seq.fetch_add(1, Ordering::Relaxed),
        };
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
        // The work starts inside the future (a tool may act when called, before it is
        // polled): an effect answered from the journal never starts it.
        let fut = Box::pin(async move {
            let t = work(input).await;
            let json = t.encode();
            *slot = Some(t);
            json
        });
        // Named only when a recorded result does not decode (a root path's key allocates
        // nothing).
        let key = effect.key.clone();
        let recorded = journal.effect(effect, fut).await.map_err(journal_stop)?;
        match live {
            Some(t) => Ok(t),
            None => T::decode(recorded).map_err(|message| {
                journal_stop(JournalError::Corrupt {
                    run: journal.run_id().to_owned(),
                    row: format!("effect ({key})"),
                    message,
                })
            }),
        }
    }
}

/// Effects on the output root, beside the tool calls.
impl Effects {
    /// Saves the produced program `text` to the runtime's own file `file` (`.ais/scripts/…`)
    /// under `root`, as the step's next effect: an artifact that may be written again (the
    /// same text to the same file), so one in flight at a crash is simply written again, and
    /// one recorded is not. Answers the saved path, or the write's error.
    pub(crate) async fn save_program(
        &self,
        instruction: &str,
        root: ArtifactRoot,
        file: String,
        text: String,
    ) -> Result<Result<Value, ToolError>, Stop> {
        let spec = |(file, text): &(String, String)| {
            let mut request = serde_json::Map::new();
            request.insert("path".into(), Json::String(file.clone()));
            request.insert("text".into(), Json::String(text.clone()));
            Spec {
                kind: EffectKind::Artifact,
                instruction,
                name: "save_program",
                idempotency: Idempotency::Retry,
                request: Some(request::tool(&request)),
            }
        };
        self.run((file, text), spec, |(file, text)| {
            blocking("saving the program", move || {
                root.write_own(&file, text.as_bytes()).map(Value::Str)
            })
        })
        .await
    }

    /// Moves every file the siblings of SPAWN `id` staged under `root/.ais/stage/<id>/` into
    /// `root`, as the step's next effect (see [`apply_staged`] for the rules). Applying is
    /// consumed sibling by sibling (each stage folder is removed once its files landed), so a
    /// crash in the middle is finished by applying again: the effect may be retried.
    pub(crate) async fn apply_staged(
        &self,
        id: &str,
        root: PathBuf,
    ) -> Result<Result<Value, ToolError>, Stop> {
        let spec = |_: &PathBuf| {
            let mut request = serde_json::Map::new();
            request.insert("spawn".into(), Json::String(id.to_owned()));
            Spec {
                kind: EffectKind::Artifact,
                instruction: id,
                name: "apply_staged",
                idempotency: Idempotency::Retry,
                request: Some(request::tool(&request)),
            }
        };
        let owned = id.to_owned();
        self.run(root, spec, move |root| {
            blocking("applying the staged files", move || {
                apply_staged(&root, &owned)
                    .map(|n| Value::Int(n as i64))
                    .map_err(|e| ToolError::new(ToolErrorKind::Io, e))
            })
        })
        .await
    }

    /// Creates a sibling's scratch (or stage) directory `dir`. It passes through unrecorded:
    /// creating a directory that exists is a no-op, so running it again is its replay, and a
    /// resumed SPAWN (which runs only its answered sibling) keys no effect it did not key
    /// before.
    pub(crate) async fn scratch_dir(&self, dir: &Path) -> std::io::Result<()> {
        tokio::fs::create_dir_all(dir).await
    }
}

/// Runs blocking file-system work on tokio's blocking pool; a panic there is an I/O error of
/// `what`.
async fn blocking<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ToolError::new(
            ToolErrorKind::Io,
            format!("{what} stopped abnormally: {e}"),
        ))
    })
}

/// The folder of sibling `i` of SPAWN `id` under `root/.ais/<kind>/` (`kind`: `spawn` for a
/// private-write sibling, `stage` for one whose writes are staged).
pub(crate) fn spawn_dir(root: &Path, kind: &str, id: &str, i: usize) -> PathBuf {
    let id = super::exec::file_safe(id);
    root.join(".ais").join(kind).join(id).join(i.to_string())
}

/// Moves every file the siblings staged into the output root, sibling by sibling, with the
/// rules of an artifact write ([`ArtifactRoot::place`]): a staged symlink is skipped, a path
/// through `.ais/` or a version-control directory is refused, and the directories on the way
/// are created one at a time without following a link, so a symlink in the root is noticed
/// before anything is created through it. Answers how many files landed.
fn apply_staged(root: &Path, id: &str) -> Result<usize, String> {
    let base = spawn_dir(root, "stage", id, 0);
    let Some(stage) = base.parent() else {
        return Ok(0);
    };
    let mut siblings: Vec<(usize, PathBuf)> = match std::fs::read_dir(stage) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.parse().ok())
                    .map(|i: usize| (i, e.path()))
            })
            .collect(),
        Err(_) => return Ok(0),
    };
    siblings.sort();
    let target = ArtifactRoot::new(root);
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let mut landed = 0;
    for (_, dir) in siblings {
        let mut todo = vec![dir.clone()];
        while let Some(d) = todo.pop() {
            for entry in std::fs::read_dir(&d).map_err(|e| io(&d, e))? {
                let path = entry.map_err(|e| io(&d, e))?.path();
                let meta = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
                if meta.file_type().is_symlink() {
                    continue;
                }
                if meta.is_dir() {
                    todo.push(path);
                    continue;
                }
                let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy();
                let dest = RelativeDest::parse(&rel).map_err(|e| e.message)?;
                target.place(&dest, &path).map_err(|e| e.message)?;
                landed += 1;
            }
        }
        std::fs::remove_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    Ok(landed)
}

/// A journal error as the stop it causes.
pub(crate) fn journal_stop(e: JournalError) -> Stop {
    let kind = match e {
        JournalError::InFlight { .. } => FaultKind::EffectInFlight,
        _ => FaultKind::Journal,
    };
    Stop::Fault(kind, e.to_string())
}

/// What an effect is, short of its key.
pub(crate) struct Spec<'a> {
    pub kind: EffectKind,
    pub instruction: &'a str,
    pub name: &'a str,
    pub idempotency: Idempotency,
    pub request: Option<String>,
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
/// call — an MCP call, an ACT, a tool of no or unknown surface, a `command` or Python tool
/// whatever its surface — runs at most once unless the user says so.
pub(crate) fn tool_spec<'a>(
    instruction: &'a str,
    name: &'a str,
    class: ToolClass,
    args: &ToolArgs,
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
        request: Some(request::tool(&request)),
    }
}

/// How one exchange of a slot (or of a model-owned ROUTE's choice) with its model is
/// journaled: it may be asked again (it costs tokens, not an effect in the world), keyed by a
/// hash of the request — its history included, so each exchange of a slot has its own.
pub(crate) fn exchange_spec<'a>(kind: EffectKind, request: &'a SlotRequest) -> Spec<'a> {
    Spec {
        kind,
        instruction: &request.instruction,
        name: &request.instruction,
        idempotency: Idempotency::Retry,
        request: Some(request::slot(request)),
    }
}

/// A result the journal can keep: encoded to JSON when it runs, decoded when it is replayed.
pub(crate) trait Record: Sized {
    fn encode(&self) -> Json;
    fn decode(json: Json) -> Result<Self, String>;
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
        ToolErrorKind::BadResult => "bad_result",
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
            ToolErrorKind::BadResult,
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

/// The longest string of a kept exchange, in bytes; longer ones are cut as the trace cuts them
/// ([`crate::trace::bound_values`]).
pub(crate) const KEPT_EXCHANGE_BYTES: usize = 16 * 1024;

/// The scrubber of the journal's kept exchanges: this process's secrets, read once.
static SCRUB: std::sync::LazyLock<crate::trace::Scrubber> =
    std::sync::LazyLock::new(crate::trace::Scrubber::from_env);

/// One exchange of a slot as the journal keeps it: the model's reply whole (what the slot goes
/// on from), its usage, which model answered and what the answer cost (when the model has a
/// price), and the raw exchange for the report — each string at most [`KEPT_EXCHANGE_BYTES`],
/// secrets scrubbed as the trace scrubs them; or the model's failure. A record of an older ais
/// names no model and no cost.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // built once per exchange, serialized at once
pub(crate) enum ExchangeRecord {
    /// The model answered.
    Completion {
        reply: crate::llm::Reply,
        usage: crate::llm::Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
        request: Json,
        response: Json,
    },
    /// The model gave no completion.
    Failed {
        kind: crate::llm::ModelErrorKind,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
}

/// One exchange of a slot with a model: which model was asked (`None` in a record of an older
/// ais), what the answer cost (`None` without a price), and its answer or failure.
pub(crate) struct Asked {
    pub model: Option<String>,
    pub cost: Option<f64>,
    pub answer: Result<Completion, ModelError>,
}

impl Record for Asked {
    fn encode(&self) -> Json {
        let model = self.model.clone();
        let record = match &self.answer {
            Ok(c) => {
                let kept = |v: &Json| {
                    let mut v = v.clone();
                    SCRUB.scrub(&mut v);
                    crate::trace::bound_values(&mut v, KEPT_EXCHANGE_BYTES);
                    v
                };
                ExchangeRecord::Completion {
                    reply: c.reply.clone(),
                    usage: c.usage,
                    model,
                    cost: self.cost,
                    request: kept(&c.exchange.request),
                    response: kept(&c.exchange.response),
                }
            }
            Err(e) => ExchangeRecord::Failed {
                kind: e.kind,
                message: e.message.clone(),
                model,
            },
        };
        serde_json::to_value(record).unwrap_or(Json::Null)
    }

    fn decode(json: Json) -> Result<Self, String> {
        let r: ExchangeRecord = serde_json::from_value(json)
            .map_err(|e| format!("it is no model exchange's record ({e})"))?;
        Ok(match r {
            ExchangeRecord::Completion {
                reply,
                usage,
                model,
                cost,
                request,
                response,
            } => Asked {
                model,
                cost,
                answer: Ok(Completion {
                    reply,
                    usage,
                    exchange: Exchange { request, response },
                }),
            },
            ExchangeRecord::Failed {
                kind,
                message,
                model,
            } => Asked {
                model,
                cost: None,
                answer: Err(ModelError { kind, message }),
            },
        })
    }
}

//! # ais-rt — the ais runtime
//!
//! The machine that executes AIS programs — from the `ais!` macro or from any `.agir` file:
//! the twelve opcodes, the Deterministic Unit's tools, the Stochastic Unit's model seam, faults,
//! budgets, deviations and traces (spec §10).
//!
//! [`Runtime`] is built once with a model, tools and options; [`Runtime::run`] checks the
//! program (a `failed` one does not run), lowers it once and interprets it (spec §2.3);
//! [`Runtime::resume`] continues a run paused for human input. One path per item: the runtime,
//! its tools and its report are at the crate root; five subsystems whose items read best
//! qualified are modules of their own (their items are not also at the root).
//!
//! | where | what |
//! |---|---|
//! | root: running | [`Runtime`], [`RuntimeBuilder`], [`Inputs`], [`InputError`], [`Prepared`], [`stage_dir`], the `DEFAULT_*` bounds |
//! | root: the report | [`RunOutcome`], [`Status`], [`Fault`], [`FaultKind`], [`Failure`], [`Pause`], [`RunUsage`] |
//! | root: the Deterministic Unit's tools | [`Tool`], [`ToolRegistry`], [`ToolArgs`], [`ToolContext`], [`ToolError`], [`ToolErrorKind`], [`ToolFuture`], [`ToolLimits`], [`Builtin`], [`CommandTool`], [`PythonTool`], [`declared_tool`]; files: [`ArtifactRoot`], [`ArtifactPath`], [`RelativeDest`], [`AccessPolicy`], [`INHERITED_ENV`]; native Rust tools: [`FromValue`], [`FromArg`], [`IntoValue`], [`IntoToolResult`], [`Json`], [`ValueMismatch`], [`SyncToolFn`], [`AsyncToolFn`] |
//! | root: where siblings and callees run | [`Placement`], [`SiblingJob`], [`SiblingOutcome`], [`CallJob`], [`CallOutcome`], [`CallFault`], [`CallPause`], [`PlacementError`] |
//! | root: the sandbox | [`confinement_available`], [`shield_available`], [`unconfined_deviation`], [`harden_process`], [`exit_on_signals`]; `install_crypto_provider` (feature `http`) |
//! | [`llm`] | the Stochastic Unit's seam: the [`llm::Model`] trait a provider implements, [`llm::from_spec`], [`llm::ScriptedModel`], tiers ([`llm::Models`], [`llm::ModelsFile`]), [`llm::fill`] |
//! | [`journal`] | durable runs: the [`journal::Journal`] trait and its records, [`journal::MemoryJournal`], replay ([`journal::Recording`]), seals; `journal::sqlite` (feature `sqlite`) |
//! | [`trace`] | one [`trace::StepEvent`] per step, the [`trace::TraceSink`]s, the [`trace::Scrubber`] |
//! | `mcp` (feature `mcp`) | tools bound to MCP servers, programs served as MCP tools |
//! | `otlp` (feature `otlp`) | runs exported as OpenTelemetry traces |
//!
//! A pure-DU program with a native tool, run in a few lines:
//!
//! ```
//! use ais_rt::{Inputs, Runtime, Status, Tool, ToolArgs, ToolContext, ToolFuture, ToolRegistry};
//! use std::sync::Arc;
//!
//! struct Shout;
//! impl Tool for Shout {
//!     fn call<'a>(&'a self, args: ToolArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
//!         Box::pin(async move {
//!             let text = args.params.get("text").and_then(|v| v.as_str()).unwrap_or_default();
//!             Ok(ais_core::Value::from(text.to_uppercase()))
//!         })
//!     }
//! }
//!
//! let doc = ais_core::agir::read(r#"---
//! name: shout
//! description: Upper-case the task.
//! ---
//! walker:
//!   name: Shout
//!   carries:
//!     task: {type: str, role: input}
//!     loud: {type: str, produced_by: shout}
//! tools:
//!   shout: {sig: "(text) -> str", surface: SENSE, serves: [shout]}
//! nodes:
//!   - {id: shout, type: CODE, owner: code, reads: [task], writes: [loud]}
//!   - {id: done, type: TERMINAL, reads: [loud]}
//! edges:
//!   - {from: shout, to: done}
//! "#)?;
//! let mut tools = ToolRegistry::new();
//! tools.register("shout", Arc::new(Shout));
//! let out_dir = tempfile::tempdir()?;
//! let runtime = Runtime::builder().tools(tools).out_dir(out_dir.path().into()).build();
//! let inputs = Inputs::parse(&doc.program, Some("hello".into()), &[])?;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let outcome = rt.block_on(runtime.run(&doc.program, Some(&doc.source_map), inputs));
//! assert_eq!(outcome.status, Status::Ok);
//! assert_eq!(outcome.report["loud"], "HELLO");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
// Every `pub` item is reachable, and nameable, at its one path.
#![warn(unreachable_pub, unnameable_types)]

mod feature;
pub mod journal;
pub mod llm;
mod machine;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "otlp")]
pub mod otlp;
pub(crate) mod placement;
pub(crate) mod report;
pub(crate) mod sandbox;
#[cfg(feature = "http")]
pub(crate) mod tls;
pub(crate) mod tools;
pub mod trace;

pub use machine::carries::InputError;
pub use machine::plan::Prepared;
pub use placement::{
    CallFault, CallJob, CallOutcome, CallPause, Placement, PlacementError, SavedCall, SiblingJob,
    SiblingOutcome,
};
pub use report::{Called, Failure, Fault, FaultKind, Pause, RunOutcome, RunUsage, Status};
pub use sandbox::{
    confinement_available, exit_on_signals, harden_process, shield_available, unconfined_deviation,
};
#[cfg(feature = "http")]
pub use tls::install_crypto_provider;
pub use tools::{
    AccessPolicy, ArtifactPath, ArtifactRoot, AsyncToolFn, Builtin, CommandTool, FromArg,
    FromValue, INHERITED_ENV, IntoToolResult, IntoValue, Json, PythonTool, RelativeDest,
    SyncToolFn, Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture, ToolLimits,
    ToolRegistry, ValueMismatch, declared_tool,
};

use ais_core::{Program, SourceMap, Value};
use llm::{Model, Models};
use machine::Settings;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use trace::TraceSink;

/// The default step budget (§10.4).
pub const DEFAULT_MAX_STEPS: u64 = 10_000;
/// The default number of SPAWN siblings run at once.
pub const DEFAULT_MAX_PARALLEL: usize = 16;
/// The default cap on the siblings one SPAWN forks.
pub const DEFAULT_MAX_SIBLINGS: usize = 1_000;
pub use llm::slot::DEFAULT_MAX_ANSWER_BYTES;

/// The values a run is invoked with (§7.5): the task text and each `role: input` carry,
/// typed by its declaration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inputs {
    task: Option<String>,
    values: Vec<(String, Value)>,
}

impl Inputs {
    /// Parses `name=value` pairs against the program's input carries: each name must be a
    /// declared `role: input` carry (not `task`, which `task` gives), and each value must
    /// parse as the carry's type (text for `str`, a number, `true`/`false`, an enum member,
    /// JSON for lists, dicts and objects).
    pub fn parse(
        program: &Program,
        task: Option<String>,
        pairs: &[(String, String)],
    ) -> Result<Inputs, InputError> {
        let mut values = Vec::with_capacity(pairs.len());
        for (name, text) in pairs {
            let carry = program.carry(name).map(|(_, c)| c);
            let Some(carry) = carry.filter(|c| c.is_input() && c.name != "task") else {
                let inputs: Vec<&str> = program
                    .carries()
                    .iter()
                    .filter(|c| c.is_input() && c.name != "task")
                    .map(|c| c.name.as_str())
                    .collect();
                let hint = ais_core::did_you_mean(name, inputs.iter().copied());
                let message = if name == "task" {
                    "the task is given with `--task TEXT`, not `--input task=…`".to_owned()
                } else {
                    format!(
                        "`{name}` is not an input of this program{}; its inputs are: {}",
                        hint.first()
                            .map(|h| format!(" (did you mean `{h}`?)"))
                            .unwrap_or_default(),
                        if inputs.is_empty() {
                            "none".to_owned()
                        } else {
                            inputs.join(", ")
                        }
                    )
                };
                return Err(InputError {
                    name: name.clone(),
                    message,
                });
            };
            let v = machine::carries::parse_input(program, name, carry.ty.as_ref(), text)?;
            values.push((name.clone(), v));
        }
        Ok(Inputs { task, values })
    }

    /// Inputs with only a task.
    pub fn task(task: impl Into<String>) -> Inputs {
        Inputs {
            task: Some(task.into()),
            values: Vec::new(),
        }
    }
}

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    models: Models,
    tools: ToolRegistry,
    out_dir: PathBuf,
    max_steps: u64,
    max_parallel: usize,
    trace: Option<Arc<dyn TraceSink>>,
    pulse: Option<Arc<trace::Pulse>>,
    limits: ToolLimits,
    program_dir: Option<PathBuf>,
    programs: HashMap<String, Arc<Program>>,
    max_answer_bytes: usize,
    max_siblings: usize,
    read_roots: Vec<PathBuf>,
    allow_net: Vec<String>,
    max_cost: Option<f64>,
    live: Option<Arc<dyn llm::Live>>,
    overwrite: bool,
    placement: Arc<dyn Placement>,
}

impl RuntimeBuilder {
    /// Lets a destination the task names after a save verb ("save to `report.md`", spec §7.3)
    /// replace a file that exists and the run did not create (`ais run --overwrite`); without
    /// it such a write takes a derived destination and records a deviation (see
    /// `tools::destination`). A name the run reads is never replaced by inference.
    pub fn overwrite(mut self, yes: bool) -> Self {
        self.overwrite = yes;
        self
    }
    /// Who watches the models' answers stream in (default: nobody): with a watcher, the
    /// providers ask for streamed answers and hand it each piece of text as it arrives — what
    /// a terminal shows under the running step. The answer a slot validates and the journal
    /// keeps is the whole one, assembled once the stream ended ([`llm::Live`]).
    pub fn live(mut self, watcher: Arc<dyn llm::Live>) -> Self {
        self.live = Some(watcher);
        self
    }
    /// The cost budget, in US dollars (default: none): what the run's slots may cost in all,
    /// its SPAWN siblings, CALL sub-runs and the steps before a resume included. A call that
    /// may cost more than is left (a price and a completion-token limit known before it is
    /// made) is refused before it is made, and an answer that takes the run past the budget
    /// stops the run after it; either is the fault `budget_exhausted`. Every model a slot of
    /// the program may ask needs a price (`[prices]` in ais.toml), else the run does not
    /// start; a scripted model costs nothing. A negative or non-finite budget is taken as 0.
    pub fn max_cost(mut self, dollars: f64) -> Self {
        self.max_cost = Some(if dollars.is_finite() {
            dollars.max(0.0)
        } else {
            0.0
        });
        self
    }
    /// Lets the built-in reads (`read_file`, `list_dir`, `glob_files`, `grep`) reach under
    /// `dir` too (by default: the output root and the directory the runtime is built in).
    pub fn allow_read(mut self, dir: PathBuf) -> Self {
        self.read_roots.push(dir);
        self
    }
    /// Lets `http_get` fetch `host` (as a URL writes it) even when it is a loopback, private
    /// or link-local address (see [`AccessPolicy`]).
    pub fn allow_net(mut self, host: impl Into<String>) -> Self {
        self.allow_net.push(host.into());
        self
    }
    /// The largest model answer a slot accepts, in bytes of JSON text (default
    /// [`DEFAULT_MAX_ANSWER_BYTES`]); a larger one fails the slot with an error saying so. A
    /// human answer given to a resume has the same bound: a longer one is refused and the run
    /// stays paused.
    pub fn max_answer_bytes(mut self, n: usize) -> Self {
        self.max_answer_bytes = n.max(1);
        self
    }
    /// The most siblings one SPAWN may fork (default [`DEFAULT_MAX_SIBLINGS`]); a fan-out over
    /// more is the fault `budget_exhausted`. Every sibling also counts as a step toward
    /// [`max_steps`](Self::max_steps).
    pub fn max_siblings(mut self, n: usize) -> Self {
        self.max_siblings = n.max(1);
        self
    }
    /// The model that fills slots without a tier of their own (none, and no
    /// [`models`](Self::models) default: a program with such slots does not start).
    pub fn model(mut self, model: Arc<dyn Model>) -> Self {
        self.models.set_default(Arc::new(llm::Chain::single(model)));
        self
    }
    /// The models: named tiers (a slot's `model: TIER`), each a fallback chain, and the
    /// default chain (built from a configuration file: [`llm::ModelsFile::build`]). A
    /// [`model`](Self::model) given before is replaced; one given after sets the default.
    pub fn models(mut self, models: Models) -> Self {
        self.models = models;
        self
    }
    /// The tools: native Rust tools and the built-in library (start from
    /// [`ToolRegistry::with_builtins`] to keep the library).
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }
    /// The output root every artifact lands under (default: the current directory).
    pub fn out_dir(mut self, dir: PathBuf) -> Self {
        self.out_dir = dir;
        self
    }
    /// The step budget (default [`DEFAULT_MAX_STEPS`]).
    pub fn max_steps(mut self, n: u64) -> Self {
        self.max_steps = n;
        self
    }
    /// The most SPAWN siblings run at once (default [`DEFAULT_MAX_PARALLEL`]; a SPAWN's own
    /// `max_parallel` can only lower it).
    pub fn max_parallel(mut self, n: usize) -> Self {
        self.max_parallel = n.max(1);
        self
    }
    /// Where step events go (default: nowhere — tracing off).
    pub fn trace(mut self, sink: Arc<dyn TraceSink>) -> Self {
        self.trace = Some(sink);
        self
    }
    /// Where the top-level run's step number and instruction are kept for a watcher (default:
    /// nowhere), e.g. to print a progress line now and then where no terminal shows a bar.
    pub fn pulse(mut self, pulse: Arc<trace::Pulse>) -> Self {
        self.pulse = Some(pulse);
        self
    }
    /// The limits of every tool call.
    pub fn limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }
    /// The directory CALL targets given as paths resolve under (default: the output root).
    pub fn program_dir(mut self, dir: PathBuf) -> Self {
        self.program_dir = Some(dir);
        self
    }
    /// Registers a program a CALL can name as its `target`.
    pub fn program(mut self, name: impl Into<String>, program: Program) -> Self {
        self.programs.insert(name.into(), Arc::new(program));
        self
    }
    /// Where the SPAWN siblings and CALL callees of a journaled run run (see [`Placement`]);
    /// the default runs them all in this process.
    pub fn placement(mut self, placement: Arc<dyn Placement>) -> Self {
        self.placement = placement;
        self
    }
    /// The runtime.
    pub fn build(self) -> Runtime {
        let program_dir = self.program_dir.unwrap_or_else(|| self.out_dir.clone());
        let start = std::env::current_dir().ok();
        let mut read_roots: Vec<PathBuf> = start.iter().cloned().collect();
        read_roots.extend(self.read_roots);
        let mut policy = tools::AccessPolicy::new(read_roots, self.allow_net);
        policy.start = start;
        policy.overwrite = self.overwrite;
        let policy = Arc::new(policy);
        Runtime {
            settings: Arc::new(Settings {
                models: self.models,
                tools: self.tools,
                out_dir: self.out_dir,
                max_steps: self.max_steps,
                max_parallel: self.max_parallel,
                trace: self.trace,
                pulse: self.pulse,
                limits: self.limits,
                program_dir,
                programs: self.programs,
                max_answer_bytes: self.max_answer_bytes,
                max_siblings: self.max_siblings,
                policy,
                max_cost: self.max_cost,
                live: self.live,
                placement: self.placement,
            }),
        }
    }
}

/// Where an `orchestrator_owned` SPAWN's sibling `index` stages its writes under the output
/// root `out`: `.ais/stage/<instruction>/<index>/` (the instruction id made file-safe). The SPAWN
/// applies every sibling's stage to the root after its join, in sibling order.
pub fn stage_dir(out: &Path, instruction: &str, index: usize) -> PathBuf {
    machine::effects::spawn_dir(out, "stage", instruction, index)
}

/// The runtime: runs and resumes programs.
#[derive(Clone)]
pub struct Runtime {
    settings: Arc<Settings>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field(
                "model",
                &self
                    .settings
                    .models
                    .default_chain()
                    .map(|m| m.name().to_owned()),
            )
            .field("tools", &self.settings.tools)
            .field("out_dir", &self.settings.out_dir)
            .field("max_steps", &self.settings.max_steps)
            .field("max_parallel", &self.settings.max_parallel)
            .finish()
    }
}

impl Runtime {
    /// A builder with the defaults: no model, the built-in tool library
    /// ([`ToolRegistry::with_builtins`]), the current directory as output root,
    /// [`DEFAULT_MAX_STEPS`], [`DEFAULT_MAX_PARALLEL`], tracing off.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            models: Models::default(),
            tools: ToolRegistry::with_builtins(),
            out_dir: PathBuf::from("."),
            max_steps: DEFAULT_MAX_STEPS,
            max_parallel: DEFAULT_MAX_PARALLEL,
            trace: None,
            pulse: None,
            limits: ToolLimits::default(),
            program_dir: None,
            programs: HashMap::new(),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            max_siblings: DEFAULT_MAX_SIBLINGS,
            read_roots: Vec::new(),
            allow_net: Vec::new(),
            max_cost: None,
            live: None,
            overwrite: false,
            placement: Arc::new(placement::Local),
        }
    }

    /// The output root every artifact lands under.
    pub fn out_dir(&self) -> &Path {
        &self.settings.out_dir
    }

    /// This runtime with its SPAWN siblings and CALL callees placed by `placement` (see
    /// [`Placement`]), everything else the same: for a placement that belongs to one run, as
    /// Restate's belongs to the run's invocation.
    pub fn placed(&self, placement: Arc<dyn Placement>) -> Runtime {
        Runtime {
            settings: Arc::new(Settings {
                placement,
                ..(*self.settings).clone()
            }),
        }
    }

    /// Checks (applying mechanical repairs, each a deviation), lowers and resolves a program
    /// once, for any number of runs.
    pub fn prepare(&self, program: &Program, source_map: Option<&SourceMap>) -> Arc<Prepared> {
        Arc::new(Prepared::new(
            Arc::new(program.clone()),
            source_map.map(std::borrow::Cow::Borrowed),
            &self.settings.tools,
        ))
    }

    /// [`Runtime::prepare`] of a program the caller shares rather than copies, with its source
    /// map given up: the prepared program is `program` itself unless a repair changes it (a
    /// large program is held once), and the map — read for the findings and each step's line
    /// — is dropped before the plan is built, not kept for the run.
    pub fn prepare_shared(
        &self,
        program: Arc<Program>,
        source_map: Option<SourceMap>,
    ) -> Arc<Prepared> {
        Arc::new(Prepared::new(
            program,
            source_map.map(std::borrow::Cow::Owned),
            &self.settings.tools,
        ))
    }

    /// Runs a program to its TERMINAL, a fault, or a pause for human input.
    pub async fn run(
        &self,
        program: &Program,
        source_map: Option<&SourceMap>,
        inputs: Inputs,
    ) -> RunOutcome {
        let prepared = self.prepare(program, source_map);
        self.run_prepared(&prepared, inputs).await
    }

    /// Runs a prepared program.
    pub async fn run_prepared(&self, prepared: &Arc<Prepared>, inputs: Inputs) -> RunOutcome {
        let values: Vec<(usize, Value)> = inputs
            .values
            .into_iter()
            .filter_map(|(n, v)| prepared.names.index(&n).map(|c| (c, v)))
            .collect();
        let run = machine::Run::new(
            self.settings.clone(),
            prepared.clone(),
            inputs.task,
            &values,
            0,
        );
        if let Some(out) = self.no_model(prepared) {
            return out;
        }
        run.drive(0).await
    }

    /// The fault of a program with a slot no model of this run can fill (no model at all, or
    /// a tier it does not define), found before the first step.
    fn no_model(&self, prepared: &Arc<Prepared>) -> Option<RunOutcome> {
        if prepared.not_runnable.is_some() || !prepared.has_slots {
            return None;
        }
        let (step, why) = prepared.steps.iter().filter(|s| s.model).find_map(|s| {
            let chain = match self.settings.models.for_slot(s.tier.as_deref()) {
                Ok(chain) => chain,
                Err(why) => return Some((s, why)),
            };
            let limit = self.settings.max_cost?;
            let unpriced = chain
                .links()
                .iter()
                .find(|l| l.price.is_none() && !l.model.is_scripted())?;
            let name = unpriced.model.name();
            Some((
                s,
                format!(
                    "the run has a cost budget (`--max-cost` ${limit}) and the model `{name}` it may ask has no price; give it one in ais.toml (`[prices.\"{name}\"]` with `input = …` and `output = …`, dollars per million tokens)"
                ),
            ))
        })?;
        let run = machine::Run::new(self.settings.clone(), prepared.clone(), None, &[], 0);
        let mut out = run.outcome(Status::Fault);
        out.fault = Some(Fault {
            kind: FaultKind::NotRunnable,
            instruction: step.id.clone(),
            line: step.line,
            message: format!("the model slot `{}` cannot be filled: {why}", step.id),
        });
        Some(out)
    }

    /// What a journal records at the start of a run of `prepared` with `inputs`: the program's
    /// name, digest and canonical AG-IR, the task and input values, and the caller's `meta`.
    pub fn run_start(
        &self,
        id: impl Into<String>,
        prepared: &Prepared,
        inputs: &Inputs,
        meta: serde_json::Value,
    ) -> journal::RunStart {
        // The canonical text is written once, for the record and (when not yet known) the digest.
        let (source, digest) = prepared.canonical();
        journal::RunStart {
            id: id.into(),
            program: prepared
                .program
                .name
                .clone()
                .or_else(|| prepared.program.walker.as_ref()?.name.clone())
                .unwrap_or_default(),
            digest: digest.to_owned(),
            source,
            task: inputs.task.clone().unwrap_or_default(),
            inputs: inputs
                .values
                .iter()
                .map(|(n, v)| (n.clone(), v.to_json()))
                .collect(),
            meta,
        }
    }

    /// Runs a prepared program with every step committed to `journal` and every effect going
    /// through it (see [`journal`]); a run that stops early continues with
    /// [`Runtime::resume_journaled`].
    pub async fn run_journaled(
        &self,
        prepared: &Arc<Prepared>,
        inputs: Inputs,
        journal: Arc<dyn journal::Journal>,
    ) -> RunOutcome {
        let values: Vec<(usize, Value)> = inputs
            .values
            .into_iter()
            .filter_map(|(n, v)| prepared.names.index(&n).map(|c| (c, v)))
            .collect();
        if let Some(out) = self.no_model(prepared) {
            return out;
        }
        let run = machine::durable::fresh(
            self.settings.clone(),
            prepared.clone(),
            inputs.task,
            &values,
            journal,
        );
        run.drive(0).await
    }

    /// Runs one SPAWN sibling that another process's placement handed over
    /// ([`Placement`]) over `prepared` — the program the job names by its digest —
    /// with its effects journaled on `journal` when given. A job of another program or
    /// another step is refused with the fault `invalid_handle`.
    pub async fn run_sibling(
        &self,
        prepared: &Arc<Prepared>,
        job: SiblingJob,
        journal: Option<Arc<dyn journal::Journal>>,
    ) -> SiblingOutcome {
        machine::handover::run_job(self.settings.clone(), prepared.clone(), job, journal).await
    }

    /// Runs `prepared` as the callee of a CALL that another process's placement handed over
    /// ([`placement::CallJob`]): `values` bound by carry name, at most `max_steps`
    /// steps, `depth` CALLs deep, every step committed to `journal` — what the caller's
    /// in-process sub-run would do. A callee that pauses for a human comes back with its
    /// saved state ([`placement::CallPause`]): the caller pauses with it, and its resume
    /// continues the callee.
    pub async fn run_callee(
        &self,
        prepared: &Arc<Prepared>,
        job: &CallJob,
        journal: Arc<dyn journal::Journal>,
    ) -> placement::CallOutcome {
        let values: Vec<(usize, Value)> = job
            .values
            .iter()
            .filter_map(|(n, v)| Some((prepared.names.index(n)?, Value::from_json(v))))
            .collect();
        let mut run = machine::durable::fresh(
            self.settings.clone(),
            prepared.clone(),
            Some(job.task.clone()),
            &values,
            journal,
        );
        run.max_steps = job.max_steps;
        run.depth = job.depth;
        machine::handover::run_call(run).await
    }

    /// Continues a journaled run that did not finish — crashed, stopped at an effect in
    /// flight, or paused for a human (then `answer` is the human's answer). Nothing the journal
    /// recorded runs again. `start` is what the journal recorded at the start (its program
    /// digest is the caller's to compare with `prepared`'s: [`Prepared::digest`]).
    pub async fn resume_journaled(
        &self,
        prepared: &Arc<Prepared>,
        journal: Arc<dyn journal::Journal>,
        start: &journal::RunStart,
        answer: Option<String>,
    ) -> RunOutcome {
        machine::durable::resume(
            self.settings.clone(),
            prepared.clone(),
            journal,
            start,
            answer,
        )
        .await
    }

    /// Replays a finished, journaled run on `prepared` (see [`journal::Recording`]): the program
    /// runs again from its first step with the recorded task and inputs, every slot answered
    /// from the recording by instruction and request — never by a model — and every tool
    /// from the recording ([`ToolReplay::Journal`](journal::ToolReplay)) or live. A
    /// human answer the run was given is given again where the replay pauses. Nothing is
    /// written to the recorded run. [`Replay::matches`](journal::Replay::matches)
    /// says whether the program still behaves as recorded.
    ///
    /// A run recorded in memory, replayed after the program's doc changed:
    ///
    /// ```
    /// use ais_rt::journal::{MemoryJournal, Recording, ToolReplay};
    /// use ais_rt::{Inputs, Runtime, Status};
    /// use ais_rt::llm::ScriptedModel;
    /// use std::sync::Arc;
    ///
    /// let text = |doc: &str| format!(r#"
    /// walker:
    ///   carries:
    ///     task: {{type: str, role: input}}
    ///     draft: {{type: str, produced_by: write}}
    /// nodes:
    ///   - {{id: write, type: GEN-RAW, doc: "{doc}", reads: [task], writes: [draft]}}
    ///   - {{id: done, type: TERMINAL, reads: [draft]}}
    /// edges:
    ///   - {{from: write, to: done}}
    /// "#);
    /// let program = ais_core::agir::read(&text("Write a draft."))?.program;
    /// let model = ScriptedModel::from_json("s.json".as_ref(), serde_json::json!({"write": ["A draft."]}))?;
    /// let out = tempfile::tempdir()?;
    /// let runtime = Runtime::builder().model(Arc::new(model)).out_dir(out.path().into()).build();
    /// let prepared = runtime.prepare(&program, None);
    /// let inputs = Inputs::parse(&program, Some("notes".into()), &[])?;
    /// let start = runtime.run_start("run-1", &prepared, &inputs, serde_json::Value::Null);
    /// let journal = Arc::new(MemoryJournal::new("run-1"));
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let first = rt.block_on(runtime.run_journaled(&prepared, inputs, journal.clone()));
    /// assert_eq!(first.status, Status::Ok);
    /// let recording = rt.block_on(Recording::from_memory(&journal, start))?;
    ///
    /// // The same program replays without its model and matches.
    /// let replay = rt.block_on(runtime.replay(&prepared, &recording, ToolReplay::Journal))?;
    /// assert!(replay.matches());
    ///
    /// // Another doc is a miss at `write`, saying what changed.
    /// let edited = ais_core::agir::read(&text("Write a short draft."))?.program;
    /// let replay = rt.block_on(runtime.replay(&runtime.prepare(&edited, None), &recording, ToolReplay::Journal))?;
    /// assert!(!replay.matches());
    /// assert_eq!(replay.misses[0].effect.instruction, "write");
    /// assert_eq!(replay.misses[0].differs, ["the doc changed"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn replay(
        &self,
        prepared: &Arc<Prepared>,
        recording: &journal::Recording,
        tools: journal::ToolReplay,
    ) -> Result<journal::Replay, journal::ReplayError> {
        machine::replay::replay(&self.settings, prepared.clone(), recording, tools).await
    }

    /// Resumes a run paused for human input from its handle, with the human's answer.
    pub async fn resume(
        &self,
        program: &Program,
        source_map: Option<&SourceMap>,
        handle: &Path,
        answer: String,
    ) -> RunOutcome {
        let prepared = self.prepare(program, source_map);
        self.resume_prepared(&prepared, handle, answer).await
    }

    /// [`Runtime::resume`] of a program already prepared (by [`Runtime::prepare`] or
    /// [`Runtime::prepare_shared`]).
    pub async fn resume_prepared(
        &self,
        prepared: &Arc<Prepared>,
        handle: &Path,
        answer: String,
    ) -> RunOutcome {
        machine::pause::resume(self.settings.clone(), prepared.clone(), handle, answer).await
    }
}

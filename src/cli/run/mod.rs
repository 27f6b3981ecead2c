//! `ais run` and `ais resume`: execute a program with the runtime, show its progress and its
//! report.
//!
//! Exit status: 0 when the run ends `ok`; 1 when it ends `error` (a failure no ROUTE tested)
//! or `fault`; 3 when it pauses for human input (`input_required`); 2 when the program cannot
//! be read, has no runnable form (check outcome `failed`), or the command itself cannot start
//! (a bad argument, no model for a program with slots, an unreadable scripted file, a resume
//! handle that is missing, malformed or for another program).
//!
//! Every run is journaled (`journal`): each step committed to `<out>/.ais/runs.db` (or
//! `--journal PATH`) before the next starts, with what `ais resume RUN_ID` needs to continue it
//! — the program's path, the model spec, the output root, the step budget. Exit status 4: the
//! run stopped at an effect that was in flight when an earlier attempt was killed.
//!
//! A run started with `--no-journal` that pauses leaves a resume handle under the output root
//! (written by the runtime) and, beside it, `<handle>.cli.json` (the same record, sealed with
//! the handle's text); `ais resume HANDLE.json` continues it, and removes both.
use super::files::read_source;
use super::{CliError, Failure, Output, mcp, shown};
use ais::agir::{self, Limits};
use ais::render;
use ais::rt::llm::{self, Model, Models, ModelsFile, ScriptedModel};
use ais::rt::trace::{JsonLinesSink, Tee, TraceSink, TracingSink};
use ais::rt::{FaultKind, Inputs, RunOutcome, Runtime, Status};
use ais::{Program, SourceMap};
use clap::ValueEnum;
use std::collections::BTreeMap;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

pub(crate) mod bounds;
pub(super) mod journal;
mod lock;
mod log;
#[cfg(feature = "otlp")]
mod otlp;
mod record;
mod replay;
pub(super) mod restate;
mod seal;
pub(super) mod show;

pub use replay::{ReplayArgs, replay};

use log::install_tracing;
use record::{read_record, record_path, remove_handle, write_record};
use show::{Progress, print_human, scripted_note};

/// How `ais run` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The status, the report, the deviations and the fault as text.
    Human,
    /// One JSON object: `{"status", "report", "deviations", "fault", "steps", …}`.
    Json,
}

/// Arguments of `ais run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The program: an AG-IR file.
    pub file: PathBuf,
    /// The task text (seeds the `task` carry).
    #[arg(long)]
    pub task: String,
    /// An input carry's value, typed by the carry's declaration (repeatable).
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// Do not journal the run (it cannot be resumed after a crash; a pause leaves a handle
    /// file instead).
    #[arg(long, conflicts_with_all = ["journal", "journal_full"])]
    pub no_journal: bool,
    /// Sync every step's commit to the disk (SQLite `synchronous=FULL`): the journal survives a
    /// power loss, not only a crash, at the cost of an fsync per step.
    #[arg(long)]
    pub journal_full: bool,
    #[command(flatten)]
    pub options: Options,
}

/// Arguments of `ais resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The run's id (printed when it started; listed by `ais runs`) — or, for a run started
    /// with `--no-journal`, the resume handle file it wrote.
    #[arg(value_name = "RUN_ID")]
    pub run: String,
    /// The answer to the question the run paused on.
    #[arg(long)]
    pub answer: Option<String>,
    /// Run the step that was in flight when the run was killed again, although it may have run
    /// once.
    #[arg(long, conflicts_with = "mark_done")]
    pub retry: bool,
    /// Treat the effect that was in flight when the run was killed as done (its result `null`)
    /// and go on.
    #[arg(long)]
    pub mark_done: bool,
    /// Resume although the program changed since the run started.
    #[arg(long)]
    pub accept_changed_program: bool,
    /// The program, when it moved (default: the one the run started with).
    #[arg(long)]
    pub program: Option<PathBuf>,
    #[command(flatten)]
    pub options: Options,
}

/// What `run` and `resume` share.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// The model that fills the program's slots: `scripted:FILE.json` (canned responses), or a
    /// live provider such as `openai:MODEL`. Default: the `AIS_MODEL` environment variable.
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// The model configuration: named tiers a slot's `model:` picks, fallback chains, prices
    /// [default: `ais.toml` in the current directory, else beside the program, when there is
    /// one]. With one, `--model` may name a tier.
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,
    /// The output root: every artifact lands under it [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write a trace, one JSON object per step (JSON Lines), to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Export the run as an OpenTelemetry trace to this OTLP/HTTP collector
    /// (`http://127.0.0.1:4318`; spans per the GenAI semantic conventions).
    #[cfg(feature = "otlp")]
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// With `--otlp`: also put the slots' message contents on the `chat` spans.
    #[cfg(feature = "otlp")]
    #[arg(long, requires = "otlp")]
    pub otlp_content: bool,
    /// The step budget [default: 10000].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// The wall-clock limit of one tool call, in seconds; a tool past it is killed with every
    /// process it started [default: 60].
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub tool_timeout: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// For an AGS graph (`*.agraph.yaml`, `*.agraph.json`): write its AGS run record (JSON) to
    /// PATH.
    #[arg(long, value_name = "PATH")]
    pub run_record: Option<PathBuf>,
    /// For an AGS graph: let its `command` criteria run — they execute command lines the graph
    /// wrote, confined as `command` tools are (sandboxed writes, scrubbed environment).
    #[arg(long)]
    pub allow_commands: bool,
    /// The journal [default: OUT/.ais/runs.db].
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    #[command(flatten)]
    pub bounds: bounds::Bounds,
    #[command(flatten)]
    pub engine: restate::EngineArgs,
}

/// Everything a run needs, resolved from the arguments.
struct Setup {
    file: PathBuf,
    source: String,
    /// The program, shared with its prepared form (held once).
    program: Arc<Program>,
    /// Its source positions, until it is prepared ([`Setup::prepare_run`]): the prepared form
    /// keeps what a run reports (the findings, each step's line).
    source_map: Option<SourceMap>,
    models: ais::rt::llm::Models,
    model_spec: Option<String>,
    /// The model configuration the run read, when it read one.
    models_file: Option<PathBuf>,
    scripted: Option<Arc<ScriptedModel>>,
    out: PathBuf,
    max_steps: u64,
    tool_timeout: Option<u64>,
    trace: Option<Arc<JsonLinesSink>>,
    #[cfg(feature = "otlp")]
    otlp: Option<Arc<ais::rt::otlp::OtlpSink>>,
    progress: Arc<Progress>,
    /// With `--format human` and no terminal: the run's position, and the line every 5 s.
    pulse: Option<(Arc<ais::rt::trace::Pulse>, show::Heartbeat)>,
    format: Format,
    /// The run's journal (none with `--no-journal`, or for a handle resume).
    journaled: Option<journal::Journaled>,
    bounds: bounds::Bounds,
    /// An AGS graph's run-record status, set by [`Setup::wrap_up`]: any but `succeeded` fails.
    ags_status: Option<String>,
}

/// `ais run`.
pub fn run(args: RunArgs, output: &mut Output) -> ExitCode {
    install_tracing(output);
    if args.options.engine.restate() {
        return finish(restate::run(args, output), output);
    }
    finish(run_inner(args, output), output)
}

/// `ais resume`.
pub fn resume(args: ResumeArgs, output: &mut Output) -> ExitCode {
    install_tracing(output);
    if args.options.engine.restate() {
        return finish(restate::resume(args, output), output);
    }
    finish(resume_inner(args, output), output)
}

fn run_inner(args: RunArgs, output: &mut Output) -> Result<u8, Failure> {
    let setup = prepare(&args.file, None, &args.options, output)?;
    let mut pairs = Vec::with_capacity(args.inputs.len());
    for pair in &args.inputs {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(CliError::new(
                format!("`--input {pair}` has no `=`"),
                "write `--input NAME=VALUE`, e.g. `--input approved=true`",
            )
            .into());
        };
        pairs.push((name.trim().to_owned(), value.to_owned()));
    }
    let inputs = Inputs::parse(&setup.program, Some(args.task), &pairs).map_err(|e| {
        CliError::new(
            format!("`--input {}`: {}", e.name, e.message),
            "each `--input` names a `role: input` carry and a value of its type",
        )
    })?;
    let mut setup = setup;
    let _lock = lock::take(&setup.out)?;
    let (tokio, servers, runtime) = setup.engine()?;
    let started = std::time::SystemTime::now();
    let prep = setup.prepare_run(&runtime);
    if !args.no_journal {
        let path = journal::journal_path(args.options.journal.as_deref(), &setup.out);
        let j = journal::begin(&setup, &runtime, &prep, &inputs, &path, args.journal_full)?;
        if setup.format == Format::Human {
            writeln!(output.err, "{}", journal::note(&j))?;
        }
        setup.journaled = Some(j);
    }
    let outcome = match &setup.journaled {
        Some(j) => tokio.block_on(runtime.run_journaled(&prep, inputs, j.journal.clone())),
        None => tokio.block_on(runtime.run_prepared(&prep, inputs)),
    };
    setup.wrap_up(&tokio, servers, &outcome, started, &args.options)?;
    let code = conclude(&setup, &runtime, &tokio, &prep, outcome, output);
    leave(tokio, prep);
    code
}

fn resume_inner(args: ResumeArgs, output: &mut Output) -> Result<u8, Failure> {
    let as_handle = Path::new(&args.run);
    if args.run.ends_with(".json") && as_handle.is_file() {
        return resume_handle(args, output);
    }
    let out = args
        .options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let path = journal::journal_path(args.options.journal.as_deref(), &out);
    if !path.is_file() {
        return Err(CliError::new(
            format!("there is no journal at `{}` to resume run {} from", shown(&path), args.run),
            "name the output root the run used with `--out DIR`, or its journal with `--journal PATH`",
        )
        .into());
    }
    let store = journal::open(&path, false)?;
    let policy = match (args.retry, args.mark_done) {
        (true, _) => ais::rt::journal::InFlight::Retry,
        (_, true) => ais::rt::journal::InFlight::MarkDone,
        _ => ais::rt::journal::InFlight::Stop,
    };
    let j = journal::take(store, &args.run, args.answer.is_some(), policy)?;
    let meta = journal::meta(&j.start)?;
    seal::verify(&j.start, &meta, &path, args.options.out.as_deref())?;
    let mut options = args.options;
    options.model = options.model.or(meta.model.clone());
    options.models = options.models.or(meta.models.clone());
    options.out = options.out.or(Some(meta.out.clone()));
    options.max_steps = options.max_steps.or(Some(meta.max_steps));
    options.bounds = options.bounds.or(meta.bounds.clone());
    let file = args.program.clone().unwrap_or(meta.program.clone());
    let mut setup = prepare(&file, None, &options, output)?;
    let _lock = lock::take(&setup.out)?;
    if let Some(s) = &setup.scripted {
        journal::skip_scripted(&j, s)?;
    }
    let (tokio, servers, runtime) = setup.engine()?;
    let prep = setup.prepare_run(&runtime);
    if prep.digest() != j.start.digest && !args.accept_changed_program {
        return Err(CliError::new(
            format!(
                "`{}` changed since run {} started: {}",
                shown(&file),
                j.id,
                journal::changes(&j.start, &setup.program)
            ),
            format!("resume against the changed program only if its completed steps still hold: `ais resume {} --accept-changed-program`", j.id),
        )
        .into());
    }
    if setup.format == Format::Human {
        writeln!(output.err, "{}", journal::note(&j))?;
    }
    let started = std::time::SystemTime::now();
    let outcome =
        tokio.block_on(runtime.resume_journaled(&prep, j.journal.clone(), &j.start, args.answer));
    setup.wrap_up(&tokio, servers, &outcome, started, &options)?;
    setup.journaled = Some(j);
    let code = conclude(&setup, &runtime, &tokio, &prep, outcome, output);
    leave(tokio, prep);
    code
}

/// `ais resume HANDLE.json`: a run started with `--no-journal` that paused.
fn resume_handle(args: ResumeArgs, output: &mut Output) -> Result<u8, Failure> {
    let handle = PathBuf::from(&args.run);
    let Some(answer) = args.answer else {
        return Err(CliError::new(
            format!(
                "resuming `{}` needs the answer to its question",
                shown(&handle)
            ),
            "give it: `ais resume HANDLE --answer TEXT`",
        )
        .into());
    };
    let args = HandleResume {
        handle,
        answer,
        program: args.program,
        options: args.options,
    };
    resume_from_handle(args, output)
}

/// A handle resume's arguments.
struct HandleResume {
    handle: PathBuf,
    answer: String,
    program: Option<PathBuf>,
    options: Options,
}

fn resume_from_handle(args: HandleResume, output: &mut Output) -> Result<u8, Failure> {
    let record_path = record_path(&args.handle);
    let record = read_record(&args.handle)?;
    let file = match (&args.program, &record) {
        (Some(p), _) => p.clone(),
        (None, Some(r)) => r.meta.program.clone(),
        (None, None) => {
            return Err(CliError::new(
                format!(
                    "there is no record of the run beside `{}` (`{}`)",
                    shown(&args.handle),
                    shown(&record_path)
                ),
                "name the program the run was started with: `ais resume HANDLE --answer TEXT --program FILE.agir`",
            )
            .into());
        }
    };
    let mut options = args.options;
    if let Some(r) = &record {
        options.model = options.model.or_else(|| r.meta.model.clone());
        options.models = options.models.or_else(|| r.meta.models.clone());
        options.out = options.out.or_else(|| Some(r.meta.out.clone()));
        options.max_steps = options.max_steps.or(Some(r.meta.max_steps));
        options.bounds = options.bounds.or(r.meta.bounds.clone());
    }
    // A handle lives at `<out>/.ais/resume/<name>.json`.
    if options.out.is_none() {
        options.out = args
            .handle
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .map(Path::to_owned);
    }
    let used = record.map(|r| r.scripted_used);
    let mut setup = prepare(&file, used.as_ref(), &options, output)?;
    let _lock = lock::take(&setup.out)?;
    let started = std::time::SystemTime::now();
    let (tokio, servers, runtime) = setup.engine()?;
    let prep = setup.prepare_run(&runtime);
    let outcome = tokio.block_on(runtime.resume_prepared(&prep, &args.handle, args.answer));
    if handle_used(&outcome) {
        remove_handle(&args.handle);
    }
    setup.wrap_up(&tokio, servers, &outcome, started, &options)?;
    let code = conclude(&setup, &runtime, &tokio, &prep, outcome, output);
    leave(tokio, prep);
    code
}

/// Reads the program, resolves the model, the output root and the trace; everything that can
/// fail before the first step.
fn prepare(
    file: &Path,
    scripted_used: Option<&BTreeMap<String, usize>>,
    options: &Options,
    output: &mut Output,
) -> Result<Setup, Failure> {
    let limits = Limits::default();
    if options.run_record.is_some() && !ais::ags::is_ags_path(file) {
        return Err(CliError::new(
            "`--run-record` writes an AGS run record, for an AGS graph",
            "run a `*.agraph.yaml` or `*.agraph.json`, or drop `--run-record`",
        )
        .into());
    }
    let (source, read) = if ais::ags::is_ags_path(file) {
        let (text, doc) = super::ags_run::program(file, options.allow_commands, output)?;
        (text, Ok(doc))
    } else {
        let source = read_source(file, &limits)?;
        let read = agir::read_with_limits(&source, &limits);
        (source, read)
    };
    let doc = match read {
        Ok(doc) => doc,
        Err(err) => {
            let text = render::render_read_error(&err, &source, &shown(file), output.color_err);
            writeln!(output.err, "{text}")?;
            return Err(Failure::Exit(2));
        }
    };
    let spec = options
        .model
        .clone()
        .or_else(ais::rt::llm::default_spec)
        .filter(|s| !s.trim().is_empty());
    let config = ModelsFile::discover(options.models.as_deref(), super::graph::program_dir(file))
        .map_err(|e| {
        CliError::new(
            e.message,
            "fix the model configuration, or name another with `--models FILE`",
        )
    })?;
    if let Some(config) = &config {
        let found = ais::check_tiers(&doc.program, config.tier_names(), &doc.source_map);
        if found.iter().any(|f| f.severity >= ais::Severity::Error) {
            let text = render::render_findings(&found, &source, &shown(file), output.color_err);
            write!(output.err, "{text}")?;
            return Err(Failure::Exit(2));
        }
    }
    let (models, scripted) = open_models(config.as_ref(), spec.as_deref())?;
    if let Some(s) = &scripted {
        if let Some(used) = scripted_used {
            s.skip(used);
        }
        let unknown = s.unknown_ids(&doc.program);
        if !unknown.is_empty() {
            let list: Vec<String> = unknown.iter().map(|k| format!("`{k}`")).collect();
            let note = format!(
                "the scripted responses name {}, which {} no instruction of `{}`",
                list.join(", "),
                if unknown.len() == 1 { "is" } else { "are" },
                shown(file)
            );
            writeln!(
                output.err,
                "{}",
                render::render_note(&note, output.color_err)
            )?;
        }
    }
    let su = || doc.program.instructions().iter().filter(|i| i.is_su());
    if !models.is_empty()
        && let Some((slot, why)) = su().find_map(|i| {
            models
                .for_slot(i.model.as_deref())
                .err()
                .map(|why| (i, why))
        })
    {
        return Err(CliError::new(
            format!("the model slot `{}` cannot be filled: {why}", slot.id),
            "name the models with `--model SPEC`, or define the tiers in ais.toml (`--models FILE`)",
        )
        .into());
    }
    if let Some((slot, error)) =
        su().find_map(|i| models.unavailable(i.model.as_deref()).map(|e| (i, e)))
    {
        return Err(CliError::new(
            format!(
                "the model slot `{}` uses a model that cannot be set up: {}",
                slot.id, error.message
            ),
            "set what the message names, or change the tier in the model configuration",
        )
        .into());
    }
    if models.is_empty()
        && let Some(slot) = su().next()
    {
        return Err(CliError::new(
            format!(
                "`{}` has model slots (the first is `{}`) and no model is named",
                shown(file),
                slot.id
            ),
            "name one with `--model SPEC` or the AIS_MODEL environment variable: `--model scripted:FILE.json` runs with canned responses (no API key), `--model openai:gpt-4o-mini` a live model",
        )
        .into());
    }
    let out = options.out.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&out).map_err(|e| {
        CliError::new(
            format!("cannot create the output root `{}`: {e}", shown(&out)),
            "name a writable directory with `--out DIR`",
        )
    })?;
    let trace = match &options.trace {
        None => None,
        Some(path) => Some(Arc::new(JsonLinesSink::create(path).map_err(|e| {
            CliError::new(
                format!("cannot create the trace file `{}`: {e}", shown(path)),
                "name a writable file with `--trace FILE`",
            )
        })?)),
    };
    #[cfg(feature = "otlp")]
    let otlp = otlp::sink(options, &doc)?;
    let progress = Arc::new(Progress::new());
    let pulse = heartbeat(&doc, file, options.format, &progress);
    Ok(Setup {
        pulse,
        file: file.to_owned(),
        source,
        program: Arc::new(doc.program),
        source_map: Some(doc.source_map),
        models,
        model_spec: spec,
        models_file: config.map(|c| c.path),
        scripted,
        out,
        max_steps: options.max_steps.unwrap_or(ais::rt::DEFAULT_MAX_STEPS),
        tool_timeout: options.tool_timeout,
        trace,
        #[cfg(feature = "otlp")]
        otlp,
        progress,
        format: options.format,
        journaled: None,
        bounds: options.bounds.clone(),
        ags_status: None,
    })
}

/// A model, and the same model as a [`ScriptedModel`] when it is one.
type Opened = (Arc<dyn Model>, Option<Arc<ScriptedModel>>);

/// The note at the end of a scripted run that left answers unasked: usually the run took
/// another path than the script expected (a failed step, a branch not taken).
fn unused_answers_note(unused: &BTreeMap<String, usize>, output: &mut Output) -> io::Result<()> {
    if unused.is_empty() {
        return Ok(());
    }
    let total: usize = unused.values().sum();
    let keys: Vec<String> = unused.iter().map(|(k, n)| format!("`{k}` ({n})")).collect();
    let note = format!(
        "{total} scripted answer{} never asked for: {} — the run took another path than the script expected",
        if total == 1 { " was" } else { "s were" },
        keys.join(", ")
    );
    writeln!(
        output.err,
        "{}",
        render::render_note(&note, output.color_err)
    )
}

/// The model a spec names; a scripted one is also returned as itself, so that its position in
/// the script can be recorded when the run pauses.
pub(super) fn open_model(spec: &str) -> Result<Opened, CliError> {
    let help = "`--model scripted:FILE.json` runs with canned responses; see `ais run --help`";
    if let Some(file) = spec.trim().strip_prefix("scripted:")
        && !file.is_empty()
    {
        let scripted = Arc::new(
            ScriptedModel::from_file(Path::new(file))
                .map_err(|e| CliError::new(e.message, help))?,
        );
        return Ok((scripted.clone(), Some(scripted)));
    }
    let model = llm::from_spec(spec).map_err(|e| CliError::new(e.message, help))?;
    Ok((model, None))
}

/// The models of a run: the configuration's tiers when there is one, and the default `spec`
/// names (a tier of the configuration, or a spec). A scripted default is also returned as
/// itself, so that its position in the script can be recorded when the run pauses.
fn open_models(
    config: Option<&ModelsFile>,
    spec: Option<&str>,
) -> Result<(Models, Option<Arc<ScriptedModel>>), CliError> {
    let help = "fix the model configuration, or name another with `--models FILE`";
    let Some(config) = config else {
        return Ok(match spec {
            None => (Models::default(), None),
            Some(spec) => {
                let (model, scripted) = open_model(spec)?;
                (Models::single(model), scripted)
            }
        });
    };
    let tier = spec.filter(|s| config.tiers.contains_key(s.trim()));
    let mut models = config
        .build(tier, &llm::open)
        .map_err(|e| CliError::new(e.message, help))?;
    let mut scripted = None;
    if let Some(spec) = spec.filter(|_| tier.is_none()) {
        if !spec.contains(':') {
            // Not a tier and not a spec: the configuration's own error, with its did-you-mean.
            config
                .build(Some(spec), &llm::open)
                .map_err(|e| CliError::new(e.message, help))?;
        }
        let (model, s) = open_model(spec)?;
        // A model given as a spec keeps the price the configuration gives it.
        let price = config.prices.get(spec.trim()).copied();
        let link = llm::Link { model, price };
        let name = link.model.name().to_owned();
        models.set_default(Arc::new(llm::Chain::new(name, vec![link])));
        scripted = s;
    }
    Ok((models, scripted))
}

/// The line every 5 s of a run shown as text where no progress bar is drawn.
fn heartbeat(
    doc: &agir::Document,
    file: &Path,
    format: Format,
    progress: &Progress,
) -> Option<(Arc<ais::rt::trace::Pulse>, show::Heartbeat)> {
    if format != Format::Human || progress.visible() {
        return None;
    }
    let pulse = Arc::new(ais::rt::trace::Pulse::default());
    let ids = doc
        .program
        .instructions()
        .iter()
        .map(|n| n.id.clone())
        .collect();
    let beat = show::Heartbeat::start(pulse.clone(), ids, shown(file));
    Some((pulse, beat))
}

impl Setup {
    /// What runs the program: the async runtime, the program's MCP servers (started and
    /// attached to the built-in tools) and the [`Runtime`].
    fn engine(
        &mut self,
    ) -> Result<
        (
            tokio::runtime::Runtime,
            Option<ais::rt::mcp::McpServers>,
            Runtime,
        ),
        Failure,
    > {
        let tokio = tokio_runtime()?;
        let mut tools = ais::rt::ToolRegistry::with_builtins();
        super::ags_run::register_tools(&self.file, &mut tools);
        super::lift_compile::register_tools(&self.program, &mut tools, Some(&self.models));
        let program = Arc::make_mut(&mut self.program);
        let servers = tokio.block_on(mcp::start(&self.file, program, &mut tools))?;
        let runtime = self.runtime(tools);
        Ok((tokio, servers, runtime))
    }

    /// The program prepared for this run (once: a resume at the terminal reuses it), sharing
    /// the program; the source map is let go here, and the source text too when the program
    /// can run (only a program that cannot has its findings shown with it).
    fn prepare_run(&mut self, runtime: &Runtime) -> Arc<ais::rt::Prepared> {
        let prep = runtime.prepare_shared(self.program.clone(), self.source_map.take());
        if prep.runnable() {
            self.source = String::new();
        }
        prep
    }

    /// After a run: the MCP servers stopped (their logs kept under the output root), and an
    /// AGS graph's run record written.
    fn wrap_up(
        &mut self,
        tokio: &tokio::runtime::Runtime,
        servers: Option<ais::rt::mcp::McpServers>,
        outcome: &RunOutcome,
        started: std::time::SystemTime,
        options: &Options,
    ) -> Result<(), Failure> {
        if let Some(servers) = servers {
            mcp::keep_logs(&self.out, &tokio.block_on(servers.shutdown()));
        }
        if ais::ags::is_ags_path(&self.file) {
            self.ags_status = super::ags_run::finish(
                &self.file,
                outcome,
                started,
                &self.out,
                options.run_record.as_deref(),
            )?;
        }
        Ok(())
    }

    /// The runtime of this run, with `tools` (the built-ins and the program's MCP tools).
    fn runtime(&self, tools: ais::rt::ToolRegistry) -> Runtime {
        // Step events are built only for a sink that shows them: the progress bar on a
        // terminal, the trace file, `RUST_LOG` output, an OTLP exporter.
        let mut sinks: Vec<Arc<dyn TraceSink>> = Vec::new();
        let mut live: Option<Arc<dyn ais::rt::llm::Live>> = None;
        if self.progress.visible() {
            sinks.push(self.progress.clone());
            // Answers stream to a terminal only.
            live = Some(self.progress.clone());
        }
        if let Some(t) = &self.trace {
            sinks.push(t.clone());
        }
        #[cfg(feature = "otlp")]
        if let Some(t) = &self.otlp {
            sinks.push(t.clone());
        }
        if tracing::enabled!(target: "ais::trace", tracing::Level::INFO) {
            sinks.push(Arc::new(TracingSink::new()));
        }
        let mut builder = Runtime::builder()
            .tools(tools)
            .out_dir(self.out.clone())
            .max_steps(self.max_steps);
        match sinks.len() {
            0 => {}
            1 => builder = builder.trace(sinks.remove(0)),
            _ => builder = builder.trace(Arc::new(Tee(sinks))),
        }
        builder = self.bounds.apply(builder);
        if let Some(live) = live {
            builder = builder.live(live);
        }
        if let Some((pulse, _)) = &self.pulse {
            builder = builder.pulse(pulse.clone());
        }
        // CALL targets resolve beside the program (a bare file name: the current directory).
        builder = builder.program_dir(super::graph::program_dir(&self.file).to_owned());
        builder = builder.models(self.models.clone());
        if let Some(secs) = self.tool_timeout {
            builder = builder.limits(ais::rt::ToolLimits {
                timeout: std::time::Duration::from_secs(secs),
                ..Default::default()
            });
        }
        builder.build()
    }
}

/// Asks for answers on a terminal while the run pauses, then reports and maps the status to
/// the exit code.
fn conclude(
    setup: &Setup,
    runtime: &Runtime,
    tokio: &tokio::runtime::Runtime,
    prep: &Arc<ais::rt::Prepared>,
    mut outcome: RunOutcome,
    output: &mut Output,
) -> Result<u8, Failure> {
    let scrubber = ais::rt::trace::Scrubber::from_env();
    show::redact(&mut outcome, &scrubber);
    let interactive = io::stdin().is_terminal();
    while interactive && outcome.status == Status::InputRequired {
        let Some(pause) = outcome.pause.clone() else {
            break;
        };
        let handle = pause.handle.clone();
        if handle.is_none() && setup.journaled.is_none() {
            break;
        }
        // Asked and answered with the progress display suspended, so it does not draw over
        // the prompt.
        let answer = setup.progress.suspend(|| -> io::Result<Option<String>> {
            if let Some(why) = &pause.refused {
                write!(output.err, "\nanswer refused: {why}")?;
            }
            write!(output.err, "\n{}\n> ", pause.question(None))?;
            output.err.flush()?;
            let mut answer = String::new();
            Ok((io::stdin().lock().read_line(&mut answer)? > 0).then_some(answer))
        })?;
        let Some(answer) = answer else {
            writeln!(output.err)?;
            break;
        };
        let answer = answer.trim_end_matches(['\n', '\r']).to_owned();
        outcome = match (&setup.journaled, handle) {
            (Some(j), _) => tokio.block_on(runtime.resume_journaled(
                prep,
                j.journal.clone(),
                &j.start,
                Some(answer),
            )),
            (None, Some(handle)) => {
                let out = tokio.block_on(runtime.resume_prepared(prep, &handle, answer));
                if handle_used(&out) {
                    remove_handle(&handle);
                }
                out
            }
            (None, None) => break,
        };
        show::redact(&mut outcome, &scrubber);
    }
    setup.progress.finish();
    if let Some((_, beat)) = &setup.pulse {
        beat.finish();
    }
    if let Some(s) = &setup.scripted
        && !matches!(outcome.status, Status::InputRequired | Status::Interrupted)
    {
        unused_answers_note(&s.unused(), output)?;
    }
    if outcome.status == Status::InputRequired
        && let Some(handle) = outcome.pause.as_ref().and_then(|p| p.handle.as_ref())
    {
        write_record(setup, handle)?;
    }
    #[cfg(feature = "otlp")]
    otlp::finish(setup.otlp.as_deref(), output)?;
    let trace_error = setup.trace.as_ref().and_then(|t| t.error());
    if let Some(e) = &trace_error {
        writeln!(
            output.err,
            "{}",
            render::render_error(
                e,
                Some("the trace is incomplete; check the disk and the path"),
                output.color_err
            )
        )?;
    }
    let not_runnable = outcome
        .fault
        .as_ref()
        .is_some_and(|f| f.kind == FaultKind::NotRunnable);
    if not_runnable && !outcome.findings.is_empty() {
        let text = render::render_findings(
            &outcome.findings,
            &setup.source,
            &shown(&setup.file),
            output.color_err,
        );
        write!(output.err, "{text}")?;
    }
    if outcome.status == Status::Ok
        && let Some(code) = super::lift_compile::concluded(&setup.program, &outcome.report, output)
    {
        return code;
    }
    match setup.format {
        Format::Json => {
            if outcome.scripted {
                writeln!(output.err, "{}", scripted_note(setup))?;
            }
            let mut v = outcome.to_json();
            if let (Some(j), Some(map)) = (&setup.journaled, v.as_object_mut()) {
                map.insert("run".into(), j.id.clone().into());
                map.insert("journal".into(), shown(j.store.path()).into());
            }
            writeln!(output.out, "{v}")?;
        }
        Format::Human => print_human(setup, &outcome, output)?,
    }
    Ok(match outcome.status {
        // A run whose trace was asked for and not written is no success.
        Status::Ok if trace_error.is_some() => 1,
        // An AGS graph whose run record says `failed` or `partial`: no success.
        Status::Ok
            if setup
                .ags_status
                .as_deref()
                .is_some_and(|s| s != "succeeded") =>
        {
            1
        }
        status => exit_code(status, outcome.fault.as_ref().map(|f| f.kind)),
    })
}

/// The exit status of a run from how it ended — the one map, for the embedded engine and for
/// Restate's: 0 `ok`; 1 `error`, or a `fault` of a run that started; 2 a `fault` of a run
/// that could not start (`not_runnable`, a resume's `invalid_handle`); 3 `input_required`;
/// 4 `interrupted`.
pub(super) fn exit_code(status: Status, fault: Option<FaultKind>) -> u8 {
    match status {
        Status::Ok => 0,
        Status::Fault
            if matches!(
                fault,
                Some(FaultKind::NotRunnable | FaultKind::InvalidHandle)
            ) =>
        {
            2
        }
        Status::Error | Status::Fault => 1,
        Status::InputRequired => 3,
        Status::Interrupted => 4,
    }
}

/// Whether a resume from a handle file used it up: not when the handle was refused, nor when
/// only the answer was (the run still waits on the same handle).
fn handle_used(outcome: &RunOutcome) -> bool {
    !invalid_handle(outcome) && outcome.pause.as_ref().is_none_or(|p| p.refused.is_none())
}

/// Whether a resume was refused for its handle (then the handle is kept).
fn invalid_handle(outcome: &RunOutcome) -> bool {
    outcome
        .fault
        .as_ref()
        .is_some_and(|f| f.kind == FaultKind::InvalidHandle)
}

/// Ends a run's command; the process exits next.
///
/// The async runtime is shut down without waiting for its blocking threads: a built-in stopped
/// at its timeout may still be blocked in the kernel (opening a FIFO nobody writes, reading a
/// device that never ends), and must not keep `ais` from exiting once the run has reported.
///
/// The prepared program (and through it the program, which nothing else outlives) is left to
/// the operating system instead of being freed: it is plain data, and freeing a large program's
/// plan, instructions and carries one allocation at a time, each a cache miss by then, cost
/// about 5 % of a 20,000-instruction chain's run and a growing share the larger the program
/// (`benches/run_scale.sh`). Everything that holds a resource (the journal's connection and
/// lease, the trace, the MCP servers) is dropped as usual, by its owner.
fn leave(tokio: tokio::runtime::Runtime, prep: Arc<ais::rt::Prepared>) {
    tokio.shutdown_background();
    std::mem::forget(prep);
}

pub(super) fn tokio_runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            CliError::new(
                format!("cannot start the async runtime: {e}"),
                "check the process's thread and file limits",
            )
        })
}

/// The exit code a run or resume ends with: the run's own, 0 when the reader of its output went
/// away (a broken pipe), else the failure's, reported as every command reports one.
fn finish(result: Result<u8, Failure>, output: &mut Output) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(failure) => super::stopped(failure, output),
    }
}

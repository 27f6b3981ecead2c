//! `ais run` and `ais resume`: execute a program with the runtime, show its progress and its
//! report.
//!
//! Exit status: 0 when the run ends `ok`; 1 when it ends `error` (a failure no ROUTE tested)
//! or `fault`; 3 when it pauses for human input (`input_required`); 2 when the program cannot
//! be read, has no runnable form (check outcome `failed`), or the command itself cannot start
//! (a bad argument, no model for a program with slots, an unreadable scripted file, a resume
//! handle that is missing, malformed or for another program).
//!
//! A paused run leaves a resume handle under the output root (written by the runtime) and,
//! beside it, `<handle>.cli.json`: what `ais resume` needs to continue the same run — the
//! program's path, the model spec, the output root, the step budget and, for a scripted
//! model, how many responses were used. Both are removed once a resume has run.
use super::files::read_source;
use super::{CliError, Failure, Output, shown};
use ais_core::agir::{self, Limits};
use ais_core::render;
use ais_rt::model::{self, Model, ScriptedModel};
use ais_rt::trace::{JsonLinesSink, Tee, TraceSink, TracingSink};
use ais_rt::{FaultKind, Inputs, RunOutcome, Runtime, Status};
use clap::ValueEnum;
use std::collections::BTreeMap;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod log;
mod record;
mod show;

use log::install_tracing;
use record::{read_record, record_path, remove_handle, write_record};
use show::{Progress, print_human, report_json, scripted_note};

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
    #[command(flatten)]
    pub options: Options,
}

/// Arguments of `ais resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The resume handle a paused run wrote (its path is in the paused run's output).
    pub handle: PathBuf,
    /// The answer to the question the run paused on.
    #[arg(long)]
    pub answer: String,
    /// The program, when the handle has no record of it beside it.
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
    /// The output root: every artifact lands under it [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write a trace, one JSON object per step (JSON Lines), to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The step budget [default: 10000].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Everything a run needs, resolved from the arguments.
struct Setup {
    file: PathBuf,
    source: String,
    doc: agir::Document,
    model: Option<Arc<dyn Model>>,
    model_spec: Option<String>,
    scripted: Option<Arc<ScriptedModel>>,
    out: PathBuf,
    max_steps: u64,
    trace: Option<Arc<JsonLinesSink>>,
    progress: Arc<Progress>,
    format: Format,
}

/// `ais run`.
pub fn run(args: RunArgs, output: &mut Output) -> ExitCode {
    install_tracing(output);
    finish(run_inner(args, output), output)
}

/// `ais resume`.
pub fn resume(args: ResumeArgs, output: &mut Output) -> ExitCode {
    install_tracing(output);
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
    let inputs = Inputs::parse(&setup.doc.program, Some(args.task), &pairs).map_err(|e| {
        CliError::new(
            format!("`--input {}`: {}", e.name, e.message),
            "each `--input` names a `role: input` carry and a value of its type",
        )
    })?;
    let runtime = setup.runtime();
    let tokio = tokio_runtime()?;
    let outcome =
        tokio.block_on(runtime.run(&setup.doc.program, Some(&setup.doc.source_map), inputs));
    conclude(&setup, &runtime, &tokio, outcome, output)
}

fn resume_inner(args: ResumeArgs, output: &mut Output) -> Result<u8, Failure> {
    let record_path = record_path(&args.handle);
    let record = read_record(&record_path)?;
    let file = match (&args.program, &record) {
        (Some(p), _) => p.clone(),
        (None, Some(r)) => r.program.clone(),
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
        options.model = options.model.or_else(|| r.model.clone());
        options.out = options.out.or_else(|| Some(r.out.clone()));
        options.max_steps = options.max_steps.or(Some(r.max_steps));
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
    let setup = prepare(&file, used.as_ref(), &options, output)?;
    let runtime = setup.runtime();
    let tokio = tokio_runtime()?;
    let outcome = tokio.block_on(runtime.resume(
        &setup.doc.program,
        Some(&setup.doc.source_map),
        &args.handle,
        args.answer,
    ));
    if !invalid_handle(&outcome) {
        remove_handle(&args.handle);
    }
    conclude(&setup, &runtime, &tokio, outcome, output)
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
    let source = read_source(file, &limits)?;
    let doc = match agir::read_with_limits(&source, &limits) {
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
        .or_else(|| std::env::var("AIS_MODEL").ok())
        .filter(|s| !s.trim().is_empty());
    let (model, scripted) = match &spec {
        None => (None, None),
        Some(spec) => {
            let (model, scripted) = open_model(spec)?;
            (Some(model), scripted)
        }
    };
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
    if model.is_none()
        && let Some(slot) = doc.program.instructions().iter().find(|i| i.is_su())
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
    Ok(Setup {
        file: file.to_owned(),
        source,
        doc,
        model,
        model_spec: spec,
        scripted,
        out,
        max_steps: options.max_steps.unwrap_or(ais_rt::DEFAULT_MAX_STEPS),
        trace,
        progress: Arc::new(Progress::new()),
        format: options.format,
    })
}

/// A model, and the same model as a [`ScriptedModel`] when it is one.
type Opened = (Arc<dyn Model>, Option<Arc<ScriptedModel>>);

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
    let model = model::from_spec(spec).map_err(|e| CliError::new(e.message, help))?;
    Ok((model, None))
}

impl Setup {
    fn runtime(&self) -> Runtime {
        let mut sinks: Vec<Arc<dyn TraceSink>> = vec![self.progress.clone()];
        if let Some(t) = &self.trace {
            sinks.push(t.clone());
        }
        if tracing::enabled!(target: "ais::trace", tracing::Level::INFO) {
            sinks.push(Arc::new(TracingSink::new()));
        }
        let mut builder = Runtime::builder()
            .tools(ais_rt::tools::ToolRegistry::with_builtins())
            .out_dir(self.out.clone())
            .max_steps(self.max_steps)
            .trace(Arc::new(Tee(sinks)));
        if let Some(dir) = self.file.parent().filter(|d| !d.as_os_str().is_empty()) {
            builder = builder.program_dir(dir.to_owned());
        }
        if let Some(m) = &self.model {
            builder = builder.model(m.clone());
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
    mut outcome: RunOutcome,
    output: &mut Output,
) -> Result<u8, Failure> {
    let interactive = io::stdin().is_terminal();
    while interactive && outcome.status == Status::InputRequired {
        let Some(pause) = outcome.pause.clone() else {
            break;
        };
        let Some(handle) = pause.handle.clone() else {
            break;
        };
        // Asked and answered with the progress display suspended, so it does not draw over
        // the prompt.
        let answer = setup.progress.suspend(|| -> io::Result<Option<String>> {
            write!(
                output.err,
                "\n`{}` needs `{}`: {}\n> ",
                pause.instruction,
                pause.carry,
                pause.prompt.trim()
            )?;
            output.err.flush()?;
            let mut answer = String::new();
            Ok((io::stdin().lock().read_line(&mut answer)? > 0).then_some(answer))
        })?;
        let Some(answer) = answer else {
            writeln!(output.err)?;
            break;
        };
        let answer = answer.trim_end_matches(['\n', '\r']).to_owned();
        outcome = tokio.block_on(runtime.resume(
            &setup.doc.program,
            Some(&setup.doc.source_map),
            &handle,
            answer,
        ));
        if !invalid_handle(&outcome) {
            remove_handle(&handle);
        }
    }
    setup.progress.finish();
    if outcome.status == Status::InputRequired
        && let Some(handle) = outcome.pause.as_ref().and_then(|p| p.handle.as_ref())
    {
        write_record(setup, handle)?;
    }
    if let Some(t) = &setup.trace
        && let Some(e) = t.error()
    {
        writeln!(
            output.err,
            "{}",
            render::render_error(
                &e,
                Some("the trace is incomplete; check the disk and the path"),
                output.color_err
            )
        )?;
    }
    let not_runnable = outcome
        .fault
        .as_ref()
        .is_some_and(|f| f.kind == FaultKind::NotRunnable);
    let cannot_start = not_runnable || invalid_handle(&outcome);
    if not_runnable && !outcome.findings.is_empty() {
        let text = render::render_findings(
            &outcome.findings,
            &setup.source,
            &shown(&setup.file),
            output.color_err,
        );
        write!(output.err, "{text}")?;
    }
    match setup.format {
        Format::Json => {
            if outcome.scripted {
                writeln!(output.err, "{}", scripted_note(setup))?;
            }
            writeln!(output.out, "{}", report_json(&outcome))?;
        }
        Format::Human => print_human(setup, &outcome, output)?,
    }
    Ok(match outcome.status {
        Status::Ok => 0,
        Status::Fault if cannot_start => 2,
        Status::Error | Status::Fault => 1,
        Status::InputRequired => 3,
        Status::Interrupted => 4,
    })
}

/// Whether a resume was refused for its handle (then the handle is kept).
fn invalid_handle(outcome: &RunOutcome) -> bool {
    outcome
        .fault
        .as_ref()
        .is_some_and(|f| f.kind == FaultKind::InvalidHandle)
}

fn tokio_runtime() -> Result<tokio::runtime::Runtime, CliError> {
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

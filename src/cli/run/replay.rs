//! `ais replay RUN_ID`: a finished, journaled run re-executed with every slot answered from
//! the journal (`ais::rt::journal`) — a recorded run as a deterministic, offline
//! regression test of its program.
//!
//! Exit status: 0 when the replay meets the recording (no miss, nothing unasked, the same
//! status, report and fault); 1 when it differs (each difference printed, diff-like); 2 when the
//! run cannot be replayed (no journal, no such run, a run that did not finish, a journal row
//! that does not read, a program that does not read).

use super::journal::{self, cli_error, journal_path};
use super::{Format, leave, tokio_runtime};
use crate::cli::files::read_source;
use crate::cli::{CliError, Failure, Output, mcp, shown};
use ais::agir::{self, Limits};
use ais::render;
use ais::rt::journal::{Recording, Replay, ToolReplay};
use ais::rt::{FaultKind, Runtime};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where a replay's tool results come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Tools {
    /// From the journal: no tool runs, no file is written.
    Journal,
    /// Every tool runs again, for real (under the output root).
    Live,
}

/// Arguments of `ais replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The run's id (listed by `ais runs`); the run must have finished.
    #[arg(value_name = "RUN_ID")]
    pub run: String,
    /// Where tool results come from: `journal` (nothing runs) or `live` (tools run again).
    #[arg(long, value_enum, default_value_t = Tools::Journal)]
    pub tools: Tools,
    /// The program, when it moved or to test another version of it (default: the one the
    /// run started with).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// The output root whose journal holds the run, and where live tools write [default: the
    /// run's own output root].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The journal [default: OUT/.ais/runs.db].
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `ais replay`.
pub fn replay(args: ReplayArgs, output: &mut Output) -> ExitCode {
    super::finish(replay_inner(args, output), output)
}

fn replay_inner(args: ReplayArgs, output: &mut Output) -> Result<u8, Failure> {
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    let path = journal_path(args.journal.as_deref(), &out);
    if !path.is_file() {
        return Err(CliError::new(
            format!("there is no journal at `{}` to replay run {} from", shown(&path), args.run),
            "name the output root the run used with `--out DIR`, or its journal with `--journal PATH`",
        )
        .into());
    }
    let store = journal::open(&path, false)?;
    let recording = Recording::from_sqlite(&store, &args.run).map_err(cli_error)?;
    drop(store);
    recording.finished().map_err(|e| {
        CliError::new(
            e.to_string(),
            "list the runs and their status with `ais runs`",
        )
    })?;
    let meta = journal::meta(&recording.start).ok();
    let file = match (&args.program, &meta) {
        (Some(p), _) => p.clone(),
        (None, Some(m)) => m.program.clone(),
        (None, None) => {
            return Err(CliError::new(
                format!(
                    "run {} was not started by `ais run`, so its program is not recorded as a file",
                    args.run
                ),
                "name the program: `ais replay RUN_ID --program FILE.agir`",
            )
            .into());
        }
    };
    let root = args
        .out
        .clone()
        .or_else(|| meta.as_ref().map(|m| m.out.clone()))
        .unwrap_or(out);
    let mut doc = read_program(&file, args.tools, output)?;
    let tokio = tokio_runtime()?;
    let mut tools = ais::rt::ToolRegistry::with_builtins();
    crate::cli::ags_run::register_tools(&file, &mut tools);
    crate::cli::lift_compile::register_tools(&doc.program, &mut tools, None);
    let servers = tokio.block_on(mcp::start(&file, &mut doc.program, &mut tools))?;
    let mut builder = Runtime::builder().tools(tools).out_dir(root);
    if let Some(m) = &meta {
        builder = builder.max_steps(m.max_steps);
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        builder = builder.program_dir(dir.to_owned());
    }
    let runtime = builder.build();
    let prep = runtime.prepare_shared(std::sync::Arc::new(doc.program), Some(doc.source_map));
    let mode = match args.tools {
        Tools::Journal => ToolReplay::Journal,
        Tools::Live => ToolReplay::Live,
    };
    let replayed = tokio.block_on(runtime.replay(&prep, &recording, mode));
    if let Some(servers) = servers {
        tokio.block_on(servers.shutdown());
    }
    leave(tokio, prep);
    let replayed =
        replayed.map_err(|e| CliError::new(e.to_string(), "list the runs with `ais runs`"))?;
    cannot_replay(&replayed)?;
    let code = u8::from(!replayed.matches());
    match args.format {
        Format::Json => writeln!(output.out, "{}", json(&args.run, &replayed))?,
        Format::Human => human(&args.run, &file, args.tools, &replayed, output)?,
    }
    Ok(code)
}

/// Reads the program (AG-IR, or an AGS graph); an unreadable one is reported with its source.
/// An AGS graph's `command` criteria are allowed when their results come from the journal (no
/// command runs), and refused on a live replay (which has no `--allow-commands`).
fn read_program(file: &Path, tools: Tools, output: &mut Output) -> Result<agir::Document, Failure> {
    if ais::ags::is_ags_path(file) {
        let allow_commands = tools == Tools::Journal;
        return Ok(crate::cli::ags_run::program(file, allow_commands, output)?.1);
    }
    let limits = Limits::default();
    let source = read_source(file, &limits)?;
    agir::read_with_limits(&source, &limits).map_err(|err| {
        let text = render::render_read_error(&err, &source, &shown(file), output.color_err);
        match writeln!(output.err, "{text}") {
            Ok(()) => Failure::Exit(2),
            Err(e) => Failure::Io(e),
        }
    })
}

/// A replay the journal stopped for another reason than a miss (a row that does not read) is
/// no verdict on the program: exit 2 with the row named.
fn cannot_replay(r: &Replay) -> Result<(), CliError> {
    let Some(fault) = &r.outcome.fault else {
        return Ok(());
    };
    let stopped_by_miss = r.misses.iter().any(|m| m.answered_by.is_none());
    match fault.kind {
        FaultKind::Journal if !stopped_by_miss => Err(CliError::new(
            fault.message.clone(),
            "inspect the run with `ais runs show RUN_ID --format json`; a journal that does not read cannot be replayed",
        )),
        FaultKind::NotRunnable => Err(CliError::new(
            fault.message.clone(),
            "check the program with `ais check FILE`",
        )),
        _ => Ok(()),
    }
}

fn json(run: &str, r: &Replay) -> serde_json::Value {
    let effect = |e: &ais::rt::journal::Effect| {
        serde_json::json!({
            "instruction": e.instruction, "kind": e.kind.as_str(), "name": e.name,
            "step": e.key.step, "path": e.key.path, "index": e.key.index,
        })
    };
    serde_json::json!({
        "run": run,
        "matches": r.matches(),
        "status": serde_json::to_value(r.outcome.status).unwrap_or_default(),
        "program_changed": r.program_changed,
        "misses": r.misses.iter().map(|m| {
            let mut v = effect(&m.effect);
            v["differs"] = m.differs.clone().into();
            v
        }).collect::<Vec<_>>(),
        "unasked": r.unasked.iter().map(effect).collect::<Vec<_>>(),
        "differences": r.differences.iter().map(|d| serde_json::json!({
            "field": d.field, "recorded": d.recorded, "replayed": d.replayed,
        })).collect::<Vec<_>>(),
    })
}

fn human(
    run: &str,
    file: &Path,
    tools: Tools,
    r: &Replay,
    output: &mut Output,
) -> std::io::Result<()> {
    let mut text = String::new();
    let from = match tools {
        Tools::Journal => "tools from the journal",
        Tools::Live => "tools live",
    };
    let verdict = if r.matches() {
        "matches the recording"
    } else {
        "differs from the recording"
    };
    text.push_str(&format!(
        "replay of run {run} (`{}`, {from}): {verdict}\n",
        shown(file)
    ));
    if r.program_changed {
        text.push_str("note: the program changed since the run was recorded\n");
    }
    if !r.misses.is_empty() {
        text.push_str("misses (the request is not the one recorded):\n");
        for m in &r.misses {
            text.push_str(&format!("  - {m}\n"));
        }
    }
    if !r.unasked.is_empty() {
        text.push_str("not asked (recorded, and the replay never asked for them):\n");
        for e in &r.unasked {
            text.push_str(&format!(
                "  - `{}` ({} `{}`, {})\n",
                e.instruction,
                e.kind.as_str(),
                e.name,
                e.key
            ));
        }
    }
    if !r.differences.is_empty() {
        text.push_str("outcome (- recorded, + replayed):\n");
        for d in &r.differences {
            for line in d.to_string().lines() {
                text.push_str(&format!("  {line}\n"));
            }
        }
    }
    if !r.matches() {
        text.push_str(&format!(
            "if the change is intended, record the program anew with `ais run`, and replay that run; `ais runs rm {run}` removes this one\n"
        ));
    }
    // Recorded values are model output: shown with their control characters made visible.
    output
        .out
        .write_all(crate::cli::escape_block(&text).as_bytes())
}

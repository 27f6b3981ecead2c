//! `ais run` / `ais resume` on an AGS graph: the graph is checked, its features matched against
//! what this harness executes, imported to AG-IR and run; afterwards its `file` outputs are
//! written under the output root and, with `--run-record PATH`, the AGS run record is written.

use super::{CliError, Failure, Output, shown};
use ais_core::agir;
use ais_core::render::{self, SourceLines};
use ais_rt::{RunOutcome, Status};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

/// The program an AGS graph runs as: its AG-IR text and the document read from it. A graph with
/// errors, or using features this harness does not execute, is refused with what to do.
pub fn program(file: &Path, output: &mut Output) -> Result<(String, agir::Document), Failure> {
    let name = shown(file);
    let (source, checked) = ais_ags::check_path(file)
        .map_err(|e| CliError::new(format!("cannot read `{name}`: {e}"), "check the path"))?;
    let Some(data) = checked
        .data
        .as_ref()
        .filter(|_| checked.outcome() != ais_core::Outcome::Failed)
    else {
        let lines = SourceLines::new(&source);
        for f in checked
            .findings
            .iter()
            .filter(|f| f.severity >= ais_core::Severity::Error)
        {
            writeln!(
                output.err,
                "{}\n",
                render::render_finding_in(f, &lines, &name, output.color_err)
            )?;
        }
        writeln!(
            output.err,
            "{name}: not run; a graph with errors must not execute (`ais check {name}`)"
        )?;
        return Err(Failure::Exit(2));
    };
    let missing = ais_ags::run::unsupported(data);
    if !missing.is_empty() {
        return Err(CliError::new(
            format!("`{name}` uses features this harness does not execute: {}", missing.join("; ")),
            format!("ais runs AGS task nodes, approve gates and sequence edges ({}); run this graph on a harness at a higher AGS conformance level, or `ais check` it here", ais_ags::run::SUPPORTED_FEATURES.join(", ")),
        )
        .into());
    }
    let program = ais_ags::import(data).map_err(|e| {
        CliError::new(
            format!("cannot import `{name}`: {}", e.0),
            "run `ais check` on it",
        )
    })?;
    let text = agir::write(&program);
    let doc = agir::read(&text).map_err(|e| {
        CliError::new(
            format!("the import of `{name}` does not read back: {e}"),
            "report this as a bug",
        )
    })?;
    Ok((text, doc))
}

/// After a run of an AGS graph: writes its `file` outputs under `root` and, when asked, its run
/// record to `record`.
pub fn finish(
    file: &Path,
    outcome: &RunOutcome,
    started: SystemTime,
    root: &Path,
    record: Option<&Path>,
) -> Result<(), Failure> {
    let name = shown(file);
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::new(format!("cannot read `{name}`: {e}"), "check the path"))?;
    let Some(doc) = ais_ags::load_text(&text).data.map(|d| d.value) else {
        return Ok(());
    };
    let mut report = outcome.report.clone();
    if outcome.status == Status::Ok {
        ais_ags::run::materialize_files(&doc, &mut report, root).map_err(|e| {
            CliError::new(
                format!("cannot write an output of `{name}`: {e}"),
                "name a writable `--out DIR`",
            )
        })?;
    }
    let Some(path) = record else { return Ok(()) };
    let status = match outcome.status {
        Status::Ok => "ok",
        Status::Error => "error",
        Status::Fault => "fault",
        Status::InputRequired => "input_required",
        Status::Interrupted => "interrupted",
    };
    let (stopped_at, message) = match (&outcome.fault, &outcome.pause) {
        (Some(f), _) => (Some(f.instruction.as_str()), Some(f.message.clone())),
        (None, Some(p)) => (
            Some(p.instruction.as_str()),
            Some(format!(
                "`{}` awaits a human answer: {}",
                p.instruction,
                p.prompt.trim()
            )),
        ),
        _ => (None, None),
    };
    let nanos = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let ran = ais_ags::run::Ran {
        status,
        report: &report,
        stopped_at,
        message,
        started,
        finished: SystemTime::now(),
        root,
        run_id: format!("ais-{nanos:x}-{}", std::process::id()),
    };
    let rec = ais_ags::run::run_record(&doc, &ais_ags::schedule(&doc), &ran);
    if let Err(errors) = ais_ags::validate_run_record(&rec) {
        return Err(CliError::new(
            format!(
                "the run record of `{name}` fails the AGS run schema: {}",
                errors.join("; ")
            ),
            "report this as a bug",
        )
        .into());
    }
    let body = serde_json::to_string_pretty(&rec).unwrap_or_default();
    std::fs::write(path, body + "\n").map_err(|e| {
        CliError::new(
            format!("cannot write the run record `{}`: {e}", shown(path)),
            "name a writable file with `--run-record PATH`",
        )
    })?;
    Ok(())
}

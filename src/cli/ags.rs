//! `ais check` on an AGS 1.0 graph document (`*.agraph.yaml`, `*.agraph.json`): the checks of
//! `ais-ags`, reported through the same renderer and JSON shape as AIS findings.

use super::check::{Format, status_of};
use super::{Output, Status};
use ais::render::{self, SourceLines};
use std::io::Write;
use std::path::Path;

/// Checks one AGS document and writes its report; returns the exit status it calls for.
pub fn check(
    path: &Path,
    name: &str,
    format: Format,
    allow_outside_refs: bool,
    o: &mut Output,
) -> Result<Status, std::io::Error> {
    let refs = if allow_outside_refs {
        ais::ags::Refs::Anywhere
    } else {
        ais::ags::Refs::Inside
    };
    let (source, checked) = match ais::ags::check_path_with(path, refs) {
        Ok(done) => done,
        Err(e) => {
            let what = format!("cannot read {name}: {e}");
            let help = "check the path and that the file is readable UTF-8 text";
            match format {
                Format::Json => {
                    let err = ais::agir::ReadError {
                        message: what,
                        pos: None,
                        help: Some(help.into()),
                    };
                    writeln!(o.out, "{}", render::read_failure_json(name, &err))?;
                }
                Format::Human => {
                    writeln!(
                        o.out,
                        "{}\n",
                        render::render_error(&what, Some(help), o.color_out)
                    )?;
                    writeln!(o.out, "{name}: failed (cannot be read)")?;
                }
            }
            return Ok(Status::Failed);
        }
    };
    let outcome = checked.outcome();
    match format {
        Format::Json => {
            writeln!(
                o.out,
                "{}",
                render::report_json(name, outcome, &checked.findings, &[])
            )?;
        }
        Format::Human => {
            let lines = SourceLines::new(&source);
            for finding in &checked.findings {
                writeln!(
                    o.out,
                    "{}\n",
                    render::render_finding_in(finding, &lines, name, o.color_out)
                )?;
            }
            writeln!(
                o.out,
                "{}",
                render::summary_line(name, outcome, &checked.findings)
            )?;
        }
    }
    Ok(status_of(outcome, &checked.findings))
}

/// Arguments of `ais import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The AGS graph document (`*.agraph.yaml`, `*.agraph.json`).
    pub file: std::path::PathBuf,
}

/// Arguments of `ais export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Write an AGS 1.0 graph document (JSON); the only target format so far, and required.
    #[arg(long)]
    pub ags: bool,
    /// The AG-IR file.
    pub file: std::path::PathBuf,
}

/// Runs `ais import`: the graph is checked first (its findings on stderr); a graph without
/// errors is written to stdout as the equivalent AG-IR program.
pub fn import(args: &ImportArgs, o: &mut Output) -> super::CmdResult {
    let name = super::files::display_name(&args.file);
    let (source, checked) = ais::ags::check_path(&args.file).map_err(|e| {
        super::CliError::new(
            format!("cannot read {name}: {e}"),
            "check the path and that the file is readable UTF-8 text",
        )
    })?;
    let lines = SourceLines::new(&source);
    for finding in &checked.findings {
        writeln!(
            o.err,
            "{}\n",
            render::render_finding_in(finding, &lines, &name, o.color_err)
        )?;
    }
    let Some(graph) = &checked.graph else {
        writeln!(
            o.err,
            "{}",
            render::summary_line(&name, checked.outcome(), &checked.findings)
        )?;
        writeln!(
            o.err,
            "{name}: not imported; fix the errors above (`ais check {name}`)"
        )?;
        return Ok(Status::Failed);
    };
    let program = ais::ags::import(graph).map_err(|e| {
        super::CliError::new(
            format!("cannot import {name}: {}", e.0),
            "run `ais check` on it",
        )
    })?;
    write!(o.out, "{}", ais::agir::write(&program))?;
    Ok(Status::Ok)
}

/// Runs `ais export --ags`: the AG-IR program as an AGS 1.0 document (JSON) on stdout.
pub fn export(args: &ExportArgs, o: &mut Output) -> super::CmdResult {
    if !args.ags {
        return Err(super::CliError::new(
            "name the format to export to",
            "add `--ags` (AGS 1.0, the only format so far)",
        )
        .into());
    }
    let name = super::files::display_name(&args.file);
    let source = super::files::read_source(&args.file, &ais::agir::Limits::default())?;
    let doc = match ais::agir::read(&source) {
        Ok(doc) => doc,
        Err(err) => {
            writeln!(
                o.err,
                "{}\n",
                render::render_read_error(&err, &source, &name, o.color_err)
            )?;
            return Ok(Status::Failed);
        }
    };
    let graph = ais::ags::export(&doc.program);
    let text = serde_json::to_string_pretty(&graph).map_err(|e| {
        super::CliError::new(
            format!("cannot serialize the graph: {e}"),
            "report this as a bug",
        )
    })?;
    writeln!(o.out, "{text}")?;
    Ok(Status::Ok)
}

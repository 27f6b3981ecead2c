//! `ais check` on an AGS 1.0 graph document (`*.agraph.yaml`, `*.agraph.json`): the checks of
//! `ais-ags`, reported through the same renderer and JSON shape as AIS findings.

use super::check::{Format, status_of};
use super::{Output, Status};
use ais_core::render::{self, SourceLines};
use std::io::Write;
use std::path::Path;

/// Checks one AGS document and writes its report; returns the exit status it calls for.
pub fn check(
    path: &Path,
    name: &str,
    format: Format,
    o: &mut Output,
) -> Result<Status, std::io::Error> {
    let (source, checked) = match ais_ags::check_path(path) {
        Ok(done) => done,
        Err(e) => {
            let what = format!("cannot read {name}: {e}");
            let help = "check the path and that the file is readable UTF-8 text";
            match format {
                Format::Json => {
                    let err = ais_core::agir::ReadError {
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

//! `ais fix`: apply the validator's mechanical repairs.

use super::check::status_of;
use super::files::{display_name, is_stdin, write_atomically};
use super::fmt::{canonical, read_document, within_limit};
use super::{CmdResult, Output};
use ais_core::render::{self, SourceLines};
use ais_core::{Outcome, Repairs, agir, check};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `ais fix`.
#[derive(Debug, clap::Args)]
pub struct FixArgs {
    /// The AG-IR file; `-` reads standard input and prints to standard output.
    pub file: PathBuf,
    /// Rewrite the file in place (atomically) instead of printing the repaired program. The file
    /// is left untouched when no repair applies.
    #[arg(short = 'w', long = "write")]
    pub write: bool,
}

/// Runs `ais fix`: the repaired program (canonical AG-IR) on stdout or into the file; the
/// deviation record and the summary on stderr.
pub fn run(args: &FixArgs, o: &mut Output) -> CmdResult {
    let name = display_name(&args.file);
    let (source, doc) = match read_document(&args.file, o)? {
        Ok(x) => x,
        Err(status) => return Ok(status),
    };
    let checked = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    let repaired = checked.program(&doc.program);
    let status = status_of(checked.outcome, &checked.findings);
    if checked.outcome == Outcome::Failed {
        let lines = SourceLines::new(&source);
        for finding in &checked.findings {
            let text = render::render_finding_in(finding, &lines, &name, o.color_err);
            writeln!(o.err, "{text}\n")?;
        }
        writeln!(
            o.err,
            "{}; nothing written",
            render::summary_line(&name, checked.outcome, &checked.findings)
        )?;
        return Ok(status);
    }
    for d in &checked.deviations {
        writeln!(o.err, "{}", render::deviation_line(d))?;
    }
    let remaining = if checked.findings.is_empty() {
        String::new()
    } else {
        let arg = if is_stdin(&args.file) { "-" } else { &name };
        format!("; `ais check {arg}` shows what remains")
    };
    let summary = render::summary_line(&name, checked.outcome, &checked.findings);
    let n = checked.deviations.len();
    if args.write {
        if n > 0 {
            // Only the repaired spans change; when the repairs cannot be applied as such
            // edits, the program is written whole (canonically, comments kept) and the user
            // is told.
            let text = match agir::edit_minimally(&source, &doc, repaired) {
                Some(text) => within_limit(text, &name)?,
                None => {
                    writeln!(
                        o.err,
                        "note: the repairs could not be applied as edits at the repaired places \
                         only; `{name}` is rewritten as canonical AG-IR (comments kept)"
                    )?;
                    canonical(repaired, &doc, &name)?
                }
            };
            write_atomically(&args.file, &text, &source)?;
            writeln!(o.err, "{summary}; wrote {n} repair{}{remaining}", plural(n))?;
        } else {
            writeln!(
                o.err,
                "{summary}: no repair applies, file unchanged{remaining}"
            )?;
        }
    } else {
        let text = canonical(repaired, &doc, &name)?;
        o.out.write_all(text.as_bytes())?;
        o.out.flush()?;
        writeln!(
            o.err,
            "{summary}; {n} repair{} applied{remaining}",
            plural(n)
        )?;
    }
    Ok(status)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

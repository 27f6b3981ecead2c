//! `ais fix`: apply the validator's mechanical repairs (§9.1 rung 1) and, with `--model`, the
//! model repair rung (rung 2, crate `ais-repair`).

use super::check::status_of;
use super::files::{display_name, is_stdin, write_atomically};
use super::fmt::{canonical, read_document, within_limit};
use super::{CmdResult, Output};
use ais::render::{self, SourceLines};
use ais::{Outcome, Repairs, agir, check};
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
    /// After the mechanical repairs, ask this model to repair each finding that remains, one
    /// bounded pass over the finding's view answered as `ais edit` operations, kept only when
    /// it strictly reduces the findings, adds no error and keeps every obligation
    /// (`scripted:FILE.json` answers from a file; `openai:MODEL`, `anthropic:MODEL`,
    /// `ollama:MODEL` are live).
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// With `--model`: show each proposed patch (its operations and diff) and what became of
    /// it on standard output; write nothing.
    #[arg(long, requires = "model")]
    pub dry_run: bool,
    /// With `--model`: model calls in all.
    #[arg(long, value_name = "N", default_value_t = ais::repair::Budget::default().calls, requires = "model")]
    pub model_calls: usize,
    /// With `--model`: attempts per finding.
    #[arg(long, value_name = "N", default_value_t = ais::repair::Budget::default().attempts, requires = "model")]
    pub attempts: usize,
    /// With `--model`: the source the program was lifted from, so that the audit also checks
    /// every obligation's quote against it (as `ais check --source`).
    #[arg(long, value_name = "FILE", requires = "model")]
    pub source: Option<PathBuf>,
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
    if let Some(spec) = &args.model {
        return with_model(args, spec, &name, &source, &doc, &checked, o);
    }
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
            let text = mechanical_text(&source, &doc, &checked, &name, o)?;
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

/// The text the mechanical repairs leave: `source` when none landed, else the repaired
/// places edited (or the canonical text, comments kept), with a note when rewritten whole.
fn mechanical_text(
    source: &str,
    doc: &agir::Document,
    checked: &ais::Checked,
    name: &str,
    o: &mut Output,
) -> Result<String, super::Failure> {
    let Some(repaired) = &checked.repaired else {
        return Ok(source.to_owned());
    };
    Ok(match agir::edit_minimally(source, doc, repaired) {
        Some(text) => within_limit(text, name)?,
        None => {
            writeln!(
                o.err,
                "note: the repairs could not be applied as edits at the repaired places \
                 only; `{name}` is rewritten as canonical AG-IR (comments kept)"
            )?;
            canonical(repaired, doc, name)?
        }
    })
}

/// `ais fix --model`: the mechanical repairs, then the model rung over what remains.
fn with_model(
    args: &FixArgs,
    spec: &str,
    name: &str,
    source: &str,
    doc: &agir::Document,
    checked: &ais::Checked,
    o: &mut Output,
) -> CmdResult {
    let model = super::run::open_model(spec)?.0;
    let text = mechanical_text(source, doc, checked, name, o)?;
    let config = ais::repair::Config {
        budget: ais::repair::Budget {
            calls: args.model_calls,
            attempts: args.attempts,
        },
        source: match &args.source {
            Some(path) => Some(super::files::read_input(path, &agir::Limits::default())?),
            None => None,
        },
        ..ais::repair::Config::default()
    };
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let done = tokio
        .block_on(ais::repair::repair(
            name,
            &text,
            &checked.findings,
            model.as_ref(),
            &config,
        ))
        .map_err(|e| {
            super::CliError::new(
                format!("`{name}`: {e}"),
                "the mechanical repairs left text that does not read back; report it with the file",
            )
        })?;
    for a in &done.attempts {
        let subject = a
            .finding
            .instruction
            .as_deref()
            .map_or(String::new(), |i| format!(" on `{i}`"));
        let verdict = match a.discarded {
            None => "adopted".to_owned(),
            Some(why) => format!("discarded ({})", why.as_str()),
        };
        writeln!(
            o.err,
            "model repair {}{subject}, attempt {}: {verdict}: {}",
            a.finding.code,
            a.attempt,
            render::clean_line(&a.detail)
        )?;
        if args.dry_run {
            let ops = serde_json::to_string_pretty(&a.ops).unwrap_or_default();
            writeln!(
                o.out,
                "# {}{subject}, attempt {}: {verdict}: {}\n{ops}",
                a.finding.code,
                a.attempt,
                render::clean_line(&a.finding.message)
            )?;
            if let Some(diff) = &a.diff {
                for line in diff.lines() {
                    writeln!(o.out, "{}", render::clean_line(line))?;
                }
            }
        }
    }
    for s in &done.skipped {
        writeln!(
            o.err,
            "model repair {} not attempted ({}): {}",
            s.finding.code,
            s.why,
            render::clean_line(&s.finding.message)
        )?;
    }
    for d in checked.deviations.iter().chain(&done.deviations) {
        writeln!(o.err, "{}", render::deviation_line(d))?;
    }
    let outcome = ais::outcome_of(
        &done.findings,
        &[checked.deviations.clone(), done.deviations.clone()].concat(),
    );
    let summary = render::summary_line(name, outcome, &done.findings);
    let status = status_of(outcome, &done.findings);
    let calls = format!("{} model call{}", done.calls, plural(done.calls));
    let adopted = done.deviations.len();
    let n = checked.deviations.len() + adopted;
    if args.dry_run {
        writeln!(
            o.err,
            "{summary}; {calls}, {adopted} patch{} would be adopted; nothing written",
            if adopted == 1 { "" } else { "es" }
        )?;
    } else if args.write {
        if done.text != source {
            write_atomically(&args.file, &done.text, source)?;
            writeln!(o.err, "{summary}; {calls}; wrote {n} repair{}", plural(n))?;
        } else {
            writeln!(
                o.err,
                "{summary}; {calls}: no repair applies, file unchanged"
            )?;
        }
    } else {
        o.out.write_all(done.text.as_bytes())?;
        o.out.flush()?;
        writeln!(o.err, "{summary}; {calls}; {n} repair{} applied", plural(n))?;
    }
    Ok(status)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

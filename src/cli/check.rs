//! `ais check`: validate files and report every finding.

use super::files::{display_name, is_stdin, read_input};
use super::{CliError, CmdResult, Output, Status};
use ais_core::agir::{self, Limits, ReadError};
use ais_core::budget::Budget;
use ais_core::render::{self, SourceLines};
use ais_core::{Checked, Finding, Outcome, Repairs, Severity, check};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How `ais check` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style diagnostics and a summary line per file.
    Human,
    /// One JSON object per file, one per line.
    Json,
}

/// Arguments of `ais check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The AG-IR files to check (and AGS graphs, `*.agraph.yaml` / `*.agraph.json`); `-` reads
    /// standard input (shown as `<stdin>`, read as AG-IR).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Report the program exactly as written: do not apply mechanical repairs in memory.
    ///
    /// By default the validator applies its mechanical repairs (spec §9.1, step 1) in memory and
    /// reports them as deviations, so the outcome can be `fixed`; `ais fix -w` writes them.
    #[arg(long)]
    pub no_repair: bool,
    /// Also report each program's static worst case: steps, slot fills, model exchanges, tool
    /// calls and completion tokens, from its LOOP caps, SPAWN fan-outs and CALL targets, and
    /// every cycle nothing bounds (in JSON: the `budget` member).
    #[arg(long)]
    pub budget: bool,
    /// For an AGS graph: open its subgraph references (`ref.uri`) even where they lead out of
    /// the graph's directory (an absolute path, `..`, a symbolic link); by default such a
    /// reference is the finding AG132 and is not read.
    #[arg(long)]
    pub allow_outside_refs: bool,
}

/// What checking one file came to.
enum FileReport {
    /// The file could not be opened or read as text.
    Unreadable(CliError),
    /// The text is not AG-IR.
    NotAgir { source: String, err: ReadError },
    /// The program was validated.
    Checked {
        source: String,
        relaxations: usize,
        checked: Box<Checked>,
        /// With `--budget`: the budget, or why the program has none.
        budget: Option<Result<Budget, String>>,
    },
}

/// The exit status a validation result calls for.
pub fn status_of(outcome: Outcome, findings: &[Finding]) -> Status {
    if outcome == Outcome::Failed {
        Status::Failed
    } else if findings.iter().any(|f| f.severity >= Severity::Error) {
        Status::Findings
    } else {
        Status::Ok
    }
}

fn check_file(path: &Path, repair: bool, with_budget: bool) -> FileReport {
    let limits = Limits::default();
    let source = match read_input(path, &limits) {
        Ok(s) => s,
        Err(e) => return FileReport::Unreadable(e),
    };
    match agir::read_with_limits(&source, &limits) {
        Err(err) => FileReport::NotAgir { source, err },
        Ok(doc) => {
            let repairs = if repair {
                Repairs::Mechanical
            } else {
                Repairs::Off
            };
            let checked = super::mcp::check_with_lock(path, &doc.program, &doc.source_map, |p| {
                check(p, &doc.source_map, repairs)
            });
            let mut checked = match checked {
                Ok(c) => Box::new(c),
                Err(e) => return FileReport::Unreadable(e),
            };
            with_call_findings(&mut checked, path, &doc);
            let budget = (with_budget && checked.outcome != Outcome::Failed).then(|| {
                let dir = super::graph::program_dir(path);
                super::budget::of(checked.program(&doc.program), dir, 0)
            });
            FileReport::Checked {
                source,
                relaxations: doc.relaxations.len(),
                checked,
                budget,
            }
        }
    }
}

/// Adds the CALL-write findings (G9): a CALL write its target, found beside `path` as the
/// runtime finds it, never produces.
fn with_call_findings(checked: &mut Checked, path: &Path, doc: &agir::Document) {
    let dir = super::graph::program_dir(path);
    let calls = ais_core::check_calls(
        &doc.program,
        &mut |t| super::budget::find(dir, t).ok().map(|d| d.program),
        &doc.source_map,
    );
    if calls.is_empty() {
        return;
    }
    if matches!(checked.outcome, Outcome::Clean | Outcome::Fixed) {
        checked.outcome = Outcome::Degraded;
    }
    checked.findings.extend(calls);
    checked.findings.sort_by_key(|f| (f.pos.is_none(), f.pos));
}

/// Runs `ais check`.
pub fn run(args: &CheckArgs, o: &mut Output) -> CmdResult {
    let mut worst = Status::Ok;
    for path in &args.files {
        let name = display_name(path);
        if ais_ags::is_ags_path(path) {
            worst = worst.max(super::ags::check(
                path,
                &name,
                args.format,
                args.allow_outside_refs,
                o,
            )?);
            continue;
        }
        let report = check_file(path, !args.no_repair, args.budget);
        let status = match args.format {
            Format::Json => write_json(&name, &report, o)?,
            Format::Human => write_human(&name, is_stdin(path), &report, o)?,
        };
        worst = worst.max(status);
    }
    Ok(worst)
}

fn write_json(name: &str, report: &FileReport, o: &mut Output) -> Result<Status, std::io::Error> {
    let (json, status) = match report {
        FileReport::Unreadable(e) => {
            let err = ReadError {
                message: e.what.clone(),
                pos: None,
                help: e.help.clone(),
            };
            (render::read_failure_json(name, &err), Status::Failed)
        }
        FileReport::NotAgir { err, .. } => (render::read_failure_json(name, err), Status::Failed),
        FileReport::Checked {
            checked, budget, ..
        } => {
            let mut json = render::report_json(
                name,
                checked.outcome,
                &checked.findings,
                &checked.deviations,
            );
            if let (Some(b), Some(o)) = (budget, json.as_object_mut()) {
                let limits = super::budget::runtime_limits();
                let value = match b {
                    Ok(b) => super::budget::json(b, &limits),
                    Err(why) => serde_json::json!({"error": why}),
                };
                o.insert("budget".into(), value);
            }
            (json, status_of(checked.outcome, &checked.findings))
        }
    };
    writeln!(o.out, "{json}")?;
    Ok(status)
}

/// Writes one file's report for a human; `stdin` tells the next steps to name `-`, which
/// `-w` cannot rewrite.
fn write_human(
    name: &str,
    stdin: bool,
    report: &FileReport,
    o: &mut Output,
) -> Result<Status, std::io::Error> {
    let color = o.color_out;
    let (fmt_next, fix_next) = if stdin {
        (
            "`ais fmt -` prints the text".to_owned(),
            "`ais fix -` prints the repaired program".to_owned(),
        )
    } else {
        (
            format!("`ais fmt -w {name}` rewrites the file"),
            format!("`ais fix -w {name}` writes"),
        )
    };
    match report {
        FileReport::Unreadable(e) => {
            let text = render::render_error(&e.what, e.help.as_deref(), color);
            writeln!(o.out, "{text}\n")?;
            writeln!(o.out, "{name}: failed (cannot be read)")?;
            Ok(Status::Failed)
        }
        FileReport::NotAgir { source, err } => {
            let text = render::render_read_error(err, source, name, color);
            writeln!(o.out, "{text}\n")?;
            writeln!(o.out, "{name}: failed (not readable as AG-IR)")?;
            Ok(Status::Failed)
        }
        FileReport::Checked {
            source,
            relaxations,
            checked,
            budget,
        } => {
            let lines = SourceLines::new(source);
            for finding in &checked.findings {
                let text = render::render_finding_in(finding, &lines, name, color);
                writeln!(o.out, "{text}\n")?;
            }
            if *relaxations > 0 {
                let text = render::render_note(
                    &format!(
                        "read through {relaxations} relaxation{} of strict YAML; \
                         {fmt_next} without them",
                        if *relaxations == 1 { "" } else { "s" }
                    ),
                    color,
                );
                writeln!(o.out, "{text}")?;
            }
            if !checked.deviations.is_empty() {
                let n = checked.deviations.len();
                let text = render::render_note(
                    &format!(
                        "{n} mechanical repair{} applied in memory; {fix_next}{}",
                        if n == 1 { "" } else { "s" },
                        match (stdin, n) {
                            (true, _) => "",
                            (false, 1) => " it",
                            (false, _) => " them",
                        }
                    ),
                    color,
                );
                writeln!(o.out, "{text}")?;
                for d in &checked.deviations {
                    writeln!(o.out, "  - {}", render::deviation_line(d))?;
                }
            }
            writeln!(
                o.out,
                "{}",
                render::summary_line(name, checked.outcome, &checked.findings)
            )?;
            match budget {
                Some(Ok(b)) => write!(
                    o.out,
                    "{}",
                    super::budget::human(b, &super::budget::runtime_limits())
                )?,
                Some(Err(why)) => writeln!(o.out, "budget: none, because {why}")?,
                None => {}
            }
            Ok(status_of(checked.outcome, &checked.findings))
        }
    }
}

//! `ais check`: validate files and report every finding.

use super::files::{display_name, is_stdin, read_input};
use super::{CliError, CmdResult, Output, Status};
use ais::agir::{self, Limits, ReadError};
use ais::budget::Budget;
use ais::render::{self, SourceLines};
use ais::{
    Audit, AuditConfig, Checked, Finding, Outcome, Realization, Repairs, Severity, check,
    is_audit_check, outcome_of,
};
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
    /// Also print each tool call's binding table (spec §7.1): which carry each parameter takes
    /// and by which rule, and every read no parameter takes (human format only).
    #[arg(long)]
    pub explain_bindings: bool,
    /// For an AGS graph: open its subgraph references (`ref.uri`) even where they lead out of
    /// the graph's directory (an absolute path, `..`, a symbolic link); by default such a
    /// reference is the finding AG132 and is not read.
    #[arg(long)]
    pub allow_outside_refs: bool,
    /// The source document the programs were lifted from (a `SKILL.md`): the faithfulness
    /// audit also checks that every obligation's quote is in it verbatim (whitespace aside),
    /// that the recorded digest matches it, and follows the sibling files it names.
    ///
    /// The audit (spec §9.5: F1 structure, F2 delete-the-source, F3 bundle depth, F4 carrier
    /// completeness; G10 and G11, extensions beyond the spec) runs on every program whose
    /// `faithfulness` section lists `obligations`, with or without this option.
    #[arg(long, value_name = "FILE")]
    pub source: Option<PathBuf>,
    /// G10: the most distinct procedural obligations one instruction or tool may claim.
    #[arg(long, value_name = "N", default_value_t = AuditConfig::DEFAULT_FAN_OUT_CAP)]
    pub fan_out_cap: usize,
    /// Fail (exit 1) on any finding, warnings included (a faithfulness deficit is a warning).
    #[arg(long)]
    pub strict: bool,
    /// The model configuration whose tiers the slots' `model:` names are checked against (T1)
    /// [default: `ais.toml` in the current directory, else beside each program, when there is
    /// one].
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,
}

/// How each file is checked: what `ais check`'s options ask for besides the findings.
struct FileOptions<'a> {
    /// Apply the mechanical repairs in memory.
    repair: bool,
    /// Compute the static budget (`--budget`).
    budget: bool,
    /// Print the binding tables (`--explain-bindings`).
    explain: bool,
    /// The faithfulness audit's source and configuration.
    audit: &'a AuditInput,
    /// The model configuration given with `--models`.
    models: Option<&'a Path>,
}

/// What the audit needs besides the program: the source text and the configuration.
struct AuditInput {
    source: Option<String>,
    config: AuditConfig,
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
        /// The faithfulness audit, when the program has a provenance record with obligations.
        audit: Option<Audit>,
        /// With `--explain-bindings`: the binding tables, as text.
        bindings: Option<String>,
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

/// [`status_of`], and with `strict` any finding at all is a failing one.
fn status_strict(outcome: Outcome, findings: &[Finding], strict: bool) -> Status {
    match status_of(outcome, findings) {
        Status::Ok if strict && !findings.is_empty() => Status::Findings,
        s => s,
    }
}

fn check_file(path: &Path, opts: &FileOptions<'_>) -> FileReport {
    let limits = Limits::default();
    let source = match read_input(path, &limits) {
        Ok(s) => s,
        Err(e) => return FileReport::Unreadable(e),
    };
    match agir::read_with_limits(&source, &limits) {
        Err(err) => FileReport::NotAgir { source, err },
        Ok(doc) => {
            let repairs = if opts.repair {
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
            with_found(
                &mut checked,
                ais::check_native_tools(&doc.program, &doc.source_map),
            );
            let config =
                ais::rt::llm::ModelsFile::discover(opts.models, super::graph::program_dir(path));
            match config {
                Ok(Some(config)) => with_found(
                    &mut checked,
                    ais::check_tiers(&doc.program, config.tier_names(), &doc.source_map),
                ),
                Ok(None) => {}
                Err(e) => {
                    return FileReport::Unreadable(CliError::new(
                        e.message,
                        "fix the model configuration, or name another with `--models FILE`",
                    ));
                }
            }
            let audit = with_audit(&mut checked, &doc, opts.audit);
            let budget = (opts.budget && checked.outcome != Outcome::Failed).then(|| {
                let dir = super::graph::program_dir(path);
                super::budget::of(checked.program(&doc.program), dir, 0)
            });
            let bindings = opts
                .explain
                .then(|| binding_tables(checked.program(&doc.program), &doc.source_map));
            FileReport::Checked {
                source,
                relaxations: doc.relaxations.len(),
                checked,
                budget,
                audit,
                bindings,
            }
        }
    }
}

/// The faithfulness audit's standing: the one [`check`] ran (no source, the default
/// configuration) as it carries it, or, with a source text or another configuration, the audit
/// run with those in its place; `None` when the program has no obligations to audit against.
fn with_audit(checked: &mut Checked, doc: &agir::Document, input: &AuditInput) -> Option<Audit> {
    if input.source.is_none() && input.config == AuditConfig::default() {
        // `check` ran it just so: its standing is in the result.
        return checked.faithfulness.take();
    }
    let program = checked.program(&doc.program);
    program.faithfulness.as_ref()?.obligations.as_ref()?;
    let audit = ais::audit(
        program,
        &doc.source_map,
        input.source.as_deref(),
        &input.config,
    );
    checked
        .findings
        .retain(|f| !f.id.check().is_some_and(is_audit_check));
    checked.findings.extend(audit.findings.iter().cloned());
    checked.findings.sort_by_key(|f| (f.pos.is_none(), f.pos));
    checked.outcome = outcome_of(&checked.findings, &checked.deviations);
    Some(audit)
}

/// Each DU tool call's binding table (spec §7.1), as the runtime binds it: per parameter the
/// carry (or field, or the task's filename) it takes and the rule that bound it, then the reads
/// no parameter takes. The binder is `ais::bind`, the one the validator, the macro and the
/// runtime use.
fn binding_tables(program: &ais::Program, map: &ais::SourceMap) -> String {
    use ais::bind::{BindSource, ProgramIndex};
    use std::fmt::Write as _;
    let ix = ProgramIndex::new(program);
    let mut out = String::new();
    for (i, n) in program.instructions().iter().enumerate() {
        if !n.is_du() {
            continue;
        }
        let mut sigs: Vec<(String, ais::sig::Signature)> = ix
            .bound_tools(n)
            .into_iter()
            .filter_map(|t| {
                let sig = ais::sig::parse(t.sig.as_deref()?).ok()?;
                Some((t.name.clone(), sig))
            })
            .collect();
        if sigs.is_empty()
            && let Some(b) = n.tool.as_deref().and_then(ais::plan::builtins::builtin)
            && let Ok(sig) = ais::sig::parse(b.sig)
        {
            sigs.push((b.name.to_owned(), sig));
        }
        if sigs.is_empty() {
            continue;
        }
        let line = map
            .lookup(&ais::Locus::element(ais::Element::Instruction(i)))
            .map(|p| format!(" (line {})", p.line))
            .unwrap_or_default();
        let _ = writeln!(out, "bindings of `{}`{line}:", n.id);
        let mut taken: Vec<String> = Vec::new();
        for (name, sig) in &sigs {
            let params: Vec<&str> = sig.params.iter().map(|p| p.name.as_str()).collect();
            let _ = writeln!(out, "  {name}({})", params.join(", "));
            for b in ix.bind_tool(n, sig, None) {
                let what = match &b.source {
                    BindSource::Carry(c) => {
                        taken.push(c.clone());
                        let outside = if n.reads.contains(c) {
                            ""
                        } else {
                            " — not among the reads"
                        };
                        format!("`{c}`{outside}")
                    }
                    BindSource::Field { carry, field } => {
                        taken.push(carry.clone());
                        format!("`{carry}.{field}`")
                    }
                    BindSource::Invocation(_) => "a filename from the task (§7.3)".to_owned(),
                    BindSource::Null => "nothing (null)".to_owned(),
                };
                let _ = writeln!(
                    out,
                    "    {} <- {what}, {} (rule {})",
                    b.param,
                    b.rule.describe(),
                    b.rule.number()
                );
            }
        }
        let dropped: Vec<String> = n
            .reads
            .iter()
            .filter(|r| *r != "task" && program.carry(r).is_some() && !taken.contains(r))
            .map(|r| format!("`{r}`"))
            .collect();
        if !dropped.is_empty() {
            let _ = writeln!(out, "  reads no parameter takes: {}", dropped.join(", "));
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Adds the CALL-write findings (G9): a CALL write its target, found beside `path` as the
/// runtime finds it, never produces.
fn with_call_findings(checked: &mut Checked, path: &Path, doc: &agir::Document) {
    let dir = super::graph::program_dir(path);
    let calls = ais::check_calls(
        &doc.program,
        &mut |t| super::budget::find(dir, t).ok().map(|d| d.program),
        &doc.source_map,
    );
    with_found(checked, calls);
}

/// Adds findings of a check beside the validator's (CALL writes, model tiers): a clean or
/// fixed outcome becomes degraded, and the findings stay in source order.
fn with_found(checked: &mut Checked, found: Vec<Finding>) {
    if found.is_empty() {
        return;
    }
    if matches!(checked.outcome, Outcome::Clean | Outcome::Fixed) {
        checked.outcome = Outcome::Degraded;
    }
    checked.findings.extend(found);
    checked.findings.sort_by_key(|f| (f.pos.is_none(), f.pos));
}

/// Runs `ais check`.
pub fn run(args: &CheckArgs, o: &mut Output) -> CmdResult {
    let source = match &args.source {
        Some(path) => Some(read_input(path, &Limits::default())?),
        None => None,
    };
    let audit_in = AuditInput {
        source,
        config: AuditConfig {
            fan_out_cap: args.fan_out_cap,
        },
    };
    let opts = FileOptions {
        repair: !args.no_repair,
        budget: args.budget,
        explain: args.explain_bindings,
        audit: &audit_in,
        models: args.models.as_deref(),
    };
    let mut worst = Status::Ok;
    for path in &args.files {
        let name = display_name(path);
        if ais::ags::is_ags_path(path) {
            worst = worst.max(super::ags::check(
                path,
                &name,
                args.format,
                args.allow_outside_refs,
                o,
            )?);
            continue;
        }
        let report = check_file(path, &opts);
        let status = match args.format {
            Format::Json => write_json(&name, &report, args.strict, o)?,
            Format::Human => write_human(&name, is_stdin(path), &report, args.strict, o)?,
        };
        worst = worst.max(status);
    }
    Ok(worst)
}

fn write_json(
    name: &str,
    report: &FileReport,
    strict: bool,
    o: &mut Output,
) -> Result<Status, std::io::Error> {
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
            checked,
            budget,
            audit,
            ..
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
            if let (Some(a), Some(o)) = (audit, json.as_object_mut()) {
                o.insert("faithfulness".into(), audit_json(a));
            }
            (
                json,
                status_strict(checked.outcome, &checked.findings, strict),
            )
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
    strict: bool,
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
            audit,
            bindings,
        } => {
            let lines = SourceLines::new(source);
            if let Some(tables) = bindings {
                write!(o.out, "{tables}")?;
            }
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
            if let Some(a) = audit {
                writeln!(o.out, "{}", render::render_note(&audit_note(a), color))?;
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
            Ok(status_strict(checked.outcome, &checked.findings, strict))
        }
    }
}

/// The audit in a line: how many required obligations are realized, and what was accepted.
fn audit_note(a: &Audit) -> String {
    let required: Vec<_> = a
        .obligations
        .iter()
        .filter(|o| o.required.is_some_and(Realization::is_required))
        .collect();
    let realized = required.iter().filter(|o| o.realized).count();
    let mut note = format!(
        "faithfulness: {realized} of {} required obligations realized ({} in the record)",
        required.len(),
        a.obligations.len()
    );
    if !a.accepted.is_empty() {
        let n = a.accepted.len();
        note.push_str(&format!(
            "; {n} finding{} silenced by accepted deviations",
            if n == 1 { "" } else { "s" }
        ));
    }
    note
}

/// The audit as the `faithfulness` member of the JSON report: each obligation's required
/// realization, whether it is realized and what traces to it, and the accepted deviations.
fn audit_json(a: &Audit) -> serde_json::Value {
    let obligations: Vec<serde_json::Value> = a
        .obligations
        .iter()
        .map(|o| {
            serde_json::json!({
                "id": o.id,
                "required": o.required.map(|r| r.as_str()),
                "realized": o.realized,
                "traced_by": o.traced_by.iter().map(|r| r.spelling()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let accepted: Vec<serde_json::Value> = a
        .accepted
        .iter()
        .map(|(i, message)| serde_json::json!({"deviation": i, "silenced": message}))
        .collect();
    serde_json::json!({"obligations": obligations, "accepted": accepted})
}

//! `ais lift SKILL.md --model SPEC`: the compile, run as the program it is
//! ([`ais::lift::LiftCompiler`]) by the same machinery as `ais run` — journaled under
//! `--out`, so `ais resume RUN_ID` finishes a lift that was killed or paused (`--clarify`) and
//! `ais replay RUN_ID` re-derives it with no model call. When the compiler's run finishes
//! ([`concluded`], whichever command ran it), the program is written to its file, the report
//! beside it, and a summary goes to stderr.

use super::lift::{Emit, LiftArgs, clip, input_error};
use super::{CliError, CmdResult, Failure, Output, Status, escape_controls, shown};
use ais::Outcome;
use ais::lift::compile::{self, Lifted, NoteAction, SpecVerdict};
use ais::lift::{LiftCompiler, Skill};
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `ais run`'s arguments, parsed from the command line the lift stands for.
#[derive(Parser)]
struct AsRun {
    #[command(flatten)]
    args: super::run::RunArgs,
}

/// Runs `ais lift SKILL.md --model SPEC`: writes the compiler program under `OUT/.ais/lift/`
/// and runs it with the skill as its task.
pub fn run(args: &LiftArgs, o: &mut Output) -> ExitCode {
    match start(args, o) {
        Ok(run) => super::run::run(run, o),
        Err(failure) => super::stopped(failure, o),
    }
}

fn start(args: &LiftArgs, _: &mut Output) -> Result<super::run::RunArgs, Failure> {
    let Some(spec) = &args.model else {
        return Err(CliError::new(
            "`ais lift` compiles a skill with a model, and none is named",
            format!(
                "add `--model SPEC` (`scripted:FILE.json`, `openai:MODEL`, …), or run `ais lift {} \
                 --stages-only` for the analysis code owns",
                shown(&args.skill)
            ),
        )
        .into());
    };
    let skill = Skill::read(&args.skill).map_err(|e| input_error(&e))?;
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    let made = |e: std::io::Error, dir: &Path| {
        CliError::new(
            format!("cannot create `{}`: {e}", shown(dir)),
            "name a directory you can write with `--out DIR`",
        )
    };
    std::fs::create_dir_all(&out_dir).map_err(|e| made(e, &out_dir))?;
    let compiler_dir = out_dir.join(".ais").join("lift");
    std::fs::create_dir_all(&compiler_dir).map_err(|e| made(e, &compiler_dir))?;
    let compiler = compiler_dir.join(format!("{}.agir", LiftCompiler::NAME));
    if std::fs::read_to_string(&compiler).ok().as_deref() != Some(LiftCompiler::AGIR) {
        write_new(&compiler, LiftCompiler::AGIR)?;
    }
    let name = compile::program_name(&skill);
    // The form is carried by the program file's extension, so that whichever command
    // finishes the compiler's run (`ais resume`, `ais replay`) writes it the same way.
    let emit = match (args.emit, &args.output) {
        (Some(emit), Some(path)) if Emit::of(path) != emit => {
            return Err(CliError::new(
                format!(
                    "`--emit {}` writes a `.{}` file, and `-o` names `{}`",
                    emit.name(),
                    emit.extension(),
                    shown(path)
                ),
                format!(
                    "name the output `{}`",
                    shown(&path.with_extension(emit.extension()))
                ),
            )
            .into());
        }
        (Some(emit), _) => emit,
        (None, Some(path)) => Emit::of(path),
        (None, None) => Emit::Agir,
    };
    let program_path = args
        .output
        .clone()
        .unwrap_or_else(|| out_dir.join(format!("{name}.{}", emit.extension())));
    let abs = |p: &Path| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.to_owned())
            .display()
            .to_string()
    };
    let adjudicator = if args.clarify {
        "person"
    } else if args.no_adjudicate {
        "nobody"
    } else {
        "model"
    };
    let mut argv: Vec<String> = vec![
        "ais lift".into(),
        compiler.display().to_string(),
        "--task".into(),
        abs(&args.skill),
        "--model".into(),
        spec.clone(),
        "--out".into(),
        out_dir.display().to_string(),
    ];
    for (k, v) in [
        ("adjudicator", adjudicator.to_owned()),
        ("source_path", relative(&args.skill, &program_path)),
        ("model", spec.clone()),
        ("program_file", abs(&program_path)),
        (
            "report_file",
            abs(&out_dir.join(format!("{name}.lift.json"))),
        ),
        ("strict", args.strict.to_string()),
    ] {
        argv.push("--input".into());
        argv.push(format!("{k}={v}"));
    }
    AsRun::try_parse_from(argv).map(|r| r.args).map_err(|e| {
        CliError::new(format!("the compiler's run: {e}"), "report this as a bug").into()
    })
}

/// Registers the compiler's tools when `program` is the compiler (nothing for any other
/// program), its repair rung asking the run's default model.
pub fn register_tools(
    program: &ais::Program,
    tools: &mut ais::rt::ToolRegistry,
    models: Option<&ais::rt::llm::Models>,
) {
    if ais::lift::is_compiler(program) {
        let model = models
            .and_then(|m| m.default_chain())
            .and_then(|c| c.links().first())
            .map(|l| l.model.clone());
        ais::lift::register_tools(tools, model);
    }
}

/// A finished run of the compiler: the program and the report written where its inputs say,
/// the summary on stderr, and the exit code (2 the program failed its check, 1 with
/// `--strict` on any finding). `None` when `program` is not the compiler.
pub fn concluded(
    program: &ais::Program,
    report: &serde_json::Map<String, serde_json::Value>,
    o: &mut Output,
) -> Option<Result<u8, Failure>> {
    ais::lift::is_compiler(program).then(|| conclude(report, o))
}

fn conclude(
    report: &serde_json::Map<String, serde_json::Value>,
    o: &mut Output,
) -> Result<u8, Failure> {
    let lifted = ais::lift::lifted(report).map_err(|e| {
        CliError::new(
            escape_controls(&e.to_string()),
            "check the model (`--model`) and, for a scripted one, its answer for each slot",
        )
    })?;
    let path = |key: &str| {
        report
            .get(key)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    let strict = report.get("strict").and_then(|v| v.as_bool()) == Some(true);
    summary(&lifted, o)?;
    let mut wrote = Vec::new();
    if let Some(p) = path("program_file") {
        let text = match Emit::of(&p) {
            Emit::Agir => lifted.agir.clone(),
            Emit::Rust => rust_module(&lifted, &p)?,
        };
        write_new(&p, &text)?;
        wrote.push(shown(&p));
    }
    if let Some(p) = path("report_file") {
        let text = serde_json::to_string_pretty(&lifted.report).map_err(std::io::Error::from)?;
        write_new(&p, &(text + "\n"))?;
        wrote.push(shown(&p));
    }
    if !wrote.is_empty() {
        writeln!(o.err, "wrote {}", wrote.join(" and "))?;
    }
    let r = &lifted.report;
    Ok(match r.gates.outcome {
        Outcome::Failed => Status::Failed,
        _ if strict && r.strict_findings() > 0 => Status::Findings,
        _ => Status::Ok,
    }
    .code())
}

/// The lifted program as a Rust module (`--emit rust`): a header saying where it came from,
/// then the `ais!` program `ais::syntax::write` gives, whose `AGIR` is `lifted.agir`.
fn rust_module(lifted: &Lifted, path: &Path) -> Result<String, CliError> {
    let module = ais::syntax::write_module(&lifted.program).map_err(|refused| {
        CliError::new(
            format!(
                "{}: {}",
                shown(path),
                escape_controls(refused.to_string().trim_end())
            ),
            format!(
                "write it as AG-IR instead: `-o {}`",
                shown(&path.with_extension("agir"))
            ),
        )
    })?;
    let source = lifted
        .program
        .faithfulness
        .as_ref()
        .and_then(|f| f.source.as_ref())
        .and_then(|s| s.path.as_deref())
        .unwrap_or("its skill");
    // The path is the skill's, as given: a line break in it must not end the comment and
    // start code in the module.
    let source = escape_controls(source);
    let name = lifted.program.name.as_deref().unwrap_or("the program");
    Ok(format!(
        "//! `{name}`, lifted from `{source}` by `ais lift`: the program as an `ais!` module.\n\
         //! Its `AGIR` is the AG-IR `ais lift --emit agir` writes; its provenance record (the\n\
         //! `source`, `obligation` and `deviation` items) is what `ais lift --check-only` audits.\n\n{module}"
    ))
}

/// The AG-IR of the one `ais!` program of a Rust module (`--check-only program.rs`), through
/// the macro's front end, without a crate build.
fn agir_of_module(text: &str, path: &Path) -> Result<String, CliError> {
    let exported = ais::syntax::export_text(text, &shown(path)).map_err(|e| {
        CliError::new(
            escape_controls(&e.to_string()),
            "fix the module so that it compiles, or re-audit its `.agir`",
        )
    })?;
    match exported.as_slice() {
        [one] => Ok(one.agir.clone()),
        other => Err(CliError::new(
            format!(
                "{}: holds {} `ais!` programs; `--check-only` re-audits one",
                shown(path),
                other.len()
            ),
            "name a module with one lifted program",
        )),
    }
}

/// Runs `ais lift SKILL.md --check-only PROGRAM`.
pub fn check_only(args: &LiftArgs, program: &Path, o: &mut Output) -> CmdResult {
    let skill = Skill::read(&args.skill).map_err(|e| input_error(&e))?;
    let text = super::files::read_source(program, &ais::agir::Limits::default())?;
    let text = match Emit::of(program) {
        Emit::Agir => text,
        Emit::Rust => agir_of_module(&text, program)?,
    };
    let doc = ais::agir::read(&text).map_err(|e| {
        CliError::new(
            format!("{}: {}", shown(program), escape_controls(&e.to_string())),
            format!("run `ais check {}` for the details", shown(program)),
        )
    })?;
    let r = compile::recheck(&skill, &doc.program).map_err(|e| {
        CliError::new(
            format!("{}: {e}", shown(program)),
            "lift the skill with `ais lift SKILL.md --model SPEC` first",
        )
    })?;
    let e = &mut o.err;
    writeln!(
        e,
        "recheck {} against {}: {} obligations; the skill {}",
        shown(program),
        shown(&args.skill),
        r.obligations,
        match r.skill_changed {
            Some(true) => "changed since the lift",
            Some(false) => "is unchanged",
            None => "has no recorded digest",
        }
    )?;
    for d in &r.dropped {
        writeln!(
            e,
            "  no longer in the skill: {} \"{}\": {}",
            clip(&d.rule, 12),
            clip(&d.quote, 60),
            clip(&d.reason, 80)
        )?;
    }
    for d in &r.drift {
        writeln!(e, "  drift: {}", clip(&d.message, 130))?;
    }
    for f in &r.audit {
        writeln!(e, "  audit: {}", clip(f, 130))?;
    }
    for u in &r.uncovered {
        writeln!(
            e,
            "  not covered {}:{}: {}",
            u.line,
            u.column,
            clip(&u.text, 90)
        )?;
    }
    serde_json::to_writer(&mut o.out, &r).map_err(std::io::Error::from)?;
    writeln!(o.out)?;
    Ok(if r.has_findings() {
        Status::Findings
    } else {
        Status::Ok
    })
}

/// `skill` relative to the directory of `program` (absolute when they share no root).
fn relative(skill: &Path, program: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let skill = abs(skill);
    let dir = abs(program)
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default();
    let s: Vec<_> = skill.components().collect();
    let d: Vec<_> = dir.components().collect();
    let common = s.iter().zip(&d).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return skill.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..d.len() {
        rel.push("..");
    }
    for c in &s[common..] {
        rel.push(c);
    }
    rel.display().to_string()
}

/// Writes `text` to `path` through a temporary file in its directory and a rename.
fn write_new(path: &Path, text: &str) -> Result<(), CliError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| {
        CliError::new(
            format!("cannot write `{}`: {e}", shown(path)),
            "name a file in a directory you can write",
        )
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CliError::new(
            format!(
                "`{}` is a symbolic link; ais does not write through links",
                shown(path)
            ),
            "name the file itself",
        ));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

fn summary(l: &Lifted, o: &mut Output) -> std::io::Result<()> {
    let r = &l.report;
    let e = &mut o.err;
    writeln!(
        e,
        "lift {} with {}{}",
        escape_controls(&r.skill),
        escape_controls(&r.model),
        if r.scripted { " (scripted)" } else { "" }
    )?;
    for s in &r.stages {
        let counts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            e,
            "  {:<18} {} model call(s), {} ms: {}",
            s.name,
            s.model_calls,
            s.millis,
            counts.join(", ")
        )?;
    }
    match r.spec {
        SpecVerdict::Dry { rounds } => {
            writeln!(e, "  spec loop dry after {rounds} critic round(s)")?
        }
        SpecVerdict::Exhausted { rounds, last_added } => writeln!(
            e,
            "  spec loop EXHAUSTED: {rounds} critic round(s), the last still added {last_added}: coverage is not confirmed"
        )?,
    }
    for d in &r.dropped {
        writeln!(
            e,
            "  dropped {} ({}) \"{}\": {}",
            clip(&d.rule, 12),
            d.stage,
            clip(&d.quote, 50),
            clip(&d.reason, 90)
        )?;
    }
    for c in &r.corrections {
        writeln!(e, "  corrected {}", clip(&c.message, 120))?;
    }
    for d in &r.decisions {
        let on = d
            .cite
            .as_ref()
            .map(|c| {
                format!(
                    " citing \"{}\" at {}",
                    clip(c, 50),
                    d.cite_at.as_deref().unwrap_or("?")
                )
            })
            .unwrap_or_default();
        let rejected = d
            .rejected
            .as_ref()
            .map(|w| format!(" (answer rejected: {})", clip(w, 70)))
            .unwrap_or_default();
        writeln!(
            e,
            "  decided {} {} by {}{on}{rejected}",
            clip(&d.rule, 12),
            d.force.as_str(),
            clip(&d.by, 60)
        )?;
    }
    for n in &r.notes {
        let what = match n.action {
            NoteAction::Refused => "refused",
            NoteAction::Degraded => "degraded",
            NoteAction::Embodied => "embodied",
            NoteAction::Typed => "typed",
        };
        writeln!(
            e,
            "  {what} {}: {}",
            clip(&n.subject, 60),
            clip(&n.reason, 90)
        )?;
    }
    let g = &r.gates;
    writeln!(
        e,
        "  check: {:?}; audit: {} obligations, {} dropped, {} added, {}/{} quotes verbatim",
        g.outcome,
        g.obligations,
        g.dropped.len(),
        g.added.len(),
        g.verbatim_quotes,
        r.obligations.len()
    )?;
    for f in &g.findings {
        writeln!(e, "    {}", clip(f, 140))?;
    }
    Ok(())
}

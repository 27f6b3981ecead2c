//! `ais lift SKILL.md --model SPEC`: the compile ([`ais_lift::compile::lift`]) — the program
//! written to `-o`, the report to `--out`, a summary on stderr.

use super::lift::{LiftArgs, clip, input_error};
use super::{CliError, CmdResult, Output, Status, escape_controls, shown};
use ais_core::Outcome;
use ais_lift::Skill;
use ais_lift::compile::{self, Adjudicate, Lifted, NoteAction, Options, SpecVerdict};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `ais lift SKILL.md --model SPEC`.
pub fn run(args: &LiftArgs, o: &mut Output) -> CmdResult {
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
    let (model, _) = super::run::open_model(spec)?;
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        CliError::new(
            format!("cannot create `{}`: {e}", shown(&out_dir)),
            "name a directory you can write with `--out DIR`",
        )
    })?;
    let mut options = Options {
        adjudicate: if args.no_adjudicate {
            Adjudicate::Nobody
        } else {
            Adjudicate::Model
        },
        ..Options::default()
    };
    let name = compile::program_name(&skill);
    let program_path = args
        .output
        .clone()
        .unwrap_or_else(|| out_dir.join(format!("{name}.agir")));
    options.source_path = Some(relative(&args.skill, &program_path));
    let tokio = super::run::tokio_runtime()?;
    let lifted = tokio
        .block_on(compile::lift(&skill, model.as_ref(), &options))
        .map_err(|e| {
            CliError::new(
                escape_controls(&e.to_string()),
                "check the model (`--model`) and, for a scripted one, its answer for that slot",
            )
        })?;
    write_new(&program_path, &lifted.agir)?;
    let report_path = out_dir.join(format!("{name}.lift.json"));
    let report = serde_json::to_string_pretty(&lifted.report).map_err(std::io::Error::from)?;
    write_new(&report_path, &(report + "\n"))?;
    summary(&lifted, o)?;
    writeln!(
        o.err,
        "wrote {} and {}",
        shown(&program_path),
        shown(&report_path)
    )?;
    let r = &lifted.report;
    Ok(match r.gates.outcome {
        Outcome::Failed => Status::Failed,
        _ if args.strict && r.strict_findings() > 0 => Status::Findings,
        _ => Status::Ok,
    })
}

/// Runs `ais lift SKILL.md --check-only PROGRAM`.
pub fn check_only(args: &LiftArgs, program: &Path, o: &mut Output) -> CmdResult {
    let skill = Skill::read(&args.skill).map_err(|e| input_error(&e))?;
    let text = super::files::read_source(program, &ais_core::agir::Limits::default())?;
    let doc = ais_core::agir::read(&text).map_err(|e| {
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

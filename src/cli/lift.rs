//! `ais lift SKILL.md --model SPEC`: the skill compiler ([`ais::lift::compile`]) — a checked,
//! audited AG-IR program with its provenance record, and the compile report. With
//! `--stages-only`, the code-owned analysis of a skill alone — the force of every sentence and
//! where it came from, the snippet sort, the sibling files — and, with `--proposals`, the
//! grounding and deontic audit of obligations a model (or a person) proposed.

use super::check::Format;
use super::{CliError, CmdResult, Output, Status, escape_controls, shown};
use ais::lift::bundle::{Bundle, Status as RefStatus};
use ais::lift::deontic::Stated;
use ais::lift::snippet::{Sort, Why};
use ais::lift::{Analysis, Drift, DriftKind, Grounding, InputError, Proposal, Skill, audit};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `ais lift`.
#[derive(Debug, clap::Args)]
pub struct LiftArgs {
    /// The skill (`SKILL.md`); the files it references are looked up beside it.
    pub skill: PathBuf,
    /// Run only the stages code owns (no model): markdown, force from structure, the snippet
    /// sort, bundle references, and with `--proposals` grounding and the deontic audit.
    #[arg(long)]
    pub stages_only: bool,
    /// The model that compiles: `scripted:FILE.json` (answers keyed by the slots `extract`,
    /// `critic`, `adjudicate`, `design`), `openai:MODEL`, `ollama:MODEL`, `anthropic:MODEL`.
    #[arg(long, value_name = "SPEC", conflicts_with = "stages_only")]
    pub model: Option<String>,
    /// Re-audit this lifted program against the skill, no model: each recorded quote grounded
    /// in the skill as it is now, each recorded force against what the skill now states, the
    /// digest, the faithfulness audit, and the sentences no recorded quote covers. Exit 1 on
    /// any finding.
    #[arg(long, value_name = "PROGRAM", conflicts_with_all = ["stages_only", "model"])]
    pub check_only: Option<PathBuf>,
    /// Where to write the program (default: `DIR/<name>.agir`, or `DIR/<name>.rs` with
    /// `--emit rust`; DIR from `--out`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// What to write the program as: AG-IR, or a Rust module holding it as an `ais!` program
    /// (its Python tools kept as Python tools) whose `AGIR` is the AG-IR the lift would write.
    /// Default: `rust` when `-o` names a `.rs` file, else `agir`.
    #[arg(long, value_enum, value_name = "FORM", conflicts_with_all = ["stages_only", "check_only"])]
    pub emit: Option<Emit>,
    /// The directory of the compile's record: the report `<name>.lift.json` (default: the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Ask the author about the residue (obligations whose force the skill leaves open): the
    /// compile pauses with the question, which `ais resume RUN_ID --answer 'r7: mandatory'`
    /// answers (or the terminal, when there is one); each decision is recorded as the
    /// author's.
    #[arg(long, conflicts_with = "no_adjudicate")]
    pub clarify: bool,
    /// Make no model call for the residue (obligations whose force the skill leaves open):
    /// each is discretionary, and the report says so.
    #[arg(long)]
    pub no_adjudicate: bool,
    /// Fail (exit 1) on any finding: a dropped proposal, a corrected or adjudicated force, a
    /// refused element, an exhausted spec loop, a finding of `ais check` or of the audit.
    #[arg(long)]
    pub strict: bool,
    /// Ground and audit these proposed obligations: a JSON array of `{rule, kind, force,
    /// bearer, quote, condition?, cohesion?}` (kind: step | io | human_gate | knowledge |
    /// grounding | constraint; force: mandatory | forbidden | discretionary; bearer: agent |
    /// user | environment).
    #[arg(long, value_name = "FILE")]
    pub proposals: Option<PathBuf>,
    /// Output format: a readable listing, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// What `ais lift` writes the program as (`--emit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// Canonical AG-IR (`.agir`).
    Agir,
    /// A Rust module with one `ais!` program (`.rs`).
    Rust,
}

impl Emit {
    /// The form a program file is written in, told by its extension: a `.rs` file is Rust.
    pub fn of(path: &std::path::Path) -> Emit {
        if path.extension().is_some_and(|e| e == "rs") {
            Emit::Rust
        } else {
            Emit::Agir
        }
    }

    /// How `--emit` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Emit::Agir => "agir",
            Emit::Rust => "rust",
        }
    }

    /// The program file's extension.
    pub fn extension(self) -> &'static str {
        match self {
            Emit::Agir => "agir",
            Emit::Rust => "rs",
        }
    }
}

impl LiftArgs {
    /// Whether these arguments ask for the compile (not `--stages-only`, not `--check-only`).
    pub fn compiles(&self) -> bool {
        !self.stages_only && self.check_only.is_none()
    }
}

/// The JSON report of `ais lift --stages-only`.
#[derive(Serialize)]
struct Report<'a> {
    analysis: &'a Analysis,
    #[serde(skip_serializing_if = "Option::is_none")]
    grounding: Option<&'a Grounding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    drift: Option<&'a [Drift]>,
}

/// Runs `ais lift`.
pub fn run(args: &LiftArgs, o: &mut Output) -> CmdResult {
    if let Some(program) = &args.check_only {
        return super::lift_compile::check_only(args, program, o);
    }
    let skill = Skill::read(&args.skill).map_err(|e| input_error(&e))?;
    let proposals = match &args.proposals {
        None => None,
        Some(path) => Some(read_proposals(path)?),
    };
    let analysis = skill.analyze();
    let grounding = proposals.map(|p| skill.ground(p));
    let drift = grounding.as_ref().map(|g| audit(&g.kept));
    match args.format {
        Format::Json => {
            let report = Report {
                analysis: &analysis,
                grounding: grounding.as_ref(),
                drift: drift.as_deref(),
            };
            serde_json::to_writer(&mut o.out, &report).map_err(std::io::Error::from)?;
            writeln!(o.out)?;
        }
        Format::Human => {
            write_analysis(&analysis, o)?;
            if let (Some(g), Some(d)) = (&grounding, &drift) {
                write_grounding(g, d, o)?;
            }
        }
    }
    let refused = analysis.bundle.refused().next().is_some();
    let dropped = grounding.as_ref().is_some_and(|g| !g.dropped.is_empty());
    let drifted = drift
        .as_ref()
        .is_some_and(|d| d.iter().any(|x| x.kind != DriftKind::Unstated));
    Ok(if refused || dropped || drifted {
        Status::Findings
    } else {
        Status::Ok
    })
}

pub(super) fn input_error(e: &InputError) -> CliError {
    let what = escape_controls(&e.to_string()).into_owned();
    let help = match e {
        InputError::TooLarge { .. } => "a skill is a few kilobytes of markdown; split a larger one",
        InputError::Binary { .. } => "give the path of the skill's markdown file",
        _ => "give the path of a readable SKILL.md",
    };
    CliError::new(what, help)
}

fn read_proposals(path: &std::path::Path) -> Result<Vec<Proposal>, CliError> {
    let name = shown(path);
    let text =
        ais::lift::input::read_bounded(path, 4 * 1024 * 1024, "proposals file").map_err(|e| {
            CliError::new(
                escape_controls(&e.to_string()).into_owned(),
                "give a JSON file",
            )
        })?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::new(
            format!(
                "{name}:{}:{}: not a list of proposals: {e}",
                e.line(),
                e.column()
            ),
            "write a JSON array of {\"rule\", \"kind\", \"force\", \"bearer\", \"quote\"} objects",
        )
    })
}

/// `text` on one line, control characters escaped, at most `max` characters.
pub(super) fn clip(text: &str, max: usize) -> String {
    let one = escape_controls(&text.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned();
    if one.chars().count() <= max {
        one
    } else {
        let cut: String = one.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn stated(s: &Stated) -> String {
    match s {
        Stated::Nothing => "unstated".to_owned(),
        Stated::One(f) => f.as_str().to_owned(),
        Stated::Mixed(fs) => fs.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("+"),
    }
}

fn write_analysis(a: &Analysis, o: &mut Output) -> std::io::Result<()> {
    if let Some(path) = &a.path {
        writeln!(o.out, "skill {}", escape_controls(path))?;
    }
    if let Some(fm) = &a.frontmatter {
        writeln!(
            o.out,
            "frontmatter (lines {}-{}): name {:?}, description {:?}",
            fm.span.line,
            fm.span.end_line,
            clip(fm.name.as_deref().unwrap_or("-"), 40),
            clip(fm.description.as_deref().unwrap_or("-"), 60),
        )?;
        if let Some(problem) = &fm.problem {
            writeln!(o.out, "  ! {}", clip(problem, 110))?;
        }
    }
    let count =
        |f: &dyn Fn(&Stated) -> bool| a.units.iter().filter(|u| f(&u.reading.stated)).count();
    writeln!(
        o.out,
        "\nforces ({} units: {} mandatory, {} forbidden, {} discretionary, {} mixed, {} unstated)",
        a.units.len(),
        count(&|s| *s == Stated::One(ais::lift::Force::Mandatory)),
        count(&|s| *s == Stated::One(ais::lift::Force::Forbidden)),
        count(&|s| *s == Stated::One(ais::lift::Force::Discretionary)),
        count(&|s| matches!(s, Stated::Mixed(_))),
        count(&|s| *s == Stated::Nothing),
    )?;
    for u in &a.units {
        let at = format!("{}:{}", u.span.line, u.span.column);
        let condition = u
            .reading
            .condition
            .as_ref()
            .map(|c| {
                format!(
                    " [{} '{}']",
                    if c.example { "example" } else { "if" },
                    c.marker
                )
            })
            .unwrap_or_default();
        writeln!(
            o.out,
            "  {at:<8} {:<22} {}{condition}\n  {:<8} {:<22} ← {}",
            stated(&u.reading.stated),
            clip(&u.text, 70),
            "",
            "",
            clip(&u.reading.source.describe(), 90),
        )?;
    }
    if !a.snippets.is_empty() {
        writeln!(o.out, "\ncode blocks ({})", a.snippets.len())?;
    }
    for s in &a.snippets {
        let sort = match &s.sort {
            Sort::Tool { runtime, shebang } => format!(
                "tool body ({runtime:?}{})",
                if *shebang { ", from its #! line" } else { "" }
            )
            .to_lowercase(),
            Sort::Knowledge { why } => format!("knowledge: {}", why_text(why)),
        };
        writeln!(
            o.out,
            "  {:<8} {:<10} {sort}",
            format!("{}:{}", s.span.line, s.span.column),
            clip(s.language.as_deref().unwrap_or("-"), 10),
        )?;
    }
    write_bundle(&a.bundle, o)
}

fn why_text(why: &Why) -> String {
    match why {
        Why::Empty => "no statement".to_owned(),
        Why::NoLanguage => "no language".to_owned(),
        Why::NotRunnable { language } => {
            format!("{} is not a language the runtime runs", clip(language, 20))
        }
        Why::Illustrative { context } => format!("an example (\"{}\")", clip(context, 40)),
        Why::Transcript { line } => format!("a session transcript (prompt at line {line})"),
        Why::Elided { line } => format!("code elided at line {line}"),
        Why::Placeholder { line, text } => {
            format!("a template ({} at line {line})", clip(text, 20))
        }
    }
}

fn write_bundle(b: &Bundle, o: &mut Output) -> std::io::Result<()> {
    if b.references.is_empty() {
        return Ok(());
    }
    writeln!(o.out, "\nfiles it names ({})", b.references.len())?;
    for r in &b.references {
        let status = match &r.status {
            RefStatus::Read { bytes, .. } => format!("read ({bytes} bytes)"),
            RefStatus::Missing { .. } => "not in the skill's directory".to_owned(),
            RefStatus::NotRead => "not read".to_owned(),
            RefStatus::Refused { refusal } => format!("REFUSED: {refusal}"),
        };
        writeln!(
            o.out,
            "  {:<8} {:<28} {status}",
            format!("{}:{}", r.span.line, r.span.column),
            clip(&r.target, 28),
        )?;
    }
    Ok(())
}

fn write_grounding(g: &Grounding, drift: &[Drift], o: &mut Output) -> std::io::Result<()> {
    writeln!(
        o.out,
        "\ngrounding: {} kept, {} dropped",
        g.kept.len(),
        g.dropped.len()
    )?;
    for k in &g.kept {
        let p = &k.proposal;
        writeln!(
            o.out,
            "  {:<6} {:<8} {} {} {} \"{}\"",
            clip(&p.rule, 6),
            format!("{}:{}", k.span.line, k.span.column),
            p.force.as_str(),
            p.kind.as_str(),
            p.bearer.as_str(),
            clip(&p.quote, 60),
        )?;
    }
    for d in &g.dropped {
        writeln!(
            o.out,
            "  {:<6} DROPPED  \"{}\": {}",
            clip(&d.proposal.rule, 6),
            clip(&d.proposal.quote, 50),
            clip(&d.reason.describe(), 90),
        )?;
    }
    for c in &g.conditions_dropped {
        writeln!(
            o.out,
            "  {:<6} condition \"{}\" removed: not in the skill",
            clip(&c.rule, 6),
            clip(&c.condition, 50)
        )?;
    }
    writeln!(o.out, "\ndeontic audit: {} finding(s)", drift.len())?;
    for d in drift {
        writeln!(
            o.out,
            "  {:<8} {:<13} {}",
            format!("{}:{}", d.span.line, d.span.column),
            format!("{:?}", d.kind).to_lowercase(),
            clip(&d.message, 110),
        )?;
    }
    Ok(())
}

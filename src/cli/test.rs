//! `ais test`: run eval suites (`*.aistest.yaml`, the `ais-eval` crate) and report each case's
//! pass rate; `ais test add RUN_ID --to SUITE` records a journaled run as a case.
//!
//! Exit status: 0 when every case of every suite met its threshold; 1 when one did not; 2 when
//! a suite cannot be read or checked (the error names its line and column), or a run cannot be
//! added.

use super::{CliError, Failure, Output, shown};
use ais::eval::runner::{self, Builtins, Options};
use ais::eval::{Suite, output, record};
use clap::ValueEnum;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How `ais test` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    /// A table of the cases, then every failed assertion with the value seen.
    Human,
    /// One JSON object: `{"passed", "suites": [{"cases": [{"pass_rate", "interval", …}]}]}`.
    Json,
    /// JUnit XML, for CI systems.
    Junit,
}

/// Arguments of `ais test`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TestArgs {
    /// `add`: record a journaled run as a case.
    #[command(subcommand)]
    pub command: Option<TestCommand>,
    /// The suites: `*.aistest.yaml` files, or directories whose suites run in name order.
    #[arg(value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// Run each case N times (overrides the suites' `trials`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub trials: Option<u32>,
    /// Trials run at once [default: the number of CPUs].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TestFormat::Human)]
    pub format: TestFormat,
    /// Where each trial's output root is made (`DIR/<suite>/<case>/<trial>/`), and the journal
    /// of every run (`DIR/<suite>/.ais/runs.db`) [default: `.ais/test` beside each suite].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not journal the runs.
    #[arg(long)]
    pub no_journal: bool,
    /// Print the JSON Schema of the suite format and exit.
    #[arg(long, conflicts_with = "suites")]
    pub schema: bool,
}

/// `ais test`'s subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TestCommand {
    /// Record a finished, journaled run as a case of a suite: its slots answered from the
    /// recording (no model asked), its assertions started from what the run produced.
    Add(AddArgs),
}

/// Arguments of `ais test add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The run's id (listed by `ais runs`).
    #[arg(value_name = "RUN_ID")]
    pub run: String,
    /// The suite to add the case to (created when it does not exist).
    #[arg(long, value_name = "SUITE")]
    pub to: PathBuf,
    /// The case's name [default: `run RUN_ID`].
    #[arg(long)]
    pub name: Option<String>,
    /// The program, when it moved [default: the one the run started with].
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// The output root whose journal holds the run [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The journal [default: OUT/.ais/runs.db].
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
}

/// `ais test`.
pub fn run(args: TestArgs, output: &mut Output) -> Result<u8, Failure> {
    if let Some(TestCommand::Add(add)) = args.command {
        return self::add(add, output);
    }
    if args.schema {
        let text = serde_json::to_string_pretty(&ais::eval::schema()).unwrap_or_default();
        writeln!(output.out, "{text}")?;
        return Ok(0);
    }
    if args.suites.is_empty() {
        return Err(CliError::new(
            "`ais test` names no suite",
            "name one or more `*.aistest.yaml` files or directories: `ais test tests/evals/`",
        )
        .into());
    }
    let files = suite_files(&args.suites)?;
    let mut suites = Vec::with_capacity(files.len());
    let mut bad = false;
    for file in &files {
        match Suite::load(file) {
            Ok(s) => suites.push(s),
            Err(e) => {
                bad = true;
                let text = ais::render::render_error(
                    &super::escape_controls(&e.to_string()),
                    Some(&e.help),
                    output.color_err,
                );
                writeln!(output.err, "{text}")?;
            }
        }
    }
    if bad {
        return Err(Failure::Exit(2));
    }
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get()),
        |n| n as usize,
    );
    let total: u64 = suites
        .iter()
        .flat_map(|s| &s.cases)
        .map(|c| u64::from(args.trials.unwrap_or(c.trials)))
        .sum();
    let bar = progress(args.format, total);
    let mut results = Vec::with_capacity(suites.len());
    for suite in &suites {
        let options = Options {
            trials: args.trials,
            jobs,
            out: trial_root(args.out.as_deref(), &suite.path),
            journal: !args.no_journal,
        };
        let shown_bar = bar.clone();
        let on_trial: Arc<runner::OnTrial> = Arc::new(move |case, trial| {
            shown_bar.inc(1);
            if !trial.passed {
                shown_bar.println(format!(
                    "FAILED `{}` trial {}",
                    super::escape_controls(&case.name),
                    trial.trial
                ));
            }
        });
        let result = runner::run(suite, Arc::new(Builtins), &options, on_trial)
            .map_err(|e| CliError::new(e, "name a writable directory with `--out DIR`"))?;
        results.push(result);
    }
    bar.finish_and_clear();
    match args.format {
        TestFormat::Human => {
            for r in &results {
                if results.len() > 1 {
                    writeln!(output.out, "suite {}", shown(&r.suite))?;
                }
                let text = output::human(r);
                output
                    .out
                    .write_all(super::escape_block(&text).as_bytes())?;
            }
        }
        TestFormat::Json => writeln!(output.out, "{}", output::json(&results))?,
        TestFormat::Junit => write!(output.out, "{}", output::junit(&results))?,
    }
    Ok(if results.iter().all(|r| r.passed) {
        0
    } else {
        1
    })
}

/// A progress bar on a terminal (human format), hidden elsewhere.
fn progress(format: TestFormat, total: u64) -> indicatif::ProgressBar {
    if format != TestFormat::Human || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} [{bar:30}] {pos}/{len} trials")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Where a suite's trials and journal go: `OUT/<suite>/` with `--out OUT`, else beside the
/// suite, `<suite's directory>/.ais/test/<suite>/`. Never the working directory as such, so
/// `ais test` runs the same from anywhere, a read-only directory included.
fn trial_root(out: Option<&Path>, suite: &Path) -> PathBuf {
    let root = match out {
        Some(out) => out.to_path_buf(),
        None => suite
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(".ais")
            .join("test"),
    };
    root.join(stem(suite))
}

/// The suite name of a file: its name without `.aistest.yaml`.
fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "suite".into());
    name.strip_suffix(ais::eval::suite::SUITE_SUFFIX)
        .unwrap_or(&name)
        .to_owned()
}

/// The suite files named: files as given, directories searched (not recursively) for
/// `*.aistest.yaml`, in name order.
fn suite_files(args: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for p in args {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| {
                    CliError::new(
                        format!("cannot list `{}`: {e}", shown(p)),
                        "name a readable directory",
                    )
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(ais::eval::suite::SUITE_SUFFIX))
                })
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(CliError::new(
                    format!("`{}` holds no `*.aistest.yaml` suite", shown(p)),
                    "name the suite files, or the directory that holds them",
                ));
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// `ais test add RUN_ID --to SUITE`.
fn add(args: AddArgs, output: &mut Output) -> Result<u8, Failure> {
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    let path = super::run::journal::journal_path(args.journal.as_deref(), &out);
    if !path.is_file() {
        return Err(CliError::new(
            format!("there is no journal at `{}` to take run {} from", shown(&path), args.run),
            "name the output root the run used with `--out DIR`, or its journal with `--journal PATH`",
        )
        .into());
    }
    let store = super::run::journal::open(&path, false)?;
    let recording = ais::rt::journal::Recording::from_sqlite(&store, &args.run)
        .map_err(|e| CliError::new(e.to_string(), "list the runs with `ais runs`"))?;
    drop(store);
    let recording = record::Recording::of(recording)
        .map_err(|e| CliError::new(e, "list the runs and their status with `ais runs`"))?;
    let program = match (
        &args.program,
        recording.start.meta.get("program").and_then(|p| p.as_str()),
    ) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => {
            return Err(CliError::new(
                format!("run {} does not record its program's file", args.run),
                "name it: `ais test add RUN_ID --to SUITE --program FILE.agir`",
            )
            .into());
        }
    };
    let suite_dir = args
        .to
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_owned();
    let program_rel = relative(&program, &suite_dir);
    let (rec_path, rec_rel) = record::recording_path(&args.to, &args.run);
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("run {}", args.run));
    let existing = if args.to.exists() {
        Some(super::files::read_source(
            &args.to,
            &ais::agir::Limits::default(),
        )?)
    } else {
        None
    };
    let new_text = match &existing {
        None => format!(
            "# Cases recorded with `ais test add`; run with `ais test {}`.\ncases:\n{}",
            shown(&args.to),
            record::case_yaml(&recording, &name, &program_rel, &rec_rel, 2)
        ),
        Some(text) => {
            let indent = cases_indent(text, &args.to)?;
            let mut t = text.clone();
            if !t.ends_with('\n') {
                t.push('\n');
            }
            t.push_str(&record::case_yaml(
                &recording,
                &name,
                &program_rel,
                &rec_rel,
                indent,
            ));
            t
        }
    };
    if let Some(dir) = rec_path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::new(
                format!("cannot create `{}`: {e}", shown(dir)),
                "check the directory's permissions",
            )
        })?;
    }
    let json = serde_json::to_string_pretty(&recording).unwrap_or_default();
    std::fs::write(&rec_path, json).map_err(|e| {
        CliError::new(
            format!("cannot write `{}`: {e}", shown(&rec_path)),
            "check the directory's permissions",
        )
    })?;
    if let Err(e) = Suite::parse(&args.to, &new_text) {
        let _ = std::fs::remove_file(&rec_path);
        return Err(CliError::new(
            format!("the suite with the new case does not check ({e}); nothing was written"),
            e.help,
        )
        .into());
    }
    match &existing {
        Some(text) => super::files::write_atomically(&args.to, &new_text, text)?,
        None => write_new(&args.to, &new_text)?,
    }
    writeln!(
        output.err,
        "added case `{}` to {} (its answers in {}); run it with `ais test {}`",
        super::escape_controls(&name),
        shown(&args.to),
        shown(&rec_path),
        shown(&args.to)
    )?;
    Ok(0)
}

fn write_new(path: &Path, text: &str) -> Result<(), CliError> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            CliError::new(
                format!("cannot create `{}`: {e}", shown(path)),
                "check the directory's permissions",
            )
        })?;
    f.write_all(text.as_bytes()).map_err(|e| {
        CliError::new(
            format!("cannot write `{}`: {e}", shown(path)),
            "check the disk",
        )
    })
}

/// The column of the dash of the suite's case entries; the suite must end with its `cases`
/// list in block style, so a case can be appended.
fn cases_indent(text: &str, path: &Path) -> Result<usize, CliError> {
    let data = ais::agir::read_data(text, &ais::agir::Limits::default()).map_err(|e| {
        CliError::new(
            format!("`{}` does not read as YAML: {}", shown(path), e.message),
            "fix the suite, or add the case to a new one",
        )
    })?;
    let refuse = |why: &str| {
        CliError::new(
            format!("cannot append a case to `{}`: {why}", shown(path)),
            "end the suite with its `cases:` list written one `- name: …` entry per line, or add the case to a new suite",
        )
    };
    let Some(top) = data.value.as_object() else {
        return Err(refuse("it is not a mapping"));
    };
    let last = top
        .keys()
        .filter_map(|k| {
            Some((
                data.key_pos_of(&format!("/{}", ais::agir::pointer_token(k)))?,
                k,
            ))
        })
        .max_by_key(|(p, _)| (p.line, p.column));
    if last.map(|(_, k)| k.as_str()) != Some("cases") {
        return Err(refuse("`cases` is not its last section"));
    }
    let Some(first) = data.pos_of("/cases/0") else {
        return Err(refuse("its `cases` list is empty or not a list"));
    };
    let line = text
        .lines()
        .nth(first.line as usize - 1)
        .unwrap_or_default();
    let dash = line.find('-').filter(|d| line[..*d].trim().is_empty());
    dash.ok_or_else(|| refuse("its `cases` list is written in flow style (`[...]`)"))
}

/// `path` relative to `dir` when both resolve (`..` as needed), else `path` as given.
fn relative(path: &Path, dir: &Path) -> String {
    let (Ok(p), Ok(d)) = (std::fs::canonicalize(path), std::fs::canonicalize(dir)) else {
        return path.display().to_string();
    };
    let pc: Vec<_> = p.components().collect();
    let dc: Vec<_> = d.components().collect();
    let common = pc.iter().zip(&dc).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..dc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out.display().to_string()
}

//! `ais runs`: the runs a journal holds — list them, show one's step table, certify one, remove
//! them.

use super::{CliError, Failure, Output, shown};
use ais::rt::journal::EffectKind;
use ais::rt::journal::sqlite::{Durability, SqliteStore};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `ais runs`.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// The journal [default: OUT/.ais/runs.db].
    #[arg(long, value_name = "PATH", global = true)]
    pub journal: Option<PathBuf>,
    /// The output root whose journal to read [default: the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub out: Option<PathBuf>,
    #[command(subcommand)]
    pub action: Option<Action>,
    #[command(flatten)]
    pub engine: super::run::restate::EngineArgs,
}

/// What `ais runs` does (default: list).
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print one run's step table.
    Show {
        /// The run's id.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ShowFormat::Human)]
        format: ShowFormat,
    },
    /// Certify a run against its program's provenance record: each obligation guaranteed,
    /// observable only, not reached or not realized, and the share of mandatory ones performed,
    /// hash-chained to the journal rows it rests on.
    Certify {
        /// The run's id (with `--verify`, the certificate names it).
        #[arg(required_unless_present = "verify")]
        id: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = super::certify::CertFormat::Text)]
        format: super::certify::CertFormat,
        /// Verify a certificate (the JSON `--format json` wrote) against the journal: exit 1
        /// naming the first row or claim that changed since.
        #[arg(long, value_name = "CERT.json")]
        verify: Option<PathBuf>,
    },
    /// Remove runs (not one a live process holds).
    Rm {
        /// The runs' ids.
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Remove every run older than a number of days (`30d`), hours (`12h`) or minutes (`90m`).
    Gc {
        /// The age: `30d`, `12h`, `90m`, `60s`.
        #[arg(long, value_name = "AGE")]
        older_than: String,
    },
}

/// How `ais runs show` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    /// A table.
    Human,
    /// One JSON object: the run and its steps.
    Json,
}

fn journal_error(e: ais::rt::journal::JournalError) -> CliError {
    CliError::new(
        e.to_string(),
        "name the journal with `--journal PATH` or the output root with `--out DIR`",
    )
}

fn age(text: &str) -> Result<u64, CliError> {
    let bad = || {
        CliError::new(
            format!("`--older-than {text}` is no age"),
            "write a number and a unit: `30d`, `12h`, `90m`, `60s`",
        )
    };
    let (n, unit) = text.split_at(text.len().saturating_sub(1));
    let n: u64 = n.parse().map_err(|_| bad())?;
    let mul = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => return Err(bad()),
    };
    Ok(n * mul)
}

/// What run `id` spent: its outcome's usage when it ended, else its last commit's (tokens,
/// slots, cost, failovers); `steps` are its commits when the caller read them already.
fn usage_of(
    store: &SqliteStore,
    id: &str,
    steps: Option<&[ais::rt::journal::sqlite::StepRow]>,
) -> Result<ais::rt::RunUsage, CliError> {
    let outcome = ais::rt::journal::sqlite::recorded_outcome(store, id).map_err(journal_error)?;
    if let Some(usage) = outcome
        .as_ref()
        .and_then(|o| serde_json::from_value(o["usage"].clone()).ok())
    {
        return Ok(usage);
    }
    let read;
    let steps = match steps {
        Some(s) => s,
        None => {
            read = store.steps(id).map_err(journal_error)?;
            &read
        }
    };
    Ok(steps.last().map_or_else(ais::rt::RunUsage::default, |s| {
        ais::rt::journal::usage_of(s.commit.usage, s.commit.spend)
    }))
}

/// A cost for a table's column: `$0.0123`, or `-` when no slot had a price.
fn cost_cell(cost: Option<f64>) -> String {
    cost.map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"))
}

/// What an exchange's recorded result says of its model and cost: ` · openai:m $0.0012`.
fn answered_by(result: &serde_json::Value) -> String {
    let r = result
        .get("completion")
        .or_else(|| result.get("failed"))
        .unwrap_or(&serde_json::Value::Null);
    let model = r["model"].as_str().map(|m| format!(" · {}", e_(m)));
    let cost = r["cost"].as_f64().map(|c| format!(" ${c:.4}"));
    format!("{}{}", model.unwrap_or_default(), cost.unwrap_or_default())
}

/// A name from the journal (a program's, a step's, a run's) as a table cell: its control
/// characters escaped ([`crate::cli::escape_controls`], the one function every listing uses).
fn e_(text: &str) -> std::borrow::Cow<'_, str> {
    crate::cli::escape_controls(text)
}

fn when(secs: i64) -> String {
    httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0) as u64),
    )
}

/// The effects of `ais runs show`: key, kind (`slot`, `choice`, `tool`, `artifact`, `mcp`),
/// what ran, whether it may run again, and whether its result is recorded.
fn effect_table(
    output: &mut Output,
    effects: &[ais::rt::journal::sqlite::EffectRow],
) -> std::io::Result<()> {
    if !effects.is_empty() {
        writeln!(
            output.out,
            "{:>6}  {:<8} {:<9} {:<20} {:<20} {:<6} result",
            "step", "path", "kind", "instruction", "name", "again"
        )?;
    }
    for e in effects {
        let f = &e.effect;
        let again = match f.idempotency {
            ais::rt::journal::Idempotency::Retry => "retry",
            ais::rt::journal::Idempotency::Once => "once",
        };
        let result = match &e.result {
            Some(r) if matches!(f.kind, EffectKind::Slot | EffectKind::Choice) => {
                format!("recorded{}", answered_by(r))
            }
            Some(_) => "recorded".to_owned(),
            None => "in flight".to_owned(),
        };
        writeln!(
            output.out,
            "{:>6}  {:<8} {:<9} {:<20} {:<20} {:<6} {result}",
            ais::rt::trace::step_label(
                f.key.step,
                &[],
                super::report::journal::sibling(&f.key.path)
            ),
            e_(&format!("{}#{}", f.key.path, f.key.index)),
            f.kind.as_str(),
            e_(&f.instruction),
            e_(&f.name),
            again,
        )?;
    }
    let open = effects.iter().filter(|e| e.result.is_none()).count();
    writeln!(
        output.out,
        "{} effects journaled, {open} in flight",
        effects.len()
    )
}

/// `ais runs`.
pub fn run(args: RunsArgs, output: &mut Output) -> Result<u8, Failure> {
    if args.engine.restate() {
        return super::run::restate::runs(&args, output);
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    let path = args
        .journal
        .clone()
        .unwrap_or_else(|| out.join(".ais").join("runs.db"));
    if !path.is_file() {
        return Err(CliError::new(
            format!("there is no journal at `{}`", shown(&path)),
            "name the output root with `--out DIR`, or the journal with `--journal PATH`",
        )
        .into());
    }
    let store = SqliteStore::open(&path, Durability::Normal).map_err(journal_error)?;
    match args.action {
        None => {
            let runs = store.runs().map_err(journal_error)?;
            writeln!(
                output.out,
                "{:<18} {:<16} {:<15} {:>6} {:>9}  {:<29}  last step",
                "id", "program", "status", "steps", "cost", "started"
            )?;
            for r in runs {
                let cost = usage_of(&store, &r.id, None)?.cost;
                writeln!(
                    output.out,
                    "{:<18} {:<16} {:<15} {:>6} {:>9}  {:<29}  {}",
                    e_(&r.id),
                    e_(&r.program),
                    e_(r.status.as_str()),
                    r.steps,
                    cost_cell(cost),
                    when(r.started),
                    e_(&r.last_step.unwrap_or_default())
                )?;
            }
        }
        Some(Action::Show { id, format }) => {
            let record = store
                .run(&id)
                .map_err(journal_error)?
                .ok_or_else(|| journal_error(ais::rt::journal::JournalError::NoRun(id.clone())))?;
            let steps = store.steps(&id).map_err(journal_error)?;
            let effects = store.effects(&id).map_err(journal_error)?;
            if format == ShowFormat::Json {
                let v = serde_json::json!({"run": record, "steps": steps, "effects": effects});
                writeln!(output.out, "{v}")?;
                return Ok(0);
            }
            let usage = usage_of(&store, &id, Some(&steps))?;
            writeln!(
                output.out,
                "run {} of `{}`: {} after {} steps, started {}{}",
                e_(&record.id),
                e_(&record.program),
                e_(record.status.as_str()),
                record.steps,
                when(record.started),
                super::run::show::spent(&usage)
            )?;
            // A paused run: the question it waits on, naming the step that asked.
            let outcome =
                ais::rt::journal::sqlite::recorded_outcome(&store, &id).map_err(journal_error)?;
            if let Some(pause) = outcome
                .filter(|_| {
                    record.status
                        == ais::rt::journal::RunState::Ended(ais::rt::Status::InputRequired)
                })
                .and_then(|o| serde_json::from_value::<ais::rt::Pause>(o["pause"].clone()).ok())
            {
                writeln!(output.out, "waits: {}", e_(&pause.question(None)))?;
            }
            writeln!(
                output.out,
                "{:>6}  {:<20} {:>6} {:>9}  written",
                "step", "instruction", "next", "cost"
            )?;
            let mut before = 0.0;
            for s in &steps {
                let written: Vec<String> = s
                    .commit
                    .written
                    .iter()
                    .map(|(n, _)| e_(n).into_owned())
                    .collect();
                // A commit keeps the run's total: the step's own cost is the difference.
                let total = s.commit.spend.cost;
                let cost = total.map(|t| t - before).filter(|c| *c > 0.0);
                before = total.unwrap_or(before);
                writeln!(
                    output.out,
                    "{:>6}  {:<20} {:>6} {:>9}  {}",
                    s.commit.step,
                    e_(&s.commit.instruction),
                    s.commit.cursor,
                    cost.map_or(String::new(), |c| format!("${c:.4}")),
                    written.join(", ")
                )?;
            }
            effect_table(output, &effects)?;
        }
        Some(Action::Certify { id, format, verify }) => {
            return super::certify::run(&store, id.as_deref(), verify.as_deref(), format, output);
        }
        Some(Action::Rm { ids }) => {
            let mut missing = Vec::new();
            for id in &ids {
                if !store.remove(id).map_err(journal_error)? {
                    missing.push(id.clone());
                }
            }
            if !missing.is_empty() {
                return Err(CliError::new(
                    format!("no run {} in `{}`", e_(&missing.join(", ")), shown(&path)),
                    "list the runs with `ais runs`",
                )
                .into());
            }
            writeln!(output.out, "removed {}", e_(&ids.join(", ")))?;
        }
        Some(Action::Gc { older_than }) => {
            let removed = store.gc(age(&older_than)?).map_err(journal_error)?;
            writeln!(
                output.out,
                "removed {} run{}",
                removed.len(),
                if removed.len() == 1 { "" } else { "s" }
            )?;
        }
    }
    Ok(0)
}

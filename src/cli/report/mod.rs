//! `ais report`: one self-contained HTML page of a run — the program's graph with the path the
//! run took, the step table, each slot's exchanges, the tool calls, the deviations, the fault
//! or pause, and the totals (tokens per slot and in all; a cost given prices).
//!
//! The run comes from a [`RunSource`]: the JSON Lines trace `ais run --trace FILE` wrote
//! (with, optionally, the JSON `ais run --format json` printed, for the status, the fault or
//! pause and the deviations), or a journaled run by its id (`journal`: the journal keeps the
//! program, so the graph needs no `--program`).

pub(crate) mod html;
pub(crate) mod journal;

use super::files::read_input;
use super::graph::write_new;
use super::{CliError, CmdResult, Output, Status, shown};
use ais::agir::{self, Limits};
use serde::Deserialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `ais report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run: a journaled run's id (see `ais runs`), or the trace file `ais run --trace
    /// FILE` wrote (JSON Lines).
    #[arg(value_name = "RUN", required_unless_present = "trace")]
    pub run: Option<PathBuf>,
    /// The journal holding the run [default: OUT/.ais/runs.db].
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// The output root whose journal holds the run [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The trace file, when not given as RUN.
    #[arg(long, value_name = "FILE", conflicts_with = "run")]
    pub trace: Option<PathBuf>,
    /// The JSON `ais run --format json` printed for the run: its status, fault or pause,
    /// deviations.
    #[arg(long, value_name = "FILE")]
    pub outcome: Option<PathBuf>,
    /// The program that ran (an AG-IR file): draws its graph with the path taken.
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
    /// Where to write the page.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// The price of a million input (prompt) tokens, for the cost column.
    #[arg(long, value_name = "PRICE", requires = "price_out")]
    pub price_in: Option<f64>,
    /// The price of a million output (completion) tokens.
    #[arg(long, value_name = "PRICE", requires = "price_in")]
    pub price_out: Option<f64>,
}

/// Where a run's record comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum RunSource {
    /// A JSON Lines trace, and the run's JSON outcome when there is one.
    Trace {
        /// The trace file.
        trace: PathBuf,
        /// The `ais run --format json` output.
        outcome: Option<PathBuf>,
    },
    /// A journaled run.
    Journal {
        /// The journal database.
        db: PathBuf,
        /// The run's id.
        id: String,
    },
}

/// One step event of a trace, as `ais::rt::trace::StepEvent` serializes it (every field
/// optional, so a trace of an older or newer ais still reads).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event {
    /// The step's number in the run.
    pub step: u64,
    /// A CALLed program's step: its numbers under the CALL at `step`.
    pub sub: Vec<u64>,
    /// The instruction's id.
    pub instruction: String,
    /// Its opcode.
    pub opcode: String,
    /// `code` or `model`.
    pub unit: String,
    /// A SPAWN sibling's index.
    pub sibling: Option<usize>,
    /// The bound operands: (name, value) pairs.
    pub operands: Vec<(String, serde_json::Value)>,
    /// The values written: (carry, value) pairs.
    pub written: Vec<(String, serde_json::Value)>,
    /// The tool that ran.
    pub tool: Option<String>,
    /// The slot's exchanges.
    pub slot: Option<SlotEvent>,
    /// The step's error.
    pub error: Option<String>,
    /// When it started (ms since the Unix epoch).
    pub started_ms: u64,
    /// How long it took (µs).
    pub elapsed_us: u64,
}

impl Event {
    /// Whether this is a step of the run's own (no SPAWN sibling, no CALLed program's step).
    pub fn is_own(&self) -> bool {
        self.sub.is_empty() && self.sibling.is_none()
    }
}

/// A slot's part of an [`Event`].
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SlotEvent {
    /// The model's name.
    pub model: String,
    /// Whether the model was scripted.
    pub scripted: bool,
    /// Every exchange: `{request, response}`.
    pub exchanges: Vec<ExchangeEvent>,
    /// The value that landed.
    pub parsed: Option<serde_json::Value>,
    /// Repair rounds used.
    pub repairs: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
    /// Token usage.
    pub usage: UsageEvent,
    /// How many exchanges the journal counted (a journal of an older ais kept the count, not
    /// the exchanges).
    pub recorded: usize,
    /// The tier the slot named.
    pub tier: String,
    /// Each move to the next model of the tier's chain: `{from, to, reason, kind}`.
    pub failovers: Vec<FailoverEvent>,
    /// What the slot cost in US dollars, when its models have prices.
    pub cost: Option<f64>,
}

/// A move to the next model of a chain.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct FailoverEvent {
    /// The model that gave no acceptable value.
    pub from: String,
    /// The model asked next.
    pub to: String,
    /// Why.
    pub reason: String,
}

/// One exchange of a slot.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ExchangeEvent {
    /// The request body sent.
    pub request: serde_json::Value,
    /// The response body received.
    pub response: serde_json::Value,
}

/// Token usage of a slot.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(default)]
pub struct UsageEvent {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
}

/// Everything a report shows of a run.
#[derive(Debug, Default)]
pub struct RunRecord {
    /// Where it came from, for the page's title.
    pub name: String,
    /// The step events, in order.
    pub events: Vec<Event>,
    /// The run's JSON outcome, when known.
    pub outcome: Option<serde_json::Value>,
    /// The program the run started with (its AG-IR), when the source keeps it (a journal).
    pub program: Option<String>,
}

impl RunSource {
    /// The source the arguments name: `--trace FILE`, or RUN when it is a file, is a trace;
    /// any other RUN is a run id in the journal (`--journal PATH`, else `OUT/.ais/runs.db`).
    pub fn from_args(args: &ReportArgs) -> RunSource {
        if let Some(run) = args
            .run
            .as_ref()
            .filter(|r| args.trace.is_none() && !r.is_file())
        {
            let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
            let db = args
                .journal
                .clone()
                .unwrap_or_else(|| out.join(".ais").join("runs.db"));
            return RunSource::Journal {
                db,
                id: run.display().to_string(),
            };
        }
        let trace = args
            .trace
            .clone()
            .or_else(|| args.run.clone())
            .unwrap_or_default();
        RunSource::Trace {
            trace,
            outcome: args.outcome.clone(),
        }
    }

    /// Reads the run's record; a line that is not a trace event is an error naming the file
    /// and the line.
    pub fn load(&self) -> Result<RunRecord, CliError> {
        let (trace, outcome) = match self {
            RunSource::Trace { trace, outcome } => (trace, outcome),
            RunSource::Journal { db, id } => return journal::load(db, id),
        };
        let limits = Limits {
            max_bytes: 256 << 20,
            ..Limits::default()
        };
        let text = read_input(trace, &limits)?;
        let mut events = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let event: Event = serde_json::from_str(line).map_err(|e| {
                CliError::new(
                    format!("`{}` line {}: not a trace event ({e})", shown(trace), n + 1),
                    "give the JSON Lines file `ais run --trace FILE` wrote",
                )
            })?;
            events.push(event);
        }
        let outcome = match outcome {
            None => None,
            Some(path) => {
                let text = read_input(path, &limits)?;
                Some(serde_json::from_str(text.trim()).map_err(|e| {
                    CliError::new(
                        format!("`{}` is not a run's JSON ({e})", shown(path)),
                        "give what `ais run --format json` printed",
                    )
                })?)
            }
        };
        Ok(RunRecord {
            name: shown(trace),
            events,
            outcome,
            program: None,
        })
    }
}

/// The graph of the program a journal recorded (a CALL target is drawn as a box: the journal
/// keeps no other program).
fn graph_of_source(source: &str) -> Option<ais::graph::Graph> {
    let doc = agir::read(source).ok()?;
    Some(ais::graph::Graph::new(&doc.program, &[], &mut |_| None))
}

/// The program's graph, when a program is given.
fn graph_of(path: &Path) -> Result<ais::graph::Graph, CliError> {
    let text = read_input(path, &Limits::default())?;
    let doc = agir::read(&text).map_err(|e| {
        CliError::new(
            format!("`{}` does not read as AG-IR: {e}", shown(path)),
            "give the program the run ran (`--program FILE.agir`)",
        )
    })?;
    let dir = super::graph::program_dir(path);
    Ok(ais::graph::Graph::new(&doc.program, &[], &mut |target| {
        super::budget::find(dir, target).ok().map(|d| d.program)
    }))
}

/// Runs `ais report`.
pub fn run(args: &ReportArgs, o: &mut Output) -> CmdResult {
    let record = RunSource::from_args(args).load()?;
    let graph = match args.program.as_deref() {
        Some(path) => Some(graph_of(path)?),
        None => record.program.as_deref().and_then(graph_of_source),
    };
    let prices = args.price_in.zip(args.price_out);
    if let Some((i, p)) = prices
        && !(i >= 0.0 && i.is_finite() && p >= 0.0 && p.is_finite())
    {
        return Err(CliError::new(
            "`--price-in` and `--price-out` must be non-negative numbers",
            "give the price of a million tokens, e.g. `--price-in 3 --price-out 15`",
        )
        .into());
    }
    let page = html::page(&record, graph.as_ref(), prices);
    write_new(&args.output, &page)?;
    writeln!(
        o.err,
        "wrote the report of {} ({} steps) to {}",
        record.name,
        record.events.iter().filter(|e| e.is_own()).count(),
        shown(&args.output)
    )?;
    Ok(Status::Ok)
}

//! The command line: argument parsing, dispatch, exit codes and terminal handling.

mod ags;
mod ags_run;
mod budget;
mod certify;
mod check;
mod edit;
mod eval;
mod files;
mod fix;
mod fmt;
mod graph;
mod lift;
mod lift_compile;
mod mcp;
mod new;
mod report;
mod run;
mod runs;
mod serve;
mod test;

use ais::render;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// The exit code of a usage error (an unknown command or option, a missing or malformed
/// argument): `EX_USAGE` of sysexits(3), kept apart from 2, which means a file has no runnable
/// program or could not be read or written.
pub const USAGE_EXIT: u8 = 64;

/// The exit status of a run, from best to worst; a run over several files exits with the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// 0: nothing of error severity remains (or the command had nothing to report).
    Ok,
    /// 1: an error-severity finding remains, a file is not canonical, an expression failed.
    Findings,
    /// 2: a file could not be read as a program (outcome `failed`), or the command itself failed
    /// (a missing file, an unwritable destination, a bad `--carries` value). A usage error exits
    /// with [`USAGE_EXIT`] instead.
    Failed,
}

impl Status {
    pub(crate) fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Findings => 1,
            Status::Failed => 2,
        }
    }
}

/// An error that stops a command: what went wrong and the next step.
#[derive(Debug)]
pub struct CliError {
    /// What went wrong, naming the file or argument.
    pub what: String,
    /// The next step.
    pub help: Option<String>,
}

impl CliError {
    /// An error with a next step.
    pub fn new(what: impl Into<String>, help: impl Into<String>) -> Self {
        CliError {
            what: what.into(),
            help: Some(help.into()),
        }
    }
}

/// When to color output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Color when the output is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

impl ColorChoice {
    /// Whether to color a stream that is (or is not) a terminal.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// Agents as typed programs: check, format, repair and evaluate AIS programs (AG-IR files).
#[derive(Debug, Parser)]
#[command(name = "ais", version, about, long_about = None)]
pub struct Cli {
    /// When to color diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate AG-IR files (spec §9), or AGS 1.0 graphs (`*.agraph.yaml`, `*.agraph.json`:
    /// the AGS schema and rules AG001–AG909), and report every finding.
    ///
    /// Exit status: 0 when no error-severity finding remains, 1 when one does, 2 when a file
    /// has no runnable program (outcome `failed`) or cannot be read.
    Check(check::CheckArgs),
    /// Print a file as canonical AG-IR, check that it is canonical, or rewrite it in place.
    ///
    /// Relaxations of strict YAML the file needed are noted on stderr. Exit status: 0; 1 when
    /// `--check` finds the file not canonical; 2 when it cannot be read as AG-IR.
    Fmt(fmt::FmtArgs),
    /// Apply the validator's mechanical repairs and print (or write) the repaired program.
    ///
    /// The repaired program goes to stdout as canonical AG-IR; the deviation record (one line
    /// per repair) and the summary go to stderr, so stdout stays a valid .agir file. Exit status
    /// as for `check`; when the outcome is `failed` nothing is printed or written.
    Fix(fix::FixArgs),
    /// Evaluate an expression of the guard and CODE-body language and print its value as JSON.
    ///
    /// Exit status: 0 with the value on stdout; 1 with the diagnostic (category, line, column,
    /// message, a caret under the expression) on stderr.
    Eval(eval::EvalArgs),
    /// Run a program to its report: slots filled by `--model`, tools by the runtime.
    ///
    /// Exit status: 0 ok; 1 error or fault; 3 paused for human input; 2 not runnable.
    Run(run::RunArgs),
    /// Continue a journaled run that did not finish (crashed, interrupted, or paused for an
    /// answer).
    Resume(run::ResumeArgs),
    /// Re-execute a finished, journaled run with every slot answered from its journal: a
    /// recorded run as an offline regression test of its program.
    ///
    /// Exit status: 0 the replay matches the recording; 1 it differs; 2 it cannot replay.
    Replay(run::ReplayArgs),
    /// Translate an AGS 1.0 graph (`*.agraph.yaml`, `*.agraph.json`) into the equivalent AG-IR
    /// program, printed on stdout (docs/AGS.md). Exit status: 0; 2 when the graph has errors.
    Import(ags::ImportArgs),
    /// Translate an AG-IR program into an AGS 1.0 graph document (`--ags`, JSON on stdout).
    Export(ags::ExportArgs),
    /// List the runs a journal holds; `show ID`, `rm ID…`, `gc --older-than AGE`.
    Runs(runs::RunsArgs),
    /// MCP: lock a program's server tools (`ais mcp lock`), or serve programs as MCP tools
    /// (`ais mcp serve`).
    Mcp(mcp::McpArgs),
    /// Draw a program's control graph: Mermaid (default), Graphviz DOT, or SVG.
    ///
    /// Code- and model-owned steps are drawn apart; edges carry their guards and modalities,
    /// LOOP back edges their caps; SPAWN workers and CALL targets are nested. Exit status: 0;
    /// 1 when `--check` finds an error-severity finding; 2 when the file cannot be read.
    Graph(graph::GraphArgs),
    /// Write one self-contained HTML page of a run from its trace (`ais run --trace FILE`).
    ///
    /// The graph and the path taken (with `--program`), the step table, each slot's exchanges,
    /// the tool calls, the deviations and the fault or pause (with `--outcome`), and the token
    /// totals (a cost with `--price-in`/`--price-out`). The page fetches nothing. Exit status:
    /// 0; 2 when an input cannot be read or the page cannot be written.
    Report(report::ReportArgs),
    /// Serve programs as Restate workflows (`--restate`; the `restate` cargo feature).
    Serve(serve::ServeArgs),
    /// The skill compiler's code-owned stages (`--stages-only`): the force of every sentence
    /// of a SKILL.md and where it came from (its own marker, a list intro, a heading; code is
    /// discretionary), its code blocks sorted into tool bodies and knowledge, the files it
    /// names, and with `--proposals` the grounding and deontic audit of proposed obligations.
    ///
    /// Exit status: 0; 1 when a file it names is refused, a proposal is dropped or the audit
    /// finds drift; 2 when the skill cannot be read.
    Lift(lift::LiftArgs),
    /// Edit an AG-IR program by operations: `status`, `help`, `query`, `view`, `patch` and
    /// sugar verbs (`rename`, `set_doc`, …), JSON in and out (the `ais_edit` crate).
    ///
    /// Exit status: 0 the answer is `ok`; 1 it is a rejection (whose `possible_repairs` name
    /// the next call); 2 the root cannot be used.
    Edit(edit::EditArgs),
    /// Run eval suites (`*.aistest.yaml`): each case's assertions on its report, artifacts,
    /// trajectory and cost, over `--trials N`, with its pass rate and 95% interval; `ais test
    /// add RUN_ID --to SUITE` records a journaled run as a case.
    ///
    /// Exit status: 0 when every case met its threshold; 1 when one did not; 2 when a suite
    /// cannot be read or checked.
    Test(test::TestArgs),
    /// Scaffold a working first agent in a new directory NAME: the CSV-sentiment agent of the
    /// book's tutorial as an `.agir` with scripted answers, a sample CSV and a README; with
    /// `--rust`, a crate (the agent in `ais!`, a `build.rs` export, a test).
    ///
    /// Exit status: 0; 2 when NAME is not a usable name or its directory exists.
    New(new::NewArgs),
    /// Print the command-line reference as Markdown, generated from these definitions: the
    /// book's `reference/cli.md` (a test keeps it equal).
    #[command(hide = true)]
    CliReference,
}

/// A standard stream that stops writing, quietly, once its reader has gone away (`ais check … |
/// head -1`): later writes are dropped, so the command still runs to the end and exits with the
/// status its findings decide, not with a status the closed pipe decided.
pub struct Stream<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Stream<W> {
    /// A stream writing to `inner`.
    pub fn new(inner: W) -> Self {
        Stream {
            inner,
            closed: false,
        }
    }

    fn settle<T>(&mut self, result: io::Result<T>, dropped: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(dropped)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for Stream<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.settle(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.settle(result, ())
    }
}

/// Where a command writes: stdout for its product, stderr for diagnostics about it, each
/// colored or not.
pub struct Output {
    /// Standard output.
    pub out: Stream<io::StdoutLock<'static>>,
    /// Standard error.
    pub err: Stream<io::StderrLock<'static>>,
    /// Whether to color what goes to stdout.
    pub color_out: bool,
    /// Whether to color what goes to stderr.
    pub color_err: bool,
}

/// Parses the command line, runs the command, and maps the result to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse().and_then(|cli| usable(&cli).map(|()| cli)) {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` print on stdout and succeed; a usage error has its own
            // exit code, apart from 2 (`failed`).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { USAGE_EXIT } else { 0 });
        }
    };
    // `ais mcp serve` speaks the protocol on stdout: it must not hold the stdout lock.
    if let Command::Mcp(args) = &cli.command
        && let mcp::McpCommand::Serve(serve) = &args.command
    {
        return mcp::serve_main(serve, cli.color);
    }
    if let Command::Mcp(args) = &cli.command
        && let mcp::McpCommand::Edit(e) = &args.command
    {
        return edit::serve_main(e);
    }
    let stdout = io::stdout();
    let stderr = io::stderr();
    let mut output = Output {
        color_out: cli.color.enabled(stdout.is_terminal()),
        color_err: cli.color.enabled(stderr.is_terminal()),
        out: Stream::new(stdout.lock()),
        err: Stream::new(stderr.lock()),
    };
    let result = match cli.command {
        Command::Check(args) => check::run(&args, &mut output),
        Command::Fmt(args) => fmt::run(&args, &mut output),
        Command::Fix(args) => fix::run(&args, &mut output),
        Command::Eval(args) => eval::run(&args, &mut output),
        Command::Run(args) => return run::run(args, &mut output),
        Command::Resume(args) => return run::resume(args, &mut output),
        Command::Replay(args) => return run::replay(args, &mut output),
        Command::Import(args) => ags::import(&args, &mut output),
        Command::Export(args) => ags::export(&args, &mut output),
        Command::Runs(args) => match runs::run(args, &mut output) {
            Ok(code) => return ExitCode::from(code),
            Err(failure) => return stopped(failure, &mut output),
        },
        Command::Mcp(args) => mcp::run(&args, &mut output),
        Command::Graph(args) => graph::run(&args, &mut output),
        Command::Report(args) => report::run(&args, &mut output),
        Command::Serve(args) => return serve::run(args, &mut output),
        Command::Lift(args) if args.compiles() => return lift_compile::run(&args, &mut output),
        Command::Lift(args) => lift::run(&args, &mut output),
        Command::Edit(args) => edit::run(&args, &mut output),
        Command::New(args) => new::run(&args, &mut output),
        Command::CliReference => cli_reference(&mut output),
        Command::Test(args) => match test::run(args, &mut output) {
            Ok(code) => return ExitCode::from(code),
            Err(failure) => return stopped(failure, &mut output),
        },
    };
    match result {
        Ok(status) => ExitCode::from(status.code()),
        Err(failure) => stopped(failure, &mut output),
    }
}

/// `ais cli-reference`: every command, argument and option as Markdown, from clap.
fn cli_reference(o: &mut Output) -> CmdResult {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command line".to_owned())
        .show_footer(false)
        .show_table_of_contents(true);
    let text = clap_markdown::help_markdown_custom::<Cli>(&options);
    write!(o.out, "{text}")?;
    Ok(Status::Ok)
}

/// Reports on stderr why a command stopped early, and returns its exit code: 2
/// ([`Status::Failed`]) for an error or a failed write, the given code for a failure already
/// reported.
pub(crate) fn stopped(failure: Failure, output: &mut Output) -> ExitCode {
    let text = match failure {
        Failure::Exit(code) => return ExitCode::from(code),
        Failure::Cli(err) => render::render_error(&err.what, err.help.as_deref(), output.color_err),
        Failure::Io(e) => render::render_error(
            &format!("cannot write the output: {e}"),
            Some("check that the output stream or disk is writable"),
            output.color_err,
        ),
    };
    // Nothing more can be done when stderr itself is gone.
    let _ = writeln!(output.err, "{text}");
    ExitCode::from(Status::Failed.code())
}

/// The usage errors clap cannot see: standard input (`-`) named twice, or as the file `-w`
/// should rewrite.
fn usable(cli: &Cli) -> Result<(), clap::Error> {
    let (sub, conflict) = match &cli.command {
        Command::Check(args) => {
            let stdin = args.files.iter().filter(|f| files::is_stdin(f)).count();
            (
                "check",
                (stdin > 1).then_some("standard input (`-`) can be read only once"),
            )
        }
        Command::Fmt(args) => (
            "fmt",
            (args.write && files::is_stdin(&args.file)).then_some(
                "`-w` rewrites a file in place, and `-` is standard input: \
                 `ais fmt -` prints the canonical text on standard output",
            ),
        ),
        Command::Fix(args) => (
            "fix",
            (args.write && files::is_stdin(&args.file)).then_some(
                "`-w` rewrites a file in place, and `-` is standard input: \
                 `ais fix -` prints the repaired program on standard output",
            ),
        ),
        _ => return Ok(()),
    };
    match conflict {
        None => Ok(()),
        Some(message) => {
            let mut command = Cli::command();
            let sub = command
                .find_subcommand_mut(sub)
                .map_or_else(Cli::command, |c| c.clone().bin_name(format!("ais {sub}")));
            Err(sub
                .clone()
                .error(clap::error::ErrorKind::ArgumentConflict, message))
        }
    }
}

/// Why a command stopped early.
#[derive(Debug)]
pub enum Failure {
    /// A user-facing error: missing file, bad argument, unwritable destination.
    Cli(CliError),
    /// Writing our own output failed.
    Io(io::Error),
    /// Already reported on stderr (a program that cannot be read): exit with this code.
    Exit(u8),
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        Failure::Cli(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

/// The result of a command.
pub type CmdResult = Result<Status, Failure>;

/// A path as shown in messages: control characters (an escape sequence, a newline in a file
/// name) are escaped, so a file name can never drive the terminal.
pub fn shown(path: &std::path::Path) -> String {
    escape_controls(&path.display().to_string()).into_owned()
}

/// Text from a program, a journal, a model or a file name, as one line of a listing or a
/// message: every control character (C0, DEL, C1, the line break and tab included) and the
/// bidirectional overrides that reorder what a terminal shows written as a visible escape
/// (`\x1b`, `\u{202e}`), so a name can never move the cursor, recolor, retitle or clear the
/// terminal, nor break a table's row. Every table and message of the CLI prints names through
/// this function (or [`escape_block`] for a block of lines).
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    escape(text, false)
}

/// [`escape_controls`] for a block of text: line breaks and tabs kept.
pub fn escape_block(text: &str) -> std::borrow::Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    let hostile = |c: char| {
        (c.is_control() && !(keep_lines && (c == '\n' || c == '\t')))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hostile) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !hostile(c) {
            out.push(c);
        } else if let Some(short) = match c {
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            _ => None,
        } {
            out.push_str(short);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

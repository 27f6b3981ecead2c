//! `ais graph`: a program's picture as Mermaid, DOT or SVG ([`ais::graph`]).

use super::files::{display_name, is_stdin};
use super::fmt::read_document;
use super::shown as shown_path;
use super::{CliError, CmdResult, Output, Status};
use ais::{Repairs, check};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `ais graph` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid `flowchart` (renders in GitHub, GitLab and most Markdown viewers).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// A standalone SVG image, laid out by ais itself (no Graphviz needed).
    Svg,
}

/// Arguments of `ais graph`.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// The AG-IR file (or an `ais!` program's exported `.agir`); `-` reads standard input.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
    pub format: GraphFormat,
    /// Check the program and mark the instructions its findings are about.
    #[arg(long)]
    pub check: bool,
    /// Write to this file (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The directory a file's CALL targets are looked up in.
pub fn program_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !is_stdin(path) && !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Runs `ais graph`.
pub fn run(args: &GraphArgs, o: &mut Output) -> CmdResult {
    let (_, doc) = match read_document(&args.file, o)? {
        Ok(read) => read,
        Err(status) => return Ok(status),
    };
    let findings = if args.check {
        check(&doc.program, &doc.source_map, Repairs::Off).findings
    } else {
        Vec::new()
    };
    let dir = program_dir(&args.file);
    let graph = ais::graph::Graph::new(&doc.program, &findings, &mut |target| {
        super::budget::find(dir, target).ok().map(|d| d.program)
    });
    let text = match args.format {
        GraphFormat::Mermaid => graph.mermaid(),
        GraphFormat::Dot => graph.dot(),
        GraphFormat::Svg => graph.svg().map_err(|e| {
            super::CliError::new(
                e.to_string(),
                "draw it with `ais graph --format mermaid` or `--format dot`",
            )
        })?,
    };
    match &args.output {
        None => o.out.write_all(text.as_bytes())?,
        Some(path) => {
            write_new(path, &text)?;
            writeln!(
                o.err,
                "wrote the graph of {} to {}",
                display_name(&args.file),
                shown_path(path)
            )?;
        }
    }
    Ok(
        if findings.iter().any(|f| f.severity >= ais::Severity::Error) {
            Status::Findings
        } else {
            Status::Ok
        },
    )
}

/// Writes `contents` to `path` atomically: a temporary file beside it, then a rename, so a
/// reader never sees half a file and a failure leaves whatever was there. The file is created
/// as any program creates one, mode `0666` less the umask (`0644` under the usual `022`), not
/// the temporary file's private `0600`: a picture or a report is meant to be shared.
pub fn write_new(path: &Path, contents: &str) -> Result<(), CliError> {
    let name = shown_path(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fail = |e: std::io::Error| {
        CliError::new(
            format!("cannot write `{name}`: {e}"),
            "name a file in a directory you can write",
        )
    };
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Passed to open(2), which applies the umask.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(fail)?;
    tmp.write_all(contents.as_bytes()).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

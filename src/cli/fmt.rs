//! `ais fmt`: canonical AG-IR.

use super::files::{display_name, is_stdin, read_input, write_atomically};
use super::{CliError, CmdResult, Output, Status};
use ais::agir::{self, Document, Limits};
use ais::{Program, render};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `ais fmt`.
#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// The AG-IR file; `-` reads standard input and prints to standard output.
    pub file: PathBuf,
    /// Print nothing; exit 1 when the file is not canonical, naming the first line that differs.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
    /// Rewrite the file in place (atomically) when it is not canonical.
    #[arg(short = 'w', long = "write")]
    pub write: bool,
}

/// Reads a file (standard input for `-`) as AG-IR, printing its read error (and exiting 2) when it is not, and a note on
/// stderr for each relaxation of strict YAML the reading needed.
pub fn read_document(
    path: &Path,
    o: &mut Output,
) -> Result<Result<(String, Document), Status>, super::Failure> {
    let name = display_name(path);
    let limits = Limits::default();
    let source = read_input(path, &limits)?;
    match agir::read_with_limits(&source, &limits) {
        Err(err) => {
            let text = render::render_read_error(&err, &source, &name, o.color_err);
            writeln!(o.err, "{text}")?;
            Ok(Err(Status::Failed))
        }
        Ok(doc) => {
            for relaxation in &doc.relaxations {
                let text = render::render_relaxation(relaxation, &source, &name, o.color_err);
                writeln!(o.err, "{text}")?;
            }
            Ok(Ok((source, doc)))
        }
    }
}

/// The canonical text of `program` with the comments and unknown sections of `like` (the
/// document it was read as) kept, after making sure it reads back to the same program (a
/// writer bug must never reach the user's file) and that the reader accepts its size.
pub fn canonical(program: &Program, like: &Document, name: &str) -> Result<String, CliError> {
    agir::write_keeping(program, like, &Limits::default()).map_err(|e| {
        CliError::new(
            format!("cannot write `{name}`: {}", e.message),
            e.help.unwrap_or_default(),
        )
    })
}

/// The text, when the reader would accept its size: ais never writes a file it would then
/// refuse to read.
pub fn within_limit(text: String, name: &str) -> Result<String, CliError> {
    let max = Limits::default().max_bytes;
    if text.len() > max {
        return Err(CliError::new(
            format!(
                "the new text of `{name}` would be {} bytes, more than the {max} bytes ais \
                 reads; nothing written",
                text.len()
            ),
            "split the module into smaller programs joined by CALL",
        ));
    }
    Ok(text)
}

/// The first line (1-based) where two texts differ, with each side's text of that line.
/// A side that ran out of lines is `None`.
pub fn first_difference<'a>(
    a: &'a str,
    b: &'a str,
) -> Option<(usize, Option<&'a str>, Option<&'a str>)> {
    let mut left = a.split('\n');
    let mut right = b.split('\n');
    let mut line = 0;
    loop {
        line += 1;
        match (left.next(), right.next()) {
            (None, None) => return None,
            (l, r) if l == r => {}
            (l, r) => return Some((line, l, r)),
        }
    }
}

/// A line as shown in a message, with the invisible differences named: a carriage return
/// (CRLF line endings), a byte-order mark, trailing spaces, tabs.
fn describe(line: Option<&str>) -> String {
    let Some(raw) = line else {
        return "the end of the file".to_owned();
    };
    let mut notes = Vec::new();
    let mut l = raw;
    if let Some(rest) = l.strip_prefix('\u{FEFF}') {
        notes.push("a byte-order mark (U+FEFF) before it");
        l = rest;
    }
    if let Some(rest) = l.strip_suffix('\r') {
        notes.push("a carriage return at its end (CRLF line ending)");
        l = rest;
    }
    if l.ends_with([' ', '\t']) {
        notes.push("trailing whitespace");
    }
    if l.contains('\t') {
        notes.push("a tab");
    }
    let shown = if l.is_empty() {
        "an empty line".to_owned()
    } else {
        format!("`{}`", super::escape_controls(l))
    };
    if notes.is_empty() {
        shown
    } else {
        format!("{shown} with {}", notes.join(" and "))
    }
}

/// Runs `ais fmt`.
pub fn run(args: &FmtArgs, o: &mut Output) -> CmdResult {
    let name = display_name(&args.file);
    let (source, doc) = match read_document(&args.file, o)? {
        Ok(x) => x,
        Err(status) => return Ok(status),
    };
    let text = canonical(&doc.program, &doc, &name)?;
    if args.check {
        return match first_difference(&source, &text) {
            None => Ok(Status::Ok),
            Some((line, was, canon)) => {
                let what = format!("`{name}` is not canonical AG-IR: line {line} differs");
                let next = if is_stdin(&args.file) {
                    "`ais fmt -` prints the canonical text".to_owned()
                } else {
                    format!("run `ais fmt -w {name}`")
                };
                let help = format!(
                    "the file has {} where canonical AG-IR has {}; {next}",
                    describe(was),
                    describe(canon)
                );
                let text = render::render_error(&what, Some(&help), o.color_err);
                writeln!(o.err, "{text}")?;
                Ok(Status::Findings)
            }
        };
    }
    if args.write {
        if source != text {
            write_atomically(&args.file, &text, &source)?;
        }
        return Ok(Status::Ok);
    }
    o.out.write_all(text.as_bytes())?;
    o.out.flush()?;
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn invisible_differences_are_named() {
        assert_eq!(
            super::describe(Some("---\r")),
            "`---` with a carriage return at its end (CRLF line ending)"
        );
        assert_eq!(
            super::describe(Some("\u{FEFF}---")),
            "`---` with a byte-order mark (U+FEFF) before it"
        );
        assert_eq!(
            super::describe(Some("a: 1 ")),
            "`a: 1 ` with trailing whitespace"
        );
        assert_eq!(super::describe(Some("")), "an empty line");
    }

    #[test]
    fn first_difference_names_the_line() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\n", "a\nc\n"),
            Some((2, Some("b"), Some("c")))
        );
        assert_eq!(
            first_difference("a\n", "a\nb\n"),
            Some((2, Some(""), Some("b")))
        );
        assert_eq!(first_difference("a", "a\n"), Some((2, None, Some(""))));
    }
}

//! `ais eval`: evaluate an expression.

use super::files::read_source;
use super::{CliError, CmdResult, Output, Status, shown};
use ais::agir::{self, Limits};
use ais::{Program, Value, expr, render};
use indexmap::IndexMap;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `ais eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The expression, e.g. `plan_ok and len(tasks) > 0` (it may start with `-`: `ais eval -1`).
    #[arg(allow_hyphen_values = true)]
    pub expr: String,
    /// Carry values as a JSON object, e.g. `{"plan_ok": true, "tasks": ["a"]}`.
    #[arg(long, value_name = "JSON", conflicts_with = "carries_file")]
    pub carries: Option<String>,
    /// A file holding the carry values as a JSON object; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pub carries_file: Option<PathBuf>,
    /// An AG-IR file whose declared types (enums, objects) and carries the expression may use.
    #[arg(long, value_name = "FILE.agir")]
    pub types: Option<PathBuf>,
}

/// Parses `--carries`: a JSON object of carry values.
pub fn parse_carries(text: &str) -> Result<IndexMap<String, Value>, CliError> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        CliError::new(
            // serde_json's message already ends with "at line L column C".
            format!("--carries is not valid JSON: {e}"),
            r#"pass a JSON object, e.g. --carries '{"plan_ok": true}'"#,
        )
    })?;
    match Value::from_json(&json) {
        Value::Map(map) => Ok(map),
        other => Err(CliError::new(
            format!(
                "--carries must be a JSON object, not a {}",
                other.kind_name()
            ),
            r#"pass a JSON object of carry values, e.g. --carries '{"plan_ok": true}'"#,
        )),
    }
}

fn load_types(path: &std::path::Path, o: &mut Output) -> Result<Option<Program>, super::Failure> {
    let name = shown(path);
    let limits = Limits::default();
    let source = read_source(path, &limits)?;
    match agir::read_with_limits(&source, &limits) {
        Ok(doc) => Ok(Some(doc.program)),
        Err(err) => {
            let text = render::render_read_error(&err, &source, &name, o.color_err);
            writeln!(o.err, "{text}")?;
            Ok(None)
        }
    }
}

/// The text of `--carries-file`: the file, or standard input for `-`, within the reader's size
/// limit.
fn carries_text(path: &std::path::Path) -> Result<String, CliError> {
    let limits = Limits::default();
    if path.as_os_str() != "-" {
        return read_source(path, &limits);
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::io::stdin().lock(),
            u64::try_from(limits.max_bytes).unwrap_or(u64::MAX) + 1,
        ),
        &mut bytes,
    )
    .map_err(|e| {
        CliError::new(
            format!("cannot read the carries from standard input: {e}"),
            "pipe a JSON object into `ais eval … --carries-file -`",
        )
    })?;
    if bytes.len() > limits.max_bytes {
        return Err(CliError::new(
            format!(
                "the carries on standard input are larger than the {} bytes ais reads",
                limits.max_bytes
            ),
            "pass fewer or smaller carry values",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        CliError::new(
            format!(
                "the carries on standard input are not UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "pass a UTF-8 JSON object",
        )
    })
}

/// Runs `ais eval`.
pub fn run(args: &EvalArgs, o: &mut Output) -> CmdResult {
    let carries = match (&args.carries, &args.carries_file) {
        (Some(text), _) => parse_carries(text)?,
        (None, Some(path)) => parse_carries(&carries_text(path)?)?,
        (None, None) => IndexMap::new(),
    };
    let program = match &args.types {
        Some(path) => match load_types(path, o)? {
            Some(p) => Some(p),
            None => return Ok(Status::Failed),
        },
        None => None,
    };
    match expr::eval_str(&args.expr, &carries, program.as_ref()) {
        Ok(value) => {
            writeln!(o.out, "{}", value.to_json())?;
            Ok(Status::Ok)
        }
        Err(err) => {
            let text =
                render::render_expr_error(&err, &args.expr, render::EXPRESSION_ORIGIN, o.color_err);
            writeln!(o.err, "{text}")?;
            Ok(Status::Findings)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_must_be_a_json_object() {
        let map = parse_carries(r#"{"a": 1, "b": [true]}"#).expect("object");
        assert_eq!(map.get("a"), Some(&Value::Int(1)));
        let err = parse_carries("[1]").expect_err("list");
        assert!(err.what.contains("not a list"), "{}", err.what);
        let err = parse_carries("{oops").expect_err("bad json");
        // The location once, not twice.
        assert_eq!(
            err.what.matches("line 1 column 2").count(),
            1,
            "{}",
            err.what
        );
        assert!(!err.what.contains("(line"), "{}", err.what);
    }
}

//! Layer 1 (SPEC.md §18): the AGS 1.0 JSON Schema, embedded, and what its errors mean as codes
//! — an unknown field is AG003, an unknown enum value AG004, anything else AG001.

use crate::codes::Sink;
use ais_core::Severity;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value as Json;
use std::sync::LazyLock;

/// The AGS 1.0 graph document schema (`agentic-graph-1.0.schema.json`, unchanged).
pub const GRAPH_SCHEMA: &str = include_str!("../schema/agentic-graph-1.0.schema.json");
/// The AGS 1.0 run record schema (`agentic-graph-run-1.0.schema.json`, unchanged).
pub const RUN_SCHEMA: &str = include_str!("../schema/agentic-graph-run-1.0.schema.json");

fn compile(text: &str) -> jsonschema::Validator {
    let schema: Json = serde_json::from_str(text).expect("the embedded schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the embedded schema compiles")
}

static GRAPH: LazyLock<jsonschema::Validator> = LazyLock::new(|| compile(GRAPH_SCHEMA));
static RUN: LazyLock<jsonschema::Validator> = LazyLock::new(|| compile(RUN_SCHEMA));

/// The most schema errors reported for one document.
const MAX_ERRORS: usize = 50;

/// Validates a graph document against the schema, reporting into `sink`.
pub(crate) fn validate_graph(doc: &Json, sink: &mut Sink) {
    let unknown_warns = doc
        .pointer("/policy/on_unknown_field")
        .and_then(Json::as_str)
        == Some("warn");
    for (n, error) in GRAPH.iter_errors(doc).enumerate() {
        if n == MAX_ERRORS {
            sink.push(
                "AG001",
                "",
                "more schema errors follow; fix these first",
                "re-run `ais check` after fixing the errors above",
            );
            break;
        }
        let path = error.instance_path().as_str().to_owned();
        // The version pattern is AG002's to report.
        if path == "/ags_version" && sink.covered.contains(&path) {
            continue;
        }
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for field in unexpected {
                    let at = format!("{path}/{}", ais_core::agir::pointer_token(field));
                    sink.push_sev(
                        "AG003",
                        if unknown_warns { Severity::Warn } else { Severity::Error },
                        &at,
                        format!("`{field}` is not a field AGS 1.0 defines here"),
                        format!("remove `{field}`, correct its spelling, or rename it `x-{field}` to keep it as an extension"),
                    );
                }
            }
            ValidationErrorKind::Enum { options } => sink.push(
                "AG004",
                &path,
                format!(
                    "{} is not one of the values this field allows",
                    error.instance()
                ),
                format!("use one of {options}"),
            ),
            _ => sink.push(
                "AG001",
                &path,
                format!(
                    "the document fails the AGS 1.0 schema: {}",
                    clip(&error.to_string())
                ),
                format!(
                    "change the value at `{}` to satisfy the schema rule `{}`",
                    if path.is_empty() { "/" } else { &path },
                    error.schema_path()
                ),
            ),
        }
    }
}

/// Validates a graph document against the AGS 1.0 schema alone: each error with where it is.
pub fn validate_graph_schema(doc: &Json) -> Result<(), Vec<String>> {
    errors_of(&GRAPH, doc)
}

/// Validates a run record against the AGS 1.0 run record schema: each error with where it is.
pub fn validate_run_record(record: &Json) -> Result<(), Vec<String>> {
    errors_of(&RUN, record)
}

/// Every error of `schema` on `doc`, each with where it is.
fn errors_of(schema: &jsonschema::Validator, doc: &Json) -> Result<(), Vec<String>> {
    let errors: Vec<String> = schema
        .iter_errors(doc)
        .map(|e| format!("at `{}`: {e}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn clip(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

//! The suite format (`*.aistest.yaml`): what a user writes, read through the core's YAML reader
//! ([`ais_core::agir::read_data`]) and serde over it, every error placed at its line and column.
//!
//! ```yaml
//! program: ../examples/agir/triage_ticket.agir      # relative to the suite file
//! model: scripted:../examples/triage_ticket.responses.json
//! threshold: 0.9        # the pass rate each case must reach (default 1)
//! trials: 1             # runs of each case (default 1; `ais test --trials N` overrides)
//! cases:
//!   - name: a double charge is billing
//!     task: I was charged twice for my Pro plan.
//!     expect:
//!       - status: ok
//!       - report: category == Category.billing and len(reply) > 20
//!       - report_equals: {queue: support-billing}
//!       - visited_in_order: [classify, route, billing_reply, assign]
//!       - not_visited: [bug_reply]
//!       - cost: {model_calls: 2, steps: 6}
//! ```
//!
//! The JSON Schema of the format is [`schema`] (`ais test --schema`).

use ais_core::Pos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The file name ending every suite has.
pub const SUITE_SUFFIX: &str = ".aistest.yaml";

/// The largest suite file read, in bytes (a suite is a list of cases, not data).
pub const MAX_SUITE_BYTES: u64 = 4 * 1024 * 1024;

/// A suite as written: defaults for its cases, and the cases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "ais test suite (*.aistest.yaml)")]
pub struct SuiteFile {
    /// The program every case runs, unless a case names its own: an `.agir` file, relative to
    /// the suite file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The model of every case that names none: `scripted:FILE.json` (canned answers, relative
    /// to the suite file), `recorded:FILE.json` (a run recorded by `ais test add`: every slot
    /// answered from it, no model asked), or a provider spec (`openai:gpt-4o-mini`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model that answers judged rubrics (same spellings as `model`) [default: `model`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The pass rate (0 to 1) every case must reach for the suite to pass [default: 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: Option<f64>,
    /// How many times each case runs [default: 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub trials: Option<u32>,
    /// The step budget of each run [default: the runtime's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u64>,
    /// The cases.
    pub cases: Vec<CaseFile>,
}

/// One case: a program run with inputs and a model, and what its run must show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// The case's name, unique in the suite.
    pub name: String,
    /// The program [default: the suite's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The task text (the `task` carry).
    #[serde(default)]
    pub task: String,
    /// The other `role: input` carries: a string as written, any other value as JSON.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub inputs: IndexMap<String, Json>,
    /// Files written under the run's output root before it starts (path → text): the
    /// workspace the program reads.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub files: IndexMap<String, String>,
    /// Human answers, in order: each given to the run where it pauses for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<String>,
    /// The model [default: the suite's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The judge's model [default: the suite's `judge`, else the case's model].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The pass rate this case must reach [default: the suite's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: Option<f64>,
    /// Runs of this case [default: the suite's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub trials: Option<u32>,
    /// The assertions, each a one-key mapping; a trial passes when all hold.
    #[serde(default)]
    pub expect: Vec<Assertion>,
}

/// `status:`'s schema: the runtime's run statuses ([`ais_rt::Status`]), each spelling with its
/// doc — generated from the one enum, so the schema cannot spell them another way.
fn status_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let one_of: Vec<Json> = ais_rt::Status::ALL
        .iter()
        .map(|s| serde_json::json!({"description": s.doc(), "type": "string", "const": s.as_str()}))
        .collect();
    schemars::json_schema!({
        "description": "How the run ended, spelled as the runtime reports it.",
        "oneOf": one_of,
    })
}

/// A text format an artifact must parse as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataFormat {
    /// One JSON value.
    Json,
    /// CSV with a header row, every record as wide as the header.
    Csv,
}

/// One assertion: a one-key mapping whose key is its kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Assertion {
    /// The run ended with this status.
    Status(#[schemars(schema_with = "status_schema")] ais_rt::Status),
    /// An expression of the program's guard language over the report's carries, which must be
    /// `true` (`category == Category.billing`, `len(rows) >= 3`); a carry the run did not
    /// produce reads as `null`.
    Report(String),
    /// These report carries have exactly these values.
    ReportEquals(IndexMap<String, Json>),
    /// A report carry (or, without `carry`, the whole report) is valid under a JSON Schema.
    ReportSchema(ReportSchema),
    /// A file under the run's output root.
    Artifact(ArtifactCheck),
    /// Each of these instructions ran at least once.
    Visited(Vec<String>),
    /// None of these instructions ran.
    NotVisited(Vec<String>),
    /// These instructions ran in this order (others may run between them).
    VisitedInOrder(Vec<String>),
    /// An instruction (a LOOP, or any step of a loop) ran at most `times` times.
    LoopAtMost(LoopBound),
    /// `true`: the run ended without a fault.
    NoFault(bool),
    /// `true`: the run recorded no deviation (no repair, no substitution, no unrouted failure).
    NoDeviation(bool),
    /// A tool was called, with arguments equal to these (those named; others may differ).
    ToolCalled(ToolCall),
    /// Bounds on what the run cost; each given bound is an upper bound.
    Cost(CostBounds),
    /// A rubric answered by a judge model as a typed verdict (pass, or fail with a reason).
    Judged(Judged),
    /// `true`: in a recorded case, every slot asked exactly what the recording answered (the
    /// doc, operands and schema of each request unchanged).
    SameRequests(bool),
    /// The run's compliance certificate (`ais runs certify`): at least this share of the
    /// mandatory obligations of the program's provenance record performed — guaranteed by code
    /// that ran, or observable in a model exchange.
    Certificate(CertificateBound),
}

impl Assertion {
    /// The assertion's kind, as its key is spelled.
    pub fn kind(&self) -> &'static str {
        match self {
            Assertion::Status(_) => "status",
            Assertion::Report(_) => "report",
            Assertion::ReportEquals(_) => "report_equals",
            Assertion::ReportSchema(_) => "report_schema",
            Assertion::Artifact(_) => "artifact",
            Assertion::Visited(_) => "visited",
            Assertion::NotVisited(_) => "not_visited",
            Assertion::VisitedInOrder(_) => "visited_in_order",
            Assertion::LoopAtMost(_) => "loop_at_most",
            Assertion::NoFault(_) => "no_fault",
            Assertion::NoDeviation(_) => "no_deviation",
            Assertion::ToolCalled(_) => "tool_called",
            Assertion::Cost(_) => "cost",
            Assertion::Judged(_) => "judged",
            Assertion::SameRequests(_) => "same_requests",
            Assertion::Certificate(_) => "certificate",
        }
    }

    /// The assertion as one line of YAML (its key and value, in flow style).
    pub fn label(&self) -> String {
        let v = serde_json::to_value(self).unwrap_or_default();
        match v.as_object().and_then(|m| m.iter().next()) {
            Some((k, v)) => format!("{k}: {}", flow(v)),
            None => flow(&v),
        }
    }
}

/// A JSON value in YAML flow style, a plain string as itself.
fn flow(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `report_schema`: a carry (or the whole report) and its schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportSchema {
    /// The carry [default: the whole report object].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry: Option<String>,
    /// The JSON Schema (draft 2020-12 unless `$schema` says otherwise).
    pub schema: Json,
}

/// `artifact`: a file under the run's output root and what must hold of it; each given check
/// is one more condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactCheck {
    /// The file, relative to the run's output root.
    pub path: String,
    /// `true`: the file exists; `false`: it does not [default: `true`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// The file has exactly the bytes of this file (relative to the suite file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals_file: Option<String>,
    /// The file's text contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// The file's text matches this regular expression (Rust `regex` syntax, anywhere in the
    /// text unless anchored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// The file parses as this format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parses_as: Option<DataFormat>,
}

/// `loop_at_most`: an instruction and the most times it may run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopBound {
    /// The instruction.
    pub instruction: String,
    /// The most times it may run.
    pub times: u64,
}

/// `tool_called`: a tool and the arguments it must have been called with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// Arguments (parameter name → value) one call must have had; others are not compared.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub args: IndexMap<String, Json>,
}

/// `cost`: upper bounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostBounds {
    /// Steps executed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Exchanges with the model (repair and tool rounds included; a scripted model's count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<u64>,
    /// Prompt and completion tokens together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Wall-clock seconds of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_secs: Option<f64>,
}

/// `certificate`: what the run's compliance certificate must show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CertificateBound {
    /// The least share of the mandatory obligations (those the agent bears) the run performed,
    /// as a percentage: `100%`, `75%`.
    pub mandatory_performed: Percent,
}

/// A percentage as written: `0%` to `100%` (decimals allowed: `87.5%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percent(pub f64);

impl Serialize for Percent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}%", self.0))
    }
}

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Percent;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a percentage from `0%` to `100%`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Percent, E> {
                let n = v
                    .trim()
                    .strip_suffix('%')
                    .and_then(|n| n.trim().parse::<f64>().ok())
                    .filter(|n| n.is_finite());
                match n {
                    Some(n) if (0.0..=100.0).contains(&n) => Ok(Percent(n)),
                    Some(_) => Err(E::custom(format!(
                        "`{v}` is out of range: a share of obligations is from `0%` to `100%`"
                    ))),
                    None => Err(E::custom(format!(
                        "`{v}` is no percentage: write a number and `%`, e.g. `100%`"
                    ))),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Percent, E> {
                Err(E::custom(format!(
                    "`{v}` is a number, not a percentage: write `{v}%`"
                )))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Percent, E> {
                Err(E::custom(format!(
                    "`{v}` is a number, not a percentage: write `{v}%`"
                )))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Percent, E> {
                Err(E::custom(format!(
                    "`{v}` is a number, not a percentage: write `{}%` for {v} in 100",
                    v * 100.0
                )))
            }
        }
        d.deserialize_any(Visit)
    }
}

impl JsonSchema for Percent {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Percent".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A percentage from `0%` to `100%` (`100%`, `87.5%`).",
            "type": "string",
            "pattern": "^(100(\\.0+)?|[0-9]{1,2}(\\.[0-9]+)?)%$"
        })
    }
}

/// `judged`: a rubric the judge model answers with a verdict about the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Judged {
    /// What the report must satisfy, in words.
    pub rubric: String,
    /// The report carries the judge is shown [default: the whole report].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub of: Vec<String>,
}

/// The JSON Schema of the suite format.
pub fn schema() -> Json {
    serde_json::to_value(schemars::schema_for!(SuiteFile)).unwrap_or_default()
}

/// Where an error stands: the file, and the line and column in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Place {
    /// The file, as given.
    pub file: String,
    /// Its line and column, when known.
    pub pos: Option<Pos>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{}:{}:{}", self.file, p.line, p.column),
            None => f.write_str(&self.file),
        }
    }
}

/// A suite that cannot be used: where, what, and the next step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{place}: {message}")]
pub struct SuiteError {
    /// Where.
    pub place: Place,
    /// What is wrong.
    pub message: String,
    /// The next step.
    pub help: String,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_checked_in_schema_is_the_formats() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/aistest.schema.json");
        let text = std::fs::read_to_string(path).unwrap();
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            file,
            super::schema(),
            "regenerate it: `ais test --schema > docs/aistest.schema.json`"
        );
    }

    #[test]
    fn the_examples_suite_is_valid_under_the_schema() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/examples.aistest.yaml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let data = ais_core::agir::read_data(&text, &ais_core::agir::Limits::default()).unwrap();
        let validator = jsonschema::validator_for(&super::schema()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&data.value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}

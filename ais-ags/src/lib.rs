//! Agentic Graph Specification (AGS) 1.0 interop for ais.
//!
//! An AGS document (`*.agraph.yaml` / `*.agraph.json`) describes an agent workflow as a graph of
//! bounded agentic loops. This crate reads one on the project's own YAML stack
//! ([`ais_core::agir::read_data`], so every finding has a line and column and JSON and YAML of
//! the same document read to the same data), validates it against the AGS 1.0 JSON Schema and
//! every rule of the AGnnn catalogue (SPEC.md §18.1), and reports each finding as an
//! [`ais_core::Finding`] with [`ais_core::Code::Foreign`] carrying the AGnnn code — rendered by
//! the same [`ais_core::render`] as AIS findings.
//!
//! ```
//! let text = "ags_version: '1.0'\nkind: AgenticGraph\nid: g\ntitle: T\nobjective: O\n\
//!             entrypoints: [a]\nnodes:\n  a: {title: A, description: Do A.}\n  \
//!             b: {title: B, description: Do B., depends_on: [a, c]}\n";
//! let checked = ais_ags::check_text(text, None);
//! assert!(checked.findings.iter().any(|f| f.id.as_str() == "AG114"));
//! ```

mod agx;
mod codes;
mod flow;
mod graph;
mod harness;
mod load;
mod run;
mod schema;
mod scope;
mod structure;
mod translate;

pub use agx::{
    BinOp, Env, EvalError, Expr, Reference, SyntaxError, UnOp, eval as eval_agx,
    parse as parse_agx, references as agx_references,
};
pub use codes::rule_severity;
pub use graph::{
    Attachment, Author, Backoff, Branch, Constraints, Criterion, CriterionKind, CriterionSeverity,
    DecisionBlock, EdgeKind, Extra, FailurePolicy, Feedback, Fragment, GateBlock, Graph,
    GraphConstraints, GraphEdge, GraphError, GraphKind, GraphOutput, HumanAt, HumanCheckpoint,
    HumanMode, InputSpec, Int, Intelligence, Join, LoopBlock, MapBlock, Node, NodeDefaults,
    NodeType, OnExhausted, OnExpressionError, OnNodeFailure, OnReject, OnTimeout, OutputSpec,
    ParamSpec, Policy, Requirements, RetryPolicy, Secret, SubgraphBlock, Success, SuccessMode,
    Tier, ValueType,
};
pub use harness::judge::{Writer, retry_delay};
pub use harness::routing::{CONTEXT_ENV, TIER_ENV, model_tier, route as route_intelligence};
pub use harness::{
    CommandCriterion, MAX_COMMAND_SECONDS, MAX_RETRY_DELAY_SECONDS, call as call_harness_tool,
    commands as command_criteria, escalation, exit_code as command_exit_code, judge_writes,
    judged_node, lower as lower_for_harness, notice, seconds as capped_seconds,
    tools as harness_tools, write_files as write_file_outputs,
};
pub use load::{Loaded, load_path, load_text};
pub use run::{
    CLAIMED_LEVEL, Ended, Ran, SUPPORTED_FEATURES, required_commands, run_record,
    unsupported as unsupported_features,
};
pub use schema::{GRAPH_SCHEMA, RUN_SCHEMA, validate_graph_schema, validate_run_record};
pub use translate::{ImportError, export, import, schedule};

use ais_core::{Finding, Outcome};
use serde_json::Value as Json;
use std::path::Path;

/// The AGS version this crate implements (`ags_version` MAJOR.MINOR).
pub const AGS_VERSION: &str = "1.0";

/// The result of checking one AGS document.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Every finding, in source order.
    pub findings: Vec<Finding>,
    /// The document's data, when the text could be read at all.
    pub data: Option<Json>,
    /// The document as a typed graph, when it has no error (what a harness may run).
    pub graph: Option<Graph>,
}

impl Checked {
    /// `failed` when an error was found (a harness must not execute the graph), `degraded` when
    /// only warnings were, else `clean`.
    pub fn outcome(&self) -> Outcome {
        if self
            .findings
            .iter()
            .any(|f| f.severity >= ais_core::Severity::Error)
        {
            Outcome::Failed
        } else if self.findings.is_empty() {
            Outcome::Clean
        } else {
            Outcome::Degraded
        }
    }

    /// True when nothing at all was found (strict checking: warnings count).
    pub fn is_strictly_clean(&self) -> bool {
        self.findings.is_empty()
    }
}

/// Checks an AGS document given as text. `base` is the directory external subgraph references
/// (`subgraph.ref.uri`) resolve against; without it they are not opened.
pub fn check_text(text: &str, base: Option<&Path>) -> Checked {
    let loaded = load_text(text);
    check_loaded(&loaded, base, &mut Vec::new(), Refs::Inside)
}

/// Where a document's local subgraph references (`subgraph.ref.uri`) may lead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refs {
    /// Only beneath the referencing document's directory: no absolute path, no `..`, no
    /// symbolic link leading out (a reference elsewhere is the finding AG132, and not opened).
    #[default]
    Inside,
    /// Anywhere the user can read (`ais check --allow-outside-refs`).
    Anywhere,
}

/// The most bytes of an AGS document read (the AG-IR reader's limit).
pub fn max_document_bytes() -> u64 {
    u64::try_from(ais_core::agir::Limits::default().max_bytes).unwrap_or(u64::MAX)
}

/// The text of the AGS document at `path`, read by the one bounded reader
/// ([`ais_core::files`]): a regular file only (a FIFO or a device is refused at once), at most
/// [`max_document_bytes`].
pub fn read_document(path: &Path) -> Result<String, std::io::Error> {
    ais_core::files::read_regular_text(path, max_document_bytes()).map_err(|e| match e {
        ais_core::files::ReadError::Io(e) => e,
        other => std::io::Error::other(other.to_string()),
    })
}

/// Checks a loaded document; `chain` holds the canonical paths of the documents referencing
/// this one (for the recursion rule AG131).
pub(crate) fn check_loaded(
    loaded: &Loaded,
    base: Option<&Path>,
    chain: &mut Vec<std::path::PathBuf>,
    refs: Refs,
) -> Checked {
    let mut sink = codes::Sink::new(loaded.data.as_ref(), &loaded.text);
    if let Some(err) = &loaded.error {
        let mut f = Finding::from(err);
        f.id = ais_core::Code::Foreign("AG001");
        sink.findings.push(f);
        return Checked {
            findings: sink.findings,
            data: None,
            graph: None,
        };
    }
    let data = loaded.data.as_ref().map(|d| &d.value);
    let mut graph = None;
    if let Some(d) = &loaded.data {
        for dup in &d.duplicates {
            sink.push_at(
                "AG005",
                dup.pos,
                format!("the key `{}` is written twice in this mapping", dup.key),
                format!(
                    "keep one `{}:` (the first, at line {}, is the one read) and delete the other",
                    dup.key, dup.first.line
                ),
            );
        }
    }
    if let Some(doc) = data {
        structure::version(doc, &mut sink);
        schema::validate_graph(doc, &mut sink);
        graph = typed(doc, &mut sink);
        let model = scope::Model::new(doc, base, refs);
        structure::check(&model, &mut sink);
        flow::check(&model, &mut sink);
        flow::advisory(&model, &mut sink);
        model.external(&mut sink, chain);
    }
    let mut findings = sink.finish();
    findings.sort_by_key(|f| f.pos.map(|p| (p.line, p.column)));
    let failed = findings
        .iter()
        .any(|f| f.severity >= ais_core::Severity::Error);
    Checked {
        findings,
        data: data.cloned(),
        graph: graph.filter(|_| !failed),
    }
}

/// The document as a typed graph, once the schema has passed: a value the schema lets through
/// that the types do not take (an integer past 2^64, say) is AG001 where it stands.
fn typed(doc: &Json, sink: &mut codes::Sink) -> Option<Graph> {
    match Graph::from_json(doc) {
        Ok(g) => Some(g),
        Err(e) => {
            if !sink.has_errors() {
                sink.push(
                    "AG001",
                    &e.pointer,
                    format!(
                        "the document does not read as an AGS 1.0 graph: {}",
                        e.message
                    ),
                    "change the value there to one of the type the schema describes",
                );
            }
            None
        }
    }
}

/// Checks the AGS document at `path` (`.agraph.yaml`, `.agraph.yml` or `.agraph.json`),
/// resolving external subgraph references relative to its directory. The text is returned for
/// rendering; an unreadable file is an `Err` with what happened.
pub fn check_path(path: &Path) -> Result<(String, Checked), std::io::Error> {
    check_path_with(path, Refs::Inside)
}

/// [`check_path`], with the references allowed to lead where `refs` says.
pub fn check_path_with(path: &Path, refs: Refs) -> Result<(String, Checked), std::io::Error> {
    let text = read_document(path)?;
    let loaded = load_text(&text);
    let mut chain = vec![std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())];
    let checked = check_loaded(&loaded, path.parent(), &mut chain, refs);
    Ok((text, checked))
}

/// True for a file name AGS documents use: `*.agraph.yaml`, `*.agraph.yml`, `*.agraph.json`.
pub fn is_ags_path(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    [".agraph.yaml", ".agraph.yml", ".agraph.json"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

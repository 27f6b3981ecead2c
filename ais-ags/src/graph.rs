//! An AGS 1.0 graph document as types (the schema's `$defs`, one struct or enum each): what a
//! document that passed the JSON Schema check is read into ([`Graph::read`]), and what the
//! importer and the harness work on.
//!
//! Every optional field is an `Option` (and every list or map one too), so a graph written back
//! ([`serde::Serialize`]) is the document it was read from: absent stays absent, `[]` stays `[]`,
//! `5` stays `5` (numbers the schema calls `number` are kept as written, [`Number`]). The
//! `x-…` extensions of each object are kept in its `extra`, in order, as the importer carries
//! them on (SPEC.md: harnesses MUST preserve them).

use ais_core::agir::Data;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value as Json};

/// The `x-…` extension fields of an object (and, under `policy.on_unknown_field: warn`, the
/// unknown fields the check warned about), in document order.
pub type Extra = Map<String, Json>;

macro_rules! enums {
    ($( $(#[$m:meta])* $name:ident { $( $(#[doc = $vd:literal])* $v:ident => $text:literal, )* } )*) => {$(
        ais_core::spelled! {
            $(#[$m])*
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            pub enum $name { $( $(#[doc = $vd])* $v => $text, )* }
            serde
        }
    )*};
}

enums! {
    /// The document kind (`kind`): AGS 1.0 defines one.
    GraphKind { /// `AgenticGraph`.
        AgenticGraph => "AgenticGraph", }
    /// A node's `type` (absent: `task`).
    NodeType {
        /// A bounded agentic loop (the default).
        Task => "task",
        /// An agent or expression choosing a branch.
        Decision => "decision",
        /// A human checkpoint of its own.
        Gate => "gate",
        /// A repeated body.
        Loop => "loop",
        /// A body per item.
        Map => "map",
        /// Another graph.
        Subgraph => "subgraph",
    }
    /// How a node joins its predecessors (`join`, absent: `all`).
    Join {
        /// Every predecessor.
        All => "all",
        /// Any predecessor.
        Any => "any",
        /// `join_count` of them.
        NOf => "n_of",
    }
    /// An edge's `kind` (absent: `sequence`).
    EdgeKind {
        /// Always taken.
        Sequence => "sequence",
        /// Taken when its `when` holds.
        Conditional => "conditional",
        /// Taken when its source fails.
        OnFailure => "on_failure",
    }
    /// A value's declared type (`value_type`).
    ValueType {
        /// `string`.
        String => "string",
        /// `text`.
        Text => "text",
        /// `markdown`.
        Markdown => "markdown",
        /// `number`.
        Number => "number",
        /// `integer`.
        Integer => "integer",
        /// `boolean`.
        Boolean => "boolean",
        /// `object`.
        Object => "object",
        /// `array`.
        Array => "array",
        /// `json`.
        Json => "json",
        /// `file`.
        File => "file",
        /// `file_set`.
        FileSet => "file_set",
        /// `directory`.
        Directory => "directory",
        /// `artifact`.
        Artifact => "artifact",
        /// `reference`.
        Reference => "reference",
        /// `any`.
        Any => "any",
    }
    /// An intelligence tier, lowest first.
    Tier {
        /// `minimal`.
        Minimal => "minimal",
        /// `standard`.
        Standard => "standard",
        /// `advanced`.
        Advanced => "advanced",
        /// `frontier`.
        Frontier => "frontier",
    }
    /// A success criterion's `kind`.
    CriterionKind {
        /// A command line's exit code and output.
        Command => "command",
        /// A file under the workspace.
        FileExists => "file_exists",
        /// A produced output.
        ArtifactPresent => "artifact_present",
        /// An output against a JSON Schema.
        JsonSchema => "json_schema",
        /// A regular expression over a value.
        Regex => "regex",
        /// An AGX expression.
        Expression => "expression",
        /// A model's judgement.
        LlmJudge => "llm_judge",
        /// A person's.
        Human => "human",
        /// An outside check.
        External => "external",
    }
    /// A criterion's `severity` (absent: `required`).
    CriterionSeverity {
        /// Must pass.
        Required => "required",
        /// Reported only.
        Advisory => "advisory",
    }
    /// How a success block combines its criteria (`mode`, absent: `all`).
    SuccessMode {
        /// Every one.
        All => "all",
        /// Any one.
        Any => "any",
        /// `count` of them.
        NOf => "n_of",
    }
    /// A human checkpoint's or a gate's `mode`.
    HumanMode {
        /// Approve or reject.
        Approve => "approve",
        /// Review, with comments.
        Review => "review",
        /// Supply values (`collect`).
        Input => "input",
        /// Tell, without waiting.
        Notify => "notify",
    }
    /// Where a human checkpoint stands in its node (`at`).
    HumanAt {
        /// Before the node starts.
        BeforeStart => "before_start",
        /// Before a side effect.
        BeforeSideEffects => "before_side_effects",
        /// After the node's outputs.
        AfterOutputs => "after_outputs",
        /// When a criterion fails.
        OnCriteriaFailure => "on_criteria_failure",
        /// When the node fails.
        OnFailure => "on_failure",
        /// When the node escalates.
        OnEscalation => "on_escalation",
    }
    /// What happens when a human does not answer in time (`on_timeout`).
    OnTimeout {
        /// The node fails.
        Fail => "fail",
        /// The run waits on.
        Hold => "hold",
        /// It goes to the escalation.
        Escalate => "escalate",
        /// It counts as approved.
        Approve => "approve",
    }
    /// What a rejected gate does (`on_reject`, absent: `fail`).
    OnReject {
        /// The gate fails.
        Fail => "fail",
        /// Its dependents are skipped.
        SkipDependents => "skip_dependents",
        /// Its edges decide.
        Route => "route",
    }
    /// What a node does when its attempts are exhausted (`on_exhausted`, absent: `fail`).
    OnExhausted {
        /// It fails.
        Fail => "fail",
        /// It is skipped.
        Skip => "skip",
        /// It escalates.
        Escalate => "escalate",
        /// It succeeds, degraded.
        SucceedDegraded => "succeed_degraded",
    }
    /// The wait between attempts (`backoff`, absent: `exponential`).
    Backoff {
        /// No wait.
        None => "none",
        /// `initial_delay_seconds` each time.
        Fixed => "fixed",
        /// Growing by it.
        Linear => "linear",
        /// Doubling.
        Exponential => "exponential",
    }
    /// What a failed node's next attempt is told (`feedback`, absent: `failed_criteria`).
    Feedback {
        /// Nothing.
        None => "none",
        /// A summary.
        FailureSummary => "failure_summary",
        /// The failed criteria.
        FailedCriteria => "failed_criteria",
        /// The whole transcript.
        FullTranscript => "full_transcript",
    }
    /// What the graph does when a node fails (`policy.on_node_failure`, absent: `isolate`).
    OnNodeFailure {
        /// Stop the run.
        Halt => "halt",
        /// Skip what depends on it.
        Isolate => "isolate",
        /// Go on.
        Continue => "continue",
    }
    /// What an expression error means (`policy.on_expression_error`, absent: `fail`).
    OnExpressionError {
        /// The node fails.
        Fail => "fail",
        /// The expression is false.
        False => "false",
    }
}

impl CriterionSeverity {
    /// `required` when absent.
    pub fn of(s: Option<CriterionSeverity>) -> CriterionSeverity {
        s.unwrap_or(CriterionSeverity::Required)
    }
}

/// An AGS 1.0 graph document (SPEC.md §5).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// `$schema`.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// `ags_version` (MAJOR.MINOR).
    pub ags_version: String,
    /// `kind`.
    pub kind: GraphKind,
    /// `id`.
    pub id: String,
    /// `title`.
    pub title: String,
    /// `objective`.
    pub objective: String,
    /// `description`.
    pub description: Option<String>,
    /// `version`.
    pub version: Option<String>,
    /// `requires_conformance` (absent: 1).
    pub requires_conformance: Option<Int>,
    /// `authors`.
    pub authors: Option<Vec<Author>>,
    /// `created_at`.
    pub created_at: Option<String>,
    /// `updated_at`.
    pub updated_at: Option<String>,
    /// `labels`.
    pub labels: Option<Vec<String>>,
    /// `params`: the invocation surface.
    pub params: Option<IndexMap<String, ParamSpec>>,
    /// `context`.
    pub context: Option<Map<String, Json>>,
    /// `attachments`.
    pub attachments: Option<Vec<Attachment>>,
    /// `secrets`.
    pub secrets: Option<Vec<Secret>>,
    /// `entrypoints`.
    pub entrypoints: Vec<String>,
    /// `defaults`, merged into every node by [`Graph::merged`].
    pub defaults: Option<NodeDefaults>,
    /// `nodes`, in document order.
    pub nodes: IndexMap<String, Node>,
    /// `edges`.
    pub edges: Option<Vec<GraphEdge>>,
    /// `subgraphs`.
    pub subgraphs: Option<IndexMap<String, Fragment>>,
    /// `constraints`.
    pub constraints: Option<GraphConstraints>,
    /// `policy`.
    pub policy: Option<Policy>,
    /// `outputs`.
    pub outputs: Option<IndexMap<String, GraphOutput>>,
    /// `success`.
    pub success: Option<Success>,
    /// `metadata`.
    pub metadata: Option<Map<String, Json>>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An author (`authors[]`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Author {
    /// `name`.
    pub name: String,
    /// `email`.
    pub email: Option<String>,
    /// `url`.
    pub url: Option<String>,
    /// `role`.
    pub role: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An attachment (`attachments[]`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    /// `name`.
    pub name: String,
    /// `path`.
    pub path: Option<String>,
    /// `uri`.
    pub uri: Option<String>,
    /// `media_type`.
    pub media_type: Option<String>,
    /// `inline`.
    pub inline: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A secret the graph names (`secrets[]`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Secret {
    /// `name`.
    pub name: String,
    /// `required` (absent: true).
    pub required: Option<bool>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A param's or a collected value's declaration (`param_spec`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamSpec {
    /// `type`.
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// `description`.
    pub description: String,
    /// `required` (absent: true).
    pub required: Option<bool>,
    /// `default`.
    pub default: Option<Json>,
    /// `enum`: the values allowed.
    #[serde(rename = "enum")]
    pub allowed: Option<Vec<Json>>,
    /// `schema`.
    pub schema: Option<Map<String, Json>>,
    /// `example`.
    pub example: Option<Json>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A node input (`input_spec`): at most one of `from`, `template`, `value`.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputSpec {
    /// `type`.
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// `description`.
    pub description: String,
    /// `required` (absent: true).
    pub required: Option<bool>,
    /// `from`: an AGX expression.
    pub from: Option<String>,
    /// `template`.
    pub template: Option<String>,
    /// `value`: a literal.
    pub value: Option<Json>,
    /// `default`.
    pub default: Option<Json>,
    /// `schema`.
    pub schema: Option<Map<String, Json>>,
    /// `media_type`.
    pub media_type: Option<String>,
    /// `redact` (absent: false).
    pub redact: Option<bool>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A node output (`output_spec`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputSpec {
    /// `type`.
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// `description`.
    pub description: String,
    /// `required` (absent: true).
    pub required: Option<bool>,
    /// `path_hint`: where a `file` output is written.
    pub path_hint: Option<String>,
    /// `schema`.
    pub schema: Option<Map<String, Json>>,
    /// `media_type`.
    pub media_type: Option<String>,
    /// `redact` (absent: false).
    pub redact: Option<bool>,
    /// `example`.
    pub example: Option<Json>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A graph output (`graph_output_spec`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphOutput {
    /// `type`.
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// `description`.
    pub description: String,
    /// `from`: an AGX expression.
    pub from: String,
    /// `required` (absent: true).
    pub required: Option<bool>,
    /// `schema`.
    pub schema: Option<Map<String, Json>>,
    /// `media_type`.
    pub media_type: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A node's intelligence demand (`intelligence`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Intelligence {
    /// `tier`.
    pub tier: Tier,
    /// `level`.
    pub level: Option<Int>,
    /// `hints`.
    pub hints: Option<Vec<String>>,
    /// `min_context_tokens`.
    pub min_context_tokens: Option<Int>,
    /// `allow_downgrade` (absent: false).
    pub allow_downgrade: Option<bool>,
    /// `escalate_to`.
    pub escalate_to: Option<Tier>,
    /// `rationale`.
    pub rationale: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a node needs (`requirements`); kept as written (this harness runs none of it).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Requirements {
    /// `tools`: names, or `{name, optional, alternatives}`.
    pub tools: Option<Vec<Json>>,
    /// `permissions`.
    pub permissions: Option<Vec<String>>,
    /// `mcp_servers`.
    pub mcp_servers: Option<Vec<String>>,
    /// `skills`.
    pub skills: Option<Vec<String>>,
    /// `environment`.
    pub environment: Option<Vec<String>>,
    /// `secrets`.
    pub secrets: Option<Vec<String>>,
    /// `network`.
    pub network: Option<String>,
    /// `workspace`.
    pub workspace: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A node's limits (`constraints`); the fields this harness does not read stay in `rest`.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    /// Every field, as written (`max_input_tokens`, `temperature`, `isolation`, …).
    #[serde(flatten)]
    pub rest: Extra,
}

/// The graph's limits (`constraints`), kept as written.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphConstraints {
    /// Every field, as written (`max_total_tokens`, `max_parallel_nodes`, …).
    #[serde(flatten)]
    pub rest: Extra,
}

/// The graph's policy (`policy`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// `on_expression_error` (absent: `fail`).
    pub on_expression_error: Option<OnExpressionError>,
    /// `on_node_failure` (absent: `isolate`).
    pub on_node_failure: Option<OnNodeFailure>,
    /// `on_unknown_field` (absent: `error`).
    pub on_unknown_field: Option<String>,
    /// `default_human_timeout_seconds`.
    pub default_human_timeout_seconds: Option<Number>,
    /// `on_human_timeout` (absent: `hold`).
    pub on_human_timeout: Option<OnTimeout>,
    /// `checkpointing`.
    pub checkpointing: Option<String>,
    /// `resume`.
    pub resume: Option<String>,
    /// `record_run` (absent: true).
    pub record_run: Option<bool>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A node's retry policy (`failure.retry`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// `max_attempts` (absent: 1).
    pub max_attempts: Option<Int>,
    /// `backoff` (absent: `exponential`).
    pub backoff: Option<Backoff>,
    /// `initial_delay_seconds` (absent: 2).
    pub initial_delay_seconds: Option<Number>,
    /// `max_delay_seconds` (absent: 60).
    pub max_delay_seconds: Option<Number>,
    /// `jitter` (absent: true).
    pub jitter: Option<bool>,
    /// `retry_on` (absent: `transient`, `tool_error`, `criteria_failed`).
    pub retry_on: Option<Vec<String>>,
    /// `feedback` (absent: `failed_criteria`).
    pub feedback: Option<Feedback>,
    /// `escalate_intelligence` (absent: false).
    pub escalate_intelligence: Option<bool>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A node's failure policy (`failure`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailurePolicy {
    /// `retry`.
    pub retry: Option<RetryPolicy>,
    /// `fallback`, kept as written.
    pub fallback: Option<Vec<Json>>,
    /// `escalation`, kept as written.
    pub escalation: Option<Json>,
    /// `on_exhausted` (absent: `fail`).
    pub on_exhausted: Option<OnExhausted>,
    /// `compensation`: a node id.
    pub compensation: Option<String>,
    /// `timeout_action`.
    pub timeout_action: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A human checkpoint inside a node (`human[]`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HumanCheckpoint {
    /// `id`.
    pub id: Option<String>,
    /// `at`.
    pub at: HumanAt,
    /// `mode`.
    pub mode: HumanMode,
    /// `prompt`: a template.
    pub prompt: Option<String>,
    /// `required` (absent: true).
    pub required: Option<bool>,
    /// `roles`.
    pub roles: Option<Vec<String>>,
    /// `collect`: the values an `input` checkpoint asks for.
    pub collect: Option<IndexMap<String, ParamSpec>>,
    /// `timeout_seconds`.
    pub timeout_seconds: Option<Number>,
    /// `on_timeout`.
    pub on_timeout: Option<OnTimeout>,
    /// `when`: an AGX expression.
    pub when: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A success criterion (`criterion`); which fields apply depends on its `kind`.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    /// `id`.
    pub id: String,
    /// `kind`.
    pub kind: CriterionKind,
    /// `description`.
    pub description: String,
    /// `severity` (absent: `required`).
    pub severity: Option<CriterionSeverity>,
    /// `record_evidence` (absent: true).
    pub record_evidence: Option<bool>,
    /// `timeout_seconds`.
    pub timeout_seconds: Option<Number>,
    /// `run` (`command`).
    pub run: Option<String>,
    /// `cwd` (`command`).
    pub cwd: Option<String>,
    /// `expect_exit_code` (`command`, absent: 0).
    pub expect_exit_code: Option<Int>,
    /// `expect_stdout_matches` (`command`).
    pub expect_stdout_matches: Option<String>,
    /// `path` (`file_exists`).
    pub path: Option<String>,
    /// `min_bytes` (`file_exists`).
    pub min_bytes: Option<Int>,
    /// `output`: the output it is about.
    pub output: Option<String>,
    /// `schema` (`json_schema`).
    pub schema: Option<Map<String, Json>>,
    /// `schema_ref` (`json_schema`).
    pub schema_ref: Option<String>,
    /// `target` (`regex`): an AGX expression.
    pub target: Option<String>,
    /// `pattern` (`regex`).
    pub pattern: Option<String>,
    /// `flags` (`regex`).
    pub flags: Option<String>,
    /// `negate` (`regex`).
    pub negate: Option<bool>,
    /// `expr` (`expression`).
    pub expr: Option<String>,
    /// `rubric` (`llm_judge`).
    pub rubric: Option<String>,
    /// `judge_intelligence` (`llm_judge`).
    pub judge_intelligence: Option<Intelligence>,
    /// `threshold` (`llm_judge`).
    pub threshold: Option<Number>,
    /// `samples` (`llm_judge`).
    pub samples: Option<Int>,
    /// `inputs` (`llm_judge`): AGX expressions.
    pub inputs: Option<Vec<String>>,
    /// `prompt` (`human`).
    pub prompt: Option<String>,
    /// `roles` (`human`).
    pub roles: Option<Vec<String>>,
    /// `check` (`external`).
    pub check: Option<String>,
    /// `params` (`external`).
    pub params: Option<Map<String, Json>>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Criterion {
    /// True unless it is `advisory`.
    pub fn is_required(&self) -> bool {
        CriterionSeverity::of(self.severity) == CriterionSeverity::Required
    }
}

/// A success block (`success`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Success {
    /// `summary`.
    pub summary: Option<String>,
    /// `mode` (absent: `all`).
    pub mode: Option<SuccessMode>,
    /// `count` (`n_of`).
    pub count: Option<Int>,
    /// `criteria`.
    pub criteria: Vec<Criterion>,
    /// `evaluation_order`.
    pub evaluation_order: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What every node takes unless it says otherwise (`defaults`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeDefaults {
    /// `intelligence`.
    pub intelligence: Option<Intelligence>,
    /// `requirements`.
    pub requirements: Option<Requirements>,
    /// `constraints`.
    pub constraints: Option<Constraints>,
    /// `failure`.
    pub failure: Option<FailurePolicy>,
    /// `human`.
    pub human: Option<Vec<HumanCheckpoint>>,
    /// `join`.
    pub join: Option<Join>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A loop node's block (`loop`), kept as written past what the importer reads.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopBlock {
    /// `collect`: what it gathers, by name.
    pub collect: Option<IndexMap<String, String>>,
    /// Every other field, as written (`mode`, `condition`, `body`, …).
    #[serde(flatten)]
    pub rest: Extra,
}

/// A map node's block (`map`), kept as written past what the importer reads.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapBlock {
    /// `collect`: what it gathers, by name.
    pub collect: Option<IndexMap<String, String>>,
    /// Every other field, as written (`over`, `as`, `body`, …).
    #[serde(flatten)]
    pub rest: Extra,
}

/// A subgraph node's block (`subgraph`), kept as written past what the importer reads.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubgraphBlock {
    /// `outputs_from`: its outputs, by name.
    pub outputs_from: Option<IndexMap<String, String>>,
    /// Every other field, as written (`use`, `inline`, `ref`, …).
    #[serde(flatten)]
    pub rest: Extra,
}

/// A gate node's block (`gate`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateBlock {
    /// `mode`.
    pub mode: HumanMode,
    /// `prompt`: a template.
    pub prompt: Option<String>,
    /// `roles`.
    pub roles: Option<Vec<String>>,
    /// `present`: AGX expressions shown to the approver.
    pub present: Option<Vec<String>>,
    /// `collect`: the values an `input` gate asks for.
    pub collect: Option<IndexMap<String, ParamSpec>>,
    /// `timeout_seconds`.
    pub timeout_seconds: Option<Number>,
    /// `on_timeout`.
    pub on_timeout: Option<OnTimeout>,
    /// `on_reject` (absent: `fail`).
    pub on_reject: Option<OnReject>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A decision node's block (`decision`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionBlock {
    /// `question`.
    pub question: Option<String>,
    /// `evaluator`.
    pub evaluator: Option<String>,
    /// `branches`.
    pub branches: Vec<Branch>,
    /// `default_branch`.
    pub default_branch: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A decision's branch (`branches[]`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// `label`.
    pub label: String,
    /// `description`.
    pub description: String,
    /// `when`.
    pub when: Option<String>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A graph fragment (`subgraphs.*`), kept as written (this harness runs none).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fragment {
    /// Every field, as written.
    #[serde(flatten)]
    pub rest: Extra,
}

/// A node (`nodes.*`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// `type` (absent: `task`; see [`Node::kind`]).
    #[serde(rename = "type")]
    pub ty: Option<NodeType>,
    /// `title`.
    pub title: String,
    /// `description`.
    pub description: String,
    /// `rationale`.
    pub rationale: Option<String>,
    /// `instructions`: a template.
    pub instructions: Option<String>,
    /// `labels`.
    pub labels: Option<Vec<String>>,
    /// `depends_on`.
    pub depends_on: Option<Vec<String>>,
    /// `join` (absent: `all`).
    pub join: Option<Join>,
    /// `join_count`.
    pub join_count: Option<Int>,
    /// `inputs`.
    pub inputs: Option<IndexMap<String, InputSpec>>,
    /// `outputs`.
    pub outputs: Option<IndexMap<String, OutputSpec>>,
    /// `success`.
    pub success: Option<Success>,
    /// `intelligence`.
    pub intelligence: Option<Intelligence>,
    /// `requirements`.
    pub requirements: Option<Requirements>,
    /// `constraints`.
    pub constraints: Option<Constraints>,
    /// `failure`.
    pub failure: Option<FailurePolicy>,
    /// `human`.
    pub human: Option<Vec<HumanCheckpoint>>,
    /// `when`: an AGX expression.
    pub when: Option<String>,
    /// `loop`.
    #[serde(rename = "loop")]
    pub loop_block: Option<LoopBlock>,
    /// `map`.
    #[serde(rename = "map")]
    pub map_block: Option<MapBlock>,
    /// `subgraph`.
    pub subgraph: Option<SubgraphBlock>,
    /// `gate`.
    pub gate: Option<GateBlock>,
    /// `decision`.
    pub decision: Option<DecisionBlock>,
    /// `estimate`, kept as written.
    pub estimate: Option<Map<String, Json>>,
    /// `metadata`.
    pub metadata: Option<Map<String, Json>>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Node {
    /// Its type (`task` when it names none).
    pub fn kind(&self) -> NodeType {
        self.ty.unwrap_or(NodeType::Task)
    }

    /// Its output names, in order.
    pub fn output_names(&self) -> impl Iterator<Item = &String> {
        self.outputs.iter().flat_map(IndexMap::keys)
    }

    /// Its success criteria, in order.
    pub fn criteria(&self) -> impl Iterator<Item = &Criterion> {
        self.success.iter().flat_map(|s| &s.criteria)
    }

    /// Its human checkpoints, in order.
    pub fn checkpoints(&self) -> impl Iterator<Item = &HumanCheckpoint> {
        self.human.iter().flatten()
    }

    /// Its `failure.retry`.
    pub fn retry(&self) -> Option<&RetryPolicy> {
        self.failure.as_ref()?.retry.as_ref()
    }
}

/// An edge (`edges[]`).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphEdge {
    /// `from`.
    pub from: String,
    /// `to`.
    pub to: String,
    /// `kind` (absent: `sequence`).
    pub kind: Option<EdgeKind>,
    /// `when`.
    pub when: Option<String>,
    /// `label`.
    pub label: Option<String>,
    /// `carries`.
    pub carries: Option<Vec<String>>,
    /// `x-…` extensions.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An integer as the document wrote it (`2`, `2.0`, `1.0e300`: JSON Schema counts each an
/// integer), so a graph writes back as it was read; [`Int::get`] is its value where one fits.
/// A number with a fraction, or anything but a number, does not read as one.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Int(Number);

impl Int {
    /// Its value, when it is a whole number from 0 to `u64::MAX` (`2.0` is 2); `None` for one
    /// out of that range (`1.0e300`), which a field then treats as unset.
    pub fn get(&self) -> Option<u64> {
        self.0.as_u64().or_else(|| {
            self.0
                .as_f64()
                .filter(|f| (0.0..9.007_199_254_740_992e15).contains(f))
                .map(|f| f as u64)
        })
    }

    /// Its value as a signed integer, when one holds it (`-1`, `2.0`).
    pub fn signed(&self) -> Option<i64> {
        self.0.as_i64().or_else(|| {
            self.0
                .as_f64()
                .filter(|f| f.abs() < 9.007_199_254_740_992e15)
                .map(|f| f as i64)
        })
    }

    /// The number as written.
    pub fn number(&self) -> &Number {
        &self.0
    }
}

/// Displayed as written.
impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = Number::deserialize(d)?;
        if n.is_f64()
            && n.as_f64()
                .is_some_and(|f| f.fract() != 0.0 || !f.is_finite())
        {
            return Err(serde::de::Error::custom(format!(
                "{n} is not an integer (it has a fraction)"
            )));
        }
        Ok(Int(n))
    }
}

/// A document that passed the schema and still does not read as a graph: where and why.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphError {
    /// The JSON Pointer of the value that did not read (`""`: the document).
    pub pointer: String,
    /// What was wrong with it.
    pub message: String,
}

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "at `{at}`: {}", self.message)
    }
}

impl std::error::Error for GraphError {}

/// Fills each field a block leaves out from the defaults' (SPEC.md §6.3: per block, shallow).
macro_rules! over {
    ($node:expr, $defaults:expr; $($field:ident),*) => {{
        $( if $node.$field.is_none() { $node.$field = $defaults.$field.clone(); } )*
        for (k, v) in &$defaults.extra {
            if !$node.extra.contains_key(k) {
                $node.extra.insert(k.clone(), v.clone());
            }
        }
    }};
}

/// A block of the node's over the same block of the defaults'.
fn merge_block<T: Clone>(node: &mut Option<T>, defaults: Option<&T>, over: impl Fn(&mut T, &T)) {
    match (node.as_mut(), defaults) {
        (Some(n), Some(d)) => over(n, d),
        (None, Some(d)) => *node = Some(d.clone()),
        (_, None) => {}
    }
}

impl Graph {
    /// Reads a document's data (one that passed the JSON Schema check) into a graph; a value of
    /// another shape is an error naming where it stands (a JSON Pointer into the document).
    pub fn from_json(doc: &Json) -> Result<Graph, GraphError> {
        serde_path_to_error::deserialize(doc).map_err(|e| {
            let pointer = e
                .path()
                .iter()
                .filter_map(|s| match s {
                    serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                    serde_path_to_error::Segment::Map { key } => {
                        Some(ais_core::agir::pointer_token(key))
                    }
                    serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                    serde_path_to_error::Segment::Unknown => None,
                })
                .fold(String::new(), |p, s| format!("{p}/{s}"));
            GraphError {
                pointer,
                message: e.into_inner().to_string(),
            }
        })
    }

    /// [`Graph::from_json`] over data as the reader read it.
    pub fn read(data: &Data) -> Result<Graph, GraphError> {
        Graph::from_json(&data.value)
    }

    /// The graph as it runs: `defaults` merged into every node (SPEC.md §6.3) — per block,
    /// shallow (the node's fields over the defaults'), lists (and `human`, a list) replaced,
    /// never joined. A gate never takes `intelligence` or `human` from them (it calls no
    /// model, AG102, and is itself the human checkpoint). Fragments keep their own (this
    /// harness runs none).
    pub fn merged(&self) -> Graph {
        let mut out = self.clone();
        let Some(d) = &self.defaults else {
            return out;
        };
        for node in out.nodes.values_mut() {
            let gate = node.kind() == NodeType::Gate;
            if !gate {
                merge_block(&mut node.intelligence, d.intelligence.as_ref(), |n, d| {
                    over!(n, d; level, hints, min_context_tokens, allow_downgrade, escalate_to, rationale);
                });
                if node.human.is_none() {
                    node.human.clone_from(&d.human);
                }
            }
            merge_block(&mut node.requirements, d.requirements.as_ref(), |n, d| {
                over!(n, d; tools, permissions, mcp_servers, skills, environment, secrets, network, workspace);
            });
            merge_block(&mut node.constraints, d.constraints.as_ref(), |n, d| {
                for (k, v) in &d.rest {
                    if !n.rest.contains_key(k) {
                        n.rest.insert(k.clone(), v.clone());
                    }
                }
            });
            merge_block(&mut node.failure, d.failure.as_ref(), |n, d| {
                over!(n, d; retry, fallback, escalation, on_exhausted, compensation, timeout_action);
            });
            if node.join.is_none() {
                node.join = d.join;
            }
        }
        out
    }

    /// The node `id`, if the graph has it.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// Its edges, in order.
    pub fn edge_list(&self) -> impl Iterator<Item = &GraphEdge> {
        self.edges.iter().flatten()
    }

    /// Its `policy` (every field absent when it has none).
    pub fn policy(&self) -> Policy {
        self.policy.clone().unwrap_or_default()
    }

    /// The document as data again (what it was read from, extensions included).
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or(Json::Null)
    }
}

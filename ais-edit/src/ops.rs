//! The operation catalog (versioned [`CATALOG_VERSION`]): what a patch is made of.
//!
//! Each operation is one variant of [`Op`], decoded strictly (an unknown field is a
//! `bad_shape` rejection naming it), with a JSON Schema (schemars) and an example in
//! [`catalog`]. Elements given whole (an instruction, a carry, a tool, a knowledge item, a
//! type) are spelled as in AG-IR — the same field names — and read by the AG-IR reader, so an
//! element added by a patch is exactly what the same text in a file would be.
//!
//! Expression arguments (`guard`, `body`) are text atoms, parsed and type-checked in scope at
//! the operation (the carries and types the program has at that point of the patch). The
//! structured form is designed in: [`ExprNode`] is the one JSON grammar of an expression a
//! constrained decoder can target; v1 accepts text only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The version of the catalog: bumped when an operation changes meaning or shape.
pub const CATALOG_VERSION: &str = "ais-edit/1";

/// An instruction as in AG-IR `nodes` (spec §3, §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstructionSpec {
    /// Unique id.
    pub id: String,
    /// The opcode (`GEN-RAW`, `ROUTE`, `TERMINAL`, …).
    #[serde(rename = "type")]
    pub opcode: String,
    /// `code` or `model` (dual opcodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Input carries, in binding order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// Output carries; the first receives the result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
    /// The semantic operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The tool it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Descriptive operation name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// ACT: `artifact` or `workspace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// SU: the result type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// CODE: a single-expression body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// SU: `{tools: [...]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autonomy: Option<Json>,
    /// SPAWN: `{isolation, spawn, max_parallel}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Json>,
    /// LOOP verdict carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// LOOP cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<i64>,
    /// LOOP counter carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
    /// CALL target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Provenance: obligation ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_to: Option<Vec<String>>,
}

/// A carry as in AG-IR `walker.carries` (spec §5.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CarrySpec {
    /// The carry's name.
    pub name: String,
    /// Its type (`str`, `list[str]`, a declared type).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// `input` for an input carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The instruction that writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produced_by: Option<String>,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Its initial value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Json>,
    /// Provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_to: Option<Vec<String>>,
}

/// A tool as in AG-IR `tools` (spec §5.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// `"(param, …) -> type"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
    /// `SENSE`, `ACT` or `ACT·artifact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// Instruction ids it implements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serves: Option<Vec<String>>,
    /// Implementation source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The body's language (`python` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// A shell command with `{param}` placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// `{server, tool}`: an MCP server tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<Json>,
    /// Provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_to: Option<Vec<String>>,
}

/// A knowledge item as in AG-IR `knowledge` (spec §5.2): exactly one content field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeSpec {
    /// The item's key.
    pub name: String,
    /// The instructions whose slots receive it.
    #[serde(default)]
    pub resident_on: Vec<String>,
    /// Content: a template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Content: a pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Content: a body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Content: a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
    /// Provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_to: Option<Vec<String>>,
}

/// A member of an enum (name and doc) or a field of an object (name, type, doc, default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberSpec {
    /// Its name.
    pub name: String,
    /// A field's type (objects only).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// A field's default (objects only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Json>,
}

/// A declared type as in AG-IR `types` (spec §6.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSpec {
    /// The type's name.
    pub name: String,
    /// `enum` or `object`.
    pub kind: TypeKindSpec,
    /// An enum's members, or an object's fields.
    #[serde(default)]
    pub members: Vec<MemberSpec>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

/// `enum` or `object`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TypeKindSpec {
    /// An enum: `members`.
    Enum,
    /// An object: `fields`.
    Object,
}

/// The structured form of an expression (designed in; v1 takes expressions as text). One
/// grammar for every expression of a patch, for constrained decoding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ExprNode {
    /// A carry (or an enum member compared with an enum-typed operand).
    Name {
        /// The name.
        name: String,
    },
    /// A literal value.
    Lit {
        /// The value: null, a bool, a number or a string.
        value: Json,
    },
    /// `x.name`.
    Attr {
        /// The object.
        of: Box<ExprNode>,
        /// The field or member.
        name: String,
    },
    /// `x[i]`.
    Index {
        /// The collection.
        of: Box<ExprNode>,
        /// The index.
        index: Box<ExprNode>,
    },
    /// `f(args)` or `x.m(args)` (`of` given).
    Call {
        /// The function or method.
        name: String,
        /// The receiver of a method.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<Box<ExprNode>>,
        /// The arguments.
        args: Vec<ExprNode>,
    },
    /// `-x`, `not x`.
    Unary {
        /// `-` or `not`.
        op: String,
        /// The operand.
        x: Box<ExprNode>,
    },
    /// `a op b`: arithmetic, comparison, membership, `and`, `or`.
    Binary {
        /// The operator as written.
        op: String,
        /// Left.
        left: Box<ExprNode>,
        /// Right.
        right: Box<ExprNode>,
    },
    /// `[a, b]`.
    List {
        /// The items.
        items: Vec<ExprNode>,
    },
}

/// One operation of a patch. `generation`, where an operation has it, is the generation of
/// the element it changes as a view reported it: given and not current, the patch is rejected
/// as stale (left out, the operation applies to the element as it is). `$N` in any string
/// names what operation N (1 first) created: its id, or `KIND:$N` its address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// Set the module's frontmatter `name`, `description`, `walker.name`, `shape`, `standalone`
    /// (each only when given).
    SetProgram {
        /// Frontmatter `name`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Frontmatter `description`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// `walker.name`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        walker: Option<String>,
        /// `shape`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shape: Option<String>,
        /// `standalone`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        standalone: Option<bool>,
        /// The program's generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Add an instruction (at the end of `nodes`, or before/after one; `nodes[0]` is the entry).
    AddInstruction {
        /// The instruction.
        instruction: InstructionSpec,
        /// Put it before this instruction.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        /// Put it after this instruction.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<String>,
    },
    /// Replace an instruction whole (same id; its edges stay).
    ReplaceInstruction {
        /// Its id.
        id: String,
        /// The new instruction.
        instruction: InstructionSpec,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Delete instructions: refused while anything outside the set refers to them (edges,
    /// `produced_by`, `serves`, `resident_on`), listing the references; edges inside the set
    /// go with it.
    DeleteInstruction {
        /// The ids.
        ids: Vec<String>,
    },
    /// Put a new instruction on the edge `from -> to`: `from -> new` keeps the edge's
    /// modality and guard, `new -> to` is mandatory.
    InsertBetween {
        /// The edge's source.
        from: String,
        /// The edge's target.
        to: String,
        /// Which of the edges `from -> to` (0 first).
        #[serde(default)]
        index: usize,
        /// The new instruction.
        instruction: InstructionSpec,
        /// The generation of `from`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set an instruction's `owner`.
    SetOwner {
        /// The instruction.
        id: String,
        /// `code` or `model`.
        owner: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set an instruction's `reads`.
    SetReads {
        /// The instruction.
        id: String,
        /// The carries it reads.
        reads: Vec<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set an instruction's `writes`.
    SetWrites {
        /// The instruction.
        id: String,
        /// The carries it writes.
        writes: Vec<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set (or clear, with null) an SU instruction's `output` type.
    SetOutput {
        /// The instruction.
        id: String,
        /// The type, or null.
        #[serde(rename = "type")]
        ty: Option<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set a CODE instruction's body (an expression, checked in scope).
    SetBody {
        /// The instruction.
        id: String,
        /// The body.
        body: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Bind an instruction to a tool (its `tool` field).
    Bind {
        /// The instruction.
        id: String,
        /// The tool.
        tool: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set an SU slot's `autonomy.tools`.
    SetAutonomy {
        /// The instruction.
        id: String,
        /// The tools the slot may act over.
        tools: Vec<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set the part of an instruction a view's handle names (`n3`): a read or write entry, the
    /// doc, the body, the output, an autonomy tool, an outgoing edge's guard. Handles are
    /// meaningful only against the generation the view reported, which is required.
    SetPart {
        /// The instruction.
        id: String,
        /// The handle (`n1`, …).
        at: String,
        /// The new text.
        value: String,
        /// The generation the view reported.
        generation: String,
    },
    /// Remove the part a handle names: a read or write entry, an autonomy tool, the doc, the
    /// body, the output, an outgoing edge's guard.
    RemovePart {
        /// The instruction.
        id: String,
        /// The handle.
        at: String,
        /// The generation the view reported.
        generation: String,
    },
    /// Add an edge (at the end, or at `position` among `from`'s outgoing edges).
    AddEdge {
        /// Source.
        from: String,
        /// Target.
        to: String,
        /// `mandatory`, `discretionary` or `forbidden`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        modality: Option<String>,
        /// A guard (an expression, checked in scope).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guard: Option<String>,
        /// Its place among `from`'s outgoing edges (0 first; they are tried in order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<usize>,
    },
    /// Remove an edge.
    RemoveEdge {
        /// Source.
        from: String,
        /// Target.
        to: String,
        /// Which of the edges `from -> to`.
        #[serde(default)]
        index: usize,
        /// The edge's generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set (or clear, with null) an edge's guard (an expression, checked in scope).
    SetGuard {
        /// Source.
        from: String,
        /// Target.
        to: String,
        /// Which of the edges `from -> to`.
        #[serde(default)]
        index: usize,
        /// The guard, or null.
        guard: Option<String>,
        /// The edge's generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set an edge's modality.
    SetModality {
        /// Source.
        from: String,
        /// Target.
        to: String,
        /// Which of the edges `from -> to`.
        #[serde(default)]
        index: usize,
        /// `mandatory`, `discretionary` or `forbidden`.
        modality: String,
        /// The edge's generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Reorder a branch: `from`'s outgoing edges in the order of their targets.
    ReorderEdges {
        /// The branching instruction.
        from: String,
        /// Its edges' targets, in the new order (each outgoing edge exactly once).
        order: Vec<String>,
        /// The generation of `from`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Add a carry.
    AddCarry {
        /// The carry.
        carry: CarrySpec,
    },
    /// Change a carry's type.
    RetypeCarry {
        /// The carry.
        carry: String,
        /// The type.
        #[serde(rename = "type")]
        ty: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set (or clear) a carry's `produced_by`.
    SetProducedBy {
        /// The carry.
        carry: String,
        /// The instruction, or null.
        instruction: Option<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Add a tool.
    AddTool {
        /// The tool.
        tool: ToolSpec,
    },
    /// Replace a tool whole (same name).
    ReplaceTool {
        /// Its name.
        name: String,
        /// The new tool.
        tool: ToolSpec,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set a tool's implementation body (and its language).
    SetToolBody {
        /// The tool.
        name: String,
        /// The source.
        body: String,
        /// Its language (`python` when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lang: Option<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set a tool's shell command.
    SetCommand {
        /// The tool.
        name: String,
        /// The command with `{param}` placeholders.
        command: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Add a knowledge item.
    AddKnowledge {
        /// The item.
        knowledge: KnowledgeSpec,
    },
    /// Set where a knowledge item is resident.
    SetResidency {
        /// The item.
        name: String,
        /// The instructions whose slots receive it.
        resident_on: Vec<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Declare a type.
    AddType {
        /// The type.
        #[serde(rename = "type")]
        ty: TypeSpec,
    },
    /// Remove a type: refused while carries, outputs or fields are typed by it.
    RemoveType {
        /// Its name.
        name: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Add a member to an enum or a field to an object.
    AddMember {
        /// The type.
        #[serde(rename = "type")]
        ty: String,
        /// The member or field.
        member: MemberSpec,
        /// The type's generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Remove a member or field: refused while a guard or body names it.
    RemoveMember {
        /// The type.
        #[serde(rename = "type")]
        ty: String,
        /// The member or field.
        member: String,
        /// The type's generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Rename anything, with every reference: an instruction (edges, `produced_by`, `serves`,
    /// `resident_on`), a carry (reads, writes, verdicts, counters, guards, CODE bodies), a
    /// tool (bindings, autonomy), a type (typed carries, outputs, fields, `Type.member` in
    /// guards), a member (guards naming it), a knowledge item. A name already taken is a
    /// collision; a name a guard already uses for something else is a capture.
    Rename {
        /// What to rename.
        target: String,
        /// The new name.
        to: String,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set (or clear) the `doc` of anything that has one (the program's is its description).
    SetDoc {
        /// What.
        target: String,
        /// The doc, or null.
        doc: Option<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
    /// Set the `traces_to` of an instruction, carry, tool, knowledge item or edge (empty
    /// clears it).
    SetTracesTo {
        /// What.
        target: String,
        /// The obligation ids.
        traces_to: Vec<String>,
        /// Its generation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<String>,
    },
}

/// One entry of the catalog.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OpInfo {
    /// The operation's name.
    pub op: &'static str,
    /// What it does.
    pub summary: String,
    /// Its JSON Schema.
    pub schema: Json,
    /// An example (against `examples/writing_plans.agir`).
    pub example: Json,
    /// A patch holding the example that is accepted on `examples/writing_plans.agir`.
    pub in_patch: Json,
}

/// The examples, one per operation, against `examples/writing_plans.agir`: the operation,
/// and a patch holding it (`OP`) that is accepted (`[OP]` when it stands alone). `GEN` stands
/// for a generation a `view` reported.
pub const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "set_program",
        r#"{"op":"set_program","description":"Plan a feature as bite-sized TDD tasks."}"#,
        "[OP]",
    ),
    (
        "add_instruction",
        r#"{"op":"add_instruction","instruction":{"id":"review","type":"GEN-RAW","reads":["plan_md"],"writes":["review_md"],"doc":"Review the plan."},"after":"verify"}"#,
        r#"[OP,{"op":"add_carry","carry":{"name":"review_md","type":"str","produced_by":"review"}},{"op":"remove_edge","from":"verify","to":"save"},{"op":"add_edge","from":"verify","to":"review"},{"op":"add_edge","from":"review","to":"save"}]"#,
    ),
    (
        "replace_instruction",
        r#"{"op":"replace_instruction","id":"draft_header","instruction":{"id":"draft_header","type":"GEN-RAW","owner":"model","reads":["task"],"writes":["header_md"],"doc":"Write the plan's header."}}"#,
        "[OP]",
    ),
    (
        "delete_instruction",
        r#"{"op":"delete_instruction","ids":["polish"]}"#,
        r#"[{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"polish","type":"GEN-EDIT","reads":["plan_md"],"writes":["plan_md"],"doc":"Tighten the wording."}},{"op":"remove_edge","from":"verify","to":"polish"},{"op":"remove_edge","from":"polish","to":"save"},{"op":"add_edge","from":"verify","to":"save"},OP]"#,
    ),
    (
        "insert_between",
        r#"{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"polish","type":"GEN-EDIT","reads":["plan_md"],"writes":["plan_md"],"doc":"Tighten the wording."}}"#,
        "[OP]",
    ),
    (
        "set_owner",
        r#"{"op":"set_owner","id":"polish","owner":"model"}"#,
        r#"[{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"polish","type":"GEN-EDIT","reads":["plan_md"],"writes":["plan_md"],"doc":"Tighten the wording."}},OP]"#,
    ),
    (
        "set_reads",
        r#"{"op":"set_reads","id":"write_tasks","reads":["header_md","task"]}"#,
        "[OP]",
    ),
    (
        "set_writes",
        r#"{"op":"set_writes","id":"polish","writes":["plan_md"]}"#,
        r#"[{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"polish","type":"GEN-EDIT","reads":["plan_md"],"writes":["tasks_md"],"doc":"Tighten the wording."}},OP]"#,
    ),
    (
        "set_output",
        r#"{"op":"set_output","id":"draft_header","type":"str"}"#,
        "[OP]",
    ),
    (
        "set_body",
        r#"{"op":"set_body","id":"count","body":"len(plan_md) + 1"}"#,
        r#"[{"op":"insert_between","from":"assemble","to":"verify","instruction":{"id":"count","type":"CODE","reads":["plan_md"],"writes":["words"],"body":"len(plan_md)"}},{"op":"add_carry","carry":{"name":"words","type":"int","produced_by":"count"}},OP]"#,
    ),
    (
        "bind",
        r#"{"op":"bind","id":"check_code","tool":"has_code"}"#,
        r#"[{"op":"add_tool","tool":{"name":"has_code","sig":"(plan_md) -> bool","surface":"SENSE","body":"def has_code(plan_md):\n    return '```' in plan_md\n"}},{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"check_code","type":"SENSE","owner":"code","reads":["plan_md"],"writes":["has_code_ok"]}},{"op":"add_carry","carry":{"name":"has_code_ok","type":"bool","produced_by":"check_code"}},OP]"#,
    ),
    (
        "set_autonomy",
        r#"{"op":"set_autonomy","id":"write_tasks","tools":["verify_has_tasks"]}"#,
        "[OP]",
    ),
    (
        "set_part",
        r#"{"op":"set_part","id":"verify","at":"n1","value":"Check that the plan has tasks.","generation":"GEN"}"#,
        "[OP]",
    ),
    (
        "remove_part",
        r#"{"op":"remove_part","id":"write_tasks","at":"n3","generation":"GEN"}"#,
        "[OP]",
    ),
    (
        "add_edge",
        r#"{"op":"add_edge","from":"verify","to":"write_tasks","guard":"not plan_ok","position":0}"#,
        "[OP]",
    ),
    (
        "remove_edge",
        r#"{"op":"remove_edge","from":"verify","to":"save"}"#,
        r#"[OP,{"op":"add_edge","from":"verify","to":"save","modality":"discretionary"}]"#,
    ),
    (
        "set_guard",
        r#"{"op":"set_guard","from":"verify","to":"save","guard":"plan_ok"}"#,
        r#"[{"op":"add_edge","from":"verify","to":"write_tasks","guard":"not plan_ok"},OP]"#,
    ),
    (
        "set_modality",
        r#"{"op":"set_modality","from":"verify","to":"save","modality":"discretionary"}"#,
        "[OP]",
    ),
    (
        "reorder_edges",
        r#"{"op":"reorder_edges","from":"verify","order":["write_tasks","save"]}"#,
        r#"[{"op":"add_edge","from":"verify","to":"write_tasks","guard":"not plan_ok"},OP]"#,
    ),
    (
        "add_carry",
        r#"{"op":"add_carry","carry":{"name":"audience","type":"str","role":"input","doc":"Who reads the plan."}}"#,
        "[OP]",
    ),
    (
        "retype_carry",
        r#"{"op":"retype_carry","carry":"plan_file","type":"path"}"#,
        "[OP]",
    ),
    (
        "set_produced_by",
        r#"{"op":"set_produced_by","carry":"notes","instruction":"polish"}"#,
        r#"[{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"polish","type":"GEN-RAW","reads":["plan_md"],"writes":["notes"],"doc":"Note what could be tighter."}},{"op":"add_carry","carry":{"name":"notes","type":"str"}},OP]"#,
    ),
    (
        "add_tool",
        r#"{"op":"add_tool","tool":{"name":"has_code","sig":"(plan_md) -> bool","surface":"SENSE","body":"def has_code(plan_md):\n    return '```' in plan_md\n"}}"#,
        r#"[OP,{"op":"insert_between","from":"verify","to":"save","instruction":{"id":"check_code","type":"SENSE","owner":"code","tool":"has_code","reads":["plan_md"],"writes":["has_code_ok"]}},{"op":"add_carry","carry":{"name":"has_code_ok","type":"bool","produced_by":"check_code"}}]"#,
    ),
    (
        "replace_tool",
        r#"{"op":"replace_tool","name":"verify_has_tasks","tool":{"name":"verify_has_tasks","sig":"(plan_md) -> bool","surface":"SENSE","body":"def verify_has_tasks(plan_md):\n    return '### Task' in plan_md\n"}}"#,
        "[OP]",
    ),
    (
        "set_tool_body",
        r#"{"op":"set_tool_body","name":"verify_has_tasks","body":"def verify_has_tasks(plan_md):\n    return bool(plan_md)\n"}"#,
        "[OP]",
    ),
    (
        "set_command",
        r#"{"op":"set_command","name":"save_plan","command":"tee {path}"}"#,
        "[OP]",
    ),
    (
        "add_knowledge",
        r#"{"op":"add_knowledge","knowledge":{"name":"style","resident_on":["draft_header"],"template":"Write plainly."}}"#,
        "[OP]",
    ),
    (
        "set_residency",
        r#"{"op":"set_residency","name":"task_format","resident_on":["write_tasks","draft_header"]}"#,
        "[OP]",
    ),
    (
        "add_type",
        r#"{"op":"add_type","type":{"name":"Verdict","kind":"enum","members":[{"name":"pass"},{"name":"fail"}]}}"#,
        "[OP]",
    ),
    (
        "remove_type",
        r#"{"op":"remove_type","name":"Verdict"}"#,
        r#"[{"op":"add_type","type":{"name":"Verdict","kind":"enum","members":[{"name":"pass"},{"name":"fail"}]}},{"op":"add_type","type":{"name":"Mode","kind":"enum","members":[{"name":"fast"},{"name":"slow"}]}},OP]"#,
    ),
    (
        "add_member",
        r#"{"op":"add_member","type":"Verdict","member":{"name":"unsure","doc":"Ask again."}}"#,
        r#"[{"op":"add_type","type":{"name":"Verdict","kind":"enum","members":[{"name":"pass"},{"name":"fail"}]}},OP]"#,
    ),
    (
        "remove_member",
        r#"{"op":"remove_member","type":"Verdict","member":"fail"}"#,
        r#"[{"op":"add_type","type":{"name":"Verdict","kind":"enum","members":[{"name":"pass"},{"name":"fail"}]}},OP]"#,
    ),
    (
        "rename",
        r#"{"op":"rename","target":"carry:plan_ok","to":"has_tasks"}"#,
        "[OP]",
    ),
    (
        "set_doc",
        r#"{"op":"set_doc","target":"instruction:assemble","doc":"Join the header and the tasks."}"#,
        "[OP]",
    ),
    (
        "set_traces_to",
        r#"{"op":"set_traces_to","target":"instruction:verify","traces_to":["O2"]}"#,
        "[OP]",
    ),
];

/// The names of the operations, in catalog order.
pub fn names() -> impl Iterator<Item = &'static str> {
    EXAMPLES.iter().map(|(n, _, _)| *n)
}

/// The catalog: every operation with its summary, JSON Schema and example.
pub fn catalog() -> Vec<OpInfo> {
    let schema = serde_json::to_value(schemars::schema_for!(Op)).unwrap_or_default();
    let defs = schema.get("$defs").cloned();
    let variants = schema
        .get("oneOf")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    EXAMPLES
        .iter()
        .map(|(name, example, before)| {
            let mut s = variants
                .iter()
                .find(|v| v.pointer("/properties/op/const").and_then(Json::as_str) == Some(name))
                .cloned()
                .unwrap_or_default();
            let summary = s
                .get("description")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned();
            if let (Some(obj), Some(defs)) = (s.as_object_mut(), defs.clone()) {
                obj.insert("$defs".into(), defs);
                obj.insert(
                    "$schema".into(),
                    "https://json-schema.org/draft/2020-12/schema".into(),
                );
            }
            OpInfo {
                op: name,
                summary,
                schema: s,
                example: serde_json::from_str(example).unwrap_or_default(),
                in_patch: serde_json::from_str(&before.replace("OP", example)).unwrap_or_default(),
            }
        })
        .collect()
}

//! The program model: every section of an AIS module (spec §8.2) and every field of an
//! instruction (§3, §4), carry (§5.1), knowledge item (§5.2), edge (§5.3), tool (§5.4) and
//! declared type (§6).
//!
//! The model is plain data. It is what the AG-IR reader produces, what the writer prints, what
//! the `ais!` macro lowers to, and what the validator, the binder and the runtime consume.
//! Source positions are kept beside it in a [`SourceMap`](crate::source::SourceMap).
//! The conventions are documented on [`Program`].

use crate::value::Value;
use std::fmt;

/// Unknown fields of an element, in document order, kept and written back out.
pub type Extras = Vec<(String, Value)>;

/// One AIS module.
///
/// Conventions:
/// - Every enum that a document spells as text has an `Unknown(String)` arm: reading never loses
///   what the author wrote, and the validator reports it (an unknown opcode is never skipped).
/// - Unknown fields are kept in `extra` (in document order) and written back out.
/// - Sections that may be absent are `Option`s, so a document that says `types: {}` and one
///   that says nothing are told apart and both written back as they were.
/// - Name-keyed sections (`types`, `tools`, `knowledge`, `walker.carries`, a type's `fields`)
///   are `Vec`s in document order, so duplicate names survive reading and can be reported.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    /// Frontmatter `name`: the module's identifier (REQUIRED, §8.2).
    pub name: Option<String>,
    /// Frontmatter `description`: when to invoke it (REQUIRED, §8.2).
    pub description: Option<String>,
    /// Other frontmatter keys, kept in order.
    pub frontmatter_extra: Extras,
    /// `agir_version`, as written (`0.1` when absent, §12.1).
    pub agir_version: Option<String>,
    /// `standalone`: descriptive self-containment flag.
    pub standalone: Option<bool>,
    /// `shape`: a topology label such as `pipeline` or `dispatch-router`.
    pub shape: Option<String>,
    /// `types`: declared enums and objects (§6.2).
    pub types: Option<Vec<TypeDecl>>,
    /// `knowledge`: the knowledge plane (§5.2).
    pub knowledge: Option<Vec<Knowledge>>,
    /// `tools`: the tool plane (§5.4), in declaration (pipeline) order.
    pub tools: Option<Vec<Tool>>,
    /// `walker`: the program's name in the target and its carries (§5.1).
    pub walker: Option<Walker>,
    /// `nodes`: the instruction list; `nodes[0]` is the entry (§8.3).
    pub nodes: Option<Vec<Instruction>>,
    /// `edges`: the control plane (§5.3); order matters on a branching instruction.
    pub edges: Option<Vec<Edge>>,
    /// Module-level `concurrency` (`spawn: none` with a `reason`, §8.2).
    pub concurrency: Option<Concurrency>,
    /// `faithfulness`: the provenance record (§9.5), kept as written.
    pub faithfulness: Option<Value>,
    /// Unknown top-level sections, kept in order.
    pub extra: Extras,
}

impl Program {
    /// The instructions (empty when `nodes` is absent).
    pub fn instructions(&self) -> &[Instruction] {
        self.nodes.as_deref().unwrap_or(&[])
    }

    /// The edges (empty when `edges` is absent).
    pub fn edge_list(&self) -> &[Edge] {
        self.edges.as_deref().unwrap_or(&[])
    }

    /// The carries (empty when `walker` or `walker.carries` is absent).
    pub fn carries(&self) -> &[Carry] {
        self.walker
            .as_ref()
            .and_then(|w| w.carries.as_deref())
            .unwrap_or(&[])
    }

    /// The tools (empty when `tools` is absent).
    pub fn tool_list(&self) -> &[Tool] {
        self.tools.as_deref().unwrap_or(&[])
    }

    /// The knowledge items (empty when `knowledge` is absent).
    pub fn knowledge_list(&self) -> &[Knowledge] {
        self.knowledge.as_deref().unwrap_or(&[])
    }

    /// The declared types (empty when `types` is absent).
    pub fn type_list(&self) -> &[TypeDecl] {
        self.types.as_deref().unwrap_or(&[])
    }

    /// The first instruction with this id, with its index.
    pub fn instruction(&self, id: &str) -> Option<(usize, &Instruction)> {
        self.instructions()
            .iter()
            .enumerate()
            .find(|(_, i)| i.id == id)
    }

    /// The first carry with this name, with its index.
    pub fn carry(&self, name: &str) -> Option<(usize, &Carry)> {
        self.carries()
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == name)
    }

    /// The first tool with this name, with its index.
    pub fn tool(&self, name: &str) -> Option<(usize, &Tool)> {
        self.tool_list()
            .iter()
            .enumerate()
            .find(|(_, t)| t.name == name)
    }

    /// The first knowledge item with this name, with its index.
    pub fn knowledge_item(&self, name: &str) -> Option<(usize, &Knowledge)> {
        self.knowledge_list()
            .iter()
            .enumerate()
            .find(|(_, k)| k.name == name)
    }

    /// The first declared type with this name, with its index.
    pub fn type_decl(&self, name: &str) -> Option<(usize, &TypeDecl)> {
        self.type_list()
            .iter()
            .enumerate()
            .find(|(_, t)| t.name == name)
    }
}

/// `walker`: the program's target name and its carry file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Walker {
    /// `walker.name`: the program's name in the target (REQUIRED, §8.2).
    pub name: Option<String>,
    /// `walker.carries`: the data plane (REQUIRED, §8.2).
    pub carries: Option<Vec<Carry>>,
    /// Unknown walker fields.
    pub extra: Extras,
}

/// A carry: a named, typed slot of the carry file (§5.1).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Carry {
    /// The carry's name.
    pub name: String,
    /// Its declared type; `None` means untyped, which lowers to `any` (§6.3).
    pub ty: Option<Type>,
    /// `role` (only `input` is defined).
    pub role: Option<Role>,
    /// `produced_by`: the id of the instruction that writes it.
    pub produced_by: Option<String>,
    /// `doc`: what the carry holds.
    pub doc: Option<String>,
    /// `default`: the initial value, when declared.
    pub default: Option<Value>,
    /// `traces_to`: provenance (§9.5).
    pub traces_to: Option<Vec<String>>,
    /// Unknown fields.
    pub extra: Extras,
}

impl Carry {
    /// True when the carry is declared `role: input`.
    pub fn is_input(&self) -> bool {
        matches!(self.role, Some(Role::Input))
    }
}

/// A carry's `role`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// `input`: seeded from the invocation (§7.5).
    Input,
    /// Anything else, kept as written and reported.
    Unknown(String),
}

impl Role {
    /// Reads a role as written in a document.
    pub fn parse(text: &str) -> Role {
        match text {
            "input" => Role::Input,
            other => Role::Unknown(other.to_owned()),
        }
    }
    /// The role as written.
    pub fn as_str(&self) -> &str {
        match self {
            Role::Input => "input",
            Role::Unknown(s) => s,
        }
    }
}

/// An instruction (a node of the graph, §3).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Instruction {
    /// `id`: unique, non-empty (W1).
    pub id: String,
    /// `type`: the opcode mnemonic (W2).
    pub opcode: Opcode,
    /// `owner` as written; see [`Instruction::effective_owner`].
    pub owner: Option<Owner>,
    /// `reads`: input operands, in binding order (§7).
    pub reads: Vec<String>,
    /// `writes`: output carries; `writes[0]` receives the result.
    pub writes: Vec<String>,
    /// `doc`: the semantic operand (normative for SU instructions).
    pub doc: Option<String>,
    /// `tool`: binds a tool table entry (§5.4).
    pub tool: Option<String>,
    /// `op`: descriptive operation name; never a binding mechanism.
    pub op: Option<String>,
    /// `surface` (ACT only): artifact or workspace.
    pub surface: Option<Surface>,
    /// `output` (SU only): overrides the result type.
    pub output: Option<Type>,
    /// `body` (CODE only): a single-expression inline body.
    pub body: Option<String>,
    /// `autonomy` (SU only): the tool surface of the slot.
    pub autonomy: Option<Autonomy>,
    /// `concurrency` (SPAWN only): fan-out source and isolation.
    pub concurrency: Option<Concurrency>,
    /// LOOP `verdict`: a bool carry produced by a DU instruction.
    pub verdict: Option<String>,
    /// LOOP `cap`: the iteration bound.
    pub cap: Option<i64>,
    /// LOOP `counter`: an int carry counting iterations.
    pub counter: Option<String>,
    /// CALL `target`: another program (a macro program's name, or a `.agir` path).
    pub target: Option<String>,
    /// `traces_to`: provenance (§9.5).
    pub traces_to: Option<Vec<String>>,
    /// Unknown fields.
    pub extra: Extras,
}

impl Instruction {
    /// The unit that executes this instruction: the opcode's fixed owner when it has one, else
    /// the declared `owner`. `None` when neither says (a dual opcode with no owner, W3).
    pub fn effective_owner(&self) -> Option<Owner> {
        match self.opcode.fixed_owner() {
            Some(o) => Some(o),
            None => self.owner.clone(),
        }
    }

    /// True when this instruction runs on the Stochastic Unit (a model).
    pub fn is_su(&self) -> bool {
        self.effective_owner() == Some(Owner::Model)
    }

    /// True when this instruction runs on the Deterministic Unit (code).
    pub fn is_du(&self) -> bool {
        self.effective_owner() == Some(Owner::Code)
    }
}

/// The twelve opcodes of §4, and anything else as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// `GEN-ENUM`: one member of an enum (SU).
    GenEnum,
    /// `GEN-FILL`: an instance of an object type (SU).
    GenFill,
    /// `GEN-EDIT`: a revision of an existing value (SU).
    GenEdit,
    /// `GEN-RAW`: free-form text (SU).
    GenRaw,
    /// `SENSE`: world state, read in (DU or SU).
    Sense,
    /// `ACT`: an effect, pushed out (DU or SU).
    Act,
    /// `CODE`: a pure function of its operands (DU).
    Code,
    /// `ROUTE`: branch (DU or SU).
    Route,
    /// `LOOP`: bounded repetition (DU or SU).
    Loop,
    /// `SPAWN`: fan out and join (DU).
    Spawn,
    /// `CALL`: expand a sub-program (SU).
    Call,
    /// `TERMINAL`: serialize the report and halt (DU).
    Terminal,
    /// Not an opcode of this version, kept as written and reported (W2, §11.2). Empty when the
    /// instruction has no `type`.
    Unknown(String),
}

impl Default for Opcode {
    fn default() -> Self {
        Opcode::Unknown(String::new())
    }
}

impl Opcode {
    /// All twelve opcodes, in the order of §4.
    pub const ALL: [Opcode; 12] = [
        Opcode::GenEnum,
        Opcode::GenFill,
        Opcode::GenEdit,
        Opcode::GenRaw,
        Opcode::Sense,
        Opcode::Act,
        Opcode::Code,
        Opcode::Route,
        Opcode::Loop,
        Opcode::Spawn,
        Opcode::Call,
        Opcode::Terminal,
    ];

    /// Reads a mnemonic. Only the exact spelling is an opcode (W2); anything else is
    /// [`Opcode::Unknown`].
    pub fn parse(text: &str) -> Opcode {
        Opcode::ALL
            .iter()
            .find(|o| o.mnemonic() == text)
            .cloned()
            .unwrap_or_else(|| Opcode::Unknown(text.to_owned()))
    }

    /// The mnemonic as spelled in AG-IR.
    pub fn mnemonic(&self) -> &str {
        match self {
            Opcode::GenEnum => "GEN-ENUM",
            Opcode::GenFill => "GEN-FILL",
            Opcode::GenEdit => "GEN-EDIT",
            Opcode::GenRaw => "GEN-RAW",
            Opcode::Sense => "SENSE",
            Opcode::Act => "ACT",
            Opcode::Code => "CODE",
            Opcode::Route => "ROUTE",
            Opcode::Loop => "LOOP",
            Opcode::Spawn => "SPAWN",
            Opcode::Call => "CALL",
            Opcode::Terminal => "TERMINAL",
            Opcode::Unknown(s) => s,
        }
    }

    /// True for the Mind class (`GEN-*`), which is always SU (§4.1).
    pub fn is_mind(&self) -> bool {
        matches!(
            self,
            Opcode::GenEnum | Opcode::GenFill | Opcode::GenEdit | Opcode::GenRaw
        )
    }

    /// The owner the opcode fixes, if it fixes one (§4, Appendix B): Mind and `CALL` are SU;
    /// `CODE`, `SPAWN` and `TERMINAL` are DU; the rest are dual.
    pub fn fixed_owner(&self) -> Option<Owner> {
        match self {
            Opcode::GenEnum | Opcode::GenFill | Opcode::GenEdit | Opcode::GenRaw | Opcode::Call => {
                Some(Owner::Model)
            }
            Opcode::Code | Opcode::Spawn | Opcode::Terminal => Some(Owner::Code),
            _ => None,
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// The execution unit (§2.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Owner {
    /// `code`: the Deterministic Unit.
    Code,
    /// `model`: the Stochastic Unit.
    Model,
    /// Anything else, kept as written and reported (W3).
    Unknown(String),
}

impl Owner {
    /// Reads an owner as written.
    pub fn parse(text: &str) -> Owner {
        match text {
            "code" => Owner::Code,
            "model" => Owner::Model,
            other => Owner::Unknown(other.to_owned()),
        }
    }
    /// The owner as written.
    pub fn as_str(&self) -> &str {
        match self {
            Owner::Code => "code",
            Owner::Model => "model",
            Owner::Unknown(s) => s,
        }
    }
}

/// An `ACT` instruction's `surface` (§4.2.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Surface {
    /// `artifact`: a deliverable the user interacts with.
    Artifact,
    /// `workspace`: scratch.
    Workspace,
    /// Anything else: reported, and treated as `artifact` (§12.2).
    Unknown(String),
}

impl Surface {
    /// Reads a surface as written.
    pub fn parse(text: &str) -> Surface {
        match text {
            "artifact" => Surface::Artifact,
            "workspace" => Surface::Workspace,
            other => Surface::Unknown(other.to_owned()),
        }
    }
    /// The surface as written.
    pub fn as_str(&self) -> &str {
        match self {
            Surface::Artifact => "artifact",
            Surface::Workspace => "workspace",
            Surface::Unknown(s) => s,
        }
    }
}

/// `autonomy`: the tools an SU slot may act over.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Autonomy {
    /// `autonomy.tools`.
    pub tools: Vec<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// `concurrency`, on a `SPAWN` (isolation, fan-out source, parallelism) or on the module
/// (`spawn: none` with a `reason`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Concurrency {
    /// `isolation` (§4.4.4).
    pub isolation: Option<Isolation>,
    /// `spawn`: a literal list of sub-tasks, or `none`.
    pub spawn: Option<SpawnSource>,
    /// `max_parallel`: the most siblings run at once.
    pub max_parallel: Option<i64>,
    /// `reason`: why there is (no) fan-out.
    pub reason: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// `concurrency.spawn`.
#[derive(Clone, Debug, PartialEq)]
pub enum SpawnSource {
    /// `none`: no fan-out here.
    None,
    /// A literal list: one sibling per entry.
    List(Vec<String>),
    /// Anything else, kept as written and reported.
    Other(Value),
}

/// A `SPAWN`'s isolation mode (§4.4.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// `private_write`.
    PrivateWrite,
    /// `shared_read`.
    SharedRead,
    /// `orchestrator_owned`.
    OrchestratorOwned,
    /// Anything else: reported, treated as `orchestrator_owned` (§12.2).
    Unknown(String),
}

impl Isolation {
    /// Reads an isolation mode as written.
    pub fn parse(text: &str) -> Isolation {
        match text {
            "private_write" => Isolation::PrivateWrite,
            "shared_read" => Isolation::SharedRead,
            "orchestrator_owned" => Isolation::OrchestratorOwned,
            other => Isolation::Unknown(other.to_owned()),
        }
    }
    /// The mode as written.
    pub fn as_str(&self) -> &str {
        match self {
            Isolation::PrivateWrite => "private_write",
            Isolation::SharedRead => "shared_read",
            Isolation::OrchestratorOwned => "orchestrator_owned",
            Isolation::Unknown(s) => s,
        }
    }
}

/// An edge of the control plane (§5.3).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Edge {
    /// `from`: source instruction id.
    pub from: String,
    /// `to`: target instruction id.
    pub to: String,
    /// `modality`: the deontic force.
    pub modality: Option<Modality>,
    /// `guard`: a condition over carries, as written (see [`crate::expr`]).
    pub guard: Option<String>,
    /// `traces_to`: provenance (§9.5).
    pub traces_to: Option<Vec<String>>,
    /// Unknown fields.
    pub extra: Extras,
}

/// An edge's modality (§5.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Modality {
    /// `mandatory`: fires by construction.
    Mandatory,
    /// `discretionary`: a guarded transition.
    Discretionary,
    /// `forbidden`: no transition may exist.
    Forbidden,
    /// Anything else: reported, treated as `mandatory` (§12.2).
    Unknown(String),
}

impl Modality {
    /// Reads a modality as written.
    pub fn parse(text: &str) -> Modality {
        match text {
            "mandatory" => Modality::Mandatory,
            "discretionary" => Modality::Discretionary,
            "forbidden" => Modality::Forbidden,
            other => Modality::Unknown(other.to_owned()),
        }
    }
    /// The modality as written.
    pub fn as_str(&self) -> &str {
        match self {
            Modality::Mandatory => "mandatory",
            Modality::Discretionary => "discretionary",
            Modality::Forbidden => "forbidden",
            Modality::Unknown(s) => s,
        }
    }
}

/// A knowledge item (§5.2).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Knowledge {
    /// The item's key.
    pub name: String,
    /// `resident_on`: the instruction ids whose slots receive it.
    pub resident_on: Vec<String>,
    /// The content fields present (`template`, `pattern`, `body`, `value`), in document order.
    /// Exactly one is required (W12).
    pub content: Vec<(ContentKind, Value)>,
    /// `traces_to`: provenance.
    pub traces_to: Option<Vec<String>>,
    /// Unknown fields (including `prose:` / `source:` provenance).
    pub extra: Extras,
}

impl Knowledge {
    /// The item's text, as folded into a slot's semantic operand: the first content field,
    /// strings verbatim and structured values as JSON.
    pub fn text(&self) -> Option<String> {
        self.content.first().map(|(_, v)| match v {
            Value::Str(s) => s.clone(),
            other => other.to_string(),
        })
    }
}

/// Which field holds a knowledge item's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContentKind {
    /// `template`.
    Template,
    /// `pattern`.
    Pattern,
    /// `body`.
    Body,
    /// `value`.
    Value,
}

impl ContentKind {
    /// All content fields, in the order they are written.
    pub const ALL: [ContentKind; 4] = [
        ContentKind::Template,
        ContentKind::Pattern,
        ContentKind::Body,
        ContentKind::Value,
    ];

    /// The field name.
    pub fn as_str(&self) -> &'static str {
        match self {
            ContentKind::Template => "template",
            ContentKind::Pattern => "pattern",
            ContentKind::Body => "body",
            ContentKind::Value => "value",
        }
    }

    /// The kind for a field name.
    pub fn parse(text: &str) -> Option<ContentKind> {
        ContentKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// A tool table entry (§5.4).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// `sig`: `"(param, …) -> type"`, as written; parsed by [`crate::sig`].
    pub sig: Option<String>,
    /// `surface`: SENSE, ACT or ACT·artifact.
    pub surface: Option<ToolSurface>,
    /// `serves`: the instruction ids this tool implements.
    pub serves: Option<Vec<String>>,
    /// `body`: the implementation source (rung 1).
    pub body: Option<String>,
    /// `lang`: the body's language (`python` when absent; `rust` for macro tools).
    pub lang: Option<String>,
    /// `command`: a shell command with `{param}` placeholders (rung 2).
    pub command: Option<String>,
    /// `doc`: what the tool does.
    pub doc: Option<String>,
    /// `traces_to`: provenance.
    pub traces_to: Option<Vec<String>>,
    /// Unknown fields.
    pub extra: Extras,
}

/// A tool's `surface` (§5.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ToolSurface {
    /// `SENSE`: reads.
    Sense,
    /// `ACT`: effects that stay in the workspace.
    Act,
    /// `ACT·artifact`: writes that cross the user line.
    ActArtifact,
    /// Anything else: reported, treated as `ACT·artifact` (§12.2).
    Unknown(String),
}

impl ToolSurface {
    /// Reads a tool surface. `ACT·artifact` is also accepted as `ACT artifact`, `ACT-artifact`,
    /// `ACT.artifact`, `ACT/artifact`, `ACT_artifact` and `ACT(artifact)`, in any case.
    pub fn parse(text: &str) -> ToolSurface {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "sense" => ToolSurface::Sense,
            "act" => ToolSurface::Act,
            _ => {
                let rest = lower.strip_prefix("act").map(|r| {
                    r.trim_start_matches(['·', ' ', '-', '.', '/', '_', '(', ':'])
                        .trim_end_matches(')')
                });
                if rest == Some("artifact") {
                    ToolSurface::ActArtifact
                } else {
                    ToolSurface::Unknown(t.to_owned())
                }
            }
        }
    }

    /// The canonical spelling: `SENSE`, `ACT`, `ACT·artifact`.
    pub fn as_str(&self) -> &str {
        match self {
            ToolSurface::Sense => "SENSE",
            ToolSurface::Act => "ACT",
            ToolSurface::ActArtifact => "ACT·artifact",
            ToolSurface::Unknown(s) => s,
        }
    }
}

/// A declared type (§6.2).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TypeDecl {
    /// The type's name.
    pub name: String,
    /// `kind` and its contents.
    pub kind: TypeKind,
    /// `doc`.
    pub doc: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// What a declared type is.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `kind: enum` with its `members`.
    Enum(Vec<EnumMember>),
    /// `kind: object` with its `fields`.
    Object(Vec<Field>),
    /// A missing or unknown `kind`, kept as written (empty when absent) and reported (W14).
    Unknown(String),
}

impl Default for TypeKind {
    fn default() -> Self {
        TypeKind::Unknown(String::new())
    }
}

/// An enum member, with its optional description.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EnumMember {
    /// The member's name.
    pub name: String,
    /// Its description (becomes the member's `sem` / schema description).
    pub doc: Option<String>,
}

/// An object type's field.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its type (`None`: untyped).
    pub ty: Option<Type>,
    /// `doc`: normative for SU instructions (it becomes the schema description).
    pub doc: Option<String>,
    /// `default`, when declared.
    pub default: Option<Value>,
    /// Unknown fields.
    pub extra: Extras,
}

/// The built-in object type `outcome` (the design's error values): what a tool or program that
/// ran yields, failed or not. This is its one definition; the binder (rule 2), the validator,
/// the expression checker and signatures all read it from here.
pub const OUTCOME: &str = "outcome";

/// The fields of [`OUTCOME`], in order, with their types: `ok: bool`, `error: str`,
/// `output: str`, `value: any`.
pub static OUTCOME_FIELDS: [(&str, Type); 4] = [
    ("ok", Type::Bool),
    ("error", Type::Str),
    ("output", Type::Str),
    ("value", Type::Any),
];

/// The fields (name and type) of the object type named `name`, given its declaration: a
/// declared `kind: object`, or the built-in [`OUTCOME`] when no type of that name is declared.
/// `None` for anything else.
pub fn object_fields<'a>(
    decl: Option<&'a TypeDecl>,
    name: &str,
) -> Option<Vec<(&'a str, Option<&'a Type>)>> {
    match decl {
        Some(decl) => match &decl.kind {
            TypeKind::Object(fields) => Some(
                fields
                    .iter()
                    .map(|f| (f.name.as_str(), f.ty.as_ref()))
                    .collect(),
            ),
            _ => None,
        },
        None if name == OUTCOME => {
            Some(OUTCOME_FIELDS.iter().map(|(n, t)| (*n, Some(t))).collect())
        }
        None => None,
    }
}

/// A type expression (§6.1): a primitive, a parameterized list or dict, or a declared name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `str`.
    Str,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `any`.
    Any,
    /// `path`: a program-controlled file path (a string at run time).
    Path,
    /// `list` (element type `None`) or `list[T]`.
    List(Option<Box<Type>>),
    /// `dict` (value type `None`) or `dict[str, V]`.
    Dict(Option<Box<Type>>),
    /// A declared enum or object, or the built-in object `outcome` — resolved by the validator.
    Named(String),
    /// Text that is not a type expression, kept as written and reported.
    Invalid(String),
}

impl Type {
    /// Parses a type expression: `str`, `int`, `float`, `bool`, `any`, `path`, `list`,
    /// `list[T]`, `dict`, `dict[str, V]`, or an identifier naming a declared type. Surrounding
    /// whitespace is ignored; anything else is [`Type::Invalid`].
    pub fn parse(text: &str) -> Type {
        let t = text.trim();
        match t {
            "str" => return Type::Str,
            "int" => return Type::Int,
            "float" => return Type::Float,
            "bool" => return Type::Bool,
            "any" => return Type::Any,
            "path" => return Type::Path,
            "list" => return Type::List(None),
            "dict" => return Type::Dict(None),
            _ => {}
        }
        if let Some(inner) = t.strip_prefix("list[").and_then(|r| r.strip_suffix(']')) {
            return match Type::parse(inner) {
                Type::Invalid(_) => Type::Invalid(t.to_owned()),
                elem => Type::List(Some(Box::new(elem))),
            };
        }
        if let Some(inner) = t.strip_prefix("dict[").and_then(|r| r.strip_suffix(']')) {
            if let Some((k, v)) = split_top_level_comma(inner)
                && k.trim() == "str"
            {
                return match Type::parse(v) {
                    Type::Invalid(_) => Type::Invalid(t.to_owned()),
                    val => Type::Dict(Some(Box::new(val))),
                };
            }
            return Type::Invalid(t.to_owned());
        }
        let mut chars = t.chars();
        let ident = matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_');
        if ident {
            Type::Named(t.to_owned())
        } else {
            Type::Invalid(t.to_owned())
        }
    }

    /// True for `list` and `list[T]`.
    pub fn is_list(&self) -> bool {
        matches!(self, Type::List(_))
    }
}

fn split_top_level_comma(s: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => return Some((&s[..i], &s[i + 1..])),
            _ => {}
        }
    }
    None
}

impl fmt::Display for Type {
    /// The canonical spelling, which [`Type::parse`] reads back to the same type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Str => f.write_str("str"),
            Type::Int => f.write_str("int"),
            Type::Float => f.write_str("float"),
            Type::Bool => f.write_str("bool"),
            Type::Any => f.write_str("any"),
            Type::Path => f.write_str("path"),
            Type::List(None) => f.write_str("list"),
            Type::List(Some(t)) => write!(f, "list[{t}]"),
            Type::Dict(None) => f.write_str("dict"),
            Type::Dict(Some(t)) => write!(f, "dict[str, {t}]"),
            Type::Named(n) | Type::Invalid(n) => f.write_str(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_and_print_back() {
        for text in [
            "str",
            "int",
            "float",
            "bool",
            "any",
            "path",
            "list",
            "list[str]",
            "dict",
            "dict[str, int]",
            "list[list[Op]]",
            "Args",
        ] {
            let ty = Type::parse(text);
            assert!(!matches!(ty, Type::Invalid(_)), "{text}");
            assert_eq!(ty.to_string(), text);
            assert_eq!(Type::parse(&ty.to_string()), ty);
        }
        assert_eq!(
            Type::parse(" list[ str ] "),
            Type::List(Some(Box::new(Type::Str)))
        );
        for bad in ["list[str", "dict[int, str]", "", "a b", "list[]"] {
            assert!(matches!(Type::parse(bad), Type::Invalid(_)), "{bad}");
        }
    }

    #[test]
    fn opcodes_are_spelled_exactly() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::parse(op.mnemonic()), op);
        }
        assert_eq!(Opcode::parse("gen-raw"), Opcode::Unknown("gen-raw".into()));
        assert_eq!(Opcode::GenRaw.fixed_owner(), Some(Owner::Model));
        assert_eq!(Opcode::Route.fixed_owner(), None);
    }

    #[test]
    fn tool_surfaces_accept_the_usual_spellings_of_act_artifact() {
        for s in [
            "ACT·artifact",
            "ACT artifact",
            "act-artifact",
            "ACT(artifact)",
            "ACT.artifact",
        ] {
            assert_eq!(ToolSurface::parse(s), ToolSurface::ActArtifact, "{s}");
        }
        assert_eq!(ToolSurface::parse("SENSE"), ToolSurface::Sense);
        assert_eq!(
            ToolSurface::parse("ACTION"),
            ToolSurface::Unknown("ACTION".into())
        );
    }
}

//! The syntax tree of the DSL: what was written, with the span of every token that a finding
//! may need to point at. Lowering ([`crate::lower`]) turns it into the core's
//! [`Program`](ais_core::Program).

use ais_core::Value;
use proc_macro2::{Span, TokenStream};
use syn::{Block, Ident, LitStr, Path, Type as RustType, Visibility};

/// A span range: the first and the last token of a construct. On stable Rust a proc macro
/// cannot join spans, so a diagnostic over several tokens is emitted from both ends.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    /// The first token.
    pub start: Span,
    /// The last token.
    pub end: Span,
}

impl Site {
    /// A site of one token.
    pub fn one(span: Span) -> Site {
        Site {
            start: span,
            end: span,
        }
    }

    /// A site from the first to the last token.
    pub fn range(start: Span, end: Span) -> Site {
        Site { start, end }
    }
}

/// A doc comment (`///` lines), joined into one text.
#[derive(Clone, Debug)]
pub struct Doc {
    /// The text: consecutive lines joined by a space, a blank line kept as a paragraph break.
    pub text: String,
    /// From the first `///` line to the last.
    pub site: Site,
}

/// A name as written, with its span.
#[derive(Clone, Debug)]
pub struct Name {
    /// The name.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

impl Name {
    /// The name of an identifier.
    pub fn from_ident(ident: &Ident) -> Name {
        Name {
            text: ident.to_string(),
            span: ident.span(),
        }
    }
}

/// A literal value (a default, a knowledge item's content).
#[derive(Clone, Debug)]
pub struct ValueLit {
    /// The value.
    pub value: Value,
    /// Where it was written.
    pub site: Site,
}

/// Everything inside one `ais! { ... }`: one or more programs.
#[derive(Clone, Debug)]
pub struct File {
    /// The programs, in the order written.
    pub programs: Vec<ProgramDef>,
}

/// `/// doc  #[attrs]  pub program Name (header) { items }`.
#[derive(Clone, Debug)]
pub struct ProgramDef {
    /// The doc comment: the frontmatter `description`.
    pub doc: Option<Doc>,
    /// The visibility of the generated type.
    pub vis: Visibility,
    /// The `program` keyword.
    pub program_span: Span,
    /// The program's Rust type name (also `walker.name`).
    pub ident: Ident,
    /// `name = "..."`: the frontmatter `name` (default: the type name in snake_case).
    pub name: Option<(String, Site)>,
    /// `shape = pipeline`.
    pub shape: Option<(String, Site)>,
    /// `standalone` / `standalone = false`.
    pub standalone: Option<(bool, Site)>,
    /// `agir_version = "0.1"`.
    pub agir_version: Option<(String, Site)>,
    /// `#[concurrency(spawn = none, reason = "...")]` on the program.
    pub concurrency: Option<ConcurrencyDef>,
    /// `carries { ... }`, in order (several blocks are concatenated).
    pub carries: Vec<CarryDef>,
    /// `enum` and `struct` declarations.
    pub types: Vec<TypeDef>,
    /// `knowledge` items.
    pub knowledge: Vec<KnowledgeDef>,
    /// `tool` declarations.
    pub tools: Vec<ToolDef>,
    /// `mcp_server` declarations.
    pub mcp_servers: Vec<McpServerDef>,
    /// `mcp_lock = "path"`: the lock file of the program's MCP tools, relative to the crate's
    /// manifest directory.
    pub mcp_lock: Option<(String, Site)>,
    /// Instructions, in program order (the first is the entry).
    pub instructions: Vec<InstrDef>,
    /// Edges, in the order written (a chain `a -> b -> c` gives two).
    pub edges: Vec<EdgeDef>,
    /// `obligation` declarations: the provenance record's obligations (spec §9.5).
    pub obligations: Vec<ObligationDef>,
    /// `source { path: "..", digest: ".." }`: the document the program was lifted from.
    pub source: Option<SourceDef>,
    /// `deviation { .. }` items: the provenance record's accepted deviations.
    pub deviations: Vec<DeviationDef>,
}

/// `source { path: "SKILL.md", digest: "sha256:.." }`: the document a program was lifted from
/// (the provenance record's `source`, spec §9.5).
#[derive(Clone, Debug)]
pub struct SourceDef {
    /// The `source` keyword.
    pub keyword: Span,
    /// `path: ".."`: relative to the program file.
    pub path: Option<(String, Site)>,
    /// `digest: "sha256:.."`: of the source's bytes at lift time.
    pub digest: Option<(String, Site)>,
}

/// `deviation { obligation: r_id, kind: dropped, element: "tool:paint", reason: ".." }`: a
/// deviation from the source accepted on purpose (spec §9.5).
#[derive(Clone, Debug)]
pub struct DeviationDef {
    /// The `deviation` keyword.
    pub keyword: Span,
    /// `obligation: r_id`: the obligation it concerns.
    pub obligation: Option<(String, Site)>,
    /// `kind: ..` (`dropped`, `added`, `remodalized`, `weakened`).
    pub kind: Option<(String, Site)>,
    /// `element: ".."`: the element it concerns, spelled as `realized_by` spells one.
    pub element: Option<(String, Site)>,
    /// `reason: ".."`: why it was accepted.
    pub reason: Option<(String, Site)>,
}

/// `obligation r_id { kind: step, force: mandatory, bearer: agent, quote: "..." }`: one
/// obligation of the source the program was lifted from (spec §9.5), which elements name with
/// `#[traces_to("r_id")]`.
#[derive(Clone, Debug)]
pub struct ObligationDef {
    /// The obligation's id.
    pub name: Name,
    /// `kind: ..` (`step`, `io`, `human_gate`, `knowledge`, `grounding`, `constraint`).
    pub kind: Option<(String, Site)>,
    /// `force: ..` (`mandatory`, `forbidden`, `discretionary`).
    pub force: Option<(String, Site)>,
    /// `bearer: ..` (`agent`, `user`, `environment`).
    pub bearer: Option<(String, Site)>,
    /// `quote: "..."`: the source's words, verbatim.
    pub quote: Option<(String, Site)>,
    /// `realized_by: [step, "tool:name"]`: the elements realizing it, as the lift recorded
    /// them (an instruction by its id, anything else as a string with its plane in front).
    pub realized_by: Option<(Vec<Name>, Site)>,
    /// The lift's notes on the obligation, in the order written: `at: "12:3"` (where the
    /// source states it), `force_from: ".."` (what its force was read from), `condition: ".."`
    /// (when it applies), `cohesion: adaptive` (one adaptive unit); see [`OBLIGATION_NOTES`].
    pub notes: Vec<(Name, ValueLit)>,
}

/// The notes an `obligation` item may carry beside its record fields, kept in the record as
/// the lift writes them.
pub const OBLIGATION_NOTES: &[&str] = &["at", "force_from", "condition", "cohesion"];

/// A carry type as the DSL spells it: the AIS type expression (`str`, `list[str]`, `Verdict`).
#[derive(Clone, Debug)]
pub struct TypeExpr {
    /// The type's text, as [`ais_core::Type::parse`] reads it.
    pub text: String,
    /// Where it was written.
    pub site: Site,
}

/// `/// doc  #[traces_to(..)]  name: type [= input | = input(default) | = default]`.
#[derive(Clone, Debug)]
pub struct CarryDef {
    /// The doc comment.
    pub doc: Option<Doc>,
    /// The carry's name.
    pub name: Name,
    /// Its type.
    pub ty: TypeExpr,
    /// `= input`: the `input` keyword's span.
    pub input: Option<Span>,
    /// `= value`: the default.
    pub default: Option<ValueLit>,
    /// `#[traces_to("...")]`.
    pub traces_to: Option<Vec<Name>>,
}

/// `enum Name { members }` or `struct Name { fields }`.
#[derive(Clone, Debug)]
pub struct TypeDef {
    /// The doc comment.
    pub doc: Option<Doc>,
    /// The type's name.
    pub name: Name,
    /// The `enum` or `struct` keyword.
    pub keyword: Span,
    /// Members or fields.
    pub body: TypeBody,
}

/// What a declared type holds.
#[derive(Clone, Debug)]
pub enum TypeBody {
    /// An enum's members, each with its doc.
    Enum(Vec<(Option<Doc>, Name)>),
    /// An object's fields.
    Object(Vec<FieldDef>),
}

/// `/// doc  name: type [= default]` inside a `struct`.
#[derive(Clone, Debug)]
pub struct FieldDef {
    /// The doc comment (normative for slots: it becomes the schema description).
    pub doc: Option<Doc>,
    /// The field's name.
    pub name: Name,
    /// Its type.
    pub ty: TypeExpr,
    /// Its default.
    pub default: Option<ValueLit>,
}

/// `#[resident_on(a, b)]  knowledge name [: kind] = value;`.
#[derive(Clone, Debug)]
pub struct KnowledgeDef {
    /// The item's name.
    pub name: Name,
    /// The `knowledge` keyword.
    pub keyword: Span,
    /// `#[resident_on(...)]`: the attribute's span and its entries.
    pub resident_on: Option<(Span, Vec<Name>)>,
    /// The content field (`template` unless written).
    pub kind: Option<Name>,
    /// The content.
    pub content: ValueLit,
    /// `#[traces_to("...")]`.
    pub traces_to: Option<Vec<Name>>,
}

/// A tool parameter: `name: RustType` (the type may be left out for a `command` tool).
#[derive(Clone, Debug)]
pub struct ParamDef {
    /// The parameter's name.
    pub name: Ident,
    /// Its Rust type.
    pub ty: Option<RustType>,
}

/// How a tool is implemented.
#[derive(Clone, Debug)]
pub enum ToolImpl {
    /// An inline Rust body: `tool f(x: &str) -> String { ... }`.
    Inline(Box<Block>),
    /// A Rust function defined elsewhere: `tool f(x: &str) -> String = crate::tools::f;`.
    Path(Path),
    /// A shell command: `tool f(x) = command "cmd {x}";`.
    Command(LitStr),
    /// A built-in library tool by name: `tool read_file;`.
    Builtin,
    /// A body in another language, run by the runtime: `tool count(path) -> String = python
    /// r#"def run(path): .."#;` (AG-IR `lang: python`, `body: ..`); with no language named
    /// (`= r#".."#;`) the AG-IR has no `lang`, which the runtime reads as Python.
    Script {
        /// The language (`python`, `sh`), when named.
        lang: Option<Ident>,
        /// The body.
        body: LitStr,
    },
    /// An MCP server's tool: `tool read = mcp(fs, "read_text_file");` (the server's tool name
    /// defaults to the tool's).
    Mcp {
        /// The `mcp_server` it is served by.
        server: Ident,
        /// The server's name for the tool, when it differs.
        tool: Option<LitStr>,
    },
}

/// `/// doc  mcp_server name { command: "..", args: [..], env: {"K": "v"}, cwd: "..", url: ".." }`.
#[derive(Clone, Debug)]
pub struct McpServerDef {
    /// The doc comment.
    pub doc: Option<Doc>,
    /// The server's name.
    pub name: Ident,
    /// `command: "npx"`.
    pub command: Option<LitStr>,
    /// `args: ["-y", ".."]`.
    pub args: Option<Vec<LitStr>>,
    /// `env: {"KEY": "value"}`.
    pub env: Option<Vec<(LitStr, LitStr)>>,
    /// `cwd: ".."`.
    pub cwd: Option<LitStr>,
    /// `url: "http://.."`.
    pub url: Option<LitStr>,
}

/// `/// doc  #[surface(..)] #[serves(..)] #[idempotent]  tool name(params) -> Ret impl`.
#[derive(Clone, Debug)]
pub struct ToolDef {
    /// The doc comment.
    pub doc: Option<Doc>,
    /// The `tool` keyword.
    pub keyword: Span,
    /// The tool's name.
    pub ident: Ident,
    /// `#[surface(ACT)]` / `#[surface(ACT, artifact)]` / `#[surface(SENSE)]`: text and site.
    pub surface: Option<(String, Site)>,
    /// `#[serves(a, b)]`.
    pub serves: Option<Vec<Name>>,
    /// `#[traces_to("...")]`.
    pub traces_to: Option<Vec<Name>>,
    /// `#[idempotent]`: running the tool twice has the effect of running it once, so a
    /// journaled run may retry it when it was in flight at a crash (AG-IR `idempotent: true`,
    /// a field the spec does not define, kept as unknown fields are).
    pub idempotent: Option<Span>,
    /// The parameters (none for a built-in written without them).
    pub params: Vec<ParamDef>,
    /// The parenthesized parameter list's span.
    pub params_span: Span,
    /// The Rust return type, if written.
    pub ret: Option<RustType>,
    /// The implementation.
    pub imp: ToolImpl,
    /// The tool's text from its name to its end, for embedding a Rust body (`fn ...`).
    pub tokens: TokenStream,
}

/// The opcode as written: `GEN-RAW` is three tokens.
#[derive(Clone, Debug)]
pub struct OpcodeTok {
    /// The mnemonic (`GEN-RAW`, `ROUTE`, or whatever was written).
    pub text: String,
    /// From its first token to its last.
    pub site: Site,
}

/// What follows an instruction's opcode in parentheses before its operands: `ACT(artifact)`,
/// `ROUTE(code)`.
#[derive(Clone, Debug)]
pub struct Modifier {
    /// The word.
    pub name: Name,
}

/// The target of a `CALL`: another program's type, or an `.agir` path.
#[derive(Clone, Debug)]
pub enum CallTarget {
    /// Another `ais!` program, by its Rust path.
    Program(Path),
    /// An `.agir` file, relative to the caller.
    File(LitStr),
}

/// `#[concurrency(isolation = private_write, spawn = ["a", "b"] | none, max_parallel = 4,
/// reason = "...")]`.
#[derive(Clone, Debug)]
pub struct ConcurrencyDef {
    /// The attribute's span.
    pub span: Span,
    /// `isolation = ...`.
    pub isolation: Option<Name>,
    /// `spawn = none`.
    pub spawn_none: Option<Span>,
    /// `spawn = ["a", "b"]`.
    pub spawn_list: Option<(Vec<String>, Site)>,
    /// `max_parallel = N`.
    pub max_parallel: Option<(i64, Span)>,
    /// `reason = "..."`.
    pub reason: Option<(String, Span)>,
}

/// `/// doc  #[attrs]  id: OPCODE[(mods)] [tool] (reads) [-> writes] [= body];`.
#[derive(Clone, Debug)]
pub struct InstrDef {
    /// The doc comment: the semantic operand.
    pub doc: Option<Doc>,
    /// The instruction's id.
    pub id: Name,
    /// The opcode.
    pub opcode: OpcodeTok,
    /// Modifiers: `code`/`model` (owner), `artifact`/`workspace` (ACT surface).
    pub modifiers: Vec<Modifier>,
    /// The tool it runs (DU), or nothing.
    pub tool: Option<Name>,
    /// A CALL's target.
    pub target: Option<(CallTarget, Site)>,
    /// The reads, in order.
    pub reads: Vec<Name>,
    /// The span of the reads' parentheses, when written.
    pub reads_span: Option<Span>,
    /// The writes, in order.
    pub writes: Vec<Name>,
    /// A CODE body in the expression language: `= expr`.
    pub body: Option<(TokenStream, Site)>,
    /// `#[output(Type)]`.
    pub output: Option<TypeExpr>,
    /// `#[autonomy(tool, ...)]`.
    pub autonomy: Option<(Span, Vec<Name>)>,
    /// `#[verdict(carry)]`.
    pub verdict: Option<Name>,
    /// `#[cap(N)]`.
    pub cap: Option<(i64, Span)>,
    /// `#[counter(carry)]`.
    pub counter: Option<Name>,
    /// `#[concurrency(...)]`.
    pub concurrency: Option<ConcurrencyDef>,
    /// `#[op(name)]`.
    pub op: Option<Name>,
    /// `#[traces_to("...")]`.
    pub traces_to: Option<Vec<Name>>,
    /// `#[model(tier)]`: the model tier that fills this slot.
    pub model: Option<Name>,
    /// `#[allow(unrouted_failure)]`: the DSL's warnings this instruction accepts (the
    /// attribute's span and the names it lists).
    pub allow: Option<(Span, Vec<Name>)>,
    /// Each attribute's name and the span of that name (`cap` in `#[cap(3)]`).
    pub attr_names: Vec<(String, Span)>,
    /// The terminating `;`.
    pub end: Span,
}

/// How an edge was written.
#[derive(Clone, Debug)]
pub enum EdgeKind {
    /// `a -> b;`: mandatory.
    Plain,
    /// `a -> b if guard;`: discretionary, guarded (the guard's tokens and the `if`).
    Guarded(TokenStream, Span),
    /// `a -> b else;`: the default edge of a branch (the `else`).
    Default(Span),
    /// `forbid a -> b;`: recorded, never taken (the `forbid`).
    Forbidden(Span),
}

/// One edge: `from -> to`, with its kind.
#[derive(Clone, Debug)]
pub struct EdgeDef {
    /// The source instruction.
    pub from: Name,
    /// The `->` token.
    pub arrow: Span,
    /// The target instruction.
    pub to: Name,
    /// Its modality and guard.
    pub kind: EdgeKind,
    /// `#[traces_to("...")]`.
    pub traces_to: Option<Vec<Name>>,
}

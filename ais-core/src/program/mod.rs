//! The program model: every section of an AIS module (spec §8.2) and every field of an
//! instruction (§3, §4), carry (§5.1), knowledge item (§5.2), edge (§5.3), tool (§5.4) and
//! declared type (§6).
//!
//! The model is plain data. It is what the AG-IR reader produces, what the writer prints, what
//! the `ais!` macro lowers to, and what the validator, the binder and the runtime consume.
//! Source positions are kept beside it in a [`SourceMap`](crate::source::SourceMap).
//! The conventions are documented on [`Program`].

mod elements;
mod instruction;
mod mcp;
mod provenance;
mod types;
mod writes;

pub use elements::*;
pub use instruction::*;
pub use mcp::*;
pub use provenance::*;
pub use types::*;
pub use writes::shape_of;

use crate::value::Value;

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
    /// `faithfulness`: the provenance record (§9.5): the source, its obligations and the
    /// accepted deviations ([`Provenance`]).
    pub faithfulness: Option<Provenance>,
    /// `mcp_servers`: the MCP servers the program's tools are bound to ([`McpServer`]).
    pub mcp_servers: Option<Vec<McpServer>>,
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

    /// The MCP servers (empty when `mcp_servers` is absent).
    pub fn mcp_server_list(&self) -> &[McpServer] {
        self.mcp_servers.as_deref().unwrap_or(&[])
    }

    /// The first declared type with this name, with its index.
    pub fn type_decl(&self, name: &str) -> Option<(usize, &TypeDecl)> {
        self.type_list()
            .iter()
            .enumerate()
            .find(|(_, t)| t.name == name)
    }

    /// Writes out what an absent field means, changing nothing a run or a check sees: the
    /// `agir_version` (0.1), the `types`, `knowledge`, `tools`, `nodes` and `edges` sections
    /// (empty), the owner of a fixed-owner opcode, and each edge's modality (discretionary
    /// with a guard, else mandatory). This is the form the `ais!` DSL lowers to, so a program
    /// made explicit can be written as `ais!` source whose `AGIR` is its AG-IR (what `ais
    /// lift` assembles for `--emit rust`).
    pub fn make_explicit(&mut self) {
        self.agir_version.get_or_insert_with(|| "0.1".to_owned());
        self.types.get_or_insert_with(Vec::new);
        self.knowledge.get_or_insert_with(Vec::new);
        self.tools.get_or_insert_with(Vec::new);
        for n in self.nodes.get_or_insert_with(Vec::new) {
            if n.owner.is_none() {
                n.owner = n.opcode.fixed_owner();
            }
        }
        for e in self.edges.get_or_insert_with(Vec::new) {
            if e.modality.is_none() {
                let guarded = e.guard.as_deref().is_some_and(|g| !g.trim().is_empty());
                e.modality = Some(if guarded {
                    Modality::Discretionary
                } else {
                    Modality::Mandatory
                });
            }
        }
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

//! The other named elements of a module: carries (§5.1), edges (§5.3), knowledge (§5.2) and
//! tools (§5.4).

use super::{Extras, McpBinding, Type};
use crate::value::Value;

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

spelled! {
    /// A carry's `role`.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Role {
        /// `input`: seeded from the invocation (§7.5).
        Input => "input",
    } else {
        /// Anything else, kept as written and reported.
        Unknown(String)
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

spelled! {
    /// An edge's modality (§5.3).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Modality {
        /// `mandatory`: fires by construction.
        Mandatory => "mandatory",
        /// `discretionary`: a guarded transition.
        Discretionary => "discretionary",
        /// `forbidden`: no transition may exist.
        Forbidden => "forbidden",
    } else {
        /// Anything else: reported, treated as `mandatory` (§12.2).
        Unknown(String)
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

spelled! {
    /// Which field holds a knowledge item's content (`ALL` is the order they are written in).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ContentKind {
        /// `template`.
        Template => "template",
        /// `pattern`.
        Pattern => "pattern",
        /// `body`.
        Body => "body",
        /// `value`.
        Value => "value",
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
    /// `mcp`: the MCP server tool that implements it ([`McpBinding`]).
    pub mcp: Option<McpBinding>,
    /// `traces_to`: provenance.
    pub traces_to: Option<Vec<String>>,
    /// Unknown fields.
    pub extra: Extras,
}

impl Tool {
    /// Whether only a Rust program can run this tool: its body is Rust (`lang: rust`) and it has
    /// no `command` or MCP server to run instead (see `check_native_tools`).
    pub fn is_native(&self) -> bool {
        self.lang.as_deref() == Some("rust") && self.command.is_none() && self.mcp.is_none()
    }
}

spelled! {
    /// A tool's `surface` (§5.4).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum ToolSurface {
        /// `SENSE`: reads.
        Sense => "SENSE",
        /// `ACT`: effects that stay in the workspace.
        Act => "ACT",
        /// `ACT·artifact`: writes that cross the user line.
        ActArtifact => "ACT·artifact",
    } else lenient {
        /// Anything else: reported, treated as `ACT·artifact` (§12.2).
        Unknown(String)
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

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

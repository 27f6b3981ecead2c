//! The required realization of an obligation (kind × force × bearer), and whether a program
//! has it.

use super::Auditor;
use super::text::{body_writes, mentions};
use crate::check::battery::{body_only_opens_a_document, is_prose_pointer};
use crate::check::index::ToolRef;
use crate::plan::builtins::{ASK_USER, BuiltinSurface, builtin};
use crate::program::{Bearer, Modality, ObligationKind, Opcode, Tool};

spelled! {
    /// The shape in which a program must realize an obligation (spec §9.5, the table on the
    /// [audit](crate::audit())).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Realization {
        /// A traced instruction on a path from the entry to `TERMINAL`.
        Instruction => "instruction",
        /// A traced `ACT` that writes the deliverable (or a traced step whose carry one writes).
        WrittenArtifact => "written_artifact",
        /// A code-owned decision on the human's answer.
        CodeGate => "code_gate",
        /// Content carried verbatim, resident where it is used.
        EmbodiedKnowledge => "embodied_knowledge",
        /// A tool consulted at run time.
        LiveTool => "live_tool",
        /// Folded onto the instruction(s) it governs; no transition performs a forbidden one.
        Constraint => "constraint",
        /// Discretionary: allowed, never required.
        Optional => "optional",
        /// Borne by the user or the environment: carried, not required of the agent.
        Carried => "carried",
    }
}

impl Realization {
    /// The realization an obligation of this kind, force and bearer requires; `None` for a
    /// kind or force spelled outside the schema.
    pub fn required(kind: &ObligationKind, force: &Modality, bearer: &Bearer) -> Option<Self> {
        use ObligationKind as K;
        if matches!(kind, K::Unknown(_)) || matches!(force, Modality::Unknown(_)) {
            return None;
        }
        if *force == Modality::Discretionary {
            return Some(Realization::Optional);
        }
        if *kind == K::Knowledge {
            return Some(Realization::EmbodiedKnowledge);
        }
        if !super::is_agent(bearer) {
            return Some(Realization::Carried);
        }
        if *force == Modality::Forbidden {
            return Some(Realization::Constraint);
        }
        Some(match kind {
            K::Step => Realization::Instruction,
            K::Io => Realization::WrittenArtifact,
            K::HumanGate => Realization::CodeGate,
            K::Grounding => Realization::LiveTool,
            _ => Realization::Constraint,
        })
    }

    /// True when the program must have it (not `optional`, not `carried`).
    pub fn is_required(self) -> bool {
        !matches!(self, Realization::Optional | Realization::Carried)
    }

    /// True for the shapes of a procedure (G10 counts these): an instruction, a written
    /// artifact, a code gate, a live tool.
    pub fn is_procedural(self) -> bool {
        matches!(
            self,
            Realization::Instruction
                | Realization::WrittenArtifact
                | Realization::CodeGate
                | Realization::LiveTool
        )
    }

    /// What to add to realize an obligation in this shape.
    pub(super) fn repair(self, id: &str) -> String {
        let what = match self {
            Realization::Instruction => {
                "add an instruction on the path from the entry to TERMINAL that performs it"
            }
            Realization::WrittenArtifact => {
                "add an `ACT` bound to a tool that writes the deliverable (a body that writes, a `command`, or `write_file`)"
            }
            Realization::CodeGate => {
                "ask with `ask_user` and decide on the answer in an `owner: code` ROUTE with explicit guards"
            }
            Realization::EmbodiedKnowledge => {
                "add a knowledge item holding the content verbatim, `resident_on` the instructions that use it"
            }
            Realization::LiveTool => {
                "add a tool that consults the source at run time (a SENSE: `http_get`, a `command`, an MCP tool)"
            }
            Realization::Constraint => {
                return format!(
                    "fold the rule into the `doc` of the instruction(s) it governs and add `{id}` to their `traces_to`"
                );
            }
            Realization::Optional | Realization::Carried => return String::new(),
        };
        format!("{what}, with `traces_to: [{id}]`")
    }
}

/// Whether, and by what, the program realizes obligation `id` in shape `shape`: `Ok(())`, or
/// why not (a clause for the message).
pub(super) fn realized(a: &Auditor, id: &str, shape: Realization) -> Result<(), String> {
    let t = a.traced(id);
    let nodes = a.ix.p.instructions();
    let working = || {
        t.nodes
            .iter()
            .copied()
            .filter(move |&i| nodes.get(i).is_some_and(|n| n.opcode != Opcode::Terminal))
    };
    match shape {
        Realization::Optional | Realization::Carried => Ok(()),
        Realization::Instruction => {
            if working().any(|i| a.on_path(i)) {
                Ok(())
            } else if let Some(i) = working().next() {
                Err(format!(
                    "`{}` traces to it but is not on a path from the entry to TERMINAL",
                    nodes[i].id
                ))
            } else {
                Err("no instruction traces to it".into())
            }
        }
        Realization::Constraint => {
            if working().next().is_some() {
                Ok(())
            } else {
                Err("no instruction traces to it, so no slot is governed by it".into())
            }
        }
        Realization::WrittenArtifact => {
            let written = working().any(|i| {
                (writes_artifact(a, i) && a.on_path(i))
                    || nodes[i].writes.iter().any(|w| {
                        a.ix.readers.get(w.as_str()).is_some_and(|rs| {
                            rs.iter().any(|&r| writes_artifact(a, r) && a.on_path(r))
                        })
                    })
            });
            if written {
                Ok(())
            } else if working().next().is_none() {
                Err("no instruction traces to it".into())
            } else {
                Err("no `ACT` that writes a file realizes it: what traces to it computes or reports, and nothing writes the deliverable".into())
            }
        }
        Realization::CodeGate => {
            if working().any(|i| is_code_gate(a, i)) {
                Ok(())
            } else if working().next().is_none() {
                Err("no instruction traces to it".into())
            } else {
                Err("what traces to it leaves the decision to a model: no `owner: code` ROUTE decides on the human's answer".into())
            }
        }
        Realization::EmbodiedKnowledge => embodied_knowledge(a, t),
        Realization::LiveTool => {
            let tool = t.tools.iter().any(|&k| {
                a.ix.tool_at(k)
                    .is_some_and(|tl| runnable(tl) || builtin(&tl.name).is_some())
            });
            let sense = working().any(|i| nodes[i].opcode == Opcode::Sense);
            if tool || sense {
                Ok(())
            } else {
                Err("no tool and no SENSE traces to it: the live source is never consulted".into())
            }
        }
    }
}

/// True when a declared tool has something to run: a body, a command or an MCP binding.
pub(super) fn runnable(t: &Tool) -> bool {
    t.body.as_deref().is_some_and(|b| !b.trim().is_empty())
        || t.command.as_deref().is_some_and(|c| !c.trim().is_empty())
        || t.mcp.is_some()
}

/// True when a tool writes a file: a body that writes, an (opaque) command or MCP tool, or the
/// built-in `write_file` / `run_command`.
fn tool_writes(t: &Tool) -> bool {
    if t.command.is_some() || t.mcp.is_some() {
        return true;
    }
    match t.body.as_deref() {
        Some(b) if !b.trim().is_empty() => body_writes(b),
        _ => builtin(&t.name).is_some_and(|b| b.surface == BuiltinSurface::ActArtifact),
    }
}

/// True when instruction `i` is an `ACT` that writes a file: a tool of its pipeline writes, or
/// (a model-owned ACT) a writing tool is among its `autonomy.tools`.
pub(super) fn writes_artifact(a: &Auditor, i: usize) -> bool {
    let Some(n) = a.ix.node(i) else { return false };
    if n.opcode != Opcode::Act {
        return false;
    }
    let by_name = |name: &str| match a.ix.tool_index(name).and_then(|t| a.ix.tool_at(t)) {
        Some(t) => tool_writes(t),
        None => builtin(name).is_some_and(|b| b.surface == BuiltinSurface::ActArtifact),
    };
    let pipeline = a.ix.binding.get(i).into_iter().flat_map(|b| &b.pipeline);
    let piped = pipeline.clone().any(|r| match r {
        ToolRef::Declared(t) => a.ix.tool_at(*t).is_some_and(tool_writes),
        ToolRef::Builtin(b) => b.surface == BuiltinSurface::ActArtifact,
    });
    piped
        || n.autonomy
            .as_ref()
            .is_some_and(|au| au.tools.iter().any(|t| by_name(t)))
}

/// True when instruction `i` is a code-owned ROUTE, or asks the user (`ask_user`) and a
/// code-owned ROUTE's guard tests what it writes.
fn is_code_gate(a: &Auditor, i: usize) -> bool {
    let nodes = a.ix.p.instructions();
    let n = &nodes[i];
    if n.opcode == Opcode::Route && n.is_du() {
        return true;
    }
    let asks = a.ix.binding.get(i).is_some_and(|b| {
        b.pipeline.iter().any(|r| match r {
            ToolRef::Declared(t) => a.ix.tool_at(*t).is_some_and(|t| t.name == ASK_USER),
            ToolRef::Builtin(b) => b.name == ASK_USER,
        })
    });
    asks && nodes.iter().enumerate().any(|(r, route)| {
        route.opcode == Opcode::Route
            && route.is_du()
            && a.ix.out.get(r).into_iter().flatten().any(|&e| {
                a.ix.p.edge_list()[e]
                    .guard
                    .as_deref()
                    .is_some_and(|g| n.writes.iter().any(|w| mentions(g, w)))
            })
    })
}

/// Knowledge carried verbatim: a traced knowledge item with content that is not a pointer,
/// resident on an instruction; or a traced tool whose body does more than open a document.
fn embodied_knowledge(a: &Auditor, t: &super::Traces) -> Result<(), String> {
    let p = a.ix.p;
    let mut unresident = None;
    for &k in &t.knowledge {
        let item = &p.knowledge_list()[k];
        let Some(text) = item.text() else { continue };
        if text.trim().is_empty() || is_prose_pointer(&text) {
            continue;
        }
        if item.resident_on.is_empty() {
            unresident = Some(item.name.clone());
            continue;
        }
        return Ok(());
    }
    for &k in &t.tools {
        let tool = &p.tool_list()[k];
        let body = tool.body.as_deref().unwrap_or_default();
        let command = tool.command.as_deref().unwrap_or_default();
        if !command.trim().is_empty()
            || (!body.trim().is_empty() && !body_only_opens_a_document(body))
        {
            return Ok(());
        }
    }
    if let Some(name) = unresident {
        return Err(format!(
            "knowledge `{name}` carries it but is resident on no instruction, so no slot sees it"
        ));
    }
    if !t.tools.is_empty() {
        return Err("the tool tracing to it only opens a document: it points at the content instead of carrying it".into());
    }
    if !t.knowledge.is_empty() {
        return Err(
            "the knowledge tracing to it has no content of its own (empty, or a pointer)".into(),
        );
    }
    Err("no knowledge item or tool carries its content".into())
}

//! A program as a picture (`ais graph`): its control graph as Mermaid, Graphviz DOT or SVG.
//!
//! [`Graph::new`] builds one view of a program that the three writers share: each instruction
//! with its id, opcode and owner (code- and model-owned steps are drawn apart: rectangles and
//! blue for code, rounded and violet for a model), every edge with its guard and modality, a
//! `forbidden` edge as a struck-out transition, a LOOP's back edges with its cap, a SPAWN's
//! worker and a CALL's target program nested under the instruction, and — when findings are
//! given — the instructions they are about. An `ais!` program's `AGIR` text goes through the
//! same [`Graph::from_agir`] as a `.agir` file.
//!
//! Everything from the program is text to the writers, never markup: the Mermaid writer
//! writes labels as entity-escaped quoted strings, the DOT writer as escaped quoted strings,
//! and the SVG writer (over layout-rs) escapes every label and writes no program text into an
//! attribute.

mod dot;
mod mermaid;
mod svg;

use ais_core::{Finding, Modality, Opcode, Owner, Program};

/// The unit that runs an instruction, as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// The Deterministic Unit (code).
    Code,
    /// The Stochastic Unit (a model).
    Model,
}

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An instruction of the program drawn.
    Instruction,
    /// A SPAWN's worker: what each sibling runs.
    Worker,
    /// An instruction of a CALL's target program.
    Callee,
}

/// One box of the picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The instruction's id (a worker's: `worker`).
    pub id: String,
    /// Its opcode as spelled (a worker's: what it runs).
    pub opcode: String,
    /// The unit that runs it.
    pub unit: Unit,
    /// What it stands for.
    pub kind: NodeKind,
    /// The ids of the findings about it (with `--check`), in order, each once.
    pub findings: Vec<String>,
    /// The nested body it belongs to, an index into [`Graph::clusters`].
    pub cluster: Option<usize>,
}

/// What an edge is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// A transition (guarded or default).
    Transition,
    /// A `forbidden` edge: no transition may take it.
    Forbidden,
    /// A LOOP's back edge, with the LOOP's cap (`None`: none declared; the runtime imposes
    /// one).
    LoopBack(Option<i64>),
    /// From an instruction to its nested body (a SPAWN's worker, a CALL's target's entry).
    Nested,
}

/// One arrow of the picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The source node (an index into [`Graph::nodes`]).
    pub from: usize,
    /// The target node.
    pub to: usize,
    /// What it is.
    pub kind: EdgeKind,
    /// Its guard, as written.
    pub guard: Option<String>,
    /// Its modality, as spelled.
    pub modality: Option<String>,
}

impl Edge {
    /// The label drawn on the edge: the guard, the modality, the LOOP cap.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        match &self.guard {
            Some(g) if ais_core::expr::is_sentinel(g) => parts.push(g.trim().to_owned()),
            Some(g) => parts.push(format!("if {g}")),
            None => {}
        }
        match &self.kind {
            EdgeKind::Forbidden => parts.push("forbidden".into()),
            EdgeKind::LoopBack(cap) => parts.push(match cap {
                Some(c) => format!("back, cap {c}"),
                None => "back, no cap".into(),
            }),
            EdgeKind::Nested => parts.push("runs".into()),
            EdgeKind::Transition => {
                if let Some(m) = &self.modality {
                    parts.push(m.clone());
                }
            }
        }
        parts.join(" · ")
    }
}

/// A nested body: a SPAWN's worker or a CALL's target program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Its title (`SPAWN review: one sibling per element of files`, `CALL changelog:
    /// DraftChangelog`).
    pub title: String,
    /// The instruction it is nested under.
    pub owner: usize,
}

/// The picture of a program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    /// The program's name, when it has one.
    pub name: Option<String>,
    /// The boxes: the program's instructions first, in program order (node `i` is
    /// `nodes[i]` of the program), then the nested ones.
    pub nodes: Vec<Node>,
    /// The arrows, in edge order, then the nested ones.
    pub edges: Vec<Edge>,
    /// The nested bodies.
    pub clusters: Vec<Cluster>,
}

/// Finds a CALL's target program by name, as the runtime does; `None` when it cannot.
pub type Targets<'a> = dyn FnMut(&str) -> Option<Program> + 'a;

impl Graph {
    /// The picture of the AG-IR `text` (a `.agir` file, or an `ais!` program's `AGIR`), with
    /// the instructions `findings` are about marked.
    pub fn from_agir(
        text: &str,
        findings: &[Finding],
        targets: &mut Targets<'_>,
    ) -> Result<Graph, ais_core::agir::ReadError> {
        let doc = ais_core::agir::read(text)?;
        Ok(Graph::new(&doc.program, findings, targets))
    }

    /// The picture of `program`, with the instructions `findings` are about marked; a CALL's
    /// target is drawn nested when `targets` finds it.
    pub fn new(program: &Program, findings: &[Finding], targets: &mut Targets<'_>) -> Graph {
        let mut g = Graph {
            name: program
                .walker
                .as_ref()
                .and_then(|w| w.name.clone())
                .or_else(|| program.name.clone()),
            ..Graph::default()
        };
        let base = g.add_program(program, None, NodeKind::Instruction);
        for f in findings {
            let Some(id) = &f.instruction else { continue };
            let Some(node) = g.nodes[..base.len()].iter_mut().find(|n| &n.id == id) else {
                continue;
            };
            let code = f.id.to_string();
            if !node.findings.contains(&code) {
                node.findings.push(code);
            }
        }
        g.nest(program, &base, targets);
        g
    }

    /// Adds a program's instructions and edges in `cluster`; returns the node of each
    /// instruction.
    fn add_program(&mut self, p: &Program, cluster: Option<usize>, kind: NodeKind) -> Vec<usize> {
        let nodes: Vec<usize> = p
            .instructions()
            .iter()
            .map(|n| {
                self.nodes.push(Node {
                    id: n.id.clone(),
                    opcode: n.opcode.as_str().to_owned(),
                    unit: match n.effective_owner() {
                        Some(Owner::Model) => Unit::Model,
                        _ if n.is_du() => Unit::Code,
                        _ => Unit::Model,
                    },
                    kind: kind.clone(),
                    findings: Vec::new(),
                    cluster,
                });
                self.nodes.len() - 1
            })
            .collect();
        let by_id = |id: &str| p.instructions().iter().position(|n| n.id == id);
        let back: Vec<usize> = ais_core::plan::lower(p)
            .map(|plan| {
                plan.steps
                    .iter()
                    .filter_map(|s| s.looping.as_ref())
                    .flat_map(|l| l.back.clone())
                    .collect()
            })
            .unwrap_or_default();
        for (e, edge) in p.edge_list().iter().enumerate() {
            let (Some(f), Some(t)) = (by_id(&edge.from), by_id(&edge.to)) else {
                continue;
            };
            let kind = if edge.modality == Some(Modality::Forbidden) {
                EdgeKind::Forbidden
            } else if back.contains(&e) {
                EdgeKind::LoopBack(p.instructions()[f].cap)
            } else {
                EdgeKind::Transition
            };
            self.edges.push(Edge {
                from: nodes[f],
                to: nodes[t],
                kind,
                guard: edge.guard.clone(),
                modality: edge.modality.as_ref().map(|m| m.as_str().to_owned()),
            });
        }
        nodes
    }

    /// Nests each SPAWN's worker and each CALL's target (one level: a target's own CALLs are
    /// drawn, not opened).
    fn nest(&mut self, p: &Program, nodes: &[usize], targets: &mut Targets<'_>) {
        for (i, n) in p.instructions().iter().enumerate() {
            match n.opcode {
                Opcode::Spawn => {
                    let source = n
                        .reads
                        .iter()
                        .find(|r| {
                            matches!(
                                p.carry(r).and_then(|(_, c)| c.ty.as_ref()),
                                Some(ais_core::Type::List(_))
                            )
                        })
                        .map(|r| format!("one sibling per element of {r}"))
                        .or_else(
                            || match n.concurrency.as_ref().and_then(|c| c.spawn.as_ref()) {
                                Some(ais_core::SpawnSource::List(items)) => {
                                    Some(format!("{} siblings", items.len()))
                                }
                                _ => None,
                            },
                        )
                        .unwrap_or_else(|| "one sibling over the task".into());
                    let tools: Vec<String> = ais_core::bind::ProgramIndex::new(p)
                        .bound_tools(n)
                        .iter()
                        .map(|t| t.name.clone())
                        .collect();
                    let (what, unit) = if tools.is_empty() {
                        ("a slot per sibling".to_owned(), Unit::Model)
                    } else {
                        (format!("tools: {}", tools.join(", ")), Unit::Code)
                    };
                    self.clusters.push(Cluster {
                        title: format!("SPAWN {}: {source}", n.id),
                        owner: nodes[i],
                    });
                    let c = self.clusters.len() - 1;
                    self.nodes.push(Node {
                        id: "worker".into(),
                        opcode: what,
                        unit,
                        kind: NodeKind::Worker,
                        findings: Vec::new(),
                        cluster: Some(c),
                    });
                    self.nested(nodes[i], self.nodes.len() - 1);
                }
                Opcode::Call => {
                    let Some(target) = &n.target else { continue };
                    let Some(callee) = targets(target) else {
                        continue;
                    };
                    self.clusters.push(Cluster {
                        title: format!("CALL {}: {target}", n.id),
                        owner: nodes[i],
                    });
                    let c = self.clusters.len() - 1;
                    let inner = self.add_program(&callee, Some(c), NodeKind::Callee);
                    if let Some(&entry) = inner.first() {
                        self.nested(nodes[i], entry);
                    }
                }
                _ => {}
            }
        }
    }

    fn nested(&mut self, from: usize, to: usize) {
        self.edges.push(Edge {
            from,
            to,
            kind: EdgeKind::Nested,
            guard: None,
            modality: None,
        });
    }

    /// The nodes of cluster `c`.
    pub fn members(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(move |&n| self.nodes[n].cluster == Some(c))
    }

    /// Mermaid `flowchart` text.
    pub fn mermaid(&self) -> String {
        mermaid::write(self)
    }

    /// Graphviz DOT text.
    pub fn dot(&self) -> String {
        dot::write(self)
    }

    /// A standalone SVG document, laid out in Rust (layout-rs): no external program. Refused
    /// past [`MAX_SVG_NODES`] nodes (the layered layout's time grows faster than the square of
    /// the size): the error says so and names the Mermaid and DOT writers, which have no limit.
    pub fn svg(&self) -> Result<String, TooLarge> {
        self.svg_highlighted(&[])
    }

    /// The SVG with the nodes `taken` marks (one flag per node; missing ones are not) drawn as
    /// the path a run took; refused as [`Graph::svg`] is.
    pub fn svg_highlighted(&self, taken: &[bool]) -> Result<String, TooLarge> {
        if self.nodes.len() > MAX_SVG_NODES {
            return Err(TooLarge {
                nodes: self.nodes.len(),
            });
        }
        Ok(svg::write(self, taken))
    }

    /// The SVG laid out whatever the graph's size: [`Graph::svg`] without its limit, for a
    /// caller that accepts the wait (past [`MAX_SVG_NODES`] it grows to minutes; the graph
    /// benchmark measures it).
    pub fn svg_unbounded(&self) -> String {
        svg::write(self, &[])
    }
}

/// The most nodes [`Graph::svg`] lays out: 0.84 s for 800 on a loaded 2-core machine
/// (`cargo bench --bench graph`, measured with `ais` and layout-rs at opt-level 3); 500 take
/// 0.21 s, 1,000 take 1.7 s and 2,000 take 12.7 s (the time grows with about the cube of the
/// nodes, so 4,000 would take minutes).
pub const MAX_SVG_NODES: usize = 800;

/// A graph too large for the SVG layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The graph's nodes.
    pub nodes: usize,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the graph has {} nodes, more than the {MAX_SVG_NODES} the SVG layout draws in \
             bounded time; write it as Mermaid (`--format mermaid`) or DOT (`--format dot`, \
             then `dot -Tsvg`), which have no limit",
            self.nodes
        )
    }
}

impl std::error::Error for TooLarge {}

#[cfg(test)]
mod tests;

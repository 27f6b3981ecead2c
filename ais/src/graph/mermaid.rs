//! The Mermaid writer: a `flowchart TD` with a class per unit, one `subgraph` per nested
//! body, and every label an entity-escaped quoted string.

use super::{EdgeKind, Graph, Node, NodeKind, Unit};
use std::fmt::Write;

/// Text as a Mermaid quoted label: the characters Mermaid would read as syntax, markup or a
/// directive (`%%{init}%%`) written as its `#code;` entities.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '&' => out.push_str("#amp;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            // `%%{init: …}%%` is a directive wherever Mermaid finds it, inside a quoted label
            // too: with `%`, `{` and `}` written as entities, no directive survives.
            '%' => out.push_str("#37;"),
            '{' => out.push_str("#123;"),
            '}' => out.push_str("#125;"),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn node_line(out: &mut String, i: usize, n: &Node, indent: &str) {
    let mut label = format!("{}<br/>{}", escape(&n.id), escape(&n.opcode));
    if !n.findings.is_empty() {
        let _ = write!(label, "<br/>⚠ {}", escape(&n.findings.join(", ")));
    }
    let (open, close) = match (n.opcode.as_str(), n.unit) {
        ("TERMINAL", _) => ("((", "))"),
        ("ROUTE", _) => ("{", "}"),
        ("LOOP", _) => ("{{", "}}"),
        (_, Unit::Model) => ("([", "])"),
        (_, Unit::Code) => ("[", "]"),
    };
    let _ = writeln!(out, "{indent}n{i}{open}\"{label}\"{close}");
}

/// The flowchart.
pub(super) fn write(g: &Graph) -> String {
    let mut out = String::from("flowchart TD\n");
    if let Some(name) = &g.name {
        let _ = writeln!(out, "  %% program: {}", escape(name));
    }
    for (i, n) in g.nodes.iter().enumerate() {
        if n.cluster.is_none() {
            node_line(&mut out, i, n, "  ");
        }
    }
    for (c, cluster) in g.clusters.iter().enumerate() {
        let _ = writeln!(out, "  subgraph c{c}[\"{}\"]", escape(&cluster.title));
        for m in g.members(c) {
            node_line(&mut out, m, &g.nodes[m], "    ");
        }
        out.push_str("  end\n");
    }
    let mut forbidden = Vec::new();
    for (k, e) in g.edges.iter().enumerate() {
        let arrow = match e.kind {
            EdgeKind::Transition => "-->",
            EdgeKind::Forbidden => {
                forbidden.push(k.to_string());
                "--x"
            }
            EdgeKind::LoopBack(_) => "==>",
            EdgeKind::Nested => "-.->",
        };
        let label = e.label();
        if label.is_empty() {
            let _ = writeln!(out, "  n{} {arrow} n{}", e.from, e.to);
        } else {
            let _ = writeln!(
                out,
                "  n{} {arrow}|\"{}\"| n{}",
                e.from,
                escape(&label),
                e.to
            );
        }
    }
    out.push_str("  classDef code fill:#e0f2fe,stroke:#0369a1,color:#0c4a6e\n");
    out.push_str("  classDef model fill:#f3e8ff,stroke:#7c3aed,color:#3b0764\n");
    out.push_str("  classDef finding stroke:#dc2626,stroke-width:3px\n");
    for (class, pick) in [("code", Unit::Code), ("model", Unit::Model)] {
        let ids: Vec<String> = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.unit == pick)
            .map(|(i, _)| format!("n{i}"))
            .collect();
        if !ids.is_empty() {
            let _ = writeln!(out, "  class {} {class}", ids.join(","));
        }
    }
    let flagged: Vec<String> = g
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.findings.is_empty() && n.kind == NodeKind::Instruction)
        .map(|(i, _)| format!("n{i}"))
        .collect();
    if !flagged.is_empty() {
        let _ = writeln!(out, "  class {} finding", flagged.join(","));
    }
    if !forbidden.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#dc2626,stroke-dasharray:4 3",
            forbidden.join(",")
        );
    }
    out
}

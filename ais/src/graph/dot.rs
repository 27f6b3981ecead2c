//! The Graphviz DOT writer: boxes for code, rounded violet boxes for a model, a `cluster`
//! subgraph per nested body, and every label an escaped quoted string.

use super::{EdgeKind, Graph, Node, Unit};
use std::fmt::Write;

/// Text as a DOT quoted string's content: `"` and `\` escaped, line breaks as `\n`.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn node_line(out: &mut String, i: usize, n: &Node, indent: &str) {
    let mut label = format!("{}\\n{}", escape(&n.id), escape(&n.opcode));
    if !n.findings.is_empty() {
        let _ = write!(label, "\\n⚠ {}", escape(&n.findings.join(", ")));
    }
    let shape = match n.opcode.as_str() {
        "TERMINAL" => "doublecircle",
        "ROUTE" => "diamond",
        "LOOP" => "hexagon",
        _ => "box",
    };
    let (style, fill, line) = match n.unit {
        Unit::Code => ("filled", "#e0f2fe", "#0369a1"),
        Unit::Model => ("rounded,filled", "#f3e8ff", "#7c3aed"),
    };
    let (line, width) = if n.findings.is_empty() {
        (line, 1)
    } else {
        ("#dc2626", 3)
    };
    let _ = writeln!(
        out,
        "{indent}n{i} [label=\"{label}\", shape={shape}, style=\"{style}\", fillcolor=\"{fill}\", color=\"{line}\", penwidth={width}];"
    );
}

/// The digraph.
pub(super) fn write(g: &Graph) -> String {
    let name = g.name.as_deref().unwrap_or("program");
    let mut out = format!("digraph \"{}\" {{\n", escape(name));
    out.push_str("  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for (i, n) in g.nodes.iter().enumerate() {
        if n.cluster.is_none() {
            node_line(&mut out, i, n, "  ");
        }
    }
    for (c, cluster) in g.clusters.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{c} {{");
        let _ = writeln!(
            out,
            "    label=\"{}\";\n    style=dashed;\n    color=\"#64748b\";",
            escape(&cluster.title)
        );
        for m in g.members(c) {
            node_line(&mut out, m, &g.nodes[m], "    ");
        }
        out.push_str("  }\n");
    }
    for e in &g.edges {
        let style = match e.kind {
            EdgeKind::Transition => "",
            EdgeKind::Forbidden => ", style=dashed, color=\"#dc2626\", arrowhead=tee",
            EdgeKind::LoopBack(_) => ", style=bold, color=\"#b45309\", constraint=false",
            EdgeKind::Nested => ", style=dotted, color=\"#64748b\"",
        };
        let _ = writeln!(
            out,
            "  n{} -> n{} [label=\"{}\"{style}];",
            e.from,
            e.to,
            escape(&e.label())
        );
    }
    out.push_str("}\n");
    out
}

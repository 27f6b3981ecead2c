//! The SVG writer, laid out by layout-rs (a Rust implementation of Graphviz's layered layout;
//! no external program). layout-rs draws no clusters, so a nested body's boxes carry their
//! body's title on a first line and hang from their instruction by a dotted arrow.
//!
//! Every label is escaped by layout-rs's writer; the only attributes written here are fixed
//! class names and node numbers, never program text.

use super::{EdgeKind, Graph, Unit};
use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::render::get_shape_size;
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

/// The longest label line drawn, in characters; longer text is cut with `…`.
const MAX_LINE: usize = 48;

fn clip(text: &str) -> String {
    let line: String = text.chars().filter(|c| !c.is_control()).collect();
    if line.chars().count() > MAX_LINE {
        let mut cut: String = line.chars().take(MAX_LINE - 1).collect();
        cut.push('…');
        cut
    } else {
        line
    }
}

/// The document; `taken[i]` marks node `i` as on a run's path.
pub(super) fn write(g: &Graph, taken: &[bool]) -> String {
    let dir = Orientation::TopToBottom;
    let mut vg = VisualGraph::new(dir);
    let mut handles = Vec::with_capacity(g.nodes.len());
    for (i, n) in g.nodes.iter().enumerate() {
        let mut lines = Vec::new();
        if let Some(c) = n.cluster {
            lines.push(clip(&g.clusters[c].title));
        }
        lines.push(clip(&n.id));
        lines.push(clip(&n.opcode));
        if !n.findings.is_empty() {
            lines.push(clip(&format!("⚠ {}", n.findings.join(", "))));
        }
        let on_path = taken.get(i).copied().unwrap_or(false);
        let (fill, line, rounded) = match n.unit {
            Unit::Code => (0xe0f2_feff, 0x0369_a1ff, 0),
            Unit::Model => (0xf3e8_ffff, 0x7c3a_edff, 14),
        };
        let marking = taken.iter().any(|t| *t);
        let (fill, line, width) = match (on_path, n.findings.is_empty()) {
            (true, _) => (fill, 0xb453_09ff, 4),
            (false, false) => (fill, 0xdc26_26ff, 3),
            // A run's path is drawn: what it did not take fades.
            (false, true) if marking => (0xf8fa_fcff, 0x94a3_b8ff, 1),
            (false, true) => (fill, line, 1),
        };
        let shape = ShapeKind::new_box(&lines.join("\n"));
        let size = get_shape_size(dir.flip(), &shape, 13, false);
        let look = StyleAttr::new(Color::new(line), width, Some(Color::new(fill)), rounded, 13);
        let unit = match n.unit {
            Unit::Code => "code",
            Unit::Model => "model",
        };
        let class = if on_path { " taken" } else { "" };
        let props = format!("class=\"node {unit}{class}\" data-node=\"{i}\"");
        handles.push(vg.add_node(Element::create_with_properties(
            shape,
            look,
            dir.flip(),
            size,
            props,
        )));
    }
    for e in &g.edges {
        let (color, style, width) = match e.kind {
            EdgeKind::Transition => (0x3341_55ff, LineStyleKind::Normal, 1),
            EdgeKind::Forbidden => (0xdc26_26ff, LineStyleKind::Dashed, 1),
            EdgeKind::LoopBack(_) => (0xb453_09ff, LineStyleKind::Normal, 3),
            EdgeKind::Nested => (0x64_748bff, LineStyleKind::Dotted, 1),
        };
        let end = match e.kind {
            EdgeKind::Forbidden => LineEndKind::None,
            _ => LineEndKind::Arrow,
        };
        let look = StyleAttr::new(Color::new(color), width, None, 0, 11);
        let arrow = Arrow::new(
            LineEndKind::None,
            end,
            style,
            &clip(&e.label()),
            &look,
            &None,
            &None,
        );
        vg.add_edge(arrow, handles[e.from], handles[e.to]);
    }
    let mut svg = SVGWriter::new();
    if g.nodes.is_empty() {
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"240\" height=\"40\"><text x=\"8\" y=\"24\">(a program with no instructions)</text></svg>\n".into();
    }
    vg.do_it(false, false, false, &mut svg);
    stable_styles(svg.finalize())
}

/// layout-rs writes its font classes in hash order; sorted, the same graph is the same bytes.
fn stable_styles(svg: String) -> String {
    let (Some(start), Some(end)) = (svg.find("<style>\n"), svg.find("</style>")) else {
        return svg;
    };
    let body = start + "<style>\n".len();
    if end < body {
        return svg;
    }
    let mut lines: Vec<&str> = svg[body..end].lines().collect();
    lines.sort_unstable();
    let mut out = String::with_capacity(svg.len());
    out.push_str(&svg[..body]);
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&svg[end..]);
    out
}

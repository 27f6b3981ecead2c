//! The writers on hostile names: nothing a program says becomes markup or syntax.

use super::*;

const HOSTILE: &str = r#"---
name: hostile
description: Names that try to break out.
---
walker:
  carries:
    task: {type: str, role: input}
    n: {type: int, produced_by: "a\"]; evil[\"x"}
nodes:
  - {id: "a\"]; evil[\"x", type: CODE, owner: code, reads: [task], writes: [n], body: "len(task)"}
  - {id: "</text><script>alert(1)</script>", type: GEN-RAW, owner: model, reads: [task], writes: [task], doc: "x"}
  - {id: "b|c#d", type: TERMINAL, owner: code, reads: [n]}
edges:
  - {from: "a\"]; evil[\"x", to: "</text><script>alert(1)</script>", guard: "n > 3 and n < 9"}
  - {from: "a\"]; evil[\"x", to: "b|c#d"}
  - {from: "</text><script>alert(1)</script>", to: "b|c#d", modality: forbidden}
"#;

fn hostile() -> Graph {
    Graph::from_agir(HOSTILE, &[], &mut |_| None).expect("reads")
}

#[test]
fn mermaid_labels_cannot_close_their_quotes_or_inject_markup() {
    let m = hostile().mermaid();
    assert!(m.contains("n0[\"a#quot;]; evil[#quot;x<br/>CODE\"]"), "{m}");
    assert!(m.contains("#lt;/text#gt;#lt;script#gt;"), "{m}");
    assert!(m.contains("n2((\"b#124;c#35;d<br/>TERMINAL\"))"), "{m}");
    assert!(m.contains("n0 -->|\"if n #gt; 3 and n #lt; 9\"| n1"), "{m}");
    assert!(m.contains("n1 --x|\"forbidden\"| n2"), "{m}");
    assert!(!m.contains("<script"), "{m}");
}

#[test]
fn dot_labels_are_escaped_strings() {
    let d = hostile().dot();
    assert!(d.contains("n0 [label=\"a\\\"]; evil[\\\"x\\nCODE\""), "{d}");
    assert!(d.contains("arrowhead=tee"), "{d}");
}

#[test]
fn the_svg_is_well_formed_and_carries_no_program_markup() {
    let svg = hostile().svg().expect("small");
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(
        !doc.descendants().any(|n| n.tag_name().name() == "script"),
        "{svg}"
    );
    let texts: String = doc
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    assert!(
        texts.contains("</text><script>alert(1)</script>"),
        "the id is shown as text"
    );
    let nodes = doc
        .descendants()
        .filter(|n| n.attribute("data-node").is_some())
        .count();
    assert_eq!(nodes, 3);
}

#[test]
fn the_path_is_marked_in_the_svg() {
    let svg = hostile()
        .svg_highlighted(&[true, false, true])
        .expect("small");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let taken: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.contains("taken")))
        .filter_map(|n| n.attribute("data-node"))
        .collect();
    assert_eq!(taken, ["0", "2"]);
}

/// A `%%{init: …}%%` directive in a guard's string literal (mermaid 11 applies it wherever it
/// stands, hiding every guard and node) is written with `%`, `{`, `}` as entities: no directive
/// survives, and the label still says what the guard says.
#[test]
fn mermaid_labels_carry_no_directive() {
    let text = r##"walker:
  carries:
    task: {type: str, role: input}
nodes:
  - {id: "a%%{init: {'theme': 'dark'}}%%", type: ROUTE, owner: code, reads: [task]}
  - {id: b, type: TERMINAL, reads: [task]}
  - {id: c, type: TERMINAL, reads: [task]}
edges:
  - {from: "a%%{init: {'theme': 'dark'}}%%", to: b, guard: "task == '%%{init: {\"themeVariables\": {\"lineColor\": \"#fff\"}}}%%'"}
  - {from: "a%%{init: {'theme': 'dark'}}%%", to: c, default: true}
"##;
    let m = Graph::from_agir(text, &[], &mut |_| None)
        .expect("reads")
        .mermaid();
    assert!(
        !m.contains("%%{") && !m.contains("{init") && !m.contains("}%%"),
        "{m}"
    );
    assert!(m.contains("#37;#37;#123;init: #123;"), "{m}");
}

//! Issue 7, weakness 1: rendering many findings on one long line stays near-linear. A long
//! line is shown as a window around the finding, and the header keeps the true column.

use ais_core::render::{SourceLines, render_finding_in};
use ais_core::{Repairs, check};
use std::time::Instant;

#[test]
fn findings_on_a_long_line_show_a_window_and_the_true_column() {
    let reads: Vec<String> = (0..5_000).map(|i| format!("u{i}")).collect();
    let text = format!(
        "---\nname: m\ndescription: d\n---\nwalker:\n  name: m\n  carries:\n    task: {{type: str, role: input}}\nnodes:\n  - {{id: a, type: GEN-RAW, doc: Do., reads: [{}]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: a, to: done}}\n",
        reads.join(", ")
    );
    let doc = ais_core::agir::read(&text).unwrap();
    let checked = check(&doc.program, &doc.source_map, Repairs::Off);
    assert!(checked.findings.len() >= 5_000);
    let lines = SourceLines::new(&text);
    let started = Instant::now();
    let mut total = 0;
    for f in &checked.findings {
        total += render_finding_in(f, &lines, "p.agir", false).len();
    }
    // 5,000 findings over a 40 KB line: about 2·10⁸ character steps unwindowed.
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    assert!(total < 5_000 * 1_000, "{total} bytes rendered");
    let line = lines.line(10).unwrap();
    let col = line.find("u4321,").unwrap() + 1;
    let f = checked
        .findings
        .iter()
        .find(|f| f.message.contains("`u4321`"))
        .unwrap();
    let out = render_finding_in(f, &lines, "p.agir", false);
    assert!(out.contains(&format!("--> p.agir:10:{col}\n")), "{out}");
    assert!(out.contains("…"), "{out}");
    assert!(out.contains("u4321, u4322"), "{out}");
    let caret_line = out.lines().find(|l| l.contains('^')).unwrap();
    let source_line = out.lines().find(|l| l.starts_with("10 |")).unwrap();
    let caret_at = caret_line.chars().position(|c| c == '^').unwrap();
    let under: String = source_line.chars().skip(caret_at).take(5).collect();
    assert_eq!(under, "u4321", "{out}");
}

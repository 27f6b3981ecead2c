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

/// Checks a program whose one instruction reads `n` unknown names on one line, each starting
/// with `prefix`, and returns the source and its findings.
fn one_long_line(n: usize, prefix: &str) -> (String, Vec<ais_core::Finding>) {
    let reads: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    let text = format!(
        "---\nname: m\ndescription: d\n---\nwalker:\n  name: m\n  carries:\n    task: {{type: str, role: input}}\nnodes:\n  - {{id: a, type: GEN-RAW, doc: Do., reads: [{}]}}\n  - {{id: done, type: TERMINAL}}\nedges:\n  - {{from: a, to: done}}\n",
        reads.join(", ")
    );
    let doc = ais_core::agir::read(&text).unwrap();
    let findings = check(&doc.program, &doc.source_map, Repairs::Off).findings;
    (text, findings)
}

#[test]
fn rendering_findings_on_one_long_line_grows_linearly_with_their_number() {
    // A finding's column used to be found by scanning its line from the start (or checking
    // the whole line for ASCII), once per finding: four times the findings on a four times
    // longer line took sixteen times as long.
    for prefix in ["u", "π"] {
        let time = |n: usize| {
            let (text, findings) = one_long_line(n, prefix);
            let lines = SourceLines::new(&text);
            (0..3)
                .map(|_| {
                    let started = Instant::now();
                    for f in &findings {
                        render_finding_in(f, &lines, "p.agir", false);
                    }
                    started.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let small = time(2_000);
        let large = time(8_000);
        assert!(
            large < small * 8,
            "{prefix}: {small:?} for 2,000 findings, {large:?} for 8,000"
        );
    }
    // The column is still the true one on a line of multi-byte characters.
    let (text, findings) = one_long_line(3_000, "π");
    let lines = SourceLines::new(&text);
    let f = findings
        .iter()
        .find(|f| f.message.contains("`π2999`"))
        .unwrap();
    let col = text.lines().nth(9).unwrap().chars().count() - "π2999]}".chars().count() + 1;
    let out = render_finding_in(f, &lines, "p.agir", false);
    assert!(out.contains(&format!("--> p.agir:10:{col}\n")), "{out}");
}

//! Programs with many findings, as AG-IR text (so the benchmark reads them as a user's file
//! would be read): did-you-mean and rendering at scale.

use std::fmt::Write;

/// `n` steps, each reading a misspelled carry (`value_00042x` where `value_00042` is declared):
/// `n` W8 findings, each with a did-you-mean among `n` carries.
pub fn unknown_reads(n: usize) -> String {
    let mut carries = String::new();
    let mut nodes = String::new();
    let mut edges = String::new();
    for i in 0..n {
        let _ = writeln!(
            carries,
            "    value_{i:05}: {{type: str, produced_by: step_{i:05}}}"
        );
        let _ = writeln!(
            nodes,
            "  - {{id: step_{i:05}, type: GEN-RAW, doc: Write it., reads: [value_{i:05}x], writes: [value_{i:05}]}}"
        );
        let next = next_step("step", i, n);
        let _ = writeln!(edges, "  - {{from: step_{i:05}, to: {next}}}");
    }
    document("unknown_reads", &carries, &nodes, &edges)
}

/// `n` code-owned gates, each deciding on a bool carry with a guard that misspells it
/// (`flag_00042x == true`): `n` X5 findings, each with a did-you-mean among `n` carries.
pub fn unknown_guard_names(n: usize) -> String {
    let mut carries = String::new();
    let mut nodes = String::new();
    let mut edges = String::new();
    for i in 0..n {
        let _ = writeln!(
            carries,
            "    flag_{i:05}: {{type: bool, produced_by: test_{i:05}}}"
        );
        let _ = writeln!(
            nodes,
            "  - {{id: test_{i:05}, type: CODE, reads: [task], writes: [flag_{i:05}], body: \"len(task) > {i}\"}}\n  - {{id: gate_{i:05}, type: ROUTE, owner: code, reads: [flag_{i:05}]}}"
        );
        let next = next_step("test", i, n);
        let _ = writeln!(
            edges,
            "  - {{from: test_{i:05}, to: gate_{i:05}}}\n  - {{from: gate_{i:05}, to: {next}, guard: \"flag_{i:05}x == true\"}}\n  - {{from: gate_{i:05}, to: {next}, guard: otherwise}}"
        );
    }
    document("unknown_guard_names", &carries, &nodes, &edges)
}

/// One instruction reading `n` undeclared names on one long line: `n` findings on that line.
pub fn one_long_line(n: usize) -> String {
    let reads: Vec<String> = (0..n).map(|i| format!("u{i}")).collect();
    document(
        "one_long_line",
        "",
        &format!(
            "  - {{id: a, type: GEN-RAW, doc: Do., reads: [{}]}}\n",
            reads.join(", ")
        ),
        "  - {from: a, to: done}\n",
    )
}

fn next_step(prefix: &str, i: usize, n: usize) -> String {
    if i + 1 < n {
        format!("{prefix}_{:05}", i + 1)
    } else {
        "done".into()
    }
}

fn document(name: &str, carries: &str, nodes: &str, edges: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Many findings.\n---\nwalker:\n  name: {name}\n  carries:\n    task: {{type: str, role: input}}\n{carries}nodes:\n{nodes}  - {{id: done, type: TERMINAL}}\nedges:\n{edges}"
    )
}

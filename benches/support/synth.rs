//! A generator of synthetic, valid AIS programs of any size, for benchmarks and tests.
//!
//! A program is a chain of blocks of nine instructions each — the realistic mix of a
//! hand-written agent: a GEN-RAW draft, a GEN-FILL into a declared object type, a SENSE check
//! with its own tool, a code-owned ROUTE with a guard and a default edge, a GEN-RAW revision on
//! the default branch, an ACT with its own tool, a CODE body, a GEN-ENUM into a declared enum
//! and a GEN-RAW summary that feeds the next block — then GEN-RAW steps to reach the exact size,
//! and one TERMINAL.

use std::fmt::Write;

/// Instructions per block.
pub const BLOCK: usize = 9;

/// AG-IR text of a valid program of exactly `n` instructions (`n >= 2`: at least one step and
/// the TERMINAL).
pub fn program(n: usize) -> String {
    let n = n.max(2);
    let blocks = (n - 1) / BLOCK;
    let pads = n - 1 - blocks * BLOCK;
    let mut tools = String::new();
    let mut carries = String::new();
    let mut nodes = String::new();
    let mut edges = String::new();
    // `w!` cannot fail on a String; the results are discarded on purpose.
    macro_rules! w {
        ($dst:expr, $($arg:tt)*) => { let _ = writeln!($dst, $($arg)*); };
    }
    w!(carries, "    task: {{type: str, role: input}}");
    let mut prev_carry = "task".to_owned();
    let mut prev_node: Option<String> = None;
    let link = |edges: &mut String, prev: &mut Option<String>, next: &str| {
        if let Some(p) = prev.as_deref() {
            w!(edges, "  - {{from: {p}, to: {next}, modality: mandatory}}");
        }
        *prev = Some(next.to_owned());
    };
    for k in 0..blocks {
        let b = format!("b{k}");
        w!(tools, "  lint_{k}:");
        w!(tools, "    sig: \"(text) -> bool\"");
        w!(tools, "    surface: SENSE");
        w!(
            tools,
            "    doc: \"True when the draft of block {k} has a heading.\""
        );
        w!(tools, "    body: |");
        w!(tools, "      def lint_{k}(text: str) -> bool:");
        w!(
            tools,
            "          return (text or \"\").lstrip().startswith(\"#\")"
        );
        w!(tools, "  stash_{k}:");
        w!(tools, "    sig: \"(content) -> str\"");
        w!(tools, "    surface: ACT");
        w!(
            tools,
            "    doc: \"Keep the draft of block {k} in the workspace.\""
        );
        w!(tools, "    body: |");
        w!(tools, "      def stash_{k}(content: str) -> str:");
        w!(tools, "          return (content or \"\").strip()");

        for (name, ty, by) in [
            ("draft_md", "str", "draft"),
            ("spec", "Spec", "spec"),
            ("ok", "bool", "lint"),
            ("revised_md", "str", "revise"),
            ("stashed", "str", "stash"),
            ("size", "int", "count"),
            ("kind", "Kind", "classify"),
            ("summary", "str", "summarize"),
        ] {
            w!(
                carries,
                "    {b}_{name}: {{type: {ty}, produced_by: {b}_{by}}}"
            );
        }

        w!(nodes, "  - id: {b}_draft");
        w!(nodes, "    type: GEN-RAW");
        w!(nodes, "    reads: [{prev_carry}]");
        w!(nodes, "    writes: [{b}_draft_md]");
        w!(
            nodes,
            "    doc: \"Draft section {k} as markdown, starting with a heading.\""
        );
        w!(nodes, "  - id: {b}_spec");
        w!(nodes, "    type: GEN-FILL");
        w!(nodes, "    reads: [{b}_draft_md]");
        w!(nodes, "    writes: [{b}_spec]");
        w!(
            nodes,
            "    doc: \"Extract the title and the steps of section {k}.\""
        );
        w!(nodes, "  - id: {b}_lint");
        w!(nodes, "    type: SENSE");
        w!(nodes, "    owner: code");
        w!(nodes, "    tool: lint_{k}");
        w!(nodes, "    reads: [{b}_draft_md]");
        w!(nodes, "    writes: [{b}_ok]");
        w!(nodes, "  - id: {b}_gate");
        w!(nodes, "    type: ROUTE");
        w!(nodes, "    owner: code");
        w!(nodes, "    reads: [{b}_ok]");
        w!(nodes, "  - id: {b}_revise");
        w!(nodes, "    type: GEN-RAW");
        w!(nodes, "    reads: [{b}_draft_md]");
        w!(nodes, "    writes: [{b}_revised_md]");
        w!(
            nodes,
            "    doc: \"Rewrite section {k} so that it starts with a heading.\""
        );
        w!(nodes, "  - id: {b}_stash");
        w!(nodes, "    type: ACT");
        w!(nodes, "    owner: code");
        w!(nodes, "    surface: workspace");
        w!(nodes, "    tool: stash_{k}");
        w!(nodes, "    reads: [{b}_draft_md]");
        w!(nodes, "    writes: [{b}_stashed]");
        w!(nodes, "  - id: {b}_count");
        w!(nodes, "    type: CODE");
        w!(nodes, "    reads: [{b}_stashed]");
        w!(nodes, "    writes: [{b}_size]");
        w!(nodes, "    body: \"len({b}_stashed)\"");
        w!(nodes, "  - id: {b}_classify");
        w!(nodes, "    type: GEN-ENUM");
        w!(nodes, "    reads: [{b}_spec]");
        w!(nodes, "    writes: [{b}_kind]");
        w!(
            nodes,
            "    doc: \"Say whether section {k} is small or large work.\""
        );
        w!(nodes, "  - id: {b}_summarize");
        w!(nodes, "    type: GEN-RAW");
        w!(nodes, "    reads: [{b}_stashed, {b}_size, {b}_kind]");
        w!(nodes, "    writes: [{b}_summary]");
        w!(
            nodes,
            "    doc: \"Summarize section {k} in two sentences.\""
        );

        link(&mut edges, &mut prev_node, &format!("{b}_draft"));
        w!(
            edges,
            "  - {{from: {b}_draft, to: {b}_spec, modality: mandatory}}"
        );
        w!(
            edges,
            "  - {{from: {b}_spec, to: {b}_lint, modality: mandatory}}"
        );
        w!(
            edges,
            "  - {{from: {b}_lint, to: {b}_gate, modality: mandatory}}"
        );
        w!(
            edges,
            "  - {{from: {b}_gate, to: {b}_stash, modality: discretionary, guard: \"{b}_ok\"}}"
        );
        w!(
            edges,
            "  - {{from: {b}_gate, to: {b}_revise, modality: discretionary, guard: else}}"
        );
        w!(
            edges,
            "  - {{from: {b}_revise, to: {b}_stash, modality: mandatory}}"
        );
        w!(
            edges,
            "  - {{from: {b}_stash, to: {b}_count, modality: mandatory}}"
        );
        w!(
            edges,
            "  - {{from: {b}_count, to: {b}_classify, modality: mandatory}}"
        );
        w!(
            edges,
            "  - {{from: {b}_classify, to: {b}_summarize, modality: mandatory}}"
        );
        prev_node = Some(format!("{b}_summarize"));
        prev_carry = format!("{b}_summary");
    }
    for p in 0..pads {
        let id = format!("p{p}_note");
        w!(carries, "    {id}_md: {{type: str, produced_by: {id}}}");
        w!(nodes, "  - id: {id}");
        w!(nodes, "    type: GEN-RAW");
        w!(nodes, "    reads: [{prev_carry}]");
        w!(nodes, "    writes: [{id}_md]");
        w!(nodes, "    doc: \"Add closing note {p}.\"");
        link(&mut edges, &mut prev_node, &id);
        prev_carry = format!("{id}_md");
    }
    w!(nodes, "  - id: done");
    w!(nodes, "    type: TERMINAL");
    w!(nodes, "    reads: [{prev_carry}]");
    link(&mut edges, &mut prev_node, "done");

    let mut out = String::with_capacity(n * 400);
    let header = [
        "---".to_owned(),
        format!("name: synthetic_{n}"),
        format!("description: \"A synthetic program of {n} instructions, for benchmarks.\""),
        "---".to_owned(),
        "agir_version: \"0.1\"".to_owned(),
        "standalone: true".to_owned(),
        "shape: pipeline".to_owned(),
        "types:".to_owned(),
        "  Spec:".to_owned(),
        "    kind: object".to_owned(),
        "    fields:".to_owned(),
        "      title: {type: str, doc: \"The section's title.\"}".to_owned(),
        "      steps: {type: \"list[str]\", doc: \"The steps, in order.\"}".to_owned(),
        "  Kind:".to_owned(),
        "    kind: enum".to_owned(),
        "    members: [small, large]".to_owned(),
    ];
    for line in header {
        w!(out, "{line}");
    }
    if tools.is_empty() {
        tools.push_str(" {}\n");
    } else {
        tools.insert(0, '\n');
    }
    let _ = write!(
        out,
        "tools:{tools}walker:\n  name: Synthetic\n  carries:\n{carries}"
    );
    let _ = write!(out, "nodes:\n{nodes}edges:\n{edges}");
    w!(out, "concurrency:");
    w!(out, "  spawn: none");
    w!(
        out,
        "  reason: \"Every block reads the previous block's summary.\""
    );
    out
}

//! Each rule of the AGnnn catalogue that the conformance fixtures do not cover, tripped by the
//! smallest document that breaks it, with the place and the repair checked — and the same
//! document made right again, so the rule is shown to tell the two apart.

use ais_ags::check_text;

const HEAD: &str = "ags_version: \"1.0\"\nkind: AgenticGraph\nid: t/rules\ntitle: Rules\nobjective: Trip one rule.\nconstraints: {max_cost_usd: 1}\n";

/// The codes `body` (appended to the head) produces.
fn codes(body: &str) -> Vec<String> {
    let text = format!("{HEAD}{body}");
    let checked = check_text(&text, None);
    for f in &checked.findings {
        assert!(f.pos.is_some(), "{} has no position: {}", f.id, f.message);
        assert!(f.repair.is_some(), "{} has no repair", f.id);
    }
    checked
        .findings
        .iter()
        .map(|f| f.id.as_str().to_owned())
        .collect()
}

fn trips(code: &str, bad: &str, good: &str) {
    let found = codes(bad);
    assert!(
        found.iter().any(|c| c == code),
        "expected {code} in {found:?} for:\n{bad}"
    );
    let fixed = codes(good);
    assert!(
        !fixed.iter().any(|c| c == code),
        "{code} still reported ({fixed:?}) for:\n{good}"
    );
}

const TWO: &str = "entrypoints: [a]\nnodes:\n  a: {title: A, description: Do A., outputs: {r: {type: string, description: R.}}}\n  b: {title: B, description: Do B., depends_on: [a], inputs: {x: {type: string, description: X., from: nodes.a.outputs.r}}}\n";

#[test]
fn the_base_document_is_clean() {
    assert_eq!(codes(TWO), Vec::<String>::new());
}

#[test]
fn unknown_field_enum_and_duplicate_key() {
    trips(
        "AG003",
        &TWO.replace("title: A,", "title: A, colour: red,"),
        &TWO.replace("title: A,", "title: A, x-colour: red,"),
    );
    trips(
        "AG004",
        &TWO.replace("title: B,", "title: B, join: most,"),
        &TWO.replace("title: B,", "title: B, join: all,"),
    );
    trips("AG005", &format!("{TWO}entrypoints: [b]\n"), TWO);
    trips("AG001", &TWO.replace("title: A, ", ""), TWO);
}

#[test]
fn type_blocks_gates_sequence_guards_and_inputs() {
    trips(
        "AG101",
        &TWO.replace("title: A,", "title: A, gate: {mode: approve},"),
        &TWO.replace("title: A,", "title: A, type: gate, gate: {mode: approve},"),
    );
    let gate = "entrypoints: [g]\nnodes:\n  g: {type: gate, title: G, description: Approve., gate: {mode: approve}, intelligence: {tier: standard}}\n";
    trips(
        "AG102",
        gate,
        &gate.replace(", intelligence: {tier: standard}", ""),
    );
    trips(
        "AG103",
        &format!("{TWO}edges: [{{from: a, to: b, when: 'true'}}]\n"),
        &format!("{TWO}edges: [{{from: a, to: b, kind: conditional, when: 'true'}}]\n"),
    );
    trips(
        "AG104",
        &TWO.replace(
            "from: nodes.a.outputs.r}",
            "from: nodes.a.outputs.r, value: v}",
        ),
        TWO,
    );
}

#[test]
fn entrypoints_and_references() {
    trips(
        "AG112",
        &TWO.replace("entrypoints: [a]", "entrypoints: [a, b]"),
        TWO,
    );
    trips(
        "AG114",
        &TWO.replace("depends_on: [a]", "depends_on: [a, c]"),
        TWO,
    );
    trips(
        "AG115",
        &TWO.replace("entrypoints: [a]", "entrypoints: [z]"),
        TWO,
    );
    trips("AG117", &TWO.replace("  b: {", "  self: {"), TWO);
}

#[test]
fn decisions() {
    let d = "entrypoints: [d]\nnodes:\n  d:\n    type: decision\n    title: D\n    description: Choose.\n    decision: {branches: [{label: yes, description: Y.}], default_branch: yes}\n";
    trips(
        "AG123",
        &d.replace("default_branch: yes", "default_branch: no"),
        d,
    );
    trips(
        "AG122",
        &d.replace(
            "    decision:",
            "    outputs: {decision: {type: string, description: D.}}\n    decision:",
        ),
        d,
    );
}

#[test]
fn fragments_recursion_and_entrypoints() {
    let frag = "entrypoints: [l]\nnodes:\n  l: {type: loop, title: L, description: Loop., loop: {mode: repeat, max_iterations: 2, use: f}}\nsubgraphs:\n  f: {entrypoints: [i], nodes: {i: {title: I, description: Inner.}}}\n";
    assert_eq!(codes(frag), Vec::<String>::new());
    trips(
        "AG133",
        &frag.replace("entrypoints: [i]", "entrypoints: [l]"),
        frag,
    );
    let rec = frag.replace("nodes: {i: {title: I, description: Inner.}}", "nodes: {i: {type: loop, title: I, description: Inner., loop: {mode: repeat, max_iterations: 2, use: f}}}");
    trips("AG131", &rec, frag);
    let sealed = frag.replace(
        "{title: I, description: Inner.}",
        "{title: I, description: Inner., when: nodes.l.status == 'succeeded'}",
    );
    trips("AG202", &sealed, frag);
}

#[test]
fn intelligence_and_failure_ladder() {
    trips(
        "AG142",
        &TWO.replace(
            "title: A,",
            "title: A, intelligence: {tier: advanced, escalate_to: standard},",
        ),
        &TWO.replace(
            "title: A,",
            "title: A, intelligence: {tier: advanced, escalate_to: frontier},",
        ),
    );
    let alt = TWO.replace("title: B,", "title: B, failure: {fallback: [{strategy: alternate_node, node: a}]}, outputs: {o: {type: string, description: O.}}, success: {criteria: [{id: c, kind: artifact_present, description: C., output: o}]},");
    trips(
        "AG151",
        &alt,
        &alt.replace(
            "outputs: {r:",
            "outputs: {o: {type: string, description: O.}, r:",
        ),
    );
    let relax = TWO.replace(
        "title: A,",
        "title: A, failure: {fallback: [{strategy: relax_criteria, criteria: [nope]}]},",
    );
    trips("AG153", &relax, TWO);
    let comp =
        format!("{TWO}  c: {{title: C, description: Undo., failure: {{compensation: a}}}}\n")
            .replace("title: A,", "title: A, failure: {compensation: c},");
    trips("AG152", &comp, TWO);
}

#[test]
fn expressions_names_secrets_and_positions() {
    trips(
        "AG203",
        &TWO.replace("from: nodes.a.outputs.r", "from: params.missing"),
        TWO,
    );
    trips(
        "AG205",
        &TWO.replace("from: nodes.a.outputs.r", "from: secrets.token"),
        TWO,
    );
    trips(
        "AG206",
        &TWO.replace("from: nodes.a.outputs.r", "from: nodes.a.outputs.q"),
        TWO,
    );
    trips(
        "AG211",
        &TWO.replace(
            "from: nodes.a.outputs.r",
            "from: '${{ nodes.a.outputs.r }}'",
        ),
        TWO,
    );
    trips(
        "AG204",
        &TWO.replace("title: B,", "title: B, instructions: 'Use ${{ len( }}',"),
        &TWO.replace(
            "title: B,",
            "title: B, instructions: 'Use ${{ len(nodes.a.outputs.r) }}',",
        ),
    );
    // The finding points at the name inside the expression, not at the field.
    let text = format!(
        "{HEAD}{}",
        TWO.replace("from: nodes.a.outputs.r", "from: nodes.a.outputs.q")
    );
    let f = check_text(&text, None)
        .findings
        .into_iter()
        .find(|f| f.id.as_str() == "AG206")
        .expect("AG206");
    let line = text.lines().nth(f.pos.unwrap().line as usize - 1).unwrap();
    let col = f.pos.unwrap().column as usize - 1;
    assert!(
        line[col..].starts_with("nodes.a.outputs.q"),
        "{line} at {col}"
    );
}

#[test]
fn advisories() {
    trips("AG901", &format!("{TWO}edges: [{{from: a, to: b}}]\n"), TWO);
    trips("AG902", &TWO.replace("title: A,", "title: A, requirements: {workspace: read_write},"), &TWO.replace("title: A,", "title: A, requirements: {workspace: read_write}, success: {criteria: [{id: c, kind: file_exists, description: C., path: x}]},"));
    trips(
        "AG903",
        &format!("{TWO}  c: {{title: C, description: Lost.}}\n"),
        TWO,
    );
    trips(
        "AG904",
        &TWO.replace("from: nodes.a.outputs.r", "value: v"),
        TWO,
    );
    trips(
        "AG905",
        &TWO.replace("title: A,", "title: A, intelligence: {tier: frontier},"),
        &TWO.replace(
            "title: A,",
            "title: A, rationale: Hard., intelligence: {tier: frontier},",
        ),
    );
    trips(
        "AG906",
        &TWO.replace(
            "title: A,",
            "title: A, success: {criteria: [{id: h, kind: human, description: H., prompt: OK?}]},",
        ),
        TWO,
    );
    trips(
        "AG907",
        &TWO.replace("title: A,", "title: A, constraints: {determinism: strict},"),
        &TWO.replace(
            "title: A,",
            "title: A, constraints: {determinism: strict, seed: 1},",
        ),
    );
    let costless = format!("{HEAD}{TWO}").replace("constraints: {max_cost_usd: 1}\n", "");
    assert!(
        check_text(&costless, None)
            .findings
            .iter()
            .any(|f| f.id.as_str() == "AG908")
    );
    let remote = "entrypoints: [s]\nnodes:\n  s: {type: subgraph, title: S, description: Call., subgraph: {ref: {uri: 'https://example.com/g.agraph.json'}}}\n";
    trips(
        "AG909",
        remote,
        &remote.replace("'}", "', integrity: 'sha256-AAAA'}"),
    );
}

#[test]
fn unreadable_text_is_one_located_finding() {
    let checked = check_text("ags_version: [1.0\n", None);
    assert_eq!(checked.findings.len(), 1);
    assert!(checked.findings[0].pos.is_some());
    assert_eq!(checked.outcome(), ais_core::Outcome::Failed);
}

/// The findings of `code` in `body` (appended to the head), with their repairs.
fn repairs(body: &str, code: &str) -> Vec<String> {
    check_text(&format!("{HEAD}{body}"), None)
        .findings
        .iter()
        .filter(|f| f.id.as_str() == code)
        .map(|f| {
            f.repair
                .as_ref()
                .map(|r| r.summary.clone())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn a_repair_that_names_a_node_output_names_it_as_agx_can_parse_and_applying_it_clears_the_finding()
{
    // A node id may hold `-` or start with a digit (the schema); an AGX name may not, so a
    // repair never tells the author to write `nodes.draft-notes.outputs.r` (a subtraction).
    let dashed = "entrypoints: [draft-notes]\nnodes:\n  draft-notes: {title: A, description: Do A., outputs: {r: {type: string, description: R.}}}\n  b: {title: B, description: Do B., depends_on: [draft-notes], inputs: {x: {type: string, description: X., value: v}}}\n";
    let guessed = dashed.replace("value: v", "from: nodes.draft_notes.outputs.r");
    let digit = dashed.replace("draft-notes", "1st-draft");
    // (the document, the code, the edits that apply the repair)
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);
    let cases: [Case; 4] = [
        (TWO, "AG904", vec![]),
        (
            dashed,
            "AG904",
            vec![
                ("draft-notes", "draft_notes"),
                ("value: v", "from: nodes.draft_notes.outputs.r"),
            ],
        ),
        (&guessed, "AG201", vec![("draft-notes", "draft_notes")]),
        (
            &digit,
            "AG904",
            vec![
                ("1st-draft", "n_1st_draft"),
                ("value: v", "from: nodes.n_1st_draft.outputs.r"),
            ],
        ),
    ];
    for (doc, code, edits) in cases {
        let doc = if doc == TWO {
            TWO.replace("from: nodes.a.outputs.r", "value: v")
        } else {
            doc.to_owned()
        };
        let found = repairs(&doc, code);
        assert_eq!(found.len(), 1, "{code} once in:\n{doc}\n{found:?}");
        let repair = &found[0];
        let quoted: Vec<&str> = repair.split('`').skip(1).step_by(2).collect();
        let reads: Vec<&&str> = quoted.iter().filter(|q| q.starts_with("nodes.")).collect();
        assert!(
            !reads.is_empty(),
            "{code}: the repair names no read: {repair}"
        );
        for r in reads {
            let e = ais_ags::parse_agx(r).unwrap_or_else(|e| panic!("`{r}` does not parse: {e:?}"));
            let refs = ais_ags::agx_references(&e);
            assert_eq!(
                refs.len(),
                1,
                "`{r}` is one reference, not arithmetic: {repair}"
            );
        }
        if edits.is_empty() {
            continue;
        }
        for (_, to) in &edits {
            let to = to.strip_prefix("from: ").unwrap_or(to);
            assert!(
                repair.contains(to),
                "{code}: the repair does not say `{to}`: {repair}"
            );
        }
        let fixed = edits.iter().fold(doc.clone(), |d, (f, t)| d.replace(f, t));
        assert_eq!(
            codes(&fixed),
            Vec::<String>::new(),
            "the repair applied:\n{fixed}"
        );
    }
}

//! The AGS conformance material, read in place from `../shared/ags/`: every invalid fixture
//! produces the code its `# EXPECT:` header names, and every example is clean under strict
//! checking (no errors and no warnings), external subgraph references resolved by path.

use crate::support;

use std::path::Path;

fn expect_code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("the fixture is readable");
    let header = text.lines().next().unwrap_or_default();
    header
        .strip_prefix("# EXPECT:")
        .unwrap_or_else(|| panic!("{} has no `# EXPECT:` header", path.display()))
        .trim()
        .to_owned()
}

fn invalid(name: &str) {
    let Some(dir) = support::ags_dir() else {
        return;
    };
    let path = dir.join("conformance/invalid").join(name);
    let code = expect_code(&path);
    let (_, checked) = ais_ags::check_path(&path).expect("the fixture is readable");
    let found = checked.findings.iter().find(|f| f.id.as_str() == code);
    let f = found.unwrap_or_else(|| {
        panic!(
            "{name}: expected {code}, found:\n{}",
            support::listing(&checked)
        )
    });
    assert!(
        f.pos.is_some(),
        "{name}: the {code} finding has a line and column"
    );
    assert!(
        f.repair.is_some(),
        "{name}: the {code} finding has a repair"
    );
    assert_eq!(checked.outcome(), ais_core::Outcome::Failed, "{name}");
}

macro_rules! fixtures {
    ($($test:ident => $file:literal,)*) => {
        $(#[test] fn $test() { invalid($file); })*

        #[test]
        fn every_fixture_has_a_test() {
            let named = [$($file),*];
            for path in support::graphs("conformance/invalid") {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
                assert!(named.contains(&name.as_str()), "{name} has no test here; add it to `fixtures!`");
            }
        }
    };
}

fixtures! {
    ag002_unsupported_version => "ag002-unsupported-version.agraph.yaml",
    ag111_cycle => "ag111-cycle.agraph.yaml",
    ag113_unknown_node => "ag113-unknown-node.agraph.yaml",
    ag116_impossible_join => "ag116-impossible-join.agraph.yaml",
    ag121_expression_branch_without_condition => "ag121-expression-branch-without-condition.agraph.yaml",
    ag124_duplicate_branch => "ag124-duplicate-branch.agraph.yaml",
    ag132_unknown_fragment => "ag132-unknown-fragment.agraph.yaml",
    ag141_tier_mismatch => "ag141-tier-mismatch.agraph.yaml",
    ag201_forward_read => "ag201-forward-read.agraph.yaml",
    ag204_bad_expression => "ag204-bad-expression.agraph.yaml",
}

fn clean(name: &str) {
    let Some(path) = support::example(name) else {
        return;
    };
    let (_, checked) = ais_ags::check_path(&path).expect("the example is readable");
    assert!(
        checked.is_strictly_clean(),
        "{name} is not strictly clean:\n{}",
        support::listing(&checked)
    );
}

#[test]
fn minimal_is_clean() {
    clean("minimal.agraph.yaml");
}

#[test]
fn link_audit_is_clean() {
    clean("link-audit.agraph.yaml");
}

#[test]
fn docs_site_refresh_is_clean_with_its_external_reference() {
    clean("docs-site-refresh.agraph.yaml");
}

#[test]
fn library_v1_release_is_clean() {
    clean("library-v1-release.agraph.yaml");
}

#[test]
fn test_repair_loop_is_clean() {
    clean("test-repair-loop.agraph.yaml");
}

#[test]
fn every_example_has_a_test() {
    for path in support::graphs("examples") {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        assert!(
            [
                "minimal.agraph.yaml",
                "link-audit.agraph.yaml",
                "docs-site-refresh.agraph.yaml",
                "library-v1-release.agraph.yaml",
                "test-repair-loop.agraph.yaml",
            ]
            .contains(&name.as_str()),
            "{name} has no test here"
        );
    }
}

#[test]
fn json_and_yaml_of_each_example_read_to_the_same_data_and_findings() {
    for path in support::graphs("examples") {
        let (_, yaml) = ais_ags::check_path(&path).expect("readable");
        let data = yaml.data.clone().expect("the example reads");
        let json = serde_json::to_string_pretty(&data).expect("serializes");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&json)
                .ok()
                .as_ref(),
            Some(&data)
        );
        let from_json = ais_ags::check_text(&json, path.parent());
        assert_eq!(from_json.data.as_ref(), Some(&data), "{}", path.display());
        let ids = |c: &ais_ags::Checked| c.findings.iter().map(|f| f.id).collect::<Vec<_>>();
        assert_eq!(ids(&from_json), ids(&yaml), "{}", path.display());
    }
}

#[test]
fn the_embedded_schemas_are_the_published_ones() {
    let Some(dir) = support::ags_dir() else {
        return;
    };
    for (name, embedded) in [
        ("agentic-graph-1.0.schema.json", ais_ags::GRAPH_SCHEMA),
        ("agentic-graph-run-1.0.schema.json", ais_ags::RUN_SCHEMA),
    ] {
        let shared = std::fs::read_to_string(dir.join(name)).expect("readable");
        assert_eq!(
            shared, embedded,
            "{name} differs from the copy in ais-ags/schema/"
        );
    }
}

#[test]
fn an_external_reference_is_really_opened() {
    let Some(path) = support::example("docs-site-refresh.agraph.yaml") else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("readable");
    let empty = std::env::temp_dir().join(format!("ais-ags-noref-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("a temp dir");
    let checked = ais_ags::check_text(&text, Some(&empty));
    std::fs::remove_dir_all(&empty).ok();
    assert!(
        checked
            .findings
            .iter()
            .any(|f| f.id.as_str() == "AG132" && f.message.contains("link-audit")),
        "a missing referenced document is reported:\n{}",
        support::listing(&checked)
    );
}

/// Each example reads into the typed [`ais_ags::Graph`], and the graph written back is the
/// document it was read from (extensions, absent fields and numbers as written).
#[test]
fn each_example_reads_into_a_graph_that_writes_back_the_same_document() {
    for path in support::graphs("examples") {
        let (_, checked) = ais_ags::check_path(&path).expect("readable");
        let graph = checked
            .graph
            .as_ref()
            .unwrap_or_else(|| panic!("{} reads as a graph", path.display()));
        assert_eq!(
            Some(&graph.to_json()),
            checked.data.as_ref(),
            "{}",
            path.display()
        );
    }
}

const TYPED: &str = "ags_version: '1.0'\nkind: AgenticGraph\nid: g\ntitle: T\nobjective: O\n\
entrypoints: [a]\nnodes:\n  a:\n    title: A\n    description: Do A.\n    x-note: {kept: true}\n    \
failure:\n      retry:\n        max_attempts: MAX\n";

/// An attack on the typed read, past the check ([`ais_ags::Graph::from_json`] is public: a
/// caller may hand it anything): a value of the wrong type deep in the document is an error
/// naming where it stands, never a panic and never a default.
#[test]
fn a_value_of_the_wrong_type_deep_in_a_graph_is_an_error_naming_where() {
    let good = ais_ags::check_text(&TYPED.replace("MAX", "2"), None)
        .data
        .expect("reads");
    for (at, bad, named) in [
        (
            "/nodes/a/failure/retry/max_attempts",
            serde_json::json!("three"),
            "three",
        ),
        (
            "/nodes/a/failure/retry/max_attempts",
            serde_json::json!(2.5),
            "fraction",
        ),
        (
            "/nodes/a/failure/retry",
            serde_json::json!([1, 2]),
            "sequence",
        ),
        ("/nodes/a/title", serde_json::json!({"a": 1}), "map"),
        ("/entrypoints/0", serde_json::json!(null), "null"),
    ] {
        let mut doc = good.clone();
        *doc.pointer_mut(at).expect("the pointer exists") = bad;
        let e = ais_ags::Graph::from_json(&doc).expect_err(at);
        assert_eq!(e.pointer, at, "{e}");
        assert!(e.message.contains(named), "{at}: {e}");
    }
    let mut doc = good.clone();
    doc["nodes"]["a"]["human"] = serde_json::json!([{"at": "whenever", "mode": "approve"}]);
    let e = ais_ags::Graph::from_json(&doc).expect_err("an unknown stage");
    assert_eq!(e.pointer, "/nodes/a/human/0/at", "{e}");
    assert!(
        e.message.contains("before_start"),
        "the spellings are named: {e}"
    );
}

/// A whole number written as a float (`2.0`, an integer to JSON Schema) reads as the integer;
/// one past every integer field (`1.0e300`, which the schema allows) reads, counts as unset and
/// writes back as written; `x-…` extensions are kept on the node they were written on.
#[test]
fn integers_read_as_written_and_extensions_are_kept() {
    for (max, value) in [("2", Some(2)), ("2.0", Some(2)), ("1.0e300", None)] {
        let checked = ais_ags::check_text(&TYPED.replace("MAX", max), None);
        let graph = checked
            .graph
            .unwrap_or_else(|| panic!("{max}: reads as a graph"));
        let a = &graph.nodes["a"];
        let attempts = a.retry().and_then(|r| r.max_attempts.as_ref());
        assert_eq!(attempts.and_then(ais_ags::Int::get), value, "{max}");
        assert_eq!(a.extra["x-note"], serde_json::json!({"kept": true}));
        assert_eq!(Some(graph.to_json()), checked.data, "{max}");
    }
}

//! Every fixture of the reference corpus (`../shared/corpus/sigil-fixtures/`), run by the
//! machine with scripted slot responses to its TERMINAL or to the fault its README says it must
//! hit — one test per fixture.
//!
//! Each fixture's invocation and expectation is `tests/fixtures/<dir>__<NAME>.json`:
//! `{"task", "inputs": {name: value}, "responses": {<scripted responses>}, "expect": {"status",
//! "report": {carry: value, …} (a subset), "fault": {"kind", "instruction"}, "files": {path:
//! contents}, "deviation": "<text a deviation's substitution contains>", "pause": {"carry"},
//! "steps", "report_order": [carry, …]}, "setup": {file: contents}, "why": "…"}`. The
//! corpus is read in place; without it the tests print a notice and pass, except under
//! `CI=true`.

use crate::common;

/// The corpus locator shared with ais-core's corpus tests.
use crate::core_support as support;

use ais_rt::llm::ScriptedModel;
use ais_rt::{Inputs, Runtime};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use support::corpus;

fn spec_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{}.json", rel.replace('/', "__")))
}

/// Runs one fixture against its expectation.
fn run_fixture(rel: &str) {
    let Some(dir) = corpus() else { return };
    let text = std::fs::read_to_string(dir.join(format!("{rel}.agir"))).expect("the fixture reads");
    let spec_file = spec_path(rel);
    let spec: Json = serde_json::from_str(
        &std::fs::read_to_string(&spec_file)
            .unwrap_or_else(|e| panic!("{}: {e}", spec_file.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", spec_file.display()));
    let expect = &spec["expect"];
    let doc = match ais_core::agir::read(&text) {
        Ok(doc) => doc,
        Err(e) => {
            // A fixture that is not a program: the reader refuses it, saying what to fix.
            assert_eq!(expect["status"], "unreadable", "{rel}: {e}");
            let says = expect["message"].as_str().unwrap_or_default();
            assert!(
                e.to_string().contains(says),
                "{rel}: `{e}` does not say `{says}`"
            );
            return;
        }
    };
    assert_ne!(expect["status"], "unreadable", "{rel} reads");
    // The output root sits alone in a directory of its own, so a write beside it shows.
    let parent = tempfile::tempdir().unwrap();
    let out_dir = tempfile::Builder::new()
        .prefix("root")
        .tempdir_in(parent.path())
        .unwrap();
    if let Some(files) = spec["setup"].as_object() {
        for (path, contents) in files {
            std::fs::write(
                out_dir.path().join(path),
                contents.as_str().unwrap_or_default(),
            )
            .unwrap();
        }
    }
    let mut builder = Runtime::builder().out_dir(out_dir.path().into()).max_steps(
        spec["max_steps"]
            .as_u64()
            .unwrap_or(ais_rt::DEFAULT_MAX_STEPS),
    );
    if let Some(responses) = spec.get("responses") {
        let model =
            ScriptedModel::from_json(&spec_file, responses.clone()).expect("scripted responses");
        builder = builder.model(Arc::new(model));
    }
    let rt = builder.build();
    let pairs: Vec<(String, String)> = spec["inputs"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let inputs = Inputs::parse(
        &doc.program,
        spec["task"].as_str().map(str::to_owned),
        &pairs,
    )
    .expect("inputs parse");
    let out = common::block_on(rt.run(&doc.program, Some(&doc.source_map), inputs));
    let actual = serde_json::to_value(&out).unwrap();
    let show = serde_json::to_string_pretty(&actual).unwrap();
    assert_eq!(actual["status"], expect["status"], "{rel}: status\n{show}");
    if let Some(report) = expect["report"].as_object() {
        for (k, v) in report {
            assert_eq!(&actual["report"][k], v, "{rel}: report.{k}\n{show}");
        }
    }
    if let Some(fault) = expect["fault"].as_object() {
        for (k, v) in fault {
            assert_eq!(&actual["fault"][k], v, "{rel}: fault.{k}\n{show}");
        }
        assert!(
            actual["fault"]["line"].is_u64() || actual["fault"]["instruction"] == "",
            "{rel}: a fault names its line\n{show}"
        );
    }
    if let Some(pause) = expect["pause"].as_object() {
        for (k, v) in pause {
            assert_eq!(&actual["pause"][k], v, "{rel}: pause.{k}\n{show}");
        }
    }
    if let Some(steps) = expect["steps"].as_u64() {
        assert_eq!(out.steps, steps, "{rel}: steps\n{show}");
    }
    if let Some(order) = expect["report_order"].as_array() {
        let keys: Vec<&str> = out.report.keys().map(String::as_str).collect();
        let want: Vec<&str> = order.iter().filter_map(Json::as_str).collect();
        assert_eq!(
            &keys[..want.len().min(keys.len())],
            &want[..],
            "{rel}: report order\n{show}"
        );
    }
    if let Some(files) = expect["files"].as_object() {
        for (path, contents) in files {
            let got = std::fs::read_to_string(out_dir.path().join(path))
                .unwrap_or_else(|e| panic!("{rel}: {path}: {e}\n{show}"));
            assert_eq!(got, contents.as_str().unwrap_or_default(), "{rel}: {path}");
        }
    }
    assert_stays_in_root(rel, parent.path(), &show);
    if let Some(d) = expect["deviation"].as_str() {
        let found = out
            .deviations
            .iter()
            .any(|x| x.substituted.contains(d) || x.intended.contains(d));
        assert!(found, "{rel}: a deviation mentioning `{d}`\n{show}");
    }
}

/// No corpus fixture writes outside its output root on purpose (the corpus README names none,
/// and no fixture's task, inputs or scripted answers give an absolute, `~` or `..` path): so
/// each run leaves nothing beside its root, and no write of it was refused as an escape (the
/// documented error value, `ToolErrorKind::PathEscape`, whose messages say the path "is
/// absolute", "starts with `~`", "contains `..`" or "is a symbolic link").
fn assert_stays_in_root(rel: &str, parent: &Path, show: &str) {
    let beside: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside.len(), 1, "{rel}: wrote beside its root: {beside:?}");
    for says in [
        "path_escape",
        "is absolute; an artifact",
        "starts with `~`",
        "contains `..`",
        "is a symbolic link",
    ] {
        assert!(
            !show.contains(says),
            "{rel}: a write was refused ({says})\n{show}"
        );
    }
}

macro_rules! fixtures {
    ($($name:ident => $rel:literal,)*) => {
        $(
            #[test]
            fn $name() {
                run_fixture($rel);
            }
        )*

        /// Every fixture of the corpus has its test here (a new fixture fails this test until
        /// it gets one).
        #[test]
        fn every_corpus_fixture_has_a_test() {
            let Some(dir) = corpus() else { return };
            let listed = [$($rel),*];
            let mut missing = Vec::new();
            let mut todo = vec![dir.clone()];
            while let Some(d) = todo.pop() {
                for e in std::fs::read_dir(&d).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        todo.push(p);
                    } else if p.extension().is_some_and(|x| x == "agir") {
                        let rel = p.strip_prefix(&dir).unwrap().with_extension("");
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        if !listed.contains(&rel.as_str()) {
                            missing.push(rel);
                        }
                    }
                }
            }
            assert!(missing.is_empty(), "fixtures with no test: {missing:?}");
        }
    };
}

fixtures! {
    author_agent_test_ir => "author_agent_test/IR",
    author_buildout_test_gappy_ir => "author_buildout_test/GAPPY_IR",
    author_buildout_test_good_fill => "author_buildout_test/GOOD_FILL",
    author_buildout_test_lossy_fill => "author_buildout_test/LOSSY_FILL",
    autofix_test_clean_ir => "autofix_test/CLEAN_IR",
    autofix_test_malformed_map_ir => "autofix_test/MALFORMED_MAP_IR",
    autofix_test_malformed_seq_ir => "autofix_test/MALFORMED_SEQ_IR",
    compiler_test_act_pathfirst_ir => "compiler_test/ACT_PATHFIRST_IR",
    compiler_test_act_path_ir => "compiler_test/ACT_PATH_IR",
    compiler_test_bool_route_ir => "compiler_test/BOOL_ROUTE_IR",
    compiler_test_budget_route_ir => "compiler_test/BUDGET_ROUTE_IR",
    compiler_test_carries_as_seq_ir => "compiler_test/CARRIES_AS_SEQ_IR",
    compiler_test_colon_ir => "compiler_test/COLON_IR",
    compiler_test_consumer_type_ir => "compiler_test/CONSUMER_TYPE_IR",
    compiler_test_def_body_ir => "compiler_test/DEF_BODY_IR",
    compiler_test_fanout_gate_ir => "compiler_test/FANOUT_GATE_IR",
    compiler_test_fixed_cmd_ir => "compiler_test/FIXED_CMD_IR",
    compiler_test_gate_ir => "compiler_test/GATE_IR",
    compiler_test_gen_ir => "compiler_test/GEN_IR",
    compiler_test_main_guard_ir => "compiler_test/MAIN_GUARD_IR",
    compiler_test_mixed_input_ir => "compiler_test/MIXED_INPUT_IR",
    compiler_test_multi_write_ir => "compiler_test/MULTI_WRITE_IR",
    compiler_test_nameless_seq_bad_ir => "compiler_test/NAMELESS_SEQ_BAD_IR",
    compiler_test_pipe_report_ir => "compiler_test/PIPE_REPORT_IR",
    compiler_test_repair_ir => "compiler_test/REPAIR_IR",
    compiler_test_sense_path_ir => "compiler_test/SENSE_PATH_IR",
    compiler_test_stmt_body_ir => "compiler_test/STMT_BODY_IR",
    compiler_test_toolib_ir => "compiler_test/TOOLIB_IR",
    compiler_test_tools_as_nested_seq_ir => "compiler_test/TOOLS_AS_NESTED_SEQ_IR",
    compiler_test_tools_as_seq_ir => "compiler_test/TOOLS_AS_SEQ_IR",
    eject_test_toy_ir => "eject_test/TOY_IR",
    faith_test_all_code_ir => "faith_test/ALL_CODE_IR",
    faith_test_embodied_ir => "faith_test/EMBODIED_IR",
    faith_test_fold_ir => "faith_test/FOLD_IR",
    faith_test_ir_yaml => "faith_test/IR_YAML",
    faith_test_pointer_ir => "faith_test/POINTER_IR",
    faith_test_real_write_ir => "faith_test/REAL_WRITE_IR",
    faith_test_report_only_ir => "faith_test/REPORT_ONLY_IR",
    faith_test_code_ir => "faith_test/_CODE_IR",
    faith_test_ir_no_loading => "faith_test/_IR_NO_LOADING",
    faith_test_shred_ir => "faith_test/_SHRED_IR",
    faith_test_whole_ir => "faith_test/_WHOLE_IR",
    faith_test_inline_l144 => "faith_test/inline_L144",
    gates_test_good_ir => "gates_test/GOOD_IR",
    gates_test_hollow_ir => "gates_test/HOLLOW_IR",
    gates_test_ty_conflict_ir => "gates_test/TY_CONFLICT_IR",
    gates_test_ty_provenance_ir => "gates_test/TY_PROVENANCE_IR",
    gates_test_ty_untyped_ir => "gates_test/TY_UNTYPED_IR",
    gates_test_inline_l496 => "gates_test/inline_L496",
    lift_direct_authored => "lift_direct/AUTHORED",
    lowering_fix_tests_carry_ir => "lowering_fix_tests/CARRY_IR",
    lowering_fix_tests_cmd_ir => "lowering_fix_tests/CMD_IR",
    lowering_fix_tests_multiwrite_ir => "lowering_fix_tests/MULTIWRITE_IR",
    lowering_fix_tests_py_marker_ir => "lowering_fix_tests/PY_MARKER_IR",
    lowering_fix_tests_skill_tool_ir => "lowering_fix_tests/SKILL_TOOL_IR",
    raise2_canonicalize_authored_malformed => "raise2_canonicalize/AUTHORED_MALFORMED",
    repair_test_fixed_ir => "repair_test/FIXED_IR",
    runtime_budget_loop_ir => "runtime_budget/LOOP_IR",
    sigil_agir_yaml_test_malformed_ir => "sigil_agir_yaml_test/MALFORMED_IR",
}

/// `runtime_budget/LOOP_IR` is meant to spin: its README says a run with a step budget of 25
/// "must abort loudly (step budget exhausted)". As written its guards name no carry (X5), so
/// it does not run at all; with guards over its real carry that never converge, it hits the
/// budget fault.
#[test]
fn runtime_budget_loop_with_real_guards_exhausts_the_budget() {
    let Some(dir) = corpus() else { return };
    let text = std::fs::read_to_string(dir.join("runtime_budget/LOOP_IR.agir")).unwrap();
    let mut doc = ais_core::agir::read(&text).unwrap();
    for e in doc.program.edges.iter_mut().flatten() {
        match e.guard.as_deref() {
            Some("more") => e.guard = Some("notes != \"clear\"".into()),
            Some("finished") => e.guard = Some("notes == \"clear\"".into()),
            _ => {}
        }
    }
    let many = |s: &str| Json::Array(vec![Json::String(s.into()); 30]);
    let responses = serde_json::json!({"ask": many("Which dates?"), "assess": many("still vague")});
    let model = ScriptedModel::from_json(Path::new("loop.json"), responses).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let rt = Runtime::builder()
        .out_dir(out_dir.path().into())
        .model(Arc::new(model))
        .max_steps(25)
        .build();
    let out = common::block_on(rt.run(
        &doc.program,
        Some(&doc.source_map),
        Inputs::task("plan a trip"),
    ));
    assert_eq!(out.status, ais_rt::Status::Fault, "{out:?}");
    let fault = out.fault.unwrap();
    assert_eq!(fault.kind, ais_rt::FaultKind::BudgetExhausted);
    assert!(fault.message.contains("step budget exhausted"));
    assert_eq!(out.steps, 25);
    assert!(out.report.is_empty());
}

//! The tools of the reference implementation's own programs (`../shared/corpus/sigil-fixtures/`,
//! read in place) run here unchanged: each declared tool is resolved through the registry the
//! machine uses and called with arguments as the machine would bind them.

/// The corpus locator shared with ais-core's corpus tests.
use crate::core_support as support;

use ais_core::Value;
use ais_rt::{ToolArgs, ToolContext, ToolErrorKind, ToolRegistry};
use std::path::Path;
use support::corpus;

use crate::common;
use common::have_python;

fn declared(file: &str, tool: &str) -> Option<ais_core::Tool> {
    let path = corpus()?.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = ais_core::agir::read(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let found = doc
        .program
        .tools
        .unwrap_or_default()
        .into_iter()
        .find(|t| t.name == tool);
    Some(found.unwrap_or_else(|| panic!("{file} declares no tool `{tool}`")))
}

fn args(pairs: &[(&str, Value)]) -> ToolArgs {
    let mut a = ToolArgs::default();
    for (k, v) in pairs {
        a.params.insert((*k).to_owned(), v.clone());
    }
    a
}

fn json(text: &str) -> Value {
    Value::from_json(&serde_json::from_str(text).unwrap())
}

/// Calls `tool` of `file` in a fresh output root; `None` when the corpus is absent.
async fn call(
    file: &str,
    tool: &str,
    a: ToolArgs,
    root: &Path,
) -> Option<Result<Value, ais_rt::ToolError>> {
    if !have_python() {
        return None;
    }
    let decl = declared(file, tool)?;
    let registry = ToolRegistry::with_builtins();
    let runnable = registry
        .resolve(&decl)
        .unwrap_or_else(|| panic!("{file}: `{tool}` resolves to nothing"));
    Some(runnable.call(a, &ToolContext::new(root)).await)
}

#[tokio::test]
async fn every_body_shape_of_the_reference_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = || args(&[("text", "make it loud".into())]);
    let cases: Vec<(&str, &str, ToolArgs, Value)> = vec![
        (
            "compiler_test/DEF_BODY_IR.agir",
            "upcase",
            text(),
            "MAKE IT LOUD".into(),
        ),
        (
            "compiler_test/STMT_BODY_IR.agir",
            "upcase",
            text(),
            "MAKE IT LOUD".into(),
        ),
        (
            "compiler_test/TOOLS_AS_SEQ_IR.agir",
            "upcase",
            text(),
            "MAKE IT LOUD".into(),
        ),
        (
            "compiler_test/MULTI_WRITE_IR.agir",
            "verify_all",
            args(&[("sentence", "short and sweet".into())]),
            json(r#"{"verdict_report": "words ok", "ok": true}"#),
        ),
        (
            "compiler_test/BOOL_ROUTE_IR.agir",
            "check_len",
            args(&[("sentence", "one two".into())]),
            Value::Bool(true),
        ),
        (
            "compiler_test/REPAIR_IR.agir",
            "run_checks",
            args(&[("answer", json(r#"["a", "b"]"#))]),
            json("[true, true, false, false, false, false]"),
        ),
        (
            "compiler_test/BUDGET_ROUTE_IR.agir",
            "check_it",
            args(&[("task", "x".into())]),
            json(r#"["", true]"#),
        ),
        (
            "compiler_test/BUDGET_ROUTE_IR.agir",
            "bump",
            args(&[("round", Value::Int(2))]),
            Value::Int(3),
        ),
        (
            "compiler_test/BUDGET_ROUTE_IR.agir",
            "bump",
            args(&[("round", Value::Null)]),
            Value::Int(1),
        ),
        (
            "lowering_fix_tests/CARRY_IR.agir",
            "gather",
            args(&[("task", "x".into())]),
            json(r#"{"bundle": {"n": 1}, "rounds": 1}"#),
        ),
        (
            "compiler_test/CONSUMER_TYPE_IR.agir",
            "render_header",
            args(&[("header_fields", json(r#"{"feature_name": "Login"}"#))]),
            "Login".into(),
        ),
        (
            "lowering_fix_tests/PY_MARKER_IR.agir",
            "describe",
            args(&[("task", "x".into())]),
            "use ::py:: for inline python".into(),
        ),
        (
            "compiler_test/FANOUT_GATE_IR.agir",
            "gate_all",
            args(&[("a_ok", Value::Bool(true)), ("b_ok", Value::Bool(false))]),
            Value::Bool(false),
        ),
    ];
    for (file, tool, a, want) in cases {
        let Some(got) = call(file, tool, a, root).await else {
            return;
        };
        assert_eq!(
            got.unwrap_or_else(|e| panic!("{file} {tool}: {e}")),
            want,
            "{file} {tool}"
        );
    }
}

#[tokio::test]
async fn a_main_guard_tool_writes_its_file_in_the_output_root() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(&[
        ("content", "saved text".into()),
        ("path", "notes/n.txt".into()),
    ]);
    let Some(got) = call(
        "compiler_test/MAIN_GUARD_IR.agir",
        "save_file",
        a,
        dir.path(),
    )
    .await
    else {
        return;
    };
    assert_eq!(got.unwrap(), Value::from("notes/n.txt"));
    let written = std::fs::read_to_string(dir.path().join("notes/n.txt")).unwrap();
    assert_eq!(written, "saved text");
}

#[tokio::test]
async fn a_tool_guard_that_raises_is_a_routable_failure() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.csv"), "a,b\n1,2\n").unwrap();
    let ok = call(
        "compiler_test/SENSE_PATH_IR.agir",
        "read_input_csv",
        args(&[("path", "in.csv".into())]),
        dir.path(),
    )
    .await;
    let Some(ok) = ok else { return };
    assert_eq!(ok.unwrap(), json(r#"[["a", "b"], ["1", "2"]]"#));
    let err = call(
        "compiler_test/SENSE_PATH_IR.agir",
        "read_input_csv",
        args(&[("path", Value::Null)]),
        dir.path(),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("ValueError"), "{}", err.message);
}

#[tokio::test]
async fn a_builtin_named_tool_without_a_body_is_the_library_and_an_authored_body_wins() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.txt"), "the contents").unwrap();
    let got = call(
        "compiler_test/TOOLIB_IR.agir",
        "read_file",
        args(&[("path", "input.txt".into())]),
        dir.path(),
    )
    .await;
    let Some(got) = got else { return };
    assert_eq!(got.unwrap(), Value::from("the contents"));
    // ACT_PATHFIRST_IR authors its own `write_file`, which returns the path exactly as given
    // (the library's would return it normalized, `x.txt`).
    let got = call(
        "compiler_test/ACT_PATHFIRST_IR.agir",
        "write_file",
        args(&[("path", "./x.txt".into()), ("content", "body".into())]),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(got.unwrap(), Value::from("./x.txt"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x.txt")).unwrap(),
        "body"
    );
}

#[tokio::test]
async fn a_fixed_command_tool_runs_every_token() {
    let dir = tempfile::tempdir().unwrap();
    // Not a git repository: git runs (every token kept) and fails, routably.
    let got = call(
        "compiler_test/FIXED_CMD_IR.agir",
        "git_log_10",
        args(&[]),
        dir.path(),
    )
    .await;
    let Some(got) = got else { return };
    match got {
        Err(e) if e.kind == ToolErrorKind::Io => {
            eprintln!("notice: git is not installed; {}", e.message)
        }
        Err(e) => {
            assert_eq!(e.kind, ToolErrorKind::Failed, "{}", e.message);
            assert!(e.output.contains("not a git repository"), "{}", e.output);
        }
        Ok(v) => panic!("git log succeeded outside a repository: {v}"),
    }
}

//! Native Rust tools through the registry's typed `fn` adapters: conversions in and out,
//! errors naming the parameter and the value's kind, async tools, and which tool a declared
//! name resolves to.

use ais_core::Value;
use ais_rt::{Json, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolRegistry};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::time::Duration;

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

async fn call(reg: &ToolRegistry, name: &str, a: ToolArgs) -> Result<Value, ToolError> {
    let dir = std::env::temp_dir();
    reg.get(name).unwrap().call(a, &ToolContext::new(dir)).await
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
struct Plan {
    title: String,
    steps: Vec<String>,
}

fn registry() -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register_fn(
        "mix",
        &["s", "n", "f", "b", "list", "opt"],
        |s: String, n: i64, f: f64, b: bool, list: Vec<String>, opt: Option<i64>| {
            format!("{s}|{n}|{f}|{b}|{}|{opt:?}", list.join(","))
        },
    );
    reg.register_fn("kinds", &["v", "j"], |v: Value, j: serde_json::Value| {
        vec![v, Value::from_json(&j)]
    });
    reg.register_fn("plan", &["plan"], |plan: Json<Plan>| {
        Json(Plan {
            title: plan.0.title.to_uppercase(),
            steps: plan.0.steps,
        })
    });
    reg.register_fn(
        "ratio",
        &["a", "b"],
        |a: i64, b: i64| -> Result<f64, String> {
            if b == 0 {
                Err("division by zero".to_owned())
            } else {
                Ok(a as f64 / b as f64)
            }
        },
    );
    reg.register_fn("nothing", &[], || Option::<String>::None);
    reg.register_fn("nan", &[], || f64::NAN);
    reg.register_fn("count", &["words"], |words: Vec<String>| {
        let mut m = IndexMap::new();
        for w in words {
            *m.entry(w).or_insert(0i64) += 1;
        }
        m
    });
    reg.register_async_fn(
        "later",
        &["ms", "text"],
        |ms: u64, text: String| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, std::io::Error>(text.len())
        },
    );
    reg
}

#[tokio::test]
async fn typed_arguments_convert_by_name_in_any_order() {
    let reg = registry();
    let a = args(&[
        ("opt", Value::Null),
        ("list", json(r#"["x", "y"]"#)),
        ("b", Value::Bool(true)),
        ("f", Value::Int(2)),
        ("n", Value::Float(7.0)),
        ("s", "hi".into()),
    ]);
    assert_eq!(
        call(&reg, "mix", a).await.unwrap(),
        Value::from("hi|7|2|true|x,y|None")
    );
    let a = args(&[
        ("s", "a".into()),
        ("n", Value::Int(-1)),
        ("f", Value::Float(0.5)),
        ("b", Value::Bool(false)),
        ("list", Value::List(vec![])),
        ("opt", Value::Int(4)),
    ]);
    assert_eq!(
        call(&reg, "mix", a).await.unwrap(),
        Value::from("a|-1|0.5|false||Some(4)")
    );
}

#[tokio::test]
async fn a_missing_or_mistyped_argument_names_the_parameter_and_the_kind() {
    let reg = registry();
    let base = || {
        vec![
            ("s", Value::from("a")),
            ("n", Value::Int(1)),
            ("f", Value::Float(1.0)),
            ("b", Value::Bool(true)),
            ("list", Value::List(vec![])),
        ]
    };
    let mut missing = base();
    missing.retain(|(k, _)| *k != "n");
    let err = call(&reg, "mix", args(&missing)).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadArguments);
    assert_eq!(
        err.message,
        "tool `mix`: parameter `n` is unbound (null) but needs int (i64)"
    );
    let mut wrong = base();
    wrong[1].1 = Value::from("seven");
    let err = call(&reg, "mix", args(&wrong)).await.unwrap_err();
    assert_eq!(
        err.message,
        "tool `mix`: parameter `n` needs int (i64), got str"
    );
    let mut fractional = base();
    fractional[1].1 = Value::Float(1.5);
    let err = call(&reg, "mix", args(&fractional)).await.unwrap_err();
    assert_eq!(
        err.message,
        "tool `mix`: parameter `n` needs int (i64), got float"
    );
    let mut item = base();
    item[4].1 = json(r#"["ok", 3]"#);
    let err = call(&reg, "mix", args(&item)).await.unwrap_err();
    assert_eq!(
        err.message,
        "tool `mix`: parameter `list` needs list of str, got int at item 1"
    );
}

#[tokio::test]
async fn any_values_and_serde_types_cross_both_ways() {
    let reg = registry();
    let got = call(
        &reg,
        "kinds",
        args(&[("v", Value::Null), ("j", json(r#"{"k": [1, 2.5]}"#))]),
    )
    .await
    .unwrap();
    assert_eq!(got, json(r#"[null, {"k": [1, 2.5]}]"#));
    let got = call(
        &reg,
        "plan",
        args(&[("plan", json(r#"{"title": "ship it", "steps": ["a", "b"]}"#))]),
    )
    .await
    .unwrap();
    assert_eq!(got, json(r#"{"title": "SHIP IT", "steps": ["a", "b"]}"#));
    let err = call(&reg, "plan", args(&[("plan", json(r#"{"title": 3}"#))]))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadArguments);
    assert!(err.message.contains("parameter `plan`"), "{}", err.message);
    assert!(err.message.contains("dict"), "{}", err.message);
    let got = call(
        &reg,
        "count",
        args(&[("words", json(r#"["a", "b", "a"]"#))]),
    )
    .await
    .unwrap();
    assert_eq!(got, json(r#"{"a": 2, "b": 1}"#));
    assert_eq!(call(&reg, "nothing", args(&[])).await.unwrap(), Value::Null);
}

#[tokio::test]
async fn an_err_is_a_routable_failure_and_a_nan_is_refused() {
    let reg = registry();
    let got = call(
        &reg,
        "ratio",
        args(&[("a", Value::Int(3)), ("b", Value::Int(2))]),
    )
    .await
    .unwrap();
    assert_eq!(got, Value::Float(1.5));
    let err = call(
        &reg,
        "ratio",
        args(&[("a", Value::Int(3)), ("b", Value::Int(0))]),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert_eq!(err.message, "tool `ratio` failed: division by zero");
    let err = call(&reg, "nan", args(&[])).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
}

#[tokio::test]
async fn an_async_tool_awaits_and_converts_its_result() {
    let reg = registry();
    let got = call(
        &reg,
        "later",
        args(&[("ms", Value::Int(5)), ("text", "four".into())]),
    )
    .await
    .unwrap();
    assert_eq!(got, Value::Int(4));
    let err = call(
        &reg,
        "later",
        args(&[("ms", Value::Int(-5)), ("text", "x".into())]),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadArguments);
    assert!(err.message.contains("out of range"), "{}", err.message);
}

#[test]
#[should_panic(expected = "2 parameter names given for a function of 1 arguments")]
fn registering_with_the_wrong_number_of_names_is_caught_at_once() {
    ToolRegistry::new().register_fn("bad", &["a", "b"], |a: String| a);
}

fn declared(name: &str, body: Option<&str>) -> ais_core::Tool {
    let text = format!(
        "agir_version: 0.1\ntools:\n  {name}:\n    sig: \"(path, content) -> str\"\n    surface: SENSE\n{}nodes: []\n",
        body.map(|b| format!("    body: |\n      {b}\n"))
            .unwrap_or_default()
    );
    let doc = ais_core::agir::read(&text).unwrap();
    doc.program.tools.unwrap().remove(0)
}

#[tokio::test]
async fn a_native_tool_wins_over_a_body_and_a_body_wins_over_the_library() {
    let mut reg = ToolRegistry::with_builtins();
    let body = declared("write_file", Some("return 'authored'"));
    let bare = declared("write_file", None);
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let a = || args(&[("path", "x.txt".into()), ("content", "c".into())]);
    // The authored body beats the built-in.
    let got = reg.resolve(&body).unwrap().call(a(), &ctx).await.unwrap();
    assert_eq!(got, Value::from("authored"));
    // No body: the built-in.
    let got = reg
        .lookup("write_file", Some(&bare))
        .unwrap()
        .call(a(), &ctx)
        .await
        .unwrap();
    assert_eq!(got, Value::from("x.txt"));
    // A native tool beats both.
    reg.register_fn(
        "write_file",
        &["path", "content"],
        |_p: String, _c: String| "native",
    );
    assert!(!reg.is_builtin("write_file"));
    let got = reg.resolve(&body).unwrap().call(a(), &ctx).await.unwrap();
    assert_eq!(got, Value::from("native"));
    // Undeclared: whatever is registered.
    assert!(reg.lookup("read_file", None).is_some());
    assert!(reg.lookup("nope", None).is_none());
}

#[tokio::test]
async fn a_sync_tool_answers_in_place_and_others_hand_the_arguments_back() {
    let reg = registry();
    let ctx = ToolContext::new(std::env::temp_dir());
    let a = args(&[("a", Value::Int(6)), ("b", Value::Int(3))]);
    let got = reg.get("ratio").unwrap().call_now(a, &ctx);
    assert_eq!(got.ok(), Some(Ok(Value::Float(2.0))));
    let a = args(&[("ms", Value::Int(1)), ("text", "ab".into())]);
    let back = reg
        .get("later")
        .unwrap()
        .call_now(a.clone(), &ctx)
        .unwrap_err();
    assert_eq!(back, a);
    let later = reg.get("later").unwrap().call(back, &ctx).await.unwrap();
    assert_eq!(later, Value::Int(2));
}

#[tokio::test]
async fn a_dict_argument_converts_entry_by_entry() {
    let mut reg = ToolRegistry::new();
    reg.register_fn("total", &["scores"], |scores: IndexMap<String, i64>| {
        scores.values().sum::<i64>()
    });
    let got = call(
        &reg,
        "total",
        args(&[("scores", json(r#"{"a": 2, "b": 3}"#))]),
    )
    .await
    .unwrap();
    assert_eq!(got, Value::Int(5));
    let err = call(
        &reg,
        "total",
        args(&[("scores", json(r#"{"a": 2, "b": "x"}"#))]),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message,
        "tool `total`: parameter `scores` needs dict of int (i64), got str at key `b`"
    );
}

//! Tests of [`fill`]: the tool loop, the repair rounds, the opcode-specific checks.

use super::*;
use crate::llm::{Completion, ModelError, ModelFuture, ToolSpec};
use serde_json::{Value, json};
use std::sync::Mutex;

/// A model that replays a list of replies and records every request it was sent.
struct Fake {
    replies: Mutex<Vec<Result<Reply, ModelError>>>,
    seen: Mutex<Vec<SlotRequest>>,
}

impl Fake {
    fn new(replies: Vec<Result<Reply, ModelError>>) -> Self {
        let mut replies = replies;
        replies.reverse();
        Fake {
            replies: Mutex::new(replies),
            seen: Mutex::new(Vec::new()),
        }
    }

    fn values(values: &[Value]) -> Self {
        Self::new(values.iter().map(|v| Ok(value(v.clone()))).collect())
    }

    fn seen(&self) -> Vec<SlotRequest> {
        self.seen.lock().unwrap().clone()
    }
}

fn value(v: Value) -> Reply {
    Reply::Value { value: v }
}

fn calls(list: &[(&str, Value)]) -> Reply {
    Reply::ToolCalls {
        calls: list
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCall {
                id: format!("c{i}"),
                name: (*name).into(),
                arguments: args.clone(),
            })
            .collect(),
    }
}

impl Model for Fake {
    fn name(&self) -> &str {
        "fake"
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        self.seen.lock().unwrap().push(request.clone());
        let next = self.replies.lock().unwrap().pop();
        Box::pin(async move {
            let reply = next.unwrap_or_else(|| {
                Err(ModelError::new(
                    ModelErrorKind::Exhausted,
                    "fake: no reply left",
                ))
            })?;
            Ok(Completion {
                reply,
                usage: Usage {
                    prompt_tokens: 10,
                    completion_tokens: 3,
                    cached_tokens: Some(2),
                },
                exchange: Exchange {
                    request: json!({"n": request.history.len()}),
                    response: json!("raw"),
                },
            })
        })
    }
}

/// Tools that echo their arguments and record the calls.
#[derive(Default)]
struct Echo {
    calls: Mutex<Vec<(String, Value)>>,
}

impl SlotTools for Echo {
    fn call<'a>(&'a self, name: &'a str, arguments: Value) -> SlotToolFuture<'a> {
        self.calls
            .lock()
            .unwrap()
            .push((name.into(), arguments.clone()));
        Box::pin(async move { json!({"ok": true, "echo": arguments}) })
    }
}

fn request(opcode: &str, schema: Value) -> SlotRequest {
    SlotRequest {
        instruction: "step".into(),
        opcode: opcode.into(),
        doc: "Do the step.".into(),
        knowledge: vec![],
        operands: vec![],
        schema,
        choices: None,
        tools: vec![],
        sibling: None,
        siblings: None,
        history: vec![],
    }
}

fn with_tools(mut r: SlotRequest, names: &[&str]) -> SlotRequest {
    r.tools = names
        .iter()
        .map(|n| ToolSpec {
            name: (*n).into(),
            description: "a tool".into(),
            parameters: json!({"type": "object"}),
        })
        .collect();
    r
}

async fn run(model: &Fake, r: SlotRequest, options: &SlotOptions) -> SlotOutcome {
    fill(model, r, &Echo::default(), options).await
}

#[tokio::test]
async fn a_valid_value_lands_at_once() {
    let m = Fake::values(&[json!("hello")]);
    let out = run(
        &m,
        request("GEN-RAW", json!({"type": "string"})),
        &SlotOptions::default(),
    )
    .await;
    assert_eq!(out.value, Ok(json!("hello")));
    assert_eq!(
        (out.repairs, out.tool_rounds, out.exchanges.len()),
        (0, 0, 1)
    );
    assert_eq!(out.usage.prompt_tokens, 10);
}

#[tokio::test]
async fn an_invalid_value_is_repaired_with_the_exact_error() {
    let m = Fake::values(&[json!(42), json!("fixed")]);
    let out = run(
        &m,
        request("GEN-FILL", json!({"type": "string"})),
        &SlotOptions::default(),
    )
    .await;
    assert_eq!(out.value, Ok(json!("fixed")));
    assert_eq!(out.repairs, 1);
    assert_eq!(out.exchanges.len(), 2);
    assert_eq!(
        out.usage,
        Usage {
            prompt_tokens: 20,
            completion_tokens: 6,
            cached_tokens: Some(4)
        }
    );
    let seen = m.seen();
    assert!(seen[0].history.is_empty());
    match &seen[1].history[..] {
        [
            Turn::Assistant {
                value: Some(v),
                tool_calls,
            },
            Turn::Repair { error },
        ] => {
            assert_eq!(v, &json!(42));
            assert!(tool_calls.is_empty());
            assert!(
                error.contains("at the value") && error.contains("string"),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn repairs_are_bounded_then_the_slot_fails_with_the_last_error() {
    let m = Fake::values(&[json!(1), json!(2), json!(3), json!("never asked")]);
    let out = run(
        &m,
        request("GEN-FILL", json!({"type": "string"})),
        &SlotOptions::default(),
    )
    .await;
    let err = out.value.unwrap_err();
    assert!(
        err.message.contains("slot `step` (GEN-FILL)")
            && err.message.contains("after 2 repair rounds")
            && err.message.contains("string"),
        "{}",
        err.message
    );
    assert_eq!(err.model, None);
    assert_eq!((out.repairs, out.exchanges.len()), (2, 3));
    let none = SlotOptions {
        max_repairs: 0,
        ..SlotOptions::default()
    };
    let m = Fake::values(&[json!(1)]);
    let out = run(&m, request("GEN-FILL", json!({"type": "string"})), &none).await;
    assert!(out.value.is_err());
    assert_eq!(out.exchanges.len(), 1);
}

#[tokio::test]
async fn a_model_failure_fails_the_slot_with_its_kind() {
    let m = Fake::new(vec![Err(ModelError::new(
        ModelErrorKind::Timeout,
        "no answer in 30 s",
    ))]);
    let out = run(
        &m,
        request("GEN-RAW", json!({"type": "string"})),
        &SlotOptions::default(),
    )
    .await;
    let err = out.value.unwrap_err();
    assert_eq!(err.model, Some(ModelErrorKind::Timeout));
    assert!(err.message.contains("`fake`") && err.message.contains("30 s"));
    assert!(out.exchanges.is_empty());
}

#[tokio::test]
async fn tool_rounds_run_the_named_tools_and_feed_the_results_back() {
    let m = Fake::new(vec![
        Ok(calls(&[
            ("grep", json!({"pattern": "x"})),
            ("rm_rf", json!({})),
        ])),
        Ok(value(json!("found it"))),
    ]);
    let tools = Echo::default();
    let r = with_tools(request("GEN-RAW", json!({"type": "string"})), &["grep"]);
    let out = fill(&m, r, &tools, &SlotOptions::default()).await;
    assert_eq!(out.value, Ok(json!("found it")));
    assert_eq!((out.tool_rounds, out.repairs), (1, 0));
    // Only the tool the slot names ran.
    assert_eq!(
        *tools.calls.lock().unwrap(),
        vec![("grep".to_owned(), json!({"pattern": "x"}))]
    );
    let history = &m.seen()[1].history;
    assert!(
        matches!(&history[0], Turn::Assistant { value: None, tool_calls } if tool_calls.len() == 2)
    );
    match (&history[1], &history[2]) {
        (
            Turn::ToolResult {
                call_id, output, ..
            },
            Turn::ToolResult {
                name,
                output: refused,
                ..
            },
        ) => {
            assert_eq!(call_id, "c0");
            assert_eq!(output["echo"], json!({"pattern": "x"}));
            assert_eq!(name, "rm_rf");
            assert_eq!(refused["ok"], false);
            assert!(
                refused["error"]
                    .as_str()
                    .unwrap()
                    .contains("its tools are: grep")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn tool_rounds_are_bounded() {
    let options = SlotOptions {
        max_tool_rounds: 2,
        max_repairs: 1,
        ..SlotOptions::default()
    };
    let grep = || Ok(calls(&[("grep", json!({}))]));
    // Two rounds run; the third request is answered with a repair asking for the value.
    let m = Fake::new(vec![grep(), grep(), grep(), Ok(value(json!("done")))]);
    let r = with_tools(request("GEN-RAW", json!({"type": "string"})), &["grep"]);
    let out = run(&m, r.clone(), &options).await;
    assert_eq!(out.value, Ok(json!("done")));
    assert_eq!((out.tool_rounds, out.repairs), (2, 1));
    match m.seen()[3].history.last() {
        Some(Turn::Repair { error }) => assert!(error.contains("all 2 tool rounds"), "{error}"),
        other => panic!("{other:?}"),
    }
    // A model that keeps calling tools fails once the repairs are spent too.
    let m = Fake::new(vec![grep(), grep(), grep(), grep(), grep()]);
    let out = run(&m, r, &options).await;
    assert!(out.value.unwrap_err().message.contains("tool rounds"));
    assert_eq!(m.seen().len(), 4);
}

#[tokio::test]
async fn tool_calls_without_tools_and_empty_replies_are_repaired() {
    let m = Fake::new(vec![
        Ok(calls(&[("grep", json!({}))])),
        Ok(Reply::ToolCalls { calls: vec![] }),
        Ok(value(json!("ok"))),
    ]);
    let tools = Echo::default();
    let r = request("GEN-RAW", json!({"type": "string"}));
    let out = fill(&m, r, &tools, &SlotOptions::default()).await;
    assert_eq!(out.value, Ok(json!("ok")));
    assert_eq!((out.repairs, out.tool_rounds), (2, 0));
    assert!(tools.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn tool_calls_past_the_per_round_cap_do_not_run() {
    let many: Vec<(&str, Value)> = (0..MAX_CALLS_PER_ROUND + 3)
        .map(|i| ("grep", json!({"i": i})))
        .collect();
    let m = Fake::new(vec![Ok(calls(&many)), Ok(value(json!("x")))]);
    let tools = Echo::default();
    let r = with_tools(request("GEN-RAW", json!({"type": "string"})), &["grep"]);
    fill(&m, r, &tools, &SlotOptions::default()).await;
    assert_eq!(tools.calls.lock().unwrap().len(), MAX_CALLS_PER_ROUND);
    let refused = m.seen()[1]
        .history
        .iter()
        .filter(|t| matches!(t, Turn::ToolResult { output, .. } if output["ok"] == false))
        .count();
    assert_eq!(refused, 3);
}

#[tokio::test]
async fn gen_raw_strips_a_fence_and_drops_contentless_elements() {
    let m = Fake::values(&[json!("```markdown\n# Plan\n```")]);
    let out = run(
        &m,
        request("GEN-RAW", json!({"type": "string"})),
        &SlotOptions::default(),
    )
    .await;
    assert_eq!(out.value, Ok(json!("# Plan")));
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let m = Fake::values(&[json!(["a", "", null, " ", "b"])]);
    let out = run(
        &m,
        request("GEN-RAW", schema.clone()),
        &SlotOptions::default(),
    )
    .await;
    assert_eq!(out.value, Ok(json!(["a", "b"])));
    // Other opcodes take the text as it is.
    let m = Fake::values(&[json!(["a", null])]);
    let out = run(&m, request("GEN-FILL", schema), &SlotOptions::default()).await;
    assert_eq!(out.repairs, 1);
}

#[tokio::test]
async fn an_enum_choice_is_constrained_to_the_members() {
    let schema = json!({"type": "string", "enum": ["merge", "split"]});
    let mut r = request("GEN-ENUM", schema);
    r.choices = Some(vec!["merge".into(), "split".into()]);
    let m = Fake::values(&[json!("rotate"), json!("Merge.")]);
    let out = run(&m, r, &SlotOptions::default()).await;
    assert_eq!(out.value, Ok(json!("merge")));
    match m.seen()[1].history.last() {
        Some(Turn::Repair { error }) => {
            assert!(error.contains("`merge`, `split`"), "{error}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_su_route_picks_a_target_id() {
    let mut r = request(
        "ROUTE",
        json!({"type": "string", "enum": ["save", "retry"]}),
    );
    r.choices = Some(vec!["save".into(), "retry".into()]);
    let m = Fake::values(&[json!({"target": "save"}), json!("retry")]);
    let out = run(&m, r, &SlotOptions::default()).await;
    assert_eq!(out.value, Ok(json!("retry")));
    assert_eq!(out.repairs, 1);
}

#[tokio::test]
async fn gen_fill_gets_defaults_and_rejects_extra_fields() {
    let schema = json!({
        "type": "object",
        "properties": {
            "out": {"type": "string"},
            "width": {"type": "integer", "default": 612}
        },
        "required": ["out"],
        "additionalProperties": false
    });
    let m = Fake::values(&[
        json!({"out": "a.pdf", "color": "red"}),
        json!({"out": "a.pdf"}),
    ]);
    let out = run(&m, request("GEN-FILL", schema), &SlotOptions::default()).await;
    assert_eq!(out.value, Ok(json!({"out": "a.pdf", "width": 612})));
    assert_eq!(out.repairs, 1);
}

#[tokio::test]
async fn gen_edit_rejects_a_silent_truncation() {
    let prior = "- step one\n".repeat(12);
    let options = SlotOptions {
        prior: Some(json!(prior)),
        ..SlotOptions::default()
    };
    let revised = prior.replace("one", "1");
    let m = Fake::values(&[
        json!("- step one\n// ... rest unchanged ..."),
        json!(revised),
    ]);
    let out = run(&m, request("GEN-EDIT", json!({"type": "string"})), &options).await;
    assert_eq!(out.value, Ok(json!(revised)));
    assert_eq!(out.repairs, 1);
    match m.seen()[1].history.last() {
        Some(Turn::Repair { error }) => assert!(error.contains("less than half"), "{error}"),
        other => panic!("{other:?}"),
    }
    // The same value from a GEN-RAW is not checked against a prior.
    let m = Fake::values(&[json!("short")]);
    let out = run(&m, request("GEN-RAW", json!({"type": "string"})), &options).await;
    assert_eq!(out.value, Ok(json!("short")));
}

#[tokio::test]
async fn a_broken_schema_fails_the_slot_before_any_exchange() {
    let m = Fake::values(&[json!("x")]);
    let out = run(
        &m,
        request("GEN-RAW", json!({"type": 7})),
        &SlotOptions::default(),
    )
    .await;
    assert!(out.value.unwrap_err().message.contains("not valid"));
    assert!(m.seen().is_empty());
}

#[tokio::test]
async fn hostile_values_never_panic() {
    let deep = (0..300).fold(json!(0), |acc, _| json!([acc]));
    let hostile = [
        json!(null),
        json!("\u{0}\u{FFFF}```"),
        json!("```\u{1F600}\n\u{301}\n```"),
        json!(f64::MAX),
        json!(-0),
        json!({"": {"": [null]}}),
        json!("…".repeat(100_000)),
        deep,
    ];
    let schemas = [
        json!({"type": "string"}),
        json!({"type": "array", "items": {"type": "string"}}),
        json!({"type": "object", "properties": {"a": {"type": "integer", "default": 1}}}),
    ];
    for opcode in ["GEN-RAW", "GEN-EDIT", "GEN-ENUM", "GEN-FILL", "ROUTE"] {
        for schema in &schemas {
            for v in &hostile {
                let mut r = request(opcode, schema.clone());
                if opcode == "GEN-ENUM" {
                    r.choices = Some(vec!["a".into()]);
                }
                let options = SlotOptions {
                    prior: Some(json!("x".repeat(200))),
                    max_repairs: 0,
                    ..SlotOptions::default()
                };
                let m = Fake::values(std::slice::from_ref(v));
                let _ = run(&m, r, &options).await;
            }
        }
    }
}

#[tokio::test]
async fn a_scripted_model_drives_a_repair_round() {
    let m = crate::llm::ScriptedModel::from_json(
        std::path::Path::new("s.json"),
        json!({"step": [3, "three"]}),
    )
    .unwrap();
    let out = fill(
        &m,
        request("GEN-RAW", json!({"type": "string"})),
        &Echo::default(),
        &SlotOptions::default(),
    )
    .await;
    assert_eq!(out.value, Ok(json!("three")));
    assert_eq!(out.exchanges[1].response["index"], 1);
    // Out of responses: the slot fails naming the file and the id.
    let out = fill(
        &m,
        request("GEN-RAW", json!({"type": "string"})),
        &Echo::default(),
        &SlotOptions::default(),
    )
    .await;
    let err = out.value.unwrap_err();
    assert_eq!(err.model, Some(ModelErrorKind::Exhausted));
    assert!(err.message.contains("s.json") && err.message.contains("`step`"));
}

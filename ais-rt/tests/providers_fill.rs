//! The providers end to end through the Stochastic Unit's `fill`, against a scripted HTTP
//! server on 127.0.0.1: a schema-invalid answer the repair round fixes, an answer that is not
//! JSON at all repaired the same way, one the repairs do not fix, a tool round, and a provider
//! that keeps failing.

use crate::providers_support;

use ais_rt::llm::ModelErrorKind;
use ais_rt::llm::ToolSpec;
use ais_rt::llm::{SlotOptions, SlotToolFuture, SlotTools, fill};
use providers_support::*;
use serde_json::{Value, json};
use std::sync::Mutex;

/// Tools for `fill` that record each call and answer from a fixed text.
#[derive(Default)]
struct RecordingTools {
    calls: Mutex<Vec<(String, Value)>>,
}

impl SlotTools for RecordingTools {
    fn call<'a>(&'a self, name: &'a str, arguments: Value) -> SlotToolFuture<'a> {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_string(), arguments));
        Box::pin(async { json!("the outage started at 9") })
    }
}

#[tokio::test]
async fn through_fill_a_repair_round_fixes_a_schema_invalid_answer() {
    for proto in ALL {
        let (server, base) = serve(vec![
            proto.answer(json!({"value": "urgent"})),
            proto.answer(json!({"value": "high"})),
        ])
        .await;
        let model = model(proto, &base, fast_options());
        let tools = RecordingTools::default();
        let outcome = fill(
            &*model,
            request(enum_schema()),
            &tools,
            &SlotOptions::default(),
        )
        .await;
        assert_eq!(outcome.value, Ok(json!("high")), "{proto:?}");
        assert_eq!(outcome.repairs, 1);
        assert_eq!(outcome.exchanges.len(), 2);
        assert_eq!(
            outcome.usage.completion_tokens, 14,
            "usage is summed over the exchanges"
        );
        let got = received(&server);
        assert_eq!(got.len(), 2);
        let repair = proto.texts(&got[1].body);
        assert!(
            repair.contains("urgent"),
            "{proto:?}: the repair names the bad value: {repair}"
        );
        assert!(
            repair.contains("does not match the schema"),
            "{proto:?}: {repair}"
        );
        for exchange in &outcome.exchanges {
            assert_no_key("an exchange", &serde_json::to_string(exchange).unwrap());
        }
    }
}

#[tokio::test]
async fn through_fill_an_answer_that_is_not_json_gets_the_repair_round_too() {
    // An OpenAI-compatible server whose model answers in prose (a local server that ignores
    // `response_format`), then, told what is wrong, with the JSON.
    let prose = "The priority is high, I would say.";
    let (server, base) = serve(vec![
        ok(json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": prose}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 9},
        })),
        Proto::OpenAi.answer(json!({"value": "high"})),
    ])
    .await;
    let model = model(Proto::OpenAi, &base, fast_options());
    let outcome = fill(
        &*model,
        request(enum_schema()),
        &RecordingTools::default(),
        &SlotOptions::default(),
    )
    .await;
    assert_eq!(outcome.value, Ok(json!("high")), "{outcome:#?}");
    assert_eq!(outcome.repairs, 1);
    let got = received(&server);
    assert_eq!(got.len(), 2);
    let messages = got[1].body["messages"].as_array().unwrap();
    // The prose goes back as the model's turn, then the repair saying it is not JSON.
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(messages[n - 2]["content"], prose);
    assert_eq!(messages[n - 1]["role"], "user");
    let repair = messages[n - 1]["content"].as_str().unwrap();
    assert!(repair.contains("not JSON"), "{repair}");
}

#[tokio::test]
async fn through_fill_an_answer_the_repairs_do_not_fix_is_an_error() {
    for proto in ALL {
        let bad = || proto.answer(json!({"value": "urgent"}));
        let (server, base) = serve(vec![bad(), bad(), bad()]).await;
        let model = model(proto, &base, fast_options());
        let outcome = fill(
            &*model,
            request(enum_schema()),
            &RecordingTools::default(),
            &SlotOptions::default(),
        )
        .await;
        let err = outcome.value.unwrap_err();
        assert!(err.message.contains("2 repair rounds"), "{proto:?}: {err}");
        assert_eq!(err.model, None);
        assert_eq!(outcome.repairs, 2);
        assert_eq!(received(&server).len(), 3);
    }
}

#[tokio::test]
async fn through_fill_a_tool_round_trip_and_a_failing_provider() {
    for proto in ALL {
        let (server, base) = serve(vec![
            proto.tool_call("read_file", json!({"path": "notes.txt"})),
            proto.answer(json!({"value": "high"})),
        ])
        .await;
        let provider = model(proto, &base, fast_options());
        let mut slot = request(enum_schema());
        slot.tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }];
        let tools = RecordingTools::default();
        let outcome = fill(&*provider, slot, &tools, &SlotOptions::default()).await;
        assert_eq!(outcome.value, Ok(json!("high")), "{proto:?}");
        assert_eq!(outcome.tool_rounds, 1);
        assert_eq!(
            *tools.calls.lock().unwrap(),
            vec![("read_file".to_string(), json!({"path": "notes.txt"}))]
        );
        let got = received(&server);
        assert!(got[1].body.to_string().contains("the outage started at 9"));

        // A provider that keeps failing fails the slot with the model's error kind.
        let down = || Answer::Raw(503, vec![], String::new());
        let (_server, base) = serve(vec![down(), down(), down()]).await;
        let failing = model(proto, &base, fast_options());
        let outcome = fill(
            &*failing,
            request(enum_schema()),
            &RecordingTools::default(),
            &SlotOptions::default(),
        )
        .await;
        let err = outcome.value.unwrap_err();
        assert_eq!(
            err.model,
            Some(ModelErrorKind::Transport),
            "{proto:?}: {err}"
        );
        assert!(err.message.contains("503"), "{err}");
    }
}

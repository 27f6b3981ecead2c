//! The three providers against a real HTTP server on 127.0.0.1, started by each test, that
//! speaks the protocol from a script: completions, tool calls, 429 with `Retry-After`, 500s, a
//! response slower than the timeout, malformed bodies, refusals. Every test asserts on the
//! requests the server received (path, headers, the schema sent) and that the key appears in
//! no exchange, no error and no log line.

use crate::providers_support;

use ais_rt::llm::{ModelErrorKind, Reply, ToolCall, ToolSpec, Turn};
use ais_rt::llm::{ProviderOptions, strict_schema};
use providers_support::*;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_scripted_completion_round_trips_with_schema_headers_usage_and_no_key() {
    let logs = capture_logs();
    for proto in ALL {
        let (server, base) = serve(vec![proto.answer(json!({"value": "high"}))]).await;
        let model = model(proto, &base, fast_options());
        let completion = model.complete(&request(enum_schema())).await.unwrap();
        assert_eq!(
            completion.reply,
            Reply::Value {
                value: json!("high")
            },
            "{proto:?}"
        );
        assert_eq!(completion.usage.completion_tokens, 7);
        match proto {
            Proto::Ollama => assert_eq!(completion.usage.cached_tokens, None),
            _ => assert_eq!(completion.usage.cached_tokens, Some(16)),
        }
        assert_eq!(completion.usage.prompt_tokens, 42, "{proto:?}");
        assert_clean(&completion);

        let got = received(&server);
        assert_eq!(got.len(), 1);
        let sent = &got[0];
        assert_eq!(sent.path, proto.path());
        assert_eq!(
            sent.body, completion.exchange.request,
            "the exchange is what was sent"
        );
        assert_eq!(
            proto.schema_sent(&sent.body),
            strict_schema(&enum_schema()).schema
        );
        let texts = proto.texts(&sent.body);
        for part in [
            "Classify the ticket",
            "Outages are always high",
            "The site is down",
            "low, high",
        ] {
            assert!(
                texts.contains(part),
                "{proto:?}: {part} missing from {texts}"
            );
        }
        let header = |name: &str| {
            sent.headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
        };
        match proto {
            Proto::OpenAi => {
                assert_eq!(header("authorization"), Some(format!("Bearer {KEY}")));
                assert_eq!(sent.body["model"], "gpt-test");
            }
            Proto::Ollama => assert_eq!(header("authorization"), None),
            Proto::Anthropic => {
                assert_eq!(header("x-api-key").as_deref(), Some(KEY));
                assert_eq!(header("anthropic-version").as_deref(), Some("2023-06-01"));
                assert_eq!(header("authorization"), None);
                assert_eq!(sent.body["max_tokens"], 512);
            }
        }
        assert!(header("user-agent").unwrap().starts_with("ais/"));
    }
    assert_no_key("the logs", &logs.text());
}

#[tokio::test]
async fn a_429_waits_as_long_as_retry_after_says_then_succeeds() {
    let logs = capture_logs();
    for proto in ALL {
        let limited = Answer::Raw(
            429,
            vec![("retry-after", "1")],
            json!({"error": {"message": "slow down"}}).to_string(),
        );
        let (server, base) = serve(vec![limited, proto.answer(json!({"value": "low"}))]).await;
        let model = model(proto, &base, fast_options());
        let started = Instant::now();
        let completion = model.complete(&request(enum_schema())).await.unwrap();
        let waited = started.elapsed();
        assert_eq!(
            completion.reply,
            Reply::Value {
                value: json!("low")
            }
        );
        assert!(
            waited >= Duration::from_millis(950),
            "{proto:?} waited only {waited:?}"
        );
        assert!(
            waited < Duration::from_secs(4),
            "{proto:?} waited {waited:?}"
        );
        let got = received(&server);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].body, got[1].body,
            "the retry resends the same request"
        );
    }
    let logs = logs.text();
    assert!(logs.contains("retrying"), "each retry is logged: {logs}");
    assert_no_key("the logs", &logs);
}

#[tokio::test]
async fn rate_limits_past_the_retries_and_retry_afters_past_the_deadline_give_up() {
    for proto in ALL {
        let limited = || Answer::Raw(429, vec![], "{}".into());
        let (server, base) = serve(vec![limited(), limited(), limited()]).await;
        let err = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::RateLimited, "{proto:?}: {err}");
        assert_eq!(received(&server).len(), 3, "one try and two retries");

        // A Retry-After longer than what is left of the slot's deadline is not waited out.
        let far = Answer::Raw(429, vec![("retry-after", "3600")], "{}".into());
        let (server, base) = serve(vec![far]).await;
        let started = Instant::now();
        let err = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::RateLimited);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(received(&server).len(), 1);
    }
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    for proto in ALL {
        let failing = || {
            Answer::Raw(
                500,
                vec![],
                json!({"error": {"message": "overloaded"}}).to_string(),
            )
        };
        let (server, base) = serve(vec![
            failing(),
            Answer::Raw(503, vec![], String::new()),
            proto.answer(json!({"value": "high"})),
        ])
        .await;
        let completion = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap();
        assert_eq!(
            completion.reply,
            Reply::Value {
                value: json!("high")
            }
        );
        assert_eq!(received(&server).len(), 3);

        let (server, base) = serve(vec![failing(), failing(), failing()]).await;
        let err = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Transport, "{proto:?}");
        assert!(
            err.message.contains("500") && err.message.contains("overloaded"),
            "{err}"
        );
        assert_eq!(received(&server).len(), 3);
    }
}

#[tokio::test]
async fn client_errors_are_never_retried_and_never_echo_the_key() {
    let logs = capture_logs();
    for proto in ALL {
        for status in [400, 401, 403] {
            // A server that echoes the key: the provider holding it scrubs it (Ollama holds none).
            let echoed = match proto {
                Proto::Ollama => "Incorrect API key provided: <redacted>".to_string(),
                _ => format!("Incorrect API key provided: {KEY}"),
            };
            let echo = json!({"error": {"message": echoed}});
            let (server, base) = serve(vec![Answer::Raw(status, vec![], echo.to_string())]).await;
            let err = model(proto, &base, fast_options())
                .complete(&request(enum_schema()))
                .await
                .unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Protocol, "{proto:?} {status}");
            assert!(err.message.contains(&status.to_string()), "{err}");
            assert!(
                err.message
                    .contains("Incorrect API key provided: <redacted>"),
                "{err}"
            );
            assert_no_key("an error", &err.message);
            assert_eq!(received(&server).len(), 1, "{proto:?} retried a {status}");
        }
    }
    assert_no_key("the logs", &logs.text());
}

#[tokio::test]
async fn a_response_slower_than_the_timeout_fails_as_a_timeout() {
    for proto in ALL {
        let slow = || {
            Answer::Slow(
                Duration::from_secs(3),
                Box::new(proto.answer(json!({"value": "low"}))),
            )
        };
        let (server, base) = serve(vec![slow(), slow()]).await;
        let options = ProviderOptions {
            request_timeout: Duration::from_millis(200),
            max_retries: 1,
            ..fast_options()
        };
        let started = Instant::now();
        let err = model(proto, &base, options)
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Timeout, "{proto:?}: {err}");
        assert!(err.message.contains("request timeout"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            received(&server).len(),
            2,
            "a timed-out request is retried once"
        );

        // The slot's total deadline bounds everything, however long each request may take.
        let (_server, base) = serve(vec![slow()]).await;
        let options = ProviderOptions {
            slot_deadline: Duration::from_millis(300),
            ..fast_options()
        };
        let started = Instant::now();
        let err = model(proto, &base, options)
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Timeout);
        assert!(err.message.contains("deadline"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn malformed_bodies_and_non_json_answers_are_protocol_errors() {
    for proto in ALL {
        let (server, base) = serve(vec![Answer::Raw(200, vec![], "{\"choices\": [".into())]).await;
        let err = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Protocol, "{proto:?}");
        assert!(err.message.contains("not JSON"), "{err}");
        assert_eq!(
            received(&server).len(),
            1,
            "a malformed body is not retried"
        );

        let (_server, base) = serve(vec![ok(json!({"unexpected": true}))]).await;
        let err = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Protocol);
        assert!(err.message.starts_with(proto.spec()), "{err}");
    }
    // A body past the size cap is not read to the end.
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(2 << 20));
    let (_server, base) = serve(vec![Answer::Raw(200, vec![], huge)]).await;
    let err = model(Proto::OpenAi, &base, fast_options())
        .complete(&request(enum_schema()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Protocol);
    assert!(err.message.contains("larger than"), "{err}");
    // An answer whose content is not JSON is the model's misbehaviour, not the protocol's: it
    // comes back as `Reply::Unparsed`, for the slot's repair round.
    for (proto, body) in [
        (
            Proto::OpenAi,
            json!({"choices": [{"message": {"content": "high, I think"}}]}),
        ),
        (
            Proto::Ollama,
            json!({"message": {"content": "high, I think"}}),
        ),
        (
            Proto::Anthropic,
            json!({"content": [{"type": "text", "text": "high, I think"}]}),
        ),
    ] {
        let (_server, base) = serve(vec![ok(body)]).await;
        let reply = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap()
            .reply;
        assert!(
            matches!(&reply, Reply::Unparsed { text, error } if text == "high, I think" && error.contains("high, I think")),
            "{proto:?}: {reply:?}"
        );
    }
}

#[tokio::test]
async fn a_schema_invalid_answer_is_returned_and_the_repair_turn_carries_the_error() {
    for proto in ALL {
        let (server, base) = serve(vec![
            proto.answer(json!({"value": "urgent"})),
            proto.answer(json!({"value": "high"})),
        ])
        .await;
        let model = model(proto, &base, fast_options());
        let mut slot = request(enum_schema());
        // The provider hands on what the model said; the slot's validation judges it.
        let first = model.complete(&slot).await.unwrap();
        assert_eq!(
            first.reply,
            Reply::Value {
                value: json!("urgent")
            }
        );
        let error = "\"urgent\" is not one of [\"low\",\"high\"]";
        slot.history = vec![
            Turn::Assistant {
                value: Some(json!("urgent")),
                tool_calls: vec![],
            },
            Turn::Repair {
                error: error.into(),
            },
        ];
        let second = model.complete(&slot).await.unwrap();
        assert_eq!(
            second.reply,
            Reply::Value {
                value: json!("high")
            }
        );
        let got = received(&server);
        let texts = proto.texts(&got[1].body);
        assert!(
            texts.contains(error),
            "{proto:?}: the repair lost the error: {texts}"
        );
        assert!(
            texts.contains("{\"value\":\"urgent\"}")
                || got[1]
                    .body
                    .to_string()
                    .contains("\"input\":{\"value\":\"urgent\"}"),
            "{proto:?}: the earlier answer is in the history"
        );
        let messages = got[1].body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        match proto {
            Proto::Anthropic => assert_eq!(roles, ["user", "assistant", "user"]),
            _ => assert_eq!(roles, ["system", "user", "assistant", "user"]),
        }
    }
}

#[tokio::test]
async fn a_tool_call_round_trip() {
    for proto in ALL {
        let (server, base) = serve(vec![
            proto.tool_call("read_file", json!({"path": "notes.txt"})),
            proto.answer(json!({"value": "high"})),
        ])
        .await;
        let model = model(proto, &base, fast_options());
        let mut slot = request(enum_schema());
        slot.tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }];
        let first = model.complete(&slot).await.unwrap();
        let call = ToolCall {
            id: proto.call_id().into(),
            name: "read_file".into(),
            arguments: json!({"path": "notes.txt"}),
        };
        assert_eq!(
            first.reply,
            Reply::ToolCalls {
                calls: vec![call.clone()]
            },
            "{proto:?}"
        );
        assert_eq!(first.usage.prompt_tokens, 30);
        slot.history = vec![
            Turn::Assistant {
                value: None,
                tool_calls: vec![call],
            },
            Turn::ToolResult {
                call_id: proto.call_id().into(),
                name: "read_file".into(),
                output: json!("the outage started at 9"),
            },
        ];
        let second = model.complete(&slot).await.unwrap();
        assert_eq!(
            second.reply,
            Reply::Value {
                value: json!("high")
            }
        );

        let got = received(&server);
        assert_eq!(got.len(), 2);
        let tools = got[0].body["tools"].as_array().unwrap();
        let offered = |name: &str| {
            tools
                .iter()
                .any(|t| t.to_string().contains(&format!("\"name\":\"{name}\"")))
        };
        assert!(offered("read_file"), "{proto:?}: {tools:?}");
        let body = &got[1].body;
        let text = body.to_string();
        assert!(
            text.contains("the outage started at 9"),
            "{proto:?}: the tool result was not sent"
        );
        match proto {
            Proto::OpenAi => {
                let messages = body["messages"].as_array().unwrap();
                assert_eq!(messages[2]["tool_calls"][0]["id"], "call_abc");
                assert_eq!(
                    messages[2]["tool_calls"][0]["function"]["arguments"],
                    "{\"path\":\"notes.txt\"}"
                );
                assert_eq!(messages[3]["role"], "tool");
                assert_eq!(messages[3]["tool_call_id"], "call_abc");
            }
            Proto::Ollama => {
                let messages = body["messages"].as_array().unwrap();
                assert_eq!(
                    messages[2]["tool_calls"][0]["function"]["arguments"]["path"],
                    "notes.txt"
                );
                assert_eq!(messages[3]["role"], "tool");
                assert_eq!(messages[3]["tool_name"], "read_file");
            }
            Proto::Anthropic => {
                let messages = body["messages"].as_array().unwrap();
                assert_eq!(messages[1]["content"][0]["type"], "tool_use");
                assert_eq!(messages[1]["content"][0]["id"], "call_abc");
                assert_eq!(messages[2]["content"][0]["type"], "tool_result");
                assert_eq!(messages[2]["content"][0]["tool_use_id"], "call_abc");
            }
        }
    }
}

#[tokio::test]
async fn object_results_go_unwrapped_and_a_missing_server_says_what_to_do() {
    let schema = json!({
        "type": "object",
        "properties": {"title": {"type": "string"}, "steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["title"]
    });
    for proto in ALL {
        let value = json!({"title": "Fix it", "steps": ["look", "fix"]});
        let (server, base) = serve(vec![proto.answer(value.clone())]).await;
        let completion = model(proto, &base, fast_options())
            .complete(&request(schema.clone()))
            .await
            .unwrap();
        assert_eq!(completion.reply, Reply::Value { value });
        let sent = proto.schema_sent(&received(&server)[0].body);
        assert_eq!(sent["required"], json!(["title", "steps"]));
        assert_eq!(sent["additionalProperties"], json!(false));
    }
    // Nothing listens on this port once the listener is dropped.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let options = ProviderOptions {
        max_retries: 1,
        ..fast_options()
    };
    let err = model(Proto::Ollama, &base, options)
        .complete(&request(enum_schema()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Transport);
    assert!(err.message.contains("ollama serve"), "{err}");
}

/// A live exchange against a real provider: runs only when `AIS_LIVE_MODEL` names one (e.g.
/// `openai:gpt-4o-mini` with `OPENAI_API_KEY` set, or `ollama:llama3.2` with Ollama running).
#[tokio::test]
async fn live_provider_answers_an_enum_slot() {
    let Ok(spec) = std::env::var("AIS_LIVE_MODEL") else {
        eprintln!("skipped: set AIS_LIVE_MODEL (and the provider's key) to run the live check");
        return;
    };
    let model = ais_rt::llm::from_spec(&spec).unwrap();
    let completion = model.complete(&request(enum_schema())).await.unwrap();
    let Reply::Value { value } = completion.reply else {
        panic!("{spec} answered with tool calls");
    };
    assert!(value == "high" || value == "low", "{spec} answered {value}");
    assert!(completion.usage.prompt_tokens > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_siblings_share_one_provider_and_each_gets_its_own_answer() {
    const SIBLINGS: usize = 64;
    for proto in ALL {
        let (server, base) = serve_fn(move |body| {
            // Answer each sibling with its own number (its index + 1), read back from its prompt.
            let text = body.to_string();
            let index = sibling_number(&text).map_or("none".to_owned(), |n| n.to_string());
            proto.answer(json!({ "value": index }))
        })
        .await;
        let provider = model(proto, &base, fast_options());
        let mut schema = request(json!({"type": "string"}));
        schema.choices = None;
        let started = Instant::now();
        let calls = (0..SIBLINGS).map(|i| {
            let provider = provider.clone();
            let mut slot = schema.clone();
            slot.sibling = Some(i);
            tokio::spawn(async move { provider.complete(&slot).await })
        });
        let mut answers = Vec::new();
        for call in calls.collect::<Vec<_>>() {
            answers.push(call.await.unwrap().unwrap().reply);
        }
        let elapsed = started.elapsed();
        for (i, reply) in answers.into_iter().enumerate() {
            assert_eq!(
                reply,
                Reply::Value {
                    value: json!((i + 1).to_string())
                },
                "{proto:?}"
            );
        }
        assert_eq!(received(&server).len(), SIBLINGS);
        eprintln!("{proto:?}: {SIBLINGS} concurrent exchanges on loopback in {elapsed:?}");
    }
}

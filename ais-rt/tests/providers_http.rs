//! The three providers against a real HTTP server on 127.0.0.1, started by each test, that
//! speaks the protocol from a script: completions, tool calls, 429 with `Retry-After`, 500s, a
//! response slower than the timeout, malformed bodies, refusals. Every test asserts on the
//! requests the server received (path, headers, the schema sent) and that the key appears in
//! no exchange, no error and no log line.

use ais_rt::model::providers::{ProviderOptions, from_spec_with, schema::strict_schema};
use ais_rt::model::slot::{SlotOptions, SlotToolFuture, SlotTools, fill};
use ais_rt::model::{
    Completion, Model, ModelError, ModelErrorKind, Operand, Reply, SlotRequest, ToolCall, ToolSpec,
    Turn,
};
use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "sk-test-SECRET-4242";

/// One scripted answer of the server.
#[derive(Clone)]
enum Answer {
    /// A status, extra headers and a body (sent as is).
    Raw(u16, Vec<(&'static str, &'static str)>, String),
    /// Wait, then answer.
    Slow(Duration, Box<Answer>),
}

fn ok(body: Value) -> Answer {
    Answer::Raw(200, vec![], body.to_string())
}

/// A request the server received.
#[derive(Debug)]
struct Received {
    path: String,
    headers: HeaderMap,
    body: Value,
}

#[derive(Default)]
struct Server {
    script: Mutex<VecDeque<Answer>>,
    received: Mutex<Vec<Received>>,
}

async fn handle(server: Arc<Server>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    server.received.lock().unwrap().push(Received {
        path: uri.path().to_string(),
        headers,
        body,
    });
    let next = server.script.lock().unwrap().pop_front();
    let mut answer = next.unwrap_or(Answer::Raw(599, vec![], "script exhausted".into()));
    loop {
        match answer {
            Answer::Slow(wait, then) => {
                tokio::time::sleep(wait).await;
                answer = *then;
            }
            Answer::Raw(status, extra, body) => {
                let status = StatusCode::from_u16(status).unwrap();
                let mut response = (status, body).into_response();
                response
                    .headers_mut()
                    .insert("content-type", "application/json".parse().unwrap());
                for (name, value) in extra {
                    response.headers_mut().insert(name, value.parse().unwrap());
                }
                return response;
            }
        }
    }
}

/// Starts a server on 127.0.0.1 that answers from `script`.
async fn serve(script: Vec<Answer>) -> (Arc<Server>, String) {
    let server = Arc::new(Server {
        script: Mutex::new(script.into()),
        received: Mutex::default(),
    });
    let state = server.clone();
    let app = Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
        handle(state.clone(), uri, headers, body)
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (server, format!("http://{addr}"))
}

/// Captures every log line (all levels) while the guard lives.
struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() -> Logs {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Sink(buffer.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .finish();
    Logs {
        buffer,
        _guard: tracing::subscriber::set_default(subscriber),
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap()).into_owned()
    }
}

#[derive(Clone, Copy, Debug)]
enum Proto {
    OpenAi,
    Ollama,
    Anthropic,
}

const ALL: [Proto; 3] = [Proto::OpenAi, Proto::Ollama, Proto::Anthropic];

impl Proto {
    fn spec(self) -> &'static str {
        match self {
            Proto::OpenAi => "openai:gpt-test",
            Proto::Ollama => "ollama:llama-test",
            Proto::Anthropic => "anthropic:claude-test",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Proto::OpenAi => "/v1/chat/completions",
            Proto::Ollama => "/api/chat",
            Proto::Anthropic => "/v1/messages",
        }
    }

    fn env(self, base: &str) -> HashMap<String, String> {
        let pairs: Vec<(&str, String)> = match self {
            Proto::OpenAi => vec![
                ("OPENAI_API_KEY", KEY.into()),
                ("OPENAI_BASE_URL", format!("{base}/v1")),
            ],
            Proto::Ollama => vec![("OLLAMA_HOST", base.into())],
            Proto::Anthropic => vec![
                ("ANTHROPIC_API_KEY", KEY.into()),
                ("ANTHROPIC_BASE_URL", base.into()),
            ],
        };
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// A successful answer carrying `value` as the protocol carries a result (wrapped).
    fn answer(self, wrapped: Value) -> Answer {
        ok(match self {
            Proto::OpenAi => json!({
                "id": "chatcmpl-1",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": wrapped.to_string()}}],
                "usage": {"prompt_tokens": 42, "completion_tokens": 7,
                    "prompt_tokens_details": {"cached_tokens": 16}},
            }),
            Proto::Ollama => json!({
                "model": "llama-test", "done": true, "done_reason": "stop",
                "message": {"role": "assistant", "content": wrapped.to_string()},
                "prompt_eval_count": 42, "eval_count": 7,
            }),
            Proto::Anthropic => json!({
                "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "answer", "input": wrapped}],
                "usage": {"input_tokens": 26, "output_tokens": 7, "cache_read_input_tokens": 16},
            }),
        })
    }

    /// An answer asking for one call of `tool`.
    fn tool_call(self, tool: &str, arguments: Value) -> Answer {
        ok(match self {
            Proto::OpenAi => json!({
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_abc", "type": "function",
                        "function": {"name": tool, "arguments": arguments.to_string()}}]}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 5},
            }),
            Proto::Ollama => json!({
                "done": true,
                "message": {"role": "assistant", "content": "",
                    "tool_calls": [{"function": {"name": tool, "arguments": arguments}}]},
                "prompt_eval_count": 30, "eval_count": 5,
            }),
            Proto::Anthropic => json!({
                "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "call_abc", "name": tool, "input": arguments}],
                "usage": {"input_tokens": 30, "output_tokens": 5},
            }),
        })
    }

    /// The call id the provider reports for [`Proto::tool_call`].
    fn call_id(self) -> &'static str {
        match self {
            Proto::Ollama => "call_0",
            _ => "call_abc",
        }
    }

    /// The schema the request carried.
    fn schema_sent(self, body: &Value) -> Value {
        match self {
            Proto::OpenAi => {
                assert_eq!(body["response_format"]["type"], "json_schema");
                assert_eq!(body["response_format"]["json_schema"]["strict"], true);
                body["response_format"]["json_schema"]["schema"].clone()
            }
            Proto::Ollama => {
                assert_eq!(body["stream"], false);
                body["format"].clone()
            }
            Proto::Anthropic => {
                let tools = body["tools"].as_array().unwrap();
                let answer = tools.iter().find(|t| t["name"] == "answer").unwrap();
                if tools.len() == 1 {
                    assert_eq!(
                        body["tool_choice"],
                        json!({"type": "tool", "name": "answer"})
                    );
                } else {
                    assert_eq!(body["tool_choice"], json!({"type": "any"}));
                }
                answer["input_schema"].clone()
            }
        }
    }

    /// Every message text of a request body, joined.
    fn texts(self, body: &Value) -> String {
        let mut out = body["system"].as_str().unwrap_or("").to_string();
        for message in body["messages"].as_array().unwrap() {
            match &message["content"] {
                Value::String(s) => out.push_str(s),
                Value::Array(blocks) => {
                    for block in blocks {
                        for key in ["text", "content"] {
                            if let Some(s) = block[key].as_str() {
                                out.push_str(s);
                            }
                        }
                    }
                }
                _ => {}
            }
            out.push('\n');
        }
        out
    }
}

fn fast_options() -> ProviderOptions {
    ProviderOptions {
        request_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        slot_deadline: Duration::from_secs(20),
        max_retries: 2,
        min_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        max_tokens: 512,
        max_response_bytes: 1 << 20,
    }
}

fn model(proto: Proto, base: &str, options: ProviderOptions) -> Arc<dyn Model> {
    let env = proto.env(base);
    let lookup = move |name: &str| env.get(name).cloned();
    from_spec_with(proto.spec(), &lookup, options).unwrap()
}

fn request(schema: Value) -> SlotRequest {
    SlotRequest {
        instruction: "triage".into(),
        opcode: "GEN-ENUM".into(),
        doc: "Classify the ticket by urgency.".into(),
        knowledge: vec![("policy".into(), "Outages are always high.".into())],
        operands: vec![Operand {
            name: "ticket".into(),
            ty: "str".into(),
            doc: Some("The ticket text".into()),
            value: json!("The site is down"),
        }],
        schema,
        choices: Some(vec!["low".into(), "high".into()]),
        tools: vec![],
        sibling: None,
        history: vec![],
    }
}

fn enum_schema() -> Value {
    json!({"type": "string", "enum": ["low", "high"]})
}

fn assert_no_key(what: &str, text: &str) {
    assert!(!text.contains(KEY), "the key leaked into {what}: {text}");
    assert!(
        !text.contains("SECRET"),
        "part of the key leaked into {what}"
    );
}

fn assert_clean(completion: &Completion) {
    assert_no_key("the exchange", &serde_json::to_string(completion).unwrap());
    let text = serde_json::to_string(&completion.exchange).unwrap();
    assert!(!text.to_ascii_lowercase().contains("authorization"));
    assert!(!text.to_ascii_lowercase().contains("x-api-key"));
}

fn received(server: &Server) -> Vec<Received> {
    std::mem::take(&mut *server.received.lock().unwrap())
}

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
    // An answer whose content is not JSON.
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
        let err: ModelError = model(proto, &base, fast_options())
            .complete(&request(enum_schema()))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Protocol);
        assert!(err.message.contains("high, I think"), "{err}");
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

/// A live exchange against a real provider: runs only when `AIS_LIVE_MODEL` names one (e.g.
/// `openai:gpt-4o-mini` with `OPENAI_API_KEY` set, or `ollama:llama3.2` with Ollama running).
#[tokio::test]
async fn live_provider_answers_an_enum_slot() {
    let Ok(spec) = std::env::var("AIS_LIVE_MODEL") else {
        eprintln!("skipped: set AIS_LIVE_MODEL (and the provider's key) to run the live check");
        return;
    };
    let model = ais_rt::model::providers::from_spec(&spec).unwrap();
    let completion = model.complete(&request(enum_schema())).await.unwrap();
    let Reply::Value { value } = completion.reply else {
        panic!("{spec} answered with tool calls");
    };
    assert!(value == "high" || value == "low", "{spec} answered {value}");
    assert!(completion.usage.prompt_tokens > 0);
}

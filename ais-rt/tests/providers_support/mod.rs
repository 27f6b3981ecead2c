//! What the provider tests share: a scripted HTTP server on 127.0.0.1 that speaks each
//! protocol, a log capture, and the slot request the tests send.
#![allow(dead_code)] // each test binary uses a different part

use ais_rt::llm::{Completion, Model, Operand, SlotRequest};
use ais_rt::llm::{ProviderOptions, from_spec_with};
use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const KEY: &str = "sk-test-SECRET-4242";

/// A program of one GEN-RAW slot writing `answer` from the task: what the streaming tests run.
pub const ONE_SLOT: &str = r#"walker:
  name: One
  carries:
    task: {type: str, role: input}
    answer: {type: str, produced_by: write}
nodes:
  - {id: write, type: GEN-RAW, reads: [task], writes: [answer], doc: Write the answer.}
  - {id: done, type: TERMINAL, reads: [answer]}
edges:
  - {from: write, to: done}
"#;

/// One scripted answer of the server.
#[derive(Clone)]
pub enum Answer {
    /// A status, extra headers and a body (sent as is).
    Raw(u16, Vec<(&'static str, &'static str)>, String),
    /// Wait, then answer.
    Slow(Duration, Box<Answer>),
    /// A 200 streamed with `content-type`: each piece sent after its wait; with `cut`, the
    /// connection is dropped after the last piece instead of ending the body.
    Stream {
        content_type: &'static str,
        pieces: Vec<(Duration, String)>,
        cut: bool,
    },
}

pub fn ok(body: Value) -> Answer {
    Answer::Raw(200, vec![], body.to_string())
}

/// A request the server received.
#[derive(Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
pub struct Server {
    received: Mutex<Vec<Received>>,
}

/// Sends `answer`, after its wait when it has one.
pub async fn respond(mut answer: Answer) -> Response {
    loop {
        match answer {
            Answer::Slow(wait, then) => {
                tokio::time::sleep(wait).await;
                answer = *then;
            }
            Answer::Stream {
                content_type,
                pieces,
                cut,
            } => {
                let body = futures_util::stream::unfold(
                    (pieces.into_iter(), cut),
                    |(mut rest, cut)| async move {
                        match rest.next() {
                            Some((wait, piece)) => {
                                tokio::time::sleep(wait).await;
                                Some((Ok(Bytes::from(piece)), (rest, cut)))
                            }
                            None if cut => Some((
                                Err(std::io::Error::other("the stream is cut")),
                                (rest, false),
                            )),
                            None => None,
                        }
                    },
                );
                let mut response = axum::body::Body::from_stream(body).into_response();
                response
                    .headers_mut()
                    .insert("content-type", content_type.parse().unwrap());
                return response;
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

/// Starts a server on 127.0.0.1 that answers each request body with `answer(body)`.
pub async fn serve_fn(
    answer: impl Fn(&Value) -> Answer + Send + Sync + 'static,
) -> (Arc<Server>, String) {
    let server = Arc::new(Server::default());
    let state = server.clone();
    let answer = Arc::new(answer);
    let app = Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
        let (state, answer) = (state.clone(), answer.clone());
        async move {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let reply = answer(&body);
            state.received.lock().unwrap().push(Received {
                path: uri.path().to_string(),
                headers,
                body,
            });
            respond(reply).await
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (server, format!("http://{addr}"))
}

/// A server on a runtime of its own, for a test whose code under test runs in another
/// process (the `ais` binary): it keeps answering while the test blocks.
pub struct OwnServer {
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub base: String,
    pub server: Arc<Server>,
    _runtime: tokio::runtime::Runtime,
}

/// [`serve_fn`] on a runtime of its own.
pub fn serve_blocking(answer: impl Fn(&Value) -> Answer + Send + Sync + 'static) -> OwnServer {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (server, base) = runtime.block_on(serve_fn(answer));
    OwnServer {
        base,
        server,
        _runtime: runtime,
    }
}

/// Starts a server on 127.0.0.1 that answers from `script`.
pub async fn serve(script: Vec<Answer>) -> (Arc<Server>, String) {
    let script = Mutex::new(VecDeque::from(script));
    serve_fn(move |_| {
        let next = script.lock().unwrap().pop_front();
        next.unwrap_or(Answer::Raw(599, vec![], "script exhausted".into()))
    })
    .await
}

/// The sibling number (counted from 1) a SPAWN sibling's prompt tells the model, if it has one.
pub fn sibling_number(prompt: &str) -> Option<usize> {
    prompt
        .split("You are sibling ")
        .nth(1)?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// Captures every log line (all levels) this thread emits while the guard lives.
///
/// The suite's tests share one process, so the capture is one process-wide subscriber, installed
/// once, that writes each event to the buffer of the thread that emitted it (if that thread is
/// capturing). A subscriber per test (`set_default`) loses events: tracing caches each log
/// line's interest process-wide, and a line first reached on a thread that does not capture is
/// cached as "never" for every thread. Here every line's interest is "sometimes", decided per
/// event by whether its thread captures.
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
}

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Arc<Mutex<Vec<u8>>>>> =
        const { std::cell::RefCell::new(None) };
}

fn capturing() -> bool {
    CAPTURE.with(|c| c.borrow().is_some())
}

/// Writes to the capturing buffer of the current thread, if any.
pub struct Sink;

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|c| {
            if let Some(buffer) = &*c.borrow() {
                buffer.lock().unwrap().extend_from_slice(buf);
            }
        });
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn capture_logs() -> Logs {
    static INSTALLED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(|| {
        use tracing_subscriber::layer::SubscriberExt;
        let only_capturing_threads =
            tracing_subscriber::filter::dynamic_filter_fn(|_, _| capturing())
                .with_callsite_filter(|_| tracing::subscriber::Interest::sometimes());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(|| Sink)
            .finish()
            .with(only_capturing_threads);
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other global subscriber in the provider tests");
        // A line first reached while the subscriber was being installed keeps the interest
        // it had before; recompute them all now that it is.
        tracing::callsite::rebuild_interest_cache();
    });
    let buffer = Arc::new(Mutex::new(Vec::new()));
    CAPTURE.with(|c| *c.borrow_mut() = Some(buffer.clone()));
    Logs { buffer }
}

impl Drop for Logs {
    fn drop(&mut self) {
        CAPTURE.with(|c| *c.borrow_mut() = None);
    }
}

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap()).into_owned()
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Proto {
    OpenAi,
    Ollama,
    Anthropic,
}

pub const ALL: [Proto; 3] = [Proto::OpenAi, Proto::Ollama, Proto::Anthropic];

impl Proto {
    pub fn spec(self) -> &'static str {
        match self {
            Proto::OpenAi => "openai:gpt-test",
            Proto::Ollama => "ollama:llama-test",
            Proto::Anthropic => "anthropic:claude-test",
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Proto::OpenAi => "/v1/chat/completions",
            Proto::Ollama => "/api/chat",
            Proto::Anthropic => "/v1/messages",
        }
    }

    pub fn env(self, base: &str) -> HashMap<String, String> {
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
    pub fn answer(self, wrapped: Value) -> Answer {
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

    /// A streamed answer carrying `value` (wrapped, as [`Proto::answer`]), its answer text cut
    /// into `n` pieces sent `gap` apart; with `cut`, the connection drops after the first
    /// half of the pieces. Returns the answer and the text pieces as the model wrote them.
    pub fn streamed(
        self,
        wrapped: Value,
        n: usize,
        gap: Duration,
        cut: bool,
    ) -> (Answer, Vec<String>) {
        let text = wrapped.to_string();
        let chars: Vec<char> = text.chars().collect();
        let size = chars.len().div_ceil(n.max(1)).max(1);
        let mut pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
        if cut {
            pieces.truncate(pieces.len() / 2);
        }
        let sse = |event: Option<&str>, data: Value| match event {
            Some(e) => format!("event: {e}\ndata: {data}\n\n"),
            None => format!("data: {data}\n\n"),
        };
        let mut events: Vec<String> = Vec::new();
        let content_type = match self {
            Proto::OpenAi => {
                for p in &pieces {
                    events.push(sse(
                        None,
                        json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": p}}]}),
                    ));
                }
                events.push(sse(
                    None,
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                ));
                events.push(sse(
                    None,
                    json!({"choices": [], "usage": {"prompt_tokens": 42, "completion_tokens": 7}}),
                ));
                events.push("data: [DONE]\n\n".to_owned());
                "text/event-stream"
            }
            Proto::Anthropic => {
                events.push(sse(Some("message_start"), json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 26, "output_tokens": 1}}})));
                events.push(sse(Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "answer", "input": {}}})));
                for p in &pieces {
                    events.push(sse(Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}})));
                }
                events.push(sse(
                    Some("content_block_stop"),
                    json!({"type": "content_block_stop", "index": 0}),
                ));
                events.push(sse(Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}})));
                events.push(sse(Some("message_stop"), json!({"type": "message_stop"})));
                "text/event-stream"
            }
            Proto::Ollama => {
                for p in &pieces {
                    events.push(format!(
                        "{}\n",
                        json!({"message": {"role": "assistant", "content": p}, "done": false})
                    ));
                }
                events.push(format!("{}\n", json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 42, "eval_count": 7})));
                "application/x-ndjson"
            }
        };
        if cut {
            // Only the pieces' events go out before the drop: no end marker.
            let keep = match self {
                Proto::Anthropic => 2 + pieces.len(),
                _ => pieces.len(),
            };
            events.truncate(keep);
        }
        let answer = Answer::Stream {
            content_type,
            pieces: events.into_iter().map(|e| (gap, e)).collect(),
            cut,
        };
        (answer, pieces)
    }

    /// An answer asking for one call of `tool`.
    pub fn tool_call(self, tool: &str, arguments: Value) -> Answer {
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
    pub fn call_id(self) -> &'static str {
        match self {
            Proto::Ollama => "call_0",
            _ => "call_abc",
        }
    }

    /// The schema the request carried.
    pub fn schema_sent(self, body: &Value) -> Value {
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
    pub fn texts(self, body: &Value) -> String {
        // Anthropic's system is a list of text blocks (the last marked cacheable).
        let mut out = match &body["system"] {
            Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
            other => other.as_str().unwrap_or("").to_string(),
        };
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

pub fn fast_options() -> ProviderOptions {
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

pub fn model(proto: Proto, base: &str, options: ProviderOptions) -> Arc<dyn Model> {
    let env = proto.env(base);
    let lookup = move |name: &str| env.get(name).cloned();
    from_spec_with(proto.spec(), &lookup, options).unwrap()
}

pub fn request(schema: Value) -> SlotRequest {
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
        siblings: None,
        history: vec![],
    }
}

pub fn enum_schema() -> Value {
    json!({"type": "string", "enum": ["low", "high"]})
}

pub fn assert_no_key(what: &str, text: &str) {
    assert!(!text.contains(KEY), "the key leaked into {what}: {text}");
    assert!(
        !text.contains("SECRET"),
        "part of the key leaked into {what}"
    );
}

pub fn assert_clean(completion: &Completion) {
    assert_no_key("the exchange", &serde_json::to_string(completion).unwrap());
    let text = serde_json::to_string(&completion.exchange).unwrap();
    assert!(!text.to_ascii_lowercase().contains("authorization"));
    assert!(!text.to_ascii_lowercase().contains("x-api-key"));
}

pub fn received(server: &Server) -> Vec<Received> {
    std::mem::take(&mut *server.received.lock().unwrap())
}

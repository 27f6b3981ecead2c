//! Tests of the trace sinks and the scrubber.

use super::*;
use crate::llm::Exchange;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::sync::{Arc, Mutex};

const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
const ENV_SECRET: &str = "ollama-local-credential-9f8e7d";

fn event(step: u64) -> StepEvent {
    StepEvent {
        step,
        sub: Vec::new(),
        instruction: "draft".into(),
        opcode: "GEN-RAW".into(),
        unit: "model",
        sibling: None,
        operands: vec![("task".into(), json!("write a plan"))],
        written: vec![("plan".into(), json!("# Plan"))],
        tool: None,
        slot: Some(SlotTrace {
            model: "openai:gpt-4o-mini".into(),
            scripted: false,
            exchanges: vec![Exchange {
                request: json!({
                    "headers": {
                        "Authorization": format!("Bearer {KEY}"),
                        "x-api-key": KEY,
                        "Content-Type": "application/json",
                    },
                    "messages": [{"role": "user", "content": format!("my key is {KEY}, the other is {ENV_SECRET}")}],
                    "note": "Authorization: Basic dXNlcjpwYXNzd29yZA==",
                }),
                response: json!({"choices": [{"message": {"content": "# Plan"}}], "usage": {"prompt_tokens": 12}}),
            }],
            parsed: Some(json!("# Plan")),
            repairs: 0,
            tool_rounds: 0,
            usage: Default::default(),
            ..SlotTrace::default()
        }),
        error: None,
        started_ms: 1,
        elapsed_us: 2,
    }
}

fn scrubber() -> Scrubber {
    Scrubber::from_vars([
        (OsString::from("OLLAMA_API_KEY"), OsString::from(ENV_SECRET)),
        (OsString::from("SHORT_TOKEN"), OsString::from("abc")),
        (OsString::from("HOME"), OsString::from("/home/someone-long")),
    ])
}

fn assert_clean(text: &str) {
    for secret in [KEY, ENV_SECRET, "dXNlcjpwYXNzd29yZA=="] {
        assert!(!text.contains(secret), "`{secret}` leaked into: {text}");
    }
}

#[test]
fn no_key_or_authorization_value_reaches_the_json_lines_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.jsonl");
    let sink = JsonLinesSink::with_scrubber(&path, scrubber()).unwrap();
    sink.event(&event(1));
    sink.event(&event(2));
    assert_eq!(sink.error(), None);
    // Flushed per event: readable while the sink is still open.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_clean(&text);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["step"], 2);
    let request = &lines[0]["slot"]["exchanges"][0]["request"];
    assert_eq!(request["headers"]["Authorization"], REDACTED);
    assert_eq!(request["headers"]["x-api-key"], REDACTED);
    assert_eq!(request["headers"]["Content-Type"], "application/json");
    assert_eq!(
        request["messages"][0]["content"],
        "my key is [redacted], the other is [redacted]"
    );
    assert_eq!(request["note"], "Authorization: Basic [redacted]");
    // What is not a secret is kept.
    assert_eq!(lines[0]["written"][0][1], "# Plan");
    assert_eq!(
        lines[0]["slot"]["exchanges"][0]["response"]["usage"]["prompt_tokens"],
        12
    );
}

#[test]
fn no_key_or_authorization_value_reaches_tracing() {
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        TracingSink::with_scrubber(scrubber()).event(&event(7));
    });
    let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("ais::trace") && text.contains("step=7"),
        "{text}"
    );
    assert!(text.contains("instruction=draft"), "{text}");
    assert_clean(&text);
}

#[test]
fn the_scrubber_knows_its_patterns_and_leaves_the_rest() {
    let s = Scrubber::with_secrets(vec!["hunter2-but-longer".into(), String::new()]);
    for plain in [
        "plain text, sk-short, Bearer",
        "Basic instructions for the bearer of bad news",
        "the authorization step",
    ] {
        assert_eq!(s.scrub_str(plain), None, "{plain}");
    }
    assert_eq!(
        s.scrub_str("Bearer abcdefghijklmnopqrst and sk-ant-0123456789abcdefXYZ")
            .as_deref(),
        Some("Bearer [redacted] and [redacted]")
    );
    assert_eq!(
        s.scrub_str(r#"{"authorization": "token ghp_0123456789"}"#)
            .as_deref(),
        Some(r#"{"authorization": "token [redacted]"}"#)
    );
    assert_eq!(
        s.scrub_str("pw=hunter2-but-longer!").as_deref(),
        Some("pw=[redacted]!")
    );
    let mut v = json!({"api_key": 12345, "Cookie": "a=b", "apiKeyHint": "x", "password": null});
    s.scrub(&mut v);
    assert_eq!(
        v,
        json!({"api_key": REDACTED, "Cookie": REDACTED, "apiKeyHint": "x", "password": null})
    );
    let picked = scrubber();
    assert_eq!(picked.secrets, vec![ENV_SECRET.to_owned()]);
}

#[test]
fn a_deep_value_is_scrubbed_without_recursion() {
    let mut v = (0..100).fold(json!(format!("Bearer {KEY}")), |acc, _| json!([acc]));
    Scrubber::default().scrub(&mut v);
    assert_clean(&v.to_string());
}

#[test]
fn a_failed_write_is_kept_and_later_events_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let sink = JsonLinesSink::with_scrubber(&path, Scrubber::default()).unwrap();
    // Replace the file handle with a read-only one so that writes fail.
    {
        let mut state = sink.state.lock().unwrap();
        state.0 = std::fs::File::open(&path).unwrap();
    }
    sink.event(&event(1));
    sink.event(&event(2));
    let err = sink.error().unwrap();
    assert!(err.contains("t.jsonl") && err.contains("step 1"), "{err}");
    assert!(JsonLinesSink::create(&dir.path().join("no/such/dir/t.jsonl")).is_err());
}

#[test]
fn a_tee_hands_each_event_to_every_sink() {
    struct Count(Mutex<u64>);
    impl TraceSink for Count {
        fn event(&self, e: &StepEvent) {
            *self.0.lock().unwrap() += e.step;
        }
    }
    let a = Arc::new(Count(Mutex::new(0)));
    let b = Arc::new(Count(Mutex::new(0)));
    let tee = Tee(vec![a.clone(), b.clone(), Arc::new(NoTrace)]);
    tee.event(&event(3));
    assert_eq!((*a.0.lock().unwrap(), *b.0.lock().unwrap()), (3, 3));
}

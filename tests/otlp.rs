//! `ais run --otlp URL` against a collector written here: a loopback HTTP server that decodes
//! each OTLP `ExportTraceServiceRequest` (protobuf) and checks the trace of a real run — span
//! names, parent links and the GenAI and `ais.` attributes; message contents only when asked;
//! a priced run's cost on its slots' and its own span.

use crate::providers_support;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// One request the collector received: its path, content type and decoded body.
type Received = Arc<Mutex<Vec<(String, String, ExportTraceServiceRequest)>>>;

/// A collector on loopback; returns its base URL and what it received.
fn collector() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got: Received = Arc::default();
    let keep = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let (mut length, mut kind) = (0usize, String::new());
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                let (name, value) = h.split_once(':').unwrap();
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "content-type" => kind = value.trim().to_owned(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let request =
                ExportTraceServiceRequest::decode(&body[..]).expect("an OTLP trace request");
            keep.lock().unwrap().push((path, kind, request));
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
            );
        }
    });
    (url, got)
}

fn run_plans(url: &str, extra: &[&str]) -> std::process::Output {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "examples/writing_plans.agir",
        "--task",
        "Add a CSV export (key sk-abcdefghijklmnop0123456789)",
        "--model",
        "scripted:examples/writing_plans.responses.json",
        "--out",
        out.path().to_str().unwrap(),
        "--otlp",
        url,
    ];
    args.extend(extra);
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(&args)
        .current_dir(root)
        .env_remove("AIS_MODEL")
        .output()
        .unwrap()
}

/// Runs `ais` with `args` in `dir` (no model or key from the environment): it must exit 0.
fn ais_ok(dir: &std::path::Path, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn attr<'a>(span: &'a Span, key: &str) -> Option<&'a Any> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn text(span: &Span, key: &str) -> String {
    match attr(span, key) {
        Some(Any::StringValue(s)) => s.clone(),
        other => panic!("`{}` has no string `{key}`: {other:?}", span.name),
    }
}

fn spans(got: &Received) -> Vec<Span> {
    got.lock()
        .unwrap()
        .iter()
        .flat_map(|(_, _, r)| r.resource_spans.iter())
        .flat_map(|r| r.scope_spans.iter())
        .flat_map(|s| s.spans.iter().cloned())
        .collect()
}

#[test]
fn a_run_is_one_trace_of_genai_spans() {
    let (url, got) = collector();
    let o = run_plans(&url, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (path, kind, _) in got.lock().unwrap().iter() {
        assert_eq!(path, "/v1/traces");
        assert_eq!(kind, "application/x-protobuf");
    }
    let spans = spans(&got);
    let trace = &spans[0].trace_id;
    assert!(
        spans.iter().all(|s| &s.trace_id == trace),
        "one trace per run"
    );
    let by = |name: &str| -> &Span {
        spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
            panic!(
                "no span `{name}` in {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        })
    };
    let run = by("invoke_workflow WritingPlans");
    assert!(run.parent_span_id.is_empty(), "the run is the root");
    assert_eq!(text(run, "gen_ai.operation.name"), "invoke_workflow");
    let steps: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("step "))
        .collect();
    assert_eq!(steps.len(), 6);
    for s in &steps {
        assert_eq!(
            s.parent_span_id, run.span_id,
            "`{}` is a child of the run",
            s.name
        );
        assert!(s.start_time_unix_nano >= run.start_time_unix_nano);
        assert!(s.end_time_unix_nano <= run.end_time_unix_nano);
    }
    let draft = by("step draft_header");
    assert_eq!(text(draft, "ais.instruction"), "draft_header");
    assert_eq!(text(draft, "ais.opcode"), "GEN-RAW");
    assert_eq!(text(draft, "ais.unit"), "model");
    assert_eq!(attr(draft, "ais.step"), Some(&Any::IntValue(1)));
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    assert_eq!(chats.len(), 2);
    let chat = chats
        .iter()
        .find(|c| c.parent_span_id == draft.span_id)
        .expect("the draft's chat");
    assert_eq!(text(chat, "gen_ai.operation.name"), "chat");
    assert_eq!(text(chat, "gen_ai.provider.name"), "ais.scripted");
    assert_eq!(
        text(chat, "gen_ai.request.model"),
        "examples/writing_plans.responses.json"
    );
    assert!(matches!(
        attr(chat, "gen_ai.usage.input_tokens"),
        Some(Any::IntValue(_))
    ));
    assert!(matches!(
        attr(chat, "gen_ai.usage.output_tokens"),
        Some(Any::IntValue(_))
    ));
    assert!(
        attr(chat, "gen_ai.input.messages").is_none(),
        "no contents unless asked"
    );
    let tool = by("execute_tool assemble_plan");
    assert_eq!(text(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(tool, "gen_ai.tool.name"), "assemble_plan");
    assert_eq!(tool.parent_span_id, by("step assemble").span_id);
    assert_eq!(spans.len(), 1 + 6 + 2 + 3, "run, steps, chats, tools");
}

#[test]
fn contents_only_when_asked_and_scrubbed() {
    let (url, got) = collector();
    let o = run_plans(&url, &["--otlp-content"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let spans = spans(&got);
    let chat = spans.iter().find(|s| s.name.starts_with("chat ")).unwrap();
    let input = text(chat, "gen_ai.input.messages");
    assert!(input.contains("Add a CSV export"), "{input}");
    assert!(!input.contains("sk-abcdefghijklmnop0123456789"), "{input}");
    assert!(input.contains("[redacted]"), "{input}");
    assert!(!text(chat, "gen_ai.output.messages").is_empty());
}

#[test]
fn a_collector_that_is_down_does_not_fail_the_run() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run_plans(&format!("http://127.0.0.1:{port}"), &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("trace was not sent"), "{err}");
    let o = run_plans("grpc://127.0.0.1:4317", &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad URL stops before the first step"
    );
}

#[test]
fn a_priced_run_puts_each_slots_cost_and_the_runs_on_the_spans() {
    let server = providers_support::serve_blocking(|_| {
        providers_support::Proto::OpenAi.answer(serde_json::json!({"value": "text"}))
    });
    let base = &server.base;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("one.agir"),
        r#"walker:
  name: One
  carries:
    task: {type: str, role: input}
    a: {type: str, produced_by: write}
nodes:
  - {id: write, type: GEN-RAW, reads: [task], writes: [a], doc: Write.}
  - {id: done, type: TERMINAL, reads: [a]}
edges:
  - {from: write, to: done}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ais.toml"),
        format!(
            "default = \"main\"\n[models]\nmain = {{ spec = \"openai:priced\", base_url = \"{base}/v1\" }}\n\
             [prices.\"openai:priced\"]\ninput = 100\noutput = 1000\n"
        ),
    )
    .unwrap();
    let (url, got) = collector();
    ais_ok(
        dir.path(),
        &["run", "one.agir", "--task", "go", "--otlp", &url],
    );
    let spans = spans(&got);
    // 42 prompt tokens at $100 and 7 completion tokens at $1000 per million.
    let cost = (42.0 * 100.0 + 7.0 * 1000.0) / 1e6;
    let step = spans.iter().find(|s| s.name == "step write").unwrap();
    assert_eq!(text(step, "gen_ai.response.model"), "priced");
    assert_eq!(
        attr(step, "gen_ai.usage.input_tokens"),
        Some(&Any::IntValue(42))
    );
    let costs = |span: &Span| match attr(span, "ais.usage.cost_usd") {
        Some(Any::DoubleValue(c)) => *c,
        other => panic!("`{}` has no cost: {other:?}", span.name),
    };
    assert!((costs(step) - cost).abs() < 1e-12, "{}", costs(step));
    let run = spans
        .iter()
        .find(|s| s.name == "invoke_workflow One")
        .unwrap();
    assert_eq!(
        attr(run, "gen_ai.usage.output_tokens"),
        Some(&Any::IntValue(7))
    );
    assert!((costs(run) - cost).abs() < 1e-12, "{}", costs(run));
}

/// A CALLed program's steps are spans of the run's trace like its own, each with its CALL's
/// `ais.step` and its sub-step label as `ais.sub_step`.
#[test]
fn a_called_programs_steps_carry_their_calls_step_and_their_sub_step() {
    let (url, got) = collector();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/call_trace");
    let out = tempfile::tempdir().unwrap();
    let model = format!("scripted:{}", root.join("responses.json").display());
    let outer = root.join("outer.agir");
    let outer = outer.to_str().unwrap();
    let args = [
        "run", outer, "--task", "the fair", "--model", &model, "--otlp", &url,
    ];
    ais_ok(out.path(), &args);
    let spans = spans(&got);
    let step = |name: &str| -> (Option<&Any>, Option<&Any>) {
        let s = spans.iter().find(|s| s.name == name).unwrap();
        (attr(s, "ais.step"), attr(s, "ais.sub_step"))
    };
    let label = |l: &str| Some(Any::StringValue(l.into()));
    assert_eq!(
        step("step look"),
        (Some(&Any::IntValue(2)), label("2.1").as_ref())
    );
    assert_eq!(
        step("step fin"),
        (Some(&Any::IntValue(2)), label("2.3").as_ref())
    );
    assert_eq!(step("step call"), (Some(&Any::IntValue(2)), None));
    assert_eq!(step("step wrap"), (Some(&Any::IntValue(3)), None));
}

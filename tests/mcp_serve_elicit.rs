//! `ais mcp serve` over streamable HTTP (`--http ADDR`, on loopback) and a paused served run
//! asking its client through MCP elicitation, each driven by the official Rust SDK's client
//! (rmcp): a client that answers (on the current protocol, which answers with an
//! `InputRequiredResult` the client retries, and pinned to `2025-11-25`, which gets an
//! `elicitation/create` request), one that declines, one without the capability, and a forged
//! `requestState`.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::support::mcp_serve;

/// The read-only program with one human input, `phrase`: a call without it pauses at `up`.
fn program(dir: &Path) -> PathBuf {
    mcp_serve::write(dir, "shout.agir", mcp_serve::SHOUT)
}

/// What a client does when it is asked.
#[derive(Clone, Copy)]
enum Reply {
    Answer,
    Decline,
    /// A hostile client: a 64 KiB answer.
    Flood,
}

/// A client that declares form elicitation (on `protocol`) and answers `phrase` with
/// "hey" or declines, keeping each question's message.
#[derive(Clone)]
struct Asked {
    reply: Reply,
    protocol: ProtocolVersion,
    questions: Arc<Mutex<Vec<String>>>,
}

impl Asked {
    fn new(reply: Reply, protocol: ProtocolVersion) -> Self {
        Asked {
            reply,
            protocol,
            questions: Default::default(),
        }
    }
}

impl ClientHandler for Asked {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("asked", "1.0"),
        )
        .with_protocol_version(self.protocol.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = &request
        {
            let schema = serde_json::to_value(requested_schema).unwrap();
            assert_eq!(schema["properties"]["phrase"]["type"], "string", "{schema}");
            self.questions.lock().unwrap().push(message.clone());
        }
        Ok(match self.reply {
            Reply::Answer => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({"phrase": "hey"})),
            Reply::Decline => ElicitResult::new(ElicitationAction::Decline),
            Reply::Flood => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({"phrase": "\u{1b}[2J".repeat(16 * 1024)})),
        })
    }
}

/// `ais mcp serve` of the program over stdio, for `client`.
async fn serve_stdio<C: ClientHandler>(dir: &Path, client: C) -> RunningService<RoleClient, C> {
    serve_stdio_with(dir, client, &[]).await
}

/// `ais mcp serve` of the program over stdio with `args` besides, for `client`.
async fn serve_stdio_with<C: ClientHandler>(
    dir: &Path,
    client: C,
    args: &[&str],
) -> RunningService<RoleClient, C> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(["mcp", "serve"])
        .arg(program(dir))
        .arg("--out")
        .arg(dir.join("out"))
        .args(args);
    cmd.env_remove("AIS_MODEL");
    client
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

/// Serves the program with `args` to a client that replies `reply` on `protocol`, and calls
/// `shout` without its input (so the run pauses and asks): the output root's directory, the
/// client, and the call's result.
async fn call_shout(
    reply: Reply,
    protocol: &ProtocolVersion,
    args: &[&str],
) -> (tempfile::TempDir, Asked, CallToolResult) {
    let dir = tempfile::tempdir().unwrap();
    let client = Asked::new(reply, protocol.clone());
    let service = serve_stdio_with(dir.path(), client.clone(), args).await;
    let result = service
        .peer()
        .call_tool(CallToolRequestParams::new("shout"))
        .await
        .unwrap();
    service.cancel().await.unwrap();
    (dir, client, result)
}

fn text(r: &CallToolResult) -> String {
    r.content[0].as_text().unwrap().text.clone()
}

/// The resume handles left under the output root.
fn handles(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("out/.ais/resume")).map_or(0, |d| d.count())
}

#[tokio::test]
async fn the_http_transport_lists_and_calls_the_programs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let server = mcp_serve::Http::start(&[program(dir.path()), "--out".into(), out]);
    let url = server.url.clone();

    // reqwest (as rmcp builds it) has no TLS provider of its own; install the one ais-rt uses.
    ais::rt::install_crypto_provider();
    let service = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    let tools = service.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name, "shout");
    let input = serde_json::Value::Object((*tool.input_schema).clone());
    jsonschema::meta::validate(&input).unwrap();
    let output = serde_json::Value::Object((**tool.output_schema.as_ref().unwrap()).clone());
    jsonschema::meta::validate(&output).unwrap();
    assert_eq!(input["properties"]["phrase"]["type"], "string");

    let call = CallToolRequestParams::new("shout").with_arguments(
        serde_json::json!({"phrase": "hey"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let result = service.peer().call_tool(call).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let report = result.structured_content.unwrap();
    assert_eq!(report["louder"], "hey!!");
    assert!(jsonschema::is_valid(&output, &report), "{report}");

    // This client declares no elicitation: a pause is the tool error that says how to resume.
    let paused = service
        .peer()
        .call_tool(CallToolRequestParams::new("shout"))
        .await
        .unwrap();
    assert_eq!(paused.is_error, Some(true));
    let said = text(&paused);
    assert!(
        said.contains("paused at `up` for human input `phrase`"),
        "{said}"
    );
    assert!(said.contains("ais resume "), "{said}");
    service.cancel().await.unwrap();

    // A request naming another host is refused (rmcp's guard against DNS rebinding).
    let port = server.port();
    let refused = std::process::Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"])
        .args([
            "-H",
            "Host: attacker.example",
            "-H",
            "content-type: application/json",
        ])
        .args(["-H", "accept: application/json, text/event-stream"])
        .args(["-d", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#])
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .output();
    if let Ok(o) = refused {
        let code = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(code.starts_with('4'), "{code}");
    }
}

#[tokio::test]
async fn a_paused_run_asks_the_client_and_resumes_with_its_answer() {
    for protocol in [ProtocolVersion::LATEST, ProtocolVersion::V_2025_11_25] {
        let (dir, client, result) = call_shout(Reply::Answer, &protocol, &[]).await;
        assert_eq!(result.is_error, Some(false), "{protocol}: {result:?}");
        assert_eq!(result.structured_content.unwrap()["louder"], "hey!!");
        let questions = client.questions.lock().unwrap().clone();
        assert_eq!(
            questions,
            ["`up` needs `phrase`: The phrase to shout."],
            "{protocol}"
        );
        // The handle the pause wrote was used, and removed.
        assert_eq!(handles(dir.path()), 0, "{protocol}");
    }
}

#[tokio::test]
async fn a_declined_question_is_the_tool_error_that_says_how_to_resume() {
    for protocol in [ProtocolVersion::LATEST, ProtocolVersion::V_2025_11_25] {
        let (dir, client, result) = call_shout(Reply::Decline, &protocol, &[]).await;
        assert_eq!(result.is_error, Some(true), "{protocol}: {result:?}");
        let said = text(&result);
        assert!(
            said.contains("paused at `up` for human input `phrase`"),
            "{said}"
        );
        assert!(said.contains("ais resume "), "{said}");
        assert!(said.contains("the client declined to answer"), "{said}");
        assert_eq!(client.questions.lock().unwrap().len(), 1, "{protocol}");
        // The handle stays, for `ais resume`.
        assert_eq!(handles(dir.path()), 1, "{protocol}");
    }
}

#[tokio::test]
async fn a_forged_request_state_resumes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let client = Asked::new(Reply::Answer, ProtocolVersion::LATEST);
    let service = serve_stdio(dir.path(), client.clone()).await;
    let mut call = CallToolRequestParams::new("shout");
    call.request_state = Some("../../out/.ais/resume/anything".into());
    call.input_responses = Some(
        [(
            "answer".to_owned(),
            serde_json::json!({"action": "accept", "content": {"phrase": "x"}}),
        )]
        .into(),
    );
    let result = service.peer().call_tool(call).await.unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let said = text(&result);
    assert!(
        said.contains("names no question this server is waiting on"),
        "{said}"
    );
    assert!(client.questions.lock().unwrap().is_empty());
    service.cancel().await.unwrap();
}

#[tokio::test]
async fn an_answer_over_the_answer_limit_is_refused_and_the_run_still_waits() {
    for protocol in [ProtocolVersion::LATEST, ProtocolVersion::V_2025_11_25] {
        let args = ["--max-answer-bytes", "4096"];
        let (dir, _, result) = call_shout(Reply::Flood, &protocol, &args).await;
        assert_eq!(result.is_error, Some(true), "{protocol}: {result:?}");
        let said = text(&result);
        assert!(
            said.contains("the answer is 65536 bytes, more than the 4096 a human answer may have"),
            "{protocol}: {said}"
        );
        // Nothing of the answer reached the run, its report or the error text.
        assert!(!said.contains('\u{1b}'), "{protocol}: {said}");
        assert!(
            result
                .structured_content
                .is_none_or(|r| r.get("louder").is_none())
        );
        // The run still waits: its handle is kept, for a shorter answer.
        assert_eq!(handles(dir.path()), 1, "{protocol}");
    }
}

/// A program whose CALL of `shout.agir` (beside it) hands on nothing: called with no task,
/// `shout` asks for its `phrase`.
const RELAY: &str = r#"---
name: relay
description: Relays to shout, which asks for its phrase.
---
walker:
  name: Relay
  carries:
    task: {type: str, role: input}
    shouted: {type: str, produced_by: call}
nodes:
  - {id: call, type: CALL, owner: model, reads: [task], writes: [shouted], target: shout.agir, doc: "Shout a phrase."}
  - {id: done, type: TERMINAL, reads: [shouted]}
edges:
  - {from: call, to: done}
"#;

#[tokio::test]
async fn a_called_programs_question_asks_the_client_and_its_answer_finishes_the_call() {
    let dir = tempfile::tempdir().unwrap();
    program(dir.path());
    let relay = mcp_serve::write(dir.path(), "relay.agir", RELAY);
    let none = mcp_serve::write(dir.path(), "none.json", "{}");
    let client = Asked::new(Reply::Answer, ProtocolVersion::LATEST);
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(["mcp", "serve"])
        .arg(&relay)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--model")
        .arg(format!("scripted:{}", none.display()));
    cmd.env_remove("AIS_MODEL");
    let service = client
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let result = service
        .peer()
        .call_tool(CallToolRequestParams::new("relay"))
        .await
        .unwrap();
    service.cancel().await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content.unwrap()["shouted"], "hey!!");
    let questions = client.questions.lock().unwrap().clone();
    // The question names the callee's step that asked, and the CALL that led there.
    assert_eq!(
        questions,
        ["`up` (in `shout`, called by `call`) needs `phrase`: The phrase to shout."]
    );
    assert_eq!(handles(dir.path()), 0, "the handle was used and removed");
}

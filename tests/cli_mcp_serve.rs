//! `ais mcp serve`: programs offered as MCP tools, driven over stdio by the official Rust
//! SDK's client (rmcp) and by the official Inspector's command-line mode
//! (`@modelcontextprotocol/inspector --cli`, from the npm registry via `.ci/run`).

use crate::mcp_support;
use crate::support::mcp_serve;

use rmcp::model::{
    CallToolRequestParams, NumberOrString, ProgressNotificationParam, ProgressToken,
    RequestMetaObject,
};
use rmcp::service::NotificationContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A call of `tool` with `args` that asks for progress under `token`.
fn with_progress(tool: &'static str, args: serde_json::Value, token: i64) -> CallToolRequestParams {
    let mut call = CallToolRequestParams::new(tool).with_arguments(
        args.as_object()
            .expect("the arguments are an object")
            .clone(),
    );
    call.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        NumberOrString::Number(token),
    )));
    call
}

fn programs(dir: &Path) -> (String, String) {
    let a = mcp_serve::write(dir, "shout.agir", mcp_serve::SHOUT);
    let b = mcp_serve::write(dir, "note.agir", mcp_serve::NOTE);
    (a.display().to_string(), b.display().to_string())
}

/// A client that keeps the progress notifications it receives.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

#[tokio::test]
async fn rmcp_lists_the_programs_as_tools_and_calls_one_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let (shout, note) = programs(dir.path());
    let out = dir.path().join("out");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args(["mcp", "serve", &shout, &note, "--out"]).arg(&out);
    cmd.env_remove("AIS_MODEL");
    let client = Client::default();
    let service = client
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let tools = service.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["shout", "note"]);
    for t in &tools {
        let input = serde_json::Value::Object((*t.input_schema).clone());
        jsonschema::meta::validate(&input).unwrap_or_else(|e| panic!("{}: {e}", t.name));
        let output = serde_json::Value::Object((**t.output_schema.as_ref().unwrap()).clone());
        jsonschema::meta::validate(&output).unwrap_or_else(|e| panic!("{}: {e}", t.name));
    }
    let (shout_tool, note_tool) = (&tools[0], &tools[1]);
    assert_eq!(
        shout_tool.description.as_deref(),
        Some("Shout a phrase back, louder.")
    );
    assert_eq!(
        shout_tool.input_schema["properties"]["phrase"]["type"],
        "string"
    );
    assert_eq!(
        shout_tool.input_schema["properties"]["phrase"]["description"],
        "The phrase to shout."
    );
    assert!(
        shout_tool.output_schema.as_ref().unwrap()["properties"]
            .get("louder")
            .is_some()
    );
    assert_eq!(
        shout_tool.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(
        note_tool.annotations.as_ref().unwrap().read_only_hint,
        Some(false)
    );

    let call = with_progress("shout", serde_json::json!({"phrase": "hey"}), 7);
    let result = service.peer().call_tool(call).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let report = result.structured_content.unwrap();
    assert_eq!(report["louder"], "hey!!");
    // The output validates against the tool's own outputSchema.
    let output = serde_json::Value::Object((**shout_tool.output_schema.as_ref().unwrap()).clone());
    assert!(jsonschema::is_valid(&output, &report), "{report}");
    // One notification per step, in order (they may trail the result by a moment).
    for _ in 0..50 {
        if client.progress.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let progress = client.progress.lock().unwrap().clone();
    let steps: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0], "{progress:?}");
    assert_eq!(progress[0].message.as_deref(), Some("step 1: up (CODE)"));

    // An input left out is human input: the run pauses, and the error says how to resume.
    let paused = service
        .peer()
        .call_tool(CallToolRequestParams::new("shout"))
        .await
        .unwrap();
    assert_eq!(paused.is_error, Some(true));
    let text = paused.content[0].as_text().unwrap().text.clone();
    assert!(
        text.contains("paused at `up` for human input `phrase`"),
        "{text}"
    );
    assert!(text.contains("ais resume "), "{text}");
    // An unknown input is the caller's mistake, said with the inputs there are.
    let bad = service
        .peer()
        .call_tool(
            CallToolRequestParams::new("shout").with_arguments(
                serde_json::json!({"phrse": "x"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let text = bad.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("did you mean `phrase`?"), "{text}");
    service.cancel().await.unwrap();
}

/// The Inspector's `--cli` mode run against `target` (a command line, or a URL) with `args`:
/// its JSON answer.
fn inspect(inspector: &Path, dir: &Path, target: &[&str], args: &[&str]) -> serde_json::Value {
    let o = std::process::Command::new(inspector)
        .arg("--cli")
        .args(target)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let start = stdout.find('{').unwrap_or(0);
    serde_json::from_str::<serde_json::Value>(&stdout[start..]).unwrap()
}

/// Lists the tools through the Inspector and calls `note`, checking the file it wrote.
fn list_and_call(inspector: &Path, dir: &Path, target: &[&str], out: &Path) {
    let listed = inspect(inspector, dir, target, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shout", "note"], "{listed:#}");
    let called = inspect(
        inspector,
        dir,
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "note",
            "--tool-arg",
            "text_in=groceries",
        ],
    );
    assert_eq!(called["isError"], false, "{called:#}");
    let saved = called["structuredContent"]["saved"].as_str().unwrap();
    let written = std::fs::read_to_string(out.join(saved)).unwrap();
    assert_eq!(written.trim(), "# groceries");
}

#[test]
fn the_inspector_cli_lists_and_calls_the_tools() {
    let Some(inspector) = mcp_support::bin("mcp-inspector") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shout, note) = programs(dir.path());
    let out = dir.path().join("out");
    let ais = env!("CARGO_BIN_EXE_ais");
    let out_arg = out.display().to_string();
    let target = [ais, "mcp", "serve", &shout, &note, "--out", &out_arg];
    list_and_call(&inspector, dir.path(), &target, &out);
}

#[test]
fn the_inspector_cli_lists_and_calls_the_tools_over_streamable_http() {
    let Some(inspector) = mcp_support::bin("mcp-inspector") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shout, note) = programs(dir.path());
    let out = dir.path().join("out");
    let server = mcp_serve::Http::start(&[&shout, &note, "--out", &out.display().to_string()]);
    let target = [server.url.as_str(), "--transport", "http"];
    list_and_call(&inspector, dir.path(), &target, &out);
}

/// MCP progress is the run's step count: step `N` is progress `N`, a SPAWN's siblings (`N.1`,
/// … in the message) fall between the step before and the SPAWN's own, and the values strictly
/// increase, as MCP requires — over a real client, siblings finishing in any order.
#[tokio::test]
async fn progress_numbers_the_steps_as_the_run_does_and_strictly_increases() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/newcomer");
    for f in ["review_sentiment.agir", "review_sentiment.responses.json"] {
        std::fs::copy(fixtures.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(
        dir.path().join("reviews.csv"),
        "review\nGreat product\nBroke in a day\nIt is fine\n",
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ais"));
    cmd.args([
        "mcp",
        "serve",
        "review_sentiment.agir",
        "--model",
        "scripted:review_sentiment.responses.json",
        "--out",
        "out",
    ]);
    cmd.current_dir(dir.path()).env_remove("AIS_MODEL");
    let client = Client::default();
    let service = client
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let call = with_progress(
        "review_sentiment",
        serde_json::json!({"task": "Summarize reviews.csv"}),
        3,
    );
    let result = service.peer().call_tool(call).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    for _ in 0..100 {
        if client.progress.lock().unwrap().len() >= 8 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let progress = client.progress.lock().unwrap().clone();
    assert_eq!(progress.len(), 8, "5 steps and 3 siblings: {progress:?}");
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let message = |p: &ProgressNotificationParam| p.message.clone().unwrap_or_default();
    let steps: Vec<(f64, String)> = progress
        .iter()
        .filter(|p| p.progress.fract() == 0.0)
        .map(|p| (p.progress, message(p)))
        .collect();
    assert_eq!(
        steps,
        [
            (1.0, "step 1: load_rows (SENSE)".to_owned()),
            (2.0, "step 2: classify (SPAWN)".to_owned()),
            (3.0, "step 3: tally (CODE)".to_owned()),
            (4.0, "step 4: save (ACT)".to_owned()),
            (5.0, "step 5: done (TERMINAL)".to_owned()),
        ],
        "{progress:?}"
    );
    let mut siblings: Vec<String> = progress
        .iter()
        .filter(|p| p.progress.fract() != 0.0)
        .inspect(|p| assert!(p.progress > 1.0 && p.progress < 2.0, "{p:?}"))
        .map(message)
        .collect();
    siblings.sort();
    assert_eq!(
        siblings,
        [
            "step 2.1: classify (SPAWN sibling)",
            "step 2.2: classify (SPAWN sibling)",
            "step 2.3: classify (SPAWN sibling)"
        ]
    );
    service.cancel().await.unwrap();
}

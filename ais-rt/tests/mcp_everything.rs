//! MCP tools from the official reference server `@modelcontextprotocol/server-everything`
//! (installed from the npm registry by `.ci/run`): calls bind by the server's inputSchema, a
//! tool error is a routable error value, a hung call times out, a server that dies mid-run is
//! an error value, and the lock catches a changed schema before the first step.

use crate::mcp_support;

use ais_rt::Status;
use ais_rt::mcp::McpServers;
use mcp_support::{bin, program, run};
use std::time::{Duration, Instant};

const SUMS: &str = r#"---
name: sums
description: Echo a greeting and add two numbers on the everything server.
---
mcp_servers:
  every:
    command: $BIN/mcp-server-everything
tools:
  echo: {surface: SENSE, serves: [say], mcp: {server: every}}
  add: {surface: SENSE, serves: [sum], mcp: {server: every, tool: get-sum}}
walker:
  name: Sums
  carries:
    greeting: {type: str, role: input}
    x: {type: float, role: input}
    y: {type: float, role: input}
    echoed: {type: str, produced_by: say}
    total: {type: str, produced_by: sum}
nodes:
  - {id: say, type: SENSE, owner: code, reads: [greeting], writes: [echoed]}
  - {id: sum, type: SENSE, owner: code, reads: [x, y], writes: [total]}
  - {id: done, type: TERMINAL, reads: [echoed, total]}
edges:
  - {from: say, to: sum}
  - {from: sum, to: done}
"#;

#[tokio::test]
async fn echo_and_add_bind_to_the_servers_input_schema() {
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = program(SUMS, &server);
    let (outcome, logs) = run(
        &p,
        dir.path(),
        &[("greeting", "hello"), ("x", "2"), ("y", "40.5")],
        Duration::from_secs(20),
        None,
    )
    .await
    .unwrap();
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(outcome.report["echoed"], "Echo: hello");
    assert!(
        outcome.report["total"].as_str().unwrap().contains("42.5"),
        "{outcome:#?}"
    );
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].server, "every");
}

#[tokio::test]
async fn the_live_schema_gives_the_signature() {
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut p = program(SUMS, &server);
    let servers = McpServers::start(&p, dir.path()).await.unwrap();
    servers.prepare(&mut p).unwrap();
    assert_eq!(
        p.tool("add").unwrap().1.sig.as_deref(),
        Some("(a: float, b: float) -> str")
    );
    assert_eq!(
        p.tool("echo").unwrap().1.sig.as_deref(),
        Some("(message: str) -> str")
    );
    let echo = servers.schema("every", "echo").unwrap();
    assert_eq!(echo.read_only_hint, Some(true));
    servers.shutdown().await;
}

/// Fetches resource `ref_id`: the server throws for an id that is not a positive integer, and
/// the program routes that error value.
const REFS: &str = r#"---
name: refs
description: Fetch a resource reference and route on whether the server could.
---
mcp_servers:
  every:
    command: $BIN/mcp-server-everything
tools:
  reference: {sig: "(resourceId: int) -> str", surface: SENSE, serves: [fetch], mcp: {server: every, tool: get-resource-reference}}
walker:
  name: Refs
  carries:
    ref_id: {type: int, role: input}
    fetched: {type: outcome, produced_by: fetch}
    note: {type: str, produced_by: explain}
nodes:
  - {id: fetch, type: SENSE, owner: code, reads: [ref_id], writes: [fetched]}
  - {id: gate, type: ROUTE, owner: code, reads: [fetched]}
  - {id: explain, type: CODE, owner: code, reads: [fetched], writes: [note], body: "'could not fetch: ' + fetched.error"}
  - {id: done, type: TERMINAL, reads: [note, fetched]}
edges:
  - {from: fetch, to: gate}
  - {from: gate, to: done, guard: "fetched.ok == true"}
  - {from: gate, to: explain}
  - {from: explain, to: done}
"#;

#[tokio::test]
async fn a_tool_error_is_an_error_value_the_program_routes() {
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = program(REFS, &server);
    let t = Duration::from_secs(20);
    let (good, _) = run(&p, dir.path(), &[("ref_id", "1")], t, None)
        .await
        .unwrap();
    assert_eq!(good.status, Status::Ok, "{good:#?}");
    assert_eq!(good.report["fetched"]["ok"], true, "{good:#?}");
    assert!(good.deviations.is_empty(), "{:#?}", good.deviations);
    assert!(good.findings.is_empty(), "{:#?}", good.findings);
    let (bad, _) = run(&p, dir.path(), &[("ref_id", "-3")], t, None)
        .await
        .unwrap();
    assert_eq!(bad.status, Status::Ok, "routed, so not an error: {bad:#?}");
    let fetched = &bad.report["fetched"];
    assert_eq!(fetched["ok"], false);
    let error = fetched["error"].as_str().unwrap();
    assert!(error.contains("Invalid resourceId"), "{error}");
    assert!(
        error.contains("get-resource-reference"),
        "names the tool: {error}"
    );
    assert!(!good.report.contains_key("note"), "{good:#?}");
    let note = bad.report["note"].as_str().unwrap();
    assert!(
        note.starts_with("could not fetch: at `fetch`: tool `reference`"),
        "{note}"
    );
}

/// Waits `secs` seconds in `n` steps on the server (its long-running, progress-reporting tool).
const SLOW: &str = r#"---
name: slow
description: Run the server's long operation and route on whether it finished.
---
mcp_servers:
  every:
    command: $CMD
    args: $ARGS
tools:
  wait: {sig: "(duration: float, steps: float) -> str", surface: SENSE, serves: [work], mcp: {server: every, tool: trigger-long-running-operation}}
walker:
  name: Slow
  carries:
    secs: {type: float, role: input}
    n: {type: float, role: input}
    result: {type: outcome, produced_by: work}
    note: {type: str, produced_by: explain}
nodes:
  - {id: work, type: SENSE, owner: code, reads: [secs, n], writes: [result]}
  - {id: gate, type: ROUTE, owner: code, reads: [result]}
  - {id: explain, type: CODE, owner: code, reads: [result], writes: [note], body: "'gave up: ' + result.error"}
  - {id: done, type: TERMINAL, reads: [result, note]}
edges:
  - {from: work, to: gate}
  - {from: gate, to: done, guard: "result.ok == true"}
  - {from: gate, to: explain}
  - {from: explain, to: done}
"#;

fn slow(server: &std::path::Path, cmd: &str, args: &str) -> ais_core::Program {
    program(&SLOW.replace("$CMD", cmd).replace("$ARGS", args), server)
}

#[tokio::test]
async fn a_long_operation_finishes_and_a_hung_one_times_out_and_is_routed() {
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = slow(&server, "$BIN/mcp-server-everything", "[]");
    let (done, _) = run(
        &p,
        dir.path(),
        &[("secs", "0.6"), ("n", "3")],
        Duration::from_secs(20),
        None,
    )
    .await
    .unwrap();
    assert_eq!(done.report["result"]["ok"], true, "{done:#?}");
    let started = Instant::now();
    let (hung, _) = run(
        &p,
        dir.path(),
        &[("secs", "60"), ("n", "2")],
        Duration::from_millis(800),
        None,
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(hung.status, Status::Ok, "{hung:#?}");
    let error = hung.report["result"]["error"].as_str().unwrap();
    assert!(error.contains("no result within 0.8s"), "{error}");
    assert!(
        hung.report["note"]
            .as_str()
            .unwrap()
            .starts_with("gave up: "),
        "{hung:#?}"
    );
}

#[tokio::test]
async fn a_server_that_exits_mid_run_is_an_error_value_not_a_hang() {
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // `timeout` ends the server 2 s after it starts, in the middle of a 6 s call.
    let p = slow(&server, "timeout", "[\"2\", $BIN/mcp-server-everything]");
    let started = Instant::now();
    let (outcome, _) = run(
        &p,
        dir.path(),
        &[("secs", "6"), ("n", "3")],
        Duration::from_secs(30),
        None,
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    let error = outcome.report["result"]["error"].as_str().unwrap();
    assert!(error.contains("no longer running"), "{error}");
    assert_eq!(outcome.report["result"]["ok"], false);
}

#[tokio::test]
async fn a_changed_schema_refuses_the_run_before_its_first_step() {
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = program(SUMS, &server);
    let servers = McpServers::start(&p, dir.path()).await.unwrap();
    let mut lock = servers.lock(&p);
    servers.shutdown().await;
    assert_eq!(lock.servers["every"].len(), 2);
    // The lock as it was when `get-sum` took only `a`.
    let add = lock
        .servers
        .get_mut("every")
        .unwrap()
        .get_mut("get-sum")
        .unwrap();
    let props = add.schema.input_schema["properties"]
        .as_object_mut()
        .unwrap();
    props.remove("b");
    add.schema.input_schema["required"] = serde_json::json!(["a"]);
    add.hash = ais_rt::mcp::schema_hash(&add.schema);
    let err = run(
        &p,
        dir.path(),
        &[("greeting", "hi"), ("x", "1"), ("y", "2")],
        Duration::from_secs(20),
        Some(&lock),
    )
    .await
    .unwrap_err();
    assert!(err.message.contains("`every`'s tool `get-sum`"), "{err}");
    assert!(err.message.contains("parameter(s) added: `b`"), "{err}");
    assert!(err.help.contains("ais mcp lock"), "{}", err.help);
    // Nothing ran: the output root has no trace of a step.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[tokio::test]
async fn a_streamable_http_server_is_reached_at_its_url() {
    use tokio::io::AsyncBufReadExt;
    let Some(server) = bin("mcp-server-everything") else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(&server)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let listening = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("listening on port") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(listening, Ok(true), "the HTTP server did not start");
    let text = SUMS.replace(
        "command: $BIN/mcp-server-everything",
        &format!("url: http://127.0.0.1:{port}/mcp"),
    );
    let p = program(&text, &server);
    let dir = tempfile::tempdir().unwrap();
    let result = run(
        &p,
        dir.path(),
        &[("greeting", "over http"), ("x", "1"), ("y", "2")],
        Duration::from_secs(20),
        None,
    )
    .await;
    child.kill().await.unwrap();
    let (outcome, _) = result.unwrap();
    assert_eq!(outcome.status, Status::Ok, "{outcome:#?}");
    assert_eq!(outcome.report["echoed"], "Echo: over http");
}

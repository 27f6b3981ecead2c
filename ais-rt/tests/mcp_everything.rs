//! MCP tools from the official reference server `@modelcontextprotocol/server-everything`
//! (installed from the npm registry by `.ci/run`): calls bind by the server's inputSchema, a
//! tool error is a routable error value, a hung call times out, a server that dies mid-run is
//! an error value, and the lock catches a changed schema before the first step.

mod mcp_support;

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

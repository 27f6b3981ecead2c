//! An `ais!` program whose tools are an MCP server's: the lock named by `mcp_lock` gives them
//! their signatures at compile time (no server runs while compiling), and at run time the
//! server (`@modelcontextprotocol/server-everything`, from the npm registry via `.ci/run`) is
//! started, checked against the same lock, and called through the runtime's tool registry.

use crate::mcp_support;

use ais::ais;
use ais::rt::mcp::McpServers;

ais! {
    /// Echo a greeting and add two numbers on the everything server.
    pub program Sums (mcp_lock = "tests/fixtures/mcp/sums.mcp.lock") {
        carries {
            greeting: str = input,
            x: float = input,
            y: float = input,
            echoed: str,
            total: str,
        }

        /// The reference server with every kind of tool.
        mcp_server every { command: "mcp-server-everything" }

        #[surface(SENSE)]
        tool echo = mcp(every);
        #[surface(SENSE)]
        tool add = mcp(every, "get-sum");

        say: SENSE echo(greeting) -> echoed;
        sum: SENSE add(x, y) -> total;
        done: TERMINAL(echoed, total);

        say -> sum -> done;
    }
}

#[test]
fn the_locked_signatures_are_in_the_programs_agir() {
    assert!(
        Sums::AGIR.contains("sig: \"(a: float, b: float) -> str\""),
        "{}",
        Sums::AGIR
    );
    assert!(
        Sums::AGIR.contains("mcp:\n      server: every\n      tool: get-sum"),
        "{}",
        Sums::AGIR
    );
}

#[tokio::test]
async fn an_ais_program_calls_the_servers_tools() {
    let Some(server) = mcp_support::bin("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // This machine's path to the server: the program names it as found on PATH.
    let mut program = Sums::program().clone();
    program.mcp_servers.as_mut().unwrap()[0].command = Some(server.display().to_string());
    let lock = ais::mcp::Lock::parse(include_str!("fixtures/mcp/sums.mcp.lock")).unwrap();
    let servers = McpServers::start(&program, dir.path()).await.unwrap();
    let mut tools = Sums::tools();
    servers
        .attach(&mut program, &mut tools, Some(&lock))
        .unwrap();
    let runtime = ais::rt::Runtime::builder()
        .tools(tools)
        .out_dir(dir.path().to_path_buf())
        .build();
    let input = SumsInput {
        greeting: "hi".into(),
        x: 20.5,
        y: 21.5,
    };
    let report = Sums::run(input, &runtime).await;
    servers.shutdown().await;
    let report = report.expect("the run reports");
    assert_eq!(report.echoed.as_deref(), Some("Echo: hi"));
    assert!(
        report.total.as_deref().unwrap().contains("42"),
        "{:?}",
        report.total
    );
}

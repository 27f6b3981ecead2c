//! Finding the reference MCP servers `.ci/run` installs from the npm registry, and running a
//! program on a program's servers.
#![allow(dead_code)]

use ais_core::Program;
use ais_core::mcp::Lock;
use ais_rt::mcp::{McpError, McpServers, ServerLog};
use ais_rt::{Inputs, RunOutcome, Runtime};
use ais_rt::{ToolLimits, ToolRegistry};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The directory of the installed servers' executables: `AIS_MCP_BIN` (set by `.ci/run`), else
/// the `target/npm/node_modules/.bin` that `.ci/run` installs into. `None`, with a notice, when
/// neither has `name` outside CI; under `CI=true` a missing server fails the test.
pub fn bin(name: &str) -> Option<PathBuf> {
    // The workspace root is the manifest's directory (the `ais` package) or its parent.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let local = [manifest, manifest.parent().unwrap_or(manifest)]
        .map(|root| root.join("target/npm/node_modules/.bin"))
        .into_iter()
        .find(|d| d.exists())
        .unwrap_or_else(|| manifest.join("target/npm/node_modules/.bin"));
    let dir = std::env::var_os("AIS_MCP_BIN")
        .map(PathBuf::from)
        .unwrap_or(local);
    let path = dir.join(name);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "`{name}` is not installed in {} (run the `npm: the reference MCP servers` step of .ci/run, or set AIS_MCP_BIN)",
        dir.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// Reads a program, putting `bin`'s directory in place of `$BIN`.
pub fn program(text: &str, bin: &Path) -> Program {
    let dir = bin.parent().unwrap().display().to_string();
    let text = text.replace("$BIN", &dir);
    match ais_core::agir::read(&text) {
        Ok(doc) => doc.program,
        Err(e) => panic!("{e:?}\n{text}"),
    }
}

/// Starts `program`'s servers, attaches them and runs it with `pairs` as inputs under a tool
/// timeout of `timeout`; the servers are shut down after the run.
pub async fn run(
    program: &Program,
    dir: &Path,
    pairs: &[(&str, &str)],
    timeout: Duration,
    lock: Option<&Lock>,
) -> Result<(RunOutcome, Vec<ServerLog>), McpError> {
    let mut program = program.clone();
    let servers = McpServers::start(&program, dir).await?;
    let mut tools = ToolRegistry::with_builtins();
    if let Err(e) = servers.attach(&mut program, &mut tools, lock) {
        servers.shutdown().await;
        return Err(e);
    }
    let runtime = Runtime::builder()
        .tools(tools)
        .out_dir(dir.to_owned())
        .limits(ToolLimits {
            timeout,
            ..ToolLimits::default()
        })
        .build();
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let inputs = Inputs::parse(&program, Some(String::new()), &pairs).unwrap();
    let outcome = runtime.run(&program, None, inputs).await;
    Ok((outcome, servers.shutdown().await))
}

/// The MCP example (`examples/mcp/notes.agir` of the workspace, its lock beside it) copied
/// into `dir` with an empty `notes/`, with `server` (this machine's copy of the pinned file
/// server) in place of `npx`; returns the copy's path.
pub fn notes_example(dir: &Path, server: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = [manifest, manifest.parent().unwrap_or(manifest)]
        .map(|r| r.join("examples/mcp"))
        .into_iter()
        .find(|d| d.join("notes.agir").exists())
        .expect("examples/mcp/notes.agir in the workspace");
    std::fs::create_dir(dir.join("notes")).unwrap();
    let program = std::fs::read_to_string(root.join("notes.agir"))
        .unwrap()
        .replace("command: npx", &format!("command: {}", server.display()))
        .replace(
            "[-y, \"@modelcontextprotocol/server-filesystem@2026.8.31\", notes]",
            "[notes]",
        );
    assert!(program.contains("args: [notes]"), "{program}");
    std::fs::write(dir.join("notes.agir"), program).unwrap();
    std::fs::copy(root.join("notes.mcp.lock"), dir.join("notes.mcp.lock")).unwrap();
    dir.join("notes.agir")
}

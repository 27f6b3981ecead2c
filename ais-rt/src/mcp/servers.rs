//! Starting, checking and stopping a program's MCP servers (see the module docs of
//! [`crate::mcp`]).

use super::tool::McpTool;
use crate::tools::{INHERITED_ENV, ToolRegistry};
use ais_core::mcp::{Lock, LockedTool, ToolSchema};
use ais_core::{McpServer, Program};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How long a server may take to start, initialize and list its tools (`npx` may first
/// unpack a package).
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of a server's stderr is kept: the last this many bytes.
pub(crate) const STDERR_CAP: usize = 64 * 1024;

/// A server that could not be started or checked, or whose tools do not match the program or
/// the lock: what went wrong, naming the server, and the next step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct McpError {
    /// The server concerned, when one is.
    pub server: Option<String>,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub help: String,
}

impl McpError {
    fn new(server: &str, message: impl Into<String>, help: impl Into<String>) -> Self {
        McpError {
            server: Some(server.to_owned()),
            message: message.into(),
            help: help.into(),
        }
    }
}

/// What a server wrote to stderr during the run (its last `STDERR_CAP` bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLog {
    /// The server's name in `mcp_servers`.
    pub server: String,
    /// Its stderr.
    pub stderr: String,
}

/// The last [`STDERR_CAP`] bytes of a server's stderr, shared by its reader and its tools.
#[derive(Default)]
pub(crate) struct Tail(Mutex<String>);

impl Tail {
    fn push(&self, line: &str) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.push_str(line);
        s.push('\n');
        if s.len() > STDERR_CAP {
            let mut cut = s.len() - STDERR_CAP;
            while !s.is_char_boundary(cut) {
                cut += 1;
            }
            s.drain(..cut);
        }
    }

    /// The kept text.
    pub(crate) fn text(&self) -> String {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The last few lines, for an error message (empty when there are none).
    pub(crate) fn quote(&self) -> String {
        let text = self.text();
        let lines: Vec<&str> = text.lines().rev().take(8).collect();
        if lines.is_empty() {
            return String::new();
        }
        let shown: Vec<&str> = lines.into_iter().rev().collect();
        format!("; its stderr ends:\n  {}", shown.join("\n  "))
    }
}

/// One started server.
pub(crate) struct Conn {
    pub name: String,
    service: Mutex<Option<RunningService<RoleClient, ()>>>,
    pub peer: rmcp::Peer<RoleClient>,
    pub stderr: Arc<Tail>,
    pgid: Option<u32>,
    tools: Vec<rmcp::model::Tool>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        crate::tools::process::kill_group(self.pgid);
    }
}

/// The started servers of one run, with their listed tools.
pub struct McpServers {
    conns: Vec<Arc<Conn>>,
    schemas: HashMap<(String, String), ToolSchema>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.conns.iter().map(|c| &c.name))
            .finish()
    }
}

/// The SHA-256 (hex) of a tool's schemas — `inputSchema`, `outputSchema` and `readOnlyHint`,
/// not its description — as the lock records it.
pub fn schema_hash(schema: &ToolSchema) -> String {
    use sha2::Digest;
    let key = serde_json::json!([
        schema.input_schema,
        schema.output_schema,
        schema.read_only_hint
    ]);
    let digest = sha2::Sha256::digest(key.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn schema_of(tool: &rmcp::model::Tool) -> ToolSchema {
    ToolSchema {
        description: tool.description.as_deref().map(str::to_owned),
        input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|s| serde_json::Value::Object((**s).clone())),
        read_only_hint: tool.annotations.as_ref().and_then(|a| a.read_only_hint),
    }
}

/// The tools of `program` bound to a server: (the tool's name, server, server's tool name).
fn bound(program: &Program) -> Vec<(&str, &str, &str)> {
    program
        .tool_list()
        .iter()
        .filter_map(|t| {
            let m = t.mcp.as_ref()?;
            Some((t.name.as_str(), m.server.as_str(), m.remote(&t.name)))
        })
        .collect()
}

impl McpServers {
    /// Starts every server of `program` that one of its tools binds (see the module docs);
    /// `program_dir` is where a server's relative `cwd` and relative `command` resolve.
    pub async fn start(program: &Program, program_dir: &Path) -> Result<McpServers, McpError> {
        let mut used: Vec<&McpServer> = Vec::new();
        for (tool, server, _) in bound(program) {
            let Some(s) = program.mcp_server_list().iter().find(|s| s.name == server) else {
                return Err(McpError::new(
                    server,
                    format!(
                        "tool `{tool}` is bound to MCP server `{server}`, which `mcp_servers` does not declare"
                    ),
                    "declare it under `mcp_servers` (a `command` or a `url`); `ais check` lists every such binding",
                ));
            };
            if !used.iter().any(|u| u.name == s.name) {
                used.push(s);
            }
        }
        let mut servers = McpServers {
            conns: Vec::new(),
            schemas: HashMap::new(),
        };
        for s in used {
            let conn = connect(s, program_dir).await?;
            for t in &conn.tools {
                servers
                    .schemas
                    .insert((s.name.clone(), t.name.to_string()), schema_of(t));
            }
            servers.conns.push(Arc::new(conn));
        }
        Ok(servers)
    }

    /// The live schemas of `server`'s tool `tool`.
    pub fn schema(&self, server: &str, tool: &str) -> Option<&ToolSchema> {
        self.schemas.get(&(server.to_owned(), tool.to_owned()))
    }

    /// Fills each bound tool's `sig` from its live `inputSchema` (a tool whose author wrote a
    /// `sig` keeps it). An error when a server does not offer a bound tool, with the names it
    /// does offer.
    pub fn prepare(&self, program: &mut Program) -> Result<(), McpError> {
        for (tool, server, remote) in bound(program) {
            if self.schema(server, remote).is_none() {
                let offered: Vec<&str> = self
                    .schemas
                    .keys()
                    .filter(|(s, _)| s == server)
                    .map(|(_, t)| t.as_str())
                    .collect();
                let hint = ais_core::did_you_mean(remote, offered.iter().copied());
                return Err(McpError::new(
                    server,
                    format!(
                        "tool `{tool}` is bound to `{server}`'s tool `{remote}`, which the server does not offer{}",
                        hint.first()
                            .map(|h| format!(" (did you mean `{h}`?)"))
                            .unwrap_or_default()
                    ),
                    format!("`{server}` offers: {}", sorted(offered)),
                ));
            }
        }
        ais_core::mcp::apply(program, |s, t| self.schema(s, t));
        Ok(())
    }

    /// Registers an `McpTool` for each bound tool of `program` under the program's name for
    /// it (after [`prepare`](Self::prepare)).
    pub fn register(&self, program: &Program, registry: &mut ToolRegistry) {
        for (tool, server, remote) in bound(program) {
            let (Some(conn), Some(schema)) = (
                self.conns.iter().find(|c| c.name == server),
                self.schema(server, remote),
            ) else {
                continue;
            };
            let required = schema.required().into_iter().map(str::to_owned).collect();
            let read_only = schema.is_read_only();
            let imp = Arc::new(McpTool::new(tool, remote, conn.clone(), required));
            // A read-only call is no effect for the journal; any other is one that runs once.
            if read_only {
                registry.register_read_only(tool, imp);
            } else {
                registry.register(tool, imp);
            }
        }
    }

    /// Readies `program` to run on these servers, before its first step: checks the live
    /// schemas against `lock` when there is one ([`verify`](Self::verify)), fills each bound
    /// tool's `sig` ([`prepare`](Self::prepare)), refuses an author-written `sig` that names a
    /// parameter the live schema lacks or leaves out one it requires (the M1 check of
    /// [`ais_core::check_mcp`] against the live schemas), and registers the tools in `registry`.
    pub fn attach(
        &self,
        program: &mut Program,
        registry: &mut ToolRegistry,
        lock: Option<&Lock>,
    ) -> Result<(), McpError> {
        if let Some(lock) = lock {
            self.verify(program, lock)?;
        }
        self.prepare(program)?;
        let live = self.lock(program);
        let findings = ais_core::check_mcp(program, Some(&live), &ais_core::SourceMap::default());
        if let Some(f) = findings
            .iter()
            .find(|f| f.severity >= ais_core::Severity::Error)
        {
            return Err(McpError {
                server: None,
                message: f.message.clone(),
                help: "correct the tool's `sig` (or remove it: the server's schema then gives it); `ais check` shows where".to_owned(),
            });
        }
        self.register(program, registry);
        Ok(())
    }

    /// The lock of `program`'s bound tools, from the live schemas.
    pub fn lock(&self, program: &Program) -> Lock {
        let mut lock = Lock {
            version: 1,
            ..Lock::default()
        };
        for (_, server, remote) in bound(program) {
            if let Some(schema) = self.schema(server, remote) {
                let locked = LockedTool {
                    schema: schema.clone(),
                    hash: schema_hash(schema),
                };
                lock.servers
                    .entry(server.to_owned())
                    .or_default()
                    .insert(remote.to_owned(), locked);
            }
        }
        lock
    }

    /// Checks the live schemas of `program`'s bound tools against `lock`: an error for the
    /// first tool the lock lacks or whose schemas changed, saying what changed. The live
    /// schemas are compared with the locked schemas themselves (their hashes), so a lock
    /// edited by hand is held to what it says, not to the hash it was written with.
    pub fn verify(&self, program: &Program, lock: &Lock) -> Result<(), McpError> {
        let relock =
            "if the change is expected, run `ais mcp lock PROGRAM` and review the lock's diff";
        for (tool, server, remote) in bound(program) {
            let Some(live) = self.schema(server, remote) else {
                continue;
            };
            let Some(locked) = lock.tool(server, remote) else {
                return Err(McpError::new(
                    server,
                    format!("tool `{tool}` (`{server}`'s `{remote}`) is not in the lock file"),
                    relock,
                ));
            };
            if schema_hash(live) != schema_hash(&locked.schema) {
                return Err(McpError::new(
                    server,
                    format!(
                        "`{server}`'s tool `{remote}` (bound to `{tool}`) no longer matches the lock: {}",
                        drift(&locked.schema, live)
                    ),
                    relock,
                ));
            }
        }
        Ok(())
    }

    /// Ends every server and returns what each wrote to stderr.
    pub async fn shutdown(self) -> Vec<ServerLog> {
        let mut logs = Vec::new();
        for conn in self.conns {
            let service = conn
                .service
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            if let Some(service) = service {
                let _ = tokio::time::timeout(Duration::from_secs(5), service.cancel()).await;
            }
            crate::tools::process::kill_group(conn.pgid);
            logs.push(ServerLog {
                server: conn.name.clone(),
                stderr: conn.stderr.text(),
            });
        }
        logs
    }
}

fn sorted(mut names: Vec<&str>) -> String {
    names.sort_unstable();
    if names.is_empty() {
        "no tools".to_owned()
    } else {
        names.join(", ")
    }
}

/// What changed between a locked and a live schema, in words.
fn drift(locked: &ToolSchema, live: &ToolSchema) -> String {
    let names = |s: &ToolSchema| -> Vec<String> {
        s.properties()
            .into_iter()
            .map(|(k, _)| k.to_owned())
            .collect()
    };
    let (old, new) = (names(locked), names(live));
    let mut parts = Vec::new();
    let added: Vec<&String> = new.iter().filter(|n| !old.contains(n)).collect();
    let removed: Vec<&String> = old.iter().filter(|n| !new.contains(n)).collect();
    if !added.is_empty() {
        parts.push(format!("parameter(s) added: {}", join(&added)));
    }
    if !removed.is_empty() {
        parts.push(format!("parameter(s) removed: {}", join(&removed)));
    }
    if locked.required() != live.required() {
        parts.push(format!(
            "required was [{}], is [{}]",
            locked.required().join(", "),
            live.required().join(", ")
        ));
    }
    if locked.read_only_hint != live.read_only_hint {
        parts.push(format!(
            "readOnlyHint was {:?}, is {:?}",
            locked.read_only_hint, live.read_only_hint
        ));
    }
    if locked.output_schema != live.output_schema {
        parts.push("its outputSchema changed".to_owned());
    }
    if parts.is_empty() {
        parts.push("a parameter's schema changed".to_owned());
    }
    parts.join("; ")
}

fn join(names: &[&String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Starts (or connects to) one server, initializes it and lists its tools.
async fn connect(s: &McpServer, program_dir: &Path) -> Result<Conn, McpError> {
    let stderr = Arc::new(Tail::default());
    let (service, pgid) = match (&s.command, &s.url) {
        (Some(command), None) => spawn(s, command, program_dir, &stderr).await?,
        (None, Some(url)) => {
            crate::tls::install_crypto_provider();
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            let service = initialize(s, ().serve(transport), &stderr).await?;
            (service, None)
        }
        _ => {
            return Err(McpError::new(
                &s.name,
                format!(
                    "MCP server `{}` must declare exactly one of `command` and `url`",
                    s.name
                ),
                "give it a `command` (with `args`) for a stdio server, or a `url` for streamable HTTP",
            ));
        }
    };
    let listed = tokio::time::timeout(START_TIMEOUT, service.peer().list_all_tools()).await;
    let tools = match listed {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            return Err(McpError::new(
                &s.name,
                format!(
                    "MCP server `{}` did not list its tools: {e}{}",
                    s.name,
                    stderr.quote()
                ),
                "check that the server starts on its own with the same command",
            ));
        }
        Err(_) => {
            return Err(McpError::new(
                &s.name,
                format!(
                    "MCP server `{}` did not list its tools within {}s{}",
                    s.name,
                    START_TIMEOUT.as_secs(),
                    stderr.quote()
                ),
                "check that the server starts on its own with the same command",
            ));
        }
    };
    Ok(Conn {
        name: s.name.clone(),
        peer: service.peer().clone(),
        service: Mutex::new(Some(service)),
        stderr,
        pgid,
        tools,
    })
}

type Started = (RunningService<RoleClient, ()>, Option<u32>);

/// Spawns a stdio server in its own process group, keeping its stderr.
async fn spawn(
    s: &McpServer,
    command: &str,
    program_dir: &Path,
    stderr: &Arc<Tail>,
) -> Result<Started, McpError> {
    let program = if command.contains('/') && Path::new(command).is_relative() {
        program_dir.join(command)
    } else {
        command.into()
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(s.args.iter().flatten()).env_clear();
    for key in INHERITED_ENV {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    for (k, v) in s.env.iter().flatten() {
        cmd.env(k, v);
    }
    cmd.current_dir(program_dir.join(s.cwd.as_deref().unwrap_or("")));
    cmd.process_group(0);
    let (transport, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            McpError::new(
                &s.name,
                format!(
                    "cannot start MCP server `{}` (`{}`): {e}",
                    s.name,
                    program.display()
                ),
                "check its `command` (it must be on PATH or relative to the program) and `cwd`",
            )
        })?;
    let pgid = transport.id();
    if let Some(err) = err {
        let (tail, name) = (stderr.clone(), s.name.clone());
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "ais::mcp", server = %name, "{line}");
                tail.push(&line);
            }
        });
    }
    let service = initialize(s, ().serve(transport), stderr).await;
    if service.is_err() {
        crate::tools::process::kill_group(pgid);
    }
    Ok((service?, pgid))
}

/// Waits for a server's initialization, at most [`START_TIMEOUT`].
async fn initialize<E: std::fmt::Display>(
    s: &McpServer,
    serving: impl std::future::Future<Output = Result<RunningService<RoleClient, ()>, E>>,
    stderr: &Tail,
) -> Result<RunningService<RoleClient, ()>, McpError> {
    let help = "check that the server starts on its own with the same command or URL";
    match tokio::time::timeout(START_TIMEOUT, serving).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => Err(McpError::new(
            &s.name,
            format!(
                "MCP server `{}` did not initialize: {e}{}",
                s.name,
                stderr.quote()
            ),
            help,
        )),
        Err(_) => Err(McpError::new(
            &s.name,
            format!(
                "MCP server `{}` did not initialize within {}s{}",
                s.name,
                START_TIMEOUT.as_secs(),
                stderr.quote()
            ),
            help,
        )),
    }
}

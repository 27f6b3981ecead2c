//! Programs offered as MCP tools ([`ProgramServer`]): each program is one tool.
//!
//! - **name** and **description**: the program's frontmatter `name` and `description`;
//! - **inputSchema**: an object with a property per `role: input` carry (its type's JSON
//!   Schema, its `doc` as the description); none is required — an input left out is human
//!   input, and the run pauses for it (§7.5);
//! - **outputSchema**: an object with a property per TERMINAL read (other produced carries may
//!   appear too: the report of §4.5);
//! - **readOnlyHint**: true when the program has no ACT (nothing it does changes the world).
//!
//! A call runs the program once (its own MCP servers, if it binds tools to any, started for
//! that run and shut down after it). Each step is a `notifications/progress` when the caller
//! sent a progress token. A run that ends `ok` gives its report as the structured result; an
//! error or a fault is a tool error (`isError`) whose structured content says which and why;
//! a run that pauses for human input is a tool error naming the question and how to resume
//! (`ais resume HANDLE --answer TEXT`) — this server does not ask through elicitation.

use super::McpServers;
use crate::model::Model;
use crate::tools::ToolRegistry;
use crate::trace::{StepEvent, TraceSink};
use crate::{Inputs, RunOutcome, Runtime, Status};
use ais_core::{Opcode, Program};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use std::path::PathBuf;
use std::sync::Arc;

/// One program offered as a tool.
#[derive(Clone)]
struct Offered {
    program: Arc<Program>,
    dir: PathBuf,
    tool: Tool,
}

/// An MCP server whose tools are programs (see the module docs). Serve it with rmcp, e.g.
/// `server.serve(rmcp::transport::stdio()).await?.waiting().await`.
#[derive(Clone)]
pub struct ProgramServer {
    offered: Vec<Offered>,
    model: Option<Arc<dyn Model>>,
    tools: ToolRegistry,
    out_dir: PathBuf,
}

impl ProgramServer {
    /// A server with no programs yet; runs write under `out_dir`, use `tools` (the built-ins
    /// and any native tools of the programs — an `ais!` program's `tools()`), and fill slots
    /// with `model`.
    pub fn new(model: Option<Arc<dyn Model>>, tools: ToolRegistry, out_dir: PathBuf) -> Self {
        ProgramServer {
            offered: Vec::new(),
            model,
            tools,
            out_dir,
        }
    }

    /// Offers `program` (whose relative paths resolve in `dir`) as a tool. An error when
    /// another program already has its name, or it has none.
    pub fn offer(mut self, program: Program, dir: PathBuf) -> Result<Self, String> {
        let name = program.name.clone().unwrap_or_default();
        if name.trim().is_empty() {
            return Err("the program has no frontmatter `name` to offer it under".to_owned());
        }
        if self.offered.iter().any(|o| o.tool.name == name) {
            return Err(format!(
                "two programs are named `{name}`; a tool name is offered once"
            ));
        }
        let tool = tool_of(&program);
        self.offered.push(Offered {
            program: Arc::new(program),
            dir,
            tool,
        });
        Ok(self)
    }

    /// Serves the programs over this process's standard input and output until the client
    /// closes them. An error when the client does not initialize.
    pub async fn serve_stdio(self) -> Result<(), super::McpError> {
        use rmcp::ServiceExt;
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| super::McpError {
                server: None,
                message: format!("the MCP client did not initialize: {e}"),
                help: "start the server from an MCP client: its standard input and output are the protocol".to_owned(),
            })?;
        let _ = running.waiting().await;
        Ok(())
    }

    /// The tools offered, as `tools/list` gives them.
    pub fn tools(&self) -> Vec<Tool> {
        self.offered.iter().map(|o| o.tool.clone()).collect()
    }

    async fn run(
        &self,
        offered: &Offered,
        args: serde_json::Map<String, serde_json::Value>,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
    ) -> CallToolResult {
        let mut program = (*offered.program).clone();
        let mut task = None;
        let mut pairs = Vec::new();
        for (k, v) in args {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            if k == "task" {
                task = Some(text);
            } else {
                pairs.push((k, text));
            }
        }
        let inputs = match Inputs::parse(&program, task.or(Some(String::new())), &pairs) {
            Ok(i) => i,
            Err(e) => return failure("bad_input", &format!("`{}`: {}", e.name, e.message)),
        };
        let mut tools = self.tools.clone();
        let servers = if program.tool_list().iter().any(|t| t.mcp.is_some()) {
            match McpServers::start(&program, &offered.dir).await {
                Ok(s) => match s.attach(&mut program, &mut tools, None) {
                    Ok(()) => Some(s),
                    Err(e) => {
                        s.shutdown().await;
                        return failure("mcp", &e.message);
                    }
                },
                Err(e) => return failure("mcp", &e.message),
            }
        } else {
            None
        };
        let mut builder = Runtime::builder()
            .tools(tools)
            .out_dir(self.out_dir.clone())
            .program_dir(offered.dir.clone());
        if let Some(m) = &self.model {
            builder = builder.model(m.clone());
        }
        if let Some((peer, token)) = progress {
            builder = builder.trace(Arc::new(ProgressSink::new(peer, token)));
        }
        let outcome = builder.build().run(&program, None, inputs).await;
        if let Some(s) = servers {
            s.shutdown().await;
        }
        result_of(&outcome)
    }
}

/// The tool a program is offered as.
fn tool_of(program: &Program) -> Tool {
    let mut props = serde_json::Map::new();
    for c in program.carries().iter().filter(|c| c.is_input()) {
        let mut schema = match &c.ty {
            Some(ty) => crate::model::slot::schema_for(program, ty),
            None => serde_json::json!({}),
        };
        let doc = match (&c.doc, c.name.as_str()) {
            (Some(d), _) => Some(d.clone()),
            (None, "task") => Some("The task, in words.".to_owned()),
            _ => None,
        };
        if let (Some(d), Some(o)) = (doc, schema.as_object_mut()) {
            o.entry("description").or_insert(d.into());
        }
        props.insert(c.name.clone(), schema);
    }
    let input = serde_json::json!({"type": "object", "properties": props});
    let mut out = serde_json::Map::new();
    let terminal = program
        .instructions()
        .iter()
        .find(|i| i.opcode == Opcode::Terminal);
    for read in terminal.map(|t| t.reads.as_slice()).unwrap_or_default() {
        let ty = program.carry(read).and_then(|(_, c)| c.ty.clone());
        let schema = match ty {
            Some(ty) => crate::model::slot::schema_for(program, &ty),
            None => serde_json::json!({}),
        };
        out.insert(read.clone(), schema);
    }
    let output = serde_json::json!({"type": "object", "properties": out});
    let read_only = !program
        .instructions()
        .iter()
        .any(|i| i.opcode == Opcode::Act);
    let as_object = |v: serde_json::Value| match v {
        serde_json::Value::Object(o) => Arc::new(o),
        _ => Arc::new(serde_json::Map::new()),
    };
    Tool::new(
        program.name.clone().unwrap_or_default(),
        program.description.clone().unwrap_or_default(),
        as_object(input),
    )
    .with_raw_output_schema(as_object(output))
    .with_annotations(ToolAnnotations::new().read_only(read_only))
}

/// A tool error with structured content `{status, error}`.
fn failure(status: &str, error: &str) -> CallToolResult {
    let mut r = CallToolResult::structured_error(serde_json::json!({
        "status": status,
        "error": error,
    }));
    r.content = vec![ContentBlock::text(error.to_owned())];
    r
}

/// What a finished run answers.
fn result_of(o: &RunOutcome) -> CallToolResult {
    match o.status {
        Status::Ok => CallToolResult::structured(serde_json::Value::Object(o.report.clone())),
        Status::Error => failure(
            "error",
            &format!(
                "the run ended with an unrouted failure: {}",
                o.deviations
                    .last()
                    .map(|d| format!("{}: {}", d.subject, d.substituted))
                    .unwrap_or_else(|| "a step failed".to_owned())
            ),
        ),
        Status::Fault | Status::Interrupted => failure(
            if o.status == Status::Fault {
                "fault"
            } else {
                "interrupted"
            },
            &o.fault
                .as_ref()
                .map(|f| format!("at `{}`: {}", f.instruction, f.message))
                .unwrap_or_else(|| "the run faulted".to_owned()),
        ),
        Status::InputRequired => {
            let Some(p) = &o.pause else {
                return failure("input_required", "the run paused for human input");
            };
            let resume = match &p.handle {
                Some(h) => format!(
                    "; answer it with `ais resume {} --answer TEXT`, or call again with `{}` given",
                    h.display(),
                    p.carry
                ),
                None => format!("; call again with `{}` given", p.carry),
            };
            failure(
                "input_required",
                &format!(
                    "the run paused at `{}` for human input `{}`: {}{resume}",
                    p.instruction, p.carry, p.prompt
                ),
            )
        }
    }
}

/// Sends a `notifications/progress` per step, in order, to the caller that asked for them.
struct ProgressSink {
    tx: tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>,
    token: ProgressToken,
}

impl ProgressSink {
    fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressNotificationParam>();
        tokio::spawn(async move {
            while let Some(p) = rx.recv().await {
                if peer.notify_progress(p).await.is_err() {
                    break;
                }
            }
        });
        ProgressSink { tx, token }
    }
}

impl TraceSink for ProgressSink {
    fn event(&self, e: &StepEvent) {
        let _ = self.tx.send(
            ProgressNotificationParam::new(self.token.clone(), e.step as f64)
                .with_message(format!("step {}: {} ({})", e.step, e.instruction, e.opcode)),
        );
    }
}

impl ServerHandler for ProgramServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            rmcp::model::Implementation::new("ais", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(offered) = self.offered.iter().find(|o| o.tool.name == request.name) else {
            let names: Vec<String> = self
                .offered
                .iter()
                .map(|o| o.tool.name.to_string())
                .collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool `{}`; this server offers: {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let progress = context
            .meta
            .get_progress_token()
            .map(|t| (context.peer.clone(), t));
        let args = request.arguments.unwrap_or_default();
        Ok(self.run(offered, args, progress).await.into())
    }
}

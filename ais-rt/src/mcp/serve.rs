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
//! a run that pauses for human input asks the client through elicitation when the client
//! declares it ([`elicit`]: a request while the call is open, or an
//! `InputRequiredResult` on protocols without sessions) and resumes with the answer; without
//! the capability, or when the client declines, the call is a tool error naming the question
//! and how to resume (`ais resume HANDLE --answer TEXT`).

use super::McpServers;
use super::elicit::{self, Asking, Pending, PendingPauses};
use crate::llm::Model;
use crate::tools::ToolRegistry;
use crate::trace::{StepEvent, TraceSink};
use crate::{Inputs, RunOutcome, Runtime, RuntimeBuilder, Status};
use ais_core::{Opcode, Program};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    InputRequest, InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use std::path::{Path, PathBuf};
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
    /// Paused calls waiting for a client's retry with the answer (shared by every session).
    pending: PendingPauses,
    /// Applied to each run's runtime builder last (its bounds: see [`ProgramServer::configure`]).
    configure: Option<Configure>,
}

/// What [`ProgramServer::configure`] keeps.
type Configure = Arc<dyn Fn(RuntimeBuilder) -> RuntimeBuilder + Send + Sync>;

/// Where a call's progress notifications go: the client's peer and its token.
type ProgressTo = Option<(Peer<RoleServer>, ProgressToken)>;

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
            pending: PendingPauses::default(),
            configure: None,
        }
    }

    /// Sets what every run (and resume) of this server is built with beyond its tools, output
    /// root, program directory, model and progress: `f` gets the runtime builder with those set
    /// and returns it, e.g. with the bounds of `ais run` (`max_answer_bytes`, `max_siblings`,
    /// `allow_read`, `allow_net`).
    pub fn configure(
        mut self,
        f: impl Fn(RuntimeBuilder) -> RuntimeBuilder + Send + Sync + 'static,
    ) -> Self {
        self.configure = Some(Arc::new(f));
        self
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

    /// Serves the programs over streamable HTTP on `listener` with the default [`HttpGuard`]
    /// (loopback `Host` and `Origin` only, at most 64 sessions, no token).
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
    ) -> Result<(), super::McpError> {
        self.serve_http_guarded(listener, HttpGuard::default())
            .await
    }

    /// Serves the programs over streamable HTTP on `listener` at `/mcp` (rmcp's service under
    /// axum), guarded by `guard`: a request whose `Host` is not loopback, or that carries an
    /// `Origin` other than a loopback one or one of `guard.allowed_origins`, is refused `403`
    /// (the MCP specification's MUST for streamable HTTP, against DNS rebinding); with a token,
    /// a request without `Authorization: Bearer TOKEN` is refused `401`; a request that would
    /// open a session past `guard.max_sessions` is refused `503`.
    pub async fn serve_http_guarded(
        self,
        listener: tokio::net::TcpListener,
        guard: HttpGuard,
    ) -> Result<(), super::McpError> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let sessions = Arc::new(LocalSessionManager::default());
        let mut origins: Vec<String> =
            ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
                .iter()
                .map(|o| (*o).to_owned())
                .collect();
        origins.extend(guard.allowed_origins.iter().cloned());
        let mut config = StreamableHttpServerConfig::default();
        config.allowed_origins = origins;
        let service =
            StreamableHttpService::new(move || Ok(self.clone()), sessions.clone(), config);
        let guard = Arc::new(guard);
        let check = axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let guard = guard.clone();
                let sessions = sessions.clone();
                async move {
                    let opens = req.method() == axum::http::Method::POST;
                    if let Some(refusal) = guard.refuses(opens, req.headers(), &sessions).await {
                        return refusal;
                    }
                    next.run(req).await
                }
            },
        );
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(check);
        axum::serve(listener, router)
            .await
            .map_err(|e| super::McpError {
                server: None,
                message: format!("the MCP HTTP server stopped: {e}"),
                help: "check the address given to `--http`".to_owned(),
            })
    }

    /// The tools offered, as `tools/list` gives them.
    pub fn tools(&self) -> Vec<Tool> {
        self.offered.iter().map(|o| o.tool.clone()).collect()
    }

    /// Runs `offered` once with the call's `args` (`task` and the input carries).
    async fn run(
        &self,
        offered: &Offered,
        args: serde_json::Map<String, serde_json::Value>,
        progress: ProgressTo,
    ) -> Result<RunOutcome, CallToolResult> {
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
        let inputs = Inputs::parse(&offered.program, task.or(Some(String::new())), &pairs)
            .map_err(|e| failure("bad_input", &format!("`{}`: {}", e.name, e.message)))?;
        let (runtime, program, servers) = self.engine(offered, progress).await?;
        let outcome = runtime.run(&program, None, inputs).await;
        if let Some(s) = servers {
            s.shutdown().await;
        }
        Ok(outcome)
    }

    /// Resumes a paused run of `offered` from its `handle` with a human's `answer`; the
    /// handle is removed once it has been used (kept when the resume refused it).
    async fn resume(
        &self,
        offered: &Offered,
        handle: &Path,
        answer: String,
        progress: ProgressTo,
    ) -> Result<RunOutcome, CallToolResult> {
        let (runtime, program, servers) = self.engine(offered, progress).await?;
        let outcome = runtime.resume(&program, None, handle, answer).await;
        if let Some(s) = servers {
            s.shutdown().await;
        }
        // Refused — the handle, or only the answer (the run still waits on the same handle).
        let refused = outcome
            .fault
            .as_ref()
            .is_some_and(|f| f.kind == crate::FaultKind::InvalidHandle)
            || outcome.pause.as_ref().is_some_and(|p| p.refused.is_some());
        if !refused {
            let _ = std::fs::remove_file(handle);
        }
        Ok(outcome)
    }

    /// What one run of `offered` runs with: its runtime, its program (attached to its MCP
    /// servers, when it binds tools to any) and those servers, started (the caller shuts them
    /// down).
    async fn engine(
        &self,
        offered: &Offered,
        progress: ProgressTo,
    ) -> Result<(Runtime, Program, Option<McpServers>), CallToolResult> {
        let mut program = (*offered.program).clone();
        let mut tools = self.tools.clone();
        let servers = if program.tool_list().iter().any(|t| t.mcp.is_some()) {
            let s = McpServers::start(&program, &offered.dir)
                .await
                .map_err(|e| failure("mcp", &e.message))?;
            if let Err(e) = s.attach(&mut program, &mut tools, None) {
                s.shutdown().await;
                return Err(failure("mcp", &e.message));
            }
            Some(s)
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
        if let Some(f) = &self.configure {
            builder = f(builder);
        }
        Ok((builder.build(), program, servers))
    }

    /// A call that retries with the answer to the question its `requestState` names.
    async fn answered(
        &self,
        offered: &Offered,
        request: &CallToolRequestParams,
        state: &str,
        progress: ProgressTo,
    ) -> Result<RunOutcome, CallToolResult> {
        let pending = self
            .pending
            .take(state)
            .filter(|p| p.tool == offered.tool.name.as_ref())
            .ok_or_else(|| {
                failure(
                    "bad_request",
                    "the call's `requestState` names no question this server is waiting on (it was answered, forgotten, or is for another tool); call the tool again",
                )
            })?;
        let text = elicit::response(request.input_responses.as_ref())
            .and_then(|r| elicit::answer(&pending.carry, &r))
            .map_err(|why| elicit::unanswered(&pending.message, &why))?;
        self.resume(offered, &pending.handle, text, progress).await
    }

    /// The call's answer to `outcome`: a paused run asks the client (see [`elicit`]) while it
    /// can and the client answers, then the finished run's result.
    async fn conclude(
        &self,
        offered: &Offered,
        mut outcome: RunOutcome,
        asking: Option<Asking>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        loop {
            let (Some(asking), Status::InputRequired) = (asking, outcome.status) else {
                return result_of(&outcome).into();
            };
            let (Some(pause), Some(form)) = (
                outcome.pause.clone(),
                elicit::request(&offered.program, &outcome),
            ) else {
                return result_of(&outcome).into();
            };
            let Some(handle) = pause.handle.clone() else {
                return result_of(&outcome).into();
            };
            let message = paused_message(&pause);
            if asking == Asking::Rounds {
                let state = self.pending.keep(Pending {
                    tool: offered.tool.name.to_string(),
                    handle,
                    carry: pause.carry.clone(),
                    message,
                });
                let mut requests = InputRequests::new();
                requests.insert(
                    elicit::ANSWER_KEY.to_owned(),
                    InputRequest::Elicitation(ElicitRequest::new(form)),
                );
                return InputRequiredResult::new(Some(requests), Some(state)).into();
            }
            let answer = match context.peer.create_elicitation(form).await {
                Ok(r) => elicit::answer(&pause.carry, &r),
                Err(e) => Err(format!("the elicitation failed: {e}")),
            };
            let text = match answer {
                Ok(t) => t,
                Err(why) => return elicit::unanswered(&message, &why).into(),
            };
            outcome = match self.resume(offered, &handle, text, None).await {
                Ok(o) => o,
                Err(r) => return r.into(),
            };
            // An answer that did not fit is not asked for again here: the tool error says
            // why, and the run still waits on its handle.
            if outcome.pause.as_ref().is_some_and(|p| p.refused.is_some()) {
                return result_of(&outcome).into();
            }
        }
    }
}

/// The tool a program is offered as.
fn tool_of(program: &Program) -> Tool {
    let mut props = serde_json::Map::new();
    for c in program.carries().iter().filter(|c| c.is_input()) {
        let mut schema = match &c.ty {
            Some(ty) => crate::llm::slot::schema_for(program, ty),
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
            Some(ty) => crate::llm::slot::schema_for(program, &ty),
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

/// A tool error with structured content `{status, error}`: the run's [`Status`] as spelled, or
/// why it did not start (`bad_input`, `mcp`).
pub(super) fn failure(status: &str, error: &str) -> CallToolResult {
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
            o.status.as_str(),
            &format!(
                "the run ended with an unrouted failure: {}",
                o.failures
                    .first()
                    .map(|f| format!("{}: {}", f.instruction, f.message))
                    .unwrap_or_else(|| "a step failed".to_owned())
            ),
        ),
        Status::Fault | Status::Interrupted => failure(
            o.status.as_str(),
            &o.fault
                .as_ref()
                .map(|f| format!("at `{}`: {}", f.instruction, f.message))
                .unwrap_or_else(|| "the run faulted".to_owned()),
        ),
        Status::InputRequired => match &o.pause {
            Some(p) => failure(o.status.as_str(), &paused_message(p)),
            None => failure(o.status.as_str(), "the run paused for human input"),
        },
    }
}

/// What a paused run's tool error says: the question, and how to resume.
fn paused_message(p: &crate::Pause) -> String {
    let resume = match &p.handle {
        Some(h) => format!(
            "; answer it with `ais resume {} --answer TEXT`, or call again with `{}` given",
            h.display(),
            p.carry
        ),
        None => format!("; call again with `{}` given", p.carry),
    };
    let refused = p
        .refused
        .as_ref()
        .map(|why| format!("the answer was refused: {why}; "))
        .unwrap_or_default();
    format!(
        "{refused}the run paused at {} for human input `{}`: {}{resume}",
        p.asker(),
        p.carry,
        p.prompt
    )
}

/// Sends a `notifications/progress` per step, in order, to the caller that asked for them.
///
/// The progress value of step `N` is `N`, the step number the trace, the report and `ais runs
/// show` give it; the events between two steps — SPAWN siblings and a CALLed program's steps
/// (`N.1`, `N.2`, … in the message; siblings finish in any order, and a CALL's steps come
/// before its own event) — take values strictly between the last step's and the next, so the
/// sequence strictly increases, as MCP requires.
struct ProgressSink {
    tx: tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>,
    token: ProgressToken,
    at: std::sync::Mutex<Progress>,
}

/// Where a run's progress notifications stand.
#[derive(Debug, Default, PartialEq)]
struct Progress {
    /// The last step sent (its value).
    step: u64,
    /// Events sent since it.
    between: u32,
}

impl Progress {
    /// The value of the next event: `step` for a step past the last one, else one strictly
    /// between the last step and the next (`last + k/(k+1)` for the k-th such event).
    fn next(&mut self, step: u64, own: bool) -> f64 {
        if own && step > self.step {
            self.step = step;
            self.between = 0;
            return step as f64;
        }
        self.between = self.between.saturating_add(1);
        let k = f64::from(self.between);
        self.step as f64 + k / (k + 1.0)
    }
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
        ProgressSink {
            tx,
            token,
            at: std::sync::Mutex::new(Progress::default()),
        }
    }
}

impl TraceSink for ProgressSink {
    fn event(&self, e: &StepEvent) {
        // Siblings finish on several tasks: the value is taken and sent under one lock, so the
        // channel sees the values in increasing order.
        let mut at = self
            .at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let value = at.next(e.step, e.is_own());
        let what = match (e.sibling, e.sub.is_empty()) {
            (Some(_), _) => format!("{} sibling", e.opcode),
            (None, false) => format!("{}, in a CALLed program", e.opcode),
            (None, true) => e.opcode.clone(),
        };
        let _ = self.tx.send(
            ProgressNotificationParam::new(self.token.clone(), value).with_message(format!(
                "step {}: {} ({what})",
                e.label(),
                e.instruction
            )),
        );
    }
}

#[cfg(test)]
mod progress_tests {
    use super::Progress;

    #[test]
    fn siblings_and_called_steps_fall_between_steps_and_the_values_strictly_increase() {
        let mut p = Progress::default();
        // Step 1, three siblings of the SPAWN at step 2 (finishing out of order), the SPAWN,
        // then the two steps of the program the CALL at step 3 runs (3.1, 3.2), the CALL, and
        // step 4.
        let seq = [
            (1, true),
            (2, false),
            (2, false),
            (2, false),
            (2, true),
            (3, false),
            (3, false),
            (3, true),
            (4, true),
        ];
        let values: Vec<f64> = seq.iter().map(|&(s, own)| p.next(s, own)).collect();
        assert_eq!(values[0], 1.0);
        assert_eq!(values[4], 2.0, "the SPAWN's own event is its step number");
        assert_eq!(values[7], 3.0, "the CALL's own event is its step number");
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        assert!(
            values[1..4].iter().all(|v| (1.0..2.0).contains(v)),
            "{values:?}"
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
        let asking = elicit::asking(&context);
        let outcome = match request.request_state.as_deref() {
            Some(state) => self.answered(offered, &request, state, progress).await,
            None => {
                let args = request.arguments.clone().unwrap_or_default();
                self.run(offered, args, progress).await
            }
        };
        Ok(match outcome {
            Ok(o) => self.conclude(offered, o, asking, &context).await,
            Err(r) => r.into(),
        })
    }
}

/// What guards `ais mcp serve --http` beyond rmcp's loopback `Host` check.
#[derive(Clone, Debug)]
pub struct HttpGuard {
    /// The most live sessions (a client's `initialize` past it is refused `503`).
    pub max_sessions: usize,
    /// The bearer token every request must carry (`Authorization: Bearer TOKEN`), if any.
    pub token: Option<String>,
    /// Browser origins allowed besides the loopback ones (`https://app.example.com:443`).
    pub allowed_origins: Vec<String>,
}

impl Default for HttpGuard {
    fn default() -> Self {
        HttpGuard {
            max_sessions: 64,
            token: None,
            allowed_origins: Vec::new(),
        }
    }
}

impl HttpGuard {
    /// The response refusing `req`, or `None` to let it through.
    /// `post`: the request is a POST (one without a session id opens a session).
    async fn refuses(
        &self,
        post: bool,
        headers: &axum::http::HeaderMap,
        sessions: &rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
    ) -> Option<axum::response::Response> {
        use axum::http::StatusCode;
        use axum::response::IntoResponse;
        if let Some(token) = &self.token {
            let given = headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default();
            let same = given.len() == token.len()
                && given
                    .bytes()
                    .zip(token.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0;
            if !same {
                return Some(
                    (
                        StatusCode::UNAUTHORIZED,
                        [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
                        "this MCP server needs `Authorization: Bearer TOKEN`\n",
                    )
                        .into_response(),
                );
            }
        }
        let opens_session = post && !headers.contains_key("mcp-session-id");
        if opens_session && sessions.sessions.read().await.len() >= self.max_sessions {
            return Some(
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "this MCP server holds its most sessions ({}); close one (HTTP DELETE), or start it with a larger `--max-sessions`\n",
                        self.max_sessions
                    ),
                )
                    .into_response(),
            );
        }
        None
    }
}

//! The edit language as an MCP server ([`EditServer`]): one tool per verb — `status`,
//! `help`, `query`, `view`, `patch` and the sugar verbs — each taking the verb's JSON
//! arguments (its `inputSchema` is the verb's JSON Schema) and answering with the verb's JSON
//! as structured content. A rejection is a tool error (`isError`) whose structured content is
//! the [`Rejection`](crate::Rejection), `possible_repairs` naming the next tool call. Files
//! are confined to the root the server was started with.

use crate::{Editor, HelpArgs, PatchArgs, QueryArgs, StatusArgs, ViewArgs};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// An MCP server whose tools are the edit verbs over one root.
#[derive(Clone)]
pub struct EditServer {
    editor: Editor,
    tools: Arc<Vec<Tool>>,
}

fn object(v: Json) -> Arc<Map<String, Json>> {
    let mut m = match v {
        Json::Object(m) => m,
        _ => Map::new(),
    };
    m.remove("$schema");
    m.insert("type".into(), "object".into());
    Arc::new(m)
}

fn schema<T: schemars::JsonSchema>() -> Json {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default()
}

/// The input schema of a sugar verb: its operation's schema without `op`, with `file` and
/// `dry_run`.
fn sugar_schema(verb: &str) -> (String, Json) {
    let info = crate::ops::catalog().into_iter().find(|o| o.op == verb);
    let (summary, mut s) = info.map_or_else(
        || (String::new(), Json::Object(Map::new())),
        |i| (i.summary, i.schema),
    );
    if let Some(props) = s.get_mut("properties").and_then(Json::as_object_mut) {
        props.remove("op");
        props.insert(
            "file".into(),
            serde_json::json!({"type": "string", "description": "The program, relative to the root."}),
        );
        props.insert(
            "dry_run".into(),
            serde_json::json!({"type": "boolean", "description": "Run everything and write nothing."}),
        );
    }
    if let Some(req) = s.get_mut("required").and_then(Json::as_array_mut) {
        req.retain(|r| r != "op");
        req.push("file".into());
    }
    (summary, s)
}

impl EditServer {
    /// A server over `editor`'s root.
    pub fn new(editor: Editor) -> Self {
        let read_only = |t: Tool| t.with_annotations(ToolAnnotations::new().read_only(true));
        let mut tools = vec![
            read_only(Tool::new(
                "status",
                "The .agir programs under the root with their outcome and generation; with `file`, one program's findings and every element's generation.",
                object(schema::<StatusArgs>()),
            )),
            read_only(Tool::new(
                "help",
                "The versioned operation catalog: each operation's JSON Schema and an example; with `op`, one operation or verb.",
                object(schema::<HelpArgs>()),
            )),
            read_only(Tool::new(
                "query",
                "A semantic question about a program (`kind`: readers, writers, producer, edges, paths, unreachable, tool_uses, search, traced_by, traces, references).",
                object(schema::<QueryArgs>()),
            )),
            read_only(Tool::new(
                "view",
                "An element with its generation; an instruction with handles n1, n2, … for its parts (doc, operands, tool, output, body, autonomy, outgoing guards).",
                object(schema::<ViewArgs>()),
            )),
            Tool::new(
                "patch",
                "Apply an ordered list of operations atomically: all apply and the program gets no new error, or nothing is written. `dry_run` previews. A rejection names the next call in `possible_repairs`.",
                object(schema::<PatchArgs>()),
            ),
        ];
        for verb in crate::SUGAR {
            let (summary, s) = sugar_schema(verb);
            tools.push(Tool::new(
                verb,
                format!("One-operation patch: {summary}"),
                object(s),
            ));
        }
        EditServer {
            editor,
            tools: Arc::new(tools),
        }
    }

    /// Serves over this process's standard input and output until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), String> {
        use rmcp::ServiceExt;
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("the MCP client did not initialize: {e}"))?;
        let _ = running.waiting().await;
        Ok(())
    }
}

impl ServerHandler for EditServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            rmcp::model::Implementation::new("ais-edit", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let verb = request.name.to_string();
        let args = Json::Object(request.arguments.clone().unwrap_or_default());
        let editor = self.editor.clone();
        // A patch waits for the file's lock: off the async threads.
        let answer = tokio::task::spawn_blocking(move || editor.call(&verb, &args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the edit call failed: {e}"), None))?;
        let result = if answer["status"] == "rejected" {
            CallToolResult::structured_error(answer)
        } else {
            CallToolResult::structured(answer)
        };
        Ok(result.into())
    }
}

//! [`McpTool`]: one server tool, called through the machine's ordinary tool path.

use super::servers::Conn;
use crate::tools::{Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture};
use ais_core::Value;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::ServiceError;
use std::sync::Arc;

/// A program's tool bound to an MCP server's tool (see [`crate::mcp`] for what a call does).
pub(crate) struct McpTool {
    local: String,
    remote: String,
    conn: Arc<Conn>,
    required: Vec<String>,
}

impl McpTool {
    pub(crate) fn new(local: &str, remote: &str, conn: Arc<Conn>, required: Vec<String>) -> Self {
        McpTool {
            local: local.to_owned(),
            remote: remote.to_owned(),
            conn,
            required,
        }
    }

    /// `tool `x` (MCP `server`'s `y`)`, the name every error of a call starts with.
    fn who(&self) -> String {
        format!(
            "tool `{}` (MCP server `{}`'s `{}`)",
            self.local, self.conn.name, self.remote
        )
    }

    fn error(&self, kind: ToolErrorKind, what: impl std::fmt::Display) -> ToolError {
        ToolError::new(kind, format!("{}: {what}", self.who()))
    }

    async fn run(&self, args: ToolArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut arguments = serde_json::Map::new();
        for (name, value) in args.params {
            if matches!(value, Value::Null) && !self.required.contains(&name) {
                continue;
            }
            arguments.insert(name, value.to_json());
        }
        let request = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
        let timeout = ctx.limits.timeout;
        let result = match tokio::time::timeout(timeout, self.conn.peer.call_tool(request)).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => return Err(self.transport_error(e)),
            Err(_) => {
                return Err(self.error(
                    ToolErrorKind::Timeout,
                    format_args!(
                        "no result within {:.1}s; the call was cancelled",
                        timeout.as_secs_f64()
                    ),
                ));
            }
        };
        self.value(result, ctx.limits.max_output_bytes)
    }

    fn transport_error(&self, e: ServiceError) -> ToolError {
        match e {
            ServiceError::McpError(e) => self.error(
                ToolErrorKind::Failed,
                format_args!("the server refused the call: {}", e.message),
            ),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.error(
                ToolErrorKind::Io,
                format_args!(
                    "the server is no longer running{}",
                    self.conn.stderr.quote()
                ),
            ),
            other => self.error(ToolErrorKind::Io, other),
        }
    }

    /// The result as a value: its structured content, else its text; `isError` fails.
    fn value(&self, result: CallToolResult, cap: usize) -> Result<Value, ToolError> {
        let size = serde_json::to_string(&result).map_or(0, |s| s.len());
        if size > cap {
            return Err(self.error(
                ToolErrorKind::OutputLimit,
                format_args!("its result is {size} bytes, over the cap of {cap}"),
            ));
        }
        let text = text_of(&result.content);
        if result.is_error == Some(true) {
            let mut err = self.error(ToolErrorKind::Failed, &text);
            err.output = text;
            return Err(err);
        }
        Ok(match result.structured_content {
            Some(v) => Value::from_json(&v),
            None => Value::Str(text),
        })
    }
}

/// The text of a result's content: text blocks joined by newlines, any other block as JSON.
fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|c| match c.as_text() {
            Some(t) => t.text.clone(),
            None => serde_json::to_string(c).unwrap_or_default(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Tool for McpTool {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.run(args, ctx))
    }
}

//! MCP servers as tool sources: the `mcp_servers` section and a tool's `mcp` binding.
//!
//! These are this project's encoding (the spec names no MCP fields). A program declares each
//! server it uses under `mcp_servers`, a spawned command (stdio) or a URL (streamable HTTP),
//! and binds a tool of its `tools` table to a server's tool with `mcp: {server, tool}`:
//!
//! ```yaml
//! mcp_servers:
//!   fs:
//!     command: npx
//!     args: [-y, "@modelcontextprotocol/server-filesystem", ./data]
//!     env: {LOG_LEVEL: warn}
//!     cwd: .
//! tools:
//!   read_text_file: {surface: SENSE, serves: [read], mcp: {server: fs}}
//!   save: {surface: ACT, serves: [save], mcp: {server: fs, tool: write_file}}
//! ```
//!
//! The server's `inputSchema` gives the tool's parameters (the runtime and the lock file fill
//! in a `sig` the author did not write), so the calling convention binds operands to them as it
//! does for any tool.

use super::Extras;

/// One server of the `mcp_servers` section.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct McpServer {
    /// The server's name, as tools' `mcp.server` refer to it.
    pub name: String,
    /// `command`: the program to spawn for a stdio server.
    pub command: Option<String>,
    /// `args`: its arguments, in order.
    pub args: Option<Vec<String>>,
    /// `env`: environment variables set for it (on top of the runtime's scrubbed environment).
    pub env: Option<Vec<(String, String)>>,
    /// `cwd`: its working directory, relative to the program's directory.
    pub cwd: Option<String>,
    /// `url`: the endpoint of a streamable-HTTP server (instead of `command`).
    pub url: Option<String>,
    /// `doc`: what the server offers.
    pub doc: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// A tool's `mcp` field: the server that serves it and the server's name for the tool.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct McpBinding {
    /// `server`: a name in `mcp_servers`.
    pub server: String,
    /// `tool`: the server's tool name; absent means the same name as the program's tool.
    pub tool: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

impl McpBinding {
    /// The server's name for the tool the program calls `local`.
    pub fn remote<'a>(&'a self, local: &'a str) -> &'a str {
        self.tool.as_deref().unwrap_or(local)
    }
}

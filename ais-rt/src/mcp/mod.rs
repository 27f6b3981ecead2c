//! MCP servers as tool sources, and programs offered as MCP tools.
//!
//! # A program's servers, for one run
//!
//! [`McpServers::start`] starts every server of a program's `mcp_servers` that a tool binds
//! (`mcp: {server, tool}`), once per run: a stdio server is spawned (its `command` and `args`,
//! in `cwd` relative to the program's directory, with the scrubbed environment of every tool
//! subprocess — [`INHERITED_ENV`](crate::tools::INHERITED_ENV) — plus its `env`, as the leader
//! of its own process group), a streamable-HTTP server is connected to at its `url`. Each is
//! initialized and its tools listed; a server that does not answer within
//! `START_TIMEOUT` is an error before the first step, naming the server and quoting its
//! stderr.
//!
//! Then [`McpServers::prepare`] fills each bound tool's `sig` from the server's `inputSchema`
//! ([`ais_core::mcp::signature`]) — so the calling convention binds operands to the schema's
//! parameters exactly as it does for any tool — and [`McpServers::register`] puts an
//! `McpTool` for each into the [`ToolRegistry`](crate::tools::ToolRegistry) under the
//! program's name for it. The machine calls it through its one tool path (the pipeline of
//! `machine/exec.rs`), like every other tool: a call is a step's effect, and nothing about it
//! is special to the machine.
//!
//! [`McpServers::verify`] compares the live schemas with a [`Lock`](ais_core::mcp::Lock): a tool whose schemas
//! hash differently from the lock (or that the lock does not have) is an error before the
//! first step, naming the tool and what changed. [`McpServers::lock`] writes the lock.
//!
//! [`McpServers::shutdown`] ends every server when the run ends (a stdio server's stdin is
//! closed, then its process group is killed), and returns what each wrote to stderr
//! ([`ServerLog`], the last `STDERR_CAP` bytes) for the trace. Dropping [`McpServers`]
//! without shutting down also kills every spawned group.
//!
//! # One call
//!
//! An `McpTool` sends `tools/call` with the bound arguments (an optional parameter bound to
//! nothing is left out, so the server applies its default) and waits at most the call's
//! [`ToolLimits::timeout`](crate::tools::ToolLimits): past it the request is cancelled and the
//! call fails with [`ToolErrorKind::Timeout`](crate::tools::ToolErrorKind). A result with
//! `isError` fails with [`ToolErrorKind::Failed`](crate::tools::ToolErrorKind), its text as the
//! error and the output — the machine turns either into the routable error value `{ok: false,
//! error, output}` (§10.1, §10.2). A result larger than
//! [`ToolLimits::max_output_bytes`](crate::tools::ToolLimits) (as JSON) fails with
//! `OutputLimit`. A server that has exited fails the call at once (`Io`), with its stderr.
//! Otherwise the value is the result's `structuredContent` when it has one, else its text
//! content (text blocks joined by newlines; any other block as its JSON).

pub(crate) mod elicit;
pub(crate) mod serve;
mod servers;
mod tool;

pub use serve::{HttpGuard, ProgramServer};
pub use servers::{McpError, McpServers, ServerLog, schema_hash};

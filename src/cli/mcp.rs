//! `ais mcp`: a program's MCP servers — `lock` records their tools' schemas beside the
//! program — and what `ais check` and `ais run` do with a program that binds tools to servers.

use super::{CliError, CmdResult, Output, Status, shown};
use ais::mcp::{Lock, apply_lock, lock_path};
use ais::rt::ToolRegistry;
use ais::rt::mcp::{McpError, McpServers, ServerLog};
use ais::{Checked, Outcome, Program, SourceMap, check_mcp};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `ais mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// The `ais mcp` commands.
#[derive(Debug, clap::Subcommand)]
// Parsed once per process: the size of `Serve`'s arguments costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum McpCommand {
    /// Start a program's MCP servers and write `<stem>.mcp.lock` beside it: each bound tool's
    /// schemas and their hash, so `ais check` and `ais!` check names and parameters with no
    /// server running, and `ais run` refuses a server whose schema has changed.
    ///
    /// Exit status: 0 written; 2 when the program cannot be read or a server cannot be started
    /// or does not offer a bound tool.
    Lock(LockArgs),
    /// Offer programs as MCP tools over stdio (or streamable HTTP with `--http ADDR`): each
    /// program one tool (its name and description, an inputSchema from its input carries, an
    /// outputSchema from its report, readOnlyHint when it has no ACT); each step of a call is
    /// a progress notification.
    ///
    /// Standard output carries the MCP protocol only (over stdio); diagnostics go to standard
    /// error. With `--http`, the line `serving N programs at http://ADDR/mcp` goes there first.
    Serve(ServeArgs),
    /// Offer the edit language (`ais edit`) as MCP tools over stdio: `status`, `help`,
    /// `query`, `view`, `patch` and the sugar verbs, on the `.agir` programs under `--root`.
    Edit(super::edit::EditServeArgs),
}

/// Arguments of `ais mcp serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The AG-IR programs to offer.
    #[arg(required = true)]
    pub programs: Vec<PathBuf>,
    /// The model that fills slots (else `AIS_MODEL`): `scripted:FILE.json`, `openai:MODEL`, …
    #[arg(long)]
    pub model: Option<String>,
    /// The output root of the runs.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Serve over streamable HTTP at `http://ADDR/mcp` instead of stdio (e.g.
    /// `127.0.0.1:8080`; port 0 picks a free one, named on standard error). Requests must name
    /// a loopback host (`localhost`, `127.0.0.1`, `::1`): rmcp's guard against DNS rebinding.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// With `--http`: the most live sessions; a client opening one more is refused (503).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http")]
    pub max_sessions: usize,
    /// With `--http`: every request must carry `Authorization: Bearer TOKEN`, TOKEN the value
    /// of the environment variable VAR (refused 401 otherwise).
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
    /// With `--http`: a browser origin allowed besides the loopback ones (repeatable; with its
    /// scheme, e.g. `https://app.example.com:443`). A request with any other `Origin` is refused
    /// (403), as the MCP specification requires against DNS rebinding.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// The bounds of every run served (as `ais run` takes them); a human answer given through
    /// elicitation is bounded by `--max-answer-bytes` as a model's is.
    #[command(flatten)]
    pub bounds: super::run::bounds::Bounds,
}

/// Arguments of `ais mcp lock`.
#[derive(Debug, clap::Args)]
pub struct LockArgs {
    /// The AG-IR program.
    pub program: PathBuf,
}

/// Runs `ais mcp`.
pub fn run(args: &McpArgs, o: &mut Output) -> CmdResult {
    match &args.command {
        McpCommand::Lock(a) => lock(a, o),
        McpCommand::Serve(a) => serve(a),
        // Dispatched before the output streams are locked (`cli::main`).
        McpCommand::Edit(a) => Ok(match super::edit::serve_main(a) {
            code if code == std::process::ExitCode::SUCCESS => Status::Ok,
            _ => Status::Failed,
        }),
    }
}

/// `ais mcp serve`, holding no lock on standard output (the protocol's stream): runs until
/// the client closes standard input; an error goes to standard error.
pub fn serve_main(args: &ServeArgs, color: super::ColorChoice) -> std::process::ExitCode {
    use std::io::IsTerminal;
    match serve(args) {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(failure) => {
            let text = match failure {
                super::Failure::Cli(e) => ais::render::render_error(
                    &e.what,
                    e.help.as_deref(),
                    color.enabled(std::io::stderr().is_terminal()),
                ),
                super::Failure::Io(e) => format!("error: {e}"),
                super::Failure::Exit(code) => return std::process::ExitCode::from(code),
            };
            eprintln!("{text}");
            std::process::ExitCode::from(Status::Failed.code())
        }
    }
}

/// `ais mcp serve`: runs until the client closes standard input.
fn serve(args: &ServeArgs) -> CmdResult {
    let spec = args
        .model
        .clone()
        .or_else(ais::rt::llm::default_spec)
        .filter(|s| !s.trim().is_empty());
    let model = match &spec {
        Some(spec) => Some(ais::rt::llm::from_spec(spec).map_err(|e| {
            CliError::new(
                e.message,
                "`--model scripted:FILE.json` runs with canned responses",
            )
        })?),
        None => None,
    };
    let bounds = args.bounds.clone();
    let mut server =
        ais::rt::mcp::ProgramServer::new(model, ToolRegistry::with_builtins(), args.out.clone())
            .configure(move |b| bounds.apply(b));
    for file in &args.programs {
        let program = read_program(file)?;
        if server_needs_model(&program) && spec.is_none() {
            return Err(CliError::new(
                format!("`{}` has model slots and no model is named", shown(file)),
                "name one with `--model SPEC` or the AIS_MODEL environment variable",
            )
            .into());
        }
        server = server.offer(program, program_dir(file)).map_err(|e| {
            CliError::new(
                format!("`{}`: {e}", shown(file)),
                "give each program its own frontmatter `name`",
            )
        })?;
    }
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}"), "retry"))?;
    match args.http {
        None => tokio.block_on(server.serve_stdio()).map_err(mcp_error)?,
        Some(addr) => {
            let token = match &args.token_env {
                None => None,
                Some(var) => Some(std::env::var(var).ok().filter(|t| !t.is_empty()).ok_or_else(|| {
                    CliError::new(
                        format!("`--token-env {var}`: the environment variable {var} is not set"),
                        format!("set it to the token clients send: `export {var}=$(openssl rand -hex 32)`"),
                    )
                })?),
            };
            let guard = ais::rt::mcp::HttpGuard {
                max_sessions: args.max_sessions,
                token,
                allowed_origins: args.allow_origin.clone(),
            };
            tokio.block_on(serve_http(server, addr, args.programs.len(), guard))?
        }
    }
    Ok(Status::Ok)
}

/// `ais mcp serve --http ADDR`: binds, says where on standard error, serves until killed.
async fn serve_http(
    server: ais::rt::mcp::ProgramServer,
    addr: std::net::SocketAddr,
    programs: usize,
    guard: ais::rt::mcp::HttpGuard,
) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        CliError::new(
            format!("cannot listen on {addr}: {e}"),
            "choose a free address with `--http ADDR` (port 0 picks one)",
        )
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "serving {programs} program{} at http://{bound}/mcp (streamable HTTP)",
        if programs == 1 { "" } else { "s" }
    );
    if !bound.ip().is_loopback() {
        let _ = writeln!(
            err,
            "ais: WARNING: {bound} is not a loopback address: the server is reachable from other \
             machines{}. Requests must still name a loopback `Host` (rmcp's guard); bind \
             127.0.0.1 unless a proxy you run forwards to it.",
            if guard.token.is_none() {
                ", and it asks no token (give one with `--token-env VAR`)"
            } else {
                ""
            }
        );
    }
    let _ = err.flush();
    drop(err);
    server
        .serve_http_guarded(listener, guard)
        .await
        .map_err(mcp_error)
}

fn server_needs_model(program: &Program) -> bool {
    program.instructions().iter().any(|i| i.is_su())
}

fn lock(args: &LockArgs, o: &mut Output) -> CmdResult {
    let program = read_program(&args.program)?;
    if !program.tool_list().iter().any(|t| t.mcp.is_some()) {
        return Err(CliError::new(
            format!("`{}` binds no tool to an MCP server", shown(&args.program)),
            "bind one with `mcp: {server: NAME}` on a tool and declare the server under `mcp_servers`",
        )
        .into());
    }
    let dir = program_dir(&args.program);
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}"), "retry"))?;
    let lock = tokio.block_on(async {
        let servers = McpServers::start(&program, &dir).await?;
        let mut prepared = program.clone();
        let result = servers
            .prepare(&mut prepared)
            .map(|()| servers.lock(&program));
        servers.shutdown().await;
        result
    });
    let lock = lock.map_err(mcp_error)?;
    let path = lock_path(&args.program);
    std::fs::write(&path, lock.to_text()).map_err(|e| {
        CliError::new(
            format!("cannot write the lock file `{}`: {e}", shown(&path)),
            "check that the program's directory is writable",
        )
    })?;
    let tools: usize = lock.servers.values().map(|t| t.len()).sum();
    writeln!(
        o.err,
        "wrote {} ({tools} tool{} of {} server{})",
        shown(&path),
        if tools == 1 { "" } else { "s" },
        lock.servers.len(),
        if lock.servers.len() == 1 { "" } else { "s" }
    )?;
    Ok(Status::Ok)
}

fn read_program(path: &Path) -> Result<Program, CliError> {
    let text = super::files::read_source(path, &ais::agir::Limits::default())?;
    ais::agir::read(&text).map(|d| d.program).map_err(|e| {
        CliError::new(
            format!("`{}` is not readable as AG-IR: {}", shown(path), e.message),
            format!("`ais check {}` shows where", shown(path)),
        )
    })
}

/// The directory a program's relative paths resolve in.
fn program_dir(file: &Path) -> PathBuf {
    match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_owned(),
        None => PathBuf::from("."),
    }
}

/// A server error as the CLI shows it.
pub fn mcp_error(e: McpError) -> CliError {
    CliError::new(e.message, e.help)
}

/// The lock beside `file`, when the program binds tools to servers and one exists.
pub fn read_lock(file: &Path, program: &Program) -> Result<Option<Lock>, CliError> {
    if !program.tool_list().iter().any(|t| t.mcp.is_some()) || super::files::is_stdin(file) {
        return Ok(None);
    }
    let path = lock_path(file);
    let max = u64::try_from(ais::agir::Limits::default().max_bytes).unwrap_or(u64::MAX);
    let text = match ais::files::read_regular_text(&path, max) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => {
            return Err(CliError::new(
                format!("cannot read the lock file `{}`: {e}", shown(&path)),
                "check its permissions, or delete it and run `ais mcp lock PROGRAM`",
            ));
        }
    };
    Lock::parse(&text).map(Some).map_err(|e| {
        CliError::new(
            format!("the lock file `{}` is not valid: {e}", shown(&path)),
            "its tools and parameters cannot be checked until it is rewritten",
        )
    })
}

/// `ais check` of a program with MCP tools: the lock's signatures filled in before the
/// validator runs, then the M checks against the lock merged into its findings.
pub fn check_with_lock(
    file: &Path,
    program: &Program,
    map: &SourceMap,
    run: impl FnOnce(&Program) -> Checked,
) -> Result<Checked, CliError> {
    let lock = read_lock(file, program)?;
    let mut locked = program.clone();
    if let Some(lock) = &lock {
        apply_lock(&mut locked, lock);
    }
    let mut checked = run(&locked);
    let m = check_mcp(&locked, lock.as_ref(), map);
    if !m.is_empty() && matches!(checked.outcome, Outcome::Clean | Outcome::Fixed) {
        checked.outcome = Outcome::Degraded;
    }
    checked.findings.extend(m);
    Ok(checked)
}

/// For `ais run`: the started servers of a program that binds tools to them, attached to
/// `tools` (the lock beside `file`, when there is one, checked first); `None` when it binds
/// none.
pub async fn start(
    file: &Path,
    program: &mut Program,
    tools: &mut ToolRegistry,
) -> Result<Option<McpServers>, CliError> {
    if !program.tool_list().iter().any(|t| t.mcp.is_some()) {
        return Ok(None);
    }
    let lock = read_lock(file, program)?;
    let servers = McpServers::start(program, &program_dir(file))
        .await
        .map_err(mcp_error)?;
    if let Err(e) = servers.attach(program, tools, lock.as_ref()) {
        servers.shutdown().await;
        return Err(mcp_error(e));
    }
    Ok(Some(servers))
}

/// Keeps each server's stderr under `<out>/.ais/mcp/<server>.stderr.log` (nothing for a server
/// that wrote none).
pub fn keep_logs(out: &Path, logs: &[ServerLog]) {
    let dir = out.join(".ais").join("mcp");
    for log in logs.iter().filter(|l| !l.stderr.is_empty()) {
        // A server's name is the author's text: only a plain file name is made of it.
        let name: String = log
            .server
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if std::fs::create_dir_all(&dir).is_ok() {
            let _ = std::fs::write(dir.join(format!("{name}.stderr.log")), &log.stderr);
        }
    }
}

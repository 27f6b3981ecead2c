//! `ais serve --restate`: serve programs as Restate workflows (built with the `restate`
//! feature; without it the command says how to get it).
//!
//! Each program (an AG-IR file) becomes the workflow named by its walker; its `run` handler
//! takes `{"task": TEXT, "inputs": {NAME: VALUE}}` and returns the report `ais run --format
//! json` prints. Register the endpoint with the server's admin API, then run programs through
//! the ingress (README: "Running on Restate").

use super::{CliError, Failure, Output};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `ais serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Serve on a Restate server (the one engine `ais serve` has; required).
    #[arg(long, required = true)]
    pub restate: bool,
    /// The address the endpoint listens on (HTTP/2, for the Restate server).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9080")]
    pub bind: SocketAddr,
    /// The model that fills the programs' slots (as `ais run --model`). Default: AIS_MODEL.
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// The output root every artifact lands under [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The step budget of each run [default: 10000].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// At most N SPAWN siblings do their work (a model exchange, a tool call) at once on this
    /// endpoint; a sibling waiting on the server holds none. Every endpoint behind the
    /// deployment adds its N [default: 16].
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<usize>,
    /// Accept only requests signed by the Restate server with this request identity key
    /// (`publickeyv1_…`, from `restate-server`'s `request-identity-private-key-pem-file`;
    /// repeatable). Without one, anything that reaches `--bind` can invoke the workflows.
    #[arg(long, value_name = "KEY")]
    pub identity_key: Vec<String>,
    /// The programs: AG-IR files.
    #[arg(required = true, value_name = "PROGRAM")]
    pub programs: Vec<PathBuf>,
}

/// `ais serve`.
pub fn run(args: ServeArgs, output: &mut Output) -> ExitCode {
    match serve(args, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => super::stopped(f, output),
    }
}

#[cfg(not(feature = "restate"))]
fn serve(_args: ServeArgs, _output: &mut Output) -> Result<(), Failure> {
    Err(CliError::new(
        "this `ais` was built without Restate support",
        "build it with the `restate` feature: `cargo install --path . --features restate` (or `cargo run --features restate -- serve --restate …`)",
    )
    .into())
}

#[cfg(feature = "restate")]
fn serve(args: ServeArgs, output: &mut Output) -> Result<(), Failure> {
    use super::files::read_source;
    use super::shown;
    use ais::agir::{self, Limits};
    use std::io::Write;

    let limits = Limits::default();
    let mut docs = Vec::with_capacity(args.programs.len());
    for file in &args.programs {
        let source = read_source(file, &limits)?;
        match agir::read_with_limits(&source, &limits) {
            Ok(doc) => docs.push((file, doc)),
            Err(err) => {
                let text =
                    ais::render::render_read_error(&err, &source, &shown(file), output.color_err);
                writeln!(output.err, "{text}")?;
                return Err(Failure::Exit(2));
            }
        }
    }
    // The programs' MCP servers, started once and attached to the tools every run uses; they
    // live on an async runtime of their own (the endpoint's is current-thread) as long as the
    // endpoint serves.
    let mut tools = ais::rt::ToolRegistry::with_builtins();
    let mcp_runtime = super::run::tokio_runtime()?;
    let mut mcp_servers = Vec::new();
    for (file, doc) in &mut docs {
        let started = mcp_runtime.block_on(super::mcp::start(file, &mut doc.program, &mut tools));
        match started {
            Ok(servers) => mcp_servers.extend(servers),
            Err(e) => {
                for servers in mcp_servers {
                    mcp_runtime.block_on(servers.shutdown());
                }
                return Err(e.into());
            }
        }
    }
    let mut runtime = ais::rt::Runtime::builder()
        .tools(tools)
        .out_dir(args.out.clone().unwrap_or_else(|| PathBuf::from(".")))
        .max_steps(args.max_steps.unwrap_or(ais::rt::DEFAULT_MAX_STEPS));
    if let Some(dir) = args.programs[0]
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        runtime = runtime.program_dir(dir.to_owned());
    }
    let spec = args
        .model
        .clone()
        .or_else(ais::rt::llm::default_spec)
        .filter(|s| !s.trim().is_empty());
    if let Some(spec) = &spec {
        runtime = runtime.model(super::run::open_model(spec)?.0);
    }
    let mut endpoint = ais::restate::Endpoint::new(runtime)
        .sibling_lanes(args.max_parallel.unwrap_or(ais::rt::DEFAULT_MAX_PARALLEL));
    for key in &args.identity_key {
        endpoint = endpoint.identity_key(key).map_err(|e| {
            CliError::new(
                e.to_string(),
                "give the public key Restate prints for its request identity private key (`publickeyv1_…`)",
            )
        })?;
    }
    if !args.bind.ip().is_loopback() && !endpoint.verifies_identity() {
        writeln!(
            output.err,
            "ais: WARNING: {} is not a loopback address and no `--identity-key` is set: anything \
             that reaches it can invoke the workflows. Give the Restate server's request identity \
             key with `--identity-key publickeyv1_…`, or bind 127.0.0.1.",
            args.bind
        )?;
    }
    let mut served = Vec::new();
    for (file, doc) in docs {
        let name = super::run::restate::workflow_name(file, &doc.program);
        endpoint = endpoint.document_named(name.clone(), doc).map_err(|e| {
            CliError::new(format!("`{}`: {e}", shown(file)), "serve each program once")
        })?;
        served.push(format!("{name} ({})", shown(file)));
    }
    writeln!(
        output.err,
        "serving {} on http://{} as Restate workflows: {}\nregister it with: curl -X POST http://127.0.0.1:9070/deployments -H 'content-type: application/json' -d '{{\"uri\": \"http://{}\"}}'",
        if served.len() == 1 {
            "1 program"
        } else {
            "the programs"
        },
        args.bind,
        served.join(", "),
        args.bind
    )?;
    output.err.flush()?;
    let served = endpoint.serve(args.bind).map_err(|e| {
        CliError::new(e.to_string(), "choose a free address with `--bind ADDR`").into()
    });
    let out = args.out.unwrap_or_else(|| PathBuf::from("."));
    for servers in mcp_servers {
        super::mcp::keep_logs(&out, &mcp_runtime.block_on(servers.shutdown()));
    }
    served
}

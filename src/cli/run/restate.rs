//! `ais run|resume|runs --engine restate`: a run that lives on a Restate server, driven through
//! its ingress (built with the `restate` feature; without it the flags say how to get it).
//!
//! `ais run --engine restate PROGRAM` reads the program for its workflow name (the name `ais
//! serve --restate` serves it under), checks the inputs with the runtime's own parser, submits
//! the run under a new id and follows it to its end: the report object the workflow returns is
//! `ais run --format json`'s, with `"run"` (the id) and `"engine": "restate"` added, and the exit
//! status is `ais run`'s. A run that pauses for an answer is asked on a terminal, else it stays
//! paused on the server (exit 3) until `ais resume ID --engine restate --answer TEXT`.
//!
//! The model, the tools, the output root and the step budget are the endpoint's (`ais serve
//! --restate --model …`): the run's flags that set them here are refused.

#[cfg(not(feature = "restate"))]
use super::super::Output;
use super::super::{CliError, Failure};

/// Where a run lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// In this process, journaled to a local SQLite file.
    #[default]
    Embedded,
    /// On a Restate server (`ais serve --restate` endpoints), through its ingress.
    Restate,
}

/// The engine flags of `run`, `resume` and `runs`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct EngineArgs {
    /// Where the run lives: `embedded` (this process, a local journal) or `restate` (a Restate
    /// server, through `--ingress`).
    #[arg(long, value_enum, default_value_t = Engine::Embedded)]
    pub engine: Engine,
    /// With `--engine restate`: the server's ingress.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    pub ingress: String,
    /// With `--engine restate`: the server's admin API (`ais runs`, and `ais resume` without
    /// `--program`, ask it which runs it holds).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:9070")]
    pub admin: String,
}

impl EngineArgs {
    /// Whether the run lives on Restate.
    pub fn restate(&self) -> bool {
        self.engine == Engine::Restate
    }
}

/// The flags of `ais run`/`ais resume` that set what only the endpoint decides on Restate.
#[cfg(feature = "restate")]
fn refuse_local(options: &super::Options, extra: &[(&str, bool)]) -> Result<(), Failure> {
    let local = [
        ("--model", options.model.is_some()),
        ("--out", options.out.is_some()),
        ("--trace", options.trace.is_some()),
        ("--max-steps", options.max_steps.is_some()),
        ("--tool-timeout", options.tool_timeout.is_some()),
        ("--run-record", options.run_record.is_some()),
        ("--journal", options.journal.is_some()),
    ];
    if let Some((flag, _)) = local.iter().chain(extra).find(|(_, set)| *set) {
        return Err(CliError::new(
            format!("`{flag}` sets what the endpoint decides for a run on Restate"),
            format!(
                "give it to the endpoint (`ais serve --restate {flag} …`), or drop it; `--engine embedded` runs here"
            ),
        )
        .into());
    }
    Ok(())
}

#[cfg(not(feature = "restate"))]
fn unavailable() -> Failure {
    CliError::new(
        "this `ais` was built without Restate support",
        "build it with the `restate` feature: `cargo install --path . --features restate`",
    )
    .into()
}

/// `ais run --engine restate`.
#[cfg(not(feature = "restate"))]
pub(super) fn run(_args: super::RunArgs, _output: &mut Output) -> Result<u8, Failure> {
    Err(unavailable())
}

/// `ais resume --engine restate`.
#[cfg(not(feature = "restate"))]
pub(super) fn resume(_args: super::ResumeArgs, _output: &mut Output) -> Result<u8, Failure> {
    Err(unavailable())
}

/// `ais runs --engine restate`.
#[cfg(not(feature = "restate"))]
pub(crate) fn runs(
    _args: &super::super::runs::RunsArgs,
    _output: &mut Output,
) -> Result<u8, Failure> {
    Err(unavailable())
}

#[cfg(feature = "restate")]
mod drive;
#[cfg(feature = "restate")]
pub(crate) use drive::runs;
#[cfg(feature = "restate")]
pub(super) use drive::{resume, run};

/// The workflow name `ais serve --restate` serves the program of `file` under: the program's
/// name made a Restate service name, else the file's stem.
#[cfg(feature = "restate")]
pub(crate) fn workflow_name(file: &std::path::Path, program: &ais::Program) -> String {
    ais::restate::service_name(program).unwrap_or_else(|| {
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        stem.unwrap_or_else(|| "program".into())
    })
}

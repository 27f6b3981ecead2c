//! The integration tests of the `ais-cli` package (the repository root), one test binary: each
//! file of `tests/` is a module here, so the dependencies are linked once, not once per file.
//! One file's tests:
//! `cargo test --test suite run_cli::`. The package's other test binaries, each for a reason:
//! `macro_ui` (trybuild), `kill` (the timing-sensitive kill tests), `restate` and
//! `restate_spread` (feature `restate`; the spread test times itself alone). A new test file
//! goes into one list (`mod NAME;`); `binaries.rs` fails for a file in no test binary.

// Helpers the test files share; a file takes its own with `use crate::NAME;`.
mod ags;
#[path = "../ais-ags/tests/support/mod.rs"]
mod ags_support;
#[path = "../ais-rt/tests/mcp_support/mod.rs"]
mod mcp_support;
#[path = "../ais-rt/tests/providers_support/mod.rs"]
mod providers_support;
mod support {
    pub mod cargo_case;
    pub mod chain;
    pub mod examples;
    pub mod mcp_serve;
    pub mod nobody;
    #[path = "../../benches/support/synth.rs"]
    pub mod synth;
}

mod ags_checkpoints;
mod ags_cli;
mod ags_hostile;
mod ags_level1;
mod ags_run;
mod binaries;
mod certify_cli;
mod check_calls;
mod cli;
mod cli_audit;
mod cli_fix_model;
mod cli_harden;
mod cli_journal_attacks;
mod cli_mcp;
mod cli_mcp_serve;
mod cli_sandbox;
mod cli_stdin;
mod cost_cli;
mod edit_cli;
mod edit_mcp;
mod evals;
mod graph;
mod lift_cli;
mod lift_emit;
mod lift_program;
mod macro_call_cycle;
mod macro_examples;
mod macro_export;
mod macro_fallible;
mod macro_idempotent;
mod macro_mcp;
mod macro_papercuts;
mod macro_typecheck;
mod mcp_journal;
mod mcp_serve_elicit;
mod mcp_serve_guard;
mod models_cli;
mod newcomer;
mod otlp;
mod replay_cli;
mod report;
mod run_bounds;
mod run_cli;
mod run_progress;
mod run_siblings;
mod runs_cli;
mod runs_escape;
mod serve_cli;
mod stream_cli;
mod synth;
mod test_cli;

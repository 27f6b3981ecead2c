//! The integration tests of `ais-rt`, one test binary: each file of `tests/` is a module here,
//! so the dependencies are linked once, not once per file. One file's tests: `cargo test
//! --workspace --test rt_suite machine_opcodes::`. A new test file goes into the list below
//! (`mod NAME;`); the workspace's `tests/binaries.rs` fails for a file in no test binary.

// Helpers the test files share; a file takes its own with `use crate::NAME;`.
mod common;
#[path = "../../ais-core/tests/support/mod.rs"]
mod core_support;
mod mcp_support;
mod providers_support;

mod confine_paths;
mod journal;
mod journal_ask;
mod journal_pure;
mod journal_writes;
mod machine_effects;
mod machine_fail_closed;
mod machine_faults;
mod machine_fixtures;
mod machine_honesty;
mod machine_multi_write;
mod machine_opcodes;
mod machine_pause;
mod machine_slots;
mod machine_spawn;
mod machine_stall;
mod machine_trace;
mod mcp_everything;
mod models_cost;
mod models_tiers;
mod placement;
mod providers_fill;
mod providers_http;
mod providers_prompt;
mod providers_run;
mod providers_stream;
mod sandbox_confine;
mod tools_artifact;
mod tools_builtins;
mod tools_command;
mod tools_command_attacks;
mod tools_corpus;
mod tools_native;
mod tools_python;
mod tools_python_ptrace;
mod tools_python_spare;
mod tools_python_warm;

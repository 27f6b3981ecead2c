//! The Restate tests of the `ais` package (feature `restate`), one test binary:
//! `cargo test --features restate --test restate` (a Restate server on loopback; skipped with a
//! notice when none is installed, a failure under CI=true). `restate_spread` has a binary of its
//! own: its timed test runs alone. `tests/suite.rs` says where the other test files are.

// Helpers the test files share; a file takes its own with `use crate::NAME;`.
#[path = "../ais-rt/tests/mcp_support/mod.rs"]
mod mcp_support;
mod restate_support;

mod restate_cli;
mod restate_engine;
mod restate_examples;
mod restate_identity;

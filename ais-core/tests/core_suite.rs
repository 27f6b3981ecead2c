//! The integration tests of `ais-core`, one test binary: each file of `tests/` is a module
//! here, so the dependencies are linked once, not once per file. One file's tests: `cargo test
//! --workspace --test core_suite bind_rules::`. A new test file goes into the list below (`mod
//! NAME;`); the workspace's `tests/binaries.rs` fails for a file in no test binary.

// Helpers the test files share; a file takes its own with `use crate::NAME;`.
mod bind_common;
mod expr_common;
mod support;

mod agir_block_scalars;
mod agir_edit;
mod agir_layout;
mod agir_limits;
mod agir_roundtrip;
mod audit_conformance;
mod audit_reference;
mod bind_corpus;
mod bind_corpus_programs;
mod bind_properties;
mod bind_rules;
mod check_fill;
mod check_fixtures;
mod check_papercuts;
mod check_required;
mod check_spawn_demand;
mod corpus_check;
mod corpus_read;
mod diagnostics;
mod expr_corpus;
mod expr_limits;
mod expr_props;
mod expr_semantics;
mod guard_findings;
mod mcp_check;
mod render_long_line;
mod sig_corpus;

//! The integration tests of `ais-repair`, one test binary: each file of `tests/` is a module
//! here, so the dependencies are linked once, not once per file. One file's tests: `cargo test
//! --workspace --test repair_suite rung::`. A new test file goes into the list below (`mod
//! NAME;`); the workspace's `tests/binaries.rs` fails for a file in no test binary.

// Helpers the test files share; a file takes its own with `use crate::NAME;`.
#[path = "../../ais-rt/tests/providers_support/mod.rs"]
mod providers_support;
#[path = "../../ais-core/tests/support/mod.rs"]
mod support;

mod rung;
mod rung_corpus;
mod rung_openai;
mod rung_prop;

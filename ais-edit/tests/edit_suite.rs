//! The integration tests of `ais-edit`, one test binary: each file of `tests/` is a module
//! here, so the dependencies are linked once, not once per file. One file's tests: `cargo test
//! --workspace --test edit_suite ops::`. A new test file goes into the list below (`mod
//! NAME;`); the workspace's `tests/binaries.rs` fails for a file in no test binary.

// Helpers the test files share; a file takes its own with `use crate::NAME;`.
mod support;

mod ops;
mod repairs_prop;

//! The integration tests of `ais-syntax`, one test binary: each file of `tests/` is a module
//! here, so the dependencies are linked once, not once per file. One file's tests: `cargo test
//! --workspace --test syntax_suite lowering::`. A new test file goes into the list below (`mod
//! NAME;`); the workspace's `tests/binaries.rs` fails for a file in no test binary.

mod help;
mod lowering;
mod mcp;
mod provenance;
mod routing;
mod write;

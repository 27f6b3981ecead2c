//! The kill tests, a test binary of their own: each SIGKILLs `ais` at moments it picks while a
//! model on loopback answers, so they run beside each other only, not beside the whole suite.
//! `cargo test --test kill`; `tests/suite.rs` says where the other test files are.

#[path = "../ais-rt/tests/providers_support/mod.rs"]
mod providers_support;

mod kill_journal;
mod lift_kill;

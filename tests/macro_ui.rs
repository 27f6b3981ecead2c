//! Compile-fail cases of `ais!`, one per check that can be made at compile time, each named
//! after it (`w8_dangling_read.rs`). One `TestCases` for the whole folder: each compiles a crate.
//! The `.stderr` snapshots hold only messages the macro emits itself; rustc's own type errors
//! are asserted by `macro_typecheck.rs` instead, whose wording is not pinned.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

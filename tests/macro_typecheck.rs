//! The calling convention is type-checked by rustc, at the DSL operand: a carry whose Rust type
//! does not fit the Rust tool's parameter is a type error located at the operand that passes
//! it (its line and column in the `ais!` program).
//!
//! rustc's own wording changes between versions, so this test does not snapshot it (the
//! `tests/ui/` cases snapshot only what the macro says itself). It compiles a tiny crate with
//! `cargo check --message-format=json` and asserts that an error with rustc's stable code for
//! mismatched types (E0308) exists and that its primary span starts at the operand
//! (`support/cargo_case.rs` builds the crate).

use crate::support::cargo_case;

use serde_json::Value;

/// `count` is an `int` carry (an `i64` in Rust); `describe` takes an `i32`. The AIS types
/// agree (both `int`), so the validator passes it; rustc must refuse the call at `count`.
const PROGRAM: &str = r#"use ais::ais;

ais! {
    /// Count the words of the task and describe the count.
    program Words {
        carries { task: str = input, count: int, label: str }
        #[surface(SENSE)]
        tool count_words(task: &str) -> i64 { task.split_whitespace().count() as i64 }
        #[surface(ACT)]
        tool describe(count: i32) -> String { format!("{count} words") }
        measure: SENSE count_words(task) -> count;
        say: ACT describe(count) -> label;
        done: TERMINAL(label);
        measure -> say -> done;
    }
}

fn main() {}
"#;

/// The 1-based line and column of the operand `count` in `say: ACT describe(count)`.
fn operand_position() -> (u64, u64) {
    let (i, line) = PROGRAM
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("say: ACT describe(count)"))
        .expect("the program has the call");
    let column = line.find("(count)").expect("the operand") + 2;
    (i as u64 + 1, column as u64)
}

#[test]
fn a_carry_of_the_wrong_rust_type_is_a_type_error_at_its_operand() {
    let checked = cargo_case::check(&cargo_case::Case {
        main: PROGRAM,
        build_rs: None,
        deps: "",
    });
    assert!(
        !checked.success,
        "the crate compiled, but a type error was expected"
    );
    let rendered = checked.rendered_errors();
    let errors: Vec<&Value> = checked
        .messages
        .iter()
        .filter(|m| m["level"] == "error")
        .collect();
    let (line, column) = operand_position();
    let at_operand = errors.iter().find(|m| {
        m["code"]["code"] == "E0308"
            && m["spans"].as_array().is_some_and(|spans| {
                spans.iter().any(|s| {
                    s["is_primary"] == true
                        && s["file_name"] == "src/main.rs"
                        && s["line_start"] == line
                        && s["column_start"] == column
                })
            })
    });
    assert!(
        at_operand.is_some(),
        "no mismatched-types error (E0308) at src/main.rs:{line}:{column}; rustc said:\n{rendered}"
    );
    // One mistake, one error: the adapter and the rest of the program add nothing.
    assert_eq!(errors.len(), 1, "{rendered}");
}

//! The calling convention is type-checked by rustc, at the DSL operand: a carry whose Rust type
//! does not fit the Rust tool's parameter is a type error located at the operand that passes
//! it (its line and column in the `ais!` program).
//!
//! rustc's own wording changes between versions, so this test does not snapshot it (the
//! `tests/ui/` cases snapshot only what the macro says itself). It compiles a tiny crate with
//! `cargo check --message-format=json` and asserts that an error with rustc's stable code for
//! mismatched types (E0308) exists and that its primary span starts at the operand. The crate
//! builds in trybuild's target directory with trybuild's flags, so it reuses the artifacts the
//! `tests/ui/` run already built.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The flags trybuild passes (see trybuild's `rustflags.rs` and `cargo.rs`): the same flags
/// make cargo reuse the dependencies trybuild compiled.
const TRYBUILD_RUSTFLAGS: &str =
    r#"["--cfg", "trybuild", "--verbose", "-A", "dead_code", "--diagnostic-width=140"]"#;

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

/// `cargo check`s a crate whose `src/main.rs` is `main`, returning the compiler's messages.
fn check(main: &str) -> Vec<Value> {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let manifest = format!(
        "[package]\nname = \"ais-typecheck-case\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\nais = {{ path = {:?} }}\n\n[workspace]\n",
        ws.display().to_string()
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(ws.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", ws.join("target/tests/trybuild"))
        .env_remove("RUSTFLAGS")
        .env("CARGO_INCREMENTAL", "0")
        .arg("check")
        .arg("--offline")
        .arg("--quiet")
        .arg("--color=never")
        .arg("--message-format=json")
        .arg(format!("--config=build.rustflags={TRYBUILD_RUSTFLAGS}"))
        .output()
        .expect("cargo runs");
    assert!(
        !out.status.success(),
        "the crate compiled, but a type error was expected"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-message")
        .map(|m| m["message"].clone())
        .collect()
}

#[test]
fn a_carry_of_the_wrong_rust_type_is_a_type_error_at_its_operand() {
    let messages = check(PROGRAM);
    let errors: Vec<&Value> = messages.iter().filter(|m| m["level"] == "error").collect();
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
    let rendered: Vec<&str> = errors
        .iter()
        .filter_map(|m| m["rendered"].as_str())
        .collect();
    assert!(
        at_operand.is_some(),
        "no mismatched-types error (E0308) at src/main.rs:{line}:{column}; rustc said:\n{}",
        rendered.join("\n")
    );
    // One mistake, one error: the adapter and the rest of the program add nothing.
    assert_eq!(errors.len(), 1, "{}", rendered.join("\n"));
}

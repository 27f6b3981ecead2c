//! `-` names standard input for `ais check`, `fmt` and `fix`: the text is read from the pipe,
//! diagnostics call it `<stdin>`, and `-w -` (or `-` twice) is a usage error. Each test runs
//! the real binary with a real pipe.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const EXAMPLE: &str = "examples/writing_plans.agir";
const MISSPELLED: &str = "tests/fixtures/misspelled_read.agir";
const UNDECLARED: &str = "tests/fixtures/undeclared_write.agir";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).expect("the test file")
}

/// Runs `ais` with `input` piped to its standard input.
fn ais_piped(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ais binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // A usage error exits before reading; the pipe may then be closed under us.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().expect("ais finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_reads_standard_input_and_names_it_stdin() {
    let o = ais_piped(&["check", "-"], &read(MISSPELLED));
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(out.contains("--> <stdin>:82:13"), "{out}");
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("<stdin>: degraded")),
        "{out}"
    );
    // Mixed with a file, in order, and as JSON.
    let o = ais_piped(
        &["check", "--format", "json", EXAMPLE, "-"],
        &read(MISSPELLED),
    );
    let files: Vec<String> = text(&o.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            v["file"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(files, [EXAMPLE, "<stdin>"]);
    assert_eq!(o.status.code(), Some(1));
    // An empty pipe is an empty program, not a clean one.
    let o = ais_piped(&["check", "-"], "");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
}

#[test]
fn check_on_standard_input_suggests_commands_that_read_it() {
    let o = ais_piped(&["check", "-"], &read(UNDECLARED));
    let out = text(&o.stdout);
    assert!(
        out.contains("`ais fix -` prints the repaired program"),
        "{out}"
    );
    assert!(!out.contains("-w <stdin>"), "{out}");
}

#[test]
fn fmt_prints_standard_input_as_canonical_text_on_standard_output() {
    let canonical = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["fmt", EXAMPLE])
        .current_dir(root())
        .output()
        .expect("ais fmt");
    let o = ais_piped(&["fmt", "-"], &read(EXAMPLE));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&canonical.stdout));
    let changed = read(EXAMPLE).replace("name: writing_plans", "name:   writing_plans");
    let o = ais_piped(&["fmt", "--check", "-"], &changed);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("`<stdin>` is not canonical AG-IR: line 2"),
        "{err}"
    );
    assert!(
        err.contains("`ais fmt -` prints the canonical text"),
        "{err}"
    );
    let o = ais_piped(&["fmt", "-"], "nodes: [");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--> <stdin>:1:"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn fix_prints_the_repaired_standard_input() {
    let o = ais_piped(&["fix", "-"], &read(UNDECLARED));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("plan_ok:"), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("<stdin>: fixed"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn writing_standard_input_in_place_or_reading_it_twice_is_a_usage_error() {
    for args in [
        &["fmt", "-w", "-"][..],
        &["fmt", "--write", "-"],
        &["fix", "-w", "-"],
        &["check", "-", "-"],
        &["check", "-", EXAMPLE, "-"],
    ] {
        let o = ais_piped(args, &read(EXAMPLE));
        assert_eq!(o.status.code(), Some(64), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains("Usage: ais "), "{err}");
    }
    let err = text(&ais_piped(&["fmt", "-w", "-"], "").stderr);
    assert!(
        err.contains("`ais fmt -` prints the canonical text"),
        "{err}"
    );
}

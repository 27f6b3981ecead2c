//! `ais runs` and `ais runs show` on a journal holding hostile names: a program named with
//! terminal escape sequences is listed with them escaped.

use std::process::Command;

fn ais(keys: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ais"));
    c.env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .env("AIS_STATE_DIR", keys)
        .env("NO_COLOR", "1");
    c
}

/// A program named with terminal escape sequences (set the title, clear the screen) is listed
/// by `ais runs` and `ais runs show` with those sequences escaped, never sent to the terminal.
#[test]
fn run_listings_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let keys = dir.path().join("keys");
    let program = dir.path().join("p.agir");
    std::fs::write(
        &program,
        "walker:\n  name: \"evil\\e]0;TITLE\\a\\e[2J\\u202e\"\n  carries:\n    task: {type: str, role: input}\nnodes:\n  - {id: done, type: TERMINAL, reads: [task]}\n",
    )
    .unwrap();
    let o = ais(&keys)
        .arg("run")
        .arg(&program)
        .args(["--task", "go", "--format", "json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = report["run"].as_str().unwrap().to_owned();
    for args in [vec!["runs"], vec!["runs", "show", id.as_str()]] {
        let o = ais(&keys)
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
            "{args:?}: {text:?}"
        );
        assert!(
            text.contains("evil\\x1b]0;TITLE\\x07\\x1b[2J\\u{202e}"),
            "{args:?}: {text}"
        );
    }
}

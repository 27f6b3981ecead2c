//! `ais run --format human` where standard error is no terminal says where a long run is at
//! least every 5 seconds, so a run is never silent for minutes; `--format json` stays quiet.

use std::process::Command;

const SLOW: &str = r#"---
name: slow
description: Two slow steps.
---
tools:
  nap:
    sig: "(task) -> str"
    surface: SENSE
    serves: [first, second]
    body: |
      def nap(task):
          import time
          time.sleep(3.2)
          return task
walker:
  name: Slow
  carries:
    task: {type: str, role: input}
    a: {type: str, produced_by: first}
    b: {type: str, produced_by: second}
nodes:
  - {id: first, type: SENSE, owner: code, reads: [task], writes: [a]}
  - {id: second, type: SENSE, owner: code, reads: [task], writes: [b]}
  - {id: done, type: TERMINAL, reads: [a, b]}
edges:
  - {from: first, to: second}
  - {from: second, to: done}
"#;

#[test]
fn a_long_run_on_a_pipe_prints_a_progress_line_every_five_seconds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("slow.agir"), SLOW).unwrap();
    // Standard error is a pipe here: no progress bar, so the heartbeat line is the only sign.
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["run", "slow.agir", "--task", "hi"])
        .current_dir(dir.path())
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .output()
        .expect("the ais binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("still running"))
        .collect();
    assert_eq!(lines.len(), 1, "one line after 5 s of a 6.4 s run: {err}");
    assert!(
        lines[0].starts_with("slow.agir: still running after 5")
            && lines[0].contains("at `second`"),
        "{}",
        lines[0]
    );
    assert!(stdout.contains("ok after 3 steps"), "{stdout}");
}

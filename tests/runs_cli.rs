//! `ais runs`: list the journaled runs, show one's steps, remove them — on real runs of the
//! binary.

use std::path::Path;
use std::process::{Command, Output};

const PROGRAM: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    approved: {type: bool, role: input, doc: "Approve? (true/false)"}
    draft: {type: str, produced_by: write}
nodes:
  - {id: write, type: GEN-RAW, doc: "Write the draft.", reads: [task], writes: [draft]}
  - {id: gate, type: ROUTE, owner: code, reads: [approved]}
  - {id: done, type: TERMINAL, reads: [draft]}
edges:
  - {from: write, to: gate}
  - {from: gate, to: done}
"#;

fn ais(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn runs_lists_shows_and_removes_journaled_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.agir"), PROGRAM).unwrap();
    std::fs::write(dir.path().join("s.json"), r#"{"write": ["d1", "d2"]}"#).unwrap();
    let run = |extra: &[&str]| {
        let o = ais(
            dir.path(),
            &[
                &[
                    "run",
                    "p.agir",
                    "--task",
                    "x",
                    "--model",
                    "scripted:s.json",
                    "--format",
                    "json",
                ],
                extra,
            ]
            .concat(),
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v["run"].as_str().unwrap().to_owned())
    };
    let (code, paused) = run(&[]);
    assert_eq!(code, Some(3));
    let (code, done) = run(&["--input", "approved=true"]);
    assert_eq!(code, Some(0));

    let o = ais(dir.path(), &["runs"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let listing = text(&o);
    let row = |id: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(row(&paused).contains("input_required"), "{listing}");
    assert!(row(&done).contains(" ok "), "{listing}");
    assert!(
        row(&done).ends_with("gate"),
        "the last committed step: {listing}"
    );

    let o = ais(dir.path(), &["runs", "show", &done, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["run"]["status"], "ok");
    assert_eq!(v["steps"][0]["commit"]["instruction"], "write");
    assert_eq!(v["steps"][0]["commit"]["written"][0][0], "draft");
    assert_eq!(v["effects"][0]["effect"]["kind"], "slot");
    let o = ais(dir.path(), &["runs", "show", &done]);
    assert!(
        text(&o).contains("1 effects journaled, 0 in flight"),
        "{}",
        text(&o)
    );

    let o = ais(dir.path(), &["runs", "rm", &done]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = ais(dir.path(), &["runs", "show", &done]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("there is no run `{done}`")),
        "{}",
        text(&o)
    );
    let o = ais(dir.path(), &["runs", "gc", "--older-than", "0s"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("removed 1 run"), "{}", text(&o));
    let o = ais(dir.path(), &["runs", "gc", "--older-than", "soon"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

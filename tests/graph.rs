//! `ais graph` as a real subprocess: Mermaid and DOT snapshots of every example program, the
//! SVG well-formed for each, findings marked with `--check`, and bad input refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .expect("the ais binary runs")
}

fn graph(file: &str, format: &str) -> String {
    let o = ais_in(&root(), &["graph", "--format", format, file]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{file}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8")
}

/// The example programs' `.agir` files.
fn examples() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("examples/agir"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".agir"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    files
}

#[test]
fn mermaid_and_dot_of_every_example() {
    for file in examples() {
        let stem = file.trim_end_matches(".agir");
        let path = format!("examples/agir/{file}");
        insta::assert_snapshot!(format!("{stem}.mermaid"), graph(&path, "mermaid"));
        insta::assert_snapshot!(format!("{stem}.dot"), graph(&path, "dot"));
    }
}

#[test]
fn the_svg_of_every_example_is_one_well_formed_picture() {
    for file in examples() {
        let svg = graph(&format!("examples/agir/{file}"), "svg");
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg", "{file}");
        let agir = std::fs::read_to_string(root().join("examples/agir").join(&file)).unwrap();
        let program = ais::agir::read(&agir).unwrap().program;
        let boxes = doc
            .descendants()
            .filter(|n| n.attribute("data-node").is_some())
            .count();
        assert!(
            boxes >= program.instructions().len(),
            "{file}: {boxes} boxes"
        );
        for n in program.instructions() {
            assert!(svg.contains(&n.id), "{file}: `{}` is drawn", n.id);
        }
    }
}

#[test]
fn check_marks_the_instructions_findings_are_about() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"walker:
  carries:
    task: {type: str, role: input}
    plan_md: {type: str, produced_by: write}
nodes:
  - {id: write, type: GEN-RAW, owner: model, reads: [task], writes: [plan_md], doc: "Write."}
  - {id: verify, type: CODE, owner: code, reads: [plan_mdd], writes: [plan_md], body: "plan_md"}
  - {id: done, type: TERMINAL, reads: [plan_md]}
edges:
  - {from: write, to: verify}
  - {from: verify, to: done}
  - {from: done, to: write, modality: forbidden}
"#;
    std::fs::write(dir.path().join("p.agir"), text).unwrap();
    let o = ais_in(dir.path(), &["graph", "--check", "p.agir"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "an error-severity finding: {out}");
    assert!(out.contains("n1[\"verify<br/>CODE<br/>⚠ W8"), "{out}");
    assert!(out.contains("class n1 finding"), "{out}");
    assert!(out.contains("n2 --x|\"forbidden\"| n0"), "{out}");
    let plain = ais_in(dir.path(), &["graph", "p.agir"]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('⚠'));
    // Written to a file instead.
    let o = ais_in(
        dir.path(),
        &["graph", "--format", "svg", "p.agir", "-o", "p.svg"],
    );
    assert_eq!(o.status.code(), Some(0));
    let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
    roxmltree::Document::parse(&svg).expect("well-formed");
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote the graph of p.agir to p.svg"));
}

#[test]
fn a_file_that_is_not_agir_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.agir"), "nodes: [unclosed\n").unwrap();
    let o = ais_in(dir.path(), &["graph", "bad.agir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.agir"));
    assert!(o.stdout.is_empty());
    let o = ais_in(dir.path(), &["graph", "missing.agir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.agir"));
}

use crate::support::chain;
use chain::long_program;

/// A 4,000-step program's SVG is refused at once, naming the writers that draw it; they do, and
/// `ais report` of a journaled run of it still writes its page (without the picture) in
/// bounded time.
#[test]
fn a_long_program_is_refused_as_svg_in_bounded_time_and_drawn_as_mermaid() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.agir"), long_program(4000)).unwrap();
    let start = std::time::Instant::now();
    let o = ais_in(dir.path(), &["graph", "--format", "svg", "long.agir"]);
    let took = start.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("4001 nodes") && err.contains("--format mermaid"),
        "{err}"
    );
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    let o = ais_in(dir.path(), &["graph", "--format", "mermaid", "long.agir"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("s3999"));
    let o = ais_in(
        dir.path(),
        &[
            "run",
            "long.agir",
            "--task",
            "go",
            "--format",
            "json",
            "--max-steps",
            "5000",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = report["run"].as_str().unwrap();
    let start = std::time::Instant::now();
    let o = ais_in(dir.path(), &["report", id, "-o", "r.html"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        page.contains("more than the 800 the SVG layout draws"),
        "no note"
    );
}

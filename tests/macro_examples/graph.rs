//! An `ais!` program's `AGIR` goes through the same [`ais::graph::Graph::from_agir`] as its
//! `.agir` file does under `ais graph`: the same Mermaid, DOT and SVG.

use super::EXAMPLES;

#[test]
fn the_macros_agir_draws_as_the_cli_draws_its_file() {
    for ex in &EXAMPLES {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agir");
        let graph = ais::graph::Graph::from_agir(ex.agir, &[], &mut |target| {
            let text = std::fs::read_to_string(dir.join("draft_changelog.agir")).ok()?;
            (target == "DraftChangelog")
                .then(|| ais::agir::read(&text).ok())?
                .map(|d| d.program)
        })
        .unwrap();
        for (format, text) in [
            ("mermaid", graph.mermaid()),
            ("dot", graph.dot()),
            ("svg", graph.svg().expect("a small graph")),
        ] {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_ais"))
                .args([
                    "graph",
                    "--format",
                    format,
                    &format!("examples/agir/{}", ex.file),
                ])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                text,
                "{} as {format}",
                ex.file
            );
        }
    }
}

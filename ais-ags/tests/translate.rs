//! Round trips between AGS and AG-IR: every example graph survives `export(import(g))`, the
//! imported program is one the AIS validator accepts, and every AG-IR program of the corpus
//! survives `import(export(p))` with its export valid against the AGS schema.

use crate::support;

use ais_ags::{export, import};

#[test]
fn every_example_round_trips_through_ag_ir() {
    for path in support::graphs("examples") {
        let (_, checked) = ais_ags::check_path(&path).expect("readable");
        let g = checked.data.expect("reads");
        let p = import(&checked.graph.expect("reads as a graph")).expect("imports");
        // Through the AG-IR text, as `ais import` writes it and a user reads it back.
        let text = ais_core::agir::write(&p);
        let back = ais_core::agir::read(&text)
            .expect("the imported program reads")
            .program;
        assert_eq!(back, p, "{}: AG-IR text round trip", path.display());
        let g2 = export(&back);
        assert_eq!(g2, g, "{}: export(import(g)) != g", path.display());
        let again = ais_ags::check_text(&serde_json::to_string(&g2).unwrap(), path.parent());
        assert!(
            again.is_strictly_clean(),
            "{}:\n{}",
            path.display(),
            support::listing(&again)
        );
        let checked = ais_core::check(&back, &ais_core::SourceMap::new(), ais_core::Repairs::Off);
        let errors: Vec<_> = checked
            .findings
            .iter()
            .filter(|f| f.severity >= ais_core::Severity::Error)
            .map(|f| format!("{} {}", f.id, f.message))
            .collect();
        assert!(
            errors.is_empty(),
            "{}: the imported program has errors: {errors:#?}",
            path.display()
        );
    }
}

fn corpus_programs() -> Vec<(std::path::PathBuf, ais_core::Program)> {
    let Some(ags) = support::ags_dir() else {
        return Vec::new();
    };
    let dir = ags.join("../corpus/sigil-fixtures");
    let mut out = Vec::new();
    let mut todo = vec![dir];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("the corpus is readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "agir") {
                let text = std::fs::read_to_string(&path).expect("readable");
                if let Ok(doc) = ais_core::agir::read(&text) {
                    out.push((path, doc.program));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_corpus_program_round_trips_through_ags() {
    let programs = corpus_programs();
    if support::ags_dir().is_some() {
        assert!(
            programs.len() > 20,
            "the corpus holds its programs ({})",
            programs.len()
        );
    }
    for (path, p) in programs {
        let g = export(&p);
        if let Err(errors) = ais_ags::validate_graph_schema(&g) {
            panic!(
                "{}: the export fails the AGS schema: {errors:#?}",
                path.display()
            );
        }
        let text = serde_json::to_string_pretty(&g).unwrap();
        let read_back = ais_ags::check_text(&text, None)
            .graph
            .expect("the export reads as a graph");
        let back = import(&read_back).expect("imports");
        assert_eq!(back, p, "{}: import(export(p)) != p", path.display());
    }
}

#[test]
fn an_edited_export_is_imported_from_what_it_now_says() {
    let Some((_, p)) = corpus_programs().into_iter().next() else {
        return;
    };
    let mut g = export(&p);
    let first = g["nodes"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    g["nodes"][&first]["description"] = serde_json::json!("Edited by a reviewer.");
    let back = import(&ais_ags::Graph::from_json(&g).expect("reads")).expect("imports");
    assert_ne!(back, p, "a stale x-ais program is not used");
    assert_eq!(
        back.instructions()[0].doc.as_deref(),
        Some("Edited by a reviewer.")
    );
}

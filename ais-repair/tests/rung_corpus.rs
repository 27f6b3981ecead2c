//! The rung over every corpus program (read in place from `../shared/corpus`): no panic, a
//! hostile script never adopted against the letter of the rules, and each view a cut of its
//! program — the table printed shows how much of the program text the model is shown.

use crate::support;

use ais_core::agir;
use ais_repair::{Budget, Config, View, findings_of, repair};
use ais_rt::llm::ScriptedModel;
use serde_json::json;

#[test]
fn the_rung_over_every_corpus_program_never_panics_and_shows_only_views() {
    let Some(dir) = support::corpus() else {
        return;
    };
    let tokio = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let config = Config {
        budget: Budget {
            calls: 6,
            attempts: 2,
        },
        ..Config::default()
    };
    let (mut programs, mut views, mut shown, mut whole) = (0, 0, 0usize, 0usize);
    println!("| program | findings | views | view bytes / program bytes |");
    println!("|---|---|---|---|");
    for path in support::agir_files(&dir) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(doc) = agir::read(&text) else {
            continue;
        };
        programs += 1;
        let findings = findings_of(&doc, &config);
        let canonical = agir::write(&doc.program).len().max(1);
        let mut sizes = Vec::new();
        for f in &findings {
            let view = View::of(&doc.program, f);
            if view.is_empty() {
                continue;
            }
            let cut = view.text(&doc.program);
            // The cut reads back as AG-IR: the model is shown a well-formed document.
            assert!(agir::read(&cut).is_ok(), "{}: {cut}", path.display());
            sizes.push(cut.len());
        }
        views += sizes.len();
        shown += sizes.iter().sum::<usize>();
        whole += canonical * sizes.len();
        let attacks = json!([
            "ignore the previous instructions",
            {"ops": [{"op": "set_doc", "target": "program", "doc": "pwned"}]},
            {"ops": [{"op": "delete_instruction", "ids": ["__nope__"]}]},
            {"ops": vec![json!({"op": "set_doc", "target": "program", "doc": "x"}); 40]},
            {"ops": [{"op": "rename", "target": "carry:task", "to": "job"}]},
            {"ops": [{"op": "set_traces_to", "target": "program", "traces_to": ["x"]}]},
        ]);
        let model =
            ScriptedModel::from_json("attacks.json".as_ref(), json!({"repair": attacks})).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let done = tokio
            .block_on(repair(&name, &text, &findings, &model, &config))
            .unwrap();
        assert!(done.calls <= 6);
        for a in &done.attempts {
            if a.discarded.is_none() {
                let (b, n) = a.findings.unwrap();
                assert!(n < b, "{name}: {a:?}");
            }
        }
        if done.deviations.is_empty() {
            assert_eq!(done.text, text, "{name}: changed with nothing adopted");
        }
        let rel = path.strip_prefix(&dir).unwrap().display().to_string();
        let ratio = if sizes.is_empty() {
            "-".to_owned()
        } else {
            format!(
                "{:.0}%",
                100.0 * sizes.iter().sum::<usize>() as f64 / (canonical * sizes.len()) as f64
            )
        };
        println!("| {rel} | {} | {} | {ratio} |", findings.len(), sizes.len());
    }
    println!(
        "{programs} programs, {views} views, a view is on average {:.0}% of its program's canonical text",
        100.0 * shown as f64 / whole.max(1) as f64
    );
    assert!(programs >= 50, "only {programs} corpus programs read");
}

//! A model that answers random edits: the rung never adopts one that increases the findings or
//! changes the obligation closure, and a discarded one leaves the program byte-identical.

use ais_core::{AuditConfig, Severity, agir};
use ais_repair::{Budget, Closure, Config, findings_of, repair};
use ais_rt::llm::ScriptedModel;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The CLI tests' fixture with an edge tracing `r_draft` and a discretionary obligation.
fn program() -> String {
    include_str!("../../tests/fixtures/repair/notes.agir")
        .replace(
            "- {from: draft, to: polish}",
            "- {from: draft, to: polish, traces_to: [r_draft]}",
        )
        .replace(
            "quote: Publish it.}\n",
            "quote: Publish it.}\n    - {id: r_maybe, kind: step, force: discretionary, quote: You may cc the team.}\n",
        )
}

const IDS: [&str; 5] = ["draft", "polish", "publish", "done", "extra"];
const CARRIES: [&str; 4] = ["task", "note", "page", "memo"];
const OBLIGATIONS: [&str; 5] = ["r_draft", "r_polish", "r_publish", "r_maybe", "r_new"];
const MODALITIES: [&str; 3] = ["mandatory", "discretionary", "forbidden"];

fn pick<T: Clone + std::fmt::Debug + 'static>(xs: &'static [T]) -> impl Strategy<Value = T> {
    proptest::sample::select(xs)
}

/// One random operation of the edit catalog over the program's names (and some it lacks).
fn op() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (pick(&IDS), proptest::collection::vec(pick(&OBLIGATIONS), 0..3)).prop_map(|(id, t)| {
            json!({"op": "set_traces_to", "target": format!("instruction:{id}"), "traces_to": t})
        }),
        1 => (pick(&IDS), pick(&IDS), proptest::collection::vec(pick(&OBLIGATIONS), 0..2)).prop_map(
            |(a, b, t)| json!({"op": "set_traces_to", "target": format!("edge:{a}->{b}"), "traces_to": t})
        ),
        1 => (pick(&IDS), pick(&IDS), pick(&MODALITIES)).prop_map(
            |(a, b, m)| json!({"op": "set_modality", "from": a, "to": b, "modality": m})
        ),
        1 => (pick(&IDS), pick(&IDS), proptest::option::of(pick(&MODALITIES))).prop_map(
            |(a, b, m)| json!({"op": "add_edge", "from": a, "to": b, "modality": m})
        ),
        1 => (pick(&IDS), pick(&IDS)).prop_map(|(a, b)| json!({"op": "remove_edge", "from": a, "to": b})),
        1 => pick(&IDS).prop_map(|id| json!({"op": "delete_instruction", "ids": [id]})),
        1 => (pick(&IDS), "[A-Za-z ]{0,12}").prop_map(
            |(id, d)| json!({"op": "set_doc", "target": format!("instruction:{id}"), "doc": d})
        ),
        1 => (pick(&IDS), proptest::collection::vec(pick(&CARRIES), 0..3)).prop_map(
            |(id, r)| json!({"op": "set_reads", "id": id, "reads": r})
        ),
        1 => (pick(&IDS), proptest::collection::vec(pick(&CARRIES), 0..2)).prop_map(
            |(id, w)| json!({"op": "set_writes", "id": id, "writes": w})
        ),
        1 => (pick(&CARRIES), pick(&CARRIES)).prop_map(
            |(c, to)| json!({"op": "rename", "target": format!("carry:{c}"), "to": to})
        ),
        1 => (pick(&IDS), pick(&IDS), proptest::collection::vec(pick(&OBLIGATIONS), 0..2)).prop_map(
            |(a, b, t)| json!({"op": "insert_between", "from": a, "to": b,
                "instruction": {"id": "extra", "type": "GEN-RAW", "reads": ["note"], "writes": ["note"],
                                "doc": "Extra.", "traces_to": t}})
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn random_edits_are_never_adopted_when_they_make_things_worse_or_touch_the_obligations(
        answers in proptest::collection::vec(proptest::collection::vec(op(), 1..5), 1..4)
    ) {
        let config = Config {
            budget: Budget { calls: 8, attempts: 3 },
            ..Config::default()
        };
        let program = program();
        let doc = agir::read(&program).unwrap();
        let before = findings_of(&doc, &config);
        let closure = Closure::of(&doc.program, None, &AuditConfig::default());
        let answers: Vec<Value> = answers.into_iter().map(|ops| json!({"ops": ops})).collect();
        let model = ScriptedModel::from_json("random.json".as_ref(), json!({"repair": answers})).unwrap();
        let done = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(repair("notes.agir", &program, &before, &model, &config))
            .unwrap();
        let adopted = done.adopted().count();
        prop_assert_eq!(adopted, done.deviations.len());
        if adopted == 0 {
            prop_assert_eq!(&done.text, &program);
            prop_assert_eq!(done.findings.len(), before.len());
        } else {
            // Strictly fewer findings, no new error, the closure kept (checked afresh here,
            // from the text the rung returns).
            let after_doc = agir::read(&done.text).unwrap();
            let after = findings_of(&after_doc, &config);
            prop_assert!(after.len() < before.len(), "{} -> {}", before.len(), after.len());
            prop_assert!(after.len() + adopted <= before.len());
            for f in after.iter().filter(|f| f.severity >= Severity::Error) {
                prop_assert!(
                    before.iter().any(|b| b.id == f.id && b.message == f.message),
                    "a new error was adopted: {}", f.message
                );
            }
            let now = Closure::of(&after_doc.program, None, &AuditConfig::default());
            prop_assert_eq!(&now.record, &closure.record);
            prop_assert!(closure.realized.is_subset(&now.realized));
            prop_assert!(now.remodalized.is_subset(&closure.remodalized));
            prop_assert!(now.traced.iter().all(|t| closure.record.contains_key(t)));
        }
        // Every attempt's verdict is one of the named ones, and adopted ones went down.
        for a in &done.attempts {
            if a.discarded.is_none() {
                let (b, n) = a.findings.unwrap();
                prop_assert!(n < b);
            }
        }
    }
}

/// The property is not vacuous: over a fixed sample of random patches, some are adopted and
/// the discards spread over several reasons.
#[test]
fn the_random_patches_reach_adoption_and_every_kind_of_discard() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::collection::vec(op(), 1..3);
    let config = Config {
        budget: Budget {
            calls: 1,
            attempts: 1,
        },
        ..Config::default()
    };
    let program = program();
    let doc = agir::read(&program).unwrap();
    let targets = findings_of(&doc, &config);
    let tokio = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut tally = std::collections::BTreeMap::new();
    for _ in 0..200 {
        let ops = strategy.new_tree(&mut runner).unwrap().current();
        let model =
            ScriptedModel::from_json("r.json".as_ref(), json!({"repair": [{"ops": ops}]})).unwrap();
        let done = tokio
            .block_on(repair("notes.agir", &program, &targets, &model, &config))
            .unwrap();
        let key = done.attempts[0]
            .discarded
            .map_or("adopted", ais_repair::Discarded::as_str);
        *tally.entry(key).or_insert(0usize) += 1;
    }
    println!("{tally:?}");
    assert!(tally.get("adopted").copied().unwrap_or(0) >= 1, "{tally:?}");
    for reason in ["rejected", "out_of_view", "obligation", "not_better"] {
        assert!(tally.contains_key(reason), "no `{reason}` in {tally:?}");
    }
}

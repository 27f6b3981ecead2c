//! `obligation` items: the provenance record in the DSL (spec §9.5). They lower to the
//! program's `faithfulness` section, the audit runs over them, and its findings land on the
//! obligation's tokens.

use ais_core::{CheckId, Code, ObligationKind};
use ais_syntax::diagnose;

const TEXT: &str = r#"
/// Draft a note.
program Notes {
    carries { task: str = input, note: str }
    obligation r_draft { kind: step, force: mandatory, quote: "Draft the note." }
    obligation r_sign { kind: step, force: mandatory, bearer: agent, quote: "Sign it." }
    obligation r_tone { kind: constraint, force: forbidden, quote: "Never be rude." }
    /// Draft the note. Never be rude.
    #[traces_to("r_draft", "r_tone")]
    draft: GEN-RAW(task) -> note;
    done: TERMINAL(note);
    draft -> done;
}
"#;

#[test]
fn obligations_lower_to_the_record_and_the_audit_finds_the_dropped_one_at_its_token() {
    let file = ais_syntax::parse_str(TEXT).expect("parses");
    let lowered = ais_syntax::lower(&file.programs[0]).expect("lowers");
    let record = lowered.program.faithfulness.as_ref().expect("a record");
    let obligations = record.obligation_list();
    assert_eq!(obligations.len(), 3);
    assert_eq!(obligations[0].kind, Some(ObligationKind::Step));
    assert_eq!(obligations[1].quote.as_deref(), Some("Sign it."));
    // The same record through AG-IR: the export reads back to the same program.
    let text = ais_core::agir::write(&lowered.program);
    assert!(
        text.contains("faithfulness:\n  obligations:\n    - id: r_draft\n"),
        "{text}"
    );
    assert_eq!(
        ais_core::agir::read(&text).unwrap().program,
        lowered.program
    );
    let found = diagnose(
        &lowered,
        ais_syntax::Site::one(proc_macro2::Span::call_site()),
    );
    let f1: Vec<_> = found
        .iter()
        .filter(|d| d.id == Code::Check(CheckId::F1))
        .collect();
    assert_eq!(f1.len(), 1, "{found:#?}");
    assert!(f1[0].message.contains("`r_sign`"), "{}", f1[0].message);
    assert!(!f1[0].is_error(), "a faithfulness deficit is a warning");
}

#[test]
fn a_misspelled_field_or_a_field_twice_is_an_error_at_it() {
    for (text, says) in [
        (
            "program P { obligation r { kinds: step } }",
            "unknown obligation field `kinds`",
        ),
        (
            "program P { obligation r { kind: step, kind: io } }",
            "`kind` is given twice",
        ),
        (
            "program P { obligation r { quote: step } }",
            "`quote` is the source's words",
        ),
        (
            "program P { obligation r { at: 3 } }",
            "`at` is the lift's note as a string literal: `at: \"..\"`",
        ),
        (
            "program P { source { path: \"a.md\", sha: \"x\" } }",
            "unknown source field `sha`; expected `path` or `digest`",
        ),
        (
            "program P { deviation { kind: dropped, why: \"x\" } }",
            "unknown deviation field `why`; expected `obligation`, `kind`, `element` or `reason`",
        ),
        (
            "program P { source { path: \"a\" } source { path: \"b\" } }",
            "`source { .. }` is given twice",
        ),
        (
            "program P { tool f(x) = rust \"fn f() {}\"; }",
            "a Rust tool is written with its body in braces",
        ),
    ] {
        let err = ais_syntax::parse_str(text).expect_err(text);
        assert!(err.to_string().contains(says), "{text}: {err}");
    }
}

/// Everything a lifted program's record holds: the source, `realized_by`, the lift's notes on
/// each obligation, accepted deviations, and a tool whose body is Python.
const LIFTED: &str = r##"
/// Count words.
#[concurrency(spawn = none, reason = "the steps run in the order the skill states them")]
program WordCount (name = "word_count") {
    source { path: "SKILL.md", digest: "sha256:801461ac68eb645cef62ec1bb2bbb8d713e081ec3b637b035fb0ddd711d2cd12" }
    carries { task: str = input, count: outcome }
    #[surface(ACT, artifact)]
    #[traces_to("r1")]
    tool count_words(target_path) -> String = python r#"def run(target_path):
    return str(len(open(target_path).read().split()))"#;
    #[traces_to("r1")]
    count: ACT count_words(task) -> count;
    done: TERMINAL(count);
    count -> done;
    obligation r1 {
        kind: step,
        force: mandatory,
        bearer: agent,
        quote: "Run the script.",
        realized_by: [count, "tool:count_words"],
        at: "10:4",
        force_from: "the skill: a step of the procedure",
        condition: "when a file is named",
        cohesion: adaptive,
    }
    deviation { obligation: r1, kind: weakened, element: "tool:count_words", reason: "no sandbox" }
}
"##;

#[test]
fn a_lifted_programs_record_and_python_tools_lower_to_the_same_agir_the_lift_writes() {
    let file = ais_syntax::parse_str(LIFTED).expect("parses");
    let lowered = ais_syntax::lower(&file.programs[0]).expect("lowers");
    let p = &lowered.program;
    let tool = &p.tools.as_ref().unwrap()[0];
    assert_eq!(tool.lang.as_deref(), Some("python"));
    assert_eq!(tool.sig.as_deref(), Some("(target_path) -> str"));
    assert!(
        tool.body
            .as_deref()
            .unwrap()
            .starts_with("def run(target_path):\n    return")
    );
    let record = p.faithfulness.as_ref().unwrap();
    let source = record.source.as_ref().unwrap();
    assert_eq!(source.path.as_deref(), Some("SKILL.md"));
    let o = &record.obligation_list()[0];
    assert_eq!(
        o.realized_by,
        Some(vec![
            ais_core::ElementRef::Node("count".into()),
            ais_core::ElementRef::Tool("count_words".into())
        ])
    );
    let keys: Vec<&str> = o.extra.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["at", "force_from", "condition", "cohesion"]);
    assert_eq!(o.extra[3].1, ais_core::Value::Str("adaptive".into()));
    let d = &record.deviation_list()[0];
    assert_eq!(d.kind, Some(ais_core::DeviationKind::Weakened));
    assert_eq!(d.reason.as_deref(), Some("no sandbox"));
    assert_eq!(
        p.concurrency.as_ref().unwrap().reason.as_deref(),
        Some("the steps run in the order the skill states them")
    );
    // Through AG-IR and back, nothing is lost.
    let text = ais_core::agir::write(p);
    assert!(text.contains("      at: \"10:4\"\n"), "{text}");
    assert_eq!(ais_core::agir::read(&text).unwrap().program, *p);
}

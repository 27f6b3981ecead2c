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
    ] {
        let err = ais_syntax::parse_str(text).expect_err(text);
        assert!(err.to_string().contains(says), "{text}: {err}");
    }
}

//! The `help:` lines the DSL words itself, for findings the validator repairs only by hand.

use ais_syntax::Site;
use ais_syntax::diagnose;
use ais_syntax::lower;

fn helps(text: &str) -> Vec<(String, Option<String>)> {
    let file = ais_syntax::parse_str(text).expect("parses");
    let def = &file.programs[0];
    let lowered = lower(def).expect("lowers");
    diagnose(&lowered, Site::one(def.ident.span()))
        .into_iter()
        .map(|d| (d.message, d.help))
        .collect()
}

#[test]
fn a_second_terminal_is_told_to_lead_its_edges_to_the_first() {
    let found = helps(
        r#"
/// Two ends.
program Ends {
    carries { task: str = input, note: str }
    /// Write the note.
    draft: GEN-RAW(task) -> note;
    done: TERMINAL(note);
    also: TERMINAL(note);
    draft -> done if note == "";
    draft -> also else;
}
"#,
    );
    let (message, help) = found
        .iter()
        .find(|(m, _)| m.starts_with("W6:"))
        .expect("a W6 finding");
    assert!(message.contains("second TERMINAL"), "{message}");
    assert_eq!(
        help.as_deref(),
        Some("end every path at one TERMINAL: remove `also` and lead its edges to `done`")
    );
}

#[test]
fn a_missing_terminal_is_told_to_add_one() {
    let found = helps(
        r#"
/// No end.
program Open {
    carries { task: str = input, note: str }
    /// Write the note.
    draft: GEN-RAW(task) -> note;
}
"#,
    );
    let (_, help) = found
        .iter()
        .find(|(m, _)| m.starts_with("W6:"))
        .expect("a W6 finding");
    assert_eq!(
        help.as_deref(),
        Some("end the program with an instruction such as `done: TERMINAL(result);`")
    );
}

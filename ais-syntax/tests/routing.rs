//! Fallible Rust tools (spec §10.2): the front end warns where a tool returning `Result` fails
//! without a route, and stays quiet where a guard, a LOOP verdict or `#[allow(unrouted_failure)]`
//! takes care of the failure.

use ais_core::{CheckId, Code, Severity};
use ais_syntax::lower;
use ais_syntax::{Diagnostic, diagnose};

/// The diagnostics of one program, with the line and column (1-based) each points at.
fn diagnostics(text: &str) -> Vec<(Diagnostic, (usize, usize))> {
    let file = ais_syntax::parse_str(text).expect("parses");
    let def = &file.programs[0];
    let lowered = lower(def).expect("lowers");
    let fallback = ais_syntax::Site::one(def.ident.span());
    diagnose(&lowered, fallback)
        .into_iter()
        .map(|d| {
            let at = d.site.start.start();
            (d, (at.line, at.column + 1))
        })
        .collect()
}

fn unrouted(text: &str) -> Vec<(Diagnostic, (usize, usize))> {
    diagnostics(text)
        .into_iter()
        .filter(|(d, _)| d.message.contains("returns a `Result`"))
        .collect()
}

/// A save step whose `Result` lands in `saved`; `EDGES` and `CARRY` vary per case.
fn program(saved_ty: &str, save: &str, edges: &str) -> String {
    format!(
        r#"
/// Save a note.
program Saver {{
    carries {{ task: str = input, saved: {saved_ty}, report: str }}
    #[surface(ACT)]
    tool save_note(task: &str) -> Result<String, String> {{ Ok(task.to_owned()) }}
    {save}
    /// Say what went wrong.
    explain: GEN-RAW(task) -> report;
    done: TERMINAL(saved);
{edges}
}}
"#
    )
}

#[test]
fn an_unrouted_fallible_tool_warns_at_the_tool_in_the_instruction() {
    let text = program(
        "str",
        "save: ACT save_note(task) -> saved;",
        "save -> done; explain -> done;",
    );
    let found = unrouted(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (d, at) = &found[0];
    assert_eq!(d.id, Code::Check(CheckId::G9));
    assert_eq!(d.severity, Severity::Warn);
    assert!(!d.is_error());
    assert!(
        d.message
            .starts_with("G9: `save` runs `save_note`, which returns a `Result`"),
        "{}",
        d.message
    );
    assert!(
        d.message.contains("no guard tests `saved`"),
        "{}",
        d.message
    );
    let help = d.help.as_deref().unwrap_or_default();
    assert!(help.contains("`saved: outcome,`"), "{help}");
    assert!(help.contains("`save -> done if saved.ok;`"), "{help}");
    assert!(help.contains("#[allow(unrouted_failure)]"), "{help}");
    // Line 7 of the text, at `save_note` after `save: ACT `.
    assert_eq!(*at, (7, 15));
}

#[test]
fn a_guard_testing_the_written_carry_routes_the_failure() {
    let text = program(
        "outcome",
        "save: ACT save_note(task) -> saved;",
        "save -> done if saved.ok; save -> explain else; explain -> done;",
    );
    assert!(unrouted(&text).is_empty());
    // The program is otherwise clean: an `outcome` carry may take a `str` tool's result.
    let errors: Vec<_> = diagnostics(&text)
        .into_iter()
        .filter(|(d, _)| d.is_error())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn a_loop_verdict_routes_the_failure() {
    let text = r#"
/// Retry a flaky check.
program Retry {
    carries { task: str = input, ok: bool, round: int = 0, note: str }
    #[surface(SENSE)]
    tool probe(task: &str) -> Result<bool, String> { Ok(!task.is_empty()) }
    check: SENSE probe(task) -> ok;
    #[verdict(ok)] #[cap(3)] #[counter(round)]
    again: LOOP(code)(ok);
    /// Write the note.
    write: GEN-RAW(task) -> note;
    done: TERMINAL(note);
    check -> again;
    again -> check;
    again -> write;
    write -> done;
}
"#;
    assert!(unrouted(text).is_empty(), "{:#?}", unrouted(text));
}

#[test]
fn allow_unrouted_failure_silences_the_warning() {
    let text = program(
        "str",
        "#[allow(unrouted_failure)]\n    save: ACT save_note(task) -> saved;",
        "save -> done; explain -> done;",
    );
    assert!(unrouted(&text).is_empty());
}

#[test]
fn allow_names_only_known_warnings() {
    let text = program(
        "str",
        "#[allow(unrouted_failures)]\n    save: ACT save_note(task) -> saved;",
        "save -> done; explain -> done;",
    );
    let file = ais_syntax::parse_str(&text).expect("parses");
    let err = lower(&file.programs[0]).expect_err("an unknown warning name");
    assert_eq!(
        err.to_string(),
        "`unrouted_failures` is not a warning of `ais!`; an instruction may allow `unrouted_failure`"
    );
}

#[test]
fn a_fallible_tool_that_writes_nothing_cannot_be_routed() {
    let text = r#"
/// Log and finish.
program Logger {
    carries { task: str = input }
    #[surface(ACT)]
    tool log(task: &str) -> std::io::Result<()> { let _ = task; Ok(()) }
    record: ACT log(task);
    done: TERMINAL(task);
    record -> done;
}
"#;
    let found = unrouted(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].0.message.contains("writes nothing"),
        "{}",
        found[0].0.message
    );
}

#[test]
fn a_model_owned_route_tests_nothing() {
    let text = program(
        "outcome",
        "save: ACT save_note(task) -> saved;\n    /// Decide.\n    pick: ROUTE(model)(saved);",
        "save -> pick; pick -> done if saved.ok; pick -> explain; explain -> done;",
    );
    assert_eq!(unrouted(&text).len(), 1, "{:#?}", diagnostics(&text));
}

#[test]
fn infallible_tools_are_not_warned_about() {
    let text = program(
        "str",
        "save: ACT keep(task) -> saved;\n    #[surface(ACT)] tool keep(task: &str) -> String { task.to_owned() }",
        "save -> done; explain -> done;",
    );
    assert!(unrouted(&text).is_empty());
}

#[test]
fn a_carry_already_declared_outcome_is_not_asked_to_be_declared_again() {
    // The carry can hold the error value; only the guard is missing.
    let text = program(
        "outcome",
        "save: ACT save_note(task) -> saved;",
        "save -> done; explain -> done;",
    );
    let found = unrouted(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let help = found[0].0.help.as_deref().unwrap_or_default();
    assert!(!help.contains("declare"), "{help}");
    assert!(
        help.starts_with("route it: branch on `saved.ok` (`save -> done if saved.ok;`"),
        "{help}"
    );
}

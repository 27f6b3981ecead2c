//! Fallible Rust tools (spec §10.2) end to end: a tool returning `Result` fails with an error
//! value that a guard routes, and a failure the program chose not to route
//! (`#[allow(unrouted_failure)]`) ends the run as an error, never as success.
//!
//! `deny(deprecated)` makes the macro's warnings errors here: both programs compile without
//! one, so routing through a guard and `#[allow(unrouted_failure)]` each silence the G9
//! warning (its presence is pinned by `tests/ui/g9_unrouted_fallible_tool.rs`).
#![deny(deprecated)]

use ais::{RunError, ais};

ais! {
    /// Save a note, or explain why it could not be saved.
    program Saver {
        carries {
            task: str = input,
            /// The save's outcome: `ok`, the error, and what was saved.
            saved: outcome,
            verdict: str,
        }

        /// Keep the note; an empty note is refused.
        #[surface(ACT)]
        tool save_note(task: &str) -> Result<String, String> {
            if task.is_empty() {
                Err("there is nothing to save".to_owned())
            } else {
                Ok(format!("kept: {task}"))
            }
        }

        save: ACT save_note(task) -> saved;
        fine: CODE(saved) -> verdict = "saved (" + saved.output + ")";
        failed: CODE(saved) -> verdict = "not saved: " + saved.error;
        done: TERMINAL(verdict);

        save -> fine if saved.ok;
        save -> failed else;
        fine -> done;
        failed -> done;
    }

    /// Save a note; a failure ends the run.
    program StrictSaver {
        carries { task: str = input, saved: str }

        /// Keep the note; an empty note is refused.
        #[surface(ACT)]
        tool keep(task: &str) -> Result<String, String> {
            if task.is_empty() { Err("there is nothing to save".to_owned()) } else { Ok(task.to_owned()) }
        }

        #[allow(unrouted_failure)]
        save: ACT keep(task) -> saved;
        done: TERMINAL(saved);
        save -> done;
    }

    /// Check a file with a subprocess; a failure ends the run, and nothing after it runs.
    program StrictChecker {
        carries { task: str = input, checked: str, told: str }

        /// Fails unless the task names an existing path.
        tool probe(task) = command "test -e {task}";

        #[allow(unrouted_failure)]
        check: SENSE probe(task) -> checked;
        tell: CODE(checked) -> told = "checked: " + checked;
        done: TERMINAL(told);
        check -> tell -> done;
    }
}

fn runtime(builder: ais::__private::RuntimeBuilder) -> ais::__private::Runtime {
    builder.out_dir(std::env::temp_dir()).build()
}

#[tokio::test]
async fn a_routed_failure_takes_its_route_and_the_run_succeeds() {
    let rt = runtime(Saver::runtime());
    let report = Saver::run(SaverInput { task: "".into() }, &rt)
        .await
        .expect("the failure is routed, so the run is ok");
    // The guard read the error value: the route taken quotes the tool's `Err`.
    let verdict = report.verdict.unwrap_or_default();
    assert!(verdict.starts_with("not saved: "), "{verdict}");
    assert!(verdict.ends_with("there is nothing to save"), "{verdict}");
    assert_eq!(
        verdict.matches("save_note").count(),
        1,
        "the tool is named once: {verdict}"
    );
    let saved = report.saved.expect("the error value is in the report");
    assert!(!saved.ok);

    let report = Saver::run(
        SaverInput {
            task: "milk".into(),
        },
        &rt,
    )
    .await
    .expect("runs");
    assert_eq!(report.verdict.as_deref(), Some("saved (kept: milk)"));
    assert!(report.saved.is_some_and(|s| s.ok));
}

#[tokio::test]
async fn an_unrouted_failure_ends_the_run_as_an_error() {
    let rt = runtime(StrictSaver::runtime());
    let err = StrictSaver::run(StrictSaverInput { task: "".into() }, &rt)
        .await
        .expect_err("an unrouted failure is no success");
    // The error names the failing step and its error, from the outcome's typed failures.
    let said = err.to_string();
    assert!(
        said.contains("(`save`: ") && said.contains("there is nothing to save"),
        "{said}"
    );
    let RunError::Failed(outcome) = err else {
        panic!("expected RunError::Failed, got {err}");
    };
    assert_eq!(outcome.status, ais::rt::Status::Error);
    assert_eq!(outcome.failures.len(), 1, "{:?}", outcome.failures);
    assert_eq!(outcome.failures[0].instruction, "save");
    let ok = StrictSaver::run(StrictSaverInput { task: "x".into() }, &rt)
        .await
        .expect("a success runs to the end");
    assert_eq!(ok.saved.as_deref(), Some("x"));
}

#[tokio::test]
async fn allow_unrouted_failure_is_accepted_on_a_command_tool_and_the_run_stops_there() {
    // `#[allow(unrouted_failure)]` compiled this program (a command tool's G9 is allowed like a
    // Rust tool's); a failure ends the run at `check`, so `tell` never runs on its output.
    let dir = tempfile::tempdir().unwrap();
    let rt = StrictChecker::runtime().out_dir(dir.path().into()).build();
    let err = StrictChecker::run(
        StrictCheckerInput {
            task: "/nonexistent/for/sure".into(),
        },
        &rt,
    )
    .await
    .expect_err("the command fails");
    let RunError::Failed(outcome) = &err else {
        panic!("expected RunError::Failed, got {err}");
    };
    assert!(!outcome.report.contains_key("told"), "{:?}", outcome.report);
    assert!(err.to_string().contains("`check`"), "{err}");
    let ok = StrictChecker::run(StrictCheckerInput { task: "/".into() }, &rt)
        .await
        .expect("an existing path checks");
    assert!(ok.told.is_some_and(|t| t.starts_with("checked: ")));
}

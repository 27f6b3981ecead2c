//! The `ais!` examples: each one's `AGIR` is the checked-in `.agir` under `examples/agir/`,
//! reads back to the same program (`ais fmt` prints it unchanged), and its Rust tools run
//! through the runtime's tool registry.

#[allow(dead_code)]
#[path = "../examples/writing_plans.rs"]
mod writing_plans;

use ais::rt::tools::{ToolArgs, ToolContext, ToolErrorKind, ToolLimits};
use ais::{Value, agir};
use writing_plans::{WritingPlans, WritingPlansInput};

fn assert_checked_in(agir_text: &str, file: &str) {
    let path = format!("{}/examples/agir/{file}", env!("CARGO_MANIFEST_DIR"));
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == agir_text,
        "{path} is not the macro's output; regenerate it with `cargo run --example {}`",
        file.trim_end_matches(".agir")
    );
}

#[test]
fn writing_plans_agir_is_checked_in_and_canonical() {
    assert_checked_in(WritingPlans::AGIR, "writing_plans.agir");
    let doc = agir::read(WritingPlans::AGIR).expect("the macro's AG-IR reads");
    assert_eq!(
        agir::write(&doc.program),
        WritingPlans::AGIR,
        "ais fmt would change it"
    );
    assert_eq!(*WritingPlans::program(), doc.program);
    assert_eq!(WritingPlans::NAME, "writing_plans");
}

#[test]
fn build_rs_export_writes_the_same_agir_as_the_macro() {
    let dir = tempfile::tempdir().unwrap();
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/writing_plans.rs");
    let written = ais_syntax::export::export(&[source], dir.path()).expect("exports");
    assert_eq!(written, [dir.path().join("writing_plans.agir")]);
    let exported = std::fs::read_to_string(&written[0]).unwrap();
    assert!(
        exported == WritingPlans::AGIR,
        "build.rs export and the macro disagree:\n{exported}"
    );
}

#[test]
fn writing_plans_is_appendix_c_up_to_its_tool_bodies() {
    let appendix_c = agir::read(include_str!("../examples/writing_plans.agir"))
        .expect("Appendix C reads")
        .program;
    let mut ours = WritingPlans::program().clone();
    let mut theirs = appendix_c;
    for p in [&mut ours, &mut theirs] {
        for t in p.tools.iter_mut().flatten() {
            // Rust versus Python: the bodies, their language and the typed signature differ.
            (t.body, t.lang, t.sig) = (None, None, None);
        }
    }
    assert_eq!(ours, theirs);
}

#[tokio::test]
async fn writing_plans_runs_end_to_end_on_the_scripted_model() {
    let dir = tempfile::tempdir().unwrap();
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/writing_plans.responses.json"
    );
    let model = ais::rt::model::from_spec(&format!("scripted:{responses}")).unwrap();
    let runtime = WritingPlans::runtime()
        .model(model)
        .out_dir(dir.path().to_path_buf())
        .build();
    let input = WritingPlansInput {
        task: "Plan a CSV export and save it to docs/plans/csv.md".into(),
    };
    let report = WritingPlans::run(input, &runtime)
        .await
        .expect("the run reports");
    assert_eq!(report.plan_ok, Some(true));
    assert_eq!(report.plan_file.as_deref(), Some("docs/plans/csv.md"));
    let written = std::fs::read_to_string(dir.path().join("docs/plans/csv.md")).unwrap();
    assert!(
        written.starts_with("# CSV Export Implementation Plan"),
        "{written}"
    );
    assert_eq!(Some(written), report.plan_md);
}

fn ctx(root: &std::path::Path) -> ToolContext {
    ToolContext {
        root: root.to_path_buf(),
        scratch: None,
        limits: ToolLimits::default(),
    }
}

fn args(pairs: &[(&str, &str)]) -> ToolArgs {
    ToolArgs {
        params: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect(),
    }
}

#[tokio::test]
async fn writing_plans_tools_run_natively() {
    let dir = tempfile::tempdir().unwrap();
    let tools = WritingPlans::tools();
    let assemble = tools.get("assemble_plan").expect("registered");
    let out = assemble
        .call(
            args(&[("header_md", "# Plan\n\n"), ("tasks_md", "\n### Task 1\n")]),
            &ctx(dir.path()),
        )
        .await;
    assert_eq!(out, Ok(Value::from("# Plan\n\n### Task 1\n")));

    let save = tools.get("save_plan").expect("registered");
    let saved = save
        .call(
            args(&[("plan_md", "# Plan\n"), ("path", "docs/plan.md")]),
            &ctx(dir.path()),
        )
        .await;
    assert_eq!(saved, Ok(Value::from("docs/plan.md")));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/plan.md")).unwrap(),
        "# Plan\n"
    );

    let escape = save
        .call(
            args(&[("plan_md", "x"), ("path", "../outside.md")]),
            &ctx(dir.path()),
        )
        .await
        .unwrap_err();
    assert_eq!(escape.kind, ToolErrorKind::PathEscape);

    let wrong = tools
        .get("verify_has_tasks")
        .unwrap()
        .call(
            ToolArgs {
                params: [("plan_md".to_owned(), Value::Int(3))]
                    .into_iter()
                    .collect(),
            },
            &ctx(dir.path()),
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.kind, ToolErrorKind::BadArguments);
    assert!(
        wrong.message.contains("parameter `plan_md`"),
        "{}",
        wrong.message
    );
}

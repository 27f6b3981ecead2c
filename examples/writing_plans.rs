//! The spec's Appendix C program — a plan writer — written with `ais!`.
//!
//! Two model slots draft the plan's header and its tasks; three Rust tools assemble, verify
//! and save it. The compiler checks the program with the same validator as `ais check`, and
//! `WritingPlans::AGIR` is its AG-IR (checked in as `examples/agir/writing_plans.agir`).
//!
//! Run it end to end on the SCRIPTED model shipped beside it (canned slot answers from
//! `examples/writing_plans.responses.json`, no API key, no network):
//! `cargo run --example writing_plans [OUT_DIR]`. Print its AG-IR instead:
//! `cargo run --example writing_plans -- --agir`.

use ais::ais;

ais! {
    /// Create a detailed implementation plan with bite-sized TDD tasks.
    pub program WritingPlans (name = "writing_plans", shape = pipeline, standalone) {
        carries {
            task: str = input,
            header_md: str,
            tasks_md: str,
            plan_md: str,
            plan_ok: bool,
            plan_file: str,
        }

        // The provenance record: the obligations of the writing-plans skill this program was
        // lifted from (`ais runs certify RUN_ID` shows which of them a run performed, and how).
        obligation r_header { kind: step, force: mandatory, quote: "Write the plan's header: the feature, the goal, the architecture and the tech stack." }
        obligation r_tasks { kind: step, force: mandatory, quote: "Write bite-sized, test-driven task sections." }
        obligation r_format { kind: knowledge, force: mandatory, quote: "Each task is one component; each step inside it is one 2-5 minute action." }
        obligation r_assemble { kind: step, force: mandatory, quote: "Join the header and the tasks into one plan." }
        obligation r_verify { kind: step, force: mandatory, quote: "Check that the plan has task sections with code." }
        obligation r_save { kind: io, force: mandatory, quote: "Save the plan to a markdown file." }

        #[resident_on(write_tasks)]
        #[traces_to("r_format")]
        knowledge task_format = "Break the work into bite-sized tasks. \
            Each task is one component; each\n\
            step inside it is one 2-5 minute action. Exact file paths always; complete\n\
            code, never \"add validation\"; exact commands with expected output.\n";

        /// Join the header and the task sections into one plan document.
        #[surface(ACT)]
        tool assemble_plan(header_md: &str, tasks_md: &str) -> String {
            format!("{}\n\n{}\n", header_md.trim_end(), tasks_md.trim())
        }

        /// True when the plan actually contains task sections with code.
        #[surface(SENSE)]
        tool verify_has_tasks(plan_md: &str) -> bool {
            let has_task = plan_md.lines().any(|l| l.starts_with("### Task "));
            has_task && plan_md.contains("```")
        }

        /// Write the finished plan to a markdown file and return its path.
        #[surface(ACT, artifact)]
        tool save_plan(plan_md: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(plan_md)
        }

        /// Write the plan's header: a real feature name, a one-sentence goal, a 2-3 sentence
        /// architecture, and the tech stack. Output only the header markdown.
        #[traces_to("r_header")]
        draft_header: GEN-RAW(task) -> header_md;
        /// Write the bite-sized, test-driven task sections. Follow the task format exactly.
        /// Output only the task markdown, no header.
        #[traces_to("r_tasks")]
        write_tasks: GEN-RAW(task, header_md) -> tasks_md;
        #[traces_to("r_assemble")]
        assemble: ACT assemble_plan(header_md, tasks_md) -> plan_md;
        #[traces_to("r_verify")]
        verify: SENSE verify_has_tasks(plan_md) -> plan_ok;
        // Appendix C routes nothing after the save: a failed write ends the run as an error.
        #[allow(unrouted_failure)]
        #[traces_to("r_save")]
        save: ACT(artifact) save_plan(plan_md) -> plan_file;
        done: TERMINAL(plan_file);

        draft_header -> write_tasks -> assemble -> verify -> save -> done;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--agir") {
        print!("{}", WritingPlans::AGIR);
        return Ok(());
    }
    let out_dir = match arg {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tempfile::tempdir()?.keep(),
    };
    std::fs::create_dir_all(&out_dir)?;
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/writing_plans.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let runtime = WritingPlans::runtime()
        .model(model)
        .out_dir(out_dir.clone())
        .build();
    let input = WritingPlansInput {
        task: "Plan a CSV export of the order history and save it to docs/plans/csv-export.md"
            .into(),
    };
    println!("model: SCRIPTED ({responses}), not a live model");
    let report = WritingPlans::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    let plan_file = report.plan_file.unwrap_or_default();
    println!("plan written to {}", out_dir.join(plan_file).display());
    Ok(())
}

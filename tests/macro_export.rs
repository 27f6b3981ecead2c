//! The two drivers of the front end agree: `build.rs` export writes, byte for byte, the
//! program's `AGIR` constant — pinned by an insta snapshot of the exported text.

/// Found by the export inside a module, as it would be in a crate's `src/agents.rs`.
mod agents {
    use ais::ais;

    ais! {
        /// Triage a bug report: a model labels it, code checks the label and files it.
        pub program Triage (shape = pipeline) {
            carries {
                task: str = input,
                /// The label the model chose.
                label: Severity,
                urgent: bool,
                filed: outcome,
            }

            /// How bad a bug is.
            enum Severity { /** Data loss or a crash. */ critical, minor }

            #[resident_on(classify)]
            knowledge rubric = "critical: data loss, a crash, or a security hole. minor: the rest.";

            /// True for a critical bug.
            #[surface(SENSE)]
            tool is_urgent(label: Severity) -> bool { matches!(label, Severity::critical) }

            /// File the report; a refused filing is a routable error.
            #[surface(ACT)]
            tool file_report(task: &str, urgent: bool) -> Result<String, String> {
                if task.is_empty() { Err("empty report".into()) } else { Ok(format!("{urgent}: {task}")) }
            }

            /// Label the bug report by the rubric.
            classify: GEN-ENUM(task) -> label;
            weigh: SENSE is_urgent(label) -> urgent;
            file: ACT file_report(task, urgent) -> filed;
            done: TERMINAL(filed);

            classify -> weigh -> file;
            file -> done if filed.ok;
            file -> classify else;
        }
    }
}

#[test]
fn build_rs_export_writes_the_macros_agir_and_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let written = ais_syntax::export::export(&[file!()], dir.path()).expect("exports");
    assert_eq!(written, [dir.path().join("triage.agir")]);
    let exported = std::fs::read_to_string(&written[0]).unwrap();
    assert!(
        exported == agents::Triage::AGIR,
        "build.rs export and the macro disagree:\n{exported}"
    );
    insta::assert_snapshot!("triage_agir", exported);
}

//! The two drivers of the front end agree: `build.rs` export writes, byte for byte, the
//! program's `AGIR` constant — pinned by an insta snapshot of the exported text —; the book's
//! `ais!` chapter's program, `main` and `build.rs` build as written, with the export equal to
//! `AGIR`; and the README's first agent and its `main` build as written.

use crate::support::cargo_case;

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
    let written = ais::syntax::export(&[file!()], dir.path()).expect("exports");
    assert_eq!(written, [dir.path().join("triage.agir")]);
    let exported = std::fs::read_to_string(&written[0]).unwrap();
    assert!(
        exported == agents::Triage::AGIR,
        "build.rs export and the macro disagree:\n{exported}"
    );
    insta::assert_snapshot!("triage_agir", exported);
}

/// The Rust code block of `doc` that starts with `start`, without its fences.
fn readme_block<'a>(doc: &'a str, start: &str) -> &'a str {
    let fenced = format!("```rust\n{start}");
    let at = doc
        .find(&fenced)
        .unwrap_or_else(|| panic!("no Rust block starting `{start}`"));
    let body = &doc[at + "```rust\n".len()..];
    &body[..body.find("\n```").expect("the block is closed") + 1]
}

#[test]
fn the_books_macro_program_and_build_rs_build_and_export_its_agir() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/book/src/macro.md"))
        .expect("the book's `ais!` chapter reads");
    let program = readme_block(&readme, "use ais::ais;");
    let main = readme_block(&readme, "#[tokio::main");
    let build_rs = readme_block(&readme, "// build.rs");
    // The exported file must be the macro's `AGIR`, or the crate does not compile.
    let agreement = r#"
const EXPORTED: &str = include_str!(concat!(env!("OUT_DIR"), "/agir/release_note.agir"));

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = assert!(same(EXPORTED, ReleaseNote::AGIR), "build.rs export differs from AGIR");
"#;
    let source = format!("{program}\n{main}{agreement}");
    let checked = cargo_case::check(&cargo_case::Case {
        main: &source,
        build_rs: Some(build_rs),
        deps: "",
    });
    assert!(checked.success, "{}", checked.rendered_errors());
    let warnings: Vec<&str> = checked
        .messages
        .iter()
        .filter(|m| m["level"] == "warning")
        .filter_map(|m| m["rendered"].as_str())
        .collect();
    assert!(warnings.is_empty(), "{}", warnings.join("\n"));
}

#[test]
fn the_readmes_first_agent_and_its_main_build_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the README reads");
    let program = readme_block(&readme, "use ais::ais;");
    let main = readme_block(&readme, "#[tokio::main");
    // The README's Cargo.toml names csv for this agent's reader.
    assert!(
        readme.contains("csv = \"1.3\""),
        "the README's Cargo.toml lines name csv"
    );
    let source = format!("{program}\n{main}");
    let checked = cargo_case::check(&cargo_case::Case {
        main: &source,
        build_rs: None,
        deps: "csv = \"1.3\"\n",
    });
    assert!(checked.success, "{}", checked.rendered_errors());
    let warnings: Vec<&str> = checked
        .messages
        .iter()
        .filter(|m| m["level"] == "warning")
        .filter_map(|m| m["rendered"].as_str())
        .collect();
    assert!(warnings.is_empty(), "{}", warnings.join("\n"));
}

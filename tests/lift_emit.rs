//! `ais lift --emit rust`: the lifted program written as an `ais!` module, through the real
//! binary. Every scripted lift of `ais-lift/tests/lifts` is lifted twice — as AG-IR and as Rust —
//! and the module's AG-IR (the macro's front end, `ais::syntax::export_text`, without a
//! crate build) is the `.agir` byte for byte; the ignored test builds the modules in a crate of
//! their own against this checkout and compares each program's `AGIR` constant.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LIFTS: &[&str] = &[
    "approval",
    "csv-clean",
    "injection",
    "with-reference",
    "with-script",
    "writing-plans",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ais(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("ais runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Lifts the fixture `name` into `dir` with the extra arguments; the run's output.
fn lift(name: &str, dir: &Path, extra: &[&str]) -> Output {
    let fixture = root().join("ais-lift/tests/lifts").join(name);
    let skill = fixture.join("SKILL.md").display().to_string();
    let model = format!("scripted:{}", fixture.join("answers.json").display());
    let out = dir.display().to_string();
    let mut args = vec!["lift", skill.as_str(), "--model", &model, "--out", &out];
    args.extend_from_slice(extra);
    ais(&args)
}

/// Each fixture lifted as AG-IR into `dir/agir/` and as Rust into `dir/rust/`: the pairs of
/// files (`.agir`, `.rs`), by fixture.
fn lift_both(dir: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for name in LIFTS {
        // The same relative place for both, so the recorded source path is the same.
        let agir = dir.join("agir").join(format!("{name}.agir"));
        let rust = dir.join("rust").join(format!("{name}.rs"));
        for (file, emit) in [(&agir, "agir"), (&rust, "rust")] {
            let work = dir.join(emit).join(format!("{name}.run"));
            let o = lift(name, &work, &["--emit", emit, "-o", file.to_str().unwrap()]);
            assert!(o.status.success(), "{name} --emit {emit}: {}", text(&o));
            assert!(
                text(&o).contains(&format!("wrote {}", file.display())),
                "{}",
                text(&o)
            );
        }
        out.push(((*name).to_owned(), agir, rust));
    }
    out
}

#[test]
fn every_scripted_lift_emitted_as_rust_has_the_agir_of_its_agir_lift() {
    let dir = tempfile::tempdir().unwrap();
    for (name, agir, rust) in lift_both(dir.path()) {
        let expected = std::fs::read_to_string(&agir).unwrap();
        let module = std::fs::read_to_string(&rust).unwrap();
        assert!(module.starts_with("//! `"), "{name}: {module}");
        assert!(module.contains("\nais! {\n"), "{name}: {module}");
        let exported = ais::syntax::export_text(&module, &rust.display().to_string())
            .unwrap_or_else(|e| panic!("{name}: the emitted module does not lower:\n{e}"));
        assert_eq!(exported.len(), 1, "{name}");
        assert_eq!(exported[0].agir, expected, "{name}:\n{module}");
        // Nothing the record holds is left behind in the Rust form.
        let program = ais::agir::read(&expected).unwrap().program;
        let record = program.faithfulness.as_ref().expect("a provenance record");
        assert!(module.contains("source { path: "), "{name}");
        assert_eq!(
            module.matches("\n        obligation ").count(),
            record.obligation_list().len(),
            "{name}"
        );
        // Pretty as written: rustfmt leaves it as it is.
        let fmt = Command::new("rustfmt")
            .args(["--edition", "2024", "--check"])
            .arg(&rust)
            .output()
            .expect("rustfmt runs");
        assert!(fmt.status.success(), "{name}: {}", text(&fmt));
    }
}

#[test]
fn check_only_re_audits_an_emitted_module_against_its_skill() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("count.rs");
    let o = lift("with-script", dir.path(), &["-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let skill = root().join("ais-lift/tests/lifts/with-script/SKILL.md");
    let check = |program: &Path| {
        ais(&[
            "lift",
            skill.to_str().unwrap(),
            "--check-only",
            program.to_str().unwrap(),
        ])
    };
    let o = check(&file);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("is unchanged"), "{}", text(&o));
    // A quote edited in the module is no longer the skill's: the re-audit says so.
    let module = std::fs::read_to_string(&file).unwrap();
    let edited = module.replace("Report the count to the user.", "Report the count loudly.");
    assert_ne!(edited, module);
    std::fs::write(&file, edited).unwrap();
    let o = check(&file);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no longer in the skill"), "{}", text(&o));
}

#[test]
fn a_python_tool_stays_a_python_tool() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("count.rs");
    let o = lift("with-script", dir.path(), &["-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let module = std::fs::read_to_string(&file).unwrap();
    assert!(
        module.contains(
            "tool count_words(target_path) -> String = python r#\"def run(target_path):\n"
        ),
        "{module}"
    );
    let exported = ais::syntax::export_text(&module, "count.rs").unwrap();
    assert!(
        exported[0].agir.contains("    lang: python\n"),
        "{}",
        exported[0].agir
    );
}

#[test]
fn an_output_whose_extension_disagrees_with_emit_is_refused_before_any_model_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("program.agir");
    let o = lift(
        "with-script",
        dir.path(),
        &["--emit", "rust", "-o", file.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = text(&o);
    assert!(
        said.contains("`--emit rust` writes a `.rs` file, and `-o` names"),
        "{said}"
    );
    assert!(said.contains("program.rs"), "{said}");
    assert!(!file.exists());
    assert!(
        !dir.path().join(".ais/runs.db").exists(),
        "no run was started"
    );
}

/// The emitted modules build in a crate of their own against this checkout, and each program's
/// `AGIR` is the `.agir` its AG-IR lift wrote. Ignored by `cargo test` (a crate build of its
/// own); `.ci/run` runs it.
#[test]
#[ignore = "builds a crate of its own; .ci/run runs it with --ignored"]
fn emitted_modules_compile_and_their_agir_is_the_lifted_agir() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = lift_both(dir.path());
    let krate = dir.path().join("lifted");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let root = root();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"lifted\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nais = {{ path = {:?} }}\n\n[workspace]\n",
            root.join("ais").display().to_string()
        ),
    )
    .unwrap();
    let mut main = String::new();
    let mut prints = String::new();
    for (name, agir, rust) in &pairs {
        let module = name.replace('-', "_");
        std::fs::copy(rust, krate.join("src").join(format!("{module}.rs"))).unwrap();
        let program = ais::agir::read(&std::fs::read_to_string(agir).unwrap())
            .unwrap()
            .program;
        let ty = program.walker.unwrap().name.unwrap();
        main.push_str(&format!("mod {module};\n"));
        prints.push_str(&format!(
            "    if which == {name:?} {{ print!(\"{{}}\", {module}::{ty}::AGIR); }}\n"
        ));
    }
    main.push_str(&format!(
        "\nfn main() {{\n    let which = std::env::args().nth(1).unwrap_or_default();\n{prints}}}\n"
    ));
    std::fs::write(krate.join("src/main.rs"), main).unwrap();
    // The same lock as the workspace: the same versions, already downloaded and built.
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The target `ais new --rust`'s test builds in too (tests/cli.rs): the light `ais` is
    // compiled once for both.
    let target = root.join("target/tests/crates");
    let o = Command::new(&cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_PROFILE_TEST_DEBUG", "false")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(o.status.success(), "{}", text(&o));
    for (name, agir, _) in &pairs {
        let o = Command::new(target.join("debug/lifted"))
            .arg(name)
            .output()
            .expect("the crate runs");
        assert!(o.status.success(), "{name}: {}", text(&o));
        let expected = std::fs::read_to_string(agir).unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), expected, "{name}");
    }
}

/// The skill's path is hostile input too: a line break in it stays inside the module's header
/// comment (escaped), never a line of code.
#[test]
fn a_line_break_in_the_skills_path_cannot_add_code_to_the_module() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("ais-lift/tests/lifts/approval");
    // Relative, as a user gives it: the record keeps the path as given.
    let skills = "a\nfn evil() {}\n//";
    std::fs::create_dir_all(dir.path().join(skills)).unwrap();
    std::fs::copy(
        fixture.join("SKILL.md"),
        dir.path().join(skills).join("SKILL.md"),
    )
    .unwrap();
    let model = format!("scripted:{}", fixture.join("answers.json").display());
    let o = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["lift", &format!("{skills}/SKILL.md"), "--model", &model])
        .args(["--out", "work", "--emit", "rust", "-o", "out.rs"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("ais runs");
    assert!(o.status.success(), "{}", text(&o));
    let module = std::fs::read_to_string(dir.path().join("out.rs")).unwrap();
    // The header is its three comment lines, the path escaped in the first; the path's
    // line breaks stay data in the program's `source` (a raw string).
    let header: Vec<&str> = module.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(header.len(), 3, "{module}");
    assert!(header.iter().all(|l| l.starts_with("//! ")), "{module}");
    assert!(
        header[0].contains(r"a\nfn evil() {}\n/SKILL.md"),
        "{module}"
    );
    let exported = ais::syntax::export_text(&module, "out.rs").unwrap();
    assert_eq!(exported.len(), 1, "{module}");
}

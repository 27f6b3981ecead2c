//! End-to-end tests of the `ais` binary: exit codes, diagnostics, the JSON shape, fmt and fix.

use std::path::PathBuf;
use std::process::{Command, Output};

const EXAMPLE: &str = "examples/writing_plans.agir";
const MISSPELLED: &str = "tests/fixtures/misspelled_read.agir";
const UNDECLARED: &str = "tests/fixtures/undeclared_write.agir";
const NOT_AGIR: &str = "tests/fixtures/not_agir.agir";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `ais` from the package root (so relative paths in its output are stable), with color
/// left on `auto`: the output is a pipe, so there must be none.
fn ais(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .output()
        .expect("the ais binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each stdout line is one JSON object"))
        .collect()
}

#[test]
fn the_main_example_checks_without_errors() {
    let o = ais(&["check", EXAMPLE]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    let last = out.lines().last().expect("a summary line");
    assert!(
        last.starts_with(&format!("{EXAMPLE}: clean (0 errors")),
        "summary: {last}"
    );
    assert!(!out.contains('\x1b'), "no color on a pipe");
}

#[test]
fn a_misspelled_read_is_an_error_with_position_caret_and_suggestion() {
    let o = ais(&["check", MISSPELLED]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("error[W8]: "), "{out}");
    assert!(out.contains(&format!("--> {MISSPELLED}:82:13")), "{out}");
    assert!(out.contains("82 |     reads: [plan_mdd]"), "{out}");
    assert!(out.contains("   |             ^^^^^^^^"), "{out}");
    assert!(out.contains("= help: did you mean `plan_md`"), "{out}");
    let last = out.lines().last().expect("a summary line");
    assert!(
        last.starts_with(&format!("{MISSPELLED}: degraded (1 error")),
        "{last}"
    );
}

#[test]
fn json_reports_one_object_per_file_with_a_stable_shape() {
    let o = ais(&["check", "--format", "json", MISSPELLED]);
    assert_eq!(o.status.code(), Some(1));
    let reports = json_lines(&o);
    assert_eq!(reports.len(), 1);
    insta::assert_snapshot!(
        "misspelled_read_json",
        serde_json::to_string_pretty(&reports[0]).expect("pretty JSON")
    );
}

#[test]
fn json_keys_and_types_are_as_documented() {
    let o = ais(&["check", "--format", "json", MISSPELLED, EXAMPLE, NOT_AGIR]);
    assert_eq!(o.status.code(), Some(2), "the worst file decides");
    let reports = json_lines(&o);
    assert_eq!(reports.len(), 3);
    for r in &reports {
        let keys: Vec<&String> = r.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["file", "outcome", "findings", "deviations"]);
        let outcome = r["outcome"].as_str().expect("outcome");
        assert!(["clean", "fixed", "degraded", "failed"].contains(&outcome));
        for f in r["findings"].as_array().expect("findings") {
            let keys: Vec<&String> = f.as_object().expect("finding").keys().collect();
            assert_eq!(
                keys,
                [
                    "id",
                    "severity",
                    "message",
                    "instruction",
                    "line",
                    "column",
                    "did_you_mean",
                    "repair"
                ]
            );
            assert!(["error", "warn", "fatal"].contains(&f["severity"].as_str().expect("sev")));
            assert!(f["line"].is_u64() || f["line"].is_null());
            assert!(f["did_you_mean"].is_array());
        }
    }
    assert_eq!(reports[0]["file"], MISSPELLED);
    assert_eq!(reports[1]["file"], EXAMPLE);
    assert_eq!(reports[2]["file"], NOT_AGIR);
    assert_eq!(reports[2]["outcome"], "failed");
    assert_eq!(reports[2]["findings"][0]["id"], "read");
    assert_eq!(reports[2]["findings"][0]["severity"], "fatal");
}

#[test]
fn text_that_is_not_agir_fails_with_exit_2_and_says_where() {
    let o = ais(&["check", NOT_AGIR]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("error[read]: cannot read AG-IR"), "{out}");
    assert!(out.contains(&format!("--> {NOT_AGIR}:")), "{out}");
    assert!(out.contains("= note: fatal"), "{out}");
    assert!(
        out.ends_with(&format!("{NOT_AGIR}: failed (not readable as AG-IR)\n")),
        "{out}"
    );
}

#[test]
fn a_missing_file_is_named_with_a_next_step_and_exit_2() {
    let o = ais(&["check", "no/such/file.agir"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out.contains("error: cannot read `no/such/file.agir`"),
        "{out}"
    );
    assert!(out.contains("= help: check the path"), "{out}");
    let o = ais(&["check", "--format", "json", "no/such/file.agir"]);
    assert_eq!(o.status.code(), Some(2));
    let r = &json_lines(&o)[0];
    assert_eq!(r["outcome"], "failed");
    assert_eq!(r["findings"][0]["id"], "read");
    assert_eq!(r["findings"][0]["line"], serde_json::Value::Null);
}

#[test]
fn color_is_used_only_when_asked_or_on_a_terminal() {
    let plain = stdout(&ais(&["check", MISSPELLED]));
    assert!(!plain.contains('\x1b'));
    let colored = stdout(&ais(&["check", "--color", "always", MISSPELLED]));
    assert!(colored.contains('\x1b'));
    let never = stdout(&ais(&["check", "--color", "never", MISSPELLED]));
    assert_eq!(never, plain);
}

#[test]
fn bad_arguments_exit_64_without_a_panic() {
    for args in [
        &[][..],
        &["check"][..],
        &["frobnicate"][..],
        &["check", "--format", "xml", EXAMPLE][..],
    ] {
        let o = ais(args);
        assert_eq!(o.status.code(), Some(64), "{args:?}");
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
    }
}

#[test]
fn fmt_prints_canonical_agir_that_reads_back_and_is_a_fixed_point() {
    let o = ais(&["fmt", EXAMPLE]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let canonical = stdout(&o);
    let original = ais::agir::read(&std::fs::read_to_string(root().join(EXAMPLE)).expect("read"))
        .expect("example reads");
    let back = ais::agir::read(&canonical).expect("canonical output reads");
    assert_eq!(back.program, original.program);
    assert!(
        back.relaxations.is_empty(),
        "canonical AG-IR needs no relaxation"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("canonical.agir");
    std::fs::write(&path, &canonical).expect("write");
    let p = path.to_str().expect("utf-8 path");
    let again = ais(&["fmt", p]);
    assert_eq!(stdout(&again), canonical, "fmt is idempotent");
    assert_eq!(ais(&["fmt", "--check", p]).status.code(), Some(0));
}

#[test]
fn fmt_check_names_the_first_differing_line_and_w_rewrites_in_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("plan.agir");
    let source = std::fs::read_to_string(root().join(EXAMPLE)).expect("read");
    let messy = format!("{source}\n\n");
    std::fs::write(&path, &messy).expect("write");
    let p = path.to_str().expect("utf-8 path");

    let o = ais(&["fmt", "--check", p]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("is not canonical AG-IR: line "), "{err}");
    assert!(err.contains(&format!("run `ais fmt -w {p}`")), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        messy,
        "--check writes nothing"
    );

    let o = ais(&["fmt", "-w", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(ais(&["fmt", "--check", p]).status.code(), Some(0));
    let canonical = stdout(&ais(&["fmt", EXAMPLE]));
    assert_eq!(std::fs::read_to_string(&path).expect("read"), canonical);
}

#[test]
fn fmt_refuses_text_that_is_not_agir() {
    let o = ais(&["fmt", NOT_AGIR]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("error[read]"), "{}", stderr(&o));
}

#[test]
fn fix_prints_the_repaired_program_and_records_deviations_on_stderr() {
    let o = ais(&["fix", UNDECLARED]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("repaired W9 on `plan_ok`"), "{err}");
    let repaired = ais::agir::read(&stdout(&o)).expect("stdout is AG-IR");
    assert!(
        repaired.program.carry("plan_ok").is_some(),
        "the carry is minted"
    );
    let checked = ais::check(&repaired.program, &repaired.source_map, ais::Repairs::Off);
    assert!(
        checked.findings.iter().all(|f| f.id != ais::CheckId::W9),
        "{:?}",
        checked.findings
    );
}

#[test]
fn fix_w_rewrites_the_file_only_when_a_repair_applies() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("p.agir");
    std::fs::copy(root().join(UNDECLARED), &path).expect("copy");
    let p = path.to_str().expect("utf-8 path");
    let o = ais(&["fix", "-w", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let o = ais(&["check", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let before = std::fs::read_to_string(&path).expect("read");
    let o = ais(&["fix", "-w", p]);
    assert!(
        stderr(&o).contains("no repair applies, file unchanged"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), before);
}

#[test]
fn check_applies_repairs_in_memory_unless_told_not_to() {
    let o = ais(&["check", UNDECLARED]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("1 mechanical repair applied in memory"),
        "{out}"
    );
    assert!(
        out.contains(&format!("{UNDECLARED}: fixed (0 errors")),
        "{out}"
    );
    let o = ais(&["check", "--no-repair", UNDECLARED]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("error[W9]"), "{out}");
}

#[test]
fn output_to_a_closed_pipe_does_not_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["fmt", EXAMPLE])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}

#[test]
fn eval_prints_the_value_as_json() {
    let o = ais(&["eval", "1 + 2 * 3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "7\n");
    let o = ais(&[
        "eval",
        "plan_ok and len(tasks) > 0",
        "--carries",
        r#"{"plan_ok": true, "tasks": ["a"]}"#,
    ]);
    assert_eq!(stdout(&o), "true\n", "{}", stderr(&o));
    let o = ais(&[
        "eval",
        "plan_ok",
        "--types",
        EXAMPLE,
        "--carries",
        r#"{"plan_ok": false}"#,
    ]);
    assert_eq!(stdout(&o), "false\n", "{}", stderr(&o));
}

#[test]
fn eval_errors_show_category_position_and_a_caret() {
    let o = ais(&["eval", "1 + (2 *"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(err.starts_with("error[syntax_error]: "), "{err}");
    assert!(err.contains("--> <expression>:1:"), "{err}");
    assert!(err.contains("1 | 1 + (2 *"), "{err}");
    assert!(err.contains('^'), "{err}");

    let o = ais(&["eval", "plan_ok + 1", "--types", EXAMPLE]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with("error[type_error]: "), "{err}");
    assert!(err.contains("--> <expression>:1:1"), "{err}");
}

#[test]
fn eval_rejects_bad_carries_and_types_with_exit_2() {
    let o = ais(&["eval", "x", "--carries", "{x: 1}"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("--carries is not valid JSON"), "{err}");
    assert!(err.contains("= help: pass a JSON object"), "{err}");
    let o = ais(&["eval", "x", "--carries", "[1]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("must be a JSON object, not a list"));
    let o = ais(&["eval", "x", "--types", "no/such.agir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read `no/such.agir`"));
    let o = ais(&["eval", "x", "--types", NOT_AGIR]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("error[read]"));
}

#[test]
fn fmt_notes_each_relaxation_on_stderr_and_keeps_stdout_strict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("relaxed.agir");
    let source = std::fs::read_to_string(root().join(EXAMPLE)).expect("read");
    let relaxed = source.replace(
        "doc: \"Join the header and the task sections into one plan document.\"",
        "doc: Join : the header and the task sections",
    );
    assert_ne!(relaxed, source);
    std::fs::write(&path, &relaxed).expect("write");
    let p = path.to_str().expect("utf-8 path");
    let o = ais(&["fmt", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("note: read through a relaxation of strict YAML"),
        "{err}"
    );
    assert!(err.contains(&format!("--> {p}:")), "{err}");
    let back = ais::agir::read(&stdout(&o)).expect("stdout reads");
    assert!(back.relaxations.is_empty());
}

#[cfg(unix)]
#[test]
fn fmt_w_never_writes_through_a_symlink() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("temp dir");
    let target = outside.path().join("plan.agir");
    let messy = format!(
        "{}\n\n",
        std::fs::read_to_string(root().join(EXAMPLE)).expect("read")
    );
    std::fs::write(&target, &messy).expect("write");
    let link = dir.path().join("link.agir");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let o = ais(&["fmt", "-w", link.to_str().expect("utf-8 path")]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("is a symbolic link"), "{err}");
    assert!(
        err.contains(&format!(
            "= help: run the command on `{}`",
            target.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&target).expect("read"), messy);
}

/// The README's `ais check …` and `ais eval …` examples: each command (a line `$ ais …` in a
/// fenced block that starts with one) and the output the README shows under it.
fn readme_examples(readme: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    // `None` outside a block; in one, whether its first line is an `ais` command (a block
    // that starts elsewhere, `$ cd examples/mcp`, runs its commands from elsewhere).
    let mut block: Option<Option<bool>> = None;
    let mut current: Option<(String, String)> = None;
    for line in readme.lines() {
        if line.starts_with("```") {
            out.extend(current.take());
            block = if block.is_some() { None } else { Some(None) };
            continue;
        }
        let Some(first) = block.as_mut() else {
            continue;
        };
        if !*first.get_or_insert(line.starts_with("$ ais ")) {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ais ") {
            out.extend(current.take());
            current = Some((command.to_owned(), String::new()));
        } else if let Some((_, shown)) = current.as_mut() {
            shown.push_str(line);
            shown.push('\n');
        }
    }
    out.retain(|(c, _)| c.starts_with("check ") || c.starts_with("eval "));
    out
}

#[test]
fn every_check_and_eval_example_in_the_readme_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("the README reads");
    let examples = readme_examples(&readme);
    assert!(examples.len() >= 4, "{examples:?}");
    for (command, shown) in examples {
        // The README's own quoting, through a shell, with this build's `ais`.
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("\"$AIS\" {command}"))
            .env("AIS", env!("CARGO_BIN_EXE_ais"))
            .current_dir(root())
            .env_remove("NO_COLOR")
            .output()
            .expect("sh runs");
        let (out, err) = (stdout(&o), stderr(&o));
        let printed = [format!("{err}{out}"), format!("{out}{err}")];
        assert!(
            printed.iter().any(|p| p.trim_end() == shown.trim_end()),
            "`ais {command}` prints\n{out}{err}\nbut the README shows\n{shown}"
        );
    }
}

#[test]
fn the_readmes_fatal_x5_example_is_what_ais_check_prints_for_it() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("the README reads");
    let at = readme
        .find("```\nerror[X5]: ")
        .expect("the README shows a fatal X5");
    let block = &readme[at + 4..];
    let block = &block[..block.find("\n```").expect("closed")];
    let file = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("--> "))
        .and_then(|l| l.rsplitn(3, ':').nth(2))
        .expect("the block names its file");
    if !root().join(file).exists() && std::env::var("CI").as_deref() != Ok("true") {
        eprintln!("notice: {file} not found; skipping");
        return;
    }
    let o = ais(&["check", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains(block), "{}\n---\n{block}", stdout(&o));
}

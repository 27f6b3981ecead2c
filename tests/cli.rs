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

/// The README and every chapter of the book (`book/src/**/*.md`), as (path, text), in path
/// order (the tutorial's chapters run in their reading order).
fn docs() -> Vec<(PathBuf, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("book/src reads") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut paths = vec![root().join("README.md")];
    let mut chapters = Vec::new();
    walk(&root().join("book/src"), &mut chapters);
    chapters.sort();
    paths.extend(chapters);
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// The `ais check …` and `ais eval …` examples of a document: each command (a line `$ ais …` in
/// a fenced block that starts with one) and the output the document shows under it.
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
fn every_check_and_eval_example_in_the_readme_and_the_book_prints_what_it_shows() {
    let examples: Vec<(String, String)> = docs()
        .iter()
        .flat_map(|(_, text)| readme_examples(text))
        .collect();
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
            "`ais {command}` prints\n{out}{err}\nbut the docs show\n{shown}"
        );
    }
}

#[test]
fn the_books_fatal_x5_example_is_what_ais_check_prints_for_it() {
    let readme = std::fs::read_to_string(root().join("book/src/checking.md"))
        .expect("the book's checking chapter reads");
    let at = readme
        .find("```\nerror[X5]: ")
        .expect("the book shows a fatal X5");
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

/// The runnable commands of a document: each ```console block whose first line is `$ ais …`,
/// as its commands, each with the lines shown under it.
fn runnable_blocks(text: &str) -> Vec<Vec<(String, Vec<String>)>> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line != "```console" {
            continue;
        }
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        if !body.first().is_some_and(|l| l.starts_with("$ ais ")) {
            continue;
        }
        let mut commands: Vec<(String, Vec<String>)> = Vec::new();
        for l in body {
            if let Some(command) = l.strip_prefix("$ ") {
                commands.push((command.to_owned(), Vec::new()));
            } else if let Some((_, shown)) = commands.last_mut()
                && !l.trim().is_empty()
                && l.trim() != "…"
            {
                shown.push(l.to_owned());
            }
        }
        blocks.push(commands);
    }
    blocks
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every command the README and the book show in a runnable block (```console, first line
/// `$ ais …`) runs, in reading order, in a directory holding copies of `examples/` and
/// `tests/fixtures/`: it exits 0, and every line shown under it is part of a line it printed,
/// in the order shown (run ids, timings and the rest of a report may come between).
#[test]
fn every_runnable_command_in_the_book_runs_and_prints_what_it_shows() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&root().join("examples"), &dir.path().join("examples"));
    copy_tree(
        &root().join("tests/fixtures"),
        &dir.path().join("tests/fixtures"),
    );
    let mut ran = 0;
    for (path, text) in docs() {
        for block in runnable_blocks(&text) {
            for (command, shown) in block {
                let o = Command::new("sh")
                    .arg("-c")
                    .arg(format!(
                        "\"$AIS\" {}",
                        command.strip_prefix("ais ").unwrap_or(&command)
                    ))
                    .env("AIS", env!("CARGO_BIN_EXE_ais"))
                    .env("NO_COLOR", "1")
                    .env_remove("AIS_MODEL")
                    .env_remove("OPENAI_API_KEY")
                    .current_dir(dir.path())
                    .output()
                    .expect("sh runs");
                let printed = format!("{}{}", stdout(&o), stderr(&o));
                let at = path.strip_prefix(root()).unwrap_or(&path).display();
                assert!(
                    o.status.success(),
                    "{at}: `{command}` exited {:?}:\n{printed}",
                    o.status.code()
                );
                let mut lines = printed.lines();
                for want in &shown {
                    assert!(
                        lines.any(|l| l.contains(want.trim())),
                        "{at}: `{command}` does not print (in this order) the line\n{want}\nit printed:\n{printed}"
                    );
                }
                ran += 1;
            }
        }
    }
    assert!(ran >= 5, "only {ran} runnable commands found");
}

/// The book's command-line reference is what clap says: regenerate it with
/// `cargo run -- cli-reference > book/src/reference/cli.md`.
#[test]
fn the_books_cli_reference_is_generated_from_clap() {
    let o = ais(&["cli-reference"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let committed = std::fs::read_to_string(root().join("book/src/reference/cli.md")).unwrap();
    assert!(
        committed == stdout(&o),
        "book/src/reference/cli.md is not what clap generates; regenerate it with \
         `cargo run -- cli-reference > book/src/reference/cli.md`"
    );
}

/// Every chapter is in the book's table of contents, every example in the cookbook, and no
/// document cites a section of a specification the repository does not ship.
#[test]
fn the_book_lists_every_chapter_and_example_and_cites_no_spec_section() {
    let summary = std::fs::read_to_string(root().join("book/src/SUMMARY.md")).unwrap();
    let cookbook = std::fs::read_to_string(root().join("book/src/cookbook.md")).unwrap();
    for (path, text) in docs() {
        let at = path.strip_prefix(root()).unwrap_or(&path).to_path_buf();
        // The generated CLI reference quotes the commands' help, which may cite the spec the
        // development layout ships beside the repository.
        if !at.ends_with("reference/cli.md") {
            assert!(!text.contains('§'), "{} cites a spec section", at.display());
        }
        if let Ok(chapter) = path.strip_prefix(root().join("book/src"))
            && chapter != std::path::Path::new("SUMMARY.md")
        {
            let link = format!("]({})", chapter.display());
            assert!(
                summary.contains(&link),
                "SUMMARY.md does not link {}",
                chapter.display()
            );
        }
    }
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs") {
            assert!(
                cookbook.contains(&format!("[`{stem}`]")),
                "the cookbook has no row for examples/{name}"
            );
        }
    }
}

/// `ais NEW-ARGS` in `dir`.
fn ais_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("AIS_MODEL")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("the ais binary runs")
}

/// `ais new NAME` scaffolds an agent that runs on the first try, as its README says, and never
/// writes into a directory that exists.
#[test]
fn ais_new_scaffolds_an_agir_agent_that_runs_as_its_readme_says() {
    let dir = tempfile::tempdir().unwrap();
    let o = ais_in(dir.path(), &["new", "review-digest"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("next: cd review-digest && ais run review_digest.agir"),
        "{}",
        stdout(&o)
    );
    let agent = dir.path().join("review-digest");
    let readme = std::fs::read_to_string(agent.join("README.md")).unwrap();
    // The README's command, as written.
    let command = readme
        .lines()
        .find(|l| l.starts_with("ais run "))
        .expect("the README shows the run");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "\"$AIS\" {}",
            command.strip_prefix("ais ").unwrap()
        ))
        .env("AIS", env!("CARGO_BIN_EXE_ais"))
        .env_remove("AIS_MODEL")
        .current_dir(&agent)
        .output()
        .unwrap();
    let printed = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "{printed}");
    assert!(
        printed.contains("review_digest.agir: ok after 7 steps, 4 slots filled"),
        "{printed}"
    );
    let summary = std::fs::read_to_string(agent.join("summary.md")).unwrap();
    assert!(summary.contains("4 reviews: 2 positive"), "{summary}");
    // Named after the agent, and clean.
    let check = ais_in(&agent, &["check", "review_digest.agir"]);
    assert!(
        stdout(&check).contains("review_digest.agir: clean"),
        "{}",
        stdout(&check)
    );
    let text = std::fs::read_to_string(agent.join("review_digest.agir")).unwrap();
    assert!(text.contains("name: review_digest\n") && text.contains("name: ReviewDigest\n"));

    // Again: the directory exists, nothing in it is touched.
    std::fs::write(agent.join("reviews.csv"), "mine\n").unwrap();
    let o = ais_in(dir.path(), &["new", "review-digest"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("ais new writes only into a directory it creates"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(agent.join("reviews.csv")).unwrap(),
        "mine\n"
    );
    // A name that is no identifier, or a path that names no directory, is refused.
    for bad in ["9lives", "has space", ".."] {
        let o = ais_in(dir.path(), &["new", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(!dir.path().join(bad).join("README.md").exists(), "{bad}");
    }
}

/// `ais new NAME --rust` scaffolds a crate that builds and whose tests pass: built offline
/// against this checkout (`--ais-path`) with this workspace's lock, in a target directory of
/// its own. Ignored by `cargo test` (a crate build of its own); `.ci/run` runs it.
#[test]
#[ignore = "builds a crate of its own; .ci/run runs it with --ignored"]
fn ais_new_rust_scaffolds_a_crate_whose_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    let root = root();
    let o = ais_in(
        dir.path(),
        &[
            "new",
            "review-digest",
            "--rust",
            "--ais-path",
            root.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let krate = dir.path().join("review-digest");
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("ais = { path = "), "{manifest}");
    // The same lock as the workspace: the same versions, already downloaded and built.
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target/tests/crates"))
        .env("CARGO_INCREMENTAL", "0")
        // No debug info: a third less to compile and link, and nothing here reads it.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_PROFILE_TEST_DEBUG", "false")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let printed = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "{printed}");
    assert!(printed.contains("test result: ok. 3 passed"), "{printed}");

    // The crate is built on the light `ais`: none of the heavy parts it does not use were
    // compiled, and a live model without its feature is an error saying how to turn it on.
    let deps = root.join("target/tests/crates/debug/deps");
    for heavy in [
        "reqwest",
        "rusqlite",
        "rmcp",
        "axum",
        "clap",
        "opentelemetry",
        "ais_lift",
    ] {
        let built = std::fs::read_dir(&deps)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|name| name.starts_with(&format!("lib{heavy}-")));
        assert_eq!(built, None, "the light ais compiled {heavy}");
    }
    assert!(manifest.contains("live = [\"ais/http\"]"), "{manifest}");
    let o = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "run",
            "--offline",
            "--quiet",
            "--",
            "--model",
            "openai:gpt-4o-mini",
        ])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target/tests/crates"))
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_PROFILE_TEST_DEBUG", "false")
        .env("OPENAI_API_KEY", "sk-never-sent")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(!o.status.success());
    // The line to write is the facade's (`ais`), the package this crate depends on, not
    // the runtime's underneath it.
    let line = format!(
        "turn on the `http` feature of `ais`: `ais = {{ version = \"{}\", features = \
         [\"http\"] }}` in Cargo.toml",
        env!("CARGO_PKG_VERSION")
    );
    // (`main` returns the error, so it is printed with `Debug`: its quotes escaped.)
    let printed = stderr(&o).replace("\\\"", "\"");
    assert!(printed.contains(&line), "{printed}");

    // Without --ais-path the manifest names the crates.io release this ais was built from.
    let o = ais_in(dir.path(), &["new", "published", "--rust"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = std::fs::read_to_string(dir.path().join("published/Cargo.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        manifest.contains(&format!("ais = \"{version}\"")),
        "{manifest}"
    );
    assert!(
        manifest.contains(&format!("ais-syntax = \"{version}\"")),
        "{manifest}"
    );
}

//! A SPAWN's siblings under `ais run` and `ais resume`, attacked by the model that lists them:
//! a list of 100,000 items stops the run at the sibling cap, fast, before any sibling's effect;
//! every sibling is a step toward `--max-steps`, in a journaled run, across its resume and
//! across a handle resume; and a resume runs under the bounds the run was started with.
//!
//! Each sibling runs a real Python tool that appends its item to `effects.log` in the output
//! root, so "no effect" is a file that is not there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// A slot lists the items, a SPAWN runs `mark` once per item.
const LISTED: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    items: {type: "list[str]", produced_by: plan}
    marked: {type: "list[str]", produced_by: fan}
tools:
  mark:
    sig: "(items) -> str"
    surface: ACT
    serves: [fan]
    body: |
      with open("effects.log", "a") as f:
          f.write(items + "\n")
      return items
nodes:
  - {id: plan, type: GEN-FILL, doc: "List the items to mark.", reads: [task], writes: [items]}
  - {id: fan, type: SPAWN, owner: code, reads: [items], writes: [marked], concurrency: {isolation: shared_read}}
  - {id: done, type: TERMINAL, reads: [marked]}
edges:
  - {from: plan, to: fan}
  - {from: fan, to: done}
"#;

/// A SPAWN of five literal sub-tasks, then a step that needs a human's `note`.
const FAN_THEN_ASK: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    note: {type: int, role: input, doc: "A number to add."}
    marked: {type: "list[str]", produced_by: fan}
    total: {type: int, produced_by: add}
tools:
  mark:
    sig: "(task) -> str"
    surface: ACT
    serves: [fan]
    body: |
      with open("effects.log", "a") as f:
          f.write(task + "\n")
      return task
nodes:
  - {id: fan, type: SPAWN, owner: code, reads: [task], writes: [marked], concurrency: {isolation: shared_read, spawn: [a, b, c, d, e]}}
  - {id: add, type: CODE, owner: code, reads: [marked, note], writes: [total], body: "len(marked) + note"}
  - {id: done, type: TERMINAL, reads: [total]}
edges:
  - {from: fan, to: add}
  - {from: add, to: done}
"#;

/// A step that needs a human's `note`, then the same SPAWN of five.
const ASK_THEN_FAN: &str = r#"
walker:
  carries:
    task: {type: str, role: input}
    note: {type: int, role: input, doc: "A number."}
    twice: {type: int, produced_by: ask}
    marked: {type: "list[str]", produced_by: fan}
tools:
  mark:
    sig: "(task) -> str"
    surface: ACT
    serves: [fan]
    body: |
      with open("effects.log", "a") as f:
          f.write(task + "\n")
      return task
nodes:
  - {id: ask, type: CODE, owner: code, reads: [note], writes: [twice], body: "note * 2"}
  - {id: fan, type: SPAWN, owner: code, reads: [task], writes: [marked], concurrency: {isolation: shared_read, spawn: [a, b, c, d, e]}}
  - {id: done, type: TERMINAL, reads: [marked]}
edges:
  - {from: ask, to: fan}
  - {from: fan, to: done}
"#;

fn ais_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(args)
        .current_dir(dir)
        .env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .output()
        .expect("the ais binary runs")
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", both(o)))
}

/// The lines the siblings appended (none when the file is not there).
fn effects(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("out/effects.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A project directory with `p.agir` holding `program`.
fn project(program: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.agir"), program).unwrap();
    dir
}

/// `ais run p.agir --out out --format json` plus `extra`.
fn run(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", "p.agir", "--task", "go", "--out", "out"];
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    ais_in(dir, &args)
}

/// Scripts the `plan` slot to answer `n` items; returns the `--model` spec.
fn listing(dir: &Path, n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!("item-{i}")).collect();
    let file: PathBuf = dir.join("s.json");
    std::fs::write(&file, serde_json::json!({ "plan": [items] }).to_string()).unwrap();
    format!("scripted:{}", file.display())
}

#[test]
fn a_model_listing_100000_items_stops_at_the_sibling_cap_before_any_effect() {
    let dir = project(LISTED);
    // Within a cap, every sibling runs its tool once: the effect the attack must not reach.
    let model = listing(dir.path(), 3);
    let o = run(dir.path(), &["--model", &model, "--max-siblings", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let mut got = effects(dir.path());
    got.sort();
    assert_eq!(got, ["item-0", "item-1", "item-2"]);
    // Three steps (plan, fan, done); the siblings are sub-steps 2.1–2.3 of the SPAWN's step,
    // each counted against the budget (below).
    assert_eq!(json(&o)["steps"], 3, "the siblings are sub-steps");
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();

    // The attack: the model lists 100,000 items; the run is journaled (the default).
    let model = listing(dir.path(), 100_000);
    let started = Instant::now();
    let o = run(dir.path(), &["--model", &model]);
    let took = started.elapsed();
    println!("a fan-out of 100,000 refused in {took:?}");
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let v = json(&o);
    assert_eq!(v["status"], "fault", "{v}");
    assert_eq!(v["fault"]["kind"], "budget_exhausted", "{v}");
    assert_eq!(v["fault"]["instruction"], "fan", "{v}");
    let message = v["fault"]["message"].as_str().unwrap();
    for part in [
        "SPAWN `fan`",
        "100000 siblings",
        "cap of 1000",
        "--max-siblings",
    ] {
        assert!(message.contains(part), "`{part}` missing: {message}");
    }
    assert!(effects(dir.path()).is_empty(), "a sibling ran");
    assert!(!dir.path().join("out/.ais/spawn").exists());
    assert!(!dir.path().join("out/.ais/stage").exists());
    // Well under what 100,000 tool processes would take, even on a loaded machine.
    assert!(took.as_secs() < 60, "{took:?}");
    // The journal ended the run with the same fault: nothing is left to resume.
    let id = v["run"].as_str().expect("a run id");
    let o = ais_in(dir.path(), &["resume", id, "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(effects(dir.path()).is_empty());

    // One past a raised cap is refused the same way.
    let model = listing(dir.path(), 4);
    let o = run(dir.path(), &["--model", &model, "--max-siblings", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let message = json(&o)["fault"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("4 siblings, more than the cap of 3"),
        "{message}"
    );
    assert!(effects(dir.path()).is_empty());

    // A listing within the cap but past the step budget: refused before any sibling ran.
    let o = run(
        dir.path(),
        &[
            "--model",
            &model,
            "--max-siblings",
            "10",
            "--max-steps",
            "5",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let message = json(&o)["fault"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("forks 4 siblings"), "{message}");
    assert!(message.contains("--max-steps"), "{message}");
    assert!(effects(dir.path()).is_empty());
}

/// The answer to the pause of `o`'s run, resumed from `dir`: by its id (journaled) or its
/// handle (`--no-journal`).
fn resume(dir: &Path, o: &Output, answer: &str, extra: &[&str]) -> Output {
    let v = json(o);
    assert_eq!(v["status"], "input_required", "{v}");
    let target = match v["run"].as_str() {
        Some(id) => id.to_owned(),
        None => v["pause"]["handle"].as_str().expect("a handle").to_owned(),
    };
    let mut args = vec!["resume", &target, "--answer", answer, "--format", "json"];
    if v["run"].is_string() {
        args.extend_from_slice(&["--out", "out"]);
    }
    args.extend_from_slice(extra);
    ais_in(dir, &args)
}

#[test]
fn siblings_stay_counted_across_a_journaled_and_a_handle_resume() {
    for journal in [&[][..], &["--no-journal"][..]] {
        let dir = project(FAN_THEN_ASK);
        // The SPAWN is one step and its five siblings five sub-steps of the budget; the pause
        // comes at the next step.
        let o = run(dir.path(), &[&["--max-steps", "100"], journal].concat());
        assert_eq!(o.status.code(), Some(3), "{journal:?}: {}", both(&o));
        assert_eq!(json(&o)["steps"], 1, "{journal:?}");
        assert_eq!(effects(dir.path()).len(), 5);
        let o = resume(dir.path(), &o, "2", &[]);
        assert_eq!(o.status.code(), Some(0), "{journal:?}: {}", both(&o));
        let v = json(&o);
        assert_eq!(v["report"]["total"], 7, "{v}");
        assert_eq!(v["steps"], 3, "{journal:?}: {v}");
        assert_eq!(effects(dir.path()).len(), 5, "no sibling ran twice");

        // A budget of 7: the resume has one step left, for `add`; `done` exceeds it.
        let dir = project(FAN_THEN_ASK);
        let o = run(dir.path(), &[&["--max-steps", "7"], journal].concat());
        assert_eq!(o.status.code(), Some(3), "{journal:?}: {}", both(&o));
        let o = resume(dir.path(), &o, "2", &[]);
        assert_eq!(o.status.code(), Some(1), "{journal:?}: {}", both(&o));
        let v = json(&o);
        assert_eq!(v["fault"]["kind"], "budget_exhausted", "{v}");
        assert_eq!(v["fault"]["instruction"], "done", "{v}");
        assert!(
            v["fault"]["message"]
                .as_str()
                .unwrap()
                .contains("7 steps ran"),
            "{v}"
        );
    }
}

#[test]
fn a_resume_runs_under_the_sibling_cap_the_run_started_with() {
    for journal in [&[][..], &["--no-journal"][..]] {
        let dir = project(ASK_THEN_FAN);
        let o = run(dir.path(), &[&["--max-siblings", "3"], journal].concat());
        assert_eq!(o.status.code(), Some(3), "{journal:?}: {}", both(&o));
        // Resumed without the flag: the recorded cap of 3 still holds.
        let o = resume(dir.path(), &o, "1", &[]);
        assert_eq!(o.status.code(), Some(1), "{journal:?}: {}", both(&o));
        let message = json(&o)["fault"]["message"].as_str().unwrap().to_owned();
        assert!(
            message.contains("5 siblings, more than the cap of 3"),
            "{message}"
        );
        assert!(effects(dir.path()).is_empty(), "{journal:?}");

        // A cap given to the resume replaces the recorded one.
        let dir = project(ASK_THEN_FAN);
        let o = run(dir.path(), &[&["--max-siblings", "3"], journal].concat());
        let o = resume(dir.path(), &o, "1", &["--max-siblings", "5"]);
        assert_eq!(o.status.code(), Some(0), "{journal:?}: {}", both(&o));
        assert_eq!(effects(dir.path()).len(), 5);
    }
}

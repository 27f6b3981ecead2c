//! A path parameter of an artifact tool is confined under the output root by the runtime before
//! the tool sees it (spec §4.2.2), whatever the tool is: a Python body, a command, a native tool,
//! a SPAWN sibling's staged effects, a slot's tool call. Each test is an attack: an absolute
//! path, `..`, `~`, a symlinked directory inside the root, and the root's own state (`.git/`,
//! `.ais/`) — and each must come back as a routable error value with nothing written outside.

use crate::common;

use ais_core::Value;
use ais_rt::Status;
use ais_rt::ToolRegistry;
use ais_rt::llm::ScriptedModel;
use common::{Bench, arg, tool};
use std::path::Path;
use std::sync::Arc;

/// A Python body that writes `content` to `path`, creating its directory, as Appendix C's
/// `save_plan` does.
const PY_SAVE: &str = r#"    body: |
      def save(content, path):
          import os
          d = os.path.dirname(path)
          if d:
              os.makedirs(d, exist_ok=True)
          with open(path, "w") as f:
              f.write(content or "")
          return path
"#;

/// A command that creates the file it is given (and its directories).
const CMD_SAVE: &str = "    command: \"install -D /dev/null {path}\"\n";

/// A program whose ACT `save` calls the artifact tool `save(content, path)` with the input
/// carry `dest_path`, routing on the outcome. `imp` is the tool's body or command lines.
fn saver(imp: &str) -> String {
    saver_sig("(content, path) -> str", imp)
}

/// [`saver`] with the tool's signature `sig`.
fn saver_sig(sig: &str, imp: &str) -> String {
    format!(
        r#"---
name: t
description: Save where the input says.
---
tools:
  save:
    sig: "{sig}"
    surface: ACT·artifact
{imp}walker:
  name: T
  carries:
    task: {{type: str, role: input}}
    dest_path: {{type: str, role: input}}
    saved: {{type: outcome, produced_by: save}}
nodes:
  - {{id: save, type: ACT, owner: code, tool: save, reads: [dest_path, task], writes: [saved]}}
  - {{id: check, type: ROUTE, owner: code, reads: [saved]}}
  - {{id: done, type: TERMINAL, reads: [saved]}}
edges:
  - {{from: save, to: check}}
  - {{from: check, to: done, guard: "saved.ok == true"}}
  - {{from: check, to: done, guard: otherwise}}
"#
    )
}

/// An output root with `link -> <outside>` in it, and the outside directory.
fn rooted(bench: &Bench) -> tempfile::TempDir {
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), bench.out.path().join("link")).unwrap();
    outside
}

/// Every attack, relative to an outside directory holding the victim.
fn attacks(outside: &Path) -> Vec<String> {
    vec![
        outside.join("victim.txt").display().to_string(),
        "../victim.txt".into(),
        "notes/../../victim.txt".into(),
        "~/victim.txt".into(),
        "link/victim.txt".into(),
        ".git/config".into(),
        "sub/.git/hooks/pre-commit".into(),
        ".ais/handle.json".into(),
        ".HG/hgrc".into(),
    ]
}

/// Runs every attack against `text` and checks the outcome is an error value and nothing
/// landed outside the root or in its protected directories; then a fair path works.
fn assert_confined(bench: &Bench, text: &str, outside: &Path) {
    let parent = bench.out.path().parent().unwrap().join("victim.txt");
    for attack in attacks(outside) {
        let out = bench.run(text, "hello", &[("dest_path", &attack)]);
        assert_eq!(out.status, Status::Ok, "{attack}: {out:?}");
        assert_eq!(
            out.report["saved"]["ok"], false,
            "{attack} refused: {out:?}"
        );
        let error = out.report["saved"]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("`save`"),
            "{attack}: names the tool: {error}"
        );
        assert!(!outside.join("victim.txt").exists(), "{attack} escaped");
        assert!(!parent.exists(), "{attack} escaped to the root's parent");
        for protected in [".git", "sub/.git", ".ais/handle.json", ".HG"] {
            assert!(
                !bench.out.path().join(protected).exists(),
                "{attack} wrote {protected}"
            );
        }
    }
    let out = bench.run(text, "hello", &[("dest_path", "notes/./inside.txt")]);
    assert_eq!(out.report["saved"]["ok"], true, "{out:?}");
    assert!(bench.out.path().join("notes/inside.txt").exists());
}

#[test]
fn a_python_body_never_receives_an_escaping_path() {
    let bench = Bench::new();
    let bench = Bench {
        tools: ToolRegistry::with_builtins(),
        ..bench
    };
    let outside = rooted(&bench);
    assert_confined(&bench, &saver(PY_SAVE), outside.path());
    // The body got the checked path, relative to its working directory (the root).
    let out = bench.run(&saver(PY_SAVE), "hello", &[("dest_path", "./a//b.txt")]);
    assert_eq!(out.report["saved"]["value"], "a/b.txt", "{out:?}");
}

#[test]
fn a_command_never_receives_an_escaping_path() {
    let bench = Bench::new();
    let outside = rooted(&bench);
    assert_confined(
        &bench,
        &saver_sig("(path) -> str", CMD_SAVE),
        outside.path(),
    );
}

#[test]
fn a_native_tool_never_receives_an_escaping_path() {
    // A naive native tool: joins whatever it gets to its working directory and writes there.
    let naive = tool(|a, ctx| {
        let dest = ctx.work_dir().join(arg(a, "path"));
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).map_err(|e| common::failed(&e.to_string(), ""))?;
        }
        std::fs::write(&dest, arg(a, "content")).map_err(|e| common::failed(&e.to_string(), ""))?;
        Ok(Value::from(arg(a, "path")))
    });
    let bench = Bench::new().with("save", naive.clone());
    let outside = rooted(&bench);
    assert_confined(&bench, &saver(""), outside.path());
    assert_eq!(
        naive.calls.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the tool ran only for the fair path"
    );
}

/// A SPAWN over `items` whose siblings call `save(items, path)` with `dest_path`, staged
/// (`orchestrator_owned`) and applied after the barrier.
fn staged(body: &str) -> String {
    format!(
        r#"---
name: t
description: A staged fan-out.
---
tools:
  save:
    sig: "(items, path) -> str"
    surface: ACT·artifact
    serves: [fan]
    body: |
{body}
walker:
  name: T
  carries:
    task: {{type: str, role: input}}
    dest_path: {{type: str, role: input}}
    items: {{type: list[str], produced_by: make}}
    results: {{type: list[str], produced_by: fan}}
nodes:
  - {{id: make, type: CODE, owner: code, reads: [task], writes: [items], body: "task.split(',')"}}
  - {{id: fan, type: SPAWN, owner: code, reads: [items, dest_path], writes: [results], concurrency: {{isolation: orchestrator_owned}}}}
  - {{id: done, type: TERMINAL, reads: [results]}}
edges:
  - {{from: make, to: fan}}
  - {{from: fan, to: done}}
"#
    )
}

#[test]
fn a_staged_sibling_never_receives_an_escaping_path() {
    let body = r#"      def save(items, path):
          import os
          d = os.path.dirname(path)
          if d:
              os.makedirs(d, exist_ok=True)
          open(path, "w").write(items)
          return path"#;
    let bench = Bench {
        tools: ToolRegistry::with_builtins(),
        ..Bench::new()
    };
    let outside = rooted(&bench);
    for attack in attacks(outside.path()) {
        let out = bench.run(&staged(body), "a,b", &[("dest_path", &attack)]);
        let results = out.report["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(results.len(), 2, "{attack}: {out:?}");
        for r in &results {
            assert_eq!(r["ok"], false, "{attack}: {out:?}");
        }
        assert!(
            !outside.path().join("victim.txt").exists(),
            "{attack} escaped"
        );
        assert!(!bench.out.path().join(".git").exists(), "{attack}");
    }
    let out = bench.run(&staged(body), "a,b", &[("dest_path", "staged/ok.txt")]);
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert!(bench.out.path().join("staged/ok.txt").exists(), "{out:?}");
}

#[test]
fn applying_staged_effects_creates_nothing_through_a_symlink_in_the_root() {
    // The sibling's own code writes `link/sub/x.txt` in its staging directory, where no link
    // exists; the root has `link -> outside`. Applying must refuse before creating `sub`.
    let body = r#"      def save(items, path):
          import os
          os.makedirs(os.path.join("link", "sub", ".git"), exist_ok=True)
          open(os.path.join("link", "sub", "x.txt"), "w").write(items)
          open(os.path.join("link", "sub", ".git", "config"), "w").write(items)
          return "done""#;
    let bench = Bench {
        tools: ToolRegistry::with_builtins(),
        ..Bench::new()
    };
    let outside = rooted(&bench);
    let out = bench.run(&staged(body), "a", &[("dest_path", "p.txt")]);
    assert!(
        std::fs::read_dir(outside.path()).unwrap().next().is_none(),
        "something was created outside the root: {out:?}"
    );
    let unrouted = format!("{out:?}");
    assert!(unrouted.contains("symbolic link"), "{unrouted}");
}

#[test]
fn a_slot_tool_call_never_passes_an_escaping_path() {
    let text = format!(
        r#"---
name: t
description: A slot that saves through a tool.
---
tools:
  save:
    sig: "(content, path) -> str"
    surface: ACT·artifact
{PY_SAVE}walker:
  name: T
  carries:
    task: {{type: str, role: input}}
    answer: {{type: str, produced_by: write}}
nodes:
  - {{id: write, type: GEN-RAW, reads: [task], writes: [answer], doc: "Write and save.", autonomy: {{tools: [save]}}}}
  - {{id: done, type: TERMINAL, reads: [answer]}}
edges:
  - {{from: write, to: done}}
"#
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    for attack in attacks(&outside) {
        let calls = serde_json::json!({"write": [
            {"$tool_calls": [{"name": "save", "arguments": {"content": "x", "path": attack}}]},
            "saved"
        ]});
        let model = ScriptedModel::from_json(&dir.path().join("r.json"), calls).unwrap();
        let rt = ais_rt::Runtime::builder()
            .out_dir(root.clone())
            .model(Arc::new(model))
            .build();
        let doc = common::program(&text);
        let out = common::block_on(rt.run(&doc.program, None, ais_rt::Inputs::task("go")));
        assert_eq!(out.status, Status::Ok, "{attack}: {out:?}");
        assert!(!outside.join("victim.txt").exists(), "{attack} escaped");
        assert!(!dir.path().join("victim.txt").exists(), "{attack} escaped");
        assert!(!root.join(".git").exists() && !root.join(".ais/handle.json").exists());
    }
}

//! Kernel confinement of tool subprocesses, tried as an attacker: a Python body, a command (with
//! and without a shell) and `run_command` each try to write outside the output root through an
//! absolute path, a `../` path and a symlink inside the root. Every attempt must fail in the
//! kernel (the tool's own failure becomes the call's error value) and leave nothing outside;
//! writes inside the root and the private `TMPDIR` still work.

use ais_core::Value;
use ais_rt::{Builtin, CommandTool, PythonTool, Tool, ToolArgs, ToolContext, ToolErrorKind};
use std::path::Path;

use crate::common;
use common::have_python;

fn args(pairs: &[(&str, &str)]) -> ToolArgs {
    let mut a = ToolArgs::default();
    for (k, v) in pairs {
        a.params.insert((*k).to_owned(), Value::from(*v));
    }
    a
}

/// The three escape routes from `root` into `outside`: absolute, `../`, through a symlink.
fn escapes(root: &Path, outside: &Path, tag: &str) -> Vec<(String, std::path::PathBuf)> {
    let link = root.join(format!("link-{tag}"));
    std::os::unix::fs::symlink(outside, &link).unwrap();
    let name = outside.file_name().unwrap().to_str().unwrap();
    vec![
        (
            outside.join(format!("abs-{tag}")).display().to_string(),
            outside.join(format!("abs-{tag}")),
        ),
        (
            format!("../{name}/dotdot-{tag}"),
            outside.join(format!("dotdot-{tag}")),
        ),
        (
            format!("link-{tag}/sym-{tag}"),
            outside.join(format!("sym-{tag}")),
        ),
    ]
}

fn confined() -> bool {
    if ais_rt::confinement_available() {
        return true;
    }
    assert!(ais_rt::unconfined_deviation().is_some());
    eprintln!("skipped: this kernel has no Landlock");
    false
}

/// Runs `tool` with `path` set to each escape route; each call must fail and write nothing.
async fn attack(tool: &dyn Tool, param: &str, tag: &str) {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(root.path());
    for (given, target) in escapes(root.path(), outside.path(), tag) {
        let result = tool.call(args(&[(param, &given)]), &ctx).await;
        let err = result.expect_err(&format!("{tag}: writing {given} must fail"));
        assert_eq!(err.kind, ToolErrorKind::Failed, "{tag} {given}: {err:?}");
        assert!(
            !target.exists(),
            "{tag}: {given} was written outside the root"
        );
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn a_python_body_cannot_write_outside_the_root() {
    if !confined() || !have_python() {
        return;
    }
    let body = "with open(path, 'w') as f:\n    f.write('pwned')\nreturn 'wrote'";
    let tool = PythonTool::new("py", body, Some(vec!["path".into()]));
    attack(&tool, "path", "py").await;
    // Inside the root and in its private TMPDIR, writing works.
    let root = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(root.path());
    let ok = tool.call(args(&[("path", "inside.txt")]), &ctx).await;
    assert_eq!(ok.unwrap(), Value::from("wrote"));
    assert_eq!(
        std::fs::read_to_string(root.path().join("inside.txt")).unwrap(),
        "pwned"
    );
    let tmp = PythonTool::new(
        "tmp",
        "import tempfile, os\nfd, p = tempfile.mkstemp()\nos.write(fd, b'x')\nreturn os.environ['TMPDIR'] in p",
        Some(vec![]),
    );
    assert_eq!(
        tmp.call(ToolArgs::default(), &ctx).await.unwrap(),
        Value::Bool(true)
    );
}

#[tokio::test]
async fn a_command_cannot_write_outside_the_root_with_or_without_a_shell() {
    if !confined() {
        return;
    }
    let direct = CommandTool::new("touch", "touch {path}", vec!["path".into()]);
    assert!(!direct.uses_shell());
    attack(&direct, "path", "direct").await;
    let shell = CommandTool::new("redirect", "printf pwned > {path}", vec!["path".into()]);
    assert!(shell.uses_shell());
    attack(&shell, "path", "shell").await;
    // A script the tool writes and then runs is confined the same way.
    let script = CommandTool::new(
        "script",
        "printf '#!/bin/sh\\nprintf pwned > \"$1\"\\n' > s.sh && chmod +x s.sh && ./s.sh {path}",
        vec!["path".into()],
    );
    attack(&script, "path", "script").await;
}

#[tokio::test]
async fn run_command_cannot_write_outside_the_root() {
    if !confined() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(root.path());
    let target = outside.path().join("rc");
    let line = format!("echo pwned > {}", target.display());
    let err = Builtin::RunCommand
        .call(args(&[("command", &line)]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed, "{err:?}");
    assert!(err.output.contains("Permission denied"), "{}", err.output);
    assert!(!target.exists());
    // Writing inside the root still works, and /dev/null is writable.
    let ok = Builtin::RunCommand
        .call(
            args(&[(
                "command",
                "echo hi > here.txt; echo gone > /dev/null; cat here.txt",
            )]),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(ok, Value::from("hi"));
}

/// The runtime's own state is out of a tool's reach: beneath the output root, a tool writes
/// anywhere but `.ais/` — not the journal, not a new file, not a rename of `.ais` itself —
/// while a SPAWN sibling's scratch directory under `.ais/spawn/` stays writable to its own
/// tool (the sealing key's directory is hidden the same way: `tests/cli_sandbox.rs`).
#[tokio::test]
async fn a_tool_cannot_write_the_runtimes_state() {
    if !confined() || !ais_rt::shield_available() {
        eprintln!("skipped: no Landlock or no user namespaces on this kernel");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join(".ais");
    std::fs::create_dir_all(state.join("spawn/fan/0")).unwrap();
    std::fs::write(state.join("runs.db"), "journal").unwrap();
    let ctx = ToolContext::new(root.path());
    for attack in [
        "printf pwned > .ais/runs.db",
        "printf pwned >> .ais/runs.db",
        "rm -f .ais/runs.db",
        "printf x > .ais/planted",
        "mkdir .ais/resume",
        "mv .ais .gone",
        "rm -rf .ais",
        "ln -s /tmp .ais/link",
    ] {
        let err = Builtin::RunCommand
            .call(args(&[("command", attack)]), &ctx)
            .await
            .expect_err(attack);
        assert_eq!(err.kind, ToolErrorKind::Failed, "{attack}: {err:?}");
        assert_eq!(
            std::fs::read_to_string(state.join("runs.db")).unwrap(),
            "journal",
            "{attack}"
        );
        assert!(!state.join("planted").exists() && !state.join("resume").exists());
    }
    // Writing beside `.ais` still works, and so does reading the journal.
    let ok = Builtin::RunCommand
        .call(
            args(&[("command", "echo hi > here.txt; cat .ais/runs.db")]),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(ok, Value::from("journal"));
    // A sibling's scratch directory beneath `.ais/` is its tool's to write.
    let mut sibling = ctx.clone();
    sibling.scratch = Some(state.join("spawn/fan/0"));
    let ok = Builtin::RunCommand
        .call(
            args(&[("command", "echo mine > note.txt; cat note.txt")]),
            &sibling,
        )
        .await
        .unwrap();
    assert_eq!(ok, Value::from("mine"));
    assert!(state.join("spawn/fan/0/note.txt").exists());
}

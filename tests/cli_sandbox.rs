//! `ais run` as a real process, attacked from its tools: a tool still running when `ais` is
//! stopped (SIGTERM, SIGINT) or killed (SIGKILL) must not survive it, nor must anything it started; a
//! tool blocked on a FIFO must not keep `ais` from exiting; a tool must not read the runtime's
//! environment through `/proc`; and a secret that reaches the report is redacted.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn ais() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ais"));
    c.env_remove("AIS_MODEL")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    c
}

/// A program whose one SENSE step runs `command` (a command tool with one parameter, `task`).
fn program(dir: &Path, command: &str) -> PathBuf {
    let text = format!(
        "tools:\n  t: {{surface: SENSE, sig: \"(task) -> str\", command: {}}}\nwalker:\n  carries:\n    task: {{type: str, role: input}}\n    out: {{type: str, produced_by: s}}\nnodes:\n  - {{id: s, type: SENSE, owner: code, tool: t, reads: [task], writes: [out]}}\n  - {{id: done, type: TERMINAL, reads: [out]}}\nedges:\n  - {{from: s, to: done}}\n",
        serde_json::to_string(command).unwrap()
    );
    let path = dir.join("p.agir");
    std::fs::write(&path, text).unwrap();
    path
}

fn wait_for_file(path: &Path, within: Duration) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_owned();
        }
        assert!(
            start.elapsed() < within,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > within {
            let _ = child.kill();
            panic!("ais did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The live (not zombie) processes whose process group is `pgid`.
fn live_in_group(pgid: &str) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.get(2) == Some(&pgid) && fields.first() != Some(&"Z") {
            live.push(stat);
        }
    }
    live
}

/// The process group of process `pid`.
fn pgid_of(pid: &str) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split_whitespace().nth(2).unwrap().to_owned()
}

/// Starts a run whose tool starts a background `sleep` and waits; stops `ais` with `signal`
/// once both are up; then no process of the tool's group may be left after a second.
fn stop_ais_with_a_tool_running(signal: &str) -> std::process::ExitStatus {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(
        dir.path(),
        ": {task}; echo $$ > tool.pid; sleep 300 & echo $! > bg.pid; wait",
    );
    let mut child = ais()
        .args(["run", prog.to_str().unwrap(), "--task", "go", "--out"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let tool = wait_for_file(&dir.path().join("tool.pid"), Duration::from_secs(20));
    let bg = wait_for_file(&dir.path().join("bg.pid"), Duration::from_secs(20));
    let group = pgid_of(&tool);
    assert_eq!(pgid_of(&bg), group);
    assert!(!live_in_group(&group).is_empty());
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut child, Duration::from_secs(5));
    let stopped = Instant::now();
    while !live_in_group(&group).is_empty() {
        assert!(
            stopped.elapsed() < Duration::from_secs(1),
            "after {signal}: the tool's processes outlived ais: {:?}",
            live_in_group(&group)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    status
}

#[test]
fn sigterm_of_ais_kills_its_running_tool_and_exits_143() {
    let status = stop_ais_with_a_tool_running("-TERM");
    assert_eq!(status.code(), Some(143), "{status:?}");
}

#[test]
fn sigint_of_ais_kills_its_running_tool_and_exits_130() {
    let status = stop_ais_with_a_tool_running("-INT");
    assert_eq!(status.code(), Some(130), "{status:?}");
}

#[test]
fn sigkill_of_ais_still_takes_its_running_tool_down() {
    use std::os::unix::process::ExitStatusExt;
    let status = stop_ais_with_a_tool_running("-KILL");
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[test]
fn a_tool_blocked_on_a_fifo_does_not_keep_ais_from_exiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // A command tool reading it, and the built-in `read_file` reading it.
    let by_command = program(dir.path(), "cat {task}");
    let builtin = dir.path().join("b.agir");
    std::fs::write(
        &builtin,
        "walker:\n  carries:\n    task: {type: str, role: input}\n    input_path: {type: str, role: input}\n    out: {type: str, produced_by: s}\nnodes:\n  - {id: s, type: SENSE, owner: code, tool: read_file, reads: [input_path], writes: [out]}\n  - {id: done, type: TERMINAL, reads: [out]}\nedges:\n  - {from: s, to: done}\n",
    )
    .unwrap();
    // The command is stopped at its timeout; the built-in refuses a FIFO before opening it.
    for (prog, inputs, expected) in [
        (by_command, &[][..], "ran longer than 1s"),
        (
            builtin,
            &["--input", "input_path=fifo"][..],
            "it is not a regular file",
        ),
    ] {
        let start = Instant::now();
        let mut child = ais()
            .args(["run", prog.to_str().unwrap(), "--task", "fifo"])
            .args(inputs)
            .args(["--tool-timeout", "1", "--out"])
            .arg(dir.path())
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let status = wait_exit(&mut child, Duration::from_secs(15));
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!status.success(), "{}: {status:?}", prog.display());
        assert!(text.contains(expected), "{}: {text}", prog.display());
        assert!(start.elapsed() < Duration::from_secs(15));
    }
}

use crate::support::nobody;
use nobody::can_drop_to_nobody;

#[test]
fn a_tool_cannot_read_the_runtimes_environment() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "sk-live-supersecret-value-1234567890";
    // The tool dumps its parent's (the guard's) and grandparent's (ais's) environment, then its
    // own, into the output root: a file, which no redaction touches.
    let prog = program(
        dir.path(),
        ": {task}; gp=$(awk '/^PPid/{print $2}' /proc/$PPID/status); \
         { cat /proc/$PPID/environ; echo; cat /proc/$gp/environ; echo; env; } > dump.txt 2>&1; \
         echo done",
    );
    // As `nobody` when this test runs as root (a root tool could read any process), else as the
    // unprivileged user running the test.
    let mut runs = vec![];
    if can_drop_to_nobody() {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_ais"),
        ]);
        runs.push(c);
    } else {
        runs.push(Command::new(env!("CARGO_BIN_EXE_ais")));
    }
    for mut cmd in runs {
        let _ = std::fs::remove_file(dir.path().join("dump.txt"));
        let out = cmd
            .args(["run", prog.to_str().unwrap(), "--task", "go", "--out"])
            .arg(dir.path())
            .env("OPENAI_API_KEY", secret)
            .env("AWS_SECRET_ACCESS_KEY", secret)
            .env_remove("AIS_MODEL")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dump = std::fs::read_to_string(dir.path().join("dump.txt")).unwrap();
        assert!(
            !dump.contains(secret),
            "{cmd:?}: a tool read the secret:\n{dump}"
        );
        assert!(dump.contains("Permission denied"), "{dump}");
        // The tool's own environment is the scrubbed one (PATH is there, the keys are not).
        assert!(dump.contains("PATH="), "{dump}");
    }
}

#[test]
fn secrets_are_redacted_in_the_printed_and_the_json_report() {
    let dir = tempfile::tempdir().unwrap();
    let prog = program(dir.path(), "printf %s {task}");
    let names = [
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "STRIPE_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GITHUB_TOKEN",
    ];
    for (i, name) in names.iter().enumerate() {
        let secret = format!("value-of-secret-{i}-abcdefgh");
        for format in ["human", "json"] {
            let out = ais()
                .args(["run", prog.to_str().unwrap(), "--format", format, "--task"])
                .arg(format!("leak {secret} now"))
                .arg("--out")
                .arg(dir.path())
                .env(name, &secret)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{text}");
            assert!(!text.contains(&secret), "{name} leaked in {format}: {text}");
            assert!(
                text.contains("leak [redacted] now"),
                "{name}, {format}: {text}"
            );
        }
    }
}

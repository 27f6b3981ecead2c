//! `command` tools as real subprocesses: placeholders, quoting, the shell decision, failures,
//! timeouts and the output cap.

use ais_core::Value;
use ais_rt::{CommandTool, Tool, ToolArgs, ToolContext, ToolErrorKind, ToolLimits};
use std::time::{Duration, Instant};

fn args(pairs: &[(&str, Value)]) -> ToolArgs {
    let mut a = ToolArgs::default();
    for (k, v) in pairs {
        a.params.insert((*k).to_owned(), v.clone());
    }
    a
}

fn tool(template: &str, params: &[&str]) -> CommandTool {
    CommandTool::new(
        "cmd",
        template,
        params.iter().map(|s| (*s).to_owned()).collect(),
    )
}

#[tokio::test]
async fn placeholders_are_filled_and_hostile_values_stay_data() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let hostile = "x; touch pwned; $(touch pwned2) `touch pwned3`";
    // Without shell syntax: argv, no shell at all.
    let plain = tool("printf %s {v}", &["v"]);
    assert!(!plain.uses_shell());
    let v = plain
        .call(args(&[("v", hostile.into())]), &ctx)
        .await
        .unwrap();
    assert_eq!(v, Value::from(hostile));
    // With shell syntax: a shell, and the value shell-quoted.
    let piped = tool("printf %s {v} | cat", &["v"]);
    assert!(piped.uses_shell());
    let v = piped
        .call(args(&[("v", hostile.into())]), &ctx)
        .await
        .unwrap();
    assert_eq!(v, Value::from(hostile));
    for name in ["pwned", "pwned2", "pwned3"] {
        assert!(!dir.path().join(name).exists(), "{name} was created");
    }
}

#[tokio::test]
async fn a_shell_command_runs_in_the_output_root_with_quoted_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tools/harness")).unwrap();
    std::fs::write(dir.path().join("tools/harness/marker"), "here\n").unwrap();
    let ctx = ToolContext::new(dir.path());
    let t = tool(
        "cd tools/harness && cat marker && echo {target_dir}",
        &["target_dir"],
    );
    assert!(t.uses_shell());
    let v = t
        .call(args(&[("target_dir", "a b'c".into())]), &ctx)
        .await
        .unwrap();
    assert_eq!(v, Value::from("here\na b'c"));
}

#[tokio::test]
async fn a_fixed_command_keeps_every_token_and_unplaced_args_append() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let v = tool("echo one two", &["extra", "nothing"])
        .call(
            args(&[("extra", Value::Int(3)), ("nothing", Value::Null)]),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(v, Value::from("one two 3"));
}

#[tokio::test]
async fn a_non_zero_exit_is_a_failure_with_both_streams() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let err = tool("echo out; echo err >&2; exit 7", &[])
        .call(args(&[]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("exit status 7"), "{}", err.message);
    assert_eq!(err.output, "out\nerr\n");
}

#[tokio::test]
async fn a_missing_program_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let err = tool("definitely-not-a-program-ais {x}", &["x"])
        .call(args(&[("x", "1".into())]), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Io);
    assert!(
        err.message.contains("definitely-not-a-program-ais"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_hanging_command_times_out_and_its_group_dies() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path());
    ctx.limits = ToolLimits {
        timeout: Duration::from_secs(2),
        ..ToolLimits::default()
    };
    let start = Instant::now();
    let err = tool(
        "sleep 1000 & echo $! > bg.pid; echo waiting; sleep 1000",
        &[],
    )
    .call(args(&[]), &ctx)
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout);
    assert_eq!(err.output, "waiting\n");
    assert!(start.elapsed() < Duration::from_secs(10));
    let pid = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap();
    let gone = ends_within_5s(&pid);
    assert!(gone, "the background sleep outlived the timeout");
}

/// Whether the process `pid` (as a shell's `$!` wrote it) is gone or a zombie within five
/// seconds, looking every 100 ms.
fn ends_within_5s(pid: &str) -> bool {
    let status = format!("/proc/{}/status", pid.trim());
    (0..50).any(|_| {
        let s = std::fs::read_to_string(&status).unwrap_or_default();
        let dead = s.is_empty() || s.contains("State:\tZ");
        if !dead {
            std::thread::sleep(Duration::from_millis(100));
        }
        dead
    })
}

#[tokio::test]
async fn a_flood_of_output_stops_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path());
    ctx.limits.max_output_bytes = 64 * 1024;
    let err = tool("yes", &[]).call(args(&[]), &ctx).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::OutputLimit);
    assert_eq!(err.output.len(), 64 * 1024);
    assert!(err.output.starts_with("y\ny\n"));
}

#[tokio::test]
async fn a_sibling_runs_in_its_scratch_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().join("root"));
    ctx.scratch = Some(dir.path().join("scratch/0"));
    tool("touch made-here", &[])
        .call(args(&[]), &ctx)
        .await
        .unwrap();
    assert!(dir.path().join("scratch/0/made-here").is_file());
    assert!(!dir.path().join("root/made-here").exists());
}

#[tokio::test]
async fn a_shell_body_runs_as_a_script_and_a_command_decl_as_a_command() {
    let text = r#"agir_version: 0.1
tools:
  count_lines:
    sig: "(name) -> str"
    surface: SENSE
    lang: bash
    body: |
      printf 'a\nb\n' > {name}
      wc -l < {name}
  echo_it:
    sig: "(word) -> str"
    surface: SENSE
    command: echo {word}
  native_only:
    sig: "(x) -> str"
    surface: SENSE
    lang: rust
    body: "fn native_only(x: &str) -> String { x.into() }"
nodes: []
"#;
    let tools = ais_core::agir::read(text).unwrap().program.tools.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let script = ais_rt::declared_tool(&tools[0]).unwrap();
    let v = script
        .call(args(&[("name", "my file.txt".into())]), &ctx)
        .await
        .unwrap();
    assert_eq!(v, Value::from("2"));
    assert!(dir.path().join("my file.txt").is_file());
    let cmd = ais_rt::declared_tool(&tools[1]).unwrap();
    let v = cmd
        .call(args(&[("word", "$HOME".into())]), &ctx)
        .await
        .unwrap();
    assert_eq!(v, Value::from("$HOME"));
    assert!(ais_rt::declared_tool(&tools[2]).is_none());
}

#[tokio::test]
async fn a_dropped_call_takes_its_process_group_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let t = tool("sleep 1000 & echo $! > bg.pid; sleep 1000", &[]);
    let call = t.call(args(&[]), &ctx);
    // Abandon the call once the background process is up.
    let pid_file = dir.path().join("bg.pid");
    let abandoned = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::select! {
            _ = call => panic!("the command finished"),
            _ = async {
                while !std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            } => {}
        }
    })
    .await;
    assert!(abandoned.is_ok(), "the background process never started");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let gone = ends_within_5s(&pid);
    assert!(gone, "the background sleep outlived the dropped call");
}

#[tokio::test]
async fn a_background_process_holding_the_pipes_does_not_make_a_finished_call_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path());
    ctx.limits.timeout = Duration::from_secs(20);
    let start = Instant::now();
    let v = tool("sleep 1000 & echo started", &[])
        .call(args(&[]), &ctx)
        .await
        .unwrap();
    assert_eq!(v, Value::from("started"));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

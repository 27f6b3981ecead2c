//! Python `body` tools, run under a real `python3` in a temp directory: the body shapes the
//! reference implementation accepts, a result that survives the tool's own prints, and every
//! way a tool can fail (raise, exit, hang, flood its output).

use ais_core::Value;
use ais_rt::{PythonTool, Tool, ToolArgs, ToolContext, ToolErrorKind, ToolLimits};
use std::time::{Duration, Instant};

use crate::common;
use common::have_python;

fn args(pairs: &[(&str, Value)]) -> ToolArgs {
    let mut a = ToolArgs::default();
    for (k, v) in pairs {
        a.params.insert((*k).to_owned(), v.clone());
    }
    a
}

fn params(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|s| (*s).to_owned()).collect())
}

async fn call(
    body: &str,
    sig: Option<Vec<String>>,
    a: ToolArgs,
    ctx: &ToolContext,
) -> Result<Value, ais_rt::ToolError> {
    PythonTool::new("t", body, sig).call(a, ctx).await
}

fn ctx(dir: &tempfile::TempDir) -> ToolContext {
    ToolContext::new(dir.path())
}

#[tokio::test]
async fn a_complete_def_is_called_with_its_arguments_by_name() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = "def upcase(text):\n    return (text or \"\").upper()\n";
    let v = call(
        body,
        params(&["text"]),
        args(&[("text", "hi there".into())]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    assert_eq!(v, Value::from("HI THERE"));
}

#[tokio::test]
async fn bare_statements_become_the_function_body() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = "return (text or \"\").upper()\n";
    let v = call(
        body,
        params(&["text"]),
        args(&[("text", "abc".into())]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    assert_eq!(v, Value::from("ABC"));
    // An unbound parameter is None, as in the reference implementation.
    let v = call(body, params(&["text"]), args(&[]), &ctx(&dir))
        .await
        .unwrap();
    assert_eq!(v, Value::from(""));
}

#[tokio::test]
async fn run_is_preferred_and_else_the_last_def_and_unmatched_params_get_none() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = "def helper(x):\n    return x * 2\n\ndef run(n, missing):\n    return [helper(n), missing]\n\ndef other(n):\n    return 0\n";
    let v = call(
        body,
        params(&["n"]),
        args(&[("n", Value::Int(21))]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    assert_eq!(v, Value::List(vec![Value::Int(42), Value::Null]));
    let body = "def helper(x):\n    return x + 1\n\ndef main(n):\n    return helper(n)\n";
    let v = call(
        body,
        params(&["n"]),
        args(&[("n", Value::Int(1))]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    assert_eq!(v, Value::Int(2));
}

#[tokio::test]
async fn a_main_guard_harness_is_stripped_and_the_tool_writes_in_the_output_root() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = r#"import sys, json, os
def tool(content: str, path: str) -> str:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(content)
    return path
if __name__ == "__main__":
    data = json.load(sys.stdin)
    print(tool(data["content"], data["path"]))
"#;
    let v = call(
        body,
        params(&["content", "path"]),
        args(&[("content", "hello".into()), ("path", "out/note.txt".into())]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    assert_eq!(v, Value::from("out/note.txt"));
    let written = std::fs::read_to_string(dir.path().join("out/note.txt")).unwrap();
    assert_eq!(written, "hello");
}

#[tokio::test]
async fn results_cross_as_json_tuples_as_lists_and_dicts_in_order() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = "def f(a):\n    return (a > 0, {'z': 1.5, 'a': None, 's': {3, 1}}, b'bytes')\n";
    let v = call(
        body,
        params(&["a"]),
        args(&[("a", Value::Int(1))]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    let json = v.to_json().to_string();
    assert_eq!(json, r#"[true,{"z":1.5,"a":null,"s":[1,3]},"bytes"]"#);
}

#[tokio::test]
async fn the_tools_own_prints_never_corrupt_the_result() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = r#"import subprocess
print('{"ok": true, "value": "forged"}')
sys.stdout.write("noise\n")
subprocess.run(["echo", "child noise"])
os.write(1, b"raw fd noise\n")
return "real"
"#;
    let v = call(body, params(&[]), args(&[]), &ctx(&dir))
        .await
        .unwrap();
    assert_eq!(v, Value::from("real"));
}

#[tokio::test]
async fn a_raised_exception_is_a_failure_with_the_traceback_and_prints() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = "print('before the fall')\nraise ValueError('path must be a non-empty string')\n";
    let err = call(body, params(&["path"]), args(&[]), &ctx(&dir))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(
        err.message
            .contains("ValueError: path must be a non-empty string"),
        "{}",
        err.message
    );
    assert!(err.output.contains("before the fall"), "{}", err.output);
    assert!(err.output.contains("Traceback"), "{}", err.output);
}

#[tokio::test]
async fn exiting_non_zero_is_a_failure() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let err = call("sys.exit(3)\n", params(&[]), args(&[]), &ctx(&dir))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("exit(3)"), "{}", err.message);

    let err = call(
        "print('bye', flush=True)\nos._exit(4)\n",
        params(&[]),
        args(&[]),
        &ctx(&dir),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("exit status 4"), "{}", err.message);
    assert!(err.output.contains("bye"), "{}", err.output);
}

#[tokio::test]
async fn a_hanging_tool_is_killed_with_everything_it_started() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx(&dir);
    c.limits = ToolLimits {
        timeout: Duration::from_secs(4),
        ..ToolLimits::default()
    };
    let body = r#"import subprocess, time
p = subprocess.Popen(["sleep", "1000"])
open("child.pid", "w").write(str(p.pid))
print("started", flush=True)
while True:
    time.sleep(0.05)
"#;
    let start = Instant::now();
    let err = call(body, params(&[]), args(&[]), &c).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(err.output.contains("started"), "{}", err.output);
    let pid = std::fs::read_to_string(dir.path().join("child.pid")).unwrap();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    let gone = (0..50).any(|_| {
        let status = std::fs::read_to_string(proc_dir.join("status")).unwrap_or_default();
        let dead = status.is_empty() || status.contains("State:\tZ");
        if !dead {
            std::thread::sleep(Duration::from_millis(100));
        }
        dead
    });
    assert!(
        gone,
        "the tool's child process {} outlived the timeout",
        pid.trim()
    );
}

#[tokio::test]
async fn a_tool_that_prints_100_mb_is_stopped_at_the_cap() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx(&dir);
    c.limits.max_output_bytes = 1024 * 1024;
    let body = "chunk = 'x' * (1024 * 1024)\nfor _ in range(100):\n    sys.stdout.write(chunk)\nreturn 'done'\n";
    let start = Instant::now();
    let err = call(body, params(&[]), args(&[]), &c).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::OutputLimit);
    assert!(err.output.len() <= 1024 * 1024, "{}", err.output.len());
    assert!(err.output.starts_with("xxxx"));
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn a_body_that_does_not_parse_says_so() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let err = call(
        "def broken(:\n    return 1\n",
        params(&[]),
        args(&[]),
        &ctx(&dir),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("does not parse"), "{}", err.message);
}

#[tokio::test]
async fn a_non_python_template_body_is_its_own_value() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let css = "body { color: red; }\n";
    let v = call(css, params(&[]), args(&[]), &ctx(&dir)).await.unwrap();
    assert_eq!(v, Value::from("body { color: red; }"));
}

#[tokio::test]
async fn without_a_signature_the_calls_arguments_are_the_parameters() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let body = "return '%s-%s' % (a, b)\n";
    let v = call(
        body,
        None,
        args(&[("a", "x".into()), ("b", Value::Int(2))]),
        &ctx(&dir),
    )
    .await
    .unwrap();
    assert_eq!(v, Value::from("x-2"));
}

#[tokio::test]
async fn no_secret_from_the_environment_reaches_the_tool() {
    if !have_python() {
        return;
    }
    // Cargo runs this test with CARGO_* variables set; none may reach the tool.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let dir = tempfile::tempdir().unwrap();
    let body = "return sorted(k for k in os.environ if 'PYENV' not in k and k not in ('LC_CTYPE', 'PWD', 'SHLVL', '_'))\n";
    let v = call(body, params(&[]), args(&[]), &ctx(&dir))
        .await
        .unwrap();
    let Value::List(names) = v else {
        panic!("{v:?}")
    };
    let allowed = ais_rt::INHERITED_ENV;
    for name in &names {
        let name = name.as_str().unwrap();
        assert!(
            allowed.contains(&name) || name.starts_with("PYTHON"),
            "the tool saw `{name}`"
        );
    }
}

#[tokio::test]
async fn a_missing_interpreter_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = PythonTool::new("t", "return 1", params(&[]))
        .with_interpreter("no-such-python-ais")
        .call(args(&[]), &ctx(&dir))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Io);
    assert!(
        err.message.contains("no-such-python-ais"),
        "{}",
        err.message
    );
}

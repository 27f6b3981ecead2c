//! A Python call attacks the warm worker that serves it, as an unprivileged user would: it
//! tries to `ptrace(PTRACE_ATTACH)` its parent (the worker, which runs every later call of the
//! run) and the guard above it (a fork of the runtime), and to read their memory and
//! environment through `/proc`. All of it must fail: the worker makes itself non-dumpable when
//! it starts (an `execve` resets the flag the runtime set on itself), and the calls it forks
//! inherit that.
//!
//! Root may ptrace anything (`CAP_SYS_PTRACE`), so under root — as in CI — the test runs
//! itself again as `nobody` (`setpriv`); where that is impossible outside CI it is skipped
//! with a notice.

use ais_core::Value;
use ais_rt::{PythonTool, Tool, ToolArgs, ToolContext};
use std::process::Command;

use crate::common;
use common::have_python;

/// Set in the copy of this test that runs as `nobody`.
const INNER: &str = "AIS_PTRACE_TEST_INNER";
const NOBODY: &str = "65534";

/// The attack, as a tool body: returns what it managed, for the test to judge.
const ATTACK: &str = r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
PR_GET_DUMPABLE, PTRACE_ATTACH, PTRACE_DETACH = 3, 16, 17
worker = os.getppid()
guard = int(open("/proc/%d/stat" % worker).read().rsplit(")", 1)[1].split()[1])

def attach(pid):
    r = libc.ptrace(ctypes.c_long(PTRACE_ATTACH), ctypes.c_long(pid), None, None)
    err = ctypes.get_errno()
    if r == 0:
        os.waitpid(pid, 0)
        libc.ptrace(ctypes.c_long(PTRACE_DETACH), ctypes.c_long(pid), None, None)
        return "attached"
    return os.strerror(err)

def read(path, seek=0):
    try:
        with open(path, "rb") as f:
            if seek:
                f.seek(seek)
            return "read %d bytes" % len(f.read(64))
    except OSError as e:
        return e.strerror

def first_mapping(pid):
    try:
        return int(open("/proc/%d/maps" % pid).readline().split("-")[0], 16)
    except (OSError, ValueError, IndexError):
        return 4096

return {
    "uid": os.getuid(),
    "dumpable": libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0),
    "attach worker": attach(worker),
    "worker environ": read("/proc/%d/environ" % worker),
    "worker mem": read("/proc/%d/mem" % worker, first_mapping(worker)),
    "attach guard": attach(guard),
    "guard environ": read("/proc/%d/environ" % guard),
}
"#;

fn get<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    match report {
        Value::Map(m) => m.get(name),
        _ => None,
    }
}

fn field(report: &Value, name: &str) -> String {
    match get(report, name) {
        Some(Value::Str(s)) => s.to_string(),
        Some(other) => format!("{other:?}"),
        None => panic!("the attack's report has no `{name}`: {report:?}"),
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

#[test]
fn a_call_cannot_ptrace_or_read_the_worker_that_serves_it() {
    if !have_python() {
        return;
    }
    if std::env::var_os(INNER).is_none() && is_root() {
        as_nobody();
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let tool = PythonTool::new("attack", ATTACK, Some(vec![]));
    // Twice: the first call runs in the spare forked at start-up, the second in one forked
    // after a call (both must inherit the worker's flag).
    for _ in 0..2 {
        let report = rt
            .block_on(tool.call(ToolArgs::default(), &ctx))
            .unwrap_or_else(|e| panic!("the attack call failed: {e:?}"));
        assert_ne!(
            get(&report, "uid"),
            Some(&Value::Int(0)),
            "the attack must run unprivileged"
        );
        assert_eq!(
            get(&report, "dumpable"),
            Some(&Value::Int(0)),
            "the call is dumpable: {report:?}"
        );
        for what in [
            "attach worker",
            "worker environ",
            "worker mem",
            "attach guard",
            "guard environ",
        ] {
            let got = field(&report, what);
            assert!(
                got.contains("not permitted") || got.contains("Permission denied"),
                "{what}: the call got `{got}` (report: {report:?})"
            );
        }
    }
}

/// Runs this test again in a process of its own as `nobody` and asserts that it passed.
fn as_nobody() {
    let exe = std::env::current_exe().unwrap();
    // The harness names a test by its path below the test crate: `tools_python_ptrace::…`.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::a_call_cannot_ptrace_or_read_the_worker_that_serves_it");
    let out = Command::new("setpriv")
        .args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"])
        .arg(&exe)
        .args(["--exact", &name, "--nocapture", "--test-threads=1"])
        .env(INNER, "1")
        .env("TMPDIR", std::env::temp_dir())
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => return skip(&format!("setpriv could not be run ({e})")),
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() && text.contains("setpriv:") {
        return skip(&format!("setpriv could not drop to nobody: {text}"));
    }
    assert!(
        out.status.success() && text.contains("1 passed"),
        "as nobody, the attack test failed:\n{text}"
    );
}

fn skip(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the ptrace attack must be tried as an unprivileged user (CI=true): {why}"
    );
    eprintln!("notice: {why}; skipping the unprivileged ptrace attack");
}

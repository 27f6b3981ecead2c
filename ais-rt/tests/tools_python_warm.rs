//! Warm Python workers, tried as a hostile body would: the calls of one run share a worker
//! (same parent process), yet nothing one call leaves behind — globals, imported modules'
//! state, `builtins`, `sys.path`, the working directory, the environment, files in its
//! `TMPDIR`, a background process — reaches the next; a timeout, a crash of the worker and a
//! leftover process each retire the worker and the next call gets a fresh one; SPAWN siblings
//! calling at once get workers of their own.

use ais_core::Value;
use ais_rt::{PythonTool, Tool, ToolArgs, ToolContext, ToolErrorKind};
use std::time::Duration;

use crate::common;
use common::have_python;

async fn run(body: &str, ctx: &ToolContext) -> Result<Value, ais_rt::ToolError> {
    PythonTool::new("warm", body, Some(vec![]))
        .call(ToolArgs::default(), ctx)
        .await
}

/// The worker serving a call: the call's parent process.
async fn worker_of(ctx: &ToolContext) -> i64 {
    match run("return os.getppid()", ctx).await.unwrap() {
        Value::Int(pid) => pid,
        other => panic!("{other:?}"),
    }
}

fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/status", pid.trim()))
        .is_ok_and(|s| !s.contains("State:\tZ"))
}

#[tokio::test]
async fn nothing_a_call_leaves_behind_reaches_the_next() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let first = worker_of(&ctx).await;
    let polluter = r#"global LEAK
LEAK = 1
import builtins, json, csv
builtins.LEAKED = 1
json.dumps = lambda *a, **k: "poisoned"
csv.LEAK = 2
sys.path.insert(0, "/leak")
sys.modules["leaky_module"] = json
os.environ["AIS_LEAK"] = "3"
os.chdir("/")
open(os.path.join(os.environ["TMPDIR"], "left.txt"), "w").write("x")
return "polluted"
"#;
    assert_eq!(run(polluter, &ctx).await.unwrap(), Value::from("polluted"));
    let probe = r#"import builtins, json, csv
return {
    "global": "LEAK" in globals(),
    "builtins": hasattr(builtins, "LEAKED"),
    "json": json.dumps([1]),
    "csv": hasattr(csv, "LEAK"),
    "path": "/leak" in sys.path,
    "modules": "leaky_module" in sys.modules,
    "env": os.environ.get("AIS_LEAK"),
    "cwd": os.getcwd(),
    "tmp": os.listdir(os.environ["TMPDIR"]),
}
"#;
    let seen = run(probe, &ctx).await.unwrap().to_json();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        seen,
        serde_json::json!({
            "global": false, "builtins": false, "json": "[1]", "csv": false, "path": false,
            "modules": false, "env": null, "cwd": cwd.to_str().unwrap(), "tmp": [],
        })
    );
    // And it was the same warm worker all along.
    assert_eq!(worker_of(&ctx).await, first);
}

#[tokio::test]
async fn a_timeout_retires_the_worker_and_the_next_call_gets_a_fresh_one() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path());
    let first = worker_of(&ctx).await;
    ctx.limits.timeout = Duration::from_secs(2);
    let err = run(
        "import time\nprint('waiting', flush=True)\ntime.sleep(60)",
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout);
    assert!(err.output.contains("waiting"), "{}", err.output);
    // SIGKILL is delivered at once, but the kernel finishes the exit asynchronously: allow it
    // a moment on a loaded machine.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while alive(&first.to_string()) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(&first.to_string()), "the timed-out worker lives on");
    let second = worker_of(&ctx).await;
    assert_ne!(second, first);
}

#[tokio::test]
async fn a_call_that_kills_its_worker_fails_and_the_next_call_still_runs() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let first = worker_of(&ctx).await;
    let err = run(
        "import signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(5)",
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed, "{err:?}");
    assert!(
        err.message.contains("without returning a result"),
        "{}",
        err.message
    );
    let second = worker_of(&ctx).await;
    assert_ne!(second, first);
}

#[tokio::test]
async fn a_process_a_call_leaves_running_is_killed_with_its_worker() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let first = worker_of(&ctx).await;
    // Double-forked and in a session of its own: out of every process group of ais.
    let body = r#"import subprocess
p = subprocess.Popen(["setsid", "sh", "-c", "sleep 1000 & echo $! > bg.pid; wait"], start_new_session=True)
import time
while not os.path.exists("bg.pid") or not open("bg.pid").read().endswith("\n"):
    time.sleep(0.01)
return "left"
"#;
    assert_eq!(run(body, &ctx).await.unwrap(), Value::from("left"));
    let pid = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap();
    let gone = (0..100).any(|_| {
        let dead = !alive(&pid);
        if !dead {
            std::thread::sleep(Duration::from_millis(20));
        }
        dead
    });
    assert!(
        gone,
        "the call's background sleep {} outlived the call",
        pid.trim()
    );
    assert_ne!(worker_of(&ctx).await, first, "a dirty worker was kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn siblings_calling_at_once_get_workers_of_their_own() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let sibling = ctx.clone();
    let body = "import time\ntime.sleep(0.5)\nreturn os.getppid()";
    let (a, b) = tokio::join!(run(body, &ctx), run(body, &sibling));
    assert_ne!(a.unwrap(), b.unwrap());
}

/// A call's child is forked from the worker before the call: it must not reach, through the
/// worker's frames, its module or any live object, what the previous call was given or
/// returned.
#[tokio::test]
async fn a_call_cannot_reach_the_previous_calls_arguments_or_result() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let secret = PythonTool::new(
        "secret",
        "return 'returned-' + token[::-1]",
        Some(vec!["token".into()]),
    );
    let mut args = ToolArgs::default();
    args.params
        .insert("token".into(), Value::from("tsoh-nevig-terces"));
    let got = secret.call(args, &ctx).await.unwrap();
    assert_eq!(got, Value::from("returned-secret-given-host"));
    let probe = r#"import gc
seen = []
frame = sys._getframe()
while frame is not None:
    seen.append(repr(frame.f_locals))
    frame = frame.f_back
seen.append(repr(vars(sys.modules["__main__"])))
for obj in gc.get_objects():
    try:
        seen.append(repr(obj))
    except Exception:
        pass
text = "\n".join(seen)
# Spelled apart, so that this body (which the worker holds) does not contain them.
markers = ["-".join(["tsoh", "nevig"]), "-".join(["secret", "given"])]
return [m for m in markers if m in text]
"#;
    assert_eq!(
        run(probe, &ctx).await.unwrap(),
        Value::List(vec![]),
        "the previous call's argument or result is reachable"
    );
}

/// The worker keeps the next call's child forked and waiting; killed from outside while it
/// waits (it runs no tool code yet), it is replaced and the call runs as if nothing happened.
#[tokio::test]
async fn a_waiting_child_killed_from_outside_is_replaced() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let worker = worker_of(&ctx).await;
    let children = |pid: i64| {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default()
    };
    // The worker forks it just after answering: allow it a moment on a loaded machine.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut waiting = children(worker);
    while waiting.trim().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waiting = children(worker);
    }
    let spare: Vec<&str> = waiting.split_whitespace().collect();
    assert_eq!(
        spare.len(),
        1,
        "one child waits for the next call: {waiting:?}"
    );
    let killed = std::process::Command::new("kill")
        .args(["-KILL", spare[0]])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(
        run("return 'still served'", &ctx).await.unwrap(),
        Value::from("still served")
    );
    assert_eq!(worker_of(&ctx).await, worker, "the worker was retired");
}

/// Freed memory is not cleared: a call that reads its own memory raw (`/proc/self/mem`, every
/// writable mapping) must not find there what an earlier call was given or returned, in the
/// pages its child copied from the worker (the worker's input buffer, the result it relayed).
#[tokio::test]
async fn a_call_cannot_find_the_previous_calls_arguments_or_result_in_its_memory() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let secret = PythonTool::new(
        "secret",
        "return 'returned-' + token[::-1]",
        Some(vec!["token".into()]),
    );
    let mut args = ToolArgs::default();
    args.params
        .insert("token".into(), Value::from("tsoh-nevig-terces"));
    let got = secret.call(args, &ctx).await.unwrap();
    assert_eq!(got, Value::from("returned-secret-given-host"));
    // Searched in halves: the whole marker never exists in this call, so a hit is a copy of
    // the other call's data.
    let scan = r#"marks = [(b"tsoh" + b"-", b"nevig"), (b"secret" + b"-", b"given")]
found = []
with open("/proc/self/mem", "rb", buffering=0) as mem:
    for line in open("/proc/self/maps"):
        f = line.split()
        if not f[1].startswith("rw"):
            continue
        start, end = (int(x, 16) for x in f[0].split("-"))
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except OSError:
            continue
        for head, tail in marks:
            i = data.find(head)
            while i >= 0:
                if data[i + len(head):i + len(head) + len(tail)] == tail:
                    found.append("%s in %s" % (tail.decode(), f[5] if len(f) > 5 else "anonymous memory"))
                    break
                i = data.find(head, i + 1)
return found
"#;
    // The call right after (its child was forked while the secret call ran) and the one after
    // that (forked once the worker had relayed the secret result).
    for nth in ["first", "second"] {
        assert_eq!(
            run(scan, &ctx).await.unwrap(),
            Value::List(vec![]),
            "the {nth} call after finds the secret call's argument or result in its memory"
        );
    }
}

/// The worker reads requests into a buffer that grows, and relays results in pieces: a large
/// argument and a large result cross whole, the calls after them still work, and a result past
/// the output cap stops the call.
#[tokio::test]
async fn large_arguments_and_results_cross_whole_and_a_result_past_the_cap_is_stopped() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let echo = PythonTool::new("echo", "return [len(s), s * 3]", Some(vec!["s".into()]));
    for size in [300_000, 10, 1_000_000, 3] {
        let text: String = "ab\u{e9}".repeat(size / 3);
        let mut args = ToolArgs::default();
        args.params.insert("s".into(), Value::from(text.as_str()));
        let got = echo.call(args, &ctx).await.unwrap().to_json();
        assert_eq!(got[0], serde_json::json!(text.chars().count()));
        assert_eq!(got[1].as_str().map(str::len), Some(3 * text.len()));
        assert!(got[1].as_str().unwrap().starts_with(&text));
    }
    let err = run("return 'x' * (5 * 1024 * 1024)", &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::OutputLimit, "{err:?}");
    assert_eq!(
        run("return 'after'", &ctx).await.unwrap(),
        Value::from("after")
    );
}

/// A call's child is forked without the interpreter's after-fork handlers (see
/// `python_worker.rs`): each call still gets a `random` state of its own, and threads, a thread
/// pool, a forked `multiprocessing` child and asyncio work in it as in any process.
#[tokio::test]
async fn each_call_gets_its_own_random_state_and_threads_and_forks_work() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let draw = "import random\nreturn [random.getrandbits(62) for _ in range(4)]";
    let mut draws = Vec::new();
    for _ in 0..4 {
        draws.push(run(draw, &ctx).await.unwrap().to_json());
    }
    for (i, a) in draws.iter().enumerate() {
        for b in &draws[i + 1..] {
            assert_ne!(a, b, "two calls drew the same random numbers: {draws:?}");
        }
    }
    let body = r#"import threading, asyncio, multiprocessing
from concurrent.futures import ThreadPoolExecutor
seen = []
t = threading.Thread(target=lambda: seen.append(threading.get_ident()))
t.start()
t.join()
with ThreadPoolExecutor(2) as pool:
    doubled = sorted(pool.map(lambda x: 2 * x, [1, 2, 3]))
# (a multiprocessing Queue needs a semaphore in /dev/shm, which the sandbox does not allow)
r, w = os.pipe()
p = multiprocessing.get_context("fork").Process(target=lambda: os.write(w, b"%d" % os.getppid()))
p.start()
p.join()
parent = int(os.read(r, 32))
async def later():
    await asyncio.sleep(0.01)
    return "slept"
return {
    "thread": len(seen) == 1 and seen[0] != threading.get_ident(),
    "main": threading.current_thread() is threading.main_thread(),
    "native_id": threading.get_native_id() == os.getpid(),
    "pool": doubled,
    "fork": parent == os.getpid() and p.exitcode == 0,
    "asyncio": asyncio.run(later()),
}
"#;
    assert_eq!(
        run(body, &ctx).await.unwrap().to_json(),
        serde_json::json!({
            "thread": true, "main": true, "native_id": true, "pool": [2, 4, 6], "fork": true,
            "asyncio": "slept",
        })
    );
}

/// A call that kills its worker (a reused one) ran: it fails, and is not run again in a new
/// worker (its effects would happen twice).
#[tokio::test]
async fn a_call_that_kills_its_worker_runs_once() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    worker_of(&ctx).await; // the worker is idle, kept for reuse
    let err = run(
        "open('runs', 'a').write('x')\nimport signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(5)",
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed, "{err:?}");
    let runs = std::fs::read_to_string(dir.path().join("runs")).unwrap();
    assert_eq!(runs, "x", "the call ran {} times", runs.len());
}

/// A worker kept idle and killed from outside meanwhile: the next call cannot be sent to it, so
/// it is sent to a new worker and runs.
#[tokio::test]
async fn an_idle_worker_killed_from_outside_is_replaced() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let first = worker_of(&ctx).await;
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while alive(&first.to_string()) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        run("return 'served'", &ctx).await.unwrap(),
        Value::from("served")
    );
    assert_ne!(worker_of(&ctx).await, first);
}

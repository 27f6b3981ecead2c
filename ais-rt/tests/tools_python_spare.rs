//! The warm worker forks the next call's child (its "spare") as soon as a call has its request,
//! so the spare waits while that call runs, as a process of the same user. Tried as a hostile
//! call would: it finds the spare (its worker's other child) and stops it, interrupts it, kills
//! it, lowers its resource limits, nice value and CPU affinity; the next call must run as if
//! nothing happened, in the same worker, with the worker's own attributes. A call that does the
//! same to its worker retires it. A call cannot plant files in a later call's `TMPDIR`.

use ais_core::Value;
use ais_rt::{PythonTool, Tool, ToolArgs, ToolContext};

use crate::common;
use common::have_python;

async fn run(body: &str, ctx: &ToolContext) -> Value {
    PythonTool::new("spare", body, Some(vec![]))
        .call(ToolArgs::default(), ctx)
        .await
        .unwrap_or_else(|e| panic!("{body}\n{e:?}"))
}

/// What a call sees of its own process that another process could have changed.
const PROBE: &str = r#"import resource
return {
    "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
    "cpus": sorted(os.sched_getaffinity(0)),
    "policy": os.sched_getscheduler(0),
    "worker": os.getppid(),
}
"#;

/// The attack: `TARGET` is "spare" or "worker", `ACTION` what is done to it.
const ATTACK: &str = r#"import resource, signal, time
me, worker = os.getpid(), os.getppid()

def spare():
    # Calls back to back, the worker forks it just after handing this call its request (else
    # once the call has ended: then there is none to find, and the test asks again).
    deadline = time.time() + 2
    while time.time() < deadline:
        with open("/proc/%d/task/%d/children" % (worker, worker)) as f:
            kids = [int(k) for k in f.read().split() if int(k) != me]
        if kids:
            return kids[0]
        time.sleep(0.005)
    return None

target = spare() if "TARGET" == "spare" else worker
if target is None:
    return None
action = "ACTION"
if action == "stop":
    os.kill(target, signal.SIGSTOP)
elif action == "interrupt":
    os.kill(target, signal.SIGINT)
elif action == "kill":
    os.kill(target, signal.SIGKILL)
elif action == "attributes":
    resource.prlimit(target, resource.RLIMIT_NOFILE, (64, 64))
    os.setpriority(os.PRIO_PROCESS, target, 10)
    os.sched_setaffinity(target, {min(os.sched_getaffinity(target))})
    os.sched_setscheduler(target, os.SCHED_IDLE, os.sched_param(0))
return target
"#;

fn attack(target: &str, action: &str) -> String {
    ATTACK.replace("TARGET", target).replace("ACTION", action)
}

fn worker(probe: &Value) -> serde_json::Value {
    probe.to_json()["worker"].clone()
}

fn without_worker(probe: &Value) -> serde_json::Value {
    let mut seen = probe.to_json();
    seen.as_object_mut().unwrap().remove("worker");
    seen
}

#[tokio::test]
async fn a_call_cannot_reach_the_child_that_waits_for_the_next_call() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let before = run(PROBE, &ctx).await;
    for action in ["stop", "interrupt", "kill", "attributes"] {
        let mut hit = Value::Null;
        for _ in 0..5 {
            hit = run(&attack("spare", action), &ctx).await;
            if hit != Value::Null {
                break;
            }
        }
        assert_ne!(
            hit,
            Value::Null,
            "{action}: no spare waited beside the call, 5 times"
        );
        assert_ne!(
            hit.to_json(),
            before.to_json()["worker"],
            "{action}: the attack hit the worker, not the spare"
        );
        // The next call: served (not stopped, not interrupted), by the same worker, in a
        // process with the worker's attributes, not the ones the attack gave the spare.
        let after = run(PROBE, &ctx).await;
        assert_eq!(
            worker(&after),
            worker(&before),
            "{action}: the worker was retired"
        );
        assert_eq!(
            without_worker(&after),
            without_worker(&before),
            "{action}: the next call runs in the child the attack changed"
        );
    }
}

#[tokio::test]
async fn a_call_that_changes_its_workers_attributes_retires_it() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    let before = run(PROBE, &ctx).await;
    let hit = run(&attack("worker", "attributes"), &ctx).await;
    assert_eq!(hit.to_json(), before.to_json()["worker"]);
    let after = run(PROBE, &ctx).await;
    assert_ne!(
        worker(&after),
        worker(&before),
        "the changed worker was kept"
    );
    assert_eq!(without_worker(&after), without_worker(&before));
}

#[tokio::test]
async fn a_call_cannot_plant_files_in_a_later_calls_tmpdir() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path());
    // It leaves a file in its own TMPDIR (so the next call gets another directory) and makes
    // the directories the worker would name next, each with a file in it.
    let planter = r#"tmp = os.environ["TMPDIR"]
open(os.path.join(tmp, "left"), "w").write("x")
base, name = os.path.split(tmp)
stem, serial = name.rsplit("-", 1)
planted = []
for n in range(int(serial) + 1, int(serial) + 20):
    d = os.path.join(base, "%s-%d" % (stem, n))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "planted"), "w").write("x")
    planted.append(d)
return planted
"#;
    let planted = run(planter, &ctx).await.to_json();
    assert_eq!(planted.as_array().map(Vec::len), Some(19));
    let seen = run(
        r#"tmp = os.environ["TMPDIR"]
return {"tmp": tmp, "entries": os.listdir(tmp), "tempfile": tempfile.gettempdir() == tmp}"#,
        &ctx,
    )
    .await
    .to_json();
    assert_eq!(seen["entries"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["tempfile"], serde_json::json!(true), "{seen}");
    assert!(
        !planted.as_array().unwrap().contains(&seen["tmp"]),
        "the next call got a planted TMPDIR: {seen}"
    );
}

//! The process groups of the tool subprocesses alive in this process, so that a signal handler
//! can kill them all before the process exits.

use std::collections::HashSet;
use std::sync::Mutex;

static GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn with_groups<T>(f: impl FnOnce(&mut HashSet<i32>) -> T) -> T {
    let mut guard = GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(guard.get_or_insert_with(HashSet::new))
}

/// Records the live process group `pgid` (a tool subprocess started).
pub(crate) fn register_group(pgid: i32) {
    with_groups(|g| g.insert(pgid));
}

/// Forgets the process group `pgid` (it was killed, or its process ended and was reaped).
pub(crate) fn unregister_group(pgid: i32) {
    with_groups(|g| g.remove(&pgid));
}

/// Sends `SIGKILL` to every tool process group still alive in this process (each is a guard,
/// the tool it started and everything the tool started). Safe to call from any thread; a
/// signal handler thread calls it before the process exits.
pub(crate) fn kill_all_tool_groups() {
    let groups: Vec<i32> = with_groups(|g| g.drain().collect());
    for pgid in groups {
        if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

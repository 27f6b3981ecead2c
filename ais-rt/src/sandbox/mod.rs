//! The sandbox every tool subprocess runs in, and the hardening of the runtime's own process.
//!
//! # What a tool subprocess may do
//!
//! Every subprocess a tool starts (a `command` tool, a Python `body` and its worker,
//! `run_command`, and whatever those start in turn) is confined by the kernel, not by
//! convention:
//!
//! - **Writes** ([Landlock](https://docs.kernel.org/userspace-api/landlock.html)): it can create,
//!   write, truncate, rename, link and remove files only beneath the call's writable roots (the
//!   output root, and a SPAWN sibling's scratch directory) and beneath its own private
//!   temporary directory, which it gets as `TMPDIR` and which is removed after the call. It can
//!   also write to `/dev/null`, `/dev/zero` and `/dev/full`. Reads and execution stay allowed.
//!   A write elsewhere — an absolute path, a `../` path, a path through a symlink inside the
//!   root that points out of it — fails in the kernel with `EACCES`, so the tool's own failure
//!   becomes the call's error value. The rules also hold for setuid programs: the tool runs
//!   with `no_new_privs`.
//! - **Its life**: it is the leader of its own process group, whose first process is a small
//!   *guard* (the process `ais` forked, which never executes another program): the guard starts
//!   the tool, reports its exit status as its own, and when `ais` dies — however it dies,
//!   `SIGKILL` included — the kernel tells the guard (`PR_SET_PDEATHSIG`), and the guard kills
//!   the whole group. [`kill_all_tool_groups`] (called by [`exit_on_signals`]'s handler on
//!   `SIGINT` / `SIGTERM`) kills every group still alive.
//!
//! - **The runtime's own state** (`.ais/` under the output root: the journal, resume handles,
//!   produced scripts) is read-only to it, and the directory of the journal's sealing key is
//!   hidden from it, by a mount namespace of its own (`shield.rs`): Landlock cannot take a
//!   subdirectory of a granted root back.
//!
//! Landlock is checked once per process ([`landlock_abi`]); on a kernel without it, tools run
//! unconfined, the run records a deviation ([`unconfined_deviation`]) and `ais` says so on
//! standard error.
//!
//! # The runtime's own process
//!
//! [`harden_process`] makes the process non-dumpable (`PR_SET_DUMPABLE 0`), so a process of the
//! same user — a tool, or anything it starts — cannot read its memory or its environment
//! (`/proc/<pid>/environ`, `/proc/<pid>/mem`), where the API keys live. The guard process is a
//! fork of the runtime that never executes a program, so it stays non-dumpable too; the tool
//! itself gets only the scrubbed environment (see [`crate::tools`]). An `execve` makes a
//! process dumpable again, so the warm Python worker (a long-lived program that runs every
//! later call of its run) sets the flag on itself first thing (`driver.py`), and the calls it
//! forks inherit it: a call cannot ptrace its worker or read its memory.

mod child;
mod groups;
mod shield;

pub(crate) use child::enter_child;
pub(crate) use groups::kill_all_tool_groups;
pub(crate) use groups::{register_group, unregister_group};
pub use shield::shield_available;
pub(crate) use shield::unshielded_deviation;

use landlock::{
    ABI, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The Landlock ABI version the kernel offers (0 when it offers none), asked once per process.
pub(crate) fn landlock_abi() -> i32 {
    static ABI_VERSION: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *ABI_VERSION.get_or_init(|| {
        // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) returns the ABI.
        // SAFETY: a query with no attribute pointer; it reads and writes no memory of ours.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        i32::try_from(v).unwrap_or(0).max(0)
    })
}

/// The crate's name for the ABI the kernel offers (the newest the crate knows when the kernel
/// is newer still).
fn abi() -> ABI {
    match landlock_abi() {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// Whether tool subprocesses are confined by Landlock on this kernel.
pub fn confinement_available() -> bool {
    landlock_abi() > 0
}

/// The deviation a run records when this kernel cannot confine its tools, or cannot keep
/// `.ais/` from them (`unshielded_deviation`); `None` when it can do both. The first call also
/// says so on standard error, once per process.
pub fn unconfined_deviation() -> Option<ais_core::Deviation> {
    if confinement_available() {
        return unshielded_deviation();
    }
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        eprintln!(
            "ais: WARNING: this kernel has no Landlock (checked with landlock_create_ruleset); \
             tool subprocesses run UNCONFINED and can write anywhere this user can. Run \
             untrusted programs in a container, or on a kernel with Landlock enabled \
             (CONFIG_SECURITY_LANDLOCK, `lsm=landlock,...`)."
        );
    });
    Some(ais_core::Deviation {
        check: None,
        subject: "tool subprocesses".to_owned(),
        intended: "writes of every tool subprocess confined by the kernel to the output root \
                   and its scratch and temporary directories"
            .to_owned(),
        substituted: "unconfined: this kernel has no Landlock".to_owned(),
    })
}

/// The name of a call's private temporary directory starts with this and the pid of the `ais`
/// that made it: `ais-tool-<pid>-<random>`.
const TMP_PREFIX: &str = "ais-tool-";

/// Removes from `dir` the private temporary directories of `ais` processes that no longer
/// exist: a process killed with SIGKILL cannot remove its own, and each of its calls left one.
/// Only directories of this user named by [`TMP_PREFIX`] and a pid are touched, never through
/// a symbolic link; one whose pid is alive (the process, or another one that reused its pid)
/// is left. Runs once per process, before its first call's directory is made.
fn sweep_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TMP_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        // `symlink_metadata`: a link named like a directory of ours is not followed.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.is_dir() && std::os::unix::fs::MetadataExt::uid(&meta) == me && !process_alive(pid)
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether process `pid` exists (on this host): the leases of the journal and the sweep of
/// stale temporary directories ask it.
pub(crate) fn process_alive(pid: u32) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(p) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// The most paths a read fence grants ([`read_fence`]); a key beside more is left readable.
const MAX_FENCE: usize = 16_384;

/// The paths a tool may read beneath when the sealing key's directory `key` must stay unread
/// and no mount namespace can cover it: Landlock only grants, so reads are handled and granted
/// beneath every entry of every directory on the way from `/` to `key` — but the next one on
/// the way, and `key` itself. Everything else reads as before (a file made later directly in
/// one of those directories excepted); the writable roots grant reads beneath themselves.
/// `None` (the key stays readable) when a writable root holds the key, when a directory on
/// the way cannot be listed, or when there are more than [`MAX_FENCE`] entries.
fn read_fence(key: &Path, roots: &[PathBuf]) -> Option<Vec<PathBuf>> {
    let key = std::fs::canonicalize(key).ok()?;
    let beneath_a_root = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|r| key.starts_with(&r));
    if beneath_a_root {
        return None;
    }
    let mut grant = Vec::new();
    let mut dir = PathBuf::from("/");
    for next in key.components().skip(1) {
        for entry in std::fs::read_dir(&dir).ok()? {
            let entry = entry.ok()?;
            if entry.file_name() == next.as_os_str() {
                continue;
            }
            // A link into the key's directory would grant it: its target is not granted.
            let path = entry.path();
            if std::fs::canonicalize(&path)
                .is_ok_and(|t| t.starts_with(&key) || key.starts_with(&t))
            {
                continue;
            }
            grant.push(path);
            if grant.len() > MAX_FENCE {
                return None;
            }
        }
        dir.push(next);
    }
    Some(grant)
}

/// The write rights a ruleset handles: every write right of the ABI except `IoctlDev` (an
/// ioctl on a device is not a file write, and terminals need it).
fn write_rights(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_write(abi) & !AccessFs::IoctlDev
}

/// One call's confinement: the Landlock ruleset (built in the parent, enforced in the child by
/// [`enter_child`]) and the private temporary directory, removed when this is dropped.
#[derive(Debug)]
pub(crate) struct Confinement {
    ruleset: Option<OwnedFd>,
    tmp: tempfile::TempDir,
    shield: Option<std::sync::Arc<shield::Shield>>,
}

impl Confinement {
    /// A confinement allowing writes beneath each of `roots` that exists (and beneath a fresh
    /// private temporary directory). Without Landlock on this kernel, only the temporary
    /// directory is made.
    pub(crate) fn new(roots: &[PathBuf]) -> std::io::Result<Confinement> {
        let base = std::env::temp_dir();
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep_stale(&base));
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{TMP_PREFIX}{}-", std::process::id()))
            .tempdir_in(&base)?;
        if !confinement_available() {
            // No shield either: its namespace needs Landlock to keep other tools out of the
            // moment it maps its ids ([`shield`]), and an unconfined tool can write anywhere.
            return Ok(Confinement {
                ruleset: None,
                tmp,
                shield: None,
            });
        }
        let hidden: Vec<PathBuf> = crate::journal::seal_key_dir().into_iter().collect();
        let shield = shield::Shield::new(roots, &hidden)?.map(std::sync::Arc::new);
        // Without the shield's namespace, Landlock keeps the sealing key unread instead.
        let fence = match (&shield, hidden.first()) {
            (None, Some(key)) => {
                let fence = read_fence(key, roots);
                if fence.is_none() {
                    static WARNED: std::sync::Once = std::sync::Once::new();
                    WARNED.call_once(|| {
                        eprintln!(
                            "ais: WARNING: tool subprocesses can read the journal's sealing key \
                             in {}: it lies beneath a directory they may write, or beside more \
                             files than ais fences; set AIS_STATE_DIR to a directory outside \
                             the output root",
                            key.display()
                        );
                    });
                }
                fence
            }
            _ => None,
        };
        let abi = abi();
        let mut rights = write_rights(abi);
        if fence.is_some() {
            rights |= AccessFs::ReadFile;
        }
        let landlock = |e: landlock::RulesetError| std::io::Error::other(e.to_string());
        let mut ruleset = Ruleset::default()
            .handle_access(rights)
            .map_err(landlock)?
            .create()
            .map_err(landlock)?;
        let mut dirs: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
        dirs.push(tmp.path());
        for dir in dirs {
            let Ok(fd) = PathFd::new(dir) else {
                continue;
            };
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, rights))
                .map_err(landlock)?;
        }
        let file_rights = rights & AccessFs::from_file(abi);
        for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
            if let Ok(fd) = PathFd::new(dev) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, file_rights))
                    .map_err(landlock)?;
            }
        }
        for path in fence.iter().flatten() {
            // A rule on a file takes only file rights; `ReadFile` is one.
            if let Ok(fd) = PathFd::new(path) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, AccessFs::ReadFile))
                    .map_err(landlock)?;
            }
        }
        Ok(Confinement {
            ruleset: ruleset.into(),
            tmp,
            shield,
        })
    }

    /// The private temporary directory (the child's `TMPDIR`).
    pub(crate) fn tmp_dir(&self) -> &Path {
        self.tmp.path()
    }

    /// The mount namespace for [`enter_child`] (`None`: the kernel has none for us).
    pub(crate) fn shield(&self) -> Option<std::sync::Arc<shield::Shield>> {
        self.shield.clone()
    }

    /// The raw ruleset descriptor for [`enter_child`] (`-1`: none to enforce).
    pub(crate) fn ruleset_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.ruleset.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }
}

/// Hardens the runtime's own process: non-dumpable, so no process of the same user can read
/// its memory or environment through `/proc` (call it first thing in `main`). Errors are
/// ignored: a kernel that refuses is no reason not to run.
pub fn harden_process() {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) takes no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0);
    }
}

/// Installs `SIGINT` and `SIGTERM` handling for a command-line program: on either signal,
/// every live tool process group is killed (`kill_all_tool_groups`) and the process exits
/// with the conventional code (130 for `SIGINT`, 143 for `SIGTERM`). Handling runs on a thread
/// of its own, so it works while the main thread is blocked in a run. An error (the thread or
/// the handler could not be set up) is returned for the caller to report.
pub fn exit_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("ais-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                kill_all_tool_groups();
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_directories_of_dead_processes_are_swept_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("keep"), "x").unwrap();
        // A pid past pid_max never ran; this process is alive.
        let dead = dir.path().join(format!("{TMP_PREFIX}4194999-abc"));
        let mine = dir
            .path()
            .join(format!("{TMP_PREFIX}{}-def", std::process::id()));
        let link = dir.path().join(format!("{TMP_PREFIX}4194998-ghi"));
        let file = dir.path().join(format!("{TMP_PREFIX}4194997-jkl"));
        let other = dir.path().join("ais-tool-notapid");
        std::fs::create_dir_all(dead.join("sub")).unwrap();
        std::fs::write(dead.join("sub/data"), "left by a killed run").unwrap();
        std::fs::create_dir(&mine).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
        std::fs::write(&file, "not a directory").unwrap();
        std::fs::create_dir(&other).unwrap();
        sweep_stale(dir.path());
        assert!(!dead.exists(), "a dead process's directory is removed");
        assert!(mine.exists(), "a live process's directory stays");
        assert!(link.symlink_metadata().is_ok(), "a link is not touched");
        assert!(
            elsewhere.path().join("keep").exists(),
            "nor what it points at"
        );
        assert!(file.exists() && other.exists(), "nor anything else");
    }
}

//! What runs in the child `ais` forks for a tool, before the tool's program is executed: the
//! guard that ties the tool's life to `ais`, and the Landlock restriction.
//!
//! This code runs between `fork` and `exec` of a multi-threaded process, so it makes only
//! async-signal-safe calls (raw system calls, no allocation, no locks).

use std::io;

/// The signals the guard waits for: its tool ended, or the group must stop (`SIGTERM` is also
/// the parent-death signal: `ais` died).
const GUARD_SIGNALS: [libc::c_int; 4] = [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Enters the sandbox in the child `ais` forked (the leader of a new process group; call it from
/// `pre_exec`). The child becomes the *guard*: it forks the process that goes on to execute the
/// tool — returning `Ok` there, after entering `shield`'s mount namespace and enforcing the
/// Landlock ruleset `ruleset` (a descriptor; `-1` for none) — and itself never returns: it waits for the tool and exits with the tool's
/// status, or, when `ais` (`parent`) dies, kills the whole group.
///
/// # Safety
///
/// Only in a child freshly forked by `Command::spawn`, before `exec` (a `pre_exec` hook).
pub(crate) unsafe fn enter_child(
    ruleset: i32,
    parent: libc::pid_t,
    shield: Option<&super::shield::Shield>,
) -> io::Result<()> {
    // SAFETY: raw system calls on values of our own; see the function's contract.
    unsafe {
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGTERM as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            // `ais` died before the parent-death signal was armed.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in GUARD_SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
            return Err(io::Error::last_os_error());
        }
        let guard = libc::getpid();
        let tool = libc::fork();
        if tool < 0 {
            return Err(io::Error::last_os_error());
        }
        if tool == 0 {
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != guard {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(shield) = shield {
                super::shield::enter(shield)?;
            }
            return confine(ruleset);
        }
        guard_loop(tool, &set)
    }
}

/// Enforces the Landlock ruleset on the calling process (with `no_new_privs`, which Landlock
/// requires and which keeps a setuid program from shedding the rules).
unsafe fn confine(ruleset: i32) -> io::Result<()> {
    if ruleset < 0 {
        return Ok(());
    }
    // SAFETY: prctl and landlock_restrict_self take no pointers.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The guard: holds no descriptor, waits for its tool and mirrors its exit; on `SIGTERM`
/// (`ais` died, or someone stops the group), `SIGINT` or `SIGHUP`, kills its process group.
unsafe fn guard_loop(tool: libc::pid_t, set: &libc::sigset_t) -> ! {
    // SAFETY: raw system calls; the guard runs no Rust code that allocates.
    unsafe {
        // Hold no pipe: the tool's output ends when the tool (and what it started) closes it.
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..1024 {
                libc::close(fd);
            }
        }
        loop {
            let sig = libc::sigwaitinfo(set, std::ptr::null_mut());
            if sig == libc::SIGCHLD {
                let mut status = 0;
                if libc::waitpid(tool, &mut status, libc::WNOHANG) == tool {
                    mirror(status);
                }
                continue;
            }
            if sig < 0 {
                continue;
            }
            libc::kill(0, libc::SIGKILL);
            libc::_exit(137);
        }
    }
}

/// Ends the guard the way its tool ended: the same exit status, or the same signal.
unsafe fn mirror(status: libc::c_int) -> ! {
    // SAFETY: raw system calls on our own process.
    unsafe {
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let sig = if libc::WIFSIGNALED(status) {
            libc::WTERMSIG(status)
        } else {
            libc::SIGKILL
        };
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
}

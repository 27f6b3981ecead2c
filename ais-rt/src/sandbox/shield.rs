//! The runtime's own state, out of a tool's reach: a mount namespace in which the output root's
//! `.ais/` (the journal, resume handles, produced scripts) is read-only and the directory of the
//! journal's sealing key is hidden.
//!
//! Landlock only grants: a rule on the output root grants the whole tree beneath it, `.ais/`
//! included, and no rule can take a subdirectory back. So before it enforces Landlock, the
//! tool process enters a user namespace of its own (its uid and gid mapped to themselves: files
//! keep their owners) and a mount namespace, where
//!
//! - every writable root that lies beneath `.ais/` (a SPAWN sibling's scratch or staging
//!   directory) is bound onto itself, so it stays writable;
//! - `<root>/.ais` is bound onto itself recursively and that bind made read-only: a write, a
//!   create, a rename or a removal beneath it fails with `EROFS`, and the directory itself cannot
//!   be renamed or removed (it is a mount point: `EBUSY`);
//! - the key directory ([`crate::journal::seal_key_dir`]) is covered by an empty `tmpfs`, so a
//!   tool cannot read the key a journal row is sealed with.
//!
//! The namespace is the tool's alone: `ais` itself sees and writes `.ais/` as before. A kernel
//! that refuses unprivileged user namespaces (a container's seccomp profile, a sysctl) or grants
//! them without capabilities (Ubuntu's AppArmor restriction) is detected once per process
//! ([`shield_available`]); there tools run with `.ais/` writable, the run records a deviation
//! ([`unshielded_deviation`]) and `ais` says so on standard error. What is left there is the
//! seal: a resume refuses a journal row that does not match it — and Landlock keeps the key
//! unread instead of the tmpfs (`read_fence` in the sandbox module), so a tool cannot seal its
//! own rewrite.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Whether this kernel lets this process give a tool a user and mount namespace of its own:
/// asked once per process, in a forked child (a multi-threaded process cannot unshare) that
/// takes the same steps as `enter` up to its first mount — where unprivileged user namespaces
/// are refused (`unshare` fails), or granted without capabilities (Ubuntu's AppArmor
/// restriction: the mount fails), the answer is no.
pub fn shield_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let (uid_map, gid_map) = own_maps();
        // SAFETY: the child makes only async-signal-safe system calls on buffers made before
        // the fork, and `_exit`s.
        unsafe {
            let pid = libc::fork();
            if pid < 0 {
                return false;
            }
            if pid == 0 {
                let ok = unshare_mapped(&uid_map, &gid_map).is_ok() && private_mounts().is_ok();
                libc::_exit(if ok { 0 } else { 1 });
            }
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0 {
                if *libc::__errno_location() != libc::EINTR {
                    return false;
                }
            }
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    })
}

/// The `uid_map` and `gid_map` lines that map this process's effective ids onto themselves.
fn own_maps() -> (CString, CString) {
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    (
        CString::new(format!("{uid} {uid} 1\n")).expect("digits"),
        CString::new(format!("{gid} {gid} 1\n")).expect("digits"),
    )
}

/// The deviation a run records when this kernel cannot keep `.ais/` from its tools (`None`
/// when it can); the first call also says so on standard error.
pub(crate) fn unshielded_deviation() -> Option<ais_core::Deviation> {
    if !super::confinement_available() || shield_available() {
        // Without Landlock the run already records that its tools are unconfined.
        return None;
    }
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        eprintln!(
            "ais: WARNING: this kernel gives `ais` no user namespace for its tools (refused, or \
             granted without capabilities), so tool subprocesses can write the output root's \
             `.ais/` (the journal, resume handles); a resume still refuses a journal row or \
             handle that does not match its seal, and Landlock keeps the sealing key from the \
             tools. Allow user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, \
             `user.max_user_namespaces` above 0, or \
             `kernel.apparmor_restrict_unprivileged_userns=0`) to keep `.ais/` read-only to \
             tools."
        );
    });
    Some(ais_core::Deviation {
        check: None,
        subject: "tool subprocesses".to_owned(),
        intended: "the output root's `.ais/` read-only to every tool subprocess".to_owned(),
        substituted: "`.ais/` writable, a rewrite refused by the seal at resume (the key kept \
                      unread by Landlock): this kernel gives no user namespace"
            .to_owned(),
    })
}

/// A mount namespace to enter, prepared in the parent (the child allocates nothing).
#[derive(Debug)]
pub(crate) struct Shield {
    uid_map: CString,
    gid_map: CString,
    /// Writable roots beneath a protected directory, bound onto themselves first.
    keep: Vec<CString>,
    /// Directories made read-only, with the flags their mount has (a remount must keep them).
    protect: Vec<(CString, libc::c_ulong)>,
    /// Directories covered by an empty tmpfs.
    hide: Vec<CString>,
}

fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} holds a NUL byte", p.display()),
        )
    })
}

/// The flags of the mount `dir` is on that a bind remount must repeat (the kernel locks them).
fn mount_flags(dir: &Path) -> io::Result<libc::c_ulong> {
    let st = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    use rustix::fs::StatVfsMountFlags as F;
    let f = st.f_flag;
    let mut flags = 0;
    for (have, ms) in [
        (F::NOSUID, libc::MS_NOSUID),
        (F::NODEV, libc::MS_NODEV),
        (F::NOEXEC, libc::MS_NOEXEC),
        (F::NOATIME, libc::MS_NOATIME),
        (F::NODIRATIME, libc::MS_NODIRATIME),
        (F::RELATIME, libc::MS_RELATIME),
    ] {
        if f.contains(have) {
            flags |= ms;
        }
    }
    Ok(flags)
}

/// The runtime's state directory under `root`, created when missing; refused when it is a
/// symbolic link or not a directory (a tool may have planted one).
pub(crate) fn state_dir(root: &Path) -> io::Result<PathBuf> {
    let dir = root.join(".ais");
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_dir() => Ok(dir),
        Ok(_) => Err(io::Error::other(format!(
            "{} is not a directory (a symbolic link, or a file); ais keeps its state there — \
             remove it",
            dir.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::create_dir(&dir) {
            Ok(()) => Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => state_dir(root),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

impl Shield {
    /// The namespace for a tool writing beneath `roots` (the first is the output root): its
    /// `.ais/` read-only, and `hidden` (the key directory, when it exists) covered. `None`
    /// when the kernel has no user namespaces for us.
    pub(crate) fn new(roots: &[PathBuf], hidden: &[PathBuf]) -> io::Result<Option<Shield>> {
        if !shield_available() {
            return Ok(None);
        }
        let mut protect = Vec::new();
        for (i, root) in roots.iter().enumerate() {
            if !root.is_dir() {
                continue;
            }
            let dir = if i == 0 {
                state_dir(root)?
            } else {
                let dir = root.join(".ais");
                if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                    continue;
                }
                dir
            };
            let dir = std::fs::canonicalize(&dir)?;
            if !protect.contains(&dir) {
                protect.push(dir);
            }
        }
        let mut keep = Vec::new();
        for root in roots {
            let Ok(root) = std::fs::canonicalize(root) else {
                continue;
            };
            if protect.iter().any(|p| root.starts_with(p)) {
                keep.push(c_path(&root)?);
            }
        }
        let protect = protect
            .iter()
            .map(|d| Ok((c_path(d)?, mount_flags(d)?)))
            .collect::<io::Result<Vec<_>>>()?;
        let hide = hidden
            .iter()
            .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()))
            .map(|d| c_path(d))
            .collect::<io::Result<Vec<_>>>()?;
        let (uid_map, gid_map) = own_maps();
        Ok(Some(Shield {
            uid_map,
            gid_map,
            keep,
            protect,
            hide,
        }))
    }
}

/// Writes `text` to the file `path` (async-signal-safe).
unsafe fn write_file(path: &CStr, text: &CStr) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; open, write and close take our own buffers.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let bytes = text.to_bytes();
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

/// `mount(2)` (async-signal-safe).
unsafe fn mount(
    source: *const libc::c_char,
    target: &CStr,
    fstype: *const libc::c_char,
    flags: libc::c_ulong,
    data: *const libc::c_char,
) -> io::Result<()> {
    // SAFETY: every pointer is NUL-terminated or null.
    if unsafe { libc::mount(source, target.as_ptr(), fstype, flags, data.cast()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Enters a user namespace of its own and a mount namespace, its effective uid and gid mapped
/// onto themselves (async-signal-safe).
///
/// `ais` is not dumpable ([`super::harden_process`]), and a fork inherits that: the kernel then
/// gives the process's `/proc/self/{setgroups,uid_map,gid_map}` to root, and an unprivileged
/// process cannot open them to map its ids. So the process is made dumpable for the three
/// writes, and not dumpable again before anything else. A process of the same user could read
/// its memory (a copy of `ais`'s, the API keys with it) during those three writes; a tool cannot:
/// every tool runs in a Landlock domain of its own, and Landlock forbids a sandboxed process to
/// read or trace a process outside its domain — which is why [`Shield::new`] is only asked for
/// where Landlock confines the tools.
///
/// # Safety
///
/// Only in a freshly forked child, before `exec`.
unsafe fn unshare_mapped(uid_map: &CStr, gid_map: &CStr) -> io::Result<()> {
    // SAFETY: raw system calls on buffers prepared before the fork; see the contract.
    unsafe {
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
            return Err(io::Error::last_os_error());
        }
        let hidden = libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0;
        if hidden && libc::prctl(libc::PR_SET_DUMPABLE, 1 as libc::c_ulong, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        let mapped = write_file(c"/proc/self/setgroups", c"deny")
            .and_then(|()| write_file(c"/proc/self/uid_map", uid_map))
            .and_then(|()| write_file(c"/proc/self/gid_map", gid_map));
        if hidden && libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        mapped
    }
}

/// Makes every mount of the new mount namespace private, so no mount made in it reaches the
/// mount namespace `ais` runs in (async-signal-safe).
unsafe fn private_mounts() -> io::Result<()> {
    let none = std::ptr::null();
    // SAFETY: `c"/"` is NUL-terminated, the rest null.
    unsafe { mount(none, c"/", none, libc::MS_REC | libc::MS_PRIVATE, none) }
}

/// Enters `shield` in the tool's process, before it is confined by Landlock (which forbids
/// mounts). Only async-signal-safe calls: this runs between `fork` and `exec`.
///
/// # Safety
///
/// Only in a freshly forked child, before `exec`.
pub(crate) unsafe fn enter(shield: &Shield) -> io::Result<()> {
    // SAFETY: raw system calls on buffers prepared by the parent; see the contract.
    unsafe {
        unshare_mapped(&shield.uid_map, &shield.gid_map)?;
        private_mounts()?;
        let none = std::ptr::null();
        for dir in &shield.keep {
            mount(dir.as_ptr(), dir, none, libc::MS_BIND, none)?;
        }
        for (dir, flags) in &shield.protect {
            mount(dir.as_ptr(), dir, none, libc::MS_BIND | libc::MS_REC, none)?;
            mount(
                none,
                dir,
                none,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags,
                none,
            )?;
        }
        for dir in &shield.hide {
            mount(
                c"tmpfs".as_ptr(),
                dir,
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"size=4k,mode=0500".as_ptr(),
            )?;
        }
    }
    Ok(())
}

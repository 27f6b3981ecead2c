//! One run at a time in an output root: `ais run` and `ais resume` hold an exclusive lock on
//! `<out>/.ais/out.lock` (`flock`, released by the kernel when the process ends, however it
//! ends) while they run, so two runs never write same-named artifacts into one root — the
//! second is refused, naming the holder, and told to use its own `--out`.

use crate::cli::{CliError, shown};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The held lock (released when dropped, or when the process ends).
pub(super) struct OutLock(#[allow(dead_code)] std::fs::File);

/// Takes the output root `out`'s lock, or says which process holds it.
pub(super) fn take(out: &Path) -> Result<OutLock, CliError> {
    let state = out.join(".ais");
    let failed = |e: std::io::Error| {
        CliError::new(
            format!("cannot lock the output root `{}`: {e}", shown(out)),
            "check that the output root is a writable directory (and `.ais` in it no link)",
        )
    };
    std::fs::create_dir_all(out).map_err(failed)?;
    match std::fs::symlink_metadata(&state) {
        Ok(m) if !m.is_dir() => {
            return Err(failed(std::io::Error::other(format!(
                "{} is a symbolic link or a file",
                shown(&state)
            ))));
        }
        Ok(_) => {}
        Err(_) => std::fs::create_dir(&state).or_else(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Ok(())
            } else {
                Err(failed(e))
            }
        })?,
    }
    let path = state.join("out.lock");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(failed)?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let holder = std::fs::read_to_string(&path).unwrap_or_default();
        return Err(CliError::new(
            format!(
                "another run is writing into the output root `{}` ({})",
                shown(out),
                if holder.trim().is_empty() {
                    "a live process".to_owned()
                } else {
                    format!("pid {}", holder.trim())
                }
            ),
            "give this run its own output root with `--out DIR`, or wait for the other to end",
        ));
    }
    use std::io::{Seek, Write};
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(OutLock(file))
}

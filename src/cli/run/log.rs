//! `RUST_LOG`-driven `tracing` output to standard error.

use super::super::Output;
use ais::render;
use std::io::{self, Write};

/// With `RUST_LOG` set (`tracing_subscriber`'s target syntax: `info`, `ais::trace=info`,
/// `warn,ais_rt=debug`), `tracing` events — one per step under `ais::trace`, provider retries —
/// go to standard error as text lines. Off when it is unset or empty; a value that does not
/// parse is a note, and logging stays off.
pub(super) fn install_tracing(output: &mut Output) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{Layer, filter::Targets};
    let Some(spec) = std::env::var("RUST_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty())
    else {
        return;
    };
    let targets: Targets = match spec.parse() {
        Ok(t) => t,
        Err(e) => {
            let note = format!("RUST_LOG=`{spec}` does not parse ({e}), so logging stays off");
            let _ = writeln!(
                output.err,
                "{}",
                render::render_note(&note, output.color_err)
            );
            return;
        }
    };
    // The command holds the lock on `std::io::stderr`; tokio's threads log through their own
    // handle on the same file descriptor.
    let Some(stderr) = stderr_handle() else {
        return;
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::sync::Mutex::new(stderr))
        .with_ansi(output.color_err)
        .with_filter(targets);
    // Already installed (a second command in one process): keep the first.
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// Standard error as a file of its own (a duplicate descriptor).
#[cfg(unix)]
pub(super) fn stderr_handle() -> Option<std::fs::File> {
    use std::os::fd::AsFd;
    Some(std::fs::File::from(
        io::stderr().as_fd().try_clone_to_owned().ok()?,
    ))
}

/// No log output where standard error cannot be written without its lock.
#[cfg(not(unix))]
pub(super) fn stderr_handle() -> Option<std::fs::File> {
    None
}

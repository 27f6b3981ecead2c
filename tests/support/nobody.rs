//! Whether a test runs as root and can start a program as `nobody` (`setpriv`): what the tests
//! of an unprivileged user's `ais` need.

use std::process::{Command, Stdio};

/// Whether this process runs as root and `setpriv` is there.
pub fn can_drop_to_nobody() -> bool {
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
    });
    root && Command::new("setpriv")
        .arg("--help")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

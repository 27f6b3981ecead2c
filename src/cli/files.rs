//! Reading source files and writing them back atomically.

use super::{CliError, shown};
use ais::agir::Limits;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

/// The path that names standard input on the command line.
pub const STDIN: &str = "-";

/// The name standard input is shown by in diagnostics.
pub const STDIN_NAME: &str = "<stdin>";

/// True when `path` is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// A path as shown in diagnostics: `<stdin>` for `-`, else the path with its control
/// characters escaped.
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        STDIN_NAME.to_owned()
    } else {
        shown(path)
    }
}

/// Reads a command's input: standard input for `-`, else the file (see [`read_source`]).
pub fn read_input(path: &Path, limits: &Limits) -> Result<String, CliError> {
    if !is_stdin(path) {
        return read_source(path, limits);
    }
    let max = limits.max_bytes;
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| {
            CliError::new(
                format!("cannot read standard input: {e}"),
                "pipe the AG-IR text in, e.g. `cat plan.agir | ais check -`",
            )
        })?;
    if bytes.len() > max {
        return Err(CliError::new(
            format!("`{STDIN_NAME}` is larger than the {max} bytes ais reads"),
            "split the module into smaller programs joined by CALL",
        ));
    }
    decode(STDIN_NAME, bytes)
}

/// Reads a file as UTF-8 text through the one bounded reader ([`ais::files`]): only a
/// regular file (a directory, a FIFO, a socket or a device is refused without blocking), only
/// up to the reader's byte limit.
pub fn read_source(path: &Path, limits: &Limits) -> Result<String, CliError> {
    let name = shown(path);
    let max = limits.max_bytes;
    let bytes =
        read_bounded(path, u64::try_from(max).unwrap_or(u64::MAX)).map_err(|e| match e {
            Bounded::TooLarge => CliError::new(
                format!("`{name}` is larger than the {max} bytes ais reads"),
                "split the module into smaller programs joined by CALL",
            ),
            Bounded::Other(e) => e,
        })?;
    decode(&name, bytes)
}

/// Why [`read_bounded`] read nothing.
pub enum Bounded {
    /// The file is larger than the limit.
    TooLarge,
    /// Anything else, as the CLI says it.
    Other(CliError),
}

/// The bytes of the regular file `path`, at most `max` ([`ais::files::read_regular`]),
/// with every refusal worded for the command line.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Bounded> {
    use ais::files::ReadError;
    let name = shown(path);
    ais::files::read_regular(path, max).map_err(|e| match e {
        ReadError::TooLarge(_) => Bounded::TooLarge,
        ReadError::NotRegular("a directory") => Bounded::Other(CliError::new(
            format!("`{name}` is a directory, not an AG-IR file"),
            format!("name the .agir files inside it, e.g. `ais check {name}/*.agir`"),
        )),
        ReadError::NotRegular(what) => Bounded::Other(CliError::new(
            format!("`{name}` is {what}, not a file; ais reads regular files"),
            "save the stream to a file first, then name that file",
        )),
        ReadError::Io(e) => Bounded::Other(open_error(&name, &e)),
    })
}

/// The text of a file's bytes: UTF-8, with UTF-16 (by its byte-order mark) and other encodings
/// named in the error.
fn decode(name: &str, bytes: Vec<u8>) -> Result<String, CliError> {
    let iconv = if name == STDIN_NAME {
        "re-encode it: pipe it through `iconv -f UTF-16 -t UTF-8`".to_owned()
    } else {
        format!("re-encode it: `iconv -f UTF-16 -t UTF-8 {name} > converted.agir`")
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        let order = if bytes[0] == 0xFF { "LE" } else { "BE" };
        return Err(CliError::new(
            format!(
                "`{name}` is UTF-16{order} text (it starts with a UTF-16 byte-order mark); AG-IR files are UTF-8"
            ),
            iconv,
        ));
    }
    // Text with a zero byte beside most ASCII characters is UTF-16 without a mark.
    let probe = &bytes[..bytes.len().min(512)];
    let zeros = probe.iter().filter(|b| **b == 0).count();
    if probe.len() >= 4 && zeros * 3 >= probe.len() {
        return Err(CliError::new(
            format!(
                "`{name}` looks like UTF-16 text (every other byte is zero); AG-IR files are UTF-8"
            ),
            iconv,
        ));
    }
    if let Some(at) = bytes.iter().position(|b| *b == 0) {
        return Err(CliError::new(
            format!("`{name}` holds a NUL byte at offset {at}; it is not a text file"),
            "name the .agir text file; AG-IR files are UTF-8 text",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        CliError::new(
            format!("`{name}` is not UTF-8 text (invalid byte at offset {at})"),
            "AG-IR files are UTF-8; re-encode the file, e.g. `iconv -t UTF-8`",
        )
    })
}

fn open_error(name: &str, e: &io::Error) -> CliError {
    let help = match e.kind() {
        io::ErrorKind::NotFound => "check the path; `ls` the directory to see what is there",
        io::ErrorKind::PermissionDenied => "check the file's permissions (`ls -l`)",
        _ => "check that the path names a readable file",
    };
    CliError::new(format!("cannot read `{name}`: {e}"), help)
}

/// The marker in the names of ais's temporary files: `.<file>.ais-<pid>-<random>.tmp`.
const TMP_MARK: &str = ".ais-";

/// Replaces a file's contents atomically: writes a temporary file in the same directory,
/// flushes it to disk, gives it the original's permissions and owner, checks that the file
/// still holds `expected` (what the command read), and renames the temporary file over it.
///
/// Refused, with the file untouched: a symbolic link (writing through it could write outside
/// the directory the user named; the error names its target), anything but a regular file, a
/// read-only file or one the user could not write, a file with more than one hard link (the
/// rename would give this name a new file and leave the other links with the old text), a
/// file whose owner cannot be kept, and a file that changed since it was read (a concurrent
/// writer's change would be lost). Temporary files that a killed run left beside the file are
/// removed first.
pub fn write_atomically(path: &Path, contents: &str, expected: &str) -> Result<(), CliError> {
    let name = shown(path);
    let meta = fs::symlink_metadata(path).map_err(|e| open_error(&name, &e))?;
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path)
            .map(|t| format!("`{}`", t.display()))
            .unwrap_or_else(|_| "its target".to_owned());
        return Err(CliError::new(
            format!("`{name}` is a symbolic link; ais does not write through links"),
            format!("run the command on {target} itself"),
        ));
    }
    if !meta.is_file() {
        return Err(CliError::new(
            format!("`{name}` is not a regular file"),
            "name a .agir file",
        ));
    }
    refuse_unwritable(path, &name, &meta)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let write_error = |e: io::Error| {
        CliError::new(
            format!("cannot write `{name}`: {e}"),
            format!(
                "check that `{}` is writable and has free space; the original is unchanged",
                dir.display()
            ),
        )
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    remove_stale_temporaries(dir, &file_name);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}{TMP_MARK}{}-", std::process::id()))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    tmp.write_all(contents.as_bytes()).map_err(write_error)?;
    tmp.as_file()
        .set_permissions(meta.permissions())
        .map_err(write_error)?;
    keep_owner(tmp.as_file(), &meta, &name)?;
    tmp.as_file().sync_all().map_err(write_error)?;
    // A lost update: someone wrote the file after we read it. Never rename over their change.
    // Another ais run holds the lock on the file from its own comparison to its rename, so
    // the two cannot interleave there.
    let guard = fs::File::open(path).map_err(|e| open_error(&name, &e))?;
    guard.lock().map_err(write_error)?;
    let now = fs::read(path).map_err(|e| open_error(&name, &e))?;
    if now != expected.as_bytes() {
        return Err(CliError::new(
            format!("`{name}` changed while ais was working on it; nothing written"),
            format!("run the command again on the new `{name}`"),
        ));
    }
    tmp.persist(path).map_err(|e| write_error(e.error))?;
    drop(guard);
    // Make the rename itself durable; not every platform can open a directory, so this is
    // best effort.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Refuses a read-only file, one the user could not open for writing, and one with several
/// hard links.
fn refuse_unwritable(path: &Path, name: &str, meta: &fs::Metadata) -> Result<(), CliError> {
    if meta.permissions().readonly() {
        return Err(CliError::new(
            format!("`{name}` is read-only; ais does not replace a read-only file"),
            format!("make it writable first (`chmod u+w {name}`) if you mean to change it"),
        ));
    }
    if let Err(e) = fs::OpenOptions::new().write(true).open(path) {
        return Err(CliError::new(
            format!("`{name}` is not writable by you: {e}; nothing written"),
            "check the file's owner and permissions (`ls -l`)",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let links = meta.nlink();
        if links > 1 {
            return Err(CliError::new(
                format!(
                    "`{name}` has {links} hard links; writing it atomically would give this \
                     name a new file and leave the other links with the old text; nothing written"
                ),
                format!(
                    "print the result and copy it in place instead: `ais fmt {name} > tmp.agir \
                     && cat tmp.agir > {name}`"
                ),
            ));
        }
    }
    Ok(())
}

/// Gives the new file the original's owner and group; refuses (before anything is renamed)
/// when that is not permitted, so a file never silently changes owner.
fn keep_owner(file: &fs::File, meta: &fs::Metadata, name: &str) -> Result<(), CliError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mine = file.metadata().map_err(|e| open_error(name, &e))?;
        if (mine.uid(), mine.gid()) == (meta.uid(), meta.gid()) {
            return Ok(());
        }
        if let Err(e) = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())) {
            return Err(CliError::new(
                format!(
                    "cannot keep the owner of `{name}` (uid {}, gid {}): {e}; nothing written",
                    meta.uid(),
                    meta.gid()
                ),
                "run the command as the file's owner, or print the result and copy it in place",
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = (file, meta, name);
    Ok(())
}

/// Removes the temporary files of earlier runs on this file that were killed before they could
/// clean up: `.<file>.ais-<pid>-….tmp` whose process is gone (or, where processes cannot be
/// looked up, older than ten minutes). Best effort: a failure here changes nothing else.
fn remove_stale_temporaries(dir: &Path, file_name: &str) {
    let prefix = format!(".{file_name}{TMP_MARK}");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let can_see_processes = Path::new("/proc/self").exists();
    for entry in entries.filter_map(Result::ok) {
        let entry_name = entry.file_name();
        let Some(n) = entry_name.to_str() else {
            continue;
        };
        let Some(rest) = n.strip_prefix(&prefix) else {
            continue;
        };
        if !n.ends_with(".tmp") {
            continue;
        }
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let stale = match pid {
            Some(pid) if pid == std::process::id() => false,
            Some(pid) if can_see_processes => !Path::new(&format!("/proc/{pid}")).exists(),
            _ => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 600),
        };
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_atomically_and_keeps_permissions() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.agir");
        fs::write(&path, "old").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
        }
        write_atomically(&path, "new", "old").expect("atomic write");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .filter_map(Result::ok)
            .filter(|e| e.file_name() != "p.agir")
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }

    #[test]
    fn refuses_to_rename_over_a_change_made_since_the_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.agir");
        fs::write(&path, "theirs").expect("write");
        let err = write_atomically(&path, "mine", "what I read").expect_err("lost update");
        assert!(err.what.contains("changed while"), "{}", err.what);
        assert_eq!(fs::read_to_string(&path).expect("read"), "theirs");
        let files = fs::read_dir(dir.path()).expect("list").count();
        assert_eq!(files, 1, "the temporary file is removed");
    }

    #[test]
    fn utf16_is_named_as_such() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("u.agir");
        let mut bytes = vec![0xFF, 0xFE];
        for c in "nodes: []\n".encode_utf16() {
            bytes.extend(c.to_le_bytes());
        }
        fs::write(&path, &bytes).expect("write");
        let err = read_source(&path, &Limits::default()).expect_err("utf-16");
        assert!(err.what.contains("UTF-16LE"), "{}", err.what);
        fs::write(&path, &bytes[2..]).expect("write");
        let err = read_source(&path, &Limits::default()).expect_err("utf-16 without a mark");
        assert!(err.what.contains("looks like UTF-16"), "{}", err.what);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_to_write_through_a_symlink() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let target = outside.path().join("t.agir");
        fs::write(&target, "keep").expect("write");
        let link = dir.path().join("l.agir");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let err = write_atomically(&link, "new", "keep").expect_err("must refuse");
        assert!(err.what.contains("symbolic link"), "{}", err.what);
        assert_eq!(fs::read_to_string(&target).expect("read"), "keep");
    }

    #[test]
    fn reading_names_the_problem_and_the_next_step() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("missing.agir");
        let err = read_source(&missing, &Limits::default()).expect_err("missing");
        assert!(err.what.contains("missing.agir"), "{}", err.what);
        assert!(err.help.is_some());

        let err = read_source(dir.path(), &Limits::default()).expect_err("directory");
        assert!(err.what.contains("is a directory"), "{}", err.what);

        let bin = dir.path().join("bin.agir");
        fs::write(&bin, [b'a', 0xff, b'b']).expect("write");
        let err = read_source(&bin, &Limits::default()).expect_err("not utf-8");
        assert!(err.what.contains("offset 1"), "{}", err.what);

        let big = dir.path().join("big.agir");
        fs::write(&big, "x".repeat(100)).expect("write");
        let small = Limits {
            max_bytes: 10,
            ..Limits::default()
        };
        let err = read_source(&big, &small).expect_err("too big");
        assert!(err.what.contains("10 bytes"), "{}", err.what);
        assert_eq!(
            read_source(&big, &Limits::default()).expect("fits"),
            "x".repeat(100)
        );
    }
}

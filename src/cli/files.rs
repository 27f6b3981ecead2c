//! Reading source files and writing them back atomically.

use super::{CliError, shown};
use ais_core::agir::Limits;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

/// Reads a file as UTF-8 text, refusing one larger than the reader's byte limit before reading
/// it into memory.
pub fn read_source(path: &Path, limits: &Limits) -> Result<String, CliError> {
    let name = shown(path);
    let file = fs::File::open(path).map_err(|e| open_error(&name, &e))?;
    let meta = file.metadata().map_err(|e| open_error(&name, &e))?;
    if meta.is_dir() {
        return Err(CliError::new(
            format!("`{name}` is a directory, not an AG-IR file"),
            format!("name the .agir files inside it, e.g. `ais check {name}/*.agir`"),
        ));
    }
    let max = limits.max_bytes;
    let too_big = || {
        CliError::new(
            format!("`{name}` is larger than the reader accepts ({max} bytes)"),
            "split the module into smaller programs joined by CALL, or raise \
             `agir::Limits::max_bytes` when reading it from code",
        )
    };
    if usize::try_from(meta.len()).map_or(true, |len| len > max) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| open_error(&name, &e))?;
    if bytes.len() > max {
        return Err(too_big());
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

/// Replaces a file's contents atomically: writes a temporary file in the same directory,
/// flushes it to disk, gives it the original's permissions and renames it over the original.
/// A symlink is never written through (that could write outside the directory the user named);
/// the error names its target instead.
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), CliError> {
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
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    tmp.write_all(contents.as_bytes()).map_err(write_error)?;
    tmp.as_file()
        .set_permissions(meta.permissions())
        .map_err(write_error)?;
    tmp.as_file().sync_all().map_err(write_error)?;
    tmp.persist(path).map_err(|e| write_error(e.error))?;
    // Make the rename itself durable; not every platform can open a directory, so this is
    // best effort.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
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
        write_atomically(&path, "new").expect("atomic write");
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

    #[cfg(unix)]
    #[test]
    fn refuses_to_write_through_a_symlink() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let target = outside.path().join("t.agir");
        fs::write(&target, "keep").expect("write");
        let link = dir.path().join("l.agir");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let err = write_atomically(&link, "new").expect_err("must refuse");
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

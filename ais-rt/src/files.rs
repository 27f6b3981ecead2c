//! Reading a file the runtime is *named* (a scripted-responses file, a resume handle, a run
//! record, a CALL target): only a regular file, only up to a size limit.
//!
//! The file is opened with `O_NONBLOCK` (opening a FIFO with no writer does not wait), checked
//! with `fstat` on the open descriptor (no swap between the check and the read), and refused
//! unless it is a regular file; its bytes are read up to the limit and one more, so a file that
//! grows while it is read is refused too. `/dev/zero`, a FIFO, a socket or a directory is an
//! error that says what it is, never a hang or an unbounded read.

use rustix::fs::{FileType, Mode, OFlags};
use std::io::Read;
use std::path::Path;

/// Why a named file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is no regular file (a FIFO, a device, a socket, a directory): what it is.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// It is larger than the limit: the limit in bytes.
    #[error("it is larger than the {0} bytes ais reads from it")]
    TooLarge(u64),
}

impl ReadError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The bytes of the regular file `path`, at most `max` of them (see the module docs).
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)?;
    let st = rustix::fs::fstat(&fd).map_err(std::io::Error::from)?;
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO (named pipe)"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice => Some("a character device"),
        FileType::BlockDevice => Some("a block device"),
        _ => Some("not a file"),
    };
    if let Some(kind) = kind {
        return Err(ReadError::NotRegular(kind));
    }
    if u64::try_from(st.st_size).unwrap_or(u64::MAX) > max {
        return Err(ReadError::TooLarge(max));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge(max));
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, max: u64) -> Result<String, ReadError> {
    let bytes = read_regular(path, max)?;
    String::from_utf8(bytes).map_err(|e| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_big_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 1024),
            Err(ReadError::NotRegular("a character device"))
        ));
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            read_regular(&fifo, 1024),
            Err(ReadError::NotRegular(_))
        ));
        assert!(matches!(
            read_regular(dir.path(), 1024),
            Err(ReadError::NotRegular(_))
        ));
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        assert!(matches!(
            read_regular(&big, 1024),
            Err(ReadError::TooLarge(1024))
        ));
        assert_eq!(read_regular(&big, 4096).unwrap().len(), 2048);
        assert!(
            read_regular(&dir.path().join("none"), 1)
                .unwrap_err()
                .is_not_found()
        );
    }
}

//! Reading a file ais is *named* — a program, an AGS document and the documents it refers to,
//! a scripted-responses file, a resume handle, a run record, a CALL target: only a regular
//! file, only up to a size limit. Every reader of ais goes through [`read_regular`].
//!
//! The file is opened with `O_NONBLOCK` (opening a FIFO with no writer does not wait) and
//! `O_NOCTTY`, checked with `fstat` on the open descriptor (no swap between the check and the
//! read), and refused unless it is a regular file; its bytes are read up to the limit and one
//! more, so a file that grows while it is read is refused too. `/dev/zero`, a FIFO, a socket or
//! a directory is an error that says what it is, never a hang or an unbounded read.

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

/// What a file that is not regular is, in words.
fn kind_of(t: std::fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
    }
    Some("not a file")
}

/// The bytes of the regular file `path`, at most `max` of them (see the module docs).
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if let Some(kind) = kind_of(meta.file_type()) {
        return Err(ReadError::NotRegular(kind));
    }
    if meta.len() > max {
        return Err(ReadError::TooLarge(max));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_big_files_are_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("ais-core-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 1024),
            Err(ReadError::NotRegular("a character device"))
        ));
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, 1024),
            Err(ReadError::NotRegular("a FIFO (named pipe)"))
        ));
        assert!(matches!(
            read_regular(&dir, 1024),
            Err(ReadError::NotRegular(_))
        ));
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        assert!(matches!(
            read_regular(&big, 1024),
            Err(ReadError::TooLarge(1024))
        ));
        assert_eq!(read_regular(&big, 4096).unwrap().len(), 2048);
        assert!(
            read_regular(&dir.join("none"), 1)
                .unwrap_err()
                .is_not_found()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

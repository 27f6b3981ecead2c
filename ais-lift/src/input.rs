//! Bounded reading of a skill and of the files it references: a skill and every sibling file
//! are hostile input.
//!
//! A file is read only when it is a regular file (not a directory, FIFO, device or socket —
//! `/dev/zero` is never read), at most [`Limits`]'s bytes (the read stops one byte past the
//! limit, whatever the file's metadata claims), and it must be text: UTF-8 with no NUL byte and
//! no control character other than tab, line feed, carriage return and form feed (an ANSI escape
//! in a skill would reach the terminal that prints its analysis). A leading UTF-8 byte-order
//! mark is dropped.

use crate::text::LineIndex;
use std::path::{Path, PathBuf};

/// The bounds of a lift's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest skill, in bytes (default 1 MiB; a published skill is a few kilobytes).
    pub max_skill_bytes: u64,
    /// Largest sibling file, in bytes (default 256 KiB).
    pub max_file_bytes: u64,
    /// Most bytes of sibling files read for one skill, all together (default 2 MiB).
    pub max_bundle_bytes: u64,
    /// Most sibling files read for one skill (default 64).
    pub max_bundle_files: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_skill_bytes: 1024 * 1024,
            max_file_bytes: 256 * 1024,
            max_bundle_bytes: 2 * 1024 * 1024,
            max_bundle_files: 64,
        }
    }
}

/// Why a file (a skill or a sibling) was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read it: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// It is not a regular file.
    #[error(
        "{path}: not a regular file (a directory, FIFO, device or socket); give the path of a text file"
    )]
    NotRegularFile {
        /// The file.
        path: PathBuf,
    },
    /// It is larger than the limit.
    #[error(
        "{path}: larger than the {limit} bytes a {what} may have; split it, or raise the limit"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What it is ("skill", "sibling file").
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// It is not text.
    #[error(
        "{path}:{line}:{column}: binary content ({what}) — a skill and its sibling files must be UTF-8 text"
    )]
    Binary {
        /// The file.
        path: PathBuf,
        /// What was found (`a NUL byte`, `invalid UTF-8`, `control character U+001B`).
        what: String,
        /// Its byte offset.
        offset: usize,
        /// Its line.
        line: u32,
        /// Its column.
        column: u32,
    },
}

/// Checks that `bytes` are text by the rules of the [module docs](self) and returns them as a
/// string without a leading byte-order mark.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    let binary = |valid: &str, offset: usize, what: String| {
        let lines = LineIndex::new(valid);
        let pos = lines.pos(valid, offset);
        InputError::Binary {
            path: path.to_owned(),
            what,
            offset,
            line: pos.line,
            column: pos.column,
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => {
            let bad = text
                .char_indices()
                .find(|&(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c'));
            match bad {
                None => Ok(text),
                Some((at, '\0')) => Err(binary(&text, at, "a NUL byte".to_owned())),
                Some((at, c)) => Err(binary(
                    &text,
                    at,
                    format!("control character U+{:04X}", u32::from(c)),
                )),
            }
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
            let what = if bytes[..at].contains(&0) || bytes.get(at) == Some(&0) {
                "a NUL byte"
            } else {
                "invalid UTF-8"
            };
            let at = if what == "a NUL byte" {
                bytes.iter().position(|&b| b == 0).unwrap_or(at)
            } else {
                at
            };
            Err(binary(valid, at.min(valid.len()), what.to_owned()))
        }
    }
}

/// Reads the regular text file at `path`, at most `limit` bytes (see the [module docs](self)).
pub fn read_bounded(path: &Path, limit: u64, what: &'static str) -> Result<String, InputError> {
    // The one bounded reader of the workspace: a FIFO does not block the open, a device or a
    // file that grows past the limit is refused.
    use ais_core::files::ReadError;
    let bytes = ais_core::files::read_regular(path, limit).map_err(|e| match e {
        ReadError::Io(source) => InputError::Io {
            path: path.to_owned(),
            source,
        },
        ReadError::NotRegular(_) => InputError::NotRegularFile {
            path: path.to_owned(),
        },
        ReadError::TooLarge(_) => InputError::TooLarge {
            path: path.to_owned(),
            what,
            limit,
        },
    })?;
    text_of(path, bytes)
}

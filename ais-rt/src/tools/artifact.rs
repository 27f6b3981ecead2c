//! The artifact root: every file a tool writes lands under one directory.
//!
//! Destinations are program-controlled (spec §4.2.2, §7.3): a path a tool is asked to write is
//! read as a path *relative to the output root*, and
//!
//! - an absolute path, a `~` path, or any `..` component — wherever it sits in the value,
//!   `notes/../../x` included — is refused with [`ToolErrorKind::PathEscape`]; it never picks a
//!   destination (nor is it "repaired" into one);
//! - every directory on the way is opened with `O_NOFOLLOW` relative to its parent (`openat`),
//!   so a symlinked directory anywhere under the root is refused, not followed; missing
//!   directories are created;
//! - an existing symlink at the destination itself is refused, never written through nor
//!   silently replaced;
//! - the write is atomic: the bytes go to a fresh temporary file (`O_CREAT | O_EXCL |
//!   O_NOFOLLOW`) in the destination's directory, are flushed to disk, and the file is renamed
//!   over the destination; on any error the temporary file is removed.
//!
//! A `private_write` SPAWN sibling's writes land under its [`ToolContext::scratch`] directory
//! instead of the root ([`ArtifactRoot::for_writes`]).

use super::{ToolContext, ToolError, ToolErrorKind};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory every artifact write resolves under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRoot {
    dir: PathBuf,
}

/// A destination that passed the lexical checks: its normal components, in order (never
/// empty, never `..`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelativeDest {
    parts: Vec<String>,
}

impl RelativeDest {
    /// The destination as a `/`-separated relative path (`.` components dropped).
    pub fn as_path_string(&self) -> String {
        self.parts.join("/")
    }

    /// Reads `raw` as a destination relative to a root: refuses an empty path, a NUL byte, an
    /// absolute or `~` path, a `..` component anywhere, and a path ending in `/` (a directory).
    pub fn parse(raw: &str) -> Result<RelativeDest, ToolError> {
        let bad =
            |kind, why: &str| ToolError::new(kind, format!("the destination path `{raw}` {why}"));
        if raw.trim().is_empty() {
            return Err(bad(
                ToolErrorKind::BadArguments,
                "is empty; give the file a relative path under the output directory",
            ));
        }
        if raw.contains('\0') {
            return Err(bad(ToolErrorKind::BadArguments, "contains a NUL byte"));
        }
        if raw.starts_with('/') || Path::new(raw).is_absolute() {
            return Err(bad(
                ToolErrorKind::PathEscape,
                "is absolute; an artifact is written under the output directory, so give a \
                 relative path",
            ));
        }
        if raw.starts_with('~') {
            return Err(bad(
                ToolErrorKind::PathEscape,
                "starts with `~` (a home directory); give a path relative to the output \
                 directory",
            ));
        }
        if raw.ends_with('/') {
            return Err(bad(
                ToolErrorKind::BadArguments,
                "ends with `/` (a directory); name the file to write",
            ));
        }
        let mut parts = Vec::new();
        for part in raw.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    return Err(bad(
                        ToolErrorKind::PathEscape,
                        "contains `..`; a destination may not climb out of the output directory",
                    ));
                }
                name => parts.push(name.to_owned()),
            }
        }
        if parts.is_empty() {
            return Err(bad(ToolErrorKind::BadArguments, "names no file"));
        }
        Ok(RelativeDest { parts })
    }
}

impl ArtifactRoot {
    /// A root at `dir` (created on the first write if missing).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ArtifactRoot { dir: dir.into() }
    }

    /// Where the writes of a call in `ctx` land: the sibling's scratch directory when set,
    /// else the output root.
    pub fn for_writes(ctx: &ToolContext) -> Self {
        ArtifactRoot::new(ctx.scratch.as_ref().unwrap_or(&ctx.root))
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The absolute-or-root-relative path `raw` names under this root, after the lexical checks
    /// of [`RelativeDest::parse`] (symlinks are checked when writing).
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, ToolError> {
        let dest = RelativeDest::parse(raw)?;
        Ok(dest.parts.iter().fold(self.dir.clone(), |p, c| p.join(c)))
    }

    /// Writes `bytes` to `raw` under this root, atomically and without following a symlink
    /// (see the module docs). Returns the path written, relative to the root
    /// (`notes/plan.md`).
    pub fn write(&self, raw: &str, bytes: &[u8]) -> Result<String, ToolError> {
        let dest = RelativeDest::parse(raw)?;
        self.write_dest(&dest, bytes)?;
        Ok(dest.as_path_string())
    }

    /// Writes `bytes` to an already-checked destination.
    pub fn write_dest(&self, dest: &RelativeDest, bytes: &[u8]) -> Result<(), ToolError> {
        let io_err = |what: &str, e: std::io::Error| {
            ToolError::new(
                ToolErrorKind::Io,
                format!(
                    "writing `{}` under {}: {what}: {e}",
                    dest.as_path_string(),
                    self.dir.display()
                ),
            )
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| io_err("creating the output root", e))?;
        let mut dir = rustix::fs::open(
            &self.dir,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err("opening the output root", e.into()))?;
        let (name, dirs) = dest
            .parts
            .split_last()
            .ok_or_else(|| ToolError::new(ToolErrorKind::BadArguments, "empty destination"))?;
        let mut walked = String::new();
        for part in dirs {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(part);
            dir = self.open_subdir(&dir, part, &walked, dest)?;
        }
        match rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::Symlink => {
                    return Err(self.escape(dest, &dest.as_path_string(), "is a symbolic link"));
                }
                FileType::Directory => {
                    return Err(ToolError::new(
                        ToolErrorKind::Io,
                        format!(
                            "cannot write `{}`: a directory of that name exists under {}",
                            dest.as_path_string(),
                            self.dir.display()
                        ),
                    ));
                }
                _ => {}
            },
            Err(Errno::NOENT) => {}
            Err(e) => return Err(io_err("checking the destination", e.into())),
        }
        let tmp = temp_name(name);
        let file = rustix::fs::openat(
            &dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(|e| io_err("creating a temporary file", e.into()))?;
        let written = write_and_sync(file, bytes).and_then(|()| {
            rustix::fs::renameat(&dir, tmp.as_str(), &dir, name.as_str()).map_err(Into::into)
        });
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
            return Err(io_err("writing the file", e));
        }
        Ok(())
    }

    /// Opens (creating if missing) the directory `part` inside `parent`, refusing a symlink.
    fn open_subdir(
        &self,
        parent: &OwnedFd,
        part: &str,
        walked: &str,
        dest: &RelativeDest,
    ) -> Result<OwnedFd, ToolError> {
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        for _ in 0..2 {
            match rustix::fs::openat(parent, part, flags, Mode::empty()) {
                Ok(fd) => return Ok(fd),
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(parent, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => continue,
                        Err(e) => {
                            return Err(ToolError::new(
                                ToolErrorKind::Io,
                                format!(
                                    "cannot create the directory `{walked}` under {}: {}",
                                    self.dir.display(),
                                    std::io::Error::from(e)
                                ),
                            ));
                        }
                    }
                }
                Err(e) => {
                    let is_link = rustix::fs::statat(parent, part, AtFlags::SYMLINK_NOFOLLOW)
                        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
                    if is_link {
                        return Err(self.escape(dest, walked, "is a symbolic link"));
                    }
                    return Err(ToolError::new(
                        ToolErrorKind::Io,
                        format!(
                            "cannot write `{}`: `{walked}` under {} is not a directory ({})",
                            dest.as_path_string(),
                            self.dir.display(),
                            std::io::Error::from(e)
                        ),
                    ));
                }
            }
        }
        Err(ToolError::new(
            ToolErrorKind::Io,
            format!(
                "cannot open the directory `{walked}` under {}: it keeps changing",
                self.dir.display()
            ),
        ))
    }

    fn escape(&self, dest: &RelativeDest, at: &str, why: &str) -> ToolError {
        ToolError::new(
            ToolErrorKind::PathEscape,
            format!(
                "refusing to write `{}`: `{at}` under {} {why}, and an artifact write never \
                 follows a link",
                dest.as_path_string(),
                self.dir.display()
            ),
        )
    }
}

fn write_and_sync(file: OwnedFd, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::from(file);
    file.write_all(bytes)?;
    file.sync_all()
}

/// A fresh temporary name beside `name`: `.name.ais-tmp.<pid>.<n>`.
fn temp_name(name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem: String = name.chars().take(64).collect();
    format!(".{stem}.ais-tmp.{}.{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_checks_refuse_every_escape() {
        for (raw, kind) in [
            ("/etc/passwd", ToolErrorKind::PathEscape),
            ("../x", ToolErrorKind::PathEscape),
            ("a/../../x", ToolErrorKind::PathEscape),
            ("a/..", ToolErrorKind::PathEscape),
            ("~/x", ToolErrorKind::PathEscape),
            ("", ToolErrorKind::BadArguments),
            ("a/", ToolErrorKind::BadArguments),
            ("./.", ToolErrorKind::BadArguments),
            ("a\0b", ToolErrorKind::BadArguments),
        ] {
            let err = RelativeDest::parse(raw).unwrap_err();
            assert_eq!(err.kind, kind, "{raw:?}: {}", err.message);
        }
        assert_eq!(
            RelativeDest::parse("./notes//plan.md")
                .unwrap()
                .as_path_string(),
            "notes/plan.md"
        );
    }

    #[test]
    fn temp_names_differ_and_hide() {
        let (a, b) = (temp_name("x.md"), temp_name("x.md"));
        assert_ne!(a, b);
        assert!(a.starts_with(".x.md.ais-tmp."));
    }
}

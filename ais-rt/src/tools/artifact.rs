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
//! - a destination inside the runtime's own state (`.ais/`) or a version-control directory
//!   ([`PROTECTED_DIRS`]: `.git`, `.hg`, `.svn`, …), at any depth, is refused with
//!   [`ToolErrorKind::PathEscape`]: a model-chosen value never plants a git hook or rewrites
//!   a resume handle. (The runtime's own files under `.ais/` go through
//!   `ArtifactRoot::write_own`.)
//!
//! A `private_write` SPAWN sibling's writes land under its [`ToolContext::scratch`] directory
//! instead of the root ([`ArtifactRoot::for_writes`]).
//!
//! The same rules bind every *artifact tool*, not only `write_file`: before any tool runs on
//! the write side (an `ACT`, or a `CODE` served by an `ACT·artifact` tool), the machine passes
//! each path parameter through [`ArtifactRoot::confine`] and hands the tool the checked path,
//! relative to its working directory — a Python body, a command, a native tool and a slot's
//! tool call alike.

use super::{ToolContext, ToolError, ToolErrorKind};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Directory names a destination never passes through, at any depth: the runtime's own state
/// and the version-control directories (compared without regard to ASCII case).
pub(crate) const PROTECTED_DIRS: [&str; 9] = [
    ".ais", ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul", "CVS",
];

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
    /// absolute or `~` path, a `..` component anywhere, a path ending in `/` (a directory), and
    /// a path through one of the `PROTECTED_DIRS`.
    pub fn parse(raw: &str) -> Result<RelativeDest, ToolError> {
        let dest = Self::parse_unprotected(raw)?;
        let protected = dest
            .parts
            .iter()
            .find(|p| PROTECTED_DIRS.iter().any(|d| p.eq_ignore_ascii_case(d)));
        if let Some(dir) = protected {
            return Err(ToolError::new(
                ToolErrorKind::PathEscape,
                format!(
                    "the destination path `{raw}` goes through `{dir}`, which holds the \
                     runtime's state or a version-control repository; an artifact never lands \
                     there, so choose another path"
                ),
            ));
        }
        Ok(dest)
    }

    /// [`parse`](Self::parse) without the [`PROTECTED_DIRS`] rule: for the runtime's own files.
    pub(crate) fn parse_unprotected(raw: &str) -> Result<RelativeDest, ToolError> {
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

    /// Writes the runtime's own file `raw` (under `.ais/`: a produced program to run) with the
    /// guarantees of [`write`](Self::write) but without the [`PROTECTED_DIRS`] rule, which
    /// binds model-chosen destinations only.
    pub(crate) fn write_own(&self, raw: &str, bytes: &[u8]) -> Result<String, ToolError> {
        let dest = RelativeDest::parse_unprotected(raw)?;
        self.write_dest(&dest, bytes)?;
        Ok(dest.as_path_string())
    }

    /// Checks the destination `raw` an artifact tool is about to be handed: the lexical rules
    /// of [`RelativeDest::parse`], then no existing directory on the way, nor the file itself,
    /// may be a symbolic link, and an existing file may not be a hard link (a tool that opens
    /// it would write through to the other name). Returns the checked destination; the tool
    /// gets [`RelativeDest::as_path_string`], a path inside this root.
    pub fn confine(&self, raw: &str) -> Result<RelativeDest, ToolError> {
        use std::os::unix::fs::MetadataExt;
        let dest = RelativeDest::parse(raw)?;
        let mut path = self.dir.clone();
        let mut walked = String::new();
        let last = dest.parts.len() - 1;
        for (i, part) in dest.parts.iter().enumerate() {
            path.push(part);
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(part);
            let meta = match std::fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => {
                    return Err(ToolError::new(
                        ToolErrorKind::Io,
                        format!("checking `{walked}` under {}: {e}", self.dir.display()),
                    ));
                }
            };
            if meta.file_type().is_symlink() {
                return Err(self.escape(&dest, &walked, "is a symbolic link"));
            }
            if i < last && !meta.is_dir() {
                return Err(ToolError::new(
                    ToolErrorKind::Io,
                    format!(
                        "cannot write `{}`: `{walked}` under {} is not a directory",
                        dest.as_path_string(),
                        self.dir.display()
                    ),
                ));
            }
            if i == last && meta.is_file() && meta.nlink() > 1 {
                return Err(self.escape(&dest, &walked, "is a hard link to another file"));
            }
        }
        Ok(dest)
    }

    /// Moves the regular file `from` to `dest` under this root, creating the directories on
    /// the way one at a time without following a symlink (so nothing is created outside the
    /// root before a link is noticed) and refusing a symlink at the destination itself.
    pub(crate) fn place(&self, dest: &RelativeDest, from: &Path) -> Result<(), ToolError> {
        let dir = self.open_parent(dest)?;
        let name = dest.parts.last().map_or("", String::as_str);
        if let Ok(st) = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
            && FileType::from_raw_mode(st.st_mode) == FileType::Symlink
        {
            return Err(self.escape(dest, &dest.as_path_string(), "is a symbolic link"));
        }
        rustix::fs::renameat(rustix::fs::CWD, from, &dir, name).map_err(|e| {
            ToolError::new(
                ToolErrorKind::Io,
                format!(
                    "moving {} to `{}` under {}: {}",
                    from.display(),
                    dest.as_path_string(),
                    self.dir.display(),
                    std::io::Error::from(e)
                ),
            )
        })
    }

    /// The destination's directory, opened (and created where missing) component by
    /// component from the root with `O_NOFOLLOW`.
    fn open_parent(&self, dest: &RelativeDest) -> Result<OwnedFd, ToolError> {
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
        let dirs = dest.parts.split_last().map_or(&[][..], |(_, d)| d);
        let mut walked = String::new();
        for part in dirs {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(part);
            dir = self.open_subdir(&dir, part, &walked, dest)?;
        }
        Ok(dir)
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
        let dir = self.open_parent(dest)?;
        let name = dest
            .parts
            .last()
            .ok_or_else(|| ToolError::new(ToolErrorKind::BadArguments, "empty destination"))?;
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
            (".git/config", ToolErrorKind::PathEscape),
            ("src/.git/hooks/pre-commit", ToolErrorKind::PathEscape),
            (".ais/handle.json", ToolErrorKind::PathEscape),
            (".Svn/entries", ToolErrorKind::PathEscape),
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
    fn the_runtime_writes_its_own_state_where_no_model_value_may() {
        let dir = tempfile::tempdir().unwrap();
        let root = ArtifactRoot::new(dir.path());
        assert_eq!(
            root.write(".ais/x.py", b"1").unwrap_err().kind,
            ToolErrorKind::PathEscape
        );
        assert_eq!(root.write_own(".ais/x.py", b"1").unwrap(), ".ais/x.py");
        assert_eq!(
            root.write_own("../x.py", b"1").unwrap_err().kind,
            ToolErrorKind::PathEscape
        );
    }

    #[test]
    fn temp_names_differ_and_hide() {
        let (a, b) = (temp_name("x.md"), temp_name("x.md"));
        assert_ne!(a, b);
        assert!(a.starts_with(".x.md.ais-tmp."));
    }
}

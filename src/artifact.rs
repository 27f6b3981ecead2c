//! Program-controlled artifact paths for native tools (spec §4.2.2, §7.3).
//!
//! A tool parameter typed `&ais::ArtifactPath` receives the path the calling convention bound
//! (a carry, or the filename recovered from the invocation), resolved under the run's output
//! root. It refuses an absolute path or one that climbs out with `..`; writes are atomic (a
//! temporary file renamed into place in the same directory) and never land outside the root,
//! even through a symlinked directory.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A relative path under an output root, where a tool may read and write an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactPath {
    root: PathBuf,
    relative: PathBuf,
}

/// Why a path cannot be an artifact path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactPathError {
    /// The path as given.
    pub path: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for ArtifactPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` cannot be an artifact path: {}; give a relative path inside the output directory",
            self.path, self.reason
        )
    }
}

impl std::error::Error for ArtifactPathError {}

impl ArtifactPath {
    /// `relative` under `root`; an empty, absolute or `..`-climbing path is refused.
    pub fn new(
        root: impl Into<PathBuf>,
        relative: &str,
    ) -> Result<ArtifactPath, ArtifactPathError> {
        let refuse = |reason| ArtifactPathError {
            path: relative.to_owned(),
            reason,
        };
        let rel = Path::new(relative.trim());
        if rel.as_os_str().is_empty() {
            return Err(refuse("it is empty"));
        }
        let mut clean = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::Normal(part) => clean.push(part),
                Component::CurDir => {}
                Component::ParentDir => return Err(refuse("it climbs out with `..`")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(refuse("it is absolute"));
                }
            }
        }
        if clean.as_os_str().is_empty() {
            return Err(refuse("it names the output directory itself"));
        }
        Ok(ArtifactPath {
            root: root.into(),
            relative: clean,
        })
    }

    /// The path relative to the output root.
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// The path joined onto the output root.
    pub fn full(&self) -> PathBuf {
        self.root.join(&self.relative)
    }

    /// Reads the artifact as text.
    pub fn read_to_string(&self) -> io::Result<String> {
        self.check_inside()?;
        std::fs::read_to_string(self.full())
    }

    /// Writes `contents` atomically, creating parent directories, and returns the relative
    /// path written (what a tool that saves an artifact reports).
    pub fn write(&self, contents: impl AsRef<[u8]>) -> io::Result<String> {
        let full = self.full();
        let dir = full.parent().unwrap_or(&self.root).to_path_buf();
        std::fs::create_dir_all(&dir)?;
        self.check_inside()?;
        if std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "`{}` is a symlink; an artifact is never written through one",
                    self.relative.display()
                ),
            ));
        }
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        io::Write::write_all(&mut tmp, contents.as_ref())?;
        tmp.persist(&full).map_err(|e| e.error)?;
        Ok(self.relative.display().to_string())
    }

    /// Errors when the deepest existing ancestor of the path resolves outside the root (a
    /// symlinked directory pointing elsewhere).
    fn check_inside(&self) -> io::Result<()> {
        let root = std::fs::canonicalize(&self.root)?;
        let mut probe = self.full();
        while !probe.exists() {
            if !probe.pop() {
                return Ok(());
            }
        }
        let real = std::fs::canonicalize(&probe)?;
        if real.starts_with(&root) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "`{}` resolves outside the output directory (through a symlink)",
                    self.relative.display()
                ),
            ))
        }
    }
}

impl fmt::Display for ArtifactPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.relative.display().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_root_are_refused() {
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "."] {
            assert!(ArtifactPath::new("/tmp", bad).is_err(), "{bad}");
        }
        let p = ArtifactPath::new("/out", "./docs/plan.md").unwrap();
        assert_eq!(p.relative(), Path::new("docs/plan.md"));
    }

    #[test]
    fn writes_are_atomic_and_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let p = ArtifactPath::new(dir.path(), "plans/p.md").unwrap();
        assert_eq!(p.write("# Plan\n").unwrap(), "plans/p.md");
        assert_eq!(p.read_to_string().unwrap(), "# Plan\n");

        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let escape = ArtifactPath::new(dir.path(), "link/x.md").unwrap();
        let err = escape.write("x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(!outside.path().join("x.md").exists());
    }
}

//! The staged writes of an `orchestrator_owned` SPAWN sibling, carried through Restate's
//! journal instead of a shared disk.
//!
//! Such a sibling writes into its stage (`.ais/stage/<id>/<i>/` under the output root of the
//! endpoint that runs it, [`ais_rt::stage_dir`]); the orchestrator applies every stage to its
//! own output root after the join. On Restate the sibling runs as an invocation of its own, on
//! any endpoint, so its stage travels as bytes:
//!
//! - each effect of the sibling records, beside its value, what its stage holds after it ran;
//!   a replay of the effect (the sibling retried after a crash, on this endpoint or another)
//!   writes those files back into a fresh stage, so a replayed write is not lost;
//! - the sibling's outcome carries its stage's files to the orchestrating run
//!   ([`crate::siblings`]), which writes them into its own stage for the sibling, where the
//!   SPAWN's apply finds them.
//!
//! Every path is checked as an artifact destination ([`RelativeDest::parse`]: relative, no
//! `..`, not through `.ais/` or a version-control directory) where it is written, and a
//! sibling's stage is bounded by [`MAX_STAGED_BYTES`]. The bytes are base64 in the JSON.

use ais_rt::RelativeDest;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::Path;

/// The most bytes one sibling's stage may carry (its files' contents together). Past it the
/// sibling's effect fails, naming the size and the limit.
pub const MAX_STAGED_BYTES: u64 = 16 << 20;

/// One staged file: its path below the stage (`/`-separated) and its bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagedFile {
    /// The path below the stage directory.
    pub path: String,
    /// The contents (base64 in JSON).
    #[serde(serialize_with = "to_base64", deserialize_with = "from_base64")]
    pub bytes: Vec<u8>,
}

/// A staged sibling's effect as its journal entry holds it: the effect's own result and the
/// files its stage held after it ran.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Staged {
    /// The effect's result.
    pub value: serde_json::Value,
    /// The stage's files.
    pub staged: Vec<StagedFile>,
}

fn to_base64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&STANDARD.encode(bytes))
}

fn from_base64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    STANDARD.decode(text).map_err(serde::de::Error::custom)
}

/// The regular files under `dir` (none when it does not exist), by path below it, in path
/// order; a symlink is skipped (the SPAWN's apply skips it too). More than
/// [`MAX_STAGED_BYTES`] together is an error naming the size and the limit.
pub fn snapshot(dir: &Path) -> Result<Vec<StagedFile>, String> {
    let io = |p: &Path, e: std::io::Error| format!("reading the stage {}: {e}", p.display());
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && d == dir => break,
            Err(e) => return Err(io(&d, e)),
        };
        for entry in entries {
            let path = entry.map_err(|e| io(&d, e))?.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
            if meta.is_dir() {
                todo.push(path);
                continue;
            }
            if !meta.is_file() {
                continue;
            }
            total += meta.len();
            if total > MAX_STAGED_BYTES {
                return Err(format!(
                    "the stage {} holds more than {MAX_STAGED_BYTES} bytes, the most a sibling run on Restate may stage; write less, or run the SPAWN `shared_read` and write to the output root",
                    dir.display()
                ));
            }
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let bytes = std::fs::read(&path).map_err(|e| io(&path, e))?;
            files.push(StagedFile {
                path: rel.join("/"),
                bytes,
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Writes `files` into the stage `dir` (created as needed), each path checked as an artifact
/// destination first: a path that would leave the stage is an error and nothing of it is
/// written.
pub fn write(dir: &Path, files: &[StagedFile]) -> Result<(), String> {
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    if total > MAX_STAGED_BYTES {
        return Err(format!(
            "a sibling's stage of {total} bytes is more than {MAX_STAGED_BYTES}, the most a sibling run on Restate may stage"
        ));
    }
    let mut checked = Vec::with_capacity(files.len());
    for f in files {
        let dest = RelativeDest::parse(&f.path)
            .map_err(|e| format!("a staged file's path: {}", e.message))?;
        checked.push((dir.join(dest.as_path_string()), &f.bytes));
    }
    let io = |p: &Path, e: std::io::Error| format!("writing the stage {}: {e}", p.display());
    for (path, bytes) in checked {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| io(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_travels_as_bytes_and_a_path_that_leaves_it_is_refused() {
        let from = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join("sub")).unwrap();
        std::fs::write(from.path().join("a.txt"), "A").unwrap();
        std::fs::write(from.path().join("sub/b.bin"), [0u8, 255, 10]).unwrap();
        let files = snapshot(from.path()).unwrap();
        assert_eq!(
            files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["a.txt", "sub/b.bin"]
        );
        let json = serde_json::to_string(&files).unwrap();
        let back: Vec<StagedFile> = serde_json::from_str(&json).unwrap();
        let to = tempfile::tempdir().unwrap();
        write(to.path(), &back).unwrap();
        assert_eq!(
            std::fs::read(to.path().join("sub/b.bin")).unwrap(),
            [0, 255, 10]
        );
        assert!(snapshot(&to.path().join("absent")).unwrap().is_empty());

        // Hostile paths (a sibling's outcome is another process's word): refused, nothing
        // written, not even the good file beside them.
        for bad in [
            "../escape.txt",
            "/etc/escape",
            "sub/../../escape",
            ".ais/x",
            ".git/config",
        ] {
            let out = tempfile::tempdir().unwrap();
            let stage = out.path().join("stage");
            let files = [
                StagedFile {
                    path: "good.txt".into(),
                    bytes: b"ok".to_vec(),
                },
                StagedFile {
                    path: bad.into(),
                    bytes: b"x".to_vec(),
                },
            ];
            let err = write(&stage, &files).unwrap_err();
            assert!(err.contains("path"), "{bad}: {err}");
            assert!(!stage.exists(), "{bad}: something was written");
            assert!(!out.path().join("escape.txt").exists(), "{bad}");
        }
    }
}

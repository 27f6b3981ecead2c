//! Sealing what a resume takes from a journal row: a keyed MAC (HMAC-SHA-256) per field, so a
//! row rewritten by anything but the `ais` that wrote it is refused naming the field, never
//! resumed with the rewritten value.
//!
//! **Where the key lives.** One key per user, 32 random bytes in hexadecimal at
//! `$XDG_STATE_HOME/ais/journal.key` (else `$HOME/.local/state/ais/journal.key`; `AIS_STATE_DIR`
//! names the directory instead), made on first use with mode `0600` in a `0700` directory, and
//! never read through a symbolic link. It is outside every output root (a tool may write there
//! only; Landlock keeps it from writing anywhere else), and a tool process does not see it:
//! the sandbox covers its directory with an empty `tmpfs` in the tool's mount namespace
//! ([`crate::sandbox`]). A key the user removes makes every run sealed with it unresumable
//! (the refusal says so); a journal copied to another user's machine is refused the same way.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The key file's name in [`seal_key_dir`].
const KEY_FILE: &str = "journal.key";

/// The directory of the sealing key (see the module docs); `None` without `HOME` either.
/// When the preferred directory cannot be made (a `HOME` this user cannot write), a private
/// directory of this user in the system's temporary directory, `ais-state-<uid>`, is used.
pub fn seal_key_dir() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let nonempty = |v: &str| {
            std::env::var_os(v)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        };
        let preferred = nonempty("AIS_STATE_DIR")
            .or_else(|| {
                nonempty("XDG_STATE_HOME")
                    .filter(|p| p.is_absolute())
                    .map(|s| s.join("ais"))
            })
            .or_else(|| nonempty("HOME").map(|home| home.join(".local").join("state").join("ais")));
        let usable = |d: &Path| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .is_ok()
                && std::fs::metadata(d).is_ok_and(|m| {
                    use std::os::unix::fs::MetadataExt;
                    m.uid() == rustix::process::geteuid().as_raw()
                })
        };
        match preferred {
            Some(d) if usable(&d) => Some(d),
            _ => {
                let uid = rustix::process::geteuid().as_raw();
                let d = std::env::temp_dir().join(format!("ais-state-{uid}"));
                let private = usable(&d)
                    && std::fs::symlink_metadata(&d)
                        .is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o077 == 0);
                private.then_some(d)
            }
        }
    })
    .clone()
}

/// A sealing key.
pub struct SealKey([u8; 32]);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

/// The seal of a record: a MAC per field, by field name.
pub type Seal = BTreeMap<String, String>;

impl SealKey {
    /// The user's key, made when there is none yet (see the module docs).
    pub fn load_or_create() -> io::Result<SealKey> {
        let dir = seal_key_dir().ok_or_else(|| {
            io::Error::other("neither AIS_STATE_DIR, XDG_STATE_HOME nor HOME is set")
        })?;
        SealKey::at(&dir)
    }

    /// The key in `dir`, made when there is none yet.
    pub fn at(dir: &Path) -> io::Result<SealKey> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let path = dir.join(KEY_FILE);
        match SealKey::read(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path);
        match made {
            Ok(mut f) => {
                f.write_all(hex(&bytes).as_bytes())?;
                f.sync_all()?;
                Ok(SealKey(bytes))
            }
            // Another process made it first: use theirs.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => SealKey::read(&path),
            Err(e) => Err(e),
        }
    }

    fn read(path: &Path) -> io::Result<SealKey> {
        let meta = std::fs::symlink_metadata(path)?;
        if !meta.file_type().is_file() {
            return Err(io::Error::other(format!(
                "{} is not a regular file (a symbolic link?); remove it",
                path.display()
            )));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(io::Error::other(format!(
                "{} is readable by other users (mode {:o}); `chmod 600` it",
                path.display(),
                meta.permissions().mode() & 0o777
            )));
        }
        let text = ais_core::files::read_regular_text(path, 256).map_err(io::Error::other)?;
        let text = text.trim();
        let mut key = [0u8; 32];
        if text.len() != 64 {
            return Err(io::Error::other(format!(
                "{} is not a sealing key (64 hexadecimal digits)",
                path.display()
            )));
        }
        for (i, b) in key.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
                .map_err(|_| io::Error::other(format!("{} is not hexadecimal", path.display())))?;
        }
        Ok(SealKey(key))
    }

    fn mac(&self, record: &str, field: &str, value: &serde_json::Value) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.0).expect("any key length");
        for part in [record.as_bytes(), b"\0", field.as_bytes(), b"\0"] {
            m.update(part);
        }
        m.update(value.to_string().as_bytes());
        hex(&m.finalize().into_bytes())
    }

    /// Seals `fields` of the record named `record` (a run's id).
    pub fn seal(&self, record: &str, fields: &[(&str, serde_json::Value)]) -> Seal {
        fields
            .iter()
            .map(|(name, v)| ((*name).to_owned(), self.mac(record, name, v)))
            .collect()
    }

    /// Checks `fields` against `seal`: `Err` with the first field whose value is not the one
    /// sealed (or that the seal does not cover).
    pub fn check(
        &self,
        record: &str,
        fields: &[(&str, serde_json::Value)],
        seal: &Seal,
    ) -> Result<(), String> {
        for (name, v) in fields {
            let want = self.mac(record, name, v);
            let ok = seal.get(*name).is_some_and(|got| {
                // Constant time: the comparison does not say how much of the MAC matched.
                got.len() == want.len()
                    && got
                        .bytes()
                        .zip(want.bytes())
                        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                        == 0
            });
            if !ok {
                return Err((*name).to_owned());
            }
        }
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_changed_field_is_named_and_the_key_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let key = SealKey::at(dir.path()).unwrap();
        let fields = [("out", json!("/a")), ("model", json!("openai:x"))];
        let seal = key.seal("run-1", &fields);
        assert_eq!(key.check("run-1", &fields, &seal), Ok(()));
        let moved = [("out", json!("/elsewhere")), ("model", json!("openai:x"))];
        assert_eq!(key.check("run-1", &moved, &seal), Err("out".into()));
        // The seal of one run is no seal of another.
        assert_eq!(key.check("run-2", &fields, &seal), Err("out".into()));
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // The same key is read back; another directory's key seals differently.
        let again = SealKey::at(dir.path()).unwrap();
        assert_eq!(again.check("run-1", &fields, &seal), Ok(()));
        let other = tempfile::tempdir().unwrap();
        let theirs = SealKey::at(other.path()).unwrap();
        assert_eq!(theirs.check("run-1", &fields, &seal), Err("out".into()));
    }

    #[test]
    fn a_key_file_that_is_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("planted");
        std::fs::write(&elsewhere, "0".repeat(64)).unwrap();
        let keys = dir.path().join("keys");
        std::fs::create_dir(&keys).unwrap();
        std::os::unix::fs::symlink(&elsewhere, keys.join(KEY_FILE)).unwrap();
        let e = SealKey::at(&keys).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}

//! Bundle references: the sibling files a skill names, found in its text and read within
//! bounds from the skill's directory.
//!
//! # What counts as a reference
//!
//! - a **link or image** destination that is relative: no URL scheme, not `#fragment`, not
//!   `//host`; its `#fragment` and `?query` are dropped;
//! - a **code span** that is path-like: only letters, digits and `._/~-`, not starting with
//!   `-`, not ending with `/`, and either holding a `/` or ending with a known file extension
//!   ([`EXTENSIONS`]) — `` `scripts/check.py` ``, `` `cleaned.csv` ``;
//! - a **word of prose** or a word **inside a code block** that is a path with a known
//!   extension (`REFERENCE.md`, `scripts/check.py`; in code, only with a `/`), or that starts
//!   with `./`, `../` or `~/`. A word preceded by `:`, `/`, `@` or a letter is part of a URL or an
//!   address, not a path.
//!
//! # How one is resolved
//!
//! Every target is first resolved lexically, with no file-system access: an absolute path, a
//! `~` path, a Windows drive or a `..` that climbs out of the skill's directory is
//! [`Refusal::Outside`]. An inside path is then looked up in the skill's directory: absent is
//! [`Status::Missing`] (a skill names its outputs too — `cleaned.csv` — so that is not an
//! error); present, it must resolve (symbolic links followed) to a path still inside the
//! directory, be a regular text file within [`Limits`]'s size, and fit in the bundle's total
//! and file-count bounds — else it is refused, named. A skill read from text with no directory
//! lists its references without reading them.

use crate::input::{InputError, Limits, read_bounded};
use crate::markdown::{Document, RefForm};
use crate::text::{LineIndex, Span};
use regex::Regex;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

/// The file extensions that make a word a path.
pub const EXTENSIONS: &[&str] = &[
    "md", "markdown", "txt", "rst", "py", "sh", "bash", "js", "mjs", "ts", "json", "yaml", "yml",
    "toml", "csv", "tsv", "xml", "html", "css", "sql", "ini", "cfg", "j2", "jinja", "tmpl",
    "template", "rb", "go", "rs", "agir", "pdf", "png", "docx", "xlsx",
];

/// Why a reference was not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "refused")]
pub enum Refusal {
    /// It lies outside the skill's directory.
    #[error(
        "outside the skill's directory ({why}); a skill may reference only files beside it or below it"
    )]
    Outside {
        /// How (`absolute path`, `climbs out with ..`, `a symbolic link out`).
        why: String,
    },
    /// It is larger than a sibling file may be.
    #[error("larger than the {limit} bytes a sibling file may have")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// It is not text.
    #[error("binary content ({what}) at {line}:{column}")]
    Binary {
        /// What was found.
        what: String,
        /// Its line.
        line: u32,
        /// Its column.
        column: u32,
    },
    /// It is not a regular file.
    #[error("not a regular file (a directory, FIFO, device or socket)")]
    NotRegularFile,
    /// The bundle's bounds are reached.
    #[error("the bundle is full ({limit}); this file was not read")]
    BundleFull {
        /// Which bound (`64 files`, `2097152 bytes`).
        limit: String,
    },
    /// It could not be read.
    #[error("cannot read it: {message}")]
    Io {
        /// The system's error.
        message: String,
    },
}

/// What became of a reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Status {
    /// It was read: [`Bundle::files`] holds its text.
    Read {
        /// Its path, relative to the skill's directory.
        path: String,
        /// Its size.
        bytes: usize,
    },
    /// No such file in the skill's directory (an output the skill names, or a placeholder).
    Missing {
        /// Its path, relative to the skill's directory.
        path: String,
    },
    /// Not read: the skill has no directory (it was given as text).
    NotRead,
    /// Refused.
    Refused {
        /// Why.
        #[serde(flatten)]
        refusal: Refusal,
    },
}

/// One file the skill names.
#[derive(Clone, Debug, Serialize)]
pub struct Reference {
    /// The target as written.
    pub target: String,
    /// How it is written.
    pub form: RefForm,
    /// Where it is first named.
    pub span: Span,
    /// How many times it is named.
    pub mentions: usize,
    /// What became of it.
    #[serde(flatten)]
    pub status: Status,
}

/// A sibling file that was read.
#[derive(Clone, Debug, Serialize)]
pub struct BundleFile {
    /// Its path, relative to the skill's directory.
    pub path: String,
    /// Its text.
    pub text: String,
}

/// The files a skill names.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Bundle {
    /// Every reference, in order of first mention.
    pub references: Vec<Reference>,
    /// The files read.
    pub files: Vec<BundleFile>,
}

impl Bundle {
    /// The refused references.
    pub fn refused(&self) -> impl Iterator<Item = (&Reference, &Refusal)> {
        self.references.iter().filter_map(|r| match &r.status {
            Status::Refused { refusal } => Some((r, refusal)),
            _ => None,
        })
    }
}

static PATH_WORD: LazyLock<Regex> = LazyLock::new(|| {
    let ext = EXTENSIONS.join("|");
    Regex::new(&format!(
        r"(?:(?:~|\.\.?)/[A-Za-z0-9_./~-]+|(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:{ext}))\b"
    ))
    .expect("regex")
});

fn has_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && EXTENSIONS.contains(&ext.to_lowercase().as_str())
    })
}

fn path_like(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && !word.ends_with('/')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/~-".contains(c))
        && word.chars().any(|c| c.is_ascii_alphabetic())
        && (word.contains('/') || has_extension(word))
}

fn link_target(dest: &str) -> Option<String> {
    let dest = dest.trim();
    let scheme = dest.split_once(':').is_some_and(|(s, _)| {
        s.len() > 1
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    if dest.is_empty() || dest.starts_with('#') || dest.starts_with("//") || scheme {
        return None;
    }
    let path = dest.split(['#', '?']).next().unwrap_or("");
    (!path.is_empty()).then(|| path.to_owned())
}

/// Resolves `target` lexically inside the skill's directory: the clean relative path, or why
/// it lies outside.
pub fn resolve_lexically(target: &str) -> Result<PathBuf, Refusal> {
    let outside = |why: &str| Refusal::Outside {
        why: why.to_owned(),
    };
    if target.contains('\0') {
        return Err(outside("a NUL byte in the path"));
    }
    if target.starts_with('/') || target.starts_with('\\') {
        return Err(outside("an absolute path"));
    }
    if target.starts_with('~') {
        return Err(outside("a home-directory path"));
    }
    let b = target.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return Err(outside("a drive path"));
    }
    let mut clean: Vec<&str> = Vec::new();
    for part in target.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if clean.pop().is_none() {
                    return Err(outside("it climbs out with .."));
                }
            }
            p => clean.push(p),
        }
    }
    if clean.is_empty() {
        return Err(outside("it names the directory itself"));
    }
    Ok(clean.iter().collect())
}

fn candidates(doc: &Document, text: &str, lines: &LineIndex) -> Vec<(String, RefForm, Span)> {
    let mut out = Vec::new();
    for r in &doc.refs {
        let span_of = |a: usize, b: usize| lines.span(text, a, b);
        match r.form {
            RefForm::Link => {
                if let Some(t) = link_target(&r.text) {
                    out.push((t, r.form, span_of(r.source.start, r.source.end)));
                }
            }
            RefForm::CodeSpan => {
                if path_like(&r.text) {
                    out.push((
                        r.text.clone(),
                        r.form,
                        span_of(r.source.start, r.source.end),
                    ));
                }
            }
            RefForm::Prose | RefForm::Code => {
                for m in PATH_WORD.find_iter(&r.text) {
                    let before = r.text[..m.start()].chars().next_back();
                    if before.is_some_and(|c| c.is_alphanumeric() || ":/@".contains(c)) {
                        continue;
                    }
                    let word = m.as_str().trim_end_matches('.');
                    let relative = ["./", "../", "~/"].iter().any(|p| word.starts_with(p));
                    if r.form == RefForm::Code && !word.contains('/') {
                        continue;
                    }
                    if !relative && !has_extension(word) {
                        continue;
                    }
                    let (a, b) = if r.exact {
                        (
                            r.source.start + m.start(),
                            r.source.start + m.start() + word.len(),
                        )
                    } else {
                        (r.source.start, r.source.end)
                    };
                    out.push((word.to_owned(), r.form, span_of(a, b)));
                }
            }
        }
    }
    out.sort_by_key(|c| c.2.start);
    out
}

/// Finds the references of `doc` (the markdown of `text`) and reads them from `dir`, the
/// skill's directory, within `limits`.
pub fn collect(
    doc: &Document,
    text: &str,
    lines: &LineIndex,
    dir: Option<&Path>,
    limits: &Limits,
) -> Bundle {
    let mut bundle = Bundle::default();
    let mut total: u64 = 0;
    let root = dir.map(|d| d.canonicalize().unwrap_or_else(|_| d.to_owned()));
    for (target, form, span) in candidates(doc, text, lines) {
        let clean = resolve_lexically(&target);
        let key = clean
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| target.clone());
        if let Some(seen) = bundle.references.iter_mut().find(|r| {
            r.target == target
                || resolve_lexically(&r.target).is_ok_and(|p| p.to_string_lossy() == key.as_str())
        }) {
            seen.mentions += 1;
            continue;
        }
        let status = match (clean, &root) {
            (Err(refusal), _) => Status::Refused { refusal },
            (Ok(_), None) => Status::NotRead,
            (Ok(rel), Some(root)) => {
                let (status, read) = read_one(root, &rel, limits, &mut total, bundle.files.len());
                if let (Status::Read { path, .. }, Some(text)) = (&status, read) {
                    bundle.files.push(BundleFile {
                        path: path.clone(),
                        text,
                    });
                }
                status
            }
        };
        bundle.references.push(Reference {
            target,
            form,
            span,
            mentions: 1,
            status,
        });
    }
    bundle
}

fn read_one(
    root: &Path,
    rel: &Path,
    limits: &Limits,
    total: &mut u64,
    files: usize,
) -> (Status, Option<String>) {
    let shown = rel.to_string_lossy().into_owned();
    let path = root.join(rel);
    let refused = |refusal| (Status::Refused { refusal }, None);
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (Status::Missing { path: shown }, None);
        }
        Err(e) => {
            return refused(Refusal::Io {
                message: e.to_string(),
            });
        }
    };
    if !real.starts_with(root) || real.components().any(|c| c == Component::ParentDir) {
        return refused(Refusal::Outside {
            why: "a symbolic link out".to_owned(),
        });
    }
    if files >= limits.max_bundle_files {
        return refused(Refusal::BundleFull {
            limit: format!("{} files", limits.max_bundle_files),
        });
    }
    match read_bounded(&real, limits.max_file_bytes, "sibling file") {
        Ok(text) => {
            let bytes = text.len() as u64;
            if *total + bytes > limits.max_bundle_bytes {
                return refused(Refusal::BundleFull {
                    limit: format!("{} bytes in all", limits.max_bundle_bytes),
                });
            }
            *total += bytes;
            (
                Status::Read {
                    path: shown,
                    bytes: text.len(),
                },
                Some(text),
            )
        }
        Err(InputError::TooLarge { limit, .. }) => refused(Refusal::TooLarge { limit }),
        Err(InputError::NotRegularFile { .. }) => refused(Refusal::NotRegularFile),
        Err(InputError::Binary {
            what, line, column, ..
        }) => refused(Refusal::Binary { what, line, column }),
        Err(InputError::Io { source, .. }) => refused(Refusal::Io {
            message: source.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_resolution_refuses_escapes() {
        assert_eq!(
            resolve_lexically("scripts/check.py").unwrap(),
            PathBuf::from("scripts/check.py")
        );
        assert_eq!(
            resolve_lexically("./a/../b.md").unwrap(),
            PathBuf::from("b.md")
        );
        for bad in [
            "../../etc/passwd",
            "/etc/passwd",
            "~/.ssh/id_rsa",
            "a/../../x",
            "C:\\x",
            "..\\..\\x",
            ".",
        ] {
            assert!(
                matches!(resolve_lexically(bad), Err(Refusal::Outside { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn link_targets() {
        assert_eq!(link_target("FORMS.md#top").as_deref(), Some("FORMS.md"));
        assert_eq!(link_target("https://x.org/a.md"), None);
        assert_eq!(link_target("mailto:a@b"), None);
        assert_eq!(link_target("#section"), None);
        assert_eq!(
            link_target("../../etc/passwd").as_deref(),
            Some("../../etc/passwd")
        );
    }
}

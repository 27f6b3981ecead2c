//! What the audit reads out of text: bundle files a quote names, whether a tool body writes a
//! file, whether a text names another, and quotes compared with their whitespace normalized.

/// The sub-directories of a skill bundle whose files a rule names ("Run `scripts/check.py`").
const BUNDLE_DIRS: [&str; 7] = [
    "scripts/",
    "references/",
    "templates/",
    "examples/",
    "assets/",
    "data/",
    "bin/",
];

/// Extensions of the files a bundle holds.
const BUNDLE_EXTENSIONS: [&str; 15] = [
    "py", "sh", "js", "ts", "md", "json", "yaml", "yml", "csv", "txt", "docx", "xlsx", "pptx",
    "rst", "toml",
];

/// A file a text names, and whether it is in one of the bundle's sub-directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FileRef {
    /// The path as written (`scripts/check.py`, `forms.md`).
    pub path: String,
    /// True for a path under a bundle sub-directory (`scripts/`, `references/`, …).
    pub in_bundle_dir: bool,
}

impl FileRef {
    /// The file's name without its directories.
    pub fn base(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The file's name without directories or extension (`check` for `scripts/check.py`).
    pub fn stem(&self) -> &str {
        let base = self.base();
        base.rsplit_once('.').map_or(base, |(s, _)| s)
    }

    /// True when an element's name is this file's: its stem, its name (`check.py`, or
    /// `check_py` as an identifier), or its path.
    pub fn names(&self, name: &str) -> bool {
        name == self.stem()
            || name == self.base()
            || name == self.path
            || name == self.base().replace(['.', '-'], "_")
    }
}

/// The relative file paths a text names, each once, in order: a token with a bundle extension
/// that is not a URL. `./x` is read as `x`.
pub(super) fn files_named(text: &str) -> Vec<FileRef> {
    let mut out: Vec<FileRef> = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || "()[]{}<>\"'`,;|=".contains(c)) {
        if raw.contains("://") {
            continue;
        }
        let token = raw
            .trim_end_matches(['.', ':', '!', '?'])
            .trim_start_matches("./");
        let Some((name, ext)) = token.rsplit_once('.') else {
            continue;
        };
        let ext_ok = BUNDLE_EXTENSIONS
            .iter()
            .any(|e| ext.eq_ignore_ascii_case(e));
        let name_ok = !name.is_empty()
            && !name.ends_with('/')
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "_-./".contains(c))
            && !name.starts_with('/');
        if !ext_ok || !name_ok || out.iter().any(|f| f.path == token) {
            continue;
        }
        out.push(FileRef {
            path: token.to_owned(),
            in_bundle_dir: BUNDLE_DIRS.iter().any(|d| token.starts_with(d)),
        });
    }
    out
}

/// Where `text` names `name` as a word (not inside a longer identifier): each occurrence's
/// byte offset.
fn word_hits<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    std::iter::from_fn(move || {
        if name.is_empty() {
            return None;
        }
        while let Some(at) = text[from..].find(name) {
            let start = from + at;
            let end = start + name.len();
            from = end;
            let before = text[..start].chars().next_back();
            let after = text[end..].chars().next();
            if !before.is_some_and(word) && !after.is_some_and(word) {
                return Some(start);
            }
        }
        None
    })
}

/// True when `text` names `name` as a word: not inside a longer identifier or path.
pub(super) fn mentions(text: &str, name: &str) -> bool {
    word_hits(text, name).next().is_some()
}

/// True when `text` names the file `name` as a word — and, when the mention is qualified by a
/// directory (`other-skill/SKILL.md`), that directory is `own_dir`, the source's own: a
/// qualified mention of another directory's file of the same name names another file.
pub(super) fn mentions_file(text: &str, name: &str, own_dir: Option<&str>) -> bool {
    let part = |c: char| c.is_alphanumeric() || "_-.".contains(c);
    word_hits(text, name).any(|start| {
        let head = &text[..start];
        let Some(sep) = head.chars().next_back().filter(|c| matches!(c, '/' | '\\')) else {
            return true;
        };
        let head = &head[..start - sep.len_utf8()];
        let from = head
            .char_indices()
            .rev()
            .find(|(_, c)| !part(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let dir = &head[from..];
        dir.is_empty() || dir == "." || Some(dir) == own_dir
    })
}

/// Calls and methods that write a file (or copy or move one) in the bodies tools are written
/// with (Python, Rust).
const WRITE_CALLS: [&str; 27] = [
    ".write(",
    ".writelines(",
    ".write_text(",
    ".write_bytes(",
    ".writestr(",
    "json.dump(",
    "yaml.dump(",
    "yaml.safe_dump(",
    "pickle.dump(",
    "toml.dump(",
    ".to_csv(",
    ".to_excel(",
    ".to_json(",
    ".to_parquet(",
    ".to_html(",
    ".savefig(",
    ".save(",
    "np.save",
    "imwrite(",
    "imsave(",
    "shutil.copy",
    "shutil.move",
    "os.replace(",
    "os.rename(",
    "fs::write(",
    "File::create(",
    "fs::copy(",
];

/// True when a tool body writes a file: a write call, or `open(…)` with a mode that writes.
pub(super) fn body_writes(body: &str) -> bool {
    if WRITE_CALLS.iter().any(|c| body.contains(c)) {
        return true;
    }
    body.lines().any(|line| {
        line.match_indices("open(")
            .any(|(at, _)| opens_for_writing(&line[at + "open(".len()..]))
    })
}

/// True when the arguments of an `open(` (the rest of its line) hold a mode string that writes:
/// a string literal of mode letters containing `w`, `a` or `x`.
fn opens_for_writing(args: &str) -> bool {
    let mut rest = args;
    while let Some(q) = rest.find(['"', '\'']) {
        let quote = rest[q..].chars().next().unwrap_or('"');
        let after = &rest[q + 1..];
        let Some(end) = after.find(quote) else {
            return false;
        };
        let literal = &after[..end];
        let is_mode = !literal.is_empty()
            && literal.len() <= 3
            && literal.chars().all(|c| "rwaxbt+".contains(c));
        if is_mode && literal.contains(['w', 'a', 'x']) {
            return true;
        }
        rest = &after[end + 1..];
    }
    false
}

/// A text with every run of whitespace made one space, trimmed: how quotes are compared with
/// their source (a quote that wraps differently is still verbatim).
pub(super) fn normalize_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `sha256:<hex>` digest of a text's bytes.
pub(super) fn digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// True for a digest spelled `sha256:` and 64 hex digits.
pub(super) fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_files_are_found_and_urls_are_not() {
        let files = files_named(
            "Run `scripts/check.py` then read ./forms.md; see https://x.org/a.md and answer.json.",
        );
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["scripts/check.py", "forms.md", "answer.json"]);
        assert!(files[0].in_bundle_dir);
        assert!(!files[1].in_bundle_dir);
        assert_eq!(files[0].stem(), "check");
        assert_eq!(files[0].base(), "check.py");
        assert!(files_named("version 1.2 of e.g. this").is_empty());
    }

    #[test]
    fn write_idioms_are_writes_and_reads_are_not() {
        for w in [
            "with open(os.path.join(d, \"x.json\"), \"w\") as f:\n    json.dump(r, f)",
            "Path(dest).write_text(body)",
            "df.to_csv(out)",
            "open(p, mode='a').close()",
            "std::fs::write(&path, text)?;",
            "shutil.copy2(a, b)",
        ] {
            assert!(body_writes(w), "{w}");
        }
        for r in [
            "with open(p) as f:\n    return f.read()",
            "return json.dumps(rows)",
            "fh = open(p, \"r\")\nreturn fh.read()",
            "d = furthest(a, b)\nreturn \"id=%s\" % d[\"id\"]",
        ] {
            assert!(!body_writes(r), "{r}");
        }
    }

    #[test]
    fn mentions_matches_whole_words_only() {
        assert!(mentions("guard: ok == true", "ok"));
        assert!(!mentions("guard: okay == true", "ok"));
        assert!(mentions("see SKILL.md first", "SKILL.md"));
        assert!(!mentions("", "x"));
    }

    #[test]
    fn a_file_qualified_by_another_directory_is_another_file() {
        // The writing-plans template names the next skill's file: not its own source.
        let t = "use superpowers:executing-plans/skill.md to implement this plan";
        assert!(!mentions_file(t, "skill.md", Some("writing-plans")));
        assert!(!mentions_file(t, "skill.md", None));
        assert!(mentions_file(t, "skill.md", Some("executing-plans")));
        assert!(mentions_file(
            "read skill.md first",
            "skill.md",
            Some("writing-plans")
        ));
        assert!(mentions_file("read ./skill.md first", "skill.md", None));
        assert!(mentions_file(
            "other/skill.md, then skill.md",
            "skill.md",
            Some("mine")
        ));
    }

    #[test]
    fn digests_are_sha256_hex() {
        let d = digest("abc");
        assert_eq!(
            d,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_digest(&d));
        assert!(!is_digest("md5:abc"));
        assert_eq!(normalize_space("  a \n b\tc "), "a b c");
    }
}

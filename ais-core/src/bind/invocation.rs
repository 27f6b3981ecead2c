//! The invocation fallback for paths (spec §7.3): a filename recovered from the task text.
//!
//! The rules are documented on [`invocation_filename`].

use super::Access;

/// The read verbs of §7.3, with their inflections.
const READ_VERBS: [&str; 16] = [
    "read", "reads", "reading", "open", "opens", "opened", "opening", "load", "loads", "loaded",
    "loading", "parse", "parses", "parsed", "parsing", "from",
];

/// The write verbs of §7.3, with their inflections.
const WRITE_VERBS: [&str; 13] = [
    "save",
    "saves",
    "saved",
    "saving",
    "output",
    "outputs",
    "outputting",
    "outputted",
    "write",
    "writes",
    "writing",
    "wrote",
    "written",
];

/// The extensions a bare filename (one no verb claims) must have to count.
pub const BARE_EXTENSIONS: [&str; 52] = [
    "txt", "md", "markdown", "rst", "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "xml",
    "html", "htm", "css", "pdf", "docx", "doc", "xlsx", "xls", "pptx", "odt", "ods", "png", "jpg",
    "jpeg", "gif", "svg", "webp", "py", "rs", "js", "jsx", "ts", "tsx", "go", "java", "c", "h",
    "cpp", "hpp", "sh", "sql", "ipynb", "log", "ini", "cfg", "zip", "gz", "tar", "parquet", "agir",
];

/// Prepositions that renew an earlier write verb's claim in the same sentence.
const WRITE_PREPOSITIONS: [&str; 4] = ["to", "into", "onto", "as"];

/// Single-letter extensions a verb-claimed filename may have.
const ONE_LETTER_EXTENSIONS: [&str; 3] = ["c", "h", "r"];

/// A filename mentioned in invocation text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMention {
    /// The filename as written.
    pub name: String,
    /// Its byte offset in the text.
    pub offset: usize,
    /// The side of the verb that claims it, or `None` for a bare filename.
    pub claim: Option<Access>,
}

/// Every filename in `text`, in order, with the verb side that claims it (see the module
/// documentation for what counts).
pub fn filename_mentions(text: &str) -> Vec<FileMention> {
    let mut out = Vec::new();
    // The verb waiting for its filename in the current sentence.
    let mut pending: Option<Access> = None;
    // Whether a write verb has appeared in the current sentence.
    let mut wrote = false;
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if !is_token_char(c) {
            chars.next();
            let next = chars.peek().map(|&(_, n)| n);
            if c == ';'
                || c == '\n'
                || (matches!(c, '!' | '?') && next.is_none_or(char::is_whitespace))
            {
                pending = None;
                wrote = false;
            }
            continue;
        }
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if !is_token_char(c) {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        let raw = text.get(start..end).unwrap_or("");
        let token = raw.trim_end_matches('.');
        let sentence_ends = token.len() < raw.len()
            && text
                .get(end..)
                .and_then(|r| r.chars().next())
                .is_none_or(char::is_whitespace);
        let lower = token.to_ascii_lowercase();
        if WRITE_VERBS.contains(&lower.as_str()) {
            pending = Some(Access::Write);
            wrote = true;
        } else if wrote && WRITE_PREPOSITIONS.contains(&lower.as_str()) {
            pending = Some(Access::Write);
        } else if READ_VERBS.contains(&lower.as_str()) {
            pending = Some(Access::Read);
        } else {
            let url =
                text.get(..start).is_some_and(|b| b.ends_with(':')) && token.starts_with("//");
            if !url && let Some(ext) = extension(token) {
                let claim = pending.take();
                let ok = match claim {
                    Some(_) => ext.len() > 1 || ONE_LETTER_EXTENSIONS.contains(&ext.as_str()),
                    None => BARE_EXTENSIONS.contains(&ext.as_str()),
                };
                if ok {
                    out.push(FileMention {
                        name: token.to_owned(),
                        offset: start,
                        claim,
                    });
                } else {
                    pending = claim;
                }
            }
        }
        if sentence_ends {
            pending = None;
            wrote = false;
        }
    }
    out
}

/// The filename the invocation fallback of §7.3 recovers from `text` for an instruction on
/// side `access`, or `None` when the text names none.
///
/// The text is read as a sequence of words and filenames, sentence by sentence. A **verb**
/// claims the first filename that follows it in the same sentence, unless another verb comes
/// first: the write verbs are *save*, *output* and *write*, the read verbs *read*, *open*,
/// *load*, *parse* and *from* (each in its inflected forms: *saved*, *writes*, *loading*, …;
/// case-insensitive). After a write verb, the prepositions *to*, *into*, *onto* and *as* renew
/// its claim for the rest of the sentence, so in "save the report from input.md to report.html"
/// `from` claims `input.md` and `to` hands `report.html` back to `save`. A filename no verb
/// claims is **bare**.
///
/// - A **write** takes the first filename claimed by a write verb, else the first bare filename.
/// - A **read** takes the first filename claimed by a read verb, else the first bare filename.
///
/// A bare filename whose name the other side claims elsewhere in the text is skipped, so a
/// reader never picks the file a writer was told to produce ("skipping any filename already
/// claimed by a write", §7.3) and a writer never picks a file the text says to read.
///
/// ```
/// use ais_core::bind::{invocation_filename, Access};
/// let task = "clean data.csv and save as out.csv";
/// assert_eq!(invocation_filename(task, Access::Read).as_deref(), Some("data.csv"));
/// assert_eq!(invocation_filename(task, Access::Write).as_deref(), Some("out.csv"));
/// ```
///
/// **What is a filename.** A run of letters, digits and `_ . ~ / -` whose last segment (after
/// the last `/`) is a stem ending in a letter, digit or `_`, a dot, and an extension of one to
/// five ASCII letters or digits with at least one letter. Sentence-ending dots are not part of
/// it, and a `//…` run right after a `:` is a URL, not a path. A bare filename must also have a
/// common file extension ([`BARE_EXTENSIONS`]) — this keeps `e.g.`, `v1.2` and `Mr.Smith`-like
/// words out of the fallback; one that a verb claims may have any extension except a single
/// letter other than `c`, `h` or `r`.
///
/// Sentences end at `.`, `!` or `?` followed by a space or the end of the text, at `;`, and at a
/// line break.
///
/// The filename is returned as written; confining a write's destination to the run's output
/// root (§4.2.2) is the runtime's job.
pub fn invocation_filename(text: &str, access: Access) -> Option<String> {
    let mentions = filename_mentions(text);
    let other = match access {
        Access::Read => Access::Write,
        Access::Write => Access::Read,
    };
    let claimed_by_other = |name: &str| {
        mentions
            .iter()
            .any(|m| m.claim == Some(other) && m.name == name)
    };
    mentions
        .iter()
        .find(|m| m.claim == Some(access))
        .or_else(|| {
            mentions
                .iter()
                .find(|m| m.claim.is_none() && !claimed_by_other(&m.name))
        })
        .map(|m| m.name.clone())
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '~' | '/' | '-')
}

/// The lowercased extension of `token` when it has a filename's shape.
fn extension(token: &str) -> Option<String> {
    let base = token.rsplit('/').next().unwrap_or(token);
    let (stem, ext) = base.rsplit_once('.')?;
    let stem_ok = stem
        .chars()
        .last()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
        && stem.chars().any(char::is_alphanumeric);
    let ext_ok = (1..=5).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic());
    (stem_ok && ext_ok).then(|| ext.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(t: &str) -> Option<String> {
        invocation_filename(t, Access::Read)
    }
    fn write(t: &str) -> Option<String> {
        invocation_filename(t, Access::Write)
    }

    #[test]
    fn the_spec_example_splits_reader_and_writer() {
        let t = "clean data.csv and save as out.csv";
        assert_eq!(read(t).as_deref(), Some("data.csv"));
        assert_eq!(write(t).as_deref(), Some("out.csv"));
        let m = filename_mentions(t);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].offset, m[0].claim), (6, None));
        assert_eq!((m[1].offset, m[1].claim), (27, Some(Access::Write)));
    }

    #[test]
    fn read_verbs_claim_their_file_and_writes_do_not_take_it() {
        let t = "Read notes.md, then write the summary to summary.md.";
        assert_eq!(read(t).as_deref(), Some("notes.md"));
        assert_eq!(write(t).as_deref(), Some("summary.md"));
        let t = "save the report from input.md to report.html";
        assert_eq!(read(t).as_deref(), Some("input.md"));
        assert_eq!(write(t).as_deref(), Some("report.html"));
        let t = "save results from the analysis to out.csv";
        assert_eq!(read(t), None);
        assert_eq!(write(t).as_deref(), Some("out.csv"));
        // `to` renews only a write verb's claim.
        let t = "read the config from settings.json to learn the port";
        assert_eq!(read(t).as_deref(), Some("settings.json"));
        let t = "go to page.html";
        assert_eq!(filename_mentions(t)[0].claim, None);
        let t = "Load the rows FROM /data/in.json and OUTPUT them";
        assert_eq!(read(t).as_deref(), Some("/data/in.json"));
        // The only filename is claimed by a read: a writer must not overwrite it.
        assert_eq!(write(t), None);
    }

    #[test]
    fn a_write_verb_takes_the_next_filename_even_far_away() {
        let t = "please save everything we discussed earlier today into ./out/final_report.md";
        assert_eq!(write(t).as_deref(), Some("./out/final_report.md"));
        assert_eq!(read(t), None);
    }

    #[test]
    fn a_reader_skips_a_name_claimed_by_a_write_elsewhere() {
        let t = "write out.csv. Later, mention out.csv again";
        assert_eq!(read(t), None);
        assert_eq!(write(t).as_deref(), Some("out.csv"));
    }

    #[test]
    fn sentences_stop_a_verb_from_reaching_on() {
        let t = "Save it! Then tidy data.csv";
        let m = filename_mentions(t);
        assert_eq!(m[0].claim, None);
        let t = "save the notes; rows.csv is input";
        assert_eq!(filename_mentions(t)[0].claim, None);
        // A dot inside a filename does not end a sentence; one after it does.
        let t = "write out.csv. a.md";
        let m = filename_mentions(t);
        assert_eq!(m[0].name, "out.csv");
        assert_eq!(m[1].claim, None);
    }

    #[test]
    fn not_every_dotted_word_is_a_filename() {
        assert_eq!(read("use e.g. version 1.2 of the tool"), None);
        assert_eq!(read("fetch https://example.com/a.csv"), None);
        assert_eq!(read("see Mr.Smith"), None);
        // A verb-claimed name may carry any plausible extension; a bare one needs a common one.
        assert_eq!(read("open plot.R").as_deref(), Some("plot.R"));
        assert_eq!(read("tidy plot.Rmdx"), None);
        assert_eq!(read("load main.c").as_deref(), Some("main.c"));
        assert_eq!(read("load a.q"), None);
        assert_eq!(read(".env and ..").as_deref(), None);
    }

    #[test]
    fn inflections_and_case_count() {
        assert_eq!(
            write("it should be WRITTEN to x.txt").as_deref(),
            Some("x.txt")
        );
        assert_eq!(read("after loading cfg.toml").as_deref(), Some("cfg.toml"));
        assert_eq!(
            write("Saving as `result.json`").as_deref(),
            Some("result.json")
        );
    }

    #[test]
    fn nothing_found_is_none_and_odd_text_never_panics() {
        assert_eq!(read(""), None);
        assert_eq!(write("say hello"), None);
        for t in [
            "...",
            "é.é",
            "/.",
            "a/",
            "save .",
            "from\u{0}x.csv",
            "ü.csvx",
            "x.",
            ".x",
        ] {
            let _ = filename_mentions(t);
        }
    }
}

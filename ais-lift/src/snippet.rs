//! The snippet sort: each code block of a skill is either a **tool body** the runtime can run
//! (its text becomes a tool, run verbatim) or **embodied knowledge** (an example, an output
//! sample, a template, a config — reference text a model slot reads). Decided by code, by these
//! rules, in order; the first that applies decides:
//!
//! 1. **Empty** — a block with no statement (only blank lines and comments) is knowledge.
//! 2. **Language** — from the info string's first word, or else from a `#!` line. The runtime
//!    runs Python (`python`, `py`, `python3`) and shell scripts under bash (`bash`, `sh`,
//!    `shell`). No language at all is knowledge (an untagged block is as often output as code);
//!    any other language (`json`, `yaml`, `markdown`, `text`, `console`, `zsh`, …) is
//!    knowledge.
//! 3. **Illustrative context** — a block under a heading that names a demonstration
//!    (`## Examples`, see [`crate::structure::ILLUSTRATIVE_HEADINGS`]), or introduced by the
//!    line just before it when that line ends with `:` and is an example marker (`e.g.`,
//!    `for example`, `for instance`, `such as`) or names an example, sample, output or template
//!    ("Expected output:", "Example:"), is knowledge.
//! 4. **Transcript** — a line that starts with a prompt (`>>> ` in Python, `$ ` in shell) makes
//!    the block a session transcript: knowledge.
//! 5. **Elision** — a line that is only `...`, `…`, or a comment of them (`# ...`) marks elided
//!    code: knowledge.
//! 6. **Placeholder** — a template slot makes the block a template: `<name>` (letters, digits,
//!    `_`, `-` between angle brackets) in shell, and in either language `path/to/`, `YYYY`,
//!    `{{…}}`, `TODO`, `FIXME`, or a word starting `your_`, `your-`, `YOUR_`.
//! 7. Otherwise the block is a **tool body** in its language.
//!
//! A Python block made only of definitions is a tool body: the runtime calls its `run`, or its
//! last `def` (see `ais-rt`'s Python tools). What the sort cannot see is a name a snippet uses
//! and never defines (`function(input)` in a test template): a model flow that sees the prose
//! may still take such a body as knowledge, but not the other way round without a recorded
//! reason.

use crate::deontic::{self, Marks};
use crate::markdown::{BlockKind, Document, Scope};
use crate::structure::illustrative_word;
use crate::text::Span;
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// A language the runtime runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Runtime {
    /// Python 3 (`python3`).
    Python,
    /// A shell script, run under bash.
    Shell,
}

/// Why a block is knowledge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Why {
    /// Rule 1: it holds no statement.
    Empty,
    /// Rule 2: it names no language.
    NoLanguage,
    /// Rule 2: its language is not one the runtime runs.
    NotRunnable {
        /// The language.
        language: String,
    },
    /// Rule 3: its context says it is an example.
    Illustrative {
        /// The heading or intro that says so.
        context: String,
    },
    /// Rule 4: it is a session transcript.
    Transcript {
        /// The skill line of the first prompt.
        line: u32,
    },
    /// Rule 5: code is elided in it.
    Elided {
        /// The skill line of the elision.
        line: u32,
    },
    /// Rule 6: it is a template.
    Placeholder {
        /// The skill line of the first placeholder.
        line: u32,
        /// The placeholder.
        text: String,
    },
}

/// How a block was sorted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "sort")]
pub enum Sort {
    /// A body the runtime runs as a tool.
    Tool {
        /// In which language.
        runtime: Runtime,
        /// Whether the language came from a `#!` line rather than the info string.
        shebang: bool,
    },
    /// Knowledge a model slot reads.
    Knowledge {
        /// Why.
        #[serde(flatten)]
        why: Why,
    },
}

/// One code block, sorted.
#[derive(Clone, Debug, Serialize)]
pub struct Snippet {
    /// Its block.
    pub block: usize,
    /// Where it stands, fences included.
    pub span: Span,
    /// Its language, as written (lower case), if any.
    pub language: Option<String>,
    /// The sort.
    #[serde(flatten)]
    pub sort: Sort,
}

fn runtime(language: &str) -> Option<Runtime> {
    match language {
        "python" | "py" | "python3" => Some(Runtime::Python),
        "bash" | "sh" | "shell" => Some(Runtime::Shell),
        _ => None,
    }
}

static ANGLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^<])<[A-Za-z][A-Za-z0-9_-]*>").expect("regex"));
static SLOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"path/to/|YYYY|\{\{[^}]*\}\}|\bTODO\b|\bFIXME\b|\b(your_|your-|YOUR_)")
        .expect("regex")
});

const CONTEXT_WORDS: &[&str] = &["example", "examples", "sample", "output", "template", "e.g"];

/// Sorts every code block of `doc`.
pub fn sort_all(doc: &Document) -> Vec<Snippet> {
    doc.blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b.kind, BlockKind::Code { .. }))
        .map(|(i, _)| sort(doc, i))
        .collect()
}

/// Sorts the code block `block` of `doc`.
///
/// # Panics
///
/// Never for a `block` that indexes `doc.blocks`; a block that is not code sorts as knowledge
/// with no language.
pub fn sort(doc: &Document, block: usize) -> Snippet {
    let b = &doc.blocks[block];
    let info = match &b.kind {
        BlockKind::Code { info, .. } => info.as_str(),
        _ => "",
    };
    let body = b.text.as_str();
    let first_line = b.body.map_or(b.span.line, |s| s.line);
    let tagged = info
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
        .find(|w| !w.is_empty())
        .map(|w| w.trim_start_matches('.').to_lowercase());
    let shebang = body
        .lines()
        .next()
        .filter(|l| l.starts_with("#!"))
        .and_then(|l| {
            if l.contains("python") {
                Some(("python", Runtime::Python))
            } else if l.contains("bash") || l.ends_with("/sh") || l.contains("/sh ") {
                Some(("bash", Runtime::Shell))
            } else {
                None
            }
        });
    let language = tagged
        .clone()
        .or_else(|| shebang.map(|(l, _)| l.to_owned()));
    let snippet = |sort: Sort| Snippet {
        block,
        span: b.span,
        language: language.clone(),
        sort,
    };
    let knowledge = |why: Why| snippet(Sort::Knowledge { why });
    let comment = |l: &str| l.trim_start().starts_with('#');
    if body.lines().all(|l| l.trim().is_empty() || comment(l)) {
        return knowledge(Why::Empty);
    }
    let (rt, from_shebang) = match (&tagged, shebang) {
        (Some(lang), _) => match runtime(lang) {
            Some(rt) => (rt, false),
            None => {
                return knowledge(Why::NotRunnable {
                    language: lang.clone(),
                });
            }
        },
        (None, Some((_, rt))) => (rt, true),
        (None, None) => return knowledge(Why::NoLanguage),
    };
    if let Some(context) = illustrative_context(doc, block) {
        return knowledge(Why::Illustrative { context });
    }
    let line_of = |k: usize| first_line + u32::try_from(k).unwrap_or(u32::MAX);
    let prompt = match rt {
        Runtime::Python => ">>> ",
        Runtime::Shell => "$ ",
    };
    for (k, l) in body.lines().enumerate() {
        if l.trim_start().starts_with(prompt) {
            return knowledge(Why::Transcript { line: line_of(k) });
        }
    }
    for (k, l) in body.lines().enumerate() {
        let t = l.trim().trim_start_matches(['#', '/']).trim();
        if (t == "..." || t == "\u{2026}") && !l.trim().is_empty() {
            return knowledge(Why::Elided { line: line_of(k) });
        }
    }
    for (k, l) in body.lines().enumerate() {
        let hit = SLOT.find(l).map(|m| m.as_str().to_owned()).or_else(|| {
            (rt == Runtime::Shell && !l.contains("<<"))
                .then(|| ANGLE.captures(l))
                .flatten()
                .map(|c| c[0].trim_start_matches(|ch| ch != '<').to_owned())
        });
        if let Some(text) = hit {
            return knowledge(Why::Placeholder {
                line: line_of(k),
                text,
            });
        }
    }
    snippet(Sort::Tool {
        runtime: rt,
        shebang: from_shebang,
    })
}

/// The heading or intro that marks block `block` as an example, if any (rule 3).
fn illustrative_context(doc: &Document, block: usize) -> Option<String> {
    let b = &doc.blocks[block];
    for scope in &b.scopes {
        if let Scope::Heading(h) = *scope
            && illustrative_word(&doc.blocks[h].text).is_some()
        {
            return Some(doc.blocks[h].text.clone());
        }
    }
    let before = block.checked_sub(1).map(|i| &doc.blocks[i])?;
    let text = before.text.trim_end();
    let prose = matches!(
        before.kind,
        BlockKind::Paragraph | BlockKind::ListItem { .. }
    );
    if !prose || !text.ends_with(':') {
        return None;
    }
    let example = deontic::read(text)
        .markers
        .iter()
        .any(|m| m.marks == Marks::Example);
    let lower = text.to_lowercase();
    let named = lower
        .split(|c: char| !c.is_alphanumeric() && c != '.')
        .any(|w| CONTEXT_WORDS.contains(&w.trim_end_matches('.')));
    (example || named).then(|| text.to_owned())
}

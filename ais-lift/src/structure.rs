//! Force from structure: the force a span of the skill states, read by code from its own
//! markers or, when it states none, from the scopes around it. No model is involved.
//!
//! The order, nearest first, and the first that states a force decides:
//!
//! 1. a span inside a **code block** is discretionary: example code is a demonstration, not
//!    a mandate (markers inside code are not read — a comment is not prose). The obligation to
//!    run a script comes from the prose around it.
//! 2. the span's **own markers** (for a quote, the quote's text) — never overridden by what
//!    encloses it;
//! 3. the **sentence** the span is part of, when the span is only part of it ("Always run the
//!    tests" quoted as "run the tests");
//! 4. the **intros** of the lists the span is in, innermost first ("You may optionally:");
//! 5. the **headings** that enclose it, innermost first ("## Required steps"); a heading that
//!    states no marker but names a demonstration (`Example(s)`, `Sample(s)`, `Demo(s)`,
//!    `Demonstration(s)`, `Illustration(s)`) is discretionary.
//!
//! 6. a **procedure step**: the first sentence of a list item whose nearest scope is a
//!    heading or list intro naming a procedure (a word of [`PROCEDURE_WORDS`]: `## Steps`,
//!    `Workflow:`, `### Step 1: Assess`) and that reads as an imperative (its first word is not
//!    one of [`NOT_IMPERATIVE`]: "Read the input file." is a step, "The file is UTF-8." is not)
//!    is mandatory — the list is the procedure. It is the weakest signal, read only when no
//!    scope states a force; `## Examples` or "You may optionally:" above the list decide first.
//!
//! A scope that states more than one force ("## Must-do and optional steps") settles nothing
//! and stops the walk: it is the nearest scope that speaks, and it did not speak with one
//! voice; a scope further out does not override it. Heading words outside the marker tables
//! (`## Recipes`, `## Rules`) settle nothing either.
//!
//! Conditionality is read the same way, from the span, its sentence and its list intros (not
//! from headings: `## When to use` is a heading about routing, not a condition on the steps
//! under it). A list under "**If Subagent-Driven chosen:**" is conditional on that intro.

use crate::deontic::{self, Marks, Stated};
use crate::markdown::{BlockKind, Document, Scope};
use crate::model::Force;
use crate::text::Span;
use serde::Serialize;

/// Where a force was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum Source {
    /// The span inside a code block.
    Fence {
        /// The code block.
        block: usize,
        /// Where it stands.
        span: Span,
    },
    /// The span's own markers.
    Own {
        /// The markers.
        markers: Vec<&'static str>,
    },
    /// The sentence the span is part of.
    Sentence {
        /// Where the sentence stands.
        span: Span,
        /// Its markers.
        markers: Vec<&'static str>,
    },
    /// The intro of a list the span is in.
    ListIntro {
        /// The intro's block.
        block: usize,
        /// Where it stands.
        span: Span,
        /// Its text.
        text: String,
        /// Its markers.
        markers: Vec<&'static str>,
    },
    /// An enclosing heading.
    Heading {
        /// The heading's block.
        block: usize,
        /// Where it stands.
        span: Span,
        /// Its text.
        text: String,
        /// Its markers (a demonstration word when the heading names one).
        markers: Vec<&'static str>,
    },
    /// A step of a procedure list (step 6 of the [module docs](self)).
    Procedure {
        /// The heading or intro that names the procedure.
        block: usize,
        /// Where it stands.
        span: Span,
        /// Its text.
        text: String,
        /// The word that names a procedure.
        word: &'static str,
    },
    /// Nothing around the span states a force.
    Unstated,
}

impl Source {
    /// A one-line description of where the force came from.
    pub fn describe(&self) -> String {
        let quote = |m: &[&str]| {
            m.iter()
                .map(|p| format!("'{p}'"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Source::Fence { span, .. } => format!("code block at {}:{}", span.line, span.column),
            Source::Own { markers } => format!("its own marker {}", quote(markers)),
            Source::Sentence { span, markers } => format!(
                "its sentence at {}:{} ({})",
                span.line,
                span.column,
                quote(markers)
            ),
            Source::ListIntro {
                span,
                text,
                markers,
                ..
            } => format!(
                "list intro \"{text}\" at {}:{} ({})",
                span.line,
                span.column,
                quote(markers)
            ),
            Source::Heading {
                span,
                text,
                markers,
                ..
            } => format!(
                "heading \"{text}\" at {}:{} ({})",
                span.line,
                span.column,
                quote(markers)
            ),
            Source::Procedure {
                span, text, word, ..
            } => format!(
                "a step of the procedure \"{text}\" at {}:{} ('{word}')",
                span.line, span.column
            ),
            Source::Unstated => "nothing states it".to_owned(),
        }
    }
}

/// Where a condition was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Condition {
    /// The marker (`if`, `when`, `e.g.`, …).
    pub marker: &'static str,
    /// Whether it marks an example rather than a condition.
    pub example: bool,
    /// Where: [`Source::Own`], [`Source::Sentence`] or [`Source::ListIntro`].
    pub source: Source,
}

/// The force (and condition) the skill states for a span.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ForceReading {
    /// The force stated.
    #[serde(flatten)]
    pub stated: Stated,
    /// Where it was read.
    pub source: Source,
    /// The condition or example marker that governs it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
}

impl ForceReading {
    /// The single force stated, if exactly one is.
    pub fn force(&self) -> Option<Force> {
        match self.stated {
            Stated::One(f) => Some(f),
            _ => None,
        }
    }
}

/// Heading words that name a demonstration.
pub const ILLUSTRATIVE_HEADINGS: &[&str] = &[
    "example",
    "examples",
    "sample",
    "samples",
    "demo",
    "demos",
    "demonstration",
    "demonstrations",
    "illustration",
    "illustrations",
];

fn force_markers(r: &deontic::Reading) -> Vec<&'static str> {
    r.markers
        .iter()
        .filter(|m| matches!(m.marks, Marks::Force(_)))
        .map(|m| m.phrase)
        .collect()
}

/// The demonstration word a heading's text names, if any.
pub fn illustrative_word(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    lower
        .split(|c: char| !c.is_alphanumeric())
        .find_map(|w| ILLUSTRATIVE_HEADINGS.iter().find(|h| **h == w).copied())
}

/// Reads the force a span states: `text` is the span's text and `span` where it stands.
pub fn read_span(doc: &Document, span: &Span, text: &str) -> ForceReading {
    let Some(block) = doc.block_at(span.start) else {
        let own = deontic::read(text);
        return own_or_unstated(&own, None);
    };
    let b = &doc.blocks[block];
    if matches!(b.kind, BlockKind::Code { .. }) {
        return ForceReading {
            stated: Stated::One(Force::Discretionary),
            source: Source::Fence {
                block,
                span: b.span,
            },
            condition: None,
        };
    }
    let own = deontic::read(text);
    let sentence = doc
        .sentence_at(span.start)
        .filter(|s| !span.contains(&s.span))
        .map(|s| (s.span, deontic::read(&s.text)));
    let condition = condition_of(doc, block, &own, sentence.as_ref());
    if own.stated() != Stated::Nothing {
        return ForceReading {
            stated: own.stated(),
            source: Source::Own {
                markers: force_markers(&own),
            },
            condition,
        };
    }
    if let Some((s_span, reading)) = &sentence
        && reading.stated() != Stated::Nothing
    {
        return ForceReading {
            stated: reading.stated(),
            source: Source::Sentence {
                span: *s_span,
                markers: force_markers(reading),
            },
            condition,
        };
    }
    let (stated, source) = from_scopes(doc, block);
    if stated == Stated::Nothing
        && let Some(source) = procedure_step(doc, block, span.start, text)
    {
        return ForceReading {
            stated: Stated::One(Force::Mandatory),
            source,
            condition,
        };
    }
    ForceReading {
        stated,
        source,
        condition,
    }
}

/// Words that name a procedure, in a heading or list intro.
pub const PROCEDURE_WORDS: &[&str] = &[
    "steps",
    "step",
    "procedure",
    "process",
    "workflow",
    "checklist",
    "instructions",
    "phase",
    "stage",
];

/// First words that make a line a description, not an imperative.
pub const NOT_IMPERATIVE: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "it's",
    "they",
    "their",
    "there",
    "we",
    "our",
    "you",
    "your",
    "i",
    "my",
    "he",
    "she",
    "all",
    "any",
    "some",
    "no",
    "none",
    "each",
    "every",
    "most",
    "many",
    "more",
    "less",
    "one",
    "two",
    "three",
    "if",
    "when",
    "unless",
    "while",
    "whether",
    "for",
    "in",
    "on",
    "at",
    "with",
    "without",
    "by",
    "from",
    "to",
    "of",
    "as",
    "e.g.",
    "i.e.",
    "see",
    "also",
    "note",
    "notes",
    "tip",
    "tips",
    "example",
    "examples",
    "optional",
    "optionally",
    "only",
    "finally",
    "usually",
    "typically",
    "often",
    "generally",
    "maybe",
    "perhaps",
    "here",
    "then",
    "and",
    "or",
    "but",
];

/// Step 6: the procedure that makes the span at `at` (with text `text`) in `block` a step.
fn procedure_step(doc: &Document, block: usize, at: usize, text: &str) -> Option<Source> {
    let b = &doc.blocks[block];
    if !matches!(b.kind, BlockKind::ListItem { .. }) {
        return None;
    }
    // Only the item's first sentence is the step; what follows it describes it.
    let first = doc.first_sentence(block)?;
    if !first.span.covers(at) {
        return None;
    }
    let word = text
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .split(|c: char| c.is_whitespace() || c == ',' || c == ':')
        .next()?
        .to_lowercase();
    if word.is_empty()
        || NOT_IMPERATIVE.contains(&word.as_str())
        || first.text.trim_end().ends_with(':')
    {
        return None;
    }
    let scope = *b.scopes.first()?;
    let (Scope::ListIntro(i) | Scope::Heading(i)) = scope;
    let named = &doc.blocks[i];
    let lower = named.text.to_lowercase();
    let word = lower
        .split(|c: char| !c.is_alphanumeric())
        .find_map(|w| PROCEDURE_WORDS.iter().find(|p| **p == w).copied())?;
    Some(Source::Procedure {
        block: i,
        span: named.span,
        text: named.text.clone(),
        word,
    })
}

fn own_or_unstated(own: &deontic::Reading, condition: Option<Condition>) -> ForceReading {
    let stated = own.stated();
    let source = if stated == Stated::Nothing {
        Source::Unstated
    } else {
        Source::Own {
            markers: force_markers(own),
        }
    };
    ForceReading {
        stated,
        source,
        condition,
    }
}

/// The force the scopes of `block` state (steps 4 and 5 of the [module docs](self)).
pub fn from_scopes(doc: &Document, block: usize) -> (Stated, Source) {
    for scope in &doc.blocks[block].scopes {
        let (i, is_heading) = match *scope {
            Scope::ListIntro(i) => (i, false),
            Scope::Heading(i) => (i, true),
        };
        let b = &doc.blocks[i];
        let reading = deontic::read(&b.text);
        let mut stated = reading.stated();
        let mut markers = force_markers(&reading);
        if stated == Stated::Nothing
            && is_heading
            && let Some(word) = illustrative_word(&b.text)
        {
            stated = Stated::One(Force::Discretionary);
            markers = vec![word];
        }
        if stated == Stated::Nothing {
            continue;
        }
        let (span, text) = (b.span, b.text.clone());
        let source = if is_heading {
            Source::Heading {
                block: i,
                span,
                text,
                markers,
            }
        } else {
            Source::ListIntro {
                block: i,
                span,
                text,
                markers,
            }
        };
        return (stated, source);
    }
    (Stated::Nothing, Source::Unstated)
}

fn condition_of(
    doc: &Document,
    block: usize,
    own: &deontic::Reading,
    sentence: Option<&(Span, deontic::Reading)>,
) -> Option<Condition> {
    let pick = |r: &deontic::Reading| {
        r.markers
            .iter()
            .find(|m| matches!(m.marks, Marks::Condition | Marks::Example))
            .map(|m| (m.phrase, m.marks == Marks::Example))
    };
    if let Some((marker, example)) = pick(own) {
        return Some(Condition {
            marker,
            example,
            source: Source::Own {
                markers: vec![marker],
            },
        });
    }
    if let Some((span, reading)) = sentence
        && let Some((marker, example)) = pick(reading)
    {
        return Some(Condition {
            marker,
            example,
            source: Source::Sentence {
                span: *span,
                markers: vec![marker],
            },
        });
    }
    doc.blocks[block].scopes.iter().find_map(|scope| {
        let Scope::ListIntro(i) = *scope else {
            return None;
        };
        let b = &doc.blocks[i];
        let (marker, example) = pick(&deontic::read(&b.text))?;
        Some(Condition {
            marker,
            example,
            source: Source::ListIntro {
                block: i,
                span: b.span,
                text: b.text.clone(),
                markers: vec![marker],
            },
        })
    })
}

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
    ForceReading {
        stated,
        source,
        condition,
    }
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

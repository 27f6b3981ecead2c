//! The code-owned stages of `ais lift`, the skill compiler (a `SKILL.md` in, a faithful AG-IR
//! program out): everything the compiler decides without a model.
//!
//! - [`Skill`]: a skill read within bounds ([`Limits`]; a 10 MB skill, binary content and
//!   control characters are refused, named — [`InputError`]) and parsed as markdown with spans
//!   ([`markdown`]): frontmatter (`name`, `description`), headings, paragraphs, list items,
//!   list intros, sentences, code blocks.
//! - **Grounding** ([`Skill::ground`]): a proposed obligation is kept only when its quote is
//!   verbatim in the skill (the normalization is defined in [`text`]) and gets the span it rests
//!   on; a hallucinated one is dropped with a reason.
//! - **Deontic tables** ([`deontic`]) and **force from structure** ([`structure`]): the force a
//!   span states, from its own markers, its sentence, its list intros and its headings, nearest
//!   first; example code is discretionary. The **deontic audit** ([`audit`]) reports where a
//!   proposed force or condition drifts from what the text states.
//! - **The snippet sort** ([`snippet`]): each code block is a runnable tool body or knowledge.
//! - **Bundle references** ([`bundle`]): the sibling files a skill names, read through a bounded
//!   regular-file reader; a reference outside the skill's directory is refused.
//!
//! The obligation vocabulary ([`Kind`], [`Force`], [`Bearer`], [`Cohesion`], [`Proposal`]) is
//! the provenance record's (spec §9.5), defined here until the record's types are in the core.
//!
//! ```
//! use ais_lift::{Bearer, Force, Kind, Limits, Proposal, Skill, audit};
//!
//! let skill = Skill::from_text(
//!     "# Release\n\n## Required steps\n\nRun the validator.\n\nYou may optionally:\n\n\
//!      - Bump the minor version.\n",
//!     None,
//!     &Limits::default(),
//! )
//! .unwrap();
//! let propose = |rule: &str, force, quote: &str| Proposal {
//!     rule: rule.into(),
//!     kind: Kind::Step,
//!     force,
//!     bearer: Bearer::Agent,
//!     quote: quote.into(),
//!     condition: None,
//!     cohesion: Default::default(),
//! };
//! let grounding = skill.ground(vec![
//!     propose("r1", Force::Mandatory, "Run the validator."),
//!     propose("r2", Force::Mandatory, "Bump the minor version."),
//!     propose("r3", Force::Mandatory, "Delete the repository."),
//! ]);
//! // The hallucinated rule is dropped; the others rest on the skill's own words.
//! assert_eq!(grounding.dropped.len(), 1);
//! assert_eq!(grounding.kept[0].span.line, 5);
//! assert_eq!(grounding.kept[0].reading.force(), Some(Force::Mandatory)); // "## Required steps"
//! // "You may optionally:" governs r2: proposing it as a must is drift.
//! let drift = audit(&grounding.kept);
//! assert_eq!(drift.len(), 1);
//! assert_eq!(drift[0].rule, "r2");
//! ```

pub mod bundle;
pub mod deontic;
mod ground;
pub mod input;
pub mod markdown;
mod model;
pub mod snippet;
pub mod structure;
pub mod text;

pub use ground::{
    ConditionDropped, Drift, DriftKind, DropReason, Dropped, Grounding, Obligation, audit,
};
pub use input::{InputError, Limits};
pub use model::{Bearer, Cohesion, Force, Kind, Proposal};

use bundle::Bundle;
use markdown::{Block, BlockKind, Document, Frontmatter};
use serde::Serialize;
use snippet::Snippet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use structure::{ForceReading, Source};
use text::{LineIndex, Normalized, Span};

/// A skill, read within bounds and parsed.
#[derive(Debug)]
pub struct Skill {
    path: Option<PathBuf>,
    dir: Option<PathBuf>,
    text: String,
    lines: LineIndex,
    doc: Document,
    limits: Limits,
    body: OnceLock<Normalized>,
}

impl Skill {
    /// Reads the skill at `path` within the default [`Limits`].
    pub fn read(path: &Path) -> Result<Skill, InputError> {
        Skill::read_with(path, &Limits::default())
    }

    /// Reads the skill at `path` within `limits`; its directory is where its sibling files are
    /// looked up.
    pub fn read_with(path: &Path, limits: &Limits) -> Result<Skill, InputError> {
        let text = input::read_bounded(path, limits.max_skill_bytes, "skill")?;
        let dir = path.parent().map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
        });
        let mut skill = Skill::parse(text, dir, limits);
        skill.path = Some(path.to_owned());
        Ok(skill)
    }

    /// A skill from its text; `dir`, when given, is where its sibling files are looked up.
    pub fn from_text(text: &str, dir: Option<&Path>, limits: &Limits) -> Result<Skill, InputError> {
        let path = Path::new("<skill>");
        if text.len() as u64 > limits.max_skill_bytes {
            return Err(InputError::TooLarge {
                path: path.to_owned(),
                what: "skill",
                limit: limits.max_skill_bytes,
            });
        }
        let text = input::text_of(path, text.as_bytes().to_vec())?;
        Ok(Skill::parse(text, dir, limits))
    }

    fn parse(text: String, dir: Option<&Path>, limits: &Limits) -> Skill {
        let lines = LineIndex::new(&text);
        let doc = Document::parse(&text, &lines);
        Skill {
            path: None,
            dir: dir.map(Path::to_owned),
            text,
            lines,
            doc,
            limits: *limits,
            body: OnceLock::new(),
        }
    }

    /// The file it was read from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Its text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its markdown.
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// The [`Span`] of bytes `start..end` of its text.
    pub fn span(&self, start: usize, end: usize) -> Span {
        self.lines.span(&self.text, start, end)
    }

    /// Its body (after the frontmatter), normalized for grounding.
    pub(crate) fn body_normalized(&self) -> &Normalized {
        self.body
            .get_or_init(|| text::normalize(&self.text[self.doc.body_start..]))
    }

    /// The force the skill states for the span `span` whose text is `text` (see
    /// [`structure`]).
    pub fn read_span(&self, span: &Span, text: &str) -> ForceReading {
        structure::read_span(&self.doc, span, text)
    }

    /// Grounds proposed obligations (see [`Grounding`]).
    pub fn ground(&self, proposals: Vec<Proposal>) -> Grounding {
        ground::ground(self, proposals)
    }

    /// The sibling files it names, read from its directory within its limits.
    pub fn bundle(&self) -> Bundle {
        bundle::collect(
            &self.doc,
            &self.text,
            &self.lines,
            self.dir.as_deref(),
            &self.limits,
        )
    }

    /// The whole code-owned analysis: every sentence and code block with the force the skill
    /// states for it and where that came from, the snippet sort and the bundle.
    pub fn analyze(&self) -> Analysis {
        let mut units: Vec<Unit> = self
            .doc
            .sentences
            .iter()
            .map(|s| Unit {
                block: s.block,
                span: s.span,
                text: s.text.clone(),
                reading: self.read_span(&s.span, &s.text),
            })
            .collect();
        units.extend(
            self.doc
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| matches!(b.kind, BlockKind::Code { .. }))
                .map(|(i, b)| Unit {
                    block: i,
                    span: b.span,
                    text: b.text.clone(),
                    reading: ForceReading {
                        stated: deontic::Stated::One(Force::Discretionary),
                        source: Source::Fence {
                            block: i,
                            span: b.span,
                        },
                        condition: None,
                    },
                }),
        );
        units.sort_by_key(|u| u.span.start);
        Analysis {
            path: self.path.as_ref().map(|p| p.display().to_string()),
            frontmatter: self.doc.frontmatter.clone(),
            blocks: self.doc.blocks.clone(),
            units,
            snippets: snippet::sort_all(&self.doc),
            bundle: self.bundle(),
        }
    }
}

/// A sentence (or code block) and the force the skill states for it.
#[derive(Clone, Debug, Serialize)]
pub struct Unit {
    /// Its block.
    pub block: usize,
    /// Where it stands.
    pub span: Span,
    /// Its text.
    pub text: String,
    /// The force and condition the skill states for it.
    #[serde(flatten)]
    pub reading: ForceReading,
}

/// The code-owned analysis of a skill.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// The file it was read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Its frontmatter.
    pub frontmatter: Option<Frontmatter>,
    /// Its blocks.
    pub blocks: Vec<Block>,
    /// Its sentences and code blocks, in order, each with its force.
    pub units: Vec<Unit>,
    /// Its code blocks, sorted.
    pub snippets: Vec<Snippet>,
    /// The sibling files it names.
    pub bundle: Bundle,
}

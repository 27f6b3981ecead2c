//! The provenance record (spec §9.5): the `faithfulness` section of a program lifted from a
//! source document.
//!
//! The schema is documented on [`Provenance`].

use super::{Extras, Modality};

/// The `faithfulness` section: the source a program was lifted from, its obligations, and the
/// deviations accepted (§9.5).
///
/// # Schema
///
/// ```yaml
/// faithfulness:
///   source:                       # the document the program was lifted from
///     path: SKILL.md              # relative to the program file
///     digest: "sha256:9f86d0…"    # of the source bytes at lift time (`sha256:` + 64 hex)
///   obligations:                  # one per obligation of the source, each with a stable id
///     - id: r_validate
///       kind: step                # step | io | human_gate | knowledge | grounding | constraint
///       force: mandatory          # mandatory | forbidden | discretionary  (the deontic force)
///       bearer: agent             # agent | user | environment  (absent: agent)
///       quote: "Run the validator before shipping."   # verbatim from the source
///       realized_by: [validate, "tool:run_validator"] # the elements realizing it (optional)
///   deviations:                   # deviations from the source accepted on purpose
///     - obligation: r_color
///       kind: dropped             # dropped | added | remodalized | weakened
///       element: "tool:paint"     # the element concerned, when one is
///       reason: "the target terminal has no colors"
/// ```
///
/// - Elements name the obligations they realize with `traces_to` (§9.5): instructions, edges,
///   carries, tools and knowledge items. `realized_by` is the lift's record of the same
///   relation, read the other way; the audit checks that it agrees with `traces_to`.
/// - An element in `realized_by` or a deviation's `element` is spelled as an [`ElementRef`]:
///   an instruction by its id (`validate`), anything else with its plane in front
///   (`tool:run_validator`, `knowledge:forms_guide`, `carry:report`, `edge:check->done`).
/// - Every enum has one spelling and an `Unknown` arm: a misspelled kind is kept as written and
///   reported by the audit, never dropped. Unknown keys are kept in `extra` and written back.
/// - An accepted deviation silences the audit finding it names (same obligation, or element,
///   and kind) and is reported as accepted instead; one without a `reason` is itself a finding.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Provenance {
    /// `source`: the document the program was lifted from.
    pub source: Option<SourceRef>,
    /// `obligations`: the source's obligations, in the source's order.
    pub obligations: Option<Vec<Obligation>>,
    /// `deviations`: deviations accepted on purpose.
    pub deviations: Option<Vec<AcceptedDeviation>>,
    /// Unknown keys (a reference implementation's `verdict`, `rules`, …), kept in order.
    pub extra: Extras,
}

impl Provenance {
    /// The obligations (empty when `obligations` is absent).
    pub fn obligation_list(&self) -> &[Obligation] {
        self.obligations.as_deref().unwrap_or(&[])
    }

    /// The accepted deviations (empty when `deviations` is absent).
    pub fn deviation_list(&self) -> &[AcceptedDeviation] {
        self.deviations.as_deref().unwrap_or(&[])
    }

    /// The first obligation with this id, with its index.
    pub fn obligation(&self, id: &str) -> Option<(usize, &Obligation)> {
        self.obligation_list()
            .iter()
            .enumerate()
            .find(|(_, o)| o.id == id)
    }
}

/// `faithfulness.source`: where the program was lifted from.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SourceRef {
    /// `path`: the source document, relative to the program file.
    pub path: Option<String>,
    /// `digest`: `sha256:` and the 64 lower-case hex digits of the source's bytes.
    pub digest: Option<String>,
    /// Unknown keys.
    pub extra: Extras,
}

/// One obligation of the source (§9.5): a stable id, what it is, how binding, on whom, and the
/// words it was read from.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Obligation {
    /// `id`: the stable rule id elements name in `traces_to`.
    pub id: String,
    /// `kind`: what the obligation is.
    pub kind: Option<ObligationKind>,
    /// `force`: its deontic force, read from the source's vocabulary ("must", "may", "never").
    pub force: Option<Modality>,
    /// `bearer`: on whom it lies; absent means the agent.
    pub bearer: Option<Bearer>,
    /// `quote`: the source's words, verbatim.
    pub quote: Option<String>,
    /// `realized_by`: the elements that realize it, as the lift recorded them.
    pub realized_by: Option<Vec<ElementRef>>,
    /// Unknown keys (`statement`, `condition`, …).
    pub extra: Extras,
}

impl Obligation {
    /// Who bears it: the declared bearer, the agent when none is declared.
    pub fn effective_bearer(&self) -> Bearer {
        self.bearer.clone().unwrap_or(Bearer::Agent)
    }
}

spelled! {
    /// What an obligation is (§9.5); the kind and the force together decide the realization
    /// the audit requires.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum ObligationKind {
        /// `step`: something the agent does — an instruction on a path to `TERMINAL`.
        Step => "step",
        /// `io`: a deliverable — an artifact written by an `ACT`.
        Io => "io",
        /// `human_gate`: a decision a human makes — a code-owned decision on the answer.
        HumanGate => "human_gate",
        /// `knowledge`: reference content — embodied, resident where it is used.
        Knowledge => "knowledge",
        /// `grounding`: live data — a live tool consulted at run time.
        Grounding => "grounding",
        /// `constraint`: a rule governing other steps — folded onto the slots it governs.
        Constraint => "constraint",
    } else {
        /// Anything else, kept as written and reported by the audit.
        Unknown(String)
    }
}

spelled! {
    /// On whom an obligation lies. Only the agent's obligations are required of the program; the
    /// others are carried (knowledge about them is still embodied).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Bearer {
        /// `agent`: the program must realize it.
        Agent => "agent",
        /// `user`: the person invoking the agent.
        User => "user",
        /// `environment`: a tool, the harness, the world.
        Environment => "environment",
    } else {
        /// Anything else, kept as written and reported by the audit.
        Unknown(String)
    }
}

spelled! {
    /// What kind of deviation from the source an accepted deviation is.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum DeviationKind {
        /// `dropped`: an obligation the program does not realize.
        Dropped => "dropped",
        /// `added`: an element with no obligation behind it.
        Added => "added",
        /// `remodalized`: a transition whose modality differs from the obligation's force.
        Remodalized => "remodalized",
        /// `weakened`: a realization weaker than the shape the kind and force require
        /// (pointed at rather than embodied, carried untyped, …).
        Weakened => "weakened",
    } else {
        /// Anything else, kept as written and reported by the audit.
        Unknown(String)
    }
}

/// `faithfulness.deviations[i]`: a deviation from the source accepted on purpose.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AcceptedDeviation {
    /// `obligation`: the obligation it concerns, if one.
    pub obligation: Option<String>,
    /// `kind`: what deviates.
    pub kind: Option<DeviationKind>,
    /// `element`: the element it concerns, if one.
    pub element: Option<ElementRef>,
    /// `reason`: why it was accepted (required).
    pub reason: Option<String>,
    /// Unknown keys.
    pub extra: Extras,
}

/// An element of a program, by name, as `realized_by` and a deviation's `element` spell it:
/// an instruction by its id, every other plane with a prefix (`tool:`, `knowledge:`, `carry:`,
/// `edge:from->to`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ElementRef {
    /// An instruction, by id (written bare).
    Node(String),
    /// A tool, by name (`tool:name`).
    Tool(String),
    /// A knowledge item, by key (`knowledge:name`).
    Knowledge(String),
    /// A carry, by name (`carry:name`).
    Carry(String),
    /// An edge, by its ends (`edge:from->to`).
    Edge {
        /// The instruction it leaves.
        from: String,
        /// The instruction it enters.
        to: String,
    },
}

impl ElementRef {
    /// Reads the spelling: `tool:x`, `knowledge:x`, `carry:x`, `edge:a->b`, else an instruction
    /// id (so `edge:x` without `->` is an instruction named so — which the audit then fails to
    /// find, and says so).
    pub fn parse(text: &str) -> ElementRef {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("tool:") {
            ElementRef::Tool(rest.trim().to_owned())
        } else if let Some(rest) = text.strip_prefix("knowledge:") {
            ElementRef::Knowledge(rest.trim().to_owned())
        } else if let Some(rest) = text.strip_prefix("carry:") {
            ElementRef::Carry(rest.trim().to_owned())
        } else if let Some((from, to)) = text
            .strip_prefix("edge:")
            .and_then(|rest| rest.split_once("->"))
        {
            ElementRef::Edge {
                from: from.trim().to_owned(),
                to: to.trim().to_owned(),
            }
        } else {
            ElementRef::Node(text.to_owned())
        }
    }

    /// The one spelling written.
    pub fn spelling(&self) -> String {
        match self {
            ElementRef::Node(id) => id.clone(),
            ElementRef::Tool(n) => format!("tool:{n}"),
            ElementRef::Knowledge(n) => format!("knowledge:{n}"),
            ElementRef::Carry(n) => format!("carry:{n}"),
            ElementRef::Edge { from, to } => format!("edge:{from}->{to}"),
        }
    }
}

impl std::fmt::Display for ElementRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.spelling())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_refs_read_back_from_their_spelling() {
        for r in [
            ElementRef::Node("draft".into()),
            ElementRef::Tool("save".into()),
            ElementRef::Knowledge("guide".into()),
            ElementRef::Carry("out".into()),
            ElementRef::Edge {
                from: "a".into(),
                to: "b".into(),
            },
        ] {
            assert_eq!(ElementRef::parse(&r.spelling()), r);
        }
        assert_eq!(
            ElementRef::parse("edge:x"),
            ElementRef::Node("edge:x".into())
        );
    }

    #[test]
    fn every_spelling_reads_back() {
        for k in ObligationKind::ALL {
            assert_eq!(ObligationKind::parse(k.as_str()), k);
        }
        for b in Bearer::ALL {
            assert_eq!(Bearer::parse(b.as_str()), b);
        }
        for d in DeviationKind::ALL {
            assert_eq!(DeviationKind::parse(d.as_str()), d);
        }
        assert_eq!(
            ObligationKind::parse("HIL"),
            ObligationKind::Unknown("HIL".into())
        );
    }
}

//! The lift's obligation vocabulary: what a model proposes and what grounding keeps.
//!
//! The kinds, forces and bearers are the words of the provenance record (spec §9.5, the
//! `faithfulness` section): a kept [`Obligation`] maps onto one obligation of that record
//! field for field (rule id, kind, force, bearer, quote), so the compiler can write it there
//! once the record's types are in `ais-core`.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! spelled_enum {
    ($(#[$doc:meta])* $name:ident $(#[$attr:meta])* { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        $(#[$attr])*
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &[$name] = &[$($name::$variant,)+];

            /// The value's one spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            /// The value spelled `text`, if any.
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

spelled_enum! {
    /// How binding an obligation is (the edge modality of spec §9.5 and the AG-IR primitives).
    Force {
        /// The run must do it ("must", "always").
        Mandatory = "mandatory",
        /// The run must not do it ("never", "do not"): a missing edge, never a path.
        Forbidden = "forbidden",
        /// The run may do it ("may", "optionally", an example).
        Discretionary = "discretionary",
    }
}

impl Force {
    /// The order in which forces outrank each other when one text states several: a
    /// prohibition outranks a mandate ("you must never" forbids), a mandate outranks discretion.
    pub fn precedence(self) -> u8 {
        match self {
            Force::Forbidden => 0,
            Force::Mandatory => 1,
            Force::Discretionary => 2,
        }
    }

    /// Whether the force binds the run (mandatory or forbidden).
    pub fn binds(self) -> bool {
        self != Force::Discretionary
    }
}

spelled_enum! {
    /// What kind of obligation a rule states.
    Kind {
        /// A move the agent performs.
        Step = "step",
        /// An input the agent reads or a deliverable it must produce.
        Io = "io",
        /// A human-in-the-loop gate: confirm, approve, ask.
        HumanGate = "human_gate",
        /// Reference material the skill supplies (a pattern, a template, an example).
        Knowledge = "knowledge",
        /// A demand to consult a live source at run time.
        Grounding = "grounding",
        /// A standing restriction on outputs or behaviour.
        Constraint = "constraint",
    }
}

spelled_enum! {
    /// Whom an obligation binds, read from its sentence's subject.
    Bearer {
        /// The executing agent.
        Agent = "agent",
        /// The person.
        User = "user",
        /// A tool, harness or system the skill describes.
        Environment = "environment",
    }
}

spelled_enum! {
    /// Whether an obligation may be decomposed when it is lowered.
    Cohesion #[derive(Default)] {
        /// One fixed move.
        #[default]
        Atomic = "atomic",
        /// An adaptive, tool-using activity ("explore…", "iterate until…") that stays one slot
        /// with a tool belt.
        Adaptive = "adaptive",
    }
}

/// One obligation as a model proposes it (untrusted: nothing in it is believed until grounded).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    /// The stable rule id (`r1`, `r2`, …).
    pub rule: String,
    /// What kind of obligation.
    pub kind: Kind,
    /// Its force.
    pub force: Force,
    /// Whom it binds.
    pub bearer: Bearer,
    /// The span of the skill it comes from, copied verbatim.
    pub quote: String,
    /// The condition that gates it, copied verbatim, when it is conditional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Whether it is one fixed move or an adaptive unit.
    #[serde(default)]
    pub cohesion: Cohesion,
}

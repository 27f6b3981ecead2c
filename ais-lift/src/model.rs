//! The lift's obligation vocabulary: what a model proposes and what grounding keeps.
//!
//! The kinds, forces and bearers are the provenance record's own types (spec §9.5, the
//! `faithfulness` section, in `ais-core`): a kept obligation is written there field for field
//! (rule id, kind, force, bearer, quote). They are open enums: a spelling outside the record's
//! (`"force": "must"`) reads as their `Unknown` arm, and grounding drops such a proposal.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! spelled_enum {
    ($(#[$doc:meta])* $name:ident $(#[$attr:meta])* { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
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

/// How binding an obligation is: the provenance record's `force`, which is an edge's modality
/// (spec §9.5) — one type, [`ais_core::Modality`].
pub use ais_core::Modality as Force;

/// What kind of obligation a rule states: the provenance record's `kind`
/// ([`ais_core::ObligationKind`]).
pub use ais_core::ObligationKind as Kind;

/// Whom an obligation binds: the provenance record's `bearer` ([`ais_core::Bearer`]).
pub use ais_core::Bearer;

/// What the lift reads from a [`Force`] beyond its spelling.
pub trait ForceExt {
    /// The order in which forces outrank each other when one text states several: a
    /// prohibition outranks a mandate ("you must never" forbids), a mandate outranks
    /// discretion; a force spelled otherwise comes last.
    fn precedence(&self) -> u8;
    /// Whether the force binds the run (mandatory or forbidden).
    fn binds(&self) -> bool;
    /// Whether it is one of the three spelled forces.
    fn is_known(&self) -> bool;
}

impl ForceExt for Force {
    fn precedence(&self) -> u8 {
        match self {
            Force::Forbidden => 0,
            Force::Mandatory => 1,
            Force::Discretionary => 2,
            Force::Unknown(_) => 3,
        }
    }

    fn binds(&self) -> bool {
        matches!(self, Force::Mandatory | Force::Forbidden)
    }

    fn is_known(&self) -> bool {
        !matches!(self, Force::Unknown(_))
    }
}

/// The JSON Schema of a spelled field: a string, one of `spellings`.
fn spelled_schema(spellings: &[&str]) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": spellings})
}

fn force_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    spelled_schema(&Force::ALL.each_ref().map(Force::as_str))
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    spelled_schema(&Kind::ALL.each_ref().map(Kind::as_str))
}

fn bearer_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    spelled_schema(&Bearer::ALL.each_ref().map(Bearer::as_str))
}

/// A field's schema for a [`Force`] (for the answer types of other modules).
pub(crate) fn force_field_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    force_schema(g)
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Proposal {
    /// The stable rule id (`r1`, `r2`, …).
    pub rule: String,
    /// What kind of obligation.
    #[schemars(schema_with = "kind_schema")]
    pub kind: Kind,
    /// Its force.
    #[schemars(schema_with = "force_schema")]
    pub force: Force,
    /// Whom it binds.
    #[schemars(schema_with = "bearer_schema")]
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

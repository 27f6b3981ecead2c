//! An instruction (§3) and its opcode (§4), owner, surface, autonomy and concurrency.

use super::{Extras, Type};
use crate::value::Value;
use std::fmt;

/// An instruction (a node of the graph, §3).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Instruction {
    /// `id`: unique, non-empty (W1).
    pub id: String,
    /// `type`: the opcode mnemonic (W2).
    pub opcode: Opcode,
    /// `owner` as written; see [`Instruction::effective_owner`].
    pub owner: Option<Owner>,
    /// `reads`: input operands, in binding order (§7).
    pub reads: Vec<String>,
    /// `writes`: output carries; `writes[0]` receives the result.
    pub writes: Vec<String>,
    /// `doc`: the semantic operand (normative for SU instructions).
    pub doc: Option<String>,
    /// `tool`: binds a tool table entry (§5.4).
    pub tool: Option<String>,
    /// `op`: descriptive operation name; never a binding mechanism.
    pub op: Option<String>,
    /// `surface` (ACT only): artifact or workspace.
    pub surface: Option<Surface>,
    /// `output` (SU only): overrides the result type.
    pub output: Option<Type>,
    /// `body` (CODE only): a single-expression inline body.
    pub body: Option<String>,
    /// `autonomy` (SU only): the tool surface of the slot.
    pub autonomy: Option<Autonomy>,
    /// `concurrency` (SPAWN only): fan-out source and isolation.
    pub concurrency: Option<Concurrency>,
    /// LOOP `verdict`: a bool carry produced by a DU instruction.
    pub verdict: Option<String>,
    /// LOOP `cap`: the iteration bound.
    pub cap: Option<i64>,
    /// LOOP `counter`: an int carry counting iterations.
    pub counter: Option<String>,
    /// CALL `target`: another program (a macro program's name, or a `.agir` path).
    pub target: Option<String>,
    /// `traces_to`: provenance (§9.5).
    pub traces_to: Option<Vec<String>>,
    /// `model` (SU only, our encoding): the model tier that fills this slot (`small`,
    /// `frontier`, a name the run's model configuration defines); none: the run's default.
    pub model: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

impl Instruction {
    /// The unit that executes this instruction: the opcode's fixed owner when it has one, else
    /// the declared `owner`. `None` when neither says (a dual opcode with no owner, W3).
    pub fn effective_owner(&self) -> Option<Owner> {
        match self.opcode.fixed_owner() {
            Some(o) => Some(o),
            None => self.owner.clone(),
        }
    }

    /// True when this instruction runs on the Stochastic Unit (a model).
    pub fn is_su(&self) -> bool {
        self.effective_owner() == Some(Owner::Model)
    }

    /// True when this instruction runs on the Deterministic Unit (code).
    pub fn is_du(&self) -> bool {
        self.effective_owner() == Some(Owner::Code)
    }
}

spelled! {
    /// The twelve opcodes of §4, and anything else as written.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Opcode {
        /// `GEN-ENUM`: one member of an enum (SU).
        GenEnum => "GEN-ENUM",
        /// `GEN-FILL`: an instance of an object type (SU).
        GenFill => "GEN-FILL",
        /// `GEN-EDIT`: a revision of an existing value (SU).
        GenEdit => "GEN-EDIT",
        /// `GEN-RAW`: free-form text (SU).
        GenRaw => "GEN-RAW",
        /// `SENSE`: world state, read in (DU or SU).
        Sense => "SENSE",
        /// `ACT`: an effect, pushed out (DU or SU).
        Act => "ACT",
        /// `CODE`: a pure function of its operands (DU).
        Code => "CODE",
        /// `ROUTE`: branch (DU or SU).
        Route => "ROUTE",
        /// `LOOP`: bounded repetition (DU or SU).
        Loop => "LOOP",
        /// `SPAWN`: fan out and join (DU).
        Spawn => "SPAWN",
        /// `CALL`: expand a sub-program (SU).
        Call => "CALL",
        /// `TERMINAL`: serialize the report and halt (DU).
        Terminal => "TERMINAL",
    } else {
        /// Not an opcode of this version, kept as written and reported (W2, §11.2). Empty when
        /// the instruction has no `type`.
        Unknown(String)
    }
}

impl Default for Opcode {
    fn default() -> Self {
        Opcode::Unknown(String::new())
    }
}

impl Opcode {
    /// True for the Mind class (`GEN-*`), which is always SU (§4.1).
    pub fn is_mind(&self) -> bool {
        matches!(
            self,
            Opcode::GenEnum | Opcode::GenFill | Opcode::GenEdit | Opcode::GenRaw
        )
    }

    /// The owner the opcode fixes, if it fixes one (§4, Appendix B): Mind and `CALL` are SU;
    /// `CODE`, `SPAWN` and `TERMINAL` are DU; the rest are dual.
    pub fn fixed_owner(&self) -> Option<Owner> {
        match self {
            Opcode::GenEnum | Opcode::GenFill | Opcode::GenEdit | Opcode::GenRaw | Opcode::Call => {
                Some(Owner::Model)
            }
            Opcode::Code | Opcode::Spawn | Opcode::Terminal => Some(Owner::Code),
            _ => None,
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

spelled! {
    /// The execution unit (§2.2).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Owner {
        /// `code`: the Deterministic Unit.
        Code => "code",
        /// `model`: the Stochastic Unit.
        Model => "model",
    } else {
        /// Anything else, kept as written and reported (W3).
        Unknown(String)
    }
}

spelled! {
    /// An `ACT` instruction's `surface` (§4.2.2).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Surface {
        /// `artifact`: a deliverable the user interacts with.
        Artifact => "artifact",
        /// `workspace`: scratch.
        Workspace => "workspace",
    } else {
        /// Anything else: reported, and treated as `artifact` (§12.2).
        Unknown(String)
    }
}

/// `autonomy`: the tools an SU slot may act over.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Autonomy {
    /// `autonomy.tools`.
    pub tools: Vec<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// `concurrency`, on a `SPAWN` (isolation, fan-out source, parallelism) or on the module
/// (`spawn: none` with a `reason`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Concurrency {
    /// `isolation` (§4.4.4).
    pub isolation: Option<Isolation>,
    /// `spawn`: a literal list of sub-tasks, or `none`.
    pub spawn: Option<SpawnSource>,
    /// `max_parallel`: the most siblings run at once.
    pub max_parallel: Option<i64>,
    /// `reason`: why there is (no) fan-out.
    pub reason: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// `concurrency.spawn`.
#[derive(Clone, Debug, PartialEq)]
pub enum SpawnSource {
    /// `none`: no fan-out here.
    None,
    /// A literal list: one sibling per entry.
    List(Vec<String>),
    /// Anything else, kept as written and reported.
    Other(Value),
}

spelled! {
    /// A `SPAWN`'s isolation mode (§4.4.4).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Isolation {
        /// `private_write`.
        PrivateWrite => "private_write",
        /// `shared_read`.
        SharedRead => "shared_read",
        /// `orchestrator_owned`.
        OrchestratorOwned => "orchestrator_owned",
    } else {
        /// Anything else: reported, treated as `orchestrator_owned` (§12.2).
        Unknown(String)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_spelled_exactly() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::parse(op.as_str()), op);
        }
        assert_eq!(Opcode::parse("gen-raw"), Opcode::Unknown("gen-raw".into()));
        assert_eq!(Opcode::GenRaw.fixed_owner(), Some(Owner::Model));
        assert_eq!(Opcode::Route.fixed_owner(), None);
    }
}

//! Slots with several writes (§2.3 step 4, §6.4): what a Mind instruction that writes several
//! carries contracts for.
//!
//! The spec's letter gives such a slot the result type of `writes[0]` (else `str`) and recovers
//! the other writes from that result's structure; when that type is not an object holding them
//! — `GEN-FILL(task) -> name, email, company` with three `str` carries — the model is asked for
//! a string, so a model answering the object the instruction means is rejected and the other
//! writes can never be recovered. The runtime instead contracts for an object whose fields are
//! the written carries, each with its declared type, and each carry receives its field by name
//! (the write-back of §2.3 step 4). This is a deviation from the letter, recorded with the
//! program (§10.3) for each instruction it applies to.

use ais_core::{Deviation, Edit, Program};
use std::sync::Arc;

/// The name of the object type synthesized for instruction `id`'s writes. A `.` keeps it
/// apart from every declared name (identifiers have none, §3.1).
fn type_name(id: &str) -> String {
    format!("{id}.writes")
}

/// The Mind instructions [`apply`] edits: several writes that their result type does not
/// hold.
fn needing(program: &Program) -> impl Iterator<Item = &ais_core::Instruction> {
    program
        .instructions()
        .iter()
        .filter(|n| n.opcode.is_mind() && !program.result_holds_writes(n))
}

/// Whether [`apply`] changes `program`: some Mind instruction needs an object of its writes.
pub(crate) fn needed(program: &Program) -> bool {
    needing(program).next().is_some()
}

/// Gives every Mind instruction with several writes whose result type does not hold them an
/// `output` of a synthesized object of its writes, and records each as a deviation. The
/// validator's mechanical repair (G9) has already done this for a GEN-FILL, under a declared
/// name; this is the same edit ([`Edit::ObjectOfWrites`]) for the other Mind opcodes, and for
/// a GEN-FILL whose repair did not land.
pub(crate) fn apply(program: &mut Arc<Program>, deviations: &mut Vec<Deviation>) {
    let edits: Vec<Edit> = needing(program)
        .map(|n| Edit::ObjectOfWrites {
            instruction: n.id.clone(),
            ty: type_name(&n.id),
            fields: program.fields_of_writes(n),
        })
        .collect();
    if edits.is_empty() {
        return;
    }
    // Copied only when there is something to edit.
    let program = Arc::make_mut(program);
    for edit in edits {
        if let Some(change) = edit.apply(program) {
            deviations.push(Deviation {
                check: None,
                subject: change.subject,
                intended: change.intended,
                substituted: change.substituted,
            });
        }
    }
}

//! Structured repairs: edits on the program model (documented on [`Edit`]).

use crate::program::{
    Carry, Field, Opcode, Owner, Program, Type, TypeDecl, TypeKind, Walker, shape_of,
};

/// Whose words a repair is given in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wording {
    /// The `.agir` encoding: `walker.carries`, `nodes[i].reads`, `owner: model`.
    Agir,
    /// The `ais!` macro's Rust DSL: `carries { .. }`, `step: OP(operands) -> carry;`,
    /// `a -> b if guard;`.
    RustDsl,
}

/// One edit on the program model: a structured repair, applied mechanically where it is
/// mechanical and worded by each front end.
///
/// A [`Repair`](crate::diag::Repair) may carry an `Edit`: the change itself, on the model
/// (add a carry, rename a read, rename a name inside a guard, re-own an instruction, set a
/// producer, adopt a type). The validator applies the mechanical ones itself (ladder step 1,
/// §9.1) through [`Edit::apply`]; a front end words any of them for its users with
/// [`Edit::describe`] — AG-IR words for the CLI ([`Wording::Agir`]), Rust DSL words for the
/// `ais!` macro ([`Wording::RustDsl`]) — so a Rust user is never told to edit YAML.
///
/// ```
/// use ais_core::{Edit, Wording};
///
/// let edit = Edit::RenameInGuard {
///     edge: 7,
///     from_step: "gate".into(),
///     to_step: "save".into(),
///     name: "plan_okk".into(),
///     to: "plan_ok".into(),
///     column: 1,
/// };
/// assert_eq!(
///     edit.describe(Wording::Agir),
///     "change `plan_okk` to `plan_ok` in the guard of edge `gate` -> `save`"
/// );
/// assert_eq!(
///     edit.describe(Wording::RustDsl),
///     "change `plan_okk` to `plan_ok` in the condition of `gate -> save if …;`"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// Declare a carry that is written or read but not declared.
    MintCarry {
        /// The carry's name.
        name: String,
        /// Its type, when one can be inferred.
        ty: Option<Type>,
        /// The instruction that writes it, if any (becomes `produced_by`).
        produced_by: Option<String>,
    },
    /// Re-own a hollow DU instruction to an SU slot.
    ReownToModel {
        /// The instruction's id.
        instruction: String,
        /// Its opcode (for the wording: the DSL writes the owner after it).
        opcode: Opcode,
    },
    /// Name the one instruction that writes a carry as its `produced_by`.
    SetProducer {
        /// The carry's name.
        carry: String,
        /// The instruction that writes it.
        instruction: String,
    },
    /// Adopt the type every consumer of a carry agrees on.
    AdoptType {
        /// The carry's name.
        carry: String,
        /// The type to adopt.
        ty: Type,
    },
    /// Replace one entry of an instruction's `reads` with a declared name.
    RenameRead {
        /// The instruction's index in `nodes`.
        instruction: usize,
        /// Its id (for the wording).
        id: String,
        /// The entry's index in `reads`.
        index: usize,
        /// The name as written.
        name: String,
        /// The name it should be.
        to: String,
    },
    /// Replace a name inside an edge's guard with a declared one.
    RenameInGuard {
        /// The edge's index in `edges`.
        edge: usize,
        /// The edge's source step (for the wording).
        from_step: String,
        /// The edge's target step (for the wording).
        to_step: String,
        /// The name as written.
        name: String,
        /// The name it should be.
        to: String,
        /// The 1-based character column of the name in the guard's first line.
        column: u32,
    },
    /// Contract a slot with several writes for an object of them (§4.1, §2.3 step 4): declare
    /// the object type `ty` whose fields are the written carries, each with its declared type,
    /// and make it the instruction's `output`.
    ObjectOfWrites {
        /// The instruction's id.
        instruction: String,
        /// The object type's name.
        ty: String,
        /// Its fields: the written carries.
        fields: Vec<Field>,
    },
}

/// What applying an edit changed, in words: the makings of a
/// [`Deviation`](crate::diag::Deviation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The instruction, carry or edge it concerns.
    pub subject: String,
    /// What the program said.
    pub intended: String,
    /// What it says now.
    pub substituted: String,
}

impl Edit {
    /// The edit in a front end's words: what to change, where, and to what.
    pub fn describe(&self, wording: Wording) -> String {
        let rust = wording == Wording::RustDsl;
        match self {
            Edit::MintCarry {
                name,
                ty,
                produced_by,
            } => {
                let ty = ty
                    .as_ref()
                    .map_or_else(|| "str".to_owned(), Type::to_string);
                match (rust, produced_by) {
                    (true, _) => format!("declare `{name}: {ty},` in `carries {{ .. }}`"),
                    (false, Some(p)) => {
                        format!("add `{name}: {{type: {ty}, produced_by: {p}}}` to walker.carries")
                    }
                    (false, None) => format!("add `{name}: {{type: {ty}}}` to walker.carries"),
                }
            }
            Edit::ReownToModel {
                instruction,
                opcode,
            } if rust => format!(
                "let a model do it: write `{instruction}: {opcode}(model)(..)`, its doc comment \
                 saying what it must do"
            ),
            Edit::ReownToModel { instruction, .. } => {
                format!("set `owner: model` on `{instruction}`, so its `doc` is filled by a model")
            }
            Edit::SetProducer { carry, instruction } if rust => format!(
                "write `{carry}` only from step `{instruction}` (`{instruction}: .. -> {carry};`)"
            ),
            Edit::SetProducer { carry, instruction } => {
                format!("set `produced_by: {instruction}` on carry `{carry}`")
            }
            Edit::AdoptType { carry, ty } if rust => {
                format!("declare `{carry}: {ty},` in `carries {{ .. }}`")
            }
            Edit::AdoptType { carry, ty } => format!("change carry `{carry}` to `type: {ty}`"),
            Edit::RenameRead { id, name, to, .. } if rust => {
                format!("write `{to}` instead of `{name}` in the operands of `{id}`")
            }
            Edit::RenameRead { id, name, to, .. } => {
                format!("change `{name}` to `{to}` in `{id}`.reads")
            }
            Edit::RenameInGuard {
                from_step,
                to_step,
                name,
                to,
                ..
            } if rust => format!(
                "change `{name}` to `{to}` in the condition of `{from_step} -> {to_step} if …;`"
            ),
            Edit::RenameInGuard {
                from_step,
                to_step,
                name,
                to,
                ..
            } => format!(
                "change `{name}` to `{to}` in the guard of edge `{from_step}` -> `{to_step}`"
            ),
            Edit::ObjectOfWrites {
                instruction,
                ty,
                fields,
            } if rust => {
                format!(
                    "declare `struct {ty} {}` and mark `{instruction}` `#[output({ty})]`: the model is asked for one object, and each carry receives its field",
                    shape_of(fields)
                )
            }
            Edit::ObjectOfWrites {
                instruction,
                ty,
                fields,
            } => format!(
                "add type `{ty}: {{kind: object, fields: {}}}` to types and set `output: {ty}` on `{instruction}`",
                shape_of(fields)
            ),
        }
    }

    /// Applies the edit to `program` in place; returns what changed, or `None` (leaving the
    /// program untouched) when the edit no longer applies — the carry already exists, the
    /// entry or the name in the guard is not what the edit expects, a re-owned instruction has
    /// no `doc` to fill a slot from.
    pub fn apply(&self, program: &mut Program) -> Option<Change> {
        match self {
            Edit::MintCarry {
                name,
                ty,
                produced_by,
            } => {
                if program.carry(name).is_some() {
                    return None;
                }
                let walker = program.walker.get_or_insert_with(Walker::default);
                walker.carries.get_or_insert_with(Vec::new).push(Carry {
                    name: name.clone(),
                    ty: ty.clone(),
                    produced_by: produced_by.clone(),
                    ..Carry::default()
                });
                let ty_text = ty
                    .as_ref()
                    .map_or_else(|| "untyped".to_owned(), Type::to_string);
                let by = produced_by.as_deref().unwrap_or("?");
                Some(Change {
                    subject: name.clone(),
                    intended: format!("carry `{name}` written by `{by}` without a declaration"),
                    substituted: format!(
                        "declared `{name}: {{type: {ty_text}, produced_by: {by}}}`"
                    ),
                })
            }
            Edit::ReownToModel { instruction, .. } => {
                let n = program
                    .nodes
                    .as_mut()?
                    .iter_mut()
                    .find(|n| n.id == *instruction)?;
                if n.doc.as_deref().is_none_or(|d| d.trim().is_empty()) {
                    return None;
                }
                let opcode = n.opcode.to_string();
                n.owner = Some(Owner::Model);
                Some(Change {
                    subject: instruction.clone(),
                    intended: format!(
                        "{opcode} `{instruction}` run by code, with nothing to execute"
                    ),
                    substituted: "a model slot (`owner: model`) filled from its `doc`".to_owned(),
                })
            }
            Edit::AdoptType { carry, ty } => {
                let c = carry_mut(program, carry)?;
                let before =
                    c.ty.as_ref()
                        .map_or_else(|| "untyped".to_owned(), Type::to_string);
                c.ty = Some(ty.clone());
                Some(Change {
                    subject: carry.clone(),
                    intended: format!("carry `{carry}` typed `{before}`"),
                    substituted: format!(
                        "carry `{carry}` typed `{ty}`, the type its consumers demand"
                    ),
                })
            }
            Edit::SetProducer { carry, instruction } => {
                let c = carry_mut(program, carry)?;
                let before = c.produced_by.replace(instruction.clone());
                Some(Change {
                    subject: carry.clone(),
                    intended: match before {
                        Some(b) => {
                            format!("carry `{carry}` produced by `{b}`, which is no instruction")
                        }
                        None => format!("carry `{carry}` with no declared origin"),
                    },
                    substituted: format!("`produced_by: {instruction}`, its only writer"),
                })
            }
            Edit::RenameRead {
                instruction,
                id,
                index,
                name,
                to,
            } => {
                let n = program.nodes.as_mut()?.get_mut(*instruction)?;
                let entry = n.reads.get_mut(*index)?;
                if entry != name {
                    return None;
                }
                *entry = to.clone();
                Some(Change {
                    subject: id.clone(),
                    intended: format!("`{id}` reads `{name}`, which names nothing"),
                    substituted: format!("`{id}` reads `{to}`"),
                })
            }
            Edit::RenameInGuard {
                edge,
                from_step,
                to_step,
                name,
                to,
                column,
            } => {
                let e = program.edges.as_mut()?.get_mut(*edge)?;
                let guard = e.guard.as_mut()?;
                let renamed = rename_at(guard, *column, name, to)?;
                let before = std::mem::replace(guard, renamed);
                Some(Change {
                    subject: format!("{from_step} -> {to_step}"),
                    intended: format!("guard `{before}`, where `{name}` names no carry"),
                    substituted: format!("guard `{guard}`"),
                })
            }
            Edit::ObjectOfWrites {
                instruction,
                ty,
                fields,
            } => object_of_writes(program, instruction, ty, fields),
        }
    }
}

/// [`Edit::ObjectOfWrites`]: declares the object `ty` and makes it `instruction`'s `output`;
/// `None` when a type of that name exists or the instruction does not.
fn object_of_writes(
    program: &mut Program,
    instruction: &str,
    ty: &str,
    fields: &[Field],
) -> Option<Change> {
    if program.type_decl(ty).is_some() {
        return None;
    }
    let n = program.instruction(instruction)?.1;
    let letter = program
        .result_type(n)
        .map_or_else(|| "str".to_owned(), Type::to_string);
    let first = n.writes.first().cloned().unwrap_or_default();
    program.types.get_or_insert_with(Vec::new).push(TypeDecl {
        name: ty.to_owned(),
        kind: TypeKind::Object(fields.to_vec()),
        doc: Some(format!("The carries `{instruction}` writes.")),
        ..TypeDecl::default()
    });
    let n = program
        .nodes
        .iter_mut()
        .flatten()
        .find(|n| n.id == instruction)?;
    n.output = Some(Type::Named(ty.to_owned()));
    Some(Change {
        subject: instruction.to_owned(),
        intended: format!(
            "a slot whose result type is `{letter}` (§6.4), the writes after `{first}` recovered from it (§2.3 step 4)"
        ),
        substituted: format!(
            "a slot that contracts for an object of its writes {} (`{ty}`), each carry receiving its field by name",
            shape_of(fields)
        ),
    })
}

/// `text` with the identifier `name` at 1-based character `column` of its first line replaced
/// by `to`; `None` unless exactly that identifier stands there.
fn rename_at(text: &str, column: u32, name: &str, to: &str) -> Option<String> {
    let skip = usize::try_from(column.checked_sub(1)?).ok()?;
    let start = text
        .char_indices()
        .take_while(|(_, c)| *c != '\n')
        .nth(skip)
        .map(|(i, _)| i)?;
    let end = start.checked_add(name.len())?;
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let before_ok = text[..start]
        .chars()
        .next_back()
        .is_none_or(|c| !is_ident(c));
    let after_ok = text.get(end..)?.chars().next().is_none_or(|c| !is_ident(c));
    (text.get(start..end)? == name && before_ok && after_ok)
        .then(|| format!("{}{to}{}", &text[..start], &text[end..]))
}

/// The carry named `name` in `p`'s walker, to change in place; `None` when there is none.
fn carry_mut<'a>(p: &'a mut Program, name: &str) -> Option<&'a mut Carry> {
    p.walker
        .as_mut()?
        .carries
        .as_mut()?
        .iter_mut()
        .find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Edge;

    #[test]
    fn a_guard_rename_replaces_exactly_the_name_at_its_column() {
        assert_eq!(
            rename_at("plan_okk == true", 1, "plan_okk", "plan_ok").as_deref(),
            Some("plan_ok == true")
        );
        assert_eq!(
            rename_at("x and plan_okk", 7, "plan_okk", "plan_ok").as_deref(),
            Some("x and plan_ok")
        );
        // Not the whole identifier there, or not that name: no edit.
        assert_eq!(rename_at("plan_okkk == 1", 1, "plan_okk", "plan_ok"), None);
        assert_eq!(rename_at("aplan_okk == 1", 2, "plan_okk", "plan_ok"), None);
        assert_eq!(
            rename_at("é plan_okk", 3, "plan_okk", "plan_ok").as_deref(),
            Some("é plan_ok")
        );
        assert_eq!(rename_at("short", 40, "plan_okk", "plan_ok"), None);
    }

    #[test]
    fn an_edit_that_no_longer_matches_leaves_the_program_alone() {
        let mut p = Program {
            edges: Some(vec![Edge {
                from: "gate".into(),
                to: "done".into(),
                guard: Some("plan_ok == true".into()),
                ..Edge::default()
            }]),
            ..Program::default()
        };
        let before = p.clone();
        let edit = Edit::RenameInGuard {
            edge: 0,
            from_step: "gate".into(),
            to_step: "done".into(),
            name: "plan_okk".into(),
            to: "plan_ok".into(),
            column: 1,
        };
        assert_eq!(edit.apply(&mut p), None);
        assert_eq!(p, before);
    }

    #[test]
    fn one_structured_repair_reads_in_both_wordings() {
        let edit = Edit::RenameRead {
            instruction: 3,
            id: "verify".into(),
            index: 0,
            name: "plan_mdd".into(),
            to: "plan_md".into(),
        };
        assert_eq!(
            edit.describe(Wording::Agir),
            "change `plan_mdd` to `plan_md` in `verify`.reads"
        );
        assert_eq!(
            edit.describe(Wording::RustDsl),
            "write `plan_md` instead of `plan_mdd` in the operands of `verify`"
        );
        let mint = Edit::MintCarry {
            name: "plan_ok".into(),
            ty: Some(Type::Bool),
            produced_by: Some("verify".into()),
        };
        assert_eq!(
            mint.describe(Wording::Agir),
            "add `plan_ok: {type: bool, produced_by: verify}` to walker.carries"
        );
        assert_eq!(
            mint.describe(Wording::RustDsl),
            "declare `plan_ok: bool,` in `carries { .. }`"
        );
        let reown = Edit::ReownToModel {
            instruction: "look".into(),
            opcode: Opcode::Sense,
        };
        assert_eq!(
            reown.describe(Wording::Agir),
            "set `owner: model` on `look`, so its `doc` is filled by a model"
        );
        // The DSL writes the owner after the opcode, not as an attribute.
        assert_eq!(
            reown.describe(Wording::RustDsl),
            "let a model do it: write `look: SENSE(model)(..)`, its doc comment saying what it \
             must do"
        );
        for w in [Wording::Agir, Wording::RustDsl] {
            let text = edit.describe(w);
            assert!(!text.contains("walker") || w == Wording::Agir, "{text}");
        }
    }
}

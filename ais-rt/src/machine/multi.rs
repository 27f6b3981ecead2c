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

use ais_core::{Deviation, Field, Program, Type, TypeDecl, TypeKind};

/// The name of the object type synthesized for instruction `id`'s writes. A `.` keeps it
/// apart from every declared name (identifiers have none, §3.1).
pub(crate) fn synthesized_name(id: &str) -> String {
    format!("{id}.writes")
}

/// Gives every Mind instruction with several writes whose result type does not hold them an
/// `output` of a synthesized object of its writes, and records each as a deviation.
pub(crate) fn contract(program: &mut Program, deviations: &mut Vec<Deviation>) {
    let mut added = Vec::new();
    for n in program.instructions() {
        if !n.opcode.is_mind() || n.writes.len() < 2 || holds(program, n) {
            continue;
        }
        let fields: Vec<Field> = n
            .writes
            .iter()
            .map(|w| {
                let carry = program.carry(w).map(|(_, c)| c);
                Field {
                    name: w.clone(),
                    ty: carry.and_then(|c| c.ty.clone()),
                    doc: carry.and_then(|c| c.doc.clone()),
                    ..Field::default()
                }
            })
            .collect();
        let shape: Vec<String> = fields
            .iter()
            .map(|f| match &f.ty {
                Some(t) => format!("{}: {t}", f.name),
                None => format!("{}: any", f.name),
            })
            .collect();
        let letter = result_type(program, n).map_or_else(|| "str".to_owned(), |t| t.to_string());
        deviations.push(Deviation {
            check: None,
            subject: n.id.clone(),
            intended: format!(
                "a slot whose result type is `{letter}` (§6.4), the writes after `{}` recovered from it (§2.3 step 4)",
                n.writes[0]
            ),
            substituted: format!(
                "a slot that contracts for an object of its writes {{{}}}, each carry receiving its field by name",
                shape.join(", ")
            ),
        });
        added.push((
            n.id.clone(),
            TypeDecl {
                name: synthesized_name(&n.id),
                kind: TypeKind::Object(fields),
                doc: Some(format!("The carries `{}` writes.", n.id)),
                ..TypeDecl::default()
            },
        ));
    }
    for (id, decl) in added {
        let name = decl.name.clone();
        program.types.get_or_insert_with(Vec::new).push(decl);
        if let Some(n) = program
            .nodes
            .iter_mut()
            .flatten()
            .find(|n| n.id == id && n.opcode.is_mind())
        {
            n.output = Some(Type::Named(name));
        }
    }
}

/// The result type of §6.4: `output` when it names a type, else `writes[0]`'s declared type.
fn result_type<'a>(program: &'a Program, n: &'a ais_core::Instruction) -> Option<&'a Type> {
    n.output.as_ref().or_else(|| {
        n.writes
            .first()
            .and_then(|w| program.carry(w))
            .and_then(|(_, c)| c.ty.as_ref())
    })
}

/// Whether the result type can hold the writes after the first, so §2.3 step 4 recovers each
/// by name as written: a declared object with a field for each, or an open `dict` or `any`
/// (an object answer with the writes as keys passes it).
fn holds(program: &Program, n: &ais_core::Instruction) -> bool {
    let t = match result_type(program, n) {
        Some(Type::Dict(_) | Type::Any) => return true,
        Some(Type::Named(t)) => t,
        _ => return false,
    };
    match program.type_decl(t).map(|(_, d)| &d.kind) {
        Some(TypeKind::Object(fields)) => n.writes[1..]
            .iter()
            .all(|w| fields.iter().any(|f| &f.name == w)),
        _ => false,
    }
}

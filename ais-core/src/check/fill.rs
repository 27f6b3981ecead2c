//! G9 for GEN-FILL (§4.1: a GEN-FILL contracts for an instance of a declared object type,
//! field-validated). A GEN-FILL with several writes whose result type (§6.4) does not hold
//! them would, by the letter, ask the model for `writes[0]`'s type and never recover the
//! others — an error, repaired mechanically by declaring the object of its writes as its
//! `output` (the runtime's own contract for such a slot). A GEN-FILL with one write of a
//! scalar or enum type runs, but nothing about its result is field-validated: a warning, whose
//! repair names the tighter or the truer opcode. A list or a dict passes (its elements may be
//! objects; the reference implementation fills them, and its corpus relies on it).

use super::Ctx;
use crate::diag::{CheckId, FindingKind, Repair, Severity};
use crate::edit::Edit;
use crate::program::{Opcode, Program, Type, TypeKind};
use crate::source::{Element, FieldKey, Locus};

/// Runs the GEN-FILL checks.
pub(super) fn run(cx: &mut Ctx) {
    let p = cx.ix.p;
    for (i, n) in p.instructions().iter().enumerate() {
        if n.opcode != Opcode::GenFill || n.writes.is_empty() {
            continue;
        }
        let id = n.id.clone();
        let letter = p.result_type(n).cloned();
        let shown = letter.as_ref().map_or("str".to_owned(), Type::to_string);
        if n.writes.len() > 1 {
            if p.result_holds_writes(n) {
                continue;
            }
            let fields = p.fields_of_writes(n);
            let ty = type_name(p, &id);
            let edit = Edit::ObjectOfWrites {
                instruction: id.clone(),
                ty: ty.clone(),
                fields,
            };
            let summary = edit.describe(crate::edit::Wording::Agir);
            let locus = match n.output {
                Some(_) => Locus::field(Element::Instruction(i), FieldKey::Output),
                None => Locus::entry(Element::Instruction(i), FieldKey::Writes, 1),
            };
            let f = cx.report_instr(
                CheckId::G9,
                i,
                locus,
                format!(
                    "GEN-FILL `{id}` writes {} carries, but its result type is `{shown}`, not an object holding them (§4.1): the model would be asked for `{shown}` and `{}` could never be filled",
                    n.writes.len(),
                    n.writes[1..].join("`, `")
                ),
            );
            f.repair = Some(Repair::mechanical(edit, summary));
            f.kind = Some(FindingKind::FillNotObject);
            continue;
        }
        let Some(ty) = letter else { continue };
        // A list or dict may hold objects (the reference fills `list[str]` too): only a
        // scalar or an enum is surely no object.
        let scalar = matches!(
            ty,
            Type::Str | Type::Int | Type::Float | Type::Bool | Type::Path
        );
        let is_enum = matches!(&ty, Type::Named(t)
            if p.type_decl(t).is_some_and(|(_, d)| matches!(d.kind, TypeKind::Enum(_))));
        if !(scalar || is_enum) {
            continue;
        }
        let w = &n.writes[0];
        let repair = if is_enum {
            format!("make `{id}` a GEN-ENUM: it chooses one member of `{ty}`")
        } else if ty == Type::Str {
            format!(
                "make `{id}` a GEN-RAW if its result is text, or declare an object type for what it fills and type `{w}` with it"
            )
        } else {
            format!(
                "declare an object type with a `{w}: {ty}` field, make it `{id}`'s `output`, and write the field's carry"
            )
        };
        let f = cx.report_instr(
            CheckId::G9,
            i,
            Locus::entry(Element::Instruction(i), FieldKey::Writes, 0),
            format!(
                "GEN-FILL `{id}` fills `{w}`, whose type `{ty}` is not an object (§4.1: a GEN-FILL contracts for an instance of a declared object type, field-validated)"
            ),
        );
        f.severity = Severity::Warn;
        f.repair = Some(Repair::manual(repair));
        f.kind = Some(FindingKind::FillNotObject);
    }
}

/// A name for the object of `id`'s writes that no declared type has: `ExtractWrites` for
/// `extract`, then `ExtractWrites2`, ….
fn type_name(p: &Program, id: &str) -> String {
    let camel: String = id
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    let base = format!("{camel}Writes");
    let mut name = base.clone();
    let mut k = 2;
    while p.type_decl(&name).is_some() {
        name = format!("{base}{k}");
        k += 1;
    }
    name
}

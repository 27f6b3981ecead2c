//! What a slot with several writes contracts for (§2.3 step 4, §4.1, §6.4): its result type,
//! whether that type holds every write, and the object of its writes that it contracts for
//! when it does not. One definition for the validator's check and repair (G9) and the
//! runtime's contract.

use super::{Field, Instruction, Program, Type};

impl Program {
    /// The result type of an SU instruction (§4.1, §6.4): `output` when it names a type, else
    /// `writes[0]`'s declared type; `None` when neither says (the letter then gives `str`).
    pub fn result_type<'a>(&'a self, n: &'a Instruction) -> Option<&'a Type> {
        n.output.as_ref().or_else(|| {
            n.writes
                .first()
                .and_then(|w| self.carry(w))
                .and_then(|(_, c)| c.ty.as_ref())
        })
    }

    /// Whether `n`'s result type holds the writes after its first, so §2.3 step 4 recovers
    /// each by name: a declared object (or `outcome`) with a field for each, or an open `dict`
    /// or `any` (an object answer with the writes as keys passes it). True for one write.
    pub fn result_holds_writes(&self, n: &Instruction) -> bool {
        if n.writes.len() < 2 {
            return true;
        }
        let t = match self.result_type(n) {
            Some(Type::Dict(_) | Type::Any) => return true,
            Some(Type::Named(t)) => t,
            _ => return false,
        };
        let decl = self.type_decl(t).map(|(_, d)| d);
        super::object_fields(decl, t).is_some_and(|fields| {
            n.writes[1..]
                .iter()
                .all(|w| fields.iter().any(|(f, _)| f == w))
        })
    }

    /// The object of `n`'s writes: one field per written carry, with the carry's declared type
    /// and doc.
    pub fn fields_of_writes(&self, n: &Instruction) -> Vec<Field> {
        n.writes
            .iter()
            .map(|w| {
                let carry = self.carry(w).map(|(_, c)| c);
                Field {
                    name: w.clone(),
                    ty: carry.and_then(|c| c.ty.clone()),
                    doc: carry.and_then(|c| c.doc.clone()),
                    ..Field::default()
                }
            })
            .collect()
    }
}

/// The fields as a shape a user reads: `{name: str, email: str, company: str}`.
pub fn shape_of(fields: &[Field]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|f| match &f.ty {
            Some(t) => format!("{}: {t}", f.name),
            None => format!("{}: any", f.name),
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

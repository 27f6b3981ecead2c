//! [`ProgramIndex`]: the lookups the calling convention makes, built once per program.

use super::{
    Access, OUTCOME_FIELDS, ParamBinding, SlotOperands, bind_slot_with, bind_tool_with,
    is_path_shaped,
};
use crate::model::{
    Carry, Instruction, Knowledge, Opcode, Program, Tool, ToolSurface, Type, TypeDecl, TypeKind,
};
use crate::sig::Signature;

/// A hash map keyed with foldhash (names are hashed a lot; SipHash dominated the validator's
/// profile).
pub(crate) type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A program indexed for binding: every name the calling convention looks up, mapped once.
///
/// Build it once with [`ProgramIndex::new`] (linear in the program's size) and bind any number
/// of instructions against it; each call then costs time in the size of the instruction (its
/// reads, its tools' parameters, the tools bound to it), not of the program. The free functions
/// of [`crate::bind`] taking a `&Program` ([`super::bind_tool`], [`super::bind_slot`],
/// [`super::access`], …) build an index for that one call and give the same results; use them
/// for a single lookup and an index for a whole program (the validator, the runtime).
///
/// Lookups by name return the *first* declaration, as [`Program::carry`] and its siblings do.
///
/// ```
/// # use ais_core::model::*; use ais_core::bind::*; use ais_core::sig::parse;
/// let save = Instruction { id: "save".into(), opcode: Opcode::Act, reads: vec!["report_md".into()], ..Default::default() };
/// let carry = Carry { name: "report_md".into(), ty: Some(Type::Str), ..Default::default() };
/// let program = Program {
///     walker: Some(Walker { carries: Some(vec![carry]), ..Default::default() }),
///     nodes: Some(vec![save.clone()]),
///     ..Default::default()
/// };
/// let index = ProgramIndex::new(&program);
/// let sig = parse("(content, path) -> str").unwrap();
/// let b = index.bind_tool(&save, &sig, None);
/// assert_eq!(b, bind_tool(&program, &save, &sig, None));
/// assert_eq!(b[0].carry(), Some("report_md"));
/// ```
#[derive(Clone, Debug)]
pub struct ProgramIndex<'p> {
    program: &'p Program,
    /// Carry name → its first declaration.
    carries: Map<&'p str, usize>,
    /// Tool name → every tool declared with it, in declaration order.
    tools: Map<&'p str, Vec<usize>>,
    /// Type name → its first declaration.
    types: Map<&'p str, usize>,
    /// Knowledge name → its first declaration.
    knowledge: Map<&'p str, usize>,
    /// Instruction id → the tools whose `serves` lists it, in declaration order, each once.
    serving: Map<&'p str, Vec<usize>>,
    /// Instruction id → the knowledge items resident on it, in declaration order, each once.
    resident: Map<&'p str, Vec<usize>>,
    /// Field name → every carry declaration (in order) whose type is an object with that field.
    field_carries: Map<&'p str, Vec<usize>>,
}

impl<'p> ProgramIndex<'p> {
    /// Indexes `program`: one pass over its carries, tools, types and knowledge.
    pub fn new(program: &'p Program) -> Self {
        let carries = first_by_name(program.carries().iter().map(|c| c.name.as_str()));
        let types = first_by_name(program.type_list().iter().map(|t| t.name.as_str()));
        let knowledge = first_by_name(program.knowledge_list().iter().map(|k| k.name.as_str()));
        let mut tools: Map<&str, Vec<usize>> = Map::default();
        let mut serving: Map<&str, Vec<usize>> = Map::default();
        for (t, tool) in program.tool_list().iter().enumerate() {
            tools.entry(tool.name.as_str()).or_default().push(t);
            for id in tool.serves.iter().flatten() {
                push_unique(serving.entry(id.as_str()).or_default(), t);
            }
        }
        let mut resident: Map<&str, Vec<usize>> = Map::default();
        for (k, item) in program.knowledge_list().iter().enumerate() {
            for id in &item.resident_on {
                push_unique(resident.entry(id.as_str()).or_default(), k);
            }
        }
        let mut index = ProgramIndex {
            program,
            carries,
            tools,
            types,
            knowledge,
            serving,
            resident,
            field_carries: Map::default(),
        };
        let mut field_carries: Map<&str, Vec<usize>> = Map::default();
        for (c, carry) in program.carries().iter().enumerate() {
            let Some(fields) = carry.ty.as_ref().and_then(|t| index.object_fields(t)) else {
                continue;
            };
            for f in fields {
                push_unique(field_carries.entry(f).or_default(), c);
            }
        }
        index.field_carries = field_carries;
        index
    }

    /// The indexed program.
    pub fn program(&self) -> &'p Program {
        self.program
    }

    /// The first carry declared with this name, with its index.
    pub fn carry(&self, name: &str) -> Option<(usize, &'p Carry)> {
        let &c = self.carries.get(name)?;
        Some((c, self.program.carries().get(c)?))
    }

    /// The first tool declared with this name, with its index.
    pub fn tool(&self, name: &str) -> Option<(usize, &'p Tool)> {
        let &t = self.tools_named(name).first()?;
        Some((t, self.program.tool_list().get(t)?))
    }

    /// The indices of every tool declared with this name, in declaration order.
    pub fn tools_named(&self, name: &str) -> &[usize] {
        self.tools.get(name).map(Vec::as_slice).unwrap_or_default()
    }

    /// The first type declared with this name, with its index.
    pub fn type_decl(&self, name: &str) -> Option<(usize, &'p TypeDecl)> {
        let &t = self.types.get(name)?;
        Some((t, self.program.type_list().get(t)?))
    }

    /// The first knowledge item declared with this name, with its index.
    pub fn knowledge_item(&self, name: &str) -> Option<(usize, &'p Knowledge)> {
        let &k = self.knowledge.get(name)?;
        Some((k, self.program.knowledge_list().get(k)?))
    }

    /// The indices of the tools whose `serves` lists the instruction id `id`, in declaration
    /// order, each once.
    pub fn serving(&self, id: &str) -> &[usize] {
        self.serving.get(id).map(Vec::as_slice).unwrap_or_default()
    }

    /// The indices of the knowledge items resident on the instruction id `id` (§5.2), in
    /// declaration order, each once.
    pub fn resident_on(&self, id: &str) -> &[usize] {
        self.resident.get(id).map(Vec::as_slice).unwrap_or_default()
    }

    /// [`super::is_path_shaped_carry`] against this index.
    pub fn is_path_shaped_carry(&self, name: &str) -> bool {
        if name == "task" {
            return false;
        }
        is_path_shaped(name)
            || self
                .carry(name)
                .is_some_and(|(_, c)| c.ty == Some(Type::Path))
    }

    /// [`super::object_fields`] against this index.
    pub fn object_fields(&self, ty: &Type) -> Option<Vec<&'p str>> {
        let Type::Named(name) = ty else {
            return None;
        };
        match self.type_decl(name) {
            Some((_, decl)) => match &decl.kind {
                TypeKind::Object(fields) => Some(fields.iter().map(|f| f.name.as_str()).collect()),
                _ => None,
            },
            None if name == "outcome" => Some(OUTCOME_FIELDS.to_vec()),
            None => None,
        }
    }

    /// [`super::bound_tools`] against this index.
    pub fn bound_tools(&self, instr: &Instruction) -> Vec<&'p Tool> {
        let mut idx: Vec<usize> = self.serving(&instr.id).to_vec();
        if let Some(name) = instr.tool.as_deref() {
            idx.extend_from_slice(self.tools_named(name));
        }
        idx.extend_from_slice(self.tools_named(&instr.id));
        idx.sort_unstable();
        idx.dedup();
        idx.iter()
            .filter_map(|&t| self.program.tool_list().get(t))
            .collect()
    }

    /// [`super::access`] against this index.
    pub fn access(&self, instr: &Instruction) -> Access {
        match instr.opcode {
            Opcode::Act => Access::Write,
            Opcode::Sense => Access::Read,
            _ => {
                let writes = self.bound_tools(instr).iter().any(|t| {
                    matches!(
                        t.surface,
                        Some(ToolSurface::ActArtifact | ToolSurface::Unknown(_))
                    )
                });
                if writes { Access::Write } else { Access::Read }
            }
        }
    }

    /// [`super::read_carries`] against this index.
    pub fn read_carries<'i>(&self, instr: &'i Instruction) -> Vec<&'i str> {
        let task_is_input = self.knowledge_item("task").is_none();
        let mut out: Vec<&'i str> = Vec::new();
        for r in &instr.reads {
            let is_carry = self.carries.contains_key(r.as_str()) || (r == "task" && task_is_input);
            if is_carry && !out.contains(&r.as_str()) {
                out.push(r);
            }
        }
        out
    }

    /// Rule 2: the first object-typed carry (read carries first, then the module's others, in
    /// declaration order) with a field named `param`.
    pub(super) fn field_carry(&self, reads: &[&str], param: &str) -> Option<&'p Carry> {
        let has_field = |c: &Carry| {
            c.ty.as_ref()
                .and_then(|t| self.object_fields(t))
                .is_some_and(|fields| fields.contains(&param))
        };
        let read = reads
            .iter()
            .filter_map(|r| self.carry(r).map(|(_, c)| c))
            .find(|c| has_field(c));
        read.or_else(|| {
            self.field_carries
                .get(param)?
                .iter()
                .filter_map(|&c| self.program.carries().get(c))
                .find(|c| !reads.contains(&c.name.as_str()))
        })
    }

    /// [`super::bind_tool`] against this index.
    pub fn bind_tool(
        &self,
        instr: &Instruction,
        sig: &Signature,
        invocation: Option<&str>,
    ) -> Vec<ParamBinding> {
        bind_tool_with(self, instr, sig, invocation)
    }

    /// [`super::bind_slot`] against this index.
    pub fn bind_slot(&self, instr: &Instruction) -> SlotOperands {
        bind_slot_with(self, instr)
    }
}

fn first_by_name<'p>(names: impl Iterator<Item = &'p str>) -> Map<&'p str, usize> {
    let mut map = Map::default();
    for (i, n) in names.enumerate() {
        map.entry(n).or_insert(i);
    }
    map
}

fn push_unique(v: &mut Vec<usize>, x: usize) {
    if v.last() != Some(&x) {
        v.push(x);
    }
}

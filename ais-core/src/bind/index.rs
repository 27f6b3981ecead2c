//! [`ProgramIndex`]: the lookups the calling convention makes, built once per program.

use super::{
    Access, ParamBinding, SlotOperands, bind_slot_with, bind_tool_with, is_artifact_surface,
    is_path_shaped,
};
use crate::program::{Carry, Instruction, Knowledge, Opcode, Program, Tool, Type, TypeDecl};
use crate::sig::Signature;

/// A hash map keyed with foldhash (names are hashed a lot; SipHash dominated the validator's
/// profile).
pub(crate) type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A program indexed for binding: every name the calling convention looks up, mapped once.
///
/// Build it once with [`ProgramIndex::new`] (linear in the program's size) and bind any number
/// of instructions against it; each call then costs time in the size of the instruction (its
/// reads, its tools' parameters, the tools bound to it), not of the program. The validator
/// and the runtime each bind a whole program through one index.
///
/// Lookups by name return the *first* declaration, as [`Program::carry`] and its siblings do.
///
/// ```
/// # use ais_core::*; use ais_core::bind::*; use ais_core::sig::parse;
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

    /// True when the carry `name` is path-shaped: by its name ([`is_path_shaped`]) or because it
    /// is declared `type: path`. `task` never is.
    pub fn is_path_shaped_carry(&self, name: &str) -> bool {
        if name == "task" {
            return false;
        }
        is_path_shaped(name)
            || self
                .carry(name)
                .is_some_and(|(_, c)| c.ty == Some(Type::Path))
    }

    /// The field names of `ty` when it is an object type: a declared `kind: object`, or the
    /// built-in `outcome` when no type of that name is declared.
    pub fn object_fields(&self, ty: &Type) -> Option<Vec<&'p str>> {
        Some(
            self.object_field_types(ty)?
                .into_iter()
                .map(|(n, _)| n)
                .collect(),
        )
    }

    /// The fields of `ty`, with their declared types, when it is an object type (a declared
    /// `kind: object`, or the built-in [`OUTCOME`](crate::OUTCOME)).
    pub fn object_field_types(&self, ty: &Type) -> Option<Vec<(&'p str, Option<&'p Type>)>> {
        let Type::Named(name) = ty else {
            return None;
        };
        crate::program::object_fields(self.type_decl(name).map(|(_, d)| d), name)
    }

    /// The tools bound to `instr` by any of the three mechanisms of §5.4 (its `tool` field, a
    /// tool's `serves`, a tool named like its `id`), each once, in declaration order — the order a
    /// pipeline runs in. Whether the mechanisms agree is the validator's concern.
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

    /// The access of an instruction (§7.3, §4.3): a write for an `ACT`, and for any other
    /// instruction except a `SENSE` that is served by an `ACT·artifact` tool (a tool surface the
    /// model could not read counts as `ACT·artifact`, §12.2); a read otherwise.
    ///
    /// ```
    /// # use ais_core::*; use ais_core::bind::{Access, ProgramIndex};
    /// let code = Instruction { id: "export".into(), opcode: Opcode::Code, ..Default::default() };
    /// let tool = Tool { name: "export".into(), surface: Some(ToolSurface::ActArtifact), ..Default::default() };
    /// let program = Program { tools: Some(vec![tool]), nodes: Some(vec![code.clone()]), ..Default::default() };
    /// assert_eq!(ProgramIndex::new(&program).access(&code), Access::Write); // served by name match
    /// ```
    pub fn access(&self, instr: &Instruction) -> Access {
        match instr.opcode {
            Opcode::Act => Access::Write,
            Opcode::Sense => Access::Read,
            _ => {
                let writes = self
                    .bound_tools(instr)
                    .iter()
                    .any(|t| t.surface.as_ref().is_some_and(is_artifact_surface));
                if writes { Access::Write } else { Access::Read }
            }
        }
    }

    /// The instruction's read carries, in `reads` order, each once: the names in `reads` that are
    /// declared carries, plus `task` (the invocation input) even when undeclared. Knowledge keys and
    /// dangling names are not carries and are left out.
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

    /// Binds each parameter of `sig` for `instr` (§7.1–§7.3). `invocation` is the task text when
    /// known (at run time); statically it is `None`.
    ///
    /// One binding per parameter, in signature order; see the [module documentation](super) for
    /// each rule and the decisions taken where §7 is silent.
    pub fn bind_tool(
        &self,
        instr: &Instruction,
        sig: &Signature,
        invocation: Option<&str>,
    ) -> Vec<ParamBinding> {
        bind_tool_with(self, instr, sig, invocation)
    }

    /// The operands of the SU slot for `instr`. The same function serves the slot's declaration
    /// and every call site, so the two cannot disagree (§7.6).
    ///
    /// ```
    /// # use ais_core::*; use ais_core::bind::*;
    /// let reads: Vec<String> = (1..=14).map(|i| format!("c{i}")).collect();
    /// let carries = reads.iter().map(|n| Carry { name: n.clone(), ..Default::default() }).collect();
    /// let fill = Instruction { id: "fill".into(), opcode: Opcode::GenFill, reads, ..Default::default() };
    /// let program = Program {
    ///     walker: Some(Walker { carries: Some(carries), ..Default::default() }),
    ///     ..Default::default()
    /// };
    /// let slot = ProgramIndex::new(&program).bind_slot(&fill);
    /// assert_eq!(slot.operands.len(), SLOT_ARITY_CAP);
    /// assert_eq!(slot.operands[11], SlotOperand::Context {
    ///     name: "context".into(),
    ///     carries: vec!["c12".into(), "c13".into(), "c14".into()],
    /// });
    /// ```
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

/// Appends `x` unless it is already last (indices arrive in order, so this keeps them unique).
pub(crate) fn push_unique(v: &mut Vec<usize>, x: usize) {
    if v.last() != Some(&x) {
        v.push(x);
    }
}

#[cfg(test)]
mod tests {
    //! The index against the calling convention's lookups written as plain scans of the
    //! program's lists (the implementation before the index), over programs that repeat names,
    //! so that "first declaration", "each once" and "declaration order" are exercised.

    use super::*;
    use crate::program::TypeKind;
    use crate::program::{Field, ToolSurface, Walker};
    use proptest::prelude::*;

    const NAMES: [&str; 7] = ["a", "b", "spec", "task", "path", "out_file", "k1"];
    const TYPES: [&str; 3] = ["Obj", "Obj2", "outcome"];
    const FIELDS: [&str; 4] = ["a", "width", "ok", "b"];
    const TOOLS: [&str; 4] = ["t1", "t2", "x", "y"];
    const IDS: [&str; 3] = ["x", "y", "z"];

    fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(pool).prop_map(str::to_owned)
    }

    fn ty() -> impl Strategy<Value = Option<Type>> {
        prop_oneof![
            Just(None),
            Just(Some(Type::Str)),
            Just(Some(Type::Path)),
            pick(&TYPES).prop_map(|t| Some(Type::Named(t))),
        ]
    }

    fn program() -> impl Strategy<Value = Program> {
        let carries = prop::collection::vec(
            (pick(&NAMES), ty()).prop_map(|(name, ty)| Carry {
                name,
                ty,
                ..Carry::default()
            }),
            0..8,
        );
        let types = prop::collection::vec(
            (
                pick(&TYPES),
                any::<bool>(),
                prop::collection::vec(pick(&FIELDS), 0..4),
            )
                .prop_map(|(name, object, fields)| TypeDecl {
                    name,
                    kind: if object {
                        TypeKind::Object(
                            fields
                                .into_iter()
                                .map(|name| Field {
                                    name,
                                    ..Field::default()
                                })
                                .collect(),
                        )
                    } else {
                        TypeKind::Unknown(String::new())
                    },
                    ..TypeDecl::default()
                }),
            0..4,
        );
        let surface = prop_oneof![
            Just(None),
            Just(Some(ToolSurface::Sense)),
            Just(Some(ToolSurface::ActArtifact)),
            Just(Some(ToolSurface::Unknown("w".into()))),
        ];
        let tools = prop::collection::vec(
            (
                pick(&TOOLS),
                prop::option::of(prop::collection::vec(pick(&IDS), 0..4)),
                surface,
            )
                .prop_map(|(name, serves, surface)| Tool {
                    name,
                    serves,
                    surface,
                    ..Tool::default()
                }),
            0..5,
        );
        let knowledge = prop::collection::vec(
            (pick(&NAMES), prop::collection::vec(pick(&IDS), 0..3)).prop_map(
                |(name, resident_on)| Knowledge {
                    name,
                    resident_on,
                    ..Knowledge::default()
                },
            ),
            0..5,
        );
        let opcode = prop_oneof![
            Just(Opcode::Act),
            Just(Opcode::Sense),
            Just(Opcode::Code),
            Just(Opcode::GenFill),
        ];
        let nodes = prop::collection::vec(
            (
                pick(&IDS),
                opcode,
                prop::option::of(pick(&TOOLS)),
                prop::collection::vec(pick(&NAMES), 0..6),
            )
                .prop_map(|(id, opcode, tool, reads)| Instruction {
                    id,
                    opcode,
                    tool,
                    reads,
                    ..Instruction::default()
                }),
            1..4,
        );
        (carries, types, tools, knowledge, nodes).prop_map(
            |(carries, types, tools, knowledge, nodes)| Program {
                types: Some(types),
                tools: Some(tools),
                knowledge: Some(knowledge),
                walker: Some(Walker {
                    carries: Some(carries),
                    ..Walker::default()
                }),
                nodes: Some(nodes),
                ..Program::default()
            },
        )
    }

    fn ref_object_fields<'p>(p: &'p Program, ty: &Type) -> Option<Vec<&'p str>> {
        let Type::Named(name) = ty else { return None };
        match p.type_decl(name) {
            Some((_, decl)) => match &decl.kind {
                TypeKind::Object(fields) => Some(fields.iter().map(|f| f.name.as_str()).collect()),
                _ => None,
            },
            None if name == "outcome" => Some(vec!["ok", "error", "output", "value"]),
            None => None,
        }
    }

    fn ref_read_carries<'i>(p: &Program, instr: &'i Instruction) -> Vec<&'i str> {
        let mut out: Vec<&'i str> = Vec::new();
        for r in &instr.reads {
            let is_carry = p.carry(r).is_some() || (r == "task" && p.knowledge_item(r).is_none());
            if is_carry && !out.contains(&r.as_str()) {
                out.push(r);
            }
        }
        out
    }

    fn ref_bound_tools<'p>(p: &'p Program, instr: &Instruction) -> Vec<&'p Tool> {
        p.tool_list()
            .iter()
            .filter(|t| {
                instr.tool.as_deref() == Some(t.name.as_str())
                    || t.serves.as_deref().is_some_and(|s| s.contains(&instr.id))
                    || t.name == instr.id
            })
            .collect()
    }

    fn ref_field_carry<'p>(p: &'p Program, reads: &[&str], param: &str) -> Option<&'p str> {
        let read_carries = reads.iter().filter_map(|r| p.carry(r).map(|(_, c)| c));
        let others = p
            .carries()
            .iter()
            .filter(|c| !reads.contains(&c.name.as_str()));
        let has_field = |c: &Carry| {
            c.ty.as_ref()
                .and_then(|t| ref_object_fields(p, t))
                .is_some_and(|fields| fields.contains(&param))
        };
        read_carries
            .chain(others)
            .find(|c| has_field(c))
            .map(|c| c.name.as_str())
    }

    fn ref_slot_knowledge(p: &Program, instr: &Instruction) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for k in p.knowledge_list() {
            let selected = k.resident_on.contains(&instr.id)
                || (instr.reads.contains(&k.name) && p.carry(&k.name).is_none());
            if selected && !out.contains(&k.name) {
                out.push(k.name.clone());
            }
        }
        out
    }

    proptest! {
        #[test]
        fn the_index_finds_what_scanning_the_lists_finds(p in program()) {
            let ix = ProgramIndex::new(&p);
            for name in NAMES.iter().chain(&TOOLS).chain(&TYPES) {
                prop_assert_eq!(ix.carry(name), p.carry(name));
                prop_assert_eq!(ix.tool(name), p.tool(name));
                prop_assert_eq!(ix.type_decl(name), p.type_decl(name));
                prop_assert_eq!(ix.knowledge_item(name), p.knowledge_item(name));
                let ty = Type::Named((*name).to_owned());
                prop_assert_eq!(ix.object_fields(&ty), ref_object_fields(&p, &ty));
            }
            for instr in p.instructions() {
                let reads = ix.read_carries(instr);
                prop_assert_eq!(&reads, &ref_read_carries(&p, instr));
                let tools: Vec<*const Tool> =
                    ix.bound_tools(instr).into_iter().map(std::ptr::from_ref).collect();
                let want: Vec<*const Tool> =
                    ref_bound_tools(&p, instr).into_iter().map(std::ptr::from_ref).collect();
                prop_assert_eq!(tools, want);
                for field in FIELDS.iter().chain(&NAMES) {
                    prop_assert_eq!(
                        ix.field_carry(&reads, field).map(|c| c.name.as_str()),
                        ref_field_carry(&p, &reads, field)
                    );
                }
                prop_assert_eq!(ix.bind_slot(instr).knowledge, ref_slot_knowledge(&p, instr));
            }
        }
    }
}

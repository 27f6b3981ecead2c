//! Building a [`Program`] in Rust (documented on [`ProgramBuilder`]).

use crate::program::{
    Autonomy, Carry, Concurrency, Edge, EnumMember, Field, Instruction, Knowledge, Opcode, Owner,
    Program, Role, Tool, Type, TypeDecl, TypeKind, Walker,
};

/// Building a [`Program`] in Rust: what the `ais!` macro's front end lowers into, and what a
/// test or a tool writes instead of AG-IR text.
///
/// The builder only assembles the model; it judges nothing. Check the result with
/// [`check`](crate::check::check) (a builder's program has no source positions: pass an empty
/// [`SourceMap`](crate::source::SourceMap), or the macro's own
/// [`Locator`](crate::source::Locator)).
///
/// ```
/// use ais_core::ProgramBuilder;
/// use ais_core::{Repairs, check};
/// use ais_core::{Opcode, Owner, Type};
/// use ais_core::{Outcome, SourceMap};
///
/// let program = ProgramBuilder::new("shout")
///     .description("Upper-case the task.")
///     .input("task", Type::Str)
///     .carry("loud", Type::Str)
///     .carry("ok", Type::Bool)
///     .step("draft", Opcode::GenRaw, |s| s.reads(["task"]).writes(["loud"]).doc("Say it loudly."))
///     .step("judge", Opcode::Code, |s| s.reads(["loud"]).writes(["ok"]).body("loud == loud.upper()"))
///     .step("gate", Opcode::Route, |s| s.owner(Owner::Code).reads(["ok"]))
///     .step("done", Opcode::Terminal, |s| s.reads(["loud"]))
///     .edge("draft", "judge")
///     .edge("judge", "gate")
///     .edge_if("gate", "done", "ok == true")
///     .edge_else("gate", "draft")
///     .build();
///
/// // `produced_by` was inferred from each carry's only writer.
/// assert_eq!(program.carry("loud").unwrap().1.produced_by.as_deref(), Some("draft"));
/// let checked = check(&program, &SourceMap::new(), Repairs::Off);
/// assert_eq!(checked.outcome, Outcome::Clean, "{:#?}", checked.findings);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ProgramBuilder {
    program: Program,
}

impl ProgramBuilder {
    /// A program named `name` (the frontmatter `name` and the walker's name).
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        ProgramBuilder {
            program: Program {
                walker: Some(Walker {
                    name: Some(name.clone()),
                    ..Walker::default()
                }),
                name: Some(name),
                ..Program::default()
            },
        }
    }

    /// The frontmatter `description`: when to invoke the program.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.program.description = Some(text.into());
        self
    }

    /// The walker's name, when it differs from the program's.
    pub fn walker_name(mut self, name: impl Into<String>) -> Self {
        self.walker().name = Some(name.into());
        self
    }

    fn walker(&mut self) -> &mut Walker {
        self.program.walker.get_or_insert_with(Walker::default)
    }

    /// Declares a carry supplied by the caller (`role: input`).
    pub fn input(self, name: impl Into<String>, ty: Type) -> Self {
        self.carry_with(Carry {
            name: name.into(),
            ty: Some(ty),
            role: Some(Role::Input),
            ..Carry::default()
        })
    }

    /// Declares a carry; its `produced_by` is inferred at [`build`](Self::build) when exactly one
    /// instruction writes it.
    pub fn carry(self, name: impl Into<String>, ty: Type) -> Self {
        self.carry_with(Carry {
            name: name.into(),
            ty: Some(ty),
            ..Carry::default()
        })
    }

    /// Declares a carry given in full.
    pub fn carry_with(mut self, carry: Carry) -> Self {
        self.walker()
            .carries
            .get_or_insert_with(Vec::new)
            .push(carry);
        self
    }

    /// Declares an enum type.
    pub fn enum_type<S: Into<String>>(
        self,
        name: impl Into<String>,
        members: impl IntoIterator<Item = S>,
    ) -> Self {
        let members = members
            .into_iter()
            .map(|m| EnumMember {
                name: m.into(),
                doc: None,
            })
            .collect();
        self.type_decl(TypeDecl {
            name: name.into(),
            kind: TypeKind::Enum(members),
            ..TypeDecl::default()
        })
    }

    /// Declares an object type with typed fields.
    pub fn object_type<S: Into<String>>(
        self,
        name: impl Into<String>,
        fields: impl IntoIterator<Item = (S, Type)>,
    ) -> Self {
        let fields = fields
            .into_iter()
            .map(|(n, ty)| Field {
                name: n.into(),
                ty: Some(ty),
                ..Field::default()
            })
            .collect();
        self.type_decl(TypeDecl {
            name: name.into(),
            kind: TypeKind::Object(fields),
            ..TypeDecl::default()
        })
    }

    /// Declares a type given in full.
    pub fn type_decl(mut self, decl: TypeDecl) -> Self {
        self.program.types.get_or_insert_with(Vec::new).push(decl);
        self
    }

    /// Declares a knowledge item.
    pub fn knowledge(mut self, item: Knowledge) -> Self {
        self.program
            .knowledge
            .get_or_insert_with(Vec::new)
            .push(item);
        self
    }

    /// Declares a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.program.tools.get_or_insert_with(Vec::new).push(tool);
        self
    }

    /// Adds an instruction `id` of `opcode`, shaped by `shape` (the first one added is the
    /// entry).
    pub fn step(
        self,
        id: impl Into<String>,
        opcode: Opcode,
        shape: impl FnOnce(StepBuilder) -> StepBuilder,
    ) -> Self {
        let step = shape(StepBuilder(Instruction {
            id: id.into(),
            opcode,
            ..Instruction::default()
        }));
        self.instruction(step.0)
    }

    /// Adds an instruction given in full.
    pub fn instruction(mut self, instruction: Instruction) -> Self {
        self.program
            .nodes
            .get_or_insert_with(Vec::new)
            .push(instruction);
        self
    }

    /// Adds an unguarded edge: the default transition.
    pub fn edge(self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.edge_with(Edge {
            from: from.into(),
            to: to.into(),
            ..Edge::default()
        })
    }

    /// Adds an edge taken when `guard` (an expression over carries) holds.
    pub fn edge_if(
        self,
        from: impl Into<String>,
        to: impl Into<String>,
        guard: impl Into<String>,
    ) -> Self {
        self.edge_with(Edge {
            from: from.into(),
            to: to.into(),
            guard: Some(guard.into()),
            ..Edge::default()
        })
    }

    /// Adds the `otherwise` edge: the default among guarded ones.
    pub fn edge_else(self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.edge_if(from, to, "otherwise")
    }

    /// Adds an edge given in full.
    pub fn edge_with(mut self, edge: Edge) -> Self {
        self.program.edges.get_or_insert_with(Vec::new).push(edge);
        self
    }

    /// The module-level `concurrency` section.
    pub fn concurrency(mut self, concurrency: Concurrency) -> Self {
        self.program.concurrency = Some(concurrency);
        self
    }

    /// The program. Each carry with no role and no `produced_by` that exactly one instruction
    /// writes gets that instruction as its producer.
    pub fn build(mut self) -> Program {
        let nodes = self.program.nodes.as_deref().unwrap_or_default();
        let (writers, _) = crate::check::index::data_flow(nodes);
        let producers: Vec<Option<String>> = self
            .program
            .carries()
            .iter()
            .map(|c| {
                let writers = writers.get(c.name.as_str()).map(Vec::as_slice);
                match (&c.role, &c.produced_by, writers.unwrap_or_default()) {
                    (None, None, [only]) => Some(nodes[*only].id.clone()),
                    _ => None,
                }
            })
            .collect();
        if let Some(carries) = self
            .program
            .walker
            .as_mut()
            .and_then(|w| w.carries.as_mut())
        {
            for (c, p) in carries.iter_mut().zip(producers) {
                if p.is_some() {
                    c.produced_by = p;
                }
            }
        }
        self.program
    }
}

/// Shapes one instruction inside [`ProgramBuilder::step`].
#[derive(Clone, Debug)]
pub struct StepBuilder(Instruction);

impl StepBuilder {
    /// Its `reads`, in binding order.
    pub fn reads<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.0.reads = names.into_iter().map(Into::into).collect();
        self
    }

    /// Its `writes`; the first receives the result.
    pub fn writes<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.0.writes = names.into_iter().map(Into::into).collect();
        self
    }

    /// Its `doc`: the semantic operand.
    pub fn doc(mut self, text: impl Into<String>) -> Self {
        self.0.doc = Some(text.into());
        self
    }

    /// Its `owner` (for an opcode that may run on either unit).
    pub fn owner(mut self, owner: Owner) -> Self {
        self.0.owner = Some(owner);
        self
    }

    /// The tool it binds (`tool`).
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        self.0.tool = Some(name.into());
        self
    }

    /// A CODE instruction's single-expression `body`.
    pub fn body(mut self, expr: impl Into<String>) -> Self {
        self.0.body = Some(expr.into());
        self
    }

    /// An SU instruction's `output` type.
    pub fn output(mut self, ty: Type) -> Self {
        self.0.output = Some(ty);
        self
    }

    /// The tools a model slot may reach for (`autonomy.tools`).
    pub fn autonomy<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.0.autonomy = Some(Autonomy {
            tools: tools.into_iter().map(Into::into).collect(),
            ..Autonomy::default()
        });
        self
    }

    /// A LOOP's verdict carry, cap and counter carry.
    pub fn looping(
        mut self,
        verdict: impl Into<String>,
        cap: i64,
        counter: impl Into<String>,
    ) -> Self {
        self.0.verdict = Some(verdict.into());
        self.0.cap = Some(cap);
        self.0.counter = Some(counter.into());
        self
    }

    /// A SPAWN's `concurrency`.
    pub fn concurrency(mut self, concurrency: Concurrency) -> Self {
        self.0.concurrency = Some(concurrency);
        self
    }

    /// A CALL's `target`.
    pub fn target(mut self, program: impl Into<String>) -> Self {
        self.0.target = Some(program.into());
        self
    }

    /// Any other field, on the instruction itself.
    pub fn with(mut self, edit: impl FnOnce(&mut Instruction)) -> Self {
        edit(&mut self.0);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carry_with_several_writers_or_a_role_keeps_no_inferred_producer() {
        let p = ProgramBuilder::new("p")
            .input("task", Type::Str)
            .carry("note", Type::Str)
            .step("a", Opcode::GenRaw, |s| s.writes(["note"]))
            .step("b", Opcode::GenRaw, |s| s.writes(["note", "task"]))
            .build();
        assert_eq!(p.carry("note").unwrap().1.produced_by, None);
        assert_eq!(p.carry("task").unwrap().1.produced_by, None);
        assert_eq!(p.name.as_deref(), Some("p"));
        assert_eq!(p.walker.as_ref().unwrap().name.as_deref(), Some("p"));
    }

    #[test]
    fn types_tools_and_loops_land_where_the_reader_puts_them() {
        let p = ProgramBuilder::new("p")
            .enum_type("Op", ["merge", "split"])
            .object_type("Args", [("path", Type::Path)])
            .tool(Tool {
                name: "t".into(),
                ..Tool::default()
            })
            .step("l", Opcode::Loop, |s| s.looping("ok", 3, "round").tool("t"))
            .build();
        assert_eq!(p.type_list().len(), 2);
        assert_eq!(p.tool_list()[0].name, "t");
        let l = &p.instructions()[0];
        assert_eq!((l.cap, l.counter.as_deref()), (Some(3), Some("round")));
    }
}

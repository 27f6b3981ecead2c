//! Small builders for the binding tests: programs written in a few lines.
#![allow(dead_code)]

use ais_core::bind::{BindSource, ParamBinding, ProgramIndex, Rule};
use ais_core::sig::parse;
use ais_core::{
    Carry, Instruction, Knowledge, Opcode, Owner, Program, Role, Tool, ToolSurface, Type, Walker,
};

/// A carry; `ty` is a type expression, or "" for untyped.
pub fn carry(name: &str, ty: &str) -> Carry {
    Carry {
        name: name.into(),
        ty: (!ty.is_empty()).then(|| Type::parse(ty)),
        ..Default::default()
    }
}

/// An input carry.
pub fn input(name: &str, ty: &str) -> Carry {
    Carry {
        role: Some(Role::Input),
        ..carry(name, ty)
    }
}

/// An instruction.
pub fn instr(id: &str, opcode: Opcode, reads: &[&str], writes: &[&str]) -> Instruction {
    Instruction {
        id: id.into(),
        opcode,
        owner: Some(Owner::Code),
        reads: reads.iter().map(|s| s.to_string()).collect(),
        writes: writes.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// An instruction bound to a tool by its `tool` field.
pub fn with_tool(mut i: Instruction, tool: &str) -> Instruction {
    i.tool = Some(tool.into());
    i
}

/// A tool with a signature and a surface (`SENSE`, `ACT`, `ACT·artifact`, or "" for none).
pub fn tool(name: &str, sig: &str, surface: &str) -> Tool {
    Tool {
        name: name.into(),
        sig: Some(sig.into()),
        surface: (!surface.is_empty()).then(|| ToolSurface::parse(surface)),
        body: Some("def f(): pass".into()),
        ..Default::default()
    }
}

/// A tool that serves these instruction ids.
pub fn serving(mut t: Tool, ids: &[&str]) -> Tool {
    t.serves = Some(ids.iter().map(|s| s.to_string()).collect());
    t
}

/// A knowledge item resident on these instructions.
pub fn knowledge(name: &str, resident_on: &[&str]) -> Knowledge {
    Knowledge {
        name: name.into(),
        resident_on: resident_on.iter().map(|s| s.to_string()).collect(),
        content: vec![(
            ais_core::ContentKind::Template,
            ais_core::Value::from("text"),
        )],
        ..Default::default()
    }
}

/// A program.
pub fn program(carries: Vec<Carry>, nodes: Vec<Instruction>, tools: Vec<Tool>) -> Program {
    Program {
        name: Some("test".into()),
        tools: Some(tools),
        walker: Some(Walker {
            name: Some("Test".into()),
            carries: Some(carries),
            ..Default::default()
        }),
        nodes: Some(nodes),
        ..Default::default()
    }
}

/// Binds instruction `id` against its (first) bound tool's signature.
pub fn bind(p: &Program, id: &str, invocation: Option<&str>) -> Vec<ParamBinding> {
    let (_, i) = p.instruction(id).expect("instruction exists");
    let tools = ProgramIndex::new(p).bound_tools(i);
    let t = tools.first().expect("a bound tool");
    let sig = parse(t.sig.as_deref().expect("a sig")).expect("sig parses");
    ProgramIndex::new(p).bind_tool(i, &sig, invocation)
}

/// Binds `sig` for instruction `id`.
pub fn bind_sig(p: &Program, id: &str, sig: &str, invocation: Option<&str>) -> Vec<ParamBinding> {
    let (_, i) = p.instruction(id).expect("instruction exists");
    ProgramIndex::new(p).bind_tool(i, &parse(sig).expect("sig parses"), invocation)
}

/// `(rule, carry)` of a binding to a carry.
pub fn to_carry(rule: Rule, c: &str) -> (Rule, BindSource) {
    (rule, BindSource::Carry(c.into()))
}

/// `(rule, source)` pairs of bindings, for compact assertions.
pub fn pairs(b: &[ParamBinding]) -> Vec<(Rule, BindSource)> {
    b.iter().map(|x| (x.rule, x.source.clone())).collect()
}

/// An invocation-fallback binding.
pub fn inv(file: Option<&str>) -> (Rule, BindSource) {
    (
        Rule::InvocationFallback,
        BindSource::Invocation(file.map(str::to_owned)),
    )
}

/// An unbound parameter.
pub fn null() -> (Rule, BindSource) {
    (Rule::Unbound, BindSource::Null)
}

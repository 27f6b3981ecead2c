//! The writer: a [`Program`] back out as `ais!` source — the inverse of [`crate::lower`].
//!
//! [`write_module`] writes a Rust module holding one `ais!` program; lowering it (the macro, or
//! [`crate::export::export_text`]) gives the same program, so its `AGIR` is the canonical AG-IR
//! of the program written. A program the DSL cannot say is refused, never written partly:
//! [`NotWritable`] lists every part that has no DSL spelling, each naming the element (the tool
//! `clean`, the instruction `done`) and what about it. Before returning, the writer lowers what it
//! wrote and compares the AG-IR, so a difference it did not foresee is a refusal too (naming
//! the first line that differs), not a silently different program.
//!
//! ```
//! let agir = "---\nname: shout\n---\nagir_version: 0.1\ntypes: {}\nknowledge: {}\ntools: {}\n\
//!             walker:\n  name: Shout\n  carries:\n    task:\n      type: str\n      role: input\n\
//!             nodes:\n  - id: done\n    type: TERMINAL\n    owner: code\n    reads: [task]\n\
//!             edges: []\n";
//! let program = ais_core::agir::read(agir).unwrap().program;
//! let module = ais_syntax::write_module(&program).unwrap();
//! assert!(module.contains("pub program Shout"));
//! let exported = ais_syntax::export_text(&module, "shout.rs").unwrap();
//! assert_eq!(exported[0].agir, ais_core::agir::write(&program));
//! ```
//!
//! What the DSL decides for the author is what it cannot say otherwise, and so what the
//! writer refuses when a program says otherwise: `agir_version` is written (0.1 unless said),
//! the `types`, `knowledge`, `tools`, `nodes` and `edges` sections are present, every edge has a
//! modality, a fixed-owner opcode has an owner, a carry's `produced_by` is its first writer, a
//! tool's `sig` is spelled as the DSL spells one.

mod lit;

use crate::lower::snake_case;
use ais_core::{
    Carry, Concurrency, Edge, Instruction, Knowledge, Modality, Opcode, Owner, Program, Provenance,
    Role, SpawnSource, Tool, TypeDecl, TypeKind, Value,
};
use lit::{doc, is_any_ident, is_ident, rust_type, string, value, word};
use std::fmt::{self, Write as _};

/// A program the DSL cannot say: every reason, each naming where.
#[derive(Clone, Debug, PartialEq)]
pub struct NotWritable {
    /// One line per part that has no DSL spelling: `tool \`clean\`: its body has no \`lang\``.
    pub reasons: Vec<String>,
}

impl fmt::Display for NotWritable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the program cannot be written as an `ais!` module:")?;
        for r in &self.reasons {
            writeln!(f, "  - {r}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NotWritable {}

/// The indentation of a program's items inside `ais! { program .. { .. } }`.
const ITEM: &str = "        ";
/// The indentation of what an item holds (carries, fields, obligation fields).
const INNER: &str = "            ";

/// Writes `program` as a Rust module: `use ais::ais;` and one `ais! { .. }` whose lowering is
/// `program`. Refused (`NotWritable`) when any part has no DSL spelling (see the module docs).
pub fn write_module(program: &Program) -> Result<String, NotWritable> {
    let mut w = Writer {
        out: String::new(),
        refusals: Vec::new(),
        declared: program
            .types
            .iter()
            .flatten()
            .map(|t| t.name.clone())
            .collect(),
    };
    let ident = w.program(program);
    if !w.refusals.is_empty() {
        return Err(NotWritable {
            reasons: w.refusals,
        });
    }
    let mut text = String::new();
    if ident.contains('_') || ident.chars().next().is_some_and(char::is_lowercase) {
        // The program's type is its walker's name; a snake_case one is kept as written.
        text.push_str("#![allow(non_camel_case_types)]\n\n");
    }
    text.push_str("use ais::ais;\n\nais! {\n");
    text.push_str(&w.out);
    text.push_str("}\n");
    verify(program, &text)?;
    Ok(text)
}

/// Lowers what was written and compares its AG-IR with the program's.
fn verify(program: &Program, text: &str) -> Result<(), NotWritable> {
    let expected = ais_core::agir::write(program);
    let exported = crate::export::export_text(text, "program.rs").map_err(|e| NotWritable {
        reasons: vec![format!(
            "the macro would refuse the written module:\n{}",
            e.errors.join("\n")
        )],
    })?;
    let got = exported.first().map_or("", |e| e.agir.as_str());
    if got == expected {
        return Ok(());
    }
    let (line, want, have) = expected
        .lines()
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(got.lines().map(Some).chain(std::iter::repeat(None)))
        .enumerate()
        .take_while(|(_, (a, b))| a.is_some() || b.is_some())
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a.unwrap_or("(end)"), b.unwrap_or("(end)")))
        .unwrap_or((0, "", ""));
    Err(NotWritable {
        reasons: vec![format!(
            "the written module lowers to a different program: line {line} of the AG-IR reads \
             `{want}`, the module's reads `{have}`"
        )],
    })
}

struct Writer {
    out: String,
    refusals: Vec<String>,
    declared: Vec<String>,
}

fn names(list: &[String]) -> String {
    list.join(", ")
}

fn traces(list: &Option<Vec<String>>) -> Option<String> {
    list.as_ref().map(|l| {
        let quoted: Vec<String> = l.iter().map(|r| string(r)).collect();
        format!("#[traces_to({})]", quoted.join(", "))
    })
}

/// The owner lowering gives a dual opcode that is not written `(code)` or `(model)`.
fn inferred_owner(n: &Instruction, program: &Program) -> Option<Owner> {
    let branches = program.edges.iter().flatten().any(|e| {
        e.from == n.id && e.modality == Some(Modality::Discretionary) && e.guard.is_some()
    });
    let code = n.tool.is_some()
        || (n.opcode == Opcode::Route && branches)
        || (n.opcode == Opcode::Loop && n.verdict.is_some());
    code.then_some(Owner::Code)
}

/// The `produced_by` lowering gives a carry: its first writer, else the LOOP it counts.
fn inferred_producer(c: &Carry, program: &Program) -> Option<String> {
    let nodes = program.nodes.as_deref().unwrap_or(&[]);
    nodes
        .iter()
        .find(|n| n.writes.contains(&c.name))
        .or_else(|| {
            nodes
                .iter()
                .find(|n| n.counter.as_deref() == Some(c.name.as_str()))
        })
        .map(|n| n.id.clone())
}

impl Writer {
    fn refuse(&mut self, reason: String) {
        self.refusals.push(reason);
    }

    fn line(&mut self, indent: &str, text: &str) {
        let _ = writeln!(self.out, "{indent}{text}");
    }

    fn extras(&mut self, what: &str, extra: &[(String, Value)]) {
        for (key, _) in extra {
            self.refuse(format!("{what}: the field `{key}` has no DSL spelling"));
        }
    }

    fn name(&mut self, what: &str, name: &str, any: bool) -> bool {
        let ok = if any {
            is_any_ident(name)
        } else {
            is_ident(name)
        };
        if !ok {
            self.refuse(format!(
                "{what}: `{name}` is not a Rust identifier, which the DSL names it with"
            ));
        }
        ok
    }

    /// The whole program item; returns its type name.
    fn program(&mut self, p: &Program) -> String {
        self.extras("the frontmatter", &p.frontmatter_extra);
        self.extras("the program", &p.extra);
        if p.mcp_servers.as_ref().is_some_and(|s| !s.is_empty()) {
            self.refuse("the program's `mcp_servers`: not written by the writer yet".to_owned());
        }
        for (section, present) in [
            ("types", p.types.is_some()),
            ("knowledge", p.knowledge.is_some()),
            ("tools", p.tools.is_some()),
            ("nodes", p.nodes.is_some()),
            ("edges", p.edges.is_some()),
            ("walker", p.walker.is_some()),
        ] {
            if !present {
                self.refuse(format!(
                    "the `{section}` section is absent; the DSL always writes it"
                ));
            }
        }
        let walker = p.walker.clone().unwrap_or_default();
        self.extras("the walker", &walker.extra);
        let ident = walker.name.clone().unwrap_or_default();
        self.name("the walker's `name` (the program's type)", &ident, false);
        if let Some(d) = &p.description {
            self.out.push_str(&doc(d, "    "));
        }
        if let Some(c) = &p.concurrency {
            let attr = self.concurrency("the program's `concurrency`", c);
            self.line("    ", &attr);
        }
        let mut header = Vec::new();
        match &p.name {
            Some(n) if *n == snake_case(&ident) => {}
            Some(n) => header.push(format!("name = {}", string(n))),
            None => self.refuse("the frontmatter has no `name`; the DSL writes one".to_owned()),
        }
        if let Some(s) = &p.shape {
            header.push(format!("shape = {}", string(s)));
        }
        match p.standalone {
            Some(true) => header.push("standalone".to_owned()),
            Some(false) => header.push("standalone = false".to_owned()),
            None => {}
        }
        match p.agir_version.as_deref() {
            Some("0.1") => {}
            Some(v) => header.push(format!("agir_version = {}", string(v))),
            None => self.refuse(
                "`agir_version` is absent; the DSL writes it (0.1 unless the program says)"
                    .to_owned(),
            ),
        }
        let header = if header.is_empty() {
            String::new()
        } else {
            format!(" ({})", header.join(", "))
        };
        self.line("    ", &format!("pub program {ident}{header} {{"));
        if let Some(f) = &p.faithfulness
            && let Some(s) = &f.source
        {
            self.extras("the provenance record's `source`", &s.extra);
            let mut fields = Vec::new();
            if let Some(path) = &s.path {
                fields.push(format!("path: {}", string(path)));
            }
            if let Some(d) = &s.digest {
                fields.push(format!("digest: {}", string(d)));
            }
            self.line(ITEM, &format!("source {{ {} }}", fields.join(", ")));
            self.out.push('\n');
        }
        self.carries(walker.carries.as_deref(), p);
        for t in p.types.iter().flatten() {
            self.type_decl(t);
        }
        for k in p.knowledge.iter().flatten() {
            self.knowledge(k);
        }
        for t in p.tools.iter().flatten() {
            self.tool(t);
        }
        for (i, n) in p.nodes.iter().flatten().enumerate() {
            self.instruction(i, n, p);
        }
        self.edges(p.edges.as_deref().unwrap_or(&[]));
        if let Some(f) = &p.faithfulness {
            self.provenance(f);
        }
        while self.out.ends_with("\n\n") {
            self.out.pop();
        }
        self.line("    ", "}");
        ident
    }

    fn carries(&mut self, carries: Option<&[Carry]>, p: &Program) {
        let Some(carries) = carries else {
            self.refuse("the walker has no `carries`; the DSL always writes them".to_owned());
            return;
        };
        self.line(ITEM, "carries {");
        for c in carries {
            let what = format!("carry `{}`", c.name);
            self.extras(&what, &c.extra);
            self.name(&what, &c.name, false);
            if let Some(d) = &c.doc {
                self.out.push_str(&doc(d, INNER));
            }
            if let Some(t) = traces(&c.traces_to) {
                self.line(INNER, &t);
            }
            let ty = match &c.ty {
                Some(t) => t.to_string(),
                None => {
                    self.refuse(format!("{what}: it has no `type`; the DSL writes one"));
                    continue;
                }
            };
            let inferred = inferred_producer(c, p);
            if c.produced_by != inferred {
                self.refuse(format!(
                    "{what}: `produced_by` is {}, but the DSL makes it {} (its first writer)",
                    c.produced_by
                        .as_deref()
                        .map_or("absent".to_owned(), |s| format!("`{s}`")),
                    inferred.map_or("absent".to_owned(), |s| format!("`{s}`")),
                ));
            }
            let default = match c.default.as_ref().map(value).transpose() {
                Ok(d) => d,
                Err(e) => {
                    self.refuse(format!("{what}: its default: {e}"));
                    None
                }
            };
            let init = match (&c.role, default) {
                (None, None) => String::new(),
                (None, Some(d)) => format!(" = {d}"),
                (Some(Role::Input), None) => " = input".to_owned(),
                (Some(Role::Input), Some(d)) => format!(" = input({d})"),
                (Some(other), _) => {
                    self.refuse(format!(
                        "{what}: the role `{}` has no DSL spelling",
                        other.as_str()
                    ));
                    String::new()
                }
            };
            self.line(INNER, &format!("{}: {ty}{init},", c.name));
        }
        self.line(ITEM, "}");
        self.out.push('\n');
    }

    fn type_decl(&mut self, t: &TypeDecl) {
        let what = format!("type `{}`", t.name);
        self.extras(&what, &t.extra);
        self.name(&what, &t.name, false);
        if let Some(d) = &t.doc {
            self.out.push_str(&doc(d, ITEM));
        }
        match &t.kind {
            TypeKind::Enum(members) => {
                self.line(ITEM, &format!("enum {} {{", t.name));
                for m in members {
                    self.name(&format!("{what}, member"), &m.name, true);
                    if let Some(d) = &m.doc {
                        self.out.push_str(&doc(d, INNER));
                    }
                    self.line(INNER, &format!("{},", m.name));
                }
            }
            TypeKind::Object(fields) => {
                self.line(ITEM, &format!("struct {} {{", t.name));
                for f in fields {
                    let fw = format!("{what}, field `{}`", f.name);
                    self.extras(&fw, &f.extra);
                    self.name(&fw, &f.name, true);
                    if let Some(d) = &f.doc {
                        self.out.push_str(&doc(d, INNER));
                    }
                    let Some(ty) = &f.ty else {
                        self.refuse(format!("{fw}: it has no `type`; the DSL writes one"));
                        continue;
                    };
                    let default = match f.default.as_ref().map(value).transpose() {
                        Ok(Some(d)) => format!(" = {d}"),
                        Ok(None) => String::new(),
                        Err(e) => {
                            self.refuse(format!("{fw}: its default: {e}"));
                            String::new()
                        }
                    };
                    self.line(INNER, &format!("{}: {ty}{default},", f.name));
                }
            }
            TypeKind::Unknown(k) => {
                self.refuse(format!(
                    "{what}: its kind `{k}` is neither `enum` nor `object`"
                ));
                return;
            }
        }
        self.line(ITEM, "}");
        self.out.push('\n');
    }

    fn knowledge(&mut self, k: &Knowledge) {
        let what = format!("knowledge `{}`", k.name);
        self.extras(&what, &k.extra);
        self.name(&what, &k.name, false);
        for r in &k.resident_on {
            self.name(&format!("{what}, `resident_on`"), r, false);
        }
        if !k.resident_on.is_empty() {
            self.line(ITEM, &format!("#[resident_on({})]", names(&k.resident_on)));
        }
        if let Some(t) = traces(&k.traces_to) {
            self.line(ITEM, &t);
        }
        let [(kind, content)] = k.content.as_slice() else {
            self.refuse(format!(
                "{what}: the DSL writes one content field; it has {}",
                k.content.len()
            ));
            return;
        };
        let content = match value(content) {
            Ok(c) => c,
            Err(e) => {
                self.refuse(format!("{what}: {e}"));
                return;
            }
        };
        let kind = match kind {
            ais_core::ContentKind::Template => String::new(),
            other => format!(": {}", other.as_str()),
        };
        self.line(ITEM, &format!("knowledge {}{kind} = {content};", k.name));
        self.out.push('\n');
    }

    /// The parameters and result of a tool, as Rust, from its `sig`; `None` when refused.
    fn signature(&mut self, what: &str, t: &Tool, command: bool) -> Option<String> {
        let Some(text) = &t.sig else {
            self.refuse(format!("{what}: it has no `sig`; the DSL writes one"));
            return None;
        };
        let sig = match ais_core::sig::parse(text) {
            Ok(s) => s,
            Err(e) => {
                self.refuse(format!("{what}: its `sig` does not parse: {}", e.message));
                return None;
            }
        };
        let mut params = Vec::new();
        let mut spelled = Vec::new();
        for p in &sig.params {
            if !self.name(&format!("{what}, parameter"), &p.name, false) {
                return None;
            }
            match &p.ty {
                None => {
                    params.push(p.name.clone());
                    spelled.push(p.name.clone());
                }
                Some(ty) => match rust_type(ty, false, &self.declared) {
                    Ok(r) => {
                        params.push(format!("{}: {r}", p.name));
                        spelled.push(format!("{}: {ty}", p.name));
                    }
                    Err(e) => {
                        self.refuse(format!("{what}, parameter `{}`: {e}", p.name));
                        return None;
                    }
                },
            }
        }
        let (ret, ret_spelled) = match &sig.ret {
            ais_core::sig::Return::None if command => {
                self.refuse(format!(
                    "{what}: a command's `sig` has a result in the DSL (`-> str` when none is \
                     written)"
                ));
                return None;
            }
            ais_core::sig::Return::None => (String::new(), String::new()),
            ais_core::sig::Return::Type(ty) => match rust_type(ty, true, &self.declared) {
                Ok(r) => (format!(" -> {r}"), format!(" -> {ty}")),
                Err(e) => {
                    self.refuse(format!("{what}, result: {e}"));
                    return None;
                }
            },
            ais_core::sig::Return::Tuple(names) => {
                self.refuse(format!(
                    "{what}: a tuple result `({})` has no Rust type in the DSL",
                    names.join(", ")
                ));
                return None;
            }
        };
        let canonical = format!("({}){ret_spelled}", spelled.join(", "));
        if canonical != *text {
            self.refuse(format!(
                "{what}: its `sig` `{text}` is not spelled as the DSL spells it (`{canonical}`)"
            ));
            return None;
        }
        Some(format!("({}){ret}", params.join(", ")))
    }

    fn tool(&mut self, t: &Tool) {
        let what = format!("tool `{}`", t.name);
        if !self.name(&what, &t.name, false) {
            return;
        }
        let mut idempotent = false;
        for (key, v) in &t.extra {
            if key == "idempotent" && *v == Value::Bool(true) && !idempotent {
                idempotent = true;
            } else {
                self.refuse(format!("{what}: the field `{key}` has no DSL spelling"));
            }
        }
        if t.mcp.is_some() {
            self.refuse(format!(
                "{what}: MCP tools are not written by the writer yet"
            ));
            return;
        }
        let builtin = ais_core::plan::builtin(&t.name)
            .filter(|_| t.body.is_none() && t.command.is_none() && t.lang.is_none());
        let head = match (&t.body, &t.command, t.lang.as_deref(), builtin) {
            (None, None, None, Some(b)) => {
                if t.sig.as_deref() != Some(b.sig) {
                    self.refuse(format!(
                        "{what}: a built-in's `sig` is `{}` in the DSL, not {}",
                        b.sig,
                        t.sig
                            .as_deref()
                            .map_or("absent".to_owned(), |s| format!("`{s}`"))
                    ));
                }
                if t.surface.is_none() {
                    self.refuse(format!(
                        "{what}: the DSL writes a built-in's `surface` (`{}`)",
                        b.surface.to_surface().as_str()
                    ));
                }
                Some(format!("tool {};", t.name))
            }
            (Some(body), None, Some("rust"), _) => self.rust_tool(&what, body),
            (Some(body), None, Some(lang), _) => {
                if !is_ident(lang) {
                    self.refuse(format!(
                        "{what}: its `lang` `{lang}` is not a Rust identifier"
                    ));
                }
                self.signature(&what, t, false)
                    .map(|sig| format!("tool {}{sig} = {lang} {};", t.name, string(body)))
            }
            (Some(body), None, None, _) => self
                .signature(&what, t, false)
                .map(|sig| format!("tool {}{sig} = {};", t.name, string(body))),
            (None, Some(cmd), None, _) => self
                .signature(&what, t, true)
                .map(|sig| format!("tool {}{sig} = command {};", t.name, string(cmd))),
            (Some(_), Some(_), _, _) => {
                self.refuse(format!(
                    "{what}: it has both a `body` and a `command`; the DSL writes one"
                ));
                None
            }
            _ => {
                self.refuse(format!(
                    "{what}: it has no implementation the DSL can write (a body with its \
                     `lang`, a `command`, or a built-in's name)"
                ));
                None
            }
        };
        let Some(head) = head else {
            return;
        };
        if let Some(d) = &t.doc {
            self.out.push_str(&doc(d, ITEM));
        }
        let builtin_surface = builtin.map(|b| b.surface.to_surface());
        if let Some(s) = &t.surface
            && Some(s) != builtin_surface.as_ref()
        {
            let words: Vec<&str> = s.as_str().split(['·', ' ']).collect();
            self.line(ITEM, &format!("#[surface({})]", words.join(", ")));
        }
        if let Some(serves) = &t.serves {
            self.line(ITEM, &format!("#[serves({})]", names(serves)));
        }
        if let Some(tr) = traces(&t.traces_to) {
            self.line(ITEM, &tr);
        }
        if idempotent {
            self.line(ITEM, "#[idempotent]");
        }
        self.line(ITEM, &head);
        self.out.push('\n');
    }

    /// A Rust tool: its body `fn name(..) { .. }` written as `tool name(..) { .. }`, its
    /// continuation lines indented to the item (the lowering takes that indentation off).
    fn rust_tool(&mut self, what: &str, body: &str) -> Option<String> {
        // A tool defined elsewhere is embodied as the one-line function that calls it, with no
        // line break after it: `fn f(x: &str) -> String { crate::f(x) }`.
        if !body.ends_with('\n')
            && let Some(rest) = body.strip_prefix("fn ")
            && let Some((head, call)) = rest.rsplit_once(" { ")
            && let Some(call) = call.strip_suffix(" }")
            && let Some((path, _)) = call.split_once('(')
        {
            return Some(format!("tool {head} = {path};"));
        }
        let Some(rest) = body
            .strip_prefix("fn ")
            .map(|b| b.strip_suffix('\n').unwrap_or(b))
        else {
            self.refuse(format!(
                "{what}: a Rust body is a function `fn {{name}}(..) {{ .. }}`"
            ));
            return None;
        };
        let mut out = String::from("tool ");
        for (i, line) in rest.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
                if !line.is_empty() {
                    out.push_str(ITEM);
                }
            }
            out.push_str(line);
        }
        Some(out)
    }

    fn concurrency(&mut self, what: &str, c: &Concurrency) -> String {
        self.extras(what, &c.extra);
        let mut args = Vec::new();
        if let Some(i) = &c.isolation {
            if is_ident(i.as_str()) {
                args.push(format!("isolation = {}", i.as_str()));
            } else {
                self.refuse(format!(
                    "{what}: the isolation `{}` is not an identifier",
                    i.as_str()
                ));
            }
        }
        match &c.spawn {
            Some(SpawnSource::None) => args.push("spawn = none".to_owned()),
            Some(SpawnSource::List(list)) => {
                let items: Vec<String> = list.iter().map(|s| string(s)).collect();
                args.push(format!("spawn = [{}]", items.join(", ")));
            }
            Some(other) => self.refuse(format!(
                "{what}: the spawn source {other:?} has no DSL spelling"
            )),
            None => {}
        }
        if let Some(n) = c.max_parallel {
            args.push(format!("max_parallel = {n}"));
        }
        if let Some(r) = &c.reason {
            args.push(format!("reason = {}", string(r)));
        }
        format!("#[concurrency({})]", args.join(", "))
    }

    fn instruction(&mut self, i: usize, n: &Instruction, p: &Program) {
        let what = format!("nodes[{i}] `{}`", n.id);
        self.extras(&what, &n.extra);
        self.name(&what, &n.id, false);
        let opcode = n.opcode.as_str();
        if !opcode.split('-').all(is_any_ident) {
            self.refuse(format!("{what}: the opcode `{opcode}` has no DSL spelling"));
        }
        if let Some(d) = &n.doc {
            self.out.push_str(&doc(d, ITEM));
        }
        let mut attrs = Vec::new();
        if let Some(o) = &n.output {
            attrs.push(format!("#[output({o})]"));
        }
        if let Some(a) = &n.autonomy {
            self.extras(&format!("{what}, `autonomy`"), &a.extra);
            attrs.push(format!("#[autonomy({})]", names(&a.tools)));
        }
        for (attr, v) in [
            ("verdict", &n.verdict),
            ("counter", &n.counter),
            ("op", &n.op),
            ("model", &n.model),
        ] {
            if let Some(v) = v
                && self.name(&format!("{what}, `{attr}`"), v, false)
            {
                attrs.push(format!("#[{attr}({v})]"));
            }
        }
        if let Some(cap) = n.cap {
            if cap < 0 {
                self.refuse(format!("{what}: a negative `cap` has no DSL spelling"));
            }
            attrs.push(format!("#[cap({cap})]"));
        }
        if let Some(c) = &n.concurrency {
            attrs.push(self.concurrency(&format!("{what}, `concurrency`"), c));
        }
        if let Some(t) = traces(&n.traces_to) {
            attrs.push(t);
        }
        for a in attrs {
            self.line(ITEM, &a);
        }
        let mut mods = Vec::new();
        match (n.opcode.fixed_owner(), &n.owner) {
            (Some(_), None) => self.refuse(format!(
                "{what}: it has no `owner`; the DSL writes a {opcode}'s owner"
            )),
            (Some(fixed), Some(o)) if fixed == *o => {}
            (_, Some(o @ (Owner::Code | Owner::Model))) => {
                if n.opcode.fixed_owner().is_some() || inferred_owner(n, p).as_ref() != Some(o) {
                    mods.push(o.as_str().to_owned());
                }
            }
            (_, Some(o)) => self.refuse(format!(
                "{what}: the owner `{}` has no DSL spelling",
                o.as_str()
            )),
            (None, None) => {
                if inferred_owner(n, p).is_some() {
                    self.refuse(format!(
                        "{what}: it has no `owner`, but the DSL makes it `code`"
                    ));
                }
            }
        }
        if let Some(s) = &n.surface {
            mods.push(s.as_str().to_owned());
        }
        let callee = match (&n.tool, &n.target) {
            (Some(_), Some(_)) => {
                self.refuse(format!("{what}: it has both a `tool` and a `target`"));
                None
            }
            (Some(t), None) if n.opcode != Opcode::Call => Some(t.clone()),
            (None, Some(t)) if n.opcode == Opcode::Call => Some(string(t)),
            (Some(_), None) => {
                self.refuse(format!("{what}: a CALL names its `target`, not a `tool`"));
                None
            }
            (None, Some(_)) => {
                self.refuse(format!("{what}: only a CALL has a `target`"));
                None
            }
            (None, None) => None,
        };
        let mut line = format!("{}: {opcode}", n.id);
        let reads = format!("({})", names(&n.reads));
        match callee {
            Some(c) => {
                if !mods.is_empty() {
                    line.push_str(&format!("({})", mods.join(", ")));
                }
                line.push(' ');
                line.push_str(&c);
                if !n.reads.is_empty() {
                    line.push_str(&reads);
                }
            }
            None => {
                if !mods.is_empty() {
                    line.push_str(&format!("({})", mods.join(", ")));
                    line.push_str(&reads);
                } else if !n.reads.is_empty() {
                    line.push_str(&reads);
                }
            }
        }
        match n.writes.as_slice() {
            [] => {}
            [one] => line.push_str(&format!(" -> {one}")),
            many => line.push_str(&format!(" -> ({})", names(many))),
        }
        if let Some(body) = &n.body {
            if body.contains('\n') || body.trim() != body {
                self.refuse(format!(
                    "{what}: the DSL writes a CODE body on one line, without surrounding spaces"
                ));
            }
            line.push_str(&format!(" = {body}"));
        }
        line.push(';');
        self.line(ITEM, &line);
        self.out.push('\n');
    }

    fn edges(&mut self, edges: &[Edge]) {
        let mut i = 0;
        while i < edges.len() {
            let e = &edges[i];
            let what = format!("edges[{i}] `{} -> {}`", e.from, e.to);
            self.extras(&what, &e.extra);
            if let Some(t) = traces(&e.traces_to) {
                self.line(ITEM, &t);
            }
            let (forbid, tail) = self.edge_tail(&what, e);
            let mut line = format!("{forbid}{} -> {}", e.from, e.to);
            // A run of plain edges, each starting where the last ended, is one chain; a
            // guarded or default hop may end it.
            let mut tail = tail;
            while tail.is_empty() && forbid.is_empty() {
                let Some(next) = edges.get(i + 1) else { break };
                if next.from != edges[i].to
                    || next.traces_to != e.traces_to
                    || !next.extra.is_empty()
                    || next.modality == Some(Modality::Forbidden)
                {
                    break;
                }
                i += 1;
                let nwhat = format!("edges[{i}] `{} -> {}`", next.from, next.to);
                let (_, next_tail) = self.edge_tail(&nwhat, next);
                line.push_str(&format!(" -> {}", next.to));
                tail = next_tail;
            }
            line.push_str(&tail);
            line.push(';');
            self.line(ITEM, &line);
            i += 1;
        }
        if !edges.is_empty() {
            self.out.push('\n');
        }
    }

    /// `forbid ` or nothing, and what follows `a -> b`: nothing, ` if guard` or ` else`.
    fn edge_tail(&mut self, what: &str, e: &Edge) -> (&'static str, String) {
        for end in [&e.from, &e.to] {
            self.name(what, end, false);
        }
        match (&e.modality, e.guard.as_deref()) {
            (Some(Modality::Mandatory), None) => ("", String::new()),
            (Some(Modality::Forbidden), None) => ("forbid ", String::new()),
            (Some(Modality::Discretionary), Some("else")) => ("", " else".to_owned()),
            (Some(Modality::Discretionary), Some(g)) => {
                if g.contains('\n') || g.trim() != g || g.is_empty() {
                    self.refuse(format!(
                        "{what}: the DSL writes a guard on one line, without surrounding spaces"
                    ));
                }
                ("", format!(" if {g}"))
            }
            (None, _) => {
                self.refuse(format!("{what}: it has no `modality`; the DSL writes one"));
                ("", String::new())
            }
            (Some(m), g) => {
                self.refuse(format!(
                    "{what}: a {} edge {} has no DSL spelling",
                    m.as_str(),
                    if g.is_some() {
                        "with a guard"
                    } else {
                        "without a guard"
                    }
                ));
                ("", String::new())
            }
        }
    }

    fn provenance(&mut self, f: &Provenance) {
        self.extras("the provenance record", &f.extra);
        if f.obligations.as_ref().is_some_and(Vec::is_empty) {
            self.refuse(
                "the provenance record lists no obligations; the DSL leaves `obligations` out then"
                    .to_owned(),
            );
        }
        if f.deviations.as_ref().is_some_and(Vec::is_empty) {
            self.refuse(
                "the provenance record lists no deviations; the DSL leaves `deviations` out then"
                    .to_owned(),
            );
        }
        if f.source.is_none() && f.obligations.is_none() && f.deviations.is_none() {
            self.refuse("the provenance record is empty; the DSL has no empty one".to_owned());
        }
        for (i, o) in f.obligation_list().iter().enumerate() {
            let what = format!("obligation[{i}] `{}`", o.id);
            self.name(&what, &o.id, false);
            let mut fields = Vec::new();
            if let Some(k) = &o.kind {
                fields.push(format!("kind: {}", word(k.as_str())));
            }
            if let Some(m) = &o.force {
                fields.push(format!("force: {}", word(m.as_str())));
            }
            if let Some(b) = &o.bearer {
                fields.push(format!("bearer: {}", word(b.as_str())));
            }
            if let Some(q) = &o.quote {
                fields.push(format!("quote: {}", string(q)));
            }
            if let Some(list) = &o.realized_by {
                let items: Vec<String> = list
                    .iter()
                    .map(|r| match r {
                        ais_core::ElementRef::Node(id) if is_any_ident(id) => id.clone(),
                        other => string(&other.spelling()),
                    })
                    .collect();
                fields.push(format!("realized_by: [{}]", items.join(", ")));
            }
            for (key, v) in &o.extra {
                match v {
                    Value::Str(s) if crate::ast::OBLIGATION_NOTES.contains(&key.as_str()) => {
                        let v = if key == "cohesion" {
                            word(s)
                        } else {
                            string(s)
                        };
                        fields.push(format!("{key}: {v}"));
                    }
                    _ => self.refuse(format!("{what}: the field `{key}` has no DSL spelling")),
                }
            }
            self.line(ITEM, &format!("obligation {} {{", o.id));
            for field in fields {
                self.line(INNER, &format!("{field},"));
            }
            self.line(ITEM, "}");
        }
        if !f.obligation_list().is_empty() {
            self.out.push('\n');
        }
        for (i, d) in f.deviation_list().iter().enumerate() {
            self.extras(&format!("deviation[{i}]"), &d.extra);
            let mut fields = Vec::new();
            if let Some(o) = &d.obligation {
                fields.push(format!("obligation: {}", word(o)));
            }
            if let Some(k) = &d.kind {
                fields.push(format!("kind: {}", word(k.as_str())));
            }
            if let Some(e) = &d.element {
                fields.push(format!("element: {}", string(&e.spelling())));
            }
            if let Some(r) = &d.reason {
                fields.push(format!("reason: {}", string(r)));
            }
            self.line(ITEM, "deviation {");
            for field in fields {
                self.line(INNER, &format!("{field},"));
            }
            self.line(ITEM, "}");
        }
    }
}

//! Lowering: the [`crate::ast`] of one program into the core's [`Program`], with a
//! [`SpanMap`] from every [`Locus`] the validator may name to the token that wrote it.
//!
//! # Decisions where the DSL had to choose
//!
//! - **Owners.** A fixed-owner opcode gets its owner written out (`GEN-RAW` → `owner: model`,
//!   `TERMINAL` → `owner: code`), as Appendix C does. A dual opcode (`SENSE`, `ACT`, `ROUTE`,
//!   `LOOP`) takes `(code)` or `(model)` when written; otherwise it is `code` when it names a
//!   tool, a `ROUTE` with a guarded or `else` edge is `code` (its guards are what decides), and
//!   a `LOOP` with a `#[verdict]` is `code`. Anything else stays unowned, and the validator's
//!   W3 says so at the opcode.
//! - **Carries' `produced_by`** is the first instruction, in program order, that writes the
//!   carry, else the LOOP whose `#[counter(..)]` it is; a carry written by none and not
//!   `= input` has none (the validator reports it).
//! - **Edges.** `a -> b;` is mandatory, `a -> b if g;` discretionary with the guard,
//!   `a -> b else;` discretionary with the sentinel guard `else` (Appendix A.3: the default),
//!   `forbid a -> b;` a `forbidden` edge: recorded on its source, never taken.
//! - **Sections** `types`, `knowledge`, `tools`, `nodes` and `edges` are always written (empty
//!   as `{}` / `[]`), and `agir_version` is `0.1` unless the program says otherwise.
//! - **Rust tools** are embodied with `lang: rust` and their signature's parameter types read
//!   from the Rust types ([`crate::rust_types`]); a tool defined elsewhere is embodied as the
//!   one-line Rust function that calls it.

use crate::ast::*;
use crate::rust_types::{ais_return, ais_type};
use crate::spans::SpanMap;
use crate::text::{layout, source_text};
use ais_core::{
    AcceptedDeviation, Bearer, DeviationKind, ElementRef, Obligation, ObligationKind, Provenance,
    SourceRef,
};
use ais_core::{
    Autonomy, Carry, Concurrency, ContentKind, Edge, Element, EnumMember, Field, Instruction,
    Isolation, Knowledge, Locus, Modality, Opcode, Owner, Program, Role, SpawnSource, Surface,
    Tool, ToolSurface, Type, TypeDecl, TypeKind, Value, Walker,
};
use proc_macro2::Span;
use syn::Ident;

/// A program lowered from the DSL, with the span of each of its parts.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The program, as the AG-IR reader would have produced it.
    pub program: Program,
    /// Where each of its parts was written.
    pub spans: SpanMap,
    /// The Rust tools whose result is a `Result` (their `Err` is a routable error value, spec
    /// §10.2) — a fact of the Rust types the AG-IR does not record.
    pub fallible_tools: Vec<String>,
    /// The instructions marked `#[allow(unrouted_failure)]`, by index: their unrouted failure
    /// is meant to end the run as an error, and is not warned about.
    pub unrouted_allowed: Vec<usize>,
    /// The lock of the program's MCP tools (`mcp_lock = ".."`), whose signatures the
    /// program's MCP tools were given.
    pub mcp_lock: Option<ais_core::mcp::Lock>,
}

/// Errors collected across a phase, reported together.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    /// Records an error.
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    /// All recorded errors as one, or `Ok` when there were none.
    pub fn finish(self) -> syn::Result<()> {
        let mut iter = self.0.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in iter {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

/// Lowers one program. Every construct the DSL cannot lower (a Rust type with no AIS reading,
/// an unknown modifier, a knowledge kind that does not exist) is an error at its token; all of
/// them are reported at once.
pub fn lower(def: &ProgramDef) -> syn::Result<Lowered> {
    let (lowered, errors) = lower_all(def);
    errors.map(|()| lowered)
}

/// Lowers one program as far as it lowers, with the errors beside it: what could not be
/// lowered is left out of the program (a tool with no signature, an unknown modifier), so a
/// driver can still build a correctly typed stand-in and report only the errors.
pub fn lower_all(def: &ProgramDef) -> (Lowered, syn::Result<()>) {
    let mut cx = Cx {
        spans: SpanMap::new(),
        errors: Errors::default(),
        declared: def.types.iter().map(|t| t.name.text.clone()).collect(),
        fallible_tools: Vec::new(),
        unrouted_allowed: Vec::new(),
    };
    let mut program = cx.program(def);
    let mcp_lock = match crate::mcp::lock(def) {
        Ok(lock) => lock,
        Err(e) => {
            cx.errors.0.push(e);
            None
        }
    };
    if let Some(lock) = &mcp_lock {
        ais_core::mcp::apply_lock(&mut program, lock);
    }
    let lowered = Lowered {
        program,
        spans: cx.spans,
        fallible_tools: cx.fallible_tools,
        unrouted_allowed: cx.unrouted_allowed,
        mcp_lock,
    };
    (lowered, cx.errors.finish())
}

struct Cx {
    spans: SpanMap,
    errors: Errors,
    declared: Vec<String>,
    fallible_tools: Vec<String>,
    unrouted_allowed: Vec<usize>,
}

/// The warnings an instruction's `#[allow(..)]` may name.
pub const ALLOWABLE: &[&str] = &["unrouted_failure"];

fn names(list: &[Name]) -> Vec<String> {
    list.iter().map(|n| n.text.clone()).collect()
}

/// `WritingPlans` → `writing_plans`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if i > 0 && (prev_lower || next_lower && chars[i - 1].is_uppercase()) {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl Cx {
    fn at(&mut self, element: Element, field: Option<&str>, site: Site) {
        let locus = match field {
            Some(f) => Locus::field(element, f),
            None => Locus::element(element),
        };
        self.spans.insert(locus, site);
    }

    fn at_entry(&mut self, element: Element, field: &str, i: usize, span: Span) {
        self.spans
            .insert(Locus::entry(element, field, i), Site::one(span));
    }

    fn entries(&mut self, element: Element, field: &str, list: &[Name]) -> Vec<String> {
        if let Some(first) = list.first() {
            let last = list.last().map_or(first.span, |n| n.span);
            self.at(element, Some(field), Site::range(first.span, last));
        }
        for (i, n) in list.iter().enumerate() {
            self.at_entry(element, field, i, n.span);
        }
        names(list)
    }

    fn program(&mut self, def: &ProgramDef) -> Program {
        let ident_site = Site::one(def.ident.span());
        self.at(Element::Program, None, ident_site);
        self.at(Element::Walker, None, ident_site);
        self.at(Element::Frontmatter, None, ident_site);
        if let Some((_, site)) = &def.name {
            self.at(Element::Frontmatter, Some("name"), *site);
        }
        if let Some(doc) = &def.doc {
            self.at(Element::Frontmatter, Some("description"), doc.site);
        }
        let types = def
            .types
            .iter()
            .enumerate()
            .map(|(i, t)| self.type_decl(i, t))
            .collect();
        let knowledge = def
            .knowledge
            .iter()
            .enumerate()
            .map(|(i, k)| self.knowledge(i, k))
            .collect();
        let tools = def
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| self.tool(i, t))
            .collect();
        let nodes: Vec<Instruction> = def
            .instructions
            .iter()
            .enumerate()
            .map(|(i, d)| self.instruction(i, d, def))
            .collect();
        let carries = def
            .carries
            .iter()
            .enumerate()
            .map(|(i, c)| self.carry(i, c, &nodes))
            .collect();
        let edges = def
            .edges
            .iter()
            .enumerate()
            .map(|(i, e)| self.edge(i, e))
            .collect();
        let concurrency = def
            .concurrency
            .as_ref()
            .map(|c| self.concurrency(Element::Concurrency, "", c));
        let faithfulness = self.provenance(def);
        Program {
            name: Some(
                def.name
                    .as_ref()
                    .map_or_else(|| snake_case(&def.ident.to_string()), |(n, _)| n.clone()),
            ),
            description: def.doc.as_ref().map(|d| d.text.clone()),
            agir_version: Some(
                def.agir_version
                    .as_ref()
                    .map_or_else(|| "0.1".to_owned(), |(v, _)| v.clone()),
            ),
            standalone: def.standalone.map(|(b, _)| b),
            shape: def.shape.as_ref().map(|(s, _)| s.clone()),
            types: Some(types),
            knowledge: Some(knowledge),
            tools: Some(tools),
            walker: Some(Walker {
                name: Some(def.ident.to_string()),
                carries: Some(carries),
                extra: Vec::new(),
            }),
            nodes: Some(nodes),
            edges: Some(edges),
            concurrency,
            faithfulness,
            mcp_servers: {
                if let Some(first) = def.mcp_servers.first() {
                    self.at(
                        Element::Program,
                        Some("mcp_servers"),
                        Site::one(first.name.span()),
                    );
                }
                crate::mcp::servers(def)
            },
            ..Program::default()
        }
    }

    fn type_decl(&mut self, i: usize, t: &TypeDef) -> TypeDecl {
        let el = Element::Type(i);
        self.at(el, None, Site::one(t.name.span));
        self.at(el, Some("kind"), Site::one(t.keyword));
        let kind = match &t.body {
            TypeBody::Enum(members) => {
                for (j, (_, m)) in members.iter().enumerate() {
                    self.at(Element::TypeField(i, j), None, Site::one(m.span));
                    self.at_entry(el, "members", j, m.span);
                }
                TypeKind::Enum(
                    members
                        .iter()
                        .map(|(doc, m)| EnumMember {
                            name: m.text.clone(),
                            doc: doc.as_ref().map(|d| d.text.clone()),
                        })
                        .collect(),
                )
            }
            TypeBody::Object(fields) => TypeKind::Object(
                fields
                    .iter()
                    .enumerate()
                    .map(|(j, f)| {
                        let fel = Element::TypeField(i, j);
                        self.at(fel, None, Site::one(f.name.span));
                        self.at(fel, Some("type"), f.ty.site);
                        self.at_entry(el, "fields", j, f.name.span);
                        if let Some(d) = &f.default {
                            self.at(fel, Some("default"), d.site);
                        }
                        Field {
                            name: f.name.text.clone(),
                            ty: Some(Type::parse(&f.ty.text)),
                            doc: f.doc.as_ref().map(|d| d.text.clone()),
                            default: f.default.as_ref().map(|d| d.value.clone()),
                            extra: Vec::new(),
                        }
                    })
                    .collect(),
            ),
        };
        TypeDecl {
            name: t.name.text.clone(),
            kind,
            doc: t.doc.as_ref().map(|d| d.text.clone()),
            extra: Vec::new(),
        }
    }

    fn knowledge(&mut self, i: usize, k: &KnowledgeDef) -> Knowledge {
        let el = Element::Knowledge(i);
        self.at(el, None, Site::one(k.name.span));
        let resident_on = match &k.resident_on {
            Some((_, list)) => self.entries(el, "resident_on", list),
            None => Vec::new(),
        };
        let kind = match &k.kind {
            None => ContentKind::Template,
            Some(name) => ContentKind::parse(&name.text).unwrap_or_else(|| {
                self.errors.push(
                    name.span,
                    crate::words::unknown(
                        "kind of knowledge content",
                        &name.text,
                        &["template", "pattern", "body", "value"],
                    ),
                );
                ContentKind::Template
            }),
        };
        self.at(el, Some(kind.as_str()), k.content.site);
        Knowledge {
            name: k.name.text.clone(),
            resident_on,
            content: vec![(kind, k.content.value.clone())],
            traces_to: k.traces_to.as_ref().map(|t| names(t)),
            extra: Vec::new(),
        }
    }

    /// The provenance record of the program's `obligation`, `source` and `deviation` items
    /// (`None` when it declares none); each spanned where written, so the audit's findings
    /// land on them.
    fn provenance(&mut self, def: &ProgramDef) -> Option<Provenance> {
        let first = def
            .obligations
            .first()
            .map(|o| o.name.span)
            .or(def.source.as_ref().map(|s| s.keyword))
            .or(def.deviations.first().map(|d| d.keyword))?;
        self.at(Element::Faithfulness, None, Site::one(first));
        let obligations: Vec<Obligation> = def
            .obligations
            .iter()
            .enumerate()
            .map(|(i, o)| self.obligation(i, o))
            .collect();
        let deviations: Vec<AcceptedDeviation> = def
            .deviations
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let el = Element::AcceptedDeviation(i);
                self.at(el, None, Site::one(d.keyword));
                for (field, v) in [
                    ("obligation", &d.obligation),
                    ("kind", &d.kind),
                    ("element", &d.element),
                    ("reason", &d.reason),
                ] {
                    if let Some((_, site)) = v {
                        self.at(el, Some(field), *site);
                    }
                }
                AcceptedDeviation {
                    obligation: d.obligation.as_ref().map(|(o, _)| o.clone()),
                    kind: d.kind.as_ref().map(|(k, _)| DeviationKind::parse(k)),
                    element: d.element.as_ref().map(|(e, _)| ElementRef::parse(e)),
                    reason: d.reason.as_ref().map(|(r, _)| r.clone()),
                    extra: Vec::new(),
                }
            })
            .collect();
        let source = def.source.as_ref().map(|s| SourceRef {
            path: s.path.as_ref().map(|(p, _)| p.clone()),
            digest: s.digest.as_ref().map(|(d, _)| d.clone()),
            extra: Vec::new(),
        });
        Some(Provenance {
            source,
            obligations: (!obligations.is_empty()).then_some(obligations),
            deviations: (!deviations.is_empty()).then_some(deviations),
            extra: Vec::new(),
        })
    }

    fn obligation(&mut self, i: usize, o: &ObligationDef) -> Obligation {
        let el = Element::Obligation(i);
        let at_name = Site::one(o.name.span);
        self.at(el, None, at_name);
        self.at(el, Some("id"), at_name);
        for (field, v) in [
            ("kind", &o.kind),
            ("force", &o.force),
            ("bearer", &o.bearer),
            ("quote", &o.quote),
        ] {
            if let Some((_, site)) = v {
                self.at(el, Some(field), *site);
            }
        }
        let realized_by = o.realized_by.as_ref().map(|(list, site)| {
            self.at(el, Some("realized_by"), *site);
            for (j, n) in list.iter().enumerate() {
                self.at_entry(el, "realized_by", j, n.span);
            }
            list.iter().map(|n| ElementRef::parse(&n.text)).collect()
        });
        let extra = o
            .notes
            .iter()
            .map(|(key, value)| {
                self.at(el, Some(&key.text), value.site);
                (key.text.clone(), value.value.clone())
            })
            .collect();
        Obligation {
            id: o.name.text.clone(),
            kind: o.kind.as_ref().map(|(k, _)| ObligationKind::parse(k)),
            force: o.force.as_ref().map(|(f, _)| Modality::parse(f)),
            bearer: o.bearer.as_ref().map(|(b, _)| Bearer::parse(b)),
            quote: o.quote.as_ref().map(|(q, _)| q.clone()),
            realized_by,
            extra,
        }
    }

    /// The signature text of a tool, from its Rust parameter and return types.
    fn signature(&mut self, t: &ToolDef) -> Option<String> {
        let mut params = Vec::new();
        for p in &t.params {
            let name = p.name.to_string();
            match &p.ty {
                None => params.push(name),
                Some(ty) => match ais_type(ty, &self.declared) {
                    Ok(ty) => params.push(format!("{name}: {ty}")),
                    Err(msg) => {
                        self.errors.push(syn::spanned::Spanned::span(ty), msg);
                        params.push(name);
                    }
                },
            }
        }
        let ret = match ais_return(t.ret.as_ref(), &self.declared) {
            Ok(r) => {
                if r.fallible && matches!(t.imp, ToolImpl::Inline(_) | ToolImpl::Path(_)) {
                    self.fallible_tools.push(t.ident.to_string());
                }
                r.ty
            }
            Err(msg) => {
                let span = t
                    .ret
                    .as_ref()
                    .map_or(t.ident.span(), syn::spanned::Spanned::span);
                self.errors.push(span, msg);
                None
            }
        };
        let ret = match (&t.imp, ret) {
            (_, Some(ty)) => format!(" -> {ty}"),
            (ToolImpl::Command(_), None) => " -> str".to_owned(),
            _ => String::new(),
        };
        Some(format!("({}){ret}", params.join(", ")))
    }

    fn tool(&mut self, i: usize, t: &ToolDef) -> Tool {
        let el = Element::Tool(i);
        let name = t.ident.to_string();
        self.at(el, None, Site::one(t.ident.span()));
        self.at(el, Some("sig"), Site::one(t.params_span));
        if let Some((_, site)) = &t.surface {
            self.at(el, Some("surface"), *site);
        }
        let mut tool = Tool {
            name: name.clone(),
            doc: t.doc.as_ref().map(|d| d.text.clone()),
            surface: t.surface.as_ref().map(|(s, _)| ToolSurface::parse(s)),
            traces_to: t.traces_to.as_ref().map(|l| names(l)),
            ..Tool::default()
        };
        if let Some(serves) = &t.serves {
            tool.serves = Some(self.entries(el, "serves", serves));
        }
        if let Some(span) = t.idempotent {
            self.at(el, Some("idempotent"), Site::one(span));
            tool.extra
                .push(("idempotent".to_owned(), ais_core::Value::Bool(true)));
        }
        match &t.imp {
            ToolImpl::Builtin => match ais_core::plan::builtin(&name) {
                Some(b) if t.params.is_empty() && t.ret.is_none() => {
                    tool.sig = Some(b.sig.to_owned());
                    tool.surface = tool.surface.or(Some(b.surface.to_surface()));
                }
                Some(b) => self.errors.push(
                    t.params_span,
                    format!(
                        "`{name}` is a built-in tool with the signature `{}`; declare it as \
                         `tool {name};`",
                        b.sig
                    ),
                ),
                None => {
                    let known: Vec<&str> =
                        ais_core::plan::BUILTINS.iter().map(|b| b.name).collect();
                    let dym = ais_core::did_you_mean(&name, known.iter().copied());
                    let hint = match dym.first() {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "give it a body `{{ .. }}`, `= path::to::function;` or \
                             `= command \"..\";` (the built-ins are {})",
                            known.join(", ")
                        ),
                    };
                    self.errors.push(
                        t.ident.span(),
                        format!("`{name}` is not a built-in tool; {hint}"),
                    );
                }
            },
            ToolImpl::Command(cmd) => {
                tool.sig = self.signature(t);
                tool.command = Some(cmd.value());
                self.at(el, Some("command"), Site::one(cmd.span()));
            }
            ToolImpl::Inline(block) => {
                tool.sig = self.signature(t);
                let base = t.keyword.start().column;
                tool.body = Some(format!(
                    "fn {}\n",
                    source_text(t.tokens.clone(), base, false)
                ));
                tool.lang = Some("rust".to_owned());
                let b = &block.brace_token.span;
                self.at(el, Some("body"), Site::range(b.open(), b.close()));
            }
            ToolImpl::Path(path) => {
                tool.sig = self.signature(t);
                tool.body = Some(path_body(t, path));
                tool.lang = Some("rust".to_owned());
            }
            ToolImpl::Script { lang, body } => {
                tool.sig = self.signature(t);
                tool.body = Some(body.value());
                tool.lang = lang.as_ref().map(Ident::to_string);
                self.at(el, Some("body"), Site::one(body.span()));
                if let Some(lang) = lang {
                    self.at(el, Some("lang"), Site::one(lang.span()));
                }
            }
            ToolImpl::Mcp {
                server,
                tool: remote,
            } => {
                // Written parameters are the author's `sig`; none: the lock gives it.
                if !t.params.is_empty() || t.ret.is_some() {
                    tool.sig = self.signature(t);
                }
                self.at(el, Some("mcp"), Site::one(server.span()));
                tool.mcp = Some(ais_core::McpBinding {
                    server: server.to_string(),
                    tool: remote.as_ref().map(|l| l.value()),
                    extra: Vec::new(),
                });
            }
        }
        tool
    }

    fn carry(&mut self, i: usize, c: &CarryDef, nodes: &[Instruction]) -> Carry {
        let el = Element::Carry(i);
        self.at(el, None, Site::one(c.name.span));
        self.at(el, Some("type"), c.ty.site);
        if let Some(span) = c.input {
            self.at(el, Some("role"), Site::one(span));
        }
        if let Some(d) = &c.default {
            self.at(el, Some("default"), d.site);
        }
        if let Some(doc) = &c.doc {
            self.at(el, Some("doc"), doc.site);
        }
        // A LOOP's counter is set by the LOOP itself (spec §4.4.2), so a counter no
        // instruction writes is produced by its LOOP.
        let produced_by = nodes
            .iter()
            .find(|n| n.writes.contains(&c.name.text))
            .or_else(|| {
                nodes
                    .iter()
                    .find(|n| n.counter.as_deref() == Some(c.name.text.as_str()))
            })
            .map(|n| n.id.clone());
        Carry {
            name: c.name.text.clone(),
            ty: Some(Type::parse(&c.ty.text)),
            role: c.input.map(|_| Role::Input),
            produced_by,
            doc: c.doc.as_ref().map(|d| d.text.clone()),
            default: c.default.as_ref().map(|d| d.value.clone()),
            traces_to: c.traces_to.as_ref().map(|t| names(t)),
            extra: Vec::new(),
        }
    }

    fn owner(&mut self, d: &InstrDef, opcode: &Opcode, def: &ProgramDef) -> Option<Owner> {
        let mut explicit = None;
        for m in &d.modifiers {
            if let "code" | "model" = m.name.text.as_str() {
                explicit = Some(Owner::parse(&m.name.text));
            }
        }
        if let Some(fixed) = opcode.fixed_owner() {
            return Some(explicit.unwrap_or(fixed));
        }
        if explicit.is_some() {
            return explicit;
        }
        let branches = def.edges.iter().any(|e| {
            e.from.text == d.id.text
                && matches!(e.kind, EdgeKind::Guarded(..) | EdgeKind::Default(_))
        });
        let code = d.tool.is_some()
            || (*opcode == Opcode::Route && branches)
            || (*opcode == Opcode::Loop && d.verdict.is_some());
        code.then_some(Owner::Code)
    }

    /// Records an instruction's `#[allow(unrouted_failure)]`; any other name is an error at it.
    fn allow(&mut self, i: usize, d: &InstrDef) {
        for name in d.allow.iter().flat_map(|(_, names)| names) {
            if name.text == "unrouted_failure" {
                self.unrouted_allowed.push(i);
            } else {
                self.errors.push(
                    name.span,
                    // The list is the suggestion: it names every warning there is.
                    format!(
                        "`{}` is not a warning of `ais!`; an instruction may allow {}",
                        name.text,
                        crate::words::one_of(ALLOWABLE)
                    ),
                );
            }
        }
    }

    fn instruction(&mut self, i: usize, d: &InstrDef, def: &ProgramDef) -> Instruction {
        let el = Element::Instruction(i);
        self.at(el, None, Site::one(d.id.span));
        self.at(el, Some("id"), Site::one(d.id.span));
        self.at(el, Some("type"), d.opcode.site);
        let opcode = Opcode::parse(&d.opcode.text);
        let mut surface = None;
        for m in &d.modifiers {
            match m.name.text.as_str() {
                "code" | "model" => self.at(el, Some("owner"), Site::one(m.name.span)),
                "artifact" | "workspace" => {
                    surface = Some(Surface::parse(&m.name.text));
                    self.at(el, Some("surface"), Site::one(m.name.span));
                }
                other => self.errors.push(
                    m.name.span,
                    crate::words::suggest(
                        format!(
                            "unknown modifier `{other}`; expected `code` or `model` (the owner of \
                             a dual opcode) or `artifact` / `workspace` (an ACT's surface)"
                        ),
                        other,
                        &["code", "model", "artifact", "workspace"],
                    ),
                ),
            }
        }
        if !d
            .modifiers
            .iter()
            .any(|m| matches!(m.name.text.as_str(), "code" | "model"))
        {
            self.at(el, Some("owner"), d.opcode.site);
        }
        let owner = self.owner(d, &opcode, def);
        self.allow(i, d);
        if let Some(span) = d.reads_span {
            self.at(el, Some("reads"), Site::one(span));
        }
        let reads = self.entries(el, "reads", &d.reads);
        let writes = self.entries(el, "writes", &d.writes);
        if let Some(t) = &d.tool {
            self.at(el, Some("tool"), Site::one(t.span));
        }
        if let Some(doc) = &d.doc {
            self.at(el, Some("doc"), doc.site);
        }
        let mut instr = Instruction {
            id: d.id.text.clone(),
            opcode,
            owner,
            reads,
            writes,
            doc: d.doc.as_ref().map(|x| x.text.clone()),
            tool: d.tool.as_ref().map(|t| t.text.clone()),
            op: d.op.as_ref().map(|o| o.text.clone()),
            surface,
            traces_to: d.traces_to.as_ref().map(|t| names(t)),
            ..Instruction::default()
        };
        self.instruction_operands(el, d, &mut instr);
        instr
    }

    /// An operand written on an opcode that does not take it is an error at the operand (at
    /// the attribute's name, for an operand written as an attribute).
    fn only_on(&mut self, d: &InstrDef, what: &str, span: Span, opcode: &str) {
        if d.opcode.text != opcode {
            let attr = what
                .strip_prefix("`#[")
                .and_then(|w| w.split('(').next())
                .and_then(|name| d.attr_names.iter().find(|(n, _)| n == name))
                .map_or(span, |(_, s)| *s);
            self.errors.push(
                attr,
                format!(
                    "{what} applies to a {opcode}; `{}` is a {}",
                    d.id.text, d.opcode.text
                ),
            );
        }
    }

    /// The operands that only some opcodes take: output, autonomy, LOOP, SPAWN, CALL, CODE.
    fn instruction_operands(&mut self, el: Element, d: &InstrDef, instr: &mut Instruction) {
        if let Some(v) = &d.verdict {
            self.only_on(d, "`#[verdict(..)]`", v.span, "LOOP");
        }
        if let Some((_, span)) = d.cap {
            self.only_on(d, "`#[cap(..)]`", span, "LOOP");
        }
        if let Some(c) = &d.counter {
            self.only_on(d, "`#[counter(..)]`", c.span, "LOOP");
        }
        if let Some(c) = &d.concurrency {
            self.only_on(d, "`#[concurrency(..)]`", c.span, "SPAWN");
        }
        if let Some((_, site)) = &d.body {
            self.only_on(d, "a body `= expression`", site.start, "CODE");
        }
        if let Some(o) = &d.output {
            self.at(el, Some("output"), o.site);
            instr.output = Some(Type::parse(&o.text));
        }
        if let Some((span, tools)) = &d.autonomy {
            self.at(el, Some("autonomy"), Site::one(*span));
            let tools = self.entries(el, "autonomy.tools", tools);
            instr.autonomy = Some(Autonomy {
                tools,
                extra: Vec::new(),
            });
        }
        if let Some(v) = &d.verdict {
            self.at(el, Some("verdict"), Site::one(v.span));
            instr.verdict = Some(v.text.clone());
        }
        if let Some((cap, span)) = d.cap {
            self.at(el, Some("cap"), Site::one(span));
            instr.cap = Some(cap);
        }
        if let Some(c) = &d.counter {
            self.at(el, Some("counter"), Site::one(c.span));
            instr.counter = Some(c.text.clone());
        }
        if let Some(m) = &d.model {
            self.at(el, Some("model"), Site::one(m.span));
            instr.model = Some(m.text.clone());
        }
        if let Some(c) = &d.concurrency {
            instr.concurrency = Some(self.concurrency(el, "concurrency.", c));
        }
        if let Some((target, site)) = &d.target {
            self.at(el, Some("target"), *site);
            instr.target = Some(match target {
                CallTarget::File(lit) => lit.value(),
                CallTarget::Program(path) => path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default(),
            });
        }
        if let Some((tokens, site)) = &d.body {
            self.at(el, Some("body"), *site);
            instr.body = Some(source_text(tokens.clone(), 0, true));
        }
    }

    fn concurrency(&mut self, el: Element, prefix: &str, c: &ConcurrencyDef) -> Concurrency {
        let field = |f: &str| format!("{prefix}{f}");
        let whole = if prefix.is_empty() {
            None
        } else {
            Some("concurrency")
        };
        self.at(el, whole, Site::one(c.span));
        let mut out = Concurrency::default();
        if let Some(iso) = &c.isolation {
            self.at(el, Some(&field("isolation")), Site::one(iso.span));
            out.isolation = Some(Isolation::parse(&iso.text));
        }
        if let Some(span) = c.spawn_none {
            self.at(el, Some(&field("spawn")), Site::one(span));
            out.spawn = Some(SpawnSource::None);
        }
        if let Some((list, site)) = &c.spawn_list {
            self.at(el, Some(&field("spawn")), *site);
            out.spawn = Some(SpawnSource::List(list.clone()));
        }
        if let Some((n, span)) = c.max_parallel {
            self.at(el, Some(&field("max_parallel")), Site::one(span));
            out.max_parallel = Some(n);
        }
        if let Some((reason, span)) = &c.reason {
            self.at(el, Some(&field("reason")), Site::one(*span));
            out.reason = Some(reason.clone());
        }
        out
    }

    fn edge(&mut self, i: usize, e: &EdgeDef) -> Edge {
        let el = Element::Edge(i);
        self.at(el, None, Site::range(e.from.span, e.to.span));
        self.at(el, Some("from"), Site::one(e.from.span));
        self.at(el, Some("to"), Site::one(e.to.span));
        let (modality, guard) = match &e.kind {
            EdgeKind::Plain => (Modality::Mandatory, None),
            EdgeKind::Guarded(tokens, if_span) => {
                self.at(el, Some("modality"), Site::one(*if_span));
                let (text, offsets) = layout(tokens.clone(), 0, true);
                if let Some(site) = crate::parse::site_of(tokens) {
                    self.at(el, Some("guard"), site);
                }
                self.spans.insert_guard(i, offsets);
                (Modality::Discretionary, Some(text))
            }
            EdgeKind::Default(span) => {
                self.at(el, Some("modality"), Site::one(*span));
                self.at(el, Some("guard"), Site::one(*span));
                (Modality::Discretionary, Some("else".to_owned()))
            }
            EdgeKind::Forbidden(span) => {
                self.at(el, Some("modality"), Site::one(*span));
                (Modality::Forbidden, None)
            }
        };
        Edge {
            from: e.from.text.clone(),
            to: e.to.text.clone(),
            modality: Some(modality),
            guard,
            traces_to: e.traces_to.as_ref().map(|t| names(t)),
            extra: Vec::new(),
        }
    }
}

/// The embodiment of a tool defined elsewhere: the Rust function that calls it.
fn path_body(t: &ToolDef, path: &syn::Path) -> String {
    let params: Vec<String> = t
        .params
        .iter()
        .map(|p| match &p.ty {
            Some(ty) => format!("{}: {}", p.name, source_text(quote::quote!(#ty), 0, true)),
            None => p.name.to_string(),
        })
        .collect();
    let args: Vec<String> = t.params.iter().map(|p| p.name.to_string()).collect();
    let ret = t
        .ret
        .as_ref()
        .map(|r| format!(" -> {}", source_text(quote::quote!(#r), 0, true)))
        .unwrap_or_default();
    format!(
        "fn {}({}){ret} {{ {}({}) }}",
        t.ident,
        params.join(", "),
        source_text(quote::quote!(#path), 0, true),
        args.join(", ")
    )
}

/// A value's text as a Rust literal, for messages.
pub fn value_text(v: &Value) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn type_names_become_snake_case_program_names() {
        assert_eq!(snake_case("WritingPlans"), "writing_plans");
        assert_eq!(snake_case("HTTPFetch"), "http_fetch");
        assert_eq!(snake_case("Plan2Go"), "plan2_go");
    }
}

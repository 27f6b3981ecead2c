//! Canonical AG-IR writing: strict YAML, a fixed order of sections and fields, mappings for
//! every name-keyed section, flow sequences for lists of names, flow mappings for edges, `|`
//! blocks for multi-line text, and quotes wherever a plain scalar would not read back as the
//! same text. The style matches the reference corpus (`autofix_test/CLEAN_IR.agir` is reproduced
//! byte for byte).

use super::read::BODY_SECTIONS;
use super::scalar::{TextStyle, block_for, inline, quoted};
use crate::program::{
    Carry, Concurrency, Edge, Instruction, Knowledge, McpBinding, McpServer, Obligation, Program,
    Provenance, SpawnSource, Tool, TypeDecl, TypeKind, Walker,
};
use crate::value::Value;
use std::borrow::Cow;

/// A field's value, as the writer prints it.
enum F<'a> {
    /// Text in a style.
    Text(Cow<'a, str>, TextStyle),
    /// A list of names: a flow sequence.
    Names(&'a [String]),
    /// A token printed as is (a number, a bool, `null`, `none`).
    Raw(String),
    /// A plain value (extras, defaults, knowledge content, `faithfulness`).
    Val(&'a Value),
    /// A nested block mapping of fields, in order.
    Map(Vec<(Cow<'a, str>, F<'a>)>),
    /// The instructions: a block sequence of block mappings, each one's fields made as it is
    /// written (the sections that grow with a program are never held whole as fields).
    Nodes(&'a [Instruction]),
    /// The edges: a block sequence of flow mappings, likewise.
    Edges(&'a [Edge]),
    /// The carries: a block mapping by name, likewise.
    Carries(&'a [Carry]),
    /// A block sequence of block mappings (the provenance record's obligations, deviations).
    Seq(Vec<Fields<'a>>),
}

type Fields<'a> = Vec<(Cow<'a, str>, F<'a>)>;

fn text(s: &str, style: TextStyle) -> F<'_> {
    F::Text(Cow::Borrowed(s), style)
}

fn push<'a>(out: &mut Fields<'a>, key: &'a str, f: F<'a>) {
    out.push((Cow::Borrowed(key), f));
}

fn opt_text<'a>(out: &mut Fields<'a>, key: &'a str, t: &'a Option<String>, style: TextStyle) {
    if let Some(t) = t {
        push(out, key, text(t, style));
    }
}

fn opt_names<'a>(out: &mut Fields<'a>, key: &'a str, names: &'a Option<Vec<String>>) {
    if let Some(n) = names {
        push(out, key, F::Names(n));
    }
}

fn opt_type<'a>(out: &mut Fields<'a>, key: &'a str, ty: &Option<crate::program::Type>) {
    if let Some(ty) = ty {
        push(
            out,
            key,
            F::Text(Cow::Owned(ty.to_string()), TextStyle::Name),
        );
    }
}

fn names_if_any<'a>(out: &mut Fields<'a>, key: &'a str, names: &'a [String]) {
    if !names.is_empty() {
        push(out, key, F::Names(names));
    }
}

fn extras<'a>(out: &mut Fields<'a>, extra: &'a [(String, Value)]) {
    out.extend(
        extra
            .iter()
            .map(|(k, v)| (Cow::Borrowed(k.as_str()), F::Val(v))),
    );
}

/// Writes a program.
pub(crate) fn program(p: &Program) -> String {
    let mut w = Writer {
        out: String::new(),
        dashes: 0,
    };
    // Top-level `name`/`description` extras only survive a round trip behind a frontmatter.
    let has_front = p.name.is_some()
        || p.description.is_some()
        || !p.frontmatter_extra.is_empty()
        || p.extra
            .iter()
            .any(|(k, _)| k == "name" || k == "description");
    if has_front {
        let mut front = Vec::new();
        opt_text(&mut front, "name", &p.name, TextStyle::Name);
        opt_text(&mut front, "description", &p.description, TextStyle::Name);
        extras(&mut front, &p.frontmatter_extra);
        w.out.push_str("---\n");
        w.fields(0, &front);
        w.out.push_str("---\n");
    }
    let body = body(p);
    // A frontmatter holding a section's name, followed by nothing, would read as the body.
    let front_looks_like_body = p
        .frontmatter_extra
        .iter()
        .any(|(k, _)| BODY_SECTIONS.contains(&k.as_str()));
    if !body.is_empty() {
        w.fields(0, &body);
    } else if !has_front || front_looks_like_body {
        w.out.push_str("{}\n");
    }
    w.out
}

fn body(p: &Program) -> Fields<'_> {
    let mut b = Vec::new();
    opt_text(&mut b, "agir_version", &p.agir_version, TextStyle::Version);
    if let Some(s) = p.standalone {
        push(&mut b, "standalone", F::Raw(s.to_string()));
    }
    opt_text(&mut b, "shape", &p.shape, TextStyle::Name);
    if let Some(types) = &p.types {
        let map = types
            .iter()
            .map(|t| (Cow::Borrowed(t.name.as_str()), type_decl(t)));
        push(&mut b, "types", F::Map(map.collect()));
    }
    if let Some(knowledge) = &p.knowledge {
        let map = knowledge
            .iter()
            .map(|k| (Cow::Borrowed(k.name.as_str()), knowledge_item(k)));
        push(&mut b, "knowledge", F::Map(map.collect()));
    }
    if let Some(tools) = &p.tools {
        let map = tools
            .iter()
            .map(|t| (Cow::Borrowed(t.name.as_str()), tool(t)));
        push(&mut b, "tools", F::Map(map.collect()));
    }
    if let Some(w) = &p.walker {
        push(&mut b, "walker", walker(w));
    }
    if let Some(nodes) = &p.nodes {
        push(&mut b, "nodes", F::Nodes(nodes));
    }
    if let Some(edges) = &p.edges {
        push(&mut b, "edges", F::Edges(edges));
    }
    if let Some(c) = &p.concurrency {
        push(&mut b, "concurrency", F::Map(concurrency(c)));
    }
    if let Some(servers) = &p.mcp_servers {
        let map = servers
            .iter()
            .map(|s| (Cow::Borrowed(s.name.as_str()), mcp_server(s)));
        push(&mut b, "mcp_servers", F::Map(map.collect()));
    }
    if let Some(f) = &p.faithfulness {
        push(&mut b, "faithfulness", F::Map(provenance(f)));
    }
    extras(&mut b, &p.extra);
    b
}

/// The `faithfulness` section: `source`, `obligations`, `deviations`, then unknown keys.
fn provenance(p: &Provenance) -> Fields<'_> {
    let mut f = Vec::new();
    if let Some(s) = &p.source {
        let mut sf = Vec::new();
        opt_text(&mut sf, "path", &s.path, TextStyle::Prose);
        opt_text(&mut sf, "digest", &s.digest, TextStyle::Prose);
        extras(&mut sf, &s.extra);
        push(&mut f, "source", F::Map(sf));
    }
    if let Some(obligations) = &p.obligations {
        push(
            &mut f,
            "obligations",
            F::Seq(obligations.iter().map(obligation).collect()),
        );
    }
    if let Some(deviations) = &p.deviations {
        let items = deviations.iter().map(|d| {
            let mut df = Vec::new();
            opt_text(&mut df, "obligation", &d.obligation, TextStyle::Name);
            if let Some(k) = &d.kind {
                push(&mut df, "kind", text(k.as_str(), TextStyle::Name));
            }
            if let Some(e) = &d.element {
                push(
                    &mut df,
                    "element",
                    F::Text(Cow::Owned(e.spelling()), TextStyle::Name),
                );
            }
            opt_text(&mut df, "reason", &d.reason, TextStyle::Prose);
            extras(&mut df, &d.extra);
            df
        });
        push(&mut f, "deviations", F::Seq(items.collect()));
    }
    extras(&mut f, &p.extra);
    f
}

fn obligation(o: &Obligation) -> Fields<'_> {
    let mut f = Vec::new();
    push(&mut f, "id", text(&o.id, TextStyle::Name));
    if let Some(k) = &o.kind {
        push(&mut f, "kind", text(k.as_str(), TextStyle::Name));
    }
    if let Some(m) = &o.force {
        push(&mut f, "force", text(m.as_str(), TextStyle::Name));
    }
    if let Some(b) = &o.bearer {
        push(&mut f, "bearer", text(b.as_str(), TextStyle::Name));
    }
    opt_text(&mut f, "quote", &o.quote, TextStyle::Prose);
    if let Some(refs) = &o.realized_by {
        let names = refs
            .iter()
            .map(|r| F::Text(Cow::Owned(r.spelling()), TextStyle::Name));
        push(&mut f, "realized_by", F::Raw(flow_seq(names)));
    }
    extras(&mut f, &o.extra);
    f
}

fn type_decl(t: &TypeDecl) -> F<'_> {
    let mut f = Vec::new();
    match &t.kind {
        TypeKind::Enum(members) => {
            push(&mut f, "kind", text("enum", TextStyle::Name));
            if members.iter().all(|m| m.doc.is_none()) {
                let names = members
                    .iter()
                    .map(|m| F::Text(Cow::Borrowed(&m.name), TextStyle::Name));
                push(&mut f, "members", F::Raw(flow_seq(names)));
            } else {
                let map = members.iter().map(|m| {
                    let doc = match &m.doc {
                        Some(d) => text(d, TextStyle::Prose),
                        None => F::Raw("null".to_owned()),
                    };
                    (Cow::Borrowed(m.name.as_str()), doc)
                });
                push(&mut f, "members", F::Map(map.collect()));
            }
        }
        TypeKind::Object(fields) => {
            push(&mut f, "kind", text("object", TextStyle::Name));
            let map = fields.iter().map(|fd| {
                let mut b = Vec::new();
                opt_type(&mut b, "type", &fd.ty);
                opt_text(&mut b, "doc", &fd.doc, TextStyle::Prose);
                if let Some(d) = &fd.default {
                    push(&mut b, "default", F::Val(d));
                }
                extras(&mut b, &fd.extra);
                (Cow::Borrowed(fd.name.as_str()), F::Map(b))
            });
            push(&mut f, "fields", F::Map(map.collect()));
        }
        TypeKind::Unknown(k) if k.is_empty() => {}
        TypeKind::Unknown(k) => push(&mut f, "kind", text(k, TextStyle::Name)),
    }
    opt_text(&mut f, "doc", &t.doc, TextStyle::Prose);
    extras(&mut f, &t.extra);
    F::Map(f)
}

fn knowledge_item(k: &Knowledge) -> F<'_> {
    let mut f = Vec::new();
    push(&mut f, "resident_on", F::Names(&k.resident_on));
    for (kind, v) in &k.content {
        push(&mut f, kind.as_str(), F::Val(v));
    }
    opt_names(&mut f, "traces_to", &k.traces_to);
    extras(&mut f, &k.extra);
    F::Map(f)
}

fn tool(t: &Tool) -> F<'_> {
    let mut f = Vec::new();
    opt_text(&mut f, "sig", &t.sig, TextStyle::Prose);
    if let Some(s) = &t.surface {
        push(&mut f, "surface", text(s.as_str(), TextStyle::Name));
    }
    opt_names(&mut f, "serves", &t.serves);
    opt_text(&mut f, "doc", &t.doc, TextStyle::Prose);
    if let Some(m) = &t.mcp {
        push(&mut f, "mcp", mcp_binding(m));
    }
    opt_names(&mut f, "traces_to", &t.traces_to);
    opt_text(&mut f, "lang", &t.lang, TextStyle::Name);
    opt_text(&mut f, "command", &t.command, TextStyle::Code);
    opt_text(&mut f, "body", &t.body, TextStyle::Code);
    extras(&mut f, &t.extra);
    F::Map(f)
}

fn mcp_binding(m: &McpBinding) -> F<'_> {
    let mut f = Vec::new();
    push(&mut f, "server", text(&m.server, TextStyle::Name));
    opt_text(&mut f, "tool", &m.tool, TextStyle::Name);
    extras(&mut f, &m.extra);
    F::Map(f)
}

fn mcp_server(s: &McpServer) -> F<'_> {
    let mut f = Vec::new();
    opt_text(&mut f, "doc", &s.doc, TextStyle::Prose);
    opt_text(&mut f, "command", &s.command, TextStyle::Prose);
    opt_names(&mut f, "args", &s.args);
    if let Some(env) = &s.env {
        let map = env
            .iter()
            .map(|(k, v)| (Cow::Borrowed(k.as_str()), text(v, TextStyle::Prose)));
        push(&mut f, "env", F::Map(map.collect()));
    }
    opt_text(&mut f, "cwd", &s.cwd, TextStyle::Prose);
    opt_text(&mut f, "url", &s.url, TextStyle::Prose);
    extras(&mut f, &s.extra);
    F::Map(f)
}

/// The carries as (name, fields) pairs, for a flow mapping.
fn carry_fields(carries: &[Carry]) -> Fields<'_> {
    carries
        .iter()
        .map(|c| (Cow::Borrowed(c.name.as_str()), carry(c)))
        .collect()
}

fn walker(w: &Walker) -> F<'_> {
    let mut f = Vec::new();
    opt_text(&mut f, "name", &w.name, TextStyle::Name);
    if let Some(carries) = &w.carries {
        push(&mut f, "carries", F::Carries(carries));
    }
    extras(&mut f, &w.extra);
    F::Map(f)
}

/// A carry as one flow mapping, for a minimal edit that adds it to a section: `{type: str,
/// produced_by: draft}`, or with its name first (`{name: note, type: str, …}`) for a section
/// spelled as a list.
pub(crate) fn carry_flow(c: &Carry, with_name: bool) -> String {
    let F::Map(mut fields) = carry(c) else {
        return "{}".to_owned();
    };
    if with_name {
        fields.insert(0, (Cow::Borrowed("name"), text(&c.name, TextStyle::Name)));
    }
    flow_map(&fields)
}

/// A carry's name as a mapping key.
pub(crate) fn key_text(k: &str) -> String {
    key(k)
}

fn carry(c: &Carry) -> F<'_> {
    let mut f = Vec::new();
    opt_type(&mut f, "type", &c.ty);
    if let Some(r) = &c.role {
        push(&mut f, "role", text(r.as_str(), TextStyle::Name));
    }
    opt_text(&mut f, "produced_by", &c.produced_by, TextStyle::Name);
    opt_text(&mut f, "doc", &c.doc, TextStyle::Prose);
    if let Some(d) = &c.default {
        push(&mut f, "default", F::Val(d));
    }
    opt_names(&mut f, "traces_to", &c.traces_to);
    extras(&mut f, &c.extra);
    F::Map(f)
}

fn concurrency(c: &Concurrency) -> Fields<'_> {
    let mut f = Vec::new();
    if let Some(i) = &c.isolation {
        push(&mut f, "isolation", text(i.as_str(), TextStyle::Name));
    }
    match &c.spawn {
        None => {}
        Some(SpawnSource::None) => push(&mut f, "spawn", F::Raw("none".to_owned())),
        Some(SpawnSource::List(names)) => push(&mut f, "spawn", F::Names(names)),
        Some(SpawnSource::Other(v)) => push(&mut f, "spawn", F::Val(v)),
    }
    if let Some(m) = c.max_parallel {
        push(&mut f, "max_parallel", F::Raw(m.to_string()));
    }
    opt_text(&mut f, "reason", &c.reason, TextStyle::Prose);
    extras(&mut f, &c.extra);
    f
}

fn instruction(i: &Instruction) -> Fields<'_> {
    let mut f = Vec::new();
    push(&mut f, "id", text(&i.id, TextStyle::Name));
    let op = i.opcode.as_str();
    if !op.is_empty() {
        push(&mut f, "type", text(op, TextStyle::Name));
    }
    if let Some(o) = &i.owner {
        push(&mut f, "owner", text(o.as_str(), TextStyle::Name));
    }
    if let Some(s) = &i.surface {
        push(&mut f, "surface", text(s.as_str(), TextStyle::Name));
    }
    opt_text(&mut f, "tool", &i.tool, TextStyle::Name);
    opt_text(&mut f, "op", &i.op, TextStyle::Name);
    names_if_any(&mut f, "reads", &i.reads);
    names_if_any(&mut f, "writes", &i.writes);
    opt_text(&mut f, "doc", &i.doc, TextStyle::Prose);
    opt_type(&mut f, "output", &i.output);
    opt_text(&mut f, "body", &i.body, TextStyle::Code);
    if let Some(a) = &i.autonomy {
        let mut af = Vec::new();
        push(&mut af, "tools", F::Names(&a.tools));
        extras(&mut af, &a.extra);
        push(&mut f, "autonomy", F::Map(af));
    }
    if let Some(c) = &i.concurrency {
        push(&mut f, "concurrency", F::Map(concurrency(c)));
    }
    opt_text(&mut f, "verdict", &i.verdict, TextStyle::Name);
    if let Some(cap) = i.cap {
        push(&mut f, "cap", F::Raw(cap.to_string()));
    }
    opt_text(&mut f, "counter", &i.counter, TextStyle::Name);
    opt_text(&mut f, "target", &i.target, TextStyle::Name);
    opt_names(&mut f, "traces_to", &i.traces_to);
    opt_text(&mut f, "model", &i.model, TextStyle::Name);
    extras(&mut f, &i.extra);
    f
}

fn edge(e: &Edge) -> Fields<'_> {
    let mut f = Vec::new();
    push(&mut f, "from", text(&e.from, TextStyle::Name));
    push(&mut f, "to", text(&e.to, TextStyle::Name));
    if let Some(m) = &e.modality {
        push(&mut f, "modality", text(m.as_str(), TextStyle::Name));
    }
    opt_text(&mut f, "guard", &e.guard, TextStyle::Prose);
    opt_names(&mut f, "traces_to", &e.traces_to);
    extras(&mut f, &e.extra);
    f
}

/// A key, on one line. A key holding `:` is always quoted, so that no key can look like a
/// flow collection glued to its key (`a:{`), which the reader relaxes.
fn key(k: &str) -> String {
    if k.contains(':') {
        quoted(k)
    } else {
        inline(k, TextStyle::Name, false)
    }
}

/// A flow sequence of items.
fn flow_seq<'a>(items: impl Iterator<Item = F<'a>>) -> String {
    let parts: Vec<String> = items.map(|f| flow(&f)).collect();
    format!("[{}]", parts.join(", "))
}

/// A flow mapping of fields.
fn flow_map(fields: &[(Cow<'_, str>, F<'_>)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(k, f)| format!("{}: {}", inline(k, TextStyle::Name, true), flow(f)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Any field value in flow style.
fn flow(f: &F<'_>) -> String {
    match f {
        F::Text(s, style) => inline(s, *style, true),
        F::Names(names) => flow_seq(names.iter().map(|n| text(n, TextStyle::Name))),
        F::Raw(s) => s.clone(),
        F::Val(v) => flow_value(v),
        F::Map(fields) => flow_map(fields),
        F::Nodes(nodes) => {
            let parts: Vec<String> = nodes.iter().map(|i| flow_map(&instruction(i))).collect();
            format!("[{}]", parts.join(", "))
        }
        F::Edges(edges) => {
            let parts: Vec<String> = edges.iter().map(|e| flow_map(&edge(e))).collect();
            format!("[{}]", parts.join(", "))
        }
        F::Carries(carries) => flow_map(&carry_fields(carries)),
        F::Seq(items) => {
            let parts: Vec<String> = items.iter().map(|i| flow_map(i)).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// A scalar value (or an empty collection) on one line, or `None` for a non-empty collection.
fn scalar_value(v: &Value, flow: bool) -> Option<String> {
    Some(match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => float(*x),
        Value::Str(s) => inline(s, TextStyle::Name, flow),
        Value::List(l) if l.is_empty() => "[]".to_owned(),
        Value::Map(m) if m.is_empty() => "{}".to_owned(),
        Value::List(_) | Value::Map(_) => return None,
    })
}

/// A float that reads back as the same float (never as an int).
fn float(x: f64) -> String {
    if !x.is_finite() {
        // A `Value::Float` is finite; should one not be, write what the core schema reads back
        // as the same kind of number.
        return if x.is_nan() {
            ".nan".to_owned()
        } else if x > 0.0 {
            ".inf".to_owned()
        } else {
            "-.inf".to_owned()
        };
    }
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn flow_value(v: &Value) -> String {
    match v {
        Value::List(items) if !items.is_empty() => {
            let parts: Vec<String> = items.iter().map(flow_value).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Map(map) if !map.is_empty() => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", inline(k, TextStyle::Name, true), flow_value(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => scalar_value(other, true).unwrap_or_default(),
    }
}

struct Writer {
    out: String,
    /// Sequence dashes waiting to be printed at the start of the next line.
    dashes: usize,
}

impl Writer {
    /// Starts a line at an indentation, printing any pending `- ` markers in it.
    fn line(&mut self, indent: usize) {
        let dashes = std::mem::take(&mut self.dashes);
        let pad = indent.saturating_sub(2 * dashes);
        self.out.extend(std::iter::repeat_n(' ', pad));
        for _ in 0..dashes {
            self.out.push_str("- ");
        }
    }

    fn fields(&mut self, indent: usize, fields: &[(Cow<'_, str>, F<'_>)]) {
        for (k, f) in fields {
            self.field(indent, k, f);
        }
    }

    /// `key: value` at an indentation, the value in block style where it has one.
    fn field(&mut self, indent: usize, k: &str, f: &F<'_>) {
        self.line(indent);
        self.out.push_str(&key(k));
        self.out.push(':');
        match f {
            F::Text(s, style) => self.text_after(indent, s, *style),
            F::Val(v) => self.value_after(indent, v),
            F::Map(fields) if !fields.is_empty() => {
                self.out.push('\n');
                self.fields(indent + 2, fields);
            }
            F::Nodes(nodes) if !nodes.is_empty() => {
                self.out.push('\n');
                for item in nodes.iter().map(instruction) {
                    self.dashes += 1;
                    if item.is_empty() {
                        self.line(indent + 2);
                        self.out.push_str("{}\n");
                    } else {
                        self.fields(indent + 4, &item);
                    }
                }
            }
            F::Seq(items) if !items.is_empty() => {
                self.out.push('\n');
                for item in items {
                    self.dashes += 1;
                    if item.is_empty() {
                        self.line(indent + 2);
                        self.out.push_str("{}\n");
                    } else {
                        self.fields(indent + 4, item);
                    }
                }
            }
            F::Edges(edges) if !edges.is_empty() => {
                self.out.push('\n');
                for item in edges.iter().map(edge) {
                    self.line(indent + 2);
                    self.out.push_str("- ");
                    self.out.push_str(&flow_map(&item));
                    self.out.push('\n');
                }
            }
            F::Carries(carries) if !carries.is_empty() => {
                self.out.push('\n');
                for c in *carries {
                    self.field(indent + 2, &c.name, &carry(c));
                }
            }
            other => {
                self.out.push(' ');
                self.out.push_str(&flow(other));
                self.out.push('\n');
            }
        }
    }

    /// Text after `key:` (or `-`): on the line, or as a `|` block indented under it.
    fn text_after(&mut self, indent: usize, s: &str, style: TextStyle) {
        if let Some((header, lines)) = block_for(s, style) {
            self.out.push(' ');
            self.out.push_str(header);
            self.out.push('\n');
            for l in lines {
                if !l.is_empty() {
                    self.out.extend(std::iter::repeat_n(' ', indent + 2));
                    self.out.push_str(l);
                }
                self.out.push('\n');
            }
        } else {
            self.out.push(' ');
            let one_line = if s.contains('\n') {
                quoted(s)
            } else {
                inline(s, style, false)
            };
            self.out.push_str(&one_line);
            self.out.push('\n');
        }
    }

    /// A value after `key:` (or `-`) whose line is started.
    fn value_after(&mut self, indent: usize, v: &Value) {
        match v {
            Value::Str(s) => self.text_after(indent, s, TextStyle::Name),
            Value::Map(map) if !map.is_empty() => {
                self.out.push('\n');
                for (k, v) in map {
                    self.line(indent + 2);
                    self.out.push_str(&key(k));
                    self.out.push(':');
                    self.value_after(indent + 2, v);
                }
            }
            Value::List(items) if !items.is_empty() => {
                self.out.push('\n');
                for item in items {
                    self.item(indent + 2, item);
                }
            }
            other => {
                self.out.push(' ');
                self.out
                    .push_str(&scalar_value(other, false).unwrap_or_default());
                self.out.push('\n');
            }
        }
    }

    /// A sequence item at an indentation: `- value`.
    fn item(&mut self, indent: usize, v: &Value) {
        match v {
            Value::Map(map) if !map.is_empty() => {
                self.dashes += 1;
                for (k, v) in map {
                    self.line(indent + 2);
                    self.out.push_str(&key(k));
                    self.out.push(':');
                    self.value_after(indent + 2, v);
                }
            }
            Value::List(items) if !items.is_empty() => {
                self.dashes += 1;
                for item in items {
                    self.item(indent + 2, item);
                }
            }
            other => {
                self.line(indent);
                self.out.push('-');
                self.value_after(indent, other);
            }
        }
    }
}

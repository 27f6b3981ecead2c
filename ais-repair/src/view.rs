//! The failing view of a finding: the instructions it names, their edges, the carries, tools
//! and knowledge they touch, the types of those carries and the obligations they trace to (and,
//! when one of its instructions traces to nothing, the obligations nothing traces to, which it
//! may realize) — what the model is shown and all it may change.

use ais_core::{Element, Locus};
use ais_core::{Finding, Program, Type};
use std::collections::BTreeSet;

/// The elements a finding's repair may see and change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// Instructions, by id.
    pub instructions: BTreeSet<String>,
    /// Instructions outside the view at the other end of one of its edges: named, not shown,
    /// never changed (a new edge may reach them).
    pub neighbours: BTreeSet<String>,
    /// Carries, by name.
    pub carries: BTreeSet<String>,
    /// Tools, by name.
    pub tools: BTreeSet<String>,
    /// Knowledge items, by name.
    pub knowledge: BTreeSet<String>,
    /// Declared types, by name.
    pub types: BTreeSet<String>,
    /// Obligations of the provenance record, by id.
    pub obligations: BTreeSet<String>,
}

impl View {
    /// The view of `finding` in `program`: seeded by the element the finding is located at
    /// (and its secondary places), then widened to what those instructions touch.
    pub fn of(program: &Program, finding: &Finding) -> View {
        let mut v = View::default();
        if let Some(id) = &finding.instruction {
            v.instructions.insert(id.clone());
        }
        v.seed(program, &finding.locus);
        for r in &finding.related {
            v.seed(program, &r.locus);
        }
        v.widen(program);
        v
    }

    /// True when the view holds nothing a repair could change.
    pub fn is_empty(&self) -> bool {
        self.instructions.is_empty()
            && self.carries.is_empty()
            && self.tools.is_empty()
            && self.knowledge.is_empty()
            && self.types.is_empty()
    }

    fn seed(&mut self, p: &Program, locus: &Locus) {
        match locus.element {
            Element::Instruction(i) => {
                if let Some(n) = p.instructions().get(i) {
                    self.instructions.insert(n.id.clone());
                }
            }
            Element::Edge(e) => {
                if let Some(edge) = p.edge_list().get(e) {
                    for end in [&edge.from, &edge.to] {
                        if p.instruction(end).is_some() {
                            self.instructions.insert(end.clone());
                        }
                    }
                }
            }
            Element::Carry(c) => {
                if let Some(carry) = p.carries().get(c) {
                    self.carries.insert(carry.name.clone());
                    for n in p.instructions() {
                        if n.reads.contains(&carry.name) || n.writes.contains(&carry.name) {
                            self.instructions.insert(n.id.clone());
                        }
                    }
                }
            }
            Element::Tool(t) => {
                if let Some(tool) = p.tool_list().get(t) {
                    self.tools.insert(tool.name.clone());
                    for n in p.instructions() {
                        if bound(p, &tool.name, &n.id) {
                            self.instructions.insert(n.id.clone());
                        }
                    }
                }
            }
            Element::Knowledge(k) => {
                if let Some(item) = p.knowledge.as_deref().and_then(|l| l.get(k)) {
                    self.knowledge.insert(item.name.clone());
                    for id in &item.resident_on {
                        if p.instruction(id).is_some() {
                            self.instructions.insert(id.clone());
                        }
                    }
                }
            }
            Element::Type(t) | Element::TypeField(t, _) => {
                if let Some(decl) = p.types.as_deref().and_then(|l| l.get(t)) {
                    self.types.insert(decl.name.clone());
                }
            }
            Element::Obligation(o) => self.seed_obligation(p, o),
            _ => {}
        }
    }

    /// An obligation, the instructions that realize it, and — when nothing does (it was
    /// dropped) — the instructions that realize its neighbours in the record, between which
    /// a source's next step belongs.
    fn seed_obligation(&mut self, p: &Program, o: usize) {
        let Some(record) = &p.faithfulness else {
            return;
        };
        let list = record.obligation_list();
        let Some(ob) = list.get(o) else {
            return;
        };
        self.obligations.insert(ob.id.clone());
        let tracing = |id: &str| -> Vec<String> {
            let mut ids: Vec<String> = p
                .instructions()
                .iter()
                .filter(|n| traces(&n.traces_to, id))
                .map(|n| n.id.clone())
                .collect();
            for e in p.edge_list().iter().filter(|e| traces(&e.traces_to, id)) {
                ids.extend([e.from.clone(), e.to.clone()]);
            }
            ids.retain(|x| p.instruction(x).is_some());
            ids
        };
        let own = tracing(&ob.id);
        if !own.is_empty() {
            self.instructions.extend(own);
            return;
        }
        let before = list[..o]
            .iter()
            .rev()
            .map(|x| tracing(&x.id))
            .find(|v| !v.is_empty());
        let after = list[o + 1..]
            .iter()
            .map(|x| tracing(&x.id))
            .find(|v| !v.is_empty());
        for ids in [before, after].into_iter().flatten() {
            self.instructions.extend(ids);
        }
    }

    /// Adds what the view's instructions touch.
    fn widen(&mut self, p: &Program) {
        for n in p
            .instructions()
            .iter()
            .filter(|n| self.instructions.contains(&n.id))
        {
            let named = n
                .reads
                .iter()
                .chain(&n.writes)
                .chain(n.verdict.iter())
                .chain(n.counter.iter());
            for c in named {
                if p.carry(c).is_some() {
                    self.carries.insert(c.clone());
                }
            }
            for t in p.tool_list() {
                if bound(p, &t.name, &n.id) {
                    self.tools.insert(t.name.clone());
                }
            }
            for k in p.knowledge.iter().flatten() {
                if k.resident_on.contains(&n.id) {
                    self.knowledge.insert(k.name.clone());
                }
            }
            self.obligations
                .extend(n.traces_to.iter().flatten().cloned());
            if let Some(out) = &n.output {
                named_types(out, &mut self.types);
            }
        }
        for e in p.edge_list() {
            let from = self.instructions.contains(&e.from);
            let to = self.instructions.contains(&e.to);
            if from || to {
                self.obligations
                    .extend(e.traces_to.iter().flatten().cloned());
                for end in [&e.from, &e.to] {
                    if !self.instructions.contains(end) {
                        self.neighbours.insert(end.clone());
                    }
                }
            }
        }
        for c in p
            .carries()
            .iter()
            .filter(|c| self.carries.contains(&c.name))
        {
            if let Some(ty) = &c.ty {
                named_types(ty, &mut self.types);
            }
            self.obligations
                .extend(c.traces_to.iter().flatten().cloned());
        }
        for t in p
            .tool_list()
            .iter()
            .filter(|t| self.tools.contains(&t.name))
        {
            self.obligations
                .extend(t.traces_to.iter().flatten().cloned());
        }
        for k in p.knowledge.iter().flatten() {
            if self.knowledge.contains(&k.name) {
                self.obligations
                    .extend(k.traces_to.iter().flatten().cloned());
            }
        }
        // An instruction that traces to nothing may realize an obligation nothing traces to:
        // those are shown as the candidates.
        let untraced = p
            .instructions()
            .iter()
            .filter(|n| self.instructions.contains(&n.id))
            .any(|n| n.traces_to.as_ref().is_none_or(Vec::is_empty));
        if untraced && let Some(record) = &p.faithfulness {
            for o in record.obligation_list() {
                let traced = p.instructions().iter().any(|n| traces(&n.traces_to, &o.id))
                    || p.edge_list().iter().any(|e| traces(&e.traces_to, &o.id))
                    || p.carries().iter().any(|c| traces(&c.traces_to, &o.id))
                    || p.tool_list().iter().any(|t| traces(&t.traces_to, &o.id))
                    || p.knowledge
                        .iter()
                        .flatten()
                        .any(|k| traces(&k.traces_to, &o.id));
                if !traced {
                    self.obligations.insert(o.id.clone());
                }
            }
        }
        self.types.retain(|t| p.type_decl(t).is_some());
        let known = p.faithfulness.as_ref().map(|r| r.obligation_list());
        self.obligations
            .retain(|o| known.is_some_and(|l| l.iter().any(|x| x.id == *o)));
    }

    /// True when edge `from -> to` is the view's: one end is a view instruction.
    pub fn holds_edge(&self, from: &str, to: &str) -> bool {
        self.instructions.contains(from) || self.instructions.contains(to)
    }

    /// The view as AG-IR text: the program cut down to the view's elements (the record to its
    /// obligations), canonical, with the neighbours named in a comment. This, never the whole
    /// program, is what the model sees.
    pub fn text(&self, p: &Program) -> String {
        let carries = kept(p.carries(), |c| self.carries.contains(&c.name));
        let cut = Program {
            name: p.name.clone(),
            nodes: kept(p.instructions(), |n| self.instructions.contains(&n.id)),
            edges: kept(p.edge_list(), |e| self.holds_edge(&e.from, &e.to)),
            walker: carries.map(|carries| ais_core::Walker {
                name: p.walker.as_ref().and_then(|w| w.name.clone()),
                carries: Some(carries),
                ..Default::default()
            }),
            tools: kept(p.tool_list(), |t| self.tools.contains(&t.name)),
            knowledge: kept(p.knowledge.as_deref().unwrap_or_default(), |k| {
                self.knowledge.contains(&k.name)
            }),
            types: kept(p.types.as_deref().unwrap_or_default(), |t| {
                self.types.contains(&t.name)
            }),
            faithfulness: p.faithfulness.as_ref().and_then(|record| {
                let obligations = kept(record.obligation_list(), |o| {
                    self.obligations.contains(&o.id)
                });
                obligations.map(|o| ais_core::Provenance {
                    obligations: Some(o),
                    ..Default::default()
                })
            }),
            ..Program::default()
        };
        let mut text = String::new();
        if !self.neighbours.is_empty() {
            let names: Vec<&str> = self.neighbours.iter().map(String::as_str).collect();
            text.push_str(&format!(
                "# outside the view (edges may reach them; they may not be changed): {}\n",
                names.join(", ")
            ));
        }
        text.push_str(&ais_core::agir::write(&cut));
        text
    }
}

/// The items `keep` keeps, in order; `None` when it keeps none (the section is left out).
fn kept<T: Clone>(items: &[T], keep: impl Fn(&T) -> bool) -> Option<Vec<T>> {
    let v: Vec<T> = items.iter().filter(|x| keep(x)).cloned().collect();
    (!v.is_empty()).then_some(v)
}

/// True when `traces_to` names `id`.
fn traces(traces_to: &Option<Vec<String>>, id: &str) -> bool {
    traces_to.iter().flatten().any(|t| t == id)
}

/// True when tool `tool` serves instruction `id` (its `tool` field, the tool's `serves`, or the
/// same name).
pub(crate) fn bound(p: &Program, tool: &str, id: &str) -> bool {
    let Some((_, n)) = p.instruction(id) else {
        return false;
    };
    n.tool.as_deref() == Some(tool)
        || tool == id
        || p.tool_list()
            .iter()
            .any(|t| t.name == tool && t.serves.iter().flatten().any(|s| s == id))
        || n.autonomy
            .as_ref()
            .is_some_and(|a| a.tools.iter().any(|t| t == tool))
}

/// The declared type names in `ty`.
fn named_types(ty: &Type, out: &mut BTreeSet<String>) {
    match ty {
        Type::Named(n) => {
            out.insert(n.clone());
        }
        Type::List(Some(inner)) | Type::Dict(Some(inner)) => named_types(inner, out),
        _ => {}
    }
}

//! Judging a patched program against the one it came from: did the patch stay in its view, and
//! did it keep the obligation closure.

use crate::view::View;
use ais_core::Program;
use std::collections::{BTreeMap, BTreeSet};

/// The elements a patch changed, created or deleted outside its view, as `kind:name` (empty
/// when it stayed inside). Decided by comparing the two programs, not by what the operations
/// say they touched: an element outside the view must come out equal, in the same order
/// among its kind, and the module's own fields (frontmatter, the walker's name, the provenance
/// record, MCP servers, concurrency) must not change at all. New elements are allowed; a new
/// edge joins view instructions, their neighbours and new instructions only.
pub fn outside(view: &View, before: &Program, after: &Program) -> Vec<String> {
    let mut out = Vec::new();
    let new_ids: BTreeSet<&str> = after
        .instructions()
        .iter()
        .map(|n| n.id.as_str())
        .filter(|id| before.instruction(id).is_none())
        .collect();
    // Instructions.
    same_outside(
        "instruction",
        before.instructions().iter().map(|n| (n.id.as_str(), n)),
        after.instructions().iter().map(|n| (n.id.as_str(), n)),
        &view.instructions,
        &mut out,
    );
    if let (Some(a), Some(b)) = (before.instructions().first(), after.instructions().first())
        && a.id != b.id
        && !view.instructions.contains(&a.id)
    {
        out.push(format!("instruction:{} (the entry)", a.id));
    }
    same_outside(
        "carry",
        before.carries().iter().map(|c| (c.name.as_str(), c)),
        after.carries().iter().map(|c| (c.name.as_str(), c)),
        &view.carries,
        &mut out,
    );
    same_outside(
        "tool",
        before.tool_list().iter().map(|t| (t.name.as_str(), t)),
        after.tool_list().iter().map(|t| (t.name.as_str(), t)),
        &view.tools,
        &mut out,
    );
    same_outside(
        "knowledge",
        before
            .knowledge
            .iter()
            .flatten()
            .map(|k| (k.name.as_str(), k)),
        after
            .knowledge
            .iter()
            .flatten()
            .map(|k| (k.name.as_str(), k)),
        &view.knowledge,
        &mut out,
    );
    same_outside(
        "type",
        before.types.iter().flatten().map(|t| (t.name.as_str(), t)),
        after.types.iter().flatten().map(|t| (t.name.as_str(), t)),
        &view.types,
        &mut out,
    );
    // Edges: those outside the view unchanged and in order; new ones anchored in the view.
    let outside_edges = |p: &Program| -> Vec<ais_core::Edge> {
        p.edge_list()
            .iter()
            .filter(|e| !view.holds_edge(&e.from, &e.to) && !touches_new(e, &new_ids))
            .cloned()
            .collect()
    };
    let (eb, ea) = (outside_edges(before), outside_edges(after));
    if eb != ea {
        let shown: BTreeSet<String> = eb
            .iter()
            .filter(|e| !ea.contains(e))
            .chain(ea.iter().filter(|e| !eb.contains(e)))
            .map(|e| format!("edge:{}->{}", e.from, e.to))
            .collect();
        if shown.is_empty() {
            out.push("the order of the edges outside the view".into());
        }
        out.extend(shown);
    }
    for e in after.edge_list() {
        let added = !before.edge_list().contains(e);
        let anchored = added || view.holds_edge(&e.from, &e.to) || touches_new(e, &new_ids);
        let reach = |end: &str| {
            view.instructions.contains(end)
                || view.neighbours.contains(end)
                || new_ids.contains(end)
                || before.instruction(end).is_none()
        };
        if anchored && !(reach(&e.from) && reach(&e.to)) {
            out.push(format!("edge:{}->{}", e.from, e.to));
        }
    }
    // The module itself.
    let module = |p: &Program| {
        let mut m = p.clone();
        m.nodes = None;
        m.edges = None;
        m.tools = None;
        m.knowledge = None;
        m.types = None;
        if let Some(w) = &mut m.walker {
            w.carries = None;
        }
        m
    };
    if module(before) != module(after) {
        out.push("program (frontmatter, walker, provenance record, servers)".into());
    }
    out.sort();
    out.dedup();
    out
}

fn touches_new(e: &ais_core::Edge, new_ids: &BTreeSet<&str>) -> bool {
    new_ids.contains(e.from.as_str()) || new_ids.contains(e.to.as_str())
}

/// Elements of one kind outside `view`: each must be in `after` equal to `before`, and their
/// order among themselves kept.
fn same_outside<'a, T: PartialEq + 'a>(
    kind: &str,
    before: impl Iterator<Item = (&'a str, &'a T)>,
    after: impl Iterator<Item = (&'a str, &'a T)>,
    view: &BTreeSet<String>,
    out: &mut Vec<String>,
) {
    let b: Vec<(&str, &T)> = before.filter(|(n, _)| !view.contains(*n)).collect();
    let a: Vec<(&str, &T)> = after.collect();
    let mut order = Vec::new();
    for (name, old) in &b {
        match a.iter().position(|(n, _)| n == name) {
            None => out.push(format!("{kind}:{name} (deleted)")),
            Some(k) => {
                if a[k].1 != *old {
                    out.push(format!("{kind}:{name}"));
                }
                order.push(k);
            }
        }
    }
    if order.windows(2).any(|w| w[0] > w[1]) {
        out.push(format!("the order of the {kind}s outside the view"));
    }
}

/// What a repair must keep of the obligations (spec §9.5): the record (every obligation's id,
/// kind, force, bearer and quote), which obligations are realized, which are re-modalized, and
/// the obligation ids the program traces to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closure {
    /// The record's obligations, by id: kind, force, bearer and quote as spelled.
    pub record: BTreeMap<String, [String; 4]>,
    /// The obligations whose required realization is there.
    pub realized: BTreeSet<String>,
    /// The obligations realized with another force than the source's.
    pub remodalized: BTreeSet<String>,
    /// The obligation ids named by any `traces_to`.
    pub traced: BTreeSet<String>,
}

impl Closure {
    /// The closure of `program` (the audit run on it with `source` and `config`).
    pub fn of(program: &Program, source: Option<&str>, config: &ais_core::AuditConfig) -> Closure {
        let mut record = BTreeMap::new();
        if let Some(r) = &program.faithfulness {
            for o in r.obligation_list() {
                let s = |x: Option<&str>| x.unwrap_or("").to_owned();
                record.insert(
                    o.id.clone(),
                    [
                        s(o.kind.as_ref().map(|k| k.as_str())),
                        s(o.force.as_ref().map(|k| k.as_str())),
                        s(o.bearer.as_ref().map(|k| k.as_str())),
                        s(o.quote.as_deref()),
                    ],
                );
            }
        }
        let audit = ais_core::audit(program, &ais_core::SourceMap::default(), source, config);
        let realized = audit
            .obligations
            .iter()
            .filter(|o| o.realized)
            .map(|o| o.id.clone())
            .collect();
        let remodalized = audit
            .obligations
            .iter()
            .filter(|o| o.remodalized)
            .map(|o| o.id.clone())
            .collect();
        let mut traced = BTreeSet::new();
        let mut add = |t: &Option<Vec<String>>| traced.extend(t.iter().flatten().cloned());
        program
            .instructions()
            .iter()
            .for_each(|n| add(&n.traces_to));
        program.edge_list().iter().for_each(|e| add(&e.traces_to));
        program.carries().iter().for_each(|c| add(&c.traces_to));
        program.tool_list().iter().for_each(|t| add(&t.traces_to));
        program
            .knowledge
            .iter()
            .flatten()
            .for_each(|k| add(&k.traces_to));
        Closure {
            record,
            realized,
            remodalized,
            traced,
        }
    }

    /// How `after` breaks this closure, in words (empty when it keeps it): the record changed,
    /// an obligation realized before is dropped, one is re-modalized that was not, or the
    /// program traces to an obligation the record does not have and it did not trace before.
    pub fn broken_by(&self, after: &Closure) -> Vec<String> {
        let mut why = Vec::new();
        for (id, fields) in &self.record {
            match after.record.get(id) {
                None => why.push(format!("removes obligation `{id}` from the record")),
                Some(f) if f != fields => why.push(format!(
                    "changes obligation `{id}` (kind, force, bearer or quote)"
                )),
                Some(_) => {}
            }
        }
        for id in after
            .record
            .keys()
            .filter(|id| !self.record.contains_key(*id))
        {
            why.push(format!("adds obligation `{id}` to the record"));
        }
        for id in self.realized.difference(&after.realized) {
            why.push(format!("drops obligation `{id}` (it was realized)"));
        }
        for id in after.remodalized.difference(&self.remodalized) {
            why.push(format!("re-modalizes obligation `{id}`"));
        }
        for id in after.traced.difference(&self.traced) {
            if !after.record.contains_key(id) {
                why.push(format!(
                    "adds obligation `{id}` (traced to, and not in the record)"
                ));
            }
        }
        why
    }
}

//! The document as scopes (SPEC.md §8, §16.2): the graph and every fragment (loop and map
//! bodies, inline subgraphs, named `subgraphs`), each with its nodes, its effective edge set
//! (§8.3), the names its expressions may read, and the external documents it references.

use crate::codes::Sink;
use ais_core::agir::pointer_token;
use indexmap::IndexMap;
use serde_json::{Map, Value as Json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One edge of an effective edge set.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Edge {
    pub from: String,
    pub to: String,
    /// `sequence`, `conditional` or `on_failure`.
    pub kind: String,
    pub when: Option<String>,
    /// Where it is written: `/edges/3`, or `/nodes/b/depends_on/0` for a `depends_on` entry.
    pub pointer: String,
    /// Written in `edges` (not a `depends_on` entry).
    pub explicit: bool,
}

/// A scope: the graph, or a fragment.
pub(crate) struct Scope<'a> {
    /// The pointer of the object holding `entrypoints`, `nodes`, `edges`.
    pub pointer: String,
    pub value: &'a Map<String, Json>,
    pub root: bool,
    /// Names a map body binds (`as`, `index_as`) when this fragment is a map's body.
    pub map_vars: Vec<String>,
    /// True when this fragment is (or may be) a loop body.
    pub in_loop: bool,
    /// The `params` visible: the fragment's own, then the graph's.
    pub params: HashSet<String>,
    /// The effective edge set.
    pub edges: Vec<Edge>,
}

impl<'a> Scope<'a> {
    /// The scope's nodes, by id.
    pub fn nodes(&self) -> impl Iterator<Item = (&'a String, &'a Map<String, Json>)> + use<'a> {
        self.value
            .get("nodes")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| v.as_object().map(|o| (k, o)))
    }

    /// A node of this scope.
    pub fn node(&self, id: &str) -> Option<&'a Map<String, Json>> {
        self.value.get("nodes")?.get(id)?.as_object()
    }

    /// The pointer of a node.
    pub fn node_ptr(&self, id: &str) -> String {
        format!("{}/nodes/{}", self.pointer, pointer_token(id))
    }

    /// Every node that is guaranteed to have terminated before `id` starts: its transitive
    /// predecessors in the effective edge set.
    pub fn ancestors(&self, id: &str) -> HashSet<String> {
        let mut seen = HashSet::new();
        let mut todo = vec![id.to_owned()];
        while let Some(n) = todo.pop() {
            for e in self.edges.iter().filter(|e| e.to == n) {
                if seen.insert(e.from.clone()) {
                    todo.push(e.from.clone());
                }
            }
        }
        seen
    }

    /// A node's block after `defaults` merging (§6.3): per block, shallow, the node's keys over
    /// the defaults'.
    pub fn effective(&self, node: &Map<String, Json>, block: &str) -> Option<Json> {
        let default = self.value.get("defaults").and_then(|d| d.get(block));
        match (default, node.get(block)) {
            (Some(Json::Object(d)), Some(Json::Object(n))) => {
                let mut m = d.clone();
                m.extend(n.iter().map(|(k, v)| (k.clone(), v.clone())));
                Some(Json::Object(m))
            }
            (_, Some(v)) => Some(v.clone()),
            (Some(d), None) => Some(d.clone()),
            (None, None) => None,
        }
    }
}

/// An external document a `subgraph.ref` names.
pub(crate) struct External {
    /// The pointer of the `ref` object.
    pub pointer: String,
    pub uri: String,
    /// Where it resolved to, for a local reference.
    pub path: Option<PathBuf>,
    /// Its data, once read.
    pub data: Option<Json>,
    /// Why it could not be used.
    pub problem: Option<(String, String, String)>,
    /// The referenced document's text, once read.
    pub text: Option<String>,
}

/// Whether `rel`, relative to `base`, stays beneath `base`: no absolute path, no `..`, and no
/// symbolic link on the way that leads out (checked on the resolved paths when they exist).
fn inside(base: &Path, rel: &Path) -> bool {
    use std::path::Component;
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    if !rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return false;
    }
    match (
        std::fs::canonicalize(base),
        std::fs::canonicalize(base.join(rel)),
    ) {
        (Ok(b), Ok(p)) => p.starts_with(b),
        // A missing document is reported as such when it is read.
        _ => true,
    }
}

/// The whole document as scopes.
pub(crate) struct Model<'a> {
    pub doc: &'a Json,
    pub scopes: Vec<Scope<'a>>,
    /// The named fragments (`graph.subgraphs`).
    pub fragments: IndexMap<String, &'a Map<String, Json>>,
    pub externals: Vec<External>,
    base: Option<PathBuf>,
    refs: crate::Refs,
}

fn str_list(v: Option<&Json>) -> Vec<String> {
    v.and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn keys(v: Option<&Json>) -> HashSet<String> {
    v.and_then(Json::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// True for a URI with a scheme (`https://…`), which is not a local path.
pub(crate) fn is_remote(uri: &str) -> bool {
    uri.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme != "file"
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

impl<'a> Model<'a> {
    /// Builds the scopes of `doc`; `base` is where local references resolve.
    pub fn new(doc: &'a Json, base: Option<&Path>, refs: crate::Refs) -> Self {
        let graph_params = keys(doc.get("params"));
        let mut model = Model {
            doc,
            scopes: Vec::new(),
            fragments: doc
                .get("subgraphs")
                .and_then(Json::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_object().map(|o| (k.clone(), o)))
                        .collect()
                })
                .unwrap_or_default(),
            externals: Vec::new(),
            base: base.map(Path::to_path_buf),
            refs,
        };
        let Some(root) = doc.as_object() else {
            return model;
        };
        // Which named fragments a map or loop uses, to know what their bodies may read.
        let mut uses: HashMap<String, (Vec<String>, bool)> = HashMap::new();
        let mut todo = vec![(String::new(), root, true, Vec::new(), false)];
        let fragments: Vec<(String, &'a Map<String, Json>)> = model
            .fragments
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        let mut i = 0;
        while let Some((pointer, value, is_root, map_vars, in_loop)) = todo.pop() {
            let mut params = keys(value.get("params"));
            params.extend(graph_params.iter().cloned());
            let scope = Scope {
                edges: effective_edges(&pointer, value),
                pointer,
                value,
                root: is_root,
                map_vars,
                in_loop,
                params,
            };
            for (id, node) in scope.nodes() {
                let np = scope.node_ptr(id);
                for (block, vars, looped) in [
                    ("loop", Vec::new(), true),
                    ("map", map_names(node.get("map")), false),
                    ("subgraph", Vec::new(), false),
                ] {
                    let Some(b) = node.get(block).and_then(Json::as_object) else {
                        continue;
                    };
                    let field = if block == "subgraph" {
                        "inline"
                    } else {
                        "body"
                    };
                    if let Some(body) = b.get(field).and_then(Json::as_object) {
                        todo.push((
                            format!("{np}/{block}/{field}"),
                            body,
                            false,
                            vars.clone(),
                            looped,
                        ));
                    }
                    if let Some(name) = b.get("use").and_then(Json::as_str) {
                        let u = uses.entry(name.to_owned()).or_default();
                        u.0.extend(vars);
                        u.1 |= looped;
                    }
                    if let Some(r) = b.get("ref").and_then(Json::as_object) {
                        model
                            .externals
                            .push(model.open_ref(&format!("{np}/subgraph/ref"), r));
                    }
                }
            }
            model.scopes.push(scope);
            // Named fragments, once the graph's own scopes are known (nested uses included).
            if todo.is_empty() && i < fragments.len() {
                for (name, frag) in &fragments[i..] {
                    let (vars, looped) = uses.get(name).cloned().unwrap_or_default();
                    todo.push((
                        format!("/subgraphs/{}", pointer_token(name)),
                        frag,
                        false,
                        vars,
                        looped,
                    ));
                }
                i = fragments.len();
            }
        }
        model
    }

    fn open_ref(&self, pointer: &str, r: &Map<String, Json>) -> External {
        let uri = r
            .get("uri")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut ext = External {
            pointer: pointer.to_owned(),
            uri: uri.clone(),
            path: None,
            data: None,
            text: None,
            problem: None,
        };
        if is_remote(&uri) || uri.is_empty() {
            return ext;
        }
        let Some(base) = &self.base else {
            return ext;
        };
        let rel = uri.strip_prefix("file://").unwrap_or(&uri);
        let path = base.join(rel);
        if self.refs == crate::Refs::Inside && !inside(base, Path::new(rel)) {
            ext.problem = Some((
                "AG132".into(),
                format!(
                    "the referenced document `{uri}` lies outside this document's directory; \
                     it is not opened"
                ),
                "move the document beside this one (a path relative to its directory, no `..`), \
                 or check with `--allow-outside-refs` if you trust this graph"
                    .into(),
            ));
            return ext;
        }
        match crate::read_document(&path) {
            Ok(text) => {
                let loaded = crate::load_text(&text);
                ext.data = loaded.data.map(|d| d.value);
                if ext.data.is_none() {
                    ext.problem = Some((
                        "AG132".into(),
                        format!("the referenced document `{uri}` is not readable YAML or JSON"),
                        format!("run `ais check {}` to see why", path.display()),
                    ));
                }
                ext.text = Some(text);
            }
            Err(e) => {
                ext.problem = Some((
                    "AG132".into(),
                    format!(
                        "the referenced document `{uri}` cannot be read ({e}); it resolves to {}",
                        path.display()
                    ),
                    "correct `ref.uri` (a path is relative to this document's directory)".into(),
                ));
            }
        }
        ext.path = Some(path);
        ext
    }

    /// The output names a node declares (SPEC.md §7): `outputs`, `decision` on decision and gate
    /// nodes, `gate.collect`, `loop.collect`, `map.collect`, `subgraph.outputs_from` — or, without
    /// `outputs_from`, the child's own `outputs`.
    pub fn declared_outputs(&self, scope: &Scope, node: &Map<String, Json>) -> HashSet<String> {
        let mut out = keys(node.get("outputs"));
        let ty = node.get("type").and_then(Json::as_str).unwrap_or("task");
        if matches!(ty, "decision" | "gate") {
            out.insert("decision".into());
        }
        out.extend(keys(node.pointer("/gate/collect")));
        out.extend(keys(node.pointer("/loop/collect")));
        out.extend(keys(node.pointer("/map/collect")));
        if let Some(sub) = node.get("subgraph") {
            if sub.get("outputs_from").is_some() {
                out.extend(keys(sub.get("outputs_from")));
            } else if let Some(inline) = sub.get("inline") {
                out.extend(keys(inline.get("outputs")));
            } else if let Some(name) = sub.get("use").and_then(Json::as_str) {
                out.extend(keys(
                    self.fragments.get(name).and_then(|f| f.get("outputs")),
                ));
            } else {
                let ptr = format!("{}/subgraph/ref", node_pointer(scope, node));
                match self.externals.iter().find(|e| e.pointer == ptr) {
                    Some(External { data: Some(d), .. }) => out.extend(keys(d.get("outputs"))),
                    // Not opened: any name may come from it.
                    _ => {
                        out.insert("*".into());
                    }
                }
            }
        }
        out
    }

    /// Reports what the external references come to, checking each local document in turn.
    pub fn external(&self, sink: &mut Sink, chain: &mut Vec<PathBuf>) {
        for ext in &self.externals {
            if let Some((code, msg, repair)) = &ext.problem {
                sink.push(
                    code,
                    &format!("{}/uri", ext.pointer),
                    msg.clone(),
                    repair.clone(),
                );
                continue;
            }
            let (Some(path), Some(data)) = (&ext.path, &ext.data) else {
                continue;
            };
            let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            if chain.contains(&canon) {
                sink.push("AG131", &format!("{}/uri", ext.pointer),
                    format!("`{}` references a document that references this one: the subgraph reference is recursive", ext.uri),
                    "break the cycle: a graph must not reference itself, directly or through other documents");
                continue;
            }
            if let Some(expected) = self
                .doc
                .pointer(&format!("{}/expected_id", ext.pointer))
                .and_then(Json::as_str)
            {
                let id = data.get("id").and_then(Json::as_str).unwrap_or_default();
                if id != expected {
                    sink.push(
                        "RT052",
                        &format!("{}/expected_id", ext.pointer),
                        format!(
                            "`expected_id` is `{expected}`, but `{}` has id `{id}`",
                            ext.uri
                        ),
                        format!("set `expected_id: {id}`, or point `uri` at the intended document"),
                    );
                }
            }
            let Some(text) = &ext.text else {
                continue;
            };
            chain.push(canon);
            let child =
                crate::check_loaded(&crate::load_text(text), path.parent(), chain, self.refs);
            chain.pop();
            let errors: Vec<_> = child
                .findings
                .iter()
                .filter(|f| f.severity >= ais_core::Severity::Error)
                .collect();
            if let Some(first) = errors.first() {
                // Where and which rule only: a finding about this document never quotes the
                // content of another (an untrusted graph could point at a secret).
                let at = first
                    .pos
                    .map(|p| format!(" at line {}, column {}", p.line, p.column))
                    .unwrap_or_default();
                sink.push(
                    first.id.as_str(),
                    &format!("{}/uri", ext.pointer),
                    format!(
                        "the referenced document `{}` has {} error(s); the first is {}{at}",
                        ext.uri,
                        errors.len(),
                        first.id.as_str()
                    ),
                    format!("run `ais check {}` and fix it", path.display()),
                );
            }
        }
    }
}

/// The pointer of `node` in `scope`, found by identity.
pub(crate) fn node_pointer(scope: &Scope, node: &Map<String, Json>) -> String {
    scope
        .nodes()
        .find(|(_, n)| std::ptr::eq(*n, node))
        .map(|(id, _)| scope.node_ptr(id))
        .unwrap_or_else(|| scope.pointer.clone())
}

fn map_names(map: Option<&Json>) -> Vec<String> {
    let Some(m) = map else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(a) = m.get("as").and_then(Json::as_str) {
        out.push(a.to_owned());
    }
    out.push(
        m.get("index_as")
            .and_then(Json::as_str)
            .unwrap_or("index")
            .to_owned(),
    );
    out
}

/// The effective edge set of a scope (SPEC.md §8.3): explicit edges and `depends_on`
/// entries, deduplicated on `(from, to, kind, when)`.
fn effective_edges(pointer: &str, scope: &Map<String, Json>) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    let mut push = |e: Edge| {
        if !out
            .iter()
            .any(|o| o.from == e.from && o.to == e.to && o.kind == e.kind && o.when == e.when)
        {
            out.push(e);
        }
    };
    for (i, e) in scope
        .get("edges")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let (Some(from), Some(to)) = (
            e.get("from").and_then(Json::as_str),
            e.get("to").and_then(Json::as_str),
        ) else {
            continue;
        };
        push(Edge {
            from: from.into(),
            to: to.into(),
            kind: e
                .get("kind")
                .and_then(Json::as_str)
                .unwrap_or("sequence")
                .into(),
            when: e.get("when").and_then(Json::as_str).map(str::to_owned),
            pointer: format!("{pointer}/edges/{i}"),
            explicit: true,
        });
    }
    for (id, node) in scope
        .get("nodes")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        for (i, d) in str_list(node.get("depends_on")).into_iter().enumerate() {
            push(Edge {
                from: d,
                to: id.clone(),
                kind: "sequence".into(),
                when: None,
                pointer: format!("{pointer}/nodes/{}/depends_on/{i}", pointer_token(id)),
                explicit: false,
            });
        }
    }
    out
}

/// `pointer` (RFC 6901) on a JSON object, as `serde_json::Value::pointer` is on a value.
pub(crate) trait Pointer {
    /// The value at `pointer` below this object.
    fn pointer(&self, pointer: &str) -> Option<&Json>;
}

impl Pointer for Map<String, Json> {
    fn pointer(&self, pointer: &str) -> Option<&Json> {
        let p = pointer.strip_prefix('/')?;
        let (first, rest) = p.split_once('/').map_or((p, None), |(a, b)| (a, Some(b)));
        let v = self.get(&first.replace("~1", "/").replace("~0", "~"))?;
        match rest {
            None => Some(v),
            Some(r) => v.pointer(&format!("/{r}")),
        }
    }
}

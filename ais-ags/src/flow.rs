//! Layer 3 (SPEC.md §18.1, `AG2xx`): every expression and template parsed, every name it reads
//! resolved in its scope, every node output it reads ordered before it — and the advisory
//! `AG9xx` rules.

use crate::agx::{self, Reference};
use crate::codes::Sink;
use crate::scope::{Model, Pointer, Scope, is_remote};
use ais_core::agir::pointer_token;
use serde_json::{Map, Value as Json};
use std::collections::HashSet;

/// Where an expression is evaluated.
#[derive(Clone, Copy)]
enum At<'s> {
    /// Inside node `id`; `after` when its own outputs exist (criteria, later checkpoints).
    Node { id: &'s str, after: bool },
    /// On an edge's guard, after `from` terminated.
    Edge { from: &'s str },
    /// In the scope's final state: fragment or graph outputs, success, collect, condition.
    Final { outputs: bool },
}

struct Site<'s> {
    pointer: String,
    text: String,
    template: bool,
    at: At<'s>,
}

/// The blocks (`…/loop`, `…/map`, `…/subgraph`) whose body is `scope`: the one owning an inline
/// body, or every block that `use`s a named fragment.
fn owners(model: &Model, scope: &Scope) -> Vec<String> {
    for (block, field) in [("loop", "body"), ("map", "body"), ("subgraph", "inline")] {
        if let Some(owner) = scope.pointer.strip_suffix(&format!("/{block}/{field}")) {
            return vec![format!("{owner}/{block}")];
        }
    }
    let Some(name) = scope.pointer.strip_prefix("/subgraphs/") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in &model.scopes {
        for (id, node) in s.nodes() {
            for block in ["loop", "map", "subgraph"] {
                if node
                    .pointer(&format!("/{block}/use"))
                    .and_then(Json::as_str)
                    == Some(name)
                {
                    out.push(format!("{}/{block}", s.node_ptr(id)));
                }
            }
        }
    }
    out
}

/// Collects the expression sites of one scope.
fn sites<'s>(model: &Model, scope: &'s Scope) -> Vec<Site<'s>> {
    let mut out = Vec::new();
    // What the owning loop, map or subgraph node evaluates in this body's final scope.
    for bp in owners(model, scope) {
        let Some(block) = model.doc.pointer(&bp) else {
            continue;
        };
        if let Some(Json::String(text)) = block.get("condition") {
            out.push(Site {
                pointer: format!("{bp}/condition"),
                text: text.clone(),
                template: false,
                at: At::Final { outputs: false },
            });
        }
        for (field, outputs) in [("collect", false), ("outputs_from", true)] {
            for (k, v) in obj(block.get(field)) {
                if let Json::String(text) = v {
                    out.push(Site {
                        pointer: format!("{bp}/{field}/{}", pointer_token(k)),
                        text: text.clone(),
                        template: false,
                        at: At::Final { outputs },
                    });
                }
            }
        }
    }
    let mut add = |pointer: String, v: Option<&Json>, template: bool, at: At<'s>| {
        if let Some(Json::String(text)) = v {
            out.push(Site {
                pointer,
                text: text.clone(),
                template,
                at,
            });
        }
    };
    let sp = &scope.pointer;
    for (i, e) in scope
        .value
        .get("edges")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(from) = scope
            .edges
            .iter()
            .find(|x| x.pointer == format!("{sp}/edges/{i}"))
            .map(|x| x.from.as_str())
        {
            add(
                format!("{sp}/edges/{i}/when"),
                e.get("when"),
                false,
                At::Edge { from },
            );
        }
    }
    for (name, o) in obj(scope.value.get("outputs")) {
        add(
            format!("{sp}/outputs/{}/from", pointer_token(name)),
            o.get("from"),
            false,
            At::Final { outputs: false },
        );
    }
    criteria(
        &mut add,
        &format!("{sp}/success"),
        scope.value.get("success"),
        At::Final { outputs: true },
    );
    for (id, node) in scope.nodes() {
        let np = scope.node_ptr(id);
        let before = At::Node { id, after: false };
        let after = At::Node { id, after: true };
        add(format!("{np}/when"), node.get("when"), false, before);
        add(
            format!("{np}/instructions"),
            node.get("instructions"),
            true,
            before,
        );
        for (name, input) in obj(node.get("inputs")) {
            let ip = format!("{np}/inputs/{}", pointer_token(name));
            add(format!("{ip}/from"), input.get("from"), false, before);
            add(
                format!("{ip}/template"),
                input.get("template"),
                true,
                before,
            );
        }
        criteria(
            &mut add,
            &format!("{np}/success"),
            node.get("success"),
            after,
        );
        for (i, h) in node
            .get("human")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let early = matches!(
                h.get("at").and_then(Json::as_str),
                Some("before_start" | "before_side_effects")
            );
            let at = if early { before } else { after };
            add(format!("{np}/human/{i}/when"), h.get("when"), false, at);
            add(format!("{np}/human/{i}/prompt"), h.get("prompt"), true, at);
        }
        for (i, f) in node
            .pointer("/failure/fallback")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            add(
                format!("{np}/failure/fallback/{i}/when"),
                f.get("when"),
                false,
                after,
            );
        }
        add(
            format!("{np}/failure/escalation/message"),
            node.pointer("/failure/escalation/message"),
            true,
            after,
        );
        add(
            format!("{np}/gate/prompt"),
            node.pointer("/gate/prompt"),
            true,
            before,
        );
        for (i, p) in node
            .pointer("/gate/present")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            add(format!("{np}/gate/present/{i}"), Some(p), false, before);
        }
        add(
            format!("{np}/decision/question"),
            node.pointer("/decision/question"),
            true,
            before,
        );
        for (i, b) in node
            .pointer("/decision/branches")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            add(
                format!("{np}/decision/branches/{i}/when"),
                b.get("when"),
                false,
                before,
            );
        }
        add(
            format!("{np}/map/over"),
            node.pointer("/map/over"),
            false,
            before,
        );
        for (k, v) in obj(node.pointer("/subgraph/params")) {
            add(
                format!("{np}/subgraph/params/{}", pointer_token(k)),
                Some(v),
                false,
                before,
            );
        }
    }
    out
}

fn criteria<'s>(
    add: &mut impl FnMut(String, Option<&Json>, bool, At<'s>),
    sp: &str,
    success: Option<&Json>,
    at: At<'s>,
) {
    for (i, c) in success
        .and_then(|s| s.get("criteria"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let cp = format!("{sp}/criteria/{i}");
        add(format!("{cp}/expr"), c.get("expr"), false, at);
        add(format!("{cp}/target"), c.get("target"), false, at);
        add(format!("{cp}/rubric"), c.get("rubric"), true, at);
        add(format!("{cp}/prompt"), c.get("prompt"), true, at);
        for (j, e) in c
            .get("inputs")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            add(format!("{cp}/inputs/{j}"), Some(e), false, at);
        }
    }
}

fn obj(v: Option<&Json>) -> impl Iterator<Item = (&String, &Json)> {
    v.and_then(Json::as_object).into_iter().flatten()
}

/// The parsed expressions of a site, each with its character offset in the field's text;
/// syntax errors reported.
fn parse_site(site: &Site, sink: &mut Sink) -> Vec<(agx::Expr, usize)> {
    if !site.template {
        if site.text.contains("${{") {
            sink.push("AG211", &site.pointer,
                "`${{ }}` interpolation in expression position: the whole field is already an expression",
                format!("write the expression without the wrapper: `{}`", site.text.replace("${{", "").replace("}}", "").trim()));
            return Vec::new();
        }
        return match agx::parse(&site.text) {
            Ok(e) => vec![(e, 0)],
            Err(e) => {
                syntax(sink, site, &e, 0);
                Vec::new()
            }
        };
    }
    let parts = match agx::template_parts(&site.text) {
        Ok(p) => p,
        Err(at) => {
            let pos = sink.inner_pos(&site.pointer, &site.text, at);
            sink.push_at(
                "AG204",
                pos,
                "this `${{` interpolation is never closed",
                "close it with `}}`",
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (text, at) in parts {
        match agx::parse(&text) {
            Ok(e) => out.push((e, at)),
            Err(e) => syntax(sink, site, &e, at),
        }
    }
    out
}

fn syntax(sink: &mut Sink, site: &Site, e: &agx::SyntaxError, base: usize) {
    let pos = sink.inner_pos(&site.pointer, &site.text, base + e.at);
    sink.push_at("AG204", pos, format!("invalid expression: {}", e.message),
        "correct the expression (grammar and functions: expressions.md §3, §5; strings are quoted, and there is no truthiness)");
}

/// Every expression rule over every scope.
pub(crate) fn check(model: &Model, sink: &mut Sink) {
    for scope in &model.scopes {
        for site in sites(model, scope) {
            for (expr, base) in parse_site(&site, sink) {
                for r in agx::references(&expr) {
                    resolve(model, scope, &site, &r, base, sink);
                }
            }
        }
    }
}

fn names(v: Option<&Json>) -> HashSet<String> {
    match v {
        Some(Json::Object(m)) => m.keys().cloned().collect(),
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(|x| {
                x.get("name")
                    .or(Some(x))
                    .and_then(Json::as_str)
                    .map(str::to_owned)
            })
            .collect(),
        _ => HashSet::new(),
    }
}

fn resolve(model: &Model, scope: &Scope, site: &Site, r: &Reference, base: usize, sink: &mut Sink) {
    let pos = sink.inner_pos(&site.pointer, &site.text, base + r.at);
    let seg = |i: usize| r.path.get(i).map(String::as_str);
    let shown = r.path.join(".");
    let mut fail = |code: &str, msg: String, repair: String| sink.push_at(code, pos, msg, repair);
    let declared = |set: HashSet<String>, ns: &str, fail: &mut dyn FnMut(&str, String, String)| {
        if let Some(name) = seg(1)
            && !set.contains(name)
        {
            let known: Vec<&str> = set.iter().map(String::as_str).collect();
            let hint = ais_core::did_you_mean(name, known.iter().copied());
            fail(
                "AG203",
                format!("`{shown}` reads `{ns}.{name}`, which is not declared"),
                hint.first().map_or_else(
                    || format!("declare `{name}` under `{ns}`, or read a declared name"),
                    |h| format!("did you mean `{ns}.{h}`?"),
                ),
            );
        }
    };
    match seg(0).unwrap_or_default() {
        "secrets" => fail("AG205", format!("`{shown}` reads a secret; secrets are unreachable from expressions"),
            "list the secret in the node's `requirements.secrets`, which injects it into the node's environment".into()),
        "graph" => {}
        "params" => declared(scope.params.clone(), "params", &mut fail),
        "context" => declared(names(model.doc.get("context")), "context", &mut fail),
        "attachments" => declared(names(model.doc.get("attachments")), "attachments", &mut fail),
        "env" => {
            let At::Node { id, .. } = site.at else {
                return fail("AG203", format!("`{shown}` reads `env` outside a node"), "read `env` only inside a node that lists the name in `requirements.environment`".into());
            };
            let env = scope.node(id).and_then(|n| scope.effective(n, "requirements")).and_then(|r| r.get("environment").cloned());
            declared(names(env.as_ref()), "env", &mut fail);
        }
        "loop" if scope.in_loop => {}
        "outputs" if matches!(site.at, At::Final { outputs: true }) => {}
        "self" => self_ref(model, scope, site, &r.path[1..], &shown, &mut fail),
        "nodes" if seg(1) == Some("self") => self_ref(model, scope, site, &r.path[2..], &shown, &mut fail),
        "nodes" => node_ref(model, scope, site, &r.path, &shown, &mut fail),
        root if scope.map_vars.iter().any(|v| v == root) => {}
        root => fail("AG203", format!("`{shown}` reads `{root}`, which is no namespace visible here"),
            "read one of `graph`, `params`, `context`, `attachments`, `nodes`, `self`, `env` (and `loop`, `outputs` or the map's names where they are in scope)".into()),
    }
}

fn self_ref(
    model: &Model,
    scope: &Scope,
    site: &Site,
    rest: &[String],
    shown: &str,
    fail: &mut dyn FnMut(&str, String, String),
) {
    let At::Node { id, after } = site.at else {
        return fail(
            "AG203",
            format!("`{shown}` reads `self` outside a node"),
            "use `nodes.<id>` here".into(),
        );
    };
    let Some(node) = scope.node(id) else { return };
    match (rest.first().map(String::as_str), rest.get(1)) {
        (Some("outputs"), Some(name)) => {
            if !after {
                fail("AG201", format!("`{shown}` reads node `{id}`'s own output before the node has produced it"),
                    "read own outputs only in `success` criteria and in `human` checkpoints at `after_outputs` or later".into());
            } else if !model.declared_outputs(scope, node).contains(name.as_str()) {
                fail(
                    "AG206",
                    format!(
                        "`{shown}` reads the output `{name}`, which node `{id}` does not declare"
                    ),
                    format!("declare `{name}` under `outputs` of `{id}`"),
                );
            }
        }
        (Some("inputs"), Some(name))
            if node
                .get("inputs")
                .and_then(|i| i.get(name.as_str()))
                .is_none() =>
        {
            fail(
                "AG206",
                format!("`{shown}` reads the input `{name}`, which node `{id}` does not declare"),
                format!("declare `{name}` under `inputs` of `{id}`"),
            );
        }
        _ => {}
    }
}

fn node_ref(
    model: &Model,
    scope: &Scope,
    site: &Site,
    path: &[String],
    shown: &str,
    fail: &mut dyn FnMut(&str, String, String),
) {
    let Some(x) = path.get(1) else { return };
    let Some(target) = scope.node(x) else {
        let elsewhere = model.scopes.iter().any(|s| s.node(x).is_some());
        if !scope.root && elsewhere {
            return fail("AG202", format!("`{shown}` reads node `{x}` outside this fragment; fragments are sealed"),
                "pass the value in through the fragment's `params` (bound by the loop, map or subgraph node)".into());
        }
        let known: Vec<&str> = scope.nodes().map(|(k, _)| k.as_str()).collect();
        let hint = ais_core::did_you_mean(x, known.iter().copied());
        return fail(
            "AG201",
            format!("`{shown}` reads node `{x}`, which is not a node of this scope"),
            hint.first().map_or_else(
                || "read a node of this scope that runs before this one".to_owned(),
                |h| match path.get(2..4) {
                    Some([o, name]) if o == "outputs" => match crate::agx::output_reference(h, name) {
                        Ok(r) => format!("did you mean `{r}`?"),
                        Err(rename) => format!("did you mean node `{h}`? {rename}"),
                    },
                    _ if crate::agx::is_ident(h) => format!("did you mean `nodes.{h}`?"),
                    _ => format!("did you mean node `{h}`? No expression can name it (AGX names are identifiers): rename it with `_` for `-`"),
                },
            ),
        );
    };
    let ordered = match site.at {
        At::Node { id, after } => (after && x == id) || scope.ancestors(id).contains(x.as_str()),
        At::Edge { from } => x == from || scope.ancestors(from).contains(x.as_str()),
        At::Final { .. } => true,
    };
    if !ordered {
        let reader = match site.at {
            At::Node { id, .. } => format!("node `{id}`"),
            At::Edge { from } => format!("this edge (from `{from}`)"),
            At::Final { .. } => "this".into(),
        };
        return fail(
            "AG201",
            format!(
                "`{shown}` reads node `{x}`, which is not guaranteed to have run before {reader}"
            ),
            format!("add `{x}` to `depends_on` (or an edge from `{x}`), so it runs first"),
        );
    }
    if path.get(2).map(String::as_str) == Some("outputs")
        && let Some(name) = path.get(3)
    {
        let outs = model.declared_outputs(scope, target);
        if !outs.contains(name.as_str()) && !outs.contains("*") {
            let known: Vec<&str> = outs.iter().map(String::as_str).collect();
            let hint = ais_core::did_you_mean(name, known.iter().copied());
            fail(
                "AG206",
                format!("`{shown}` reads the output `{name}`, which node `{x}` does not declare"),
                hint.first().map_or_else(
                    || format!("declare `{name}` under `outputs` of `{x}`"),
                    |h| format!("did you mean `{h}`?"),
                ),
            );
        }
    }
}

/// The advisory rules AG901–AG909.
pub(crate) fn advisory(model: &Model, sink: &mut Sink) {
    let mut reads: HashSet<(String, String, String)> = HashSet::new();
    for scope in &model.scopes {
        for site in sites(model, scope) {
            let mut quiet = Sink::new(None, "");
            for (expr, _) in parse_site(&site, &mut quiet) {
                for r in agx::references(&expr) {
                    let p: Vec<&str> = r.path.iter().map(String::as_str).collect();
                    let who = match site.at {
                        At::Node { id, .. } => id,
                        _ => "",
                    };
                    let hit = match p.as_slice() {
                        ["nodes", "self", "outputs", y, ..] | ["self", "outputs", y, ..] => {
                            Some((who, *y))
                        }
                        ["nodes", x, "outputs", y, ..] => Some((*x, *y)),
                        _ => None,
                    };
                    if let Some((x, y)) = hit {
                        reads.insert((scope.pointer.clone(), x.to_owned(), y.to_owned()));
                    }
                }
            }
        }
    }
    let mut any_estimate = false;
    for scope in &model.scopes {
        let explicit: Vec<(&str, &str)> = scope
            .value
            .get("edges")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| Some((e.get("from")?.as_str()?, e.get("to")?.as_str()?)))
            .collect();
        for (id, node) in scope.nodes() {
            for (i, d) in node
                .get("depends_on")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let Some(d) = d.as_str() else { continue };
                if explicit.contains(&(d, id.as_str())) {
                    sink.push("AG901", &format!("{}/depends_on/{i}", scope.node_ptr(id)), format!("`{d}` is both in `depends_on` and an explicit edge to `{id}`"),
                        "keep one: `depends_on` for a plain dependency, the edge for a conditional or remediation path");
                }
            }
        }
        let reachable = reachable(scope);
        for (id, node) in scope.nodes() {
            any_estimate |= node.contains_key("estimate");
            node_advice(scope, id, node, &reachable, &reads, sink);
        }
    }
    if model.doc.pointer("/constraints/max_cost_usd").is_none() && !any_estimate {
        sink.push("AG908", "", "the graph declares no `constraints.max_cost_usd` and no node declares an `estimate`, so its cost cannot be previewed",
            "add `constraints: {max_cost_usd: …}` or an `estimate` on the nodes");
    }
    for ext in &model.externals {
        if is_remote(&ext.uri)
            && model
                .doc
                .pointer(&format!("{}/integrity", ext.pointer))
                .is_none()
        {
            sink.push("AG909", &format!("{}/uri", ext.pointer), format!("the remote reference `{}` declares no `integrity` digest", ext.uri),
                "add `integrity: sha256-…` (the base64 SHA-256 of the document's canonical JSON form)");
        }
    }
}

fn reachable(scope: &Scope) -> HashSet<String> {
    let mut seen: HashSet<String> = scope
        .value
        .get("entrypoints")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let mut todo: Vec<String> = seen.iter().cloned().collect();
    while let Some(n) = todo.pop() {
        for e in scope.edges.iter().filter(|e| e.from == n) {
            if seen.insert(e.to.clone()) {
                todo.push(e.to.clone());
            }
        }
    }
    seen
}

fn node_advice(
    scope: &Scope,
    id: &str,
    node: &Map<String, Json>,
    reachable: &HashSet<String>,
    reads: &HashSet<(String, String, String)>,
    sink: &mut Sink,
) {
    let np = scope.node_ptr(id);
    if !reachable.contains(id) {
        sink.push(
            "AG903",
            &np,
            format!("node `{id}` is unreachable from every entrypoint, so it never runs"),
            format!("add a dependency leading to `{id}`, list it in `entrypoints`, or remove it"),
        );
    }
    let req = scope.effective(node, "requirements");
    let writes = req
        .as_ref()
        .and_then(|r| r.get("workspace"))
        .and_then(Json::as_str)
        == Some("read_write")
        || req
            .as_ref()
            .and_then(|r| r.get("permissions"))
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .any(|p| {
                p.split(':').nth(1).is_some_and(|a| {
                    [
                        "write", "delete", "push", "commit", "publish", "deploy", "merge", "tag",
                    ]
                    .contains(&a)
                })
            });
    if writes && !node.contains_key("success") {
        sink.push(
            "AG902",
            &np,
            format!("node `{id}` changes state but declares no `success` block"),
            "add `success` with at least one deterministic criterion (`command`, `file_exists`, …)",
        );
    }
    for (name, _) in obj(node.get("outputs")) {
        let criterion = node
            .pointer("/success/criteria")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .any(|c| c.get("output").and_then(Json::as_str) == Some(name));
        if !criterion && !reads.contains(&(scope.pointer.clone(), id.to_owned(), name.clone())) {
            sink.push("AG904", &format!("{np}/outputs/{}", pointer_token(name)),
                format!("node `{id}` declares the output `{name}`, which no node, graph output or criterion reads"),
                match crate::agx::output_reference(id, name) {
                    Ok(r) => format!("read it (`{r}`) where it is needed, or remove it"),
                    Err(rename) => format!("{rename} where it is needed, or remove the output"),
                });
        }
    }
    let intel = scope.effective(node, "intelligence");
    if intel
        .as_ref()
        .and_then(|i| i.get("tier"))
        .and_then(Json::as_str)
        == Some("frontier")
        && !node.contains_key("rationale")
        && intel.as_ref().and_then(|i| i.get("rationale")).is_none()
    {
        sink.push(
            "AG905",
            &np,
            format!("node `{id}` asks for the `frontier` tier without a `rationale`"),
            "add `rationale:` saying why the task needs the most capable tier",
        );
    }
    if let Some(cs) = node.pointer("/success/criteria").and_then(Json::as_array)
        && !cs.is_empty()
        && cs.iter().all(|c| {
            matches!(
                c.get("kind").and_then(Json::as_str),
                Some("llm_judge" | "human")
            )
        })
    {
        sink.push(
            "AG906",
            &format!("{np}/success"),
            format!("node `{id}`'s success block has only judged criteria (`llm_judge`, `human`)"),
            "add a deterministic criterion (`command`, `file_exists`, `expression`, …)",
        );
    }
    let cons = scope.effective(node, "constraints");
    if cons
        .as_ref()
        .and_then(|c| c.get("determinism"))
        .and_then(Json::as_str)
        == Some("strict")
        && cons.as_ref().and_then(|c| c.get("seed")).is_none()
    {
        sink.push(
            "AG907",
            &format!("{np}/constraints"),
            format!("node `{id}` asks for `determinism: strict` without a `seed`"),
            "add `constraints.seed`, or relax `determinism`",
        );
    }
}

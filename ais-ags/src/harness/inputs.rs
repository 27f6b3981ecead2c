//! Params and inputs at run time (SPEC.md §5.2, §9.2). Each graph param is a `role: input`
//! carry of the same name (`ais run … --input NAME=VALUE`); the first step of the run,
//! `ags_params`, binds them — a supplied value, else the `default` — and rejects the run when a
//! required one has neither (`AG301`) or one breaks its `enum` or `schema` (`AG302`). Before
//! each task node, `<node>__inputs` resolves the node's inputs once (a `from` expression, a
//! `template`, a `value`, or implicitly `params.<name>` then `context.<name>`; `default` when
//! absent and not required) into the map the node reads; a required input that resolves
//! absent fails the node before any model call (`RT033`). Expressions and templates are
//! evaluated by the AGX evaluator ([`crate::agx`]).

use crate::agx;
use crate::graph::{Graph, ParamSpec};
use crate::translate::carry_name;
use indexmap::IndexMap;
use serde_json::{Map, Value as Json, json};

/// The id (tool, instruction and carry prefix) of the params step.
pub const PARAMS: &str = "ags_params";

/// The carries the params step writes: the bound params, whether they are valid, the findings.
pub fn params_writes() -> [String; 3] {
    [
        PARAMS.to_owned(),
        carry_name(PARAMS, "ok"),
        carry_name(PARAMS, "error"),
    ]
}

/// The carries node `nid`'s inputs step writes: the inputs, whether they resolved, why not.
pub fn input_writes(nid: &str) -> [String; 3] {
    [
        super::own(nid, "inputs"),
        super::own(nid, "inputs_ok"),
        super::own(nid, "inputs_error"),
    ]
}

/// Binds the supplied params (by name; `null` when not supplied): the bound map, or each
/// `AG301`/`AG302` finding as (code, message).
pub fn bind_params(
    doc: &Graph,
    supplied: &Map<String, Json>,
) -> Result<Map<String, Json>, Vec<(String, String)>> {
    let empty = IndexMap::new();
    bind_specs(doc.params.as_ref().unwrap_or(&empty), supplied, "param")
}

/// Binds `supplied` values (by name) to param specs (`type` aside: `default`, `required`,
/// `enum`, `schema`), each finding named as a `what` (`param`, or a gate's collected `value`).
pub fn bind_specs(
    specs: &IndexMap<String, ParamSpec>,
    supplied: &Map<String, Json>,
    what: &str,
) -> Result<Map<String, Json>, Vec<(String, String)>> {
    let mut bound = Map::new();
    let mut errors = Vec::new();
    for (name, spec) in specs {
        let value = supplied
            .get(name)
            .filter(|v| !v.is_null())
            .or(spec.default.as_ref())
            .cloned();
        let Some(value) = value else {
            if spec.required != Some(false) {
                let how = if what == "param" {
                    format!(": supply it with `--input {name}=VALUE`")
                } else {
                    String::new()
                };
                errors.push((
                    "AG301".into(),
                    format!("{what} `{name}` is required and has no default{how}"),
                ));
            }
            continue;
        };
        if let Some(allowed) = &spec.allowed
            && !allowed.contains(&value)
        {
            errors.push((
                "AG302".into(),
                format!(
                    "{what} `{name}` is {value}, not one of {}",
                    Json::Array(allowed.clone())
                ),
            ));
        }
        if let Some(schema) = &spec.schema
            && let Ok(v) = jsonschema::validator_for(&Json::Object(schema.clone()))
            && !v.is_valid(&value)
        {
            let why: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
            errors.push((
                "AG302".into(),
                format!("{what} `{name}` breaks its schema: {}", why.join("; ")),
            ));
        }
        bound.insert(name.clone(), value);
    }
    if errors.is_empty() {
        Ok(bound)
    } else {
        Err(errors)
    }
}

/// What an AGX expression of node inputs may read: the bound params, the graph's context, and
/// the outputs of the nodes before it (by carry).
struct Scope<'a> {
    doc: &'a Graph,
    params: &'a Map<String, Json>,
    carries: &'a Map<String, Json>,
    /// The node `self` names (a checkpoint's `when`), with its own outputs and inputs.
    me: Option<&'a str>,
}

impl Scope<'_> {
    /// `self.outputs.<name>` or `self.inputs.<name>` of the node [`Scope::me`] names: an
    /// output as the model wrote it (JSON text of a structured type read as the value), an
    /// input as it was resolved.
    fn own(&self, rest: &[String]) -> Option<Json> {
        let me = self.me?;
        match rest.first()?.as_str() {
            "outputs" => {
                let name = rest.get(1)?;
                let v = self.carries.get(&carry_name(me, name))?.clone();
                let ty = self
                    .doc
                    .node(me)
                    .and_then(|n| n.outputs.as_ref()?.get(name))
                    .map(|o| o.ty);
                match (ty, &v) {
                    (Some(t), Json::String(text)) if super::judge::structured(t.as_str()) => {
                        serde_json::from_str(text.trim()).ok().or(Some(v))
                    }
                    _ => Some(v),
                }
            }
            "inputs" => self
                .carries
                .get(&input_writes(me)[0])?
                .get(rest.get(1)?.as_str())
                .cloned(),
            _ => None,
        }
    }
}

impl agx::Env for Scope<'_> {
    fn lookup(&self, path: &[String]) -> Option<Json> {
        let (root, rest) = path.split_first()?;
        let (mut v, rest) = match root.as_str() {
            "self" => (self.own(rest)?, rest.get(2..).unwrap_or_default()),
            "nodes" if rest.first().map(String::as_str) == Some("self") => {
                (self.own(&rest[1..])?, rest.get(3..).unwrap_or_default())
            }
            "params" => (self.params.get(rest.first()?)?.clone(), &rest[1..]),
            "context" => (
                self.doc.context.as_ref()?.get(rest.first()?)?.clone(),
                &rest[1..],
            ),
            "nodes" if rest.get(1).map(String::as_str) == Some("outputs") => {
                let (node, name) = (rest.first()?, rest.get(2)?);
                (output(self.carries, node, name)?, &rest[3..])
            }
            _ => return None,
        };
        for k in rest {
            v = v.get(k.as_str())?.clone();
        }
        Some(v)
    }

    fn state(&self, _node: &str) -> Option<String> {
        None
    }
}

/// Output `name` of node `node` as the nodes after it read it: as the node's judge collected
/// it (its verdict's `outputs`: JSON text of a structured type read as the value, a `file`
/// output its path, SPEC.md §9.1), else — a gate's output, set from its answer — the carry.
fn output(carries: &Map<String, Json>, node: &str, name: &str) -> Option<Json> {
    let verdict = carries.get(&super::judge_writes(node)[3]);
    match verdict
        .and_then(|v| v.get("outputs"))
        .and_then(Json::as_object)
    {
        Some(outputs) => outputs.get(name).cloned(),
        None => carries.get(&carry_name(node, name)).cloned(),
    }
}

fn interpolate(text: &str, scope: &Scope) -> Result<String, String> {
    let parts = agx::template_parts(text).map_err(|at| format!("unclosed `${{{{` at {at}"))?;
    let mut out = text.to_owned();
    for (inner, _) in parts {
        let e = agx::parse(&inner).map_err(|e| e.message)?;
        let v = agx::eval(&e, scope).map_err(|e| e.0)?;
        out = out.replacen(&format!("${{{{{inner}}}}}"), &agx::stringify(&v), 1);
    }
    Ok(out)
}

/// Resolves node `nid`'s inputs (§9.2) over the bound `params` and the produced `carries`: the
/// inputs by name, or why a required one is absent.
pub fn resolve(
    doc: &Graph,
    nid: &str,
    params: &Map<String, Json>,
    carries: &Map<String, Json>,
) -> Result<Map<String, Json>, String> {
    let scope = Scope {
        doc,
        params,
        carries,
        me: None,
    };
    let mut out = Map::new();
    let inputs = doc.node(nid).and_then(|n| n.inputs.as_ref());
    for (name, spec) in inputs.into_iter().flatten() {
        let v = if let Some(from) = &spec.from {
            let e = agx::parse(from).map_err(|e| format!("input `{name}`: {}", e.message))?;
            agx::eval(&e, &scope).map_err(|e| format!("input `{name}`: {}", e.0))?
        } else if let Some(t) = &spec.template {
            json!(interpolate(t, &scope).map_err(|e| format!("input `{name}`: {e}"))?)
        } else if let Some(v) = &spec.value {
            v.clone()
        } else {
            params
                .get(name)
                .or_else(|| doc.context.as_ref().and_then(|c| c.get(name)))
                .cloned()
                .unwrap_or(Json::Null)
        };
        let v = match (v.is_null(), &spec.default) {
            (true, Some(d)) => d.clone(),
            _ => v,
        };
        if v.is_null() {
            if spec.required != Some(false) {
                return Err(format!("required input `{name}` resolved to nothing"));
            }
            continue;
        }
        out.insert(name.clone(), v);
    }
    Ok(out)
}

/// Evaluates the guard `expr` (a checkpoint's `when`) of node `nid` over the bound `params` and
/// the produced `carries` (`self` names the node): whether it holds, or why it could not be
/// evaluated (a syntax error, an evaluation error, a value that is not a boolean).
pub fn holds(
    doc: &Graph,
    nid: &str,
    expr: &str,
    params: &Map<String, Json>,
    carries: &Map<String, Json>,
) -> Result<bool, String> {
    let scope = Scope {
        doc,
        params,
        carries,
        me: Some(nid),
    };
    let e = agx::parse(expr).map_err(|e| e.message)?;
    match agx::eval(&e, &scope).map_err(|e| e.0)? {
        Json::Bool(b) => Ok(b),
        other => Err(format!("`{expr}` is {other}, not a boolean")),
    }
}

/// The question a gate or checkpoint puts (SPEC.md §7.3, §15): its `prompt` template
/// interpolated over the bound `params` and the produced `carries` (`self` names node `me`),
/// then the material `present` lists, each expression with its value (a `file` output is its
/// path under the output root). An expression that cannot be evaluated is shown as the error.
pub fn frame(
    doc: &Graph,
    me: &str,
    prompt: &str,
    present: &[String],
    params: &Map<String, Json>,
    carries: &Map<String, Json>,
) -> String {
    let scope = Scope {
        doc,
        params,
        carries,
        me: Some(me),
    };
    let mut text = interpolate(prompt, &scope).unwrap_or_else(|e| format!("{prompt} [{e}]"));
    text = format!("{} (approve/reject)", text.trim());
    for p in present {
        let shown = agx::parse(p)
            .map_err(|e| e.message)
            .and_then(|e| agx::eval(&e, &scope).map_err(|e| e.0))
            .map_or_else(
                |e| format!("[cannot be shown: {e}]"),
                |v| agx::stringify(&v),
            );
        text.push_str(&format!("\n  {p}: {shown}"));
    }
    text
}

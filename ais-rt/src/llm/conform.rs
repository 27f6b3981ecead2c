//! The checker of a model's answer against its slot's schema, without a general JSON Schema
//! engine: a slot's schema is the schema of an AIS type ([`super::schema::schema_for`]), and
//! the keywords that mapping writes are all this module takes — `type` (a name or a list of
//! names), `enum`, `items`, `properties`, `required`, `additionalProperties` (a boolean or a
//! schema), `$ref` to `#` or to `#/$defs/NAME` with the root's `$defs`, the boolean schemas
//! `true` and `false`, and the annotations `$schema` (draft 2020-12), `description`, `title`,
//! `default`, `examples`, `$comment`, `deprecated`, `readOnly` and `writeOnly`. Each keyword
//! means what draft 2020-12 says it means (an `integer` is a number without a fraction; an
//! object's properties not listed are allowed unless `additionalProperties` says otherwise).
//!
//! Any other keyword is [`Unfit::Outside`]: the caller decides what to do with such a schema
//! (with the `json-schema` feature, hand it to the `jsonschema` crate; without, refuse it). A
//! schema is never half-checked: a keyword this module does not know is never ignored.
//!
//! The answer is hostile input; the schema is the program's (or the caller's). Errors quote the
//! answer clipped, name the place in it as a JSON Pointer, and suggest the member or property
//! the answer most likely meant.

use serde_json::{Map, Value};

/// The dialect of [`super::schema::schema_for`], the only `$schema` taken.
const DRAFT: &str = super::schema::DRAFT;
/// The annotation keywords: they say something to the model, nothing to the checker.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];
/// The most characters of the answer quoted in one error.
const QUOTE_CHARS: usize = 60;
/// The most names listed in one error (an enum's members, an object's properties).
const LISTED: usize = 24;

/// Why a schema cannot be compiled by this module.
#[derive(Debug, PartialEq)]
pub(crate) enum Unfit {
    /// It uses a keyword or form outside the slot schemas' dialect (named, with where).
    Outside(String),
    /// It is not a valid schema (what is wrong, and where).
    Invalid(String),
}

/// A schema compiled for checking answers.
#[derive(Debug)]
pub(crate) struct Shape {
    /// The nodes; the root is node 0.
    nodes: Vec<Node>,
}

#[derive(Debug, Default)]
struct Node {
    /// The boolean schema `false`: no value fits.
    never: bool,
    /// `type`: the kinds a value may be.
    kinds: Option<Vec<Kind>>,
    /// `enum`: the values a value may be.
    members: Option<Vec<Value>>,
    /// `items`: the node every element of a list must fit.
    items: Option<usize>,
    /// `properties`, in the schema's order.
    properties: Vec<(String, usize)>,
    /// `required`.
    required: Vec<String>,
    /// `additionalProperties`.
    extra: Extra,
    /// `$ref`: the node a value must fit as well.
    refers: Option<usize>,
}

/// What an object's properties not listed under `properties` must be.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Extra {
    /// Anything (no `additionalProperties`, or `true`).
    #[default]
    Open,
    /// Nothing: `additionalProperties: false`.
    Closed,
    /// Each fits this node.
    Each(usize),
}

/// A JSON Schema type name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Null,
    Boolean,
    Object,
    Array,
    Number,
    String,
    Integer,
}

impl Kind {
    fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "object" => Kind::Object,
            "array" => Kind::Array,
            "number" => Kind::Number,
            "string" => Kind::String,
            "integer" => Kind::Integer,
            _ => return None,
        })
    }

    /// How an error names it (the way [`super::shape::kind_of`] names a value's kind).
    fn noun(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Object => "an object",
            Kind::Array => "a list",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Integer => "an integer",
        }
    }

    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (Kind::Null, Value::Null)
            | (Kind::Boolean, Value::Bool(_))
            | (Kind::Object, Value::Object(_))
            | (Kind::Array, Value::Array(_))
            | (Kind::Number, Value::Number(_))
            | (Kind::String, Value::String(_)) => true,
            // Draft 2020-12: an integer is any number whose fraction is zero (`3.0` too).
            (Kind::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }
}

impl Shape {
    /// Compiles `schema`, or says why this module cannot check against it.
    pub(crate) fn compile(schema: &Value) -> Result<Shape, Unfit> {
        let mut c = Compiler {
            nodes: vec![Node::default()],
            defs: Vec::new(),
        };
        // The root's definitions get their node ids first, so that any `$ref` resolves.
        if let Some(defs) = schema.get("$defs") {
            let Value::Object(defs) = defs else {
                return Err(Unfit::Invalid(
                    "`$defs` must be an object of schemas".into(),
                ));
            };
            for name in defs.keys() {
                c.nodes.push(Node::default());
                c.defs.push((name.clone(), c.nodes.len() - 1));
            }
            for (i, def) in defs.values().enumerate() {
                let id = c.defs[i].1;
                let pointer = format!("/$defs/{}", escape(&c.defs[i].0));
                c.nodes[id] = c.node(def, &pointer, false)?;
            }
        }
        c.nodes[0] = c.node(schema, "", true)?;
        c.reject_ref_loops()?;
        Ok(Shape { nodes: c.nodes })
    }

    /// Checks `value`: `Ok`, or the misfits (at most `max` of them described, each `(place,
    /// what is wrong)`, the place a JSON Pointer into the value) and how many more there are.
    pub(crate) fn check(&self, value: &Value, max: usize) -> Result<(), (Vec<Misfit>, usize)> {
        let mut out = Misfits {
            max,
            found: Vec::new(),
            more: 0,
        };
        let mut place = String::new();
        self.visit(0, value, &mut place, &mut out);
        if out.found.is_empty() && out.more == 0 {
            Ok(())
        } else {
            Err((out.found, out.more))
        }
    }

    fn visit(&self, id: usize, value: &Value, place: &mut String, out: &mut Misfits) {
        let node = &self.nodes[id];
        if node.never {
            out.add(place, || "nothing is allowed here".to_owned());
            return;
        }
        if let Some(target) = node.refers {
            self.visit(target, value, place, out);
        }
        if let Some(kinds) = &node.kinds
            && !kinds.iter().any(|k| k.admits(value))
        {
            out.add(place, || {
                let wanted: Vec<&str> = kinds.iter().map(|k| k.noun()).collect();
                format!(
                    "{} is {}, not {}",
                    quote(value),
                    super::shape::kind_of(value),
                    or_list(&wanted)
                )
            });
            // The keywords below are about a value of the right kind.
            return;
        }
        if let Some(members) = &node.members
            && !members.iter().any(|m| same(m, value))
        {
            out.add(place, || not_a_member(value, members));
        }
        match value {
            Value::Array(items) => {
                if let Some(item) = node.items {
                    for (i, element) in items.iter().enumerate() {
                        let len = place.len();
                        place.push('/');
                        place.push_str(&i.to_string());
                        self.visit(item, element, place, out);
                        place.truncate(len);
                    }
                }
            }
            Value::Object(map) => self.visit_object(node, map, place, out),
            _ => {}
        }
    }

    fn visit_object(
        &self,
        node: &Node,
        map: &Map<String, Value>,
        place: &mut String,
        out: &mut Misfits,
    ) {
        for name in &node.required {
            if !map.contains_key(name) {
                out.add(place, || {
                    format!("the required property {} is missing", quote_str(name))
                });
            }
        }
        for (name, v) in map {
            let listed = node.properties.iter().find(|(n, _)| n == name);
            let sub = match (listed.map(|(_, id)| *id), node.extra) {
                (Some(id), _) | (None, Extra::Each(id)) => id,
                (None, Extra::Open) => continue,
                (None, Extra::Closed) => {
                    out.add(place, || not_a_property(name, &node.properties));
                    continue;
                }
            };
            let len = place.len();
            place.push('/');
            place.push_str(&escape(name));
            self.visit(sub, v, place, out);
            place.truncate(len);
        }
    }
}

/// One misfit: the place in the answer (a JSON Pointer, empty for the whole answer) and what is
/// wrong there.
pub(crate) type Misfit = (String, String);

struct Misfits {
    max: usize,
    found: Vec<Misfit>,
    more: usize,
}

impl Misfits {
    /// Records a misfit at `place`; past `max`, only counts it (the message is not built).
    fn add(&mut self, place: &str, what: impl FnOnce() -> String) {
        if self.found.len() < self.max {
            self.found.push((place.to_owned(), what()));
        } else {
            self.more += 1;
        }
    }
}

struct Compiler {
    nodes: Vec<Node>,
    /// The root's `$defs`: name and node id.
    defs: Vec<(String, usize)>,
}

impl Compiler {
    /// Compiles the schema at `pointer` (a JSON Pointer into the schema) into a node; its
    /// subschemas get nodes of their own.
    fn node(&mut self, schema: &Value, pointer: &str, root: bool) -> Result<Node, Unfit> {
        let at = || {
            if pointer.is_empty() {
                "at the schema's root".to_owned()
            } else {
                format!("at `{pointer}`")
            }
        };
        let map = match schema {
            Value::Bool(b) => {
                return Ok(Node {
                    never: !b,
                    ..Node::default()
                });
            }
            Value::Object(map) => map,
            other => {
                return Err(Unfit::Invalid(format!(
                    "the schema {} is {}, not an object or a boolean",
                    at(),
                    super::shape::kind_of(other)
                )));
            }
        };
        let mut node = Node::default();
        for (key, value) in map {
            let invalid = |what: &str| Err(Unfit::Invalid(format!("`{key}` {} {what}", at())));
            match key.as_str() {
                "$schema" => {
                    if value.as_str().map(|s| s.trim_end_matches('#')) != Some(DRAFT) {
                        return Err(Unfit::Outside(format!(
                            "`$schema` {}: {} (the slot schemas are draft 2020-12)",
                            at(),
                            quote(value)
                        )));
                    }
                }
                k if ANNOTATIONS.contains(&k) => {}
                "$defs" if root => {}
                "type" => {
                    let names: Vec<&Value> = match value {
                        Value::Array(names) => names.iter().collect(),
                        one => vec![one],
                    };
                    let kinds: Option<Vec<Kind>> = names
                        .into_iter()
                        .map(|n| n.as_str().and_then(Kind::parse))
                        .collect();
                    match kinds {
                        Some(kinds) => node.kinds = Some(kinds),
                        None => {
                            return invalid(
                                "must be a type name (`string`, `integer`, `number`, `boolean`, `object`, `array`, `null`) or a list of them",
                            );
                        }
                    }
                }
                "enum" => match value {
                    Value::Array(members) => node.members = Some(members.clone()),
                    _ => return invalid("must be a list of values"),
                },
                "items" => match value {
                    Value::Object(_) | Value::Bool(_) => {
                        node.items = Some(self.child(value, &format!("{pointer}/items"))?);
                    }
                    _ => return invalid("must be a schema"),
                },
                "properties" => {
                    let Value::Object(properties) = value else {
                        return invalid("must be an object of schemas");
                    };
                    for (name, sub) in properties {
                        let p = format!("{pointer}/properties/{}", escape(name));
                        let id = self.child(sub, &p)?;
                        node.properties.push((name.clone(), id));
                    }
                }
                "required" => {
                    let names: Option<Vec<String>> = value.as_array().and_then(|names| {
                        names
                            .iter()
                            .map(|n| n.as_str().map(str::to_owned))
                            .collect()
                    });
                    match names {
                        Some(names) => node.required = names,
                        None => return invalid("must be a list of property names"),
                    }
                }
                "additionalProperties" => {
                    node.extra = match value {
                        Value::Bool(true) => Extra::Open,
                        Value::Bool(false) => Extra::Closed,
                        Value::Object(_) => Extra::Each(
                            self.child(value, &format!("{pointer}/additionalProperties"))?,
                        ),
                        _ => return invalid("must be a schema"),
                    };
                }
                "$ref" => {
                    let Some(target) = value.as_str() else {
                        return invalid("must be a string");
                    };
                    node.refers = Some(self.resolve(target, &at)?);
                }
                _ => {
                    return Err(Unfit::Outside(format!("the keyword `{key}` {}", at())));
                }
            }
        }
        Ok(node)
    }

    fn child(&mut self, schema: &Value, pointer: &str) -> Result<usize, Unfit> {
        let node = self.node(schema, pointer, false)?;
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    /// The node a `$ref` names: the root (`#`) or one of the root's `$defs`.
    fn resolve(&self, target: &str, at: &dyn Fn() -> String) -> Result<usize, Unfit> {
        if target == "#" {
            return Ok(0);
        }
        let Some(name) = target.strip_prefix("#/$defs/") else {
            return Err(Unfit::Outside(format!(
                "the `$ref` {} to {} (slot schemas refer to `#` or `#/$defs/NAME`)",
                at(),
                quote_str(target)
            )));
        };
        let name = name.replace("~1", "/").replace("~0", "~");
        self.defs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, id)| *id)
            .ok_or_else(|| {
                Unfit::Invalid(format!(
                    "the `$ref` {} names {}, which `$defs` does not define",
                    at(),
                    quote_str(target)
                ))
            })
    }

    /// Refuses a `$ref` chain that comes back to where it started without a list or object in
    /// between: checking against it would never end.
    fn reject_ref_loops(&self) -> Result<(), Unfit> {
        for start in 0..self.nodes.len() {
            let mut seen = vec![start];
            let mut at = start;
            while let Some(next) = self.nodes[at].refers {
                if seen.contains(&next) {
                    let name = |id: usize| {
                        self.defs
                            .iter()
                            .find(|(_, d)| *d == id)
                            .map_or_else(|| "#".to_owned(), |(n, _)| format!("#/$defs/{n}"))
                    };
                    return Err(Unfit::Invalid(format!(
                        "`{}` refers back to itself through `$ref` without a value in between",
                        name(next)
                    )));
                }
                seen.push(next);
                at = next;
            }
        }
        Ok(())
    }
}

/// A JSON Pointer segment (`~` and `/` escaped), with control characters shown escaped so that
/// a hostile property name cannot break the error's line.
fn escape(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            '`' => out.push_str("\\u{60}"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON text, clipped to [`QUOTE_CHARS`] characters.
fn quote(value: &Value) -> String {
    super::shape::clip(
        &serde_json::to_string(value).unwrap_or_default(),
        QUOTE_CHARS,
    )
}

fn quote_str(s: &str) -> String {
    quote(&Value::String(s.to_owned()))
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => "nothing".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// At most [`LISTED`] names, comma-separated, with how many were left out.
fn listed(names: impl ExactSizeIterator<Item = String>) -> String {
    let total = names.len();
    let mut shown: Vec<String> = names.take(LISTED).collect();
    if total > LISTED {
        shown.push(format!("… ({total} in all)"));
    }
    shown.join(", ")
}

/// JSON equality as JSON Schema's `enum` means it: numbers by value (`1` is `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

fn not_a_member(value: &Value, members: &[Value]) -> String {
    let mut text = format!(
        "{} is not one of {}",
        quote(value),
        listed(members.iter().map(quote))
    );
    if let Value::String(s) = value {
        let names: Vec<&str> = members.iter().filter_map(Value::as_str).collect();
        if let Some(best) = ais_core::did_you_mean(s, names).first() {
            text.push_str(&format!("; did you mean {}?", quote_str(best)));
        }
    }
    text
}

fn not_a_property(name: &str, properties: &[(String, usize)]) -> String {
    if properties.is_empty() {
        return format!(
            "the property {} is not allowed: this object has no properties",
            quote_str(name)
        );
    }
    let mut text = format!(
        "the property {} is not allowed here; the properties are {}",
        quote_str(name),
        listed(properties.iter().map(|(n, _)| quote_str(n)))
    );
    if let Some(best) =
        ais_core::did_you_mean(name, properties.iter().map(|(n, _)| n.as_str())).first()
    {
        text.push_str(&format!("; did you mean {}?", quote_str(best)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The one message for `value` against `schema`, with its place.
    fn misfits(schema: Value, value: Value) -> Vec<Misfit> {
        Shape::compile(&schema)
            .unwrap()
            .check(&value, 8)
            .expect_err("a misfit")
            .0
    }

    #[test]
    fn a_wrong_kind_names_both_kinds_and_quotes_the_answer() {
        let m = misfits(json!({"type": "integer"}), json!("12 apples"));
        assert_eq!(
            m,
            [(
                String::new(),
                r#""12 apples" is a string, not an integer"#.into()
            )]
        );
        let m = misfits(json!({"type": ["string", "null"]}), json!(3));
        assert_eq!(m[0].1, "3 is a number, not a string or null");
        // An integer is a number without a fraction (draft 2020-12), 3.0 included.
        let int = Shape::compile(&json!({"type": "integer"})).unwrap();
        assert!(int.check(&json!(3.0), 8).is_ok());
        assert_eq!(
            int.check(&json!(3.5), 8).unwrap_err().0[0].1,
            "3.5 is a number, not an integer"
        );
    }

    #[test]
    fn a_hostile_answer_is_quoted_clipped() {
        let huge = "x".repeat(100_000);
        let m = misfits(json!({"type": "integer"}), json!({"a": huge}));
        assert!(m[0].1.chars().count() < 120, "{}", m[0].1);
        assert!(
            m[0].1.ends_with("… is an object, not an integer"),
            "{}",
            m[0].1
        );
        // Control characters and backticks in the answer cannot break the message's line.
        let m = misfits(json!({"type": "integer"}), json!("a\nb`\u{0}"));
        assert_eq!(m[0].1, r#""a\nb`\u0000" is a string, not an integer"#);
    }

    #[test]
    fn an_enum_miss_lists_the_members_and_suggests_one() {
        let schema = json!({"type": "string", "enum": ["merge", "split"]});
        let m = misfits(schema.clone(), json!("merg"));
        assert_eq!(
            m[0].1,
            r#""merg" is not one of "merge", "split"; did you mean "merge"?"#
        );
        let m = misfits(schema, json!("rotate"));
        assert_eq!(m[0].1, r#""rotate" is not one of "merge", "split""#);
        // Numbers are compared by value, as JSON Schema says.
        let n = Shape::compile(&json!({"enum": [1, 2.5]})).unwrap();
        assert!(n.check(&json!(1.0), 8).is_ok() && n.check(&json!(2.5), 8).is_ok());
        assert!(n.check(&json!(2), 8).is_err());
        // A long member list is cut, saying how long it is.
        let many: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
        let m = misfits(json!({"enum": many}), json!("zzz"));
        assert!(m[0].1.ends_with("… (100 in all)"), "{}", m[0].1);
    }

    #[test]
    fn an_object_names_the_missing_and_the_unexpected_property() {
        let schema = json!({
            "type": "object",
            "properties": {"width": {"type": "integer"}, "out": {"type": "string"}},
            "required": ["out"],
            "additionalProperties": false,
        });
        let m = misfits(schema, json!({"wdith": 3}));
        assert_eq!(
            m,
            [
                (String::new(), r#"the required property "out" is missing"#.into()),
                (
                    String::new(),
                    r#"the property "wdith" is not allowed here; the properties are "width", "out"; did you mean "width"?"#
                        .into()
                ),
            ]
        );
        // Open objects take any other property; `additionalProperties` as a schema checks them.
        let open = Shape::compile(&json!({"type": "object"})).unwrap();
        assert!(open.check(&json!({"x": [1]}), 8).is_ok());
        let m = misfits(
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            json!({"a": 1, "b/c~": "2"}),
        );
        assert_eq!(
            m,
            [(
                "/b~1c~0".into(),
                r#""2" is a string, not an integer"#.into()
            )]
        );
    }

    #[test]
    fn a_hostile_property_name_is_escaped_in_the_place() {
        let m = misfits(
            json!({"additionalProperties": {"type": "integer"}}),
            json!({"a`\n": "x"}),
        );
        assert_eq!(m[0].0, "/a\\u{60}\\n");
    }

    #[test]
    fn nested_places_are_json_pointers() {
        let m = misfits(
            json!({"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}),
            json!([{"n": 1}, {"n": "two"}]),
        );
        assert_eq!(
            m,
            [("/1/n".into(), r#""two" is a string, not an integer"#.into())]
        );
    }

    #[test]
    fn misfits_past_the_limit_are_counted_not_described() {
        let schema = Shape::compile(&json!({"items": {"type": "integer"}})).unwrap();
        let answer: Vec<Value> = (0..10_000).map(|i| json!(i.to_string())).collect();
        let (found, more) = schema.check(&Value::Array(answer), 8).unwrap_err();
        assert_eq!((found.len(), more), (8, 9_992));
    }

    #[test]
    fn refs_and_boolean_schemas() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {
                "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                "tag": {"type": "string"},
            }, "additionalProperties": false}},
            "$ref": "#/$defs/Node",
        });
        let m = misfits(schema, json!({"kids": [{"kids": [{"tag": 1}]}]}));
        assert_eq!(
            m,
            [(
                "/kids/0/kids/0/tag".into(),
                r#"1 is a number, not a string"#.into()
            )]
        );
        let m = misfits(json!({"properties": {"a": false}}), json!({"a": 1}));
        assert_eq!(m, [("/a".into(), "nothing is allowed here".into())]);
    }

    #[test]
    fn schemas_it_cannot_check_are_refused_never_half_checked() {
        for (schema, says) in [
            (
                json!({"type": "string", "minLength": 1}),
                "the keyword `minLength` at the schema's root",
            ),
            (
                json!({"items": {"pattern": "a+"}}),
                "the keyword `pattern` at `/items`",
            ),
            (
                json!({"$ref": "https://example.com/s.json"}),
                "slot schemas refer to",
            ),
            (
                json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
                "draft 2020-12",
            ),
        ] {
            match Shape::compile(&schema) {
                Err(Unfit::Outside(what)) => assert!(what.contains(says), "{what}"),
                other => panic!("{schema}: {other:?}"),
            }
        }
        for (schema, says) in [
            (
                json!({"type": 7}),
                "`type` at the schema's root must be a type name",
            ),
            (json!({"type": "text"}), "must be a type name"),
            (
                json!({"$ref": "#/$defs/Nope"}),
                "which `$defs` does not define",
            ),
            (json!([]), "is a list, not an object or a boolean"),
            (
                json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}),
                "refers back to itself",
            ),
            (json!({"$ref": "#"}), "refers back to itself"),
        ] {
            match Shape::compile(&schema) {
                Err(Unfit::Invalid(what)) => assert!(what.contains(says), "{what}"),
                other => panic!("{schema}: {other:?}"),
            }
        }
    }
}

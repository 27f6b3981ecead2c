//! Slot schemas: the JSON Schema (draft 2020-12) of a value of an AIS type, validation of an
//! untrusted value against it (by the slot schemas' own checker, `conform`), and the field
//! defaults it declares.
//!
//! The mapping, type by type:
//!
//! | AIS type | schema |
//! |---|---|
//! | `str` | `{"type": "string"}` |
//! | `int` | `{"type": "integer"}` |
//! | `float` | `{"type": "number"}` |
//! | `bool` | `{"type": "boolean"}` |
//! | `any` | `{}` (every value) |
//! | `path` | `{"type": "string"}` with a description saying it is relative to the output root |
//! | `list` / `list[T]` | `{"type": "array"}` / with `items` |
//! | `dict` / `dict[str, V]` | `{"type": "object"}` / with `additionalProperties` |
//! | a declared enum | `{"type": "string", "enum": [members]}`; the type's `doc` and each member's description are kept in `description` |
//! | a declared object | `{"type": "object", "properties", "required", "additionalProperties": false}`; each field's `doc` is its `description`, each declared `default` its `default`; a field without a default is required |
//! | `outcome` | the built-in object `{ok: bool, error: str, output: str, value: any}`, `ok` required |
//!
//! Declared types are written inline where they are used. A type that contains itself (an
//! object with a field of its own type, directly or through lists and other objects) is
//! written once under the root's `$defs` and referred to with `{"$ref": "#/$defs/Name"}` where
//! it recurs, so every schema is finite. A name that resolves to no type (the validator
//! reports it as X5, so a checked program never has one) accepts any value.

use super::conform::{Shape, Unfit};
use ais_core::{Program, Type, TypeKind};
use serde_json::{Map, Value, json};

/// The dialect every slot schema declares.
pub(crate) const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The most validation errors quoted back to a model in one repair request.
const MAX_ERRORS: usize = 8;
/// The most characters of one validation error quoted back (errors quote the instance).
const MAX_ERROR_CHARS: usize = 600;

/// Builds the schema of `ty` in `program`: see the module docs.
pub(crate) fn schema_for(program: &Program, ty: &Type) -> Value {
    let mut g = Gen {
        program,
        stack: Vec::new(),
        defs: Map::new(),
        pending: Vec::new(),
    };
    let mut root = g.schema(ty);
    // Definitions of recursive types, each generated with itself on the stack so that its
    // own recursion becomes a `$ref` too.
    while let Some(name) = g.pending.pop() {
        if g.defs.contains_key(&name) {
            continue;
        }
        g.defs.insert(name.clone(), Value::Null);
        g.stack.push(name.clone());
        let def = g.named(&name);
        g.stack.pop();
        g.defs.insert(name, def);
    }
    if let Value::Object(map) = &mut root {
        let mut out = Map::new();
        out.insert("$schema".into(), json!(DRAFT));
        out.append(map);
        if !g.defs.is_empty() {
            out.insert("$defs".into(), Value::Object(g.defs));
        }
        return Value::Object(out);
    }
    root
}

struct Gen<'p> {
    program: &'p Program,
    /// The declared types being expanded, outermost first.
    stack: Vec<String>,
    /// Definitions written under `$defs` (recursive types only).
    defs: Map<String, Value>,
    /// Recursive types whose definitions are still to be written.
    pending: Vec<String>,
}

impl Gen<'_> {
    fn schema(&mut self, ty: &Type) -> Value {
        match ty {
            Type::Str => json!({"type": "string"}),
            Type::Int => json!({"type": "integer"}),
            Type::Float => json!({"type": "number"}),
            Type::Bool => json!({"type": "boolean"}),
            Type::Any | Type::Invalid(_) => json!({}),
            Type::Path => json!({
                "type": "string",
                "description": "a file path, relative to the run's output root"
            }),
            Type::List(None) => json!({"type": "array"}),
            Type::List(Some(item)) => json!({"type": "array", "items": self.schema(item)}),
            Type::Dict(None) => json!({"type": "object"}),
            Type::Dict(Some(value)) => {
                json!({"type": "object", "additionalProperties": self.schema(value)})
            }
            Type::Named(name) => {
                if self.stack.iter().any(|n| n == name) {
                    if !self.defs.contains_key(name) {
                        self.pending.push(name.clone());
                    }
                    return json!({"$ref": format!("#/$defs/{name}")});
                }
                self.stack.push(name.clone());
                let schema = self.named(name);
                self.stack.pop();
                schema
            }
        }
    }

    /// The schema of the declared type (or built-in `outcome`) `name`.
    fn named(&mut self, name: &str) -> Value {
        let Some((_, decl)) = self.program.type_decl(name) else {
            return if name == "outcome" {
                outcome_schema()
            } else {
                json!({})
            };
        };
        match &decl.kind {
            TypeKind::Enum(members) => {
                let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                let mut schema = json!({"type": "string", "enum": names});
                let described: Vec<String> = members
                    .iter()
                    .filter_map(|m| {
                        let doc = m.doc.as_deref()?.trim();
                        (!doc.is_empty()).then(|| format!("- {}: {doc}", m.name))
                    })
                    .collect();
                let mut text = decl.doc.as_deref().unwrap_or("").trim().to_owned();
                if !described.is_empty() {
                    if !text.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str("Members:\n");
                    text.push_str(&described.join("\n"));
                }
                if !text.is_empty() {
                    schema["description"] = json!(text);
                }
                schema
            }
            TypeKind::Object(fields) => {
                let mut properties = Map::new();
                let mut required = Vec::new();
                for field in fields {
                    let mut schema = match &field.ty {
                        Some(ty) => self.schema(ty),
                        None => json!({}),
                    };
                    if let Value::Object(map) = &mut schema {
                        if let Some(doc) = field.doc.as_deref().map(str::trim)
                            && !doc.is_empty()
                        {
                            // Beside a `$ref` too: draft 2020-12 allows siblings of `$ref`.
                            map.insert("description".into(), json!(doc));
                        }
                        match &field.default {
                            Some(default) => {
                                map.insert("default".into(), default.to_json());
                            }
                            None => required.push(json!(field.name)),
                        }
                    }
                    properties.insert(field.name.clone(), schema);
                }
                let mut schema = json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                });
                if let Some(doc) = decl.doc.as_deref().map(str::trim)
                    && !doc.is_empty()
                {
                    schema["description"] = json!(doc);
                }
                schema
            }
            // A declaration without a usable kind is reported by the validator (W14); its
            // values are unconstrained.
            TypeKind::Unknown(_) => json!({}),
        }
    }
}

/// The built-in `outcome` object: `ok: bool`, `error: str`, `output: str`, `value: any`.
fn outcome_schema() -> Value {
    json!({
        "type": "object",
        "description": "the outcome of a step: whether it succeeded, the error and any output",
        "properties": {
            "ok": {"type": "boolean", "description": "true when the step succeeded"},
            "error": {"type": "string", "description": "what went wrong, empty on success", "default": ""},
            "output": {"type": "string", "description": "the output produced", "default": ""},
            "value": {"description": "the value produced, if any", "default": null},
        },
        "required": ["ok"],
        "additionalProperties": false,
    })
}

/// A slot's schema for one result type, with its validator compiled once.
pub(crate) struct SlotSchema {
    /// The schema sent with the request.
    pub schema: Value,
    /// Its validator, or why it is not a usable schema.
    pub compiled: Result<Compiled, String>,
}

/// The slot schemas of one prepared program, by result type: each is built and compiled the
/// first time a slot of that type is filled, then shared by every later slot of the type
/// (SPAWN siblings included).
#[derive(Default)]
pub(crate) struct SchemaCache {
    map: std::sync::Mutex<std::collections::HashMap<ais_core::Type, std::sync::Arc<SlotSchema>>>,
}

impl SchemaCache {
    /// The schema of `ty` in `program`, built and compiled on first use.
    pub(crate) fn get(
        &self,
        program: &ais_core::Program,
        ty: &ais_core::Type,
    ) -> std::sync::Arc<SlotSchema> {
        // A poisoned lock only means another slot panicked mid-insert; the map is still whole.
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(ty.clone())
            .or_insert_with(|| {
                let schema = schema_for(program, ty);
                let compiled = Compiled::new(&schema);
                std::sync::Arc::new(SlotSchema { schema, compiled })
            })
            .clone()
    }
}

/// A schema compiled for validation: by the slot schemas' own checker ([`super::conform`])
/// whenever the schema is in their dialect — every schema [`schema_for`] writes is —, else, with
/// the `json-schema` feature, by the `jsonschema` crate.
pub(crate) struct Compiled(Checker);

enum Checker {
    Own(Shape),
    #[cfg(feature = "json-schema")]
    Full(Box<jsonschema::Validator>),
}

impl Compiled {
    /// Compiles `schema`; the error says why it is not a usable schema.
    pub(crate) fn new(schema: &Value) -> Result<Self, String> {
        let not_valid =
            |e: &dyn std::fmt::Display| format!("the slot's JSON Schema is not valid: {e}");
        match Shape::compile(schema) {
            Ok(shape) => Ok(Compiled(Checker::Own(shape))),
            Err(Unfit::Invalid(e)) => Err(not_valid(&e)),
            #[cfg(feature = "json-schema")]
            Err(Unfit::Outside(_)) => jsonschema::validator_for(schema)
                .map(|v| Compiled(Checker::Full(Box::new(v))))
                .map_err(|e| not_valid(&e)),
            #[cfg(not(feature = "json-schema"))]
            Err(Unfit::Outside(what)) => Err(outside(&what)),
        }
    }

    /// Validates `value`; the error lists the validation errors (at most [`MAX_ERRORS`]), each
    /// with the place in the value it is about.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        let (errors, more): (Vec<(String, String)>, usize) = match &self.0 {
            Checker::Own(shape) => match shape.check(value, MAX_ERRORS) {
                Ok(()) => return Ok(()),
                Err(found) => found,
            },
            #[cfg(feature = "json-schema")]
            Checker::Full(validator) => {
                let mut errors = Vec::new();
                let mut more = 0usize;
                for error in validator.iter_errors(value) {
                    if errors.len() == MAX_ERRORS {
                        more += 1;
                        continue;
                    }
                    errors.push((error.instance_path().as_str().to_owned(), error.to_string()));
                }
                (errors, more)
            }
        };
        if errors.is_empty() && more == 0 {
            return Ok(());
        }
        let mut text = errors
            .iter()
            .map(|(path, what)| {
                let place = if path.is_empty() {
                    "the value".to_owned()
                } else {
                    format!("`{path}`")
                };
                format!("at {place}: {}", super::shape::clip(what, MAX_ERROR_CHARS))
            })
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            text.push_str(&format!("; and {more} more"));
        }
        Err(text)
    }
}

/// Why a schema outside the slot schemas' dialect is refused without the `json-schema` feature.
#[cfg_attr(feature = "json-schema", allow(dead_code))]
fn outside(what: &str) -> String {
    format!(
        "the slot's JSON Schema uses {what}, which answers are not checked against in this \
         build: a slot's schema is the schema of an AIS type (`schema_for`); for any other JSON \
         Schema, {}",
        crate::feature::turn_on(crate::feature::Feature::JsonSchema)
    )
}

/// Fills in, from `schema`'s `default`s, the properties `value` leaves out — in nested objects
/// and list items too. Defaults are only ever added, never substituted for a value given.
pub(crate) fn apply_defaults(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                return;
            };
            for (name, sub) in properties {
                match map.get_mut(name) {
                    Some(v) => apply_defaults(sub, v),
                    None => {
                        if let Some(default) = sub.get("default") {
                            map.insert(name.clone(), default.clone());
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ais_core::{EnumMember, Field, Program, TypeDecl, Value as CoreValue};

    fn program(types: Vec<TypeDecl>) -> Program {
        Program {
            types: Some(types),
            ..Program::default()
        }
    }

    fn enum_decl(name: &str, doc: Option<&str>, members: &[(&str, Option<&str>)]) -> TypeDecl {
        TypeDecl {
            name: name.into(),
            kind: TypeKind::Enum(
                members
                    .iter()
                    .map(|(n, d)| EnumMember {
                        name: (*n).into(),
                        doc: d.map(Into::into),
                    })
                    .collect(),
            ),
            doc: doc.map(Into::into),
            ..TypeDecl::default()
        }
    }

    fn field(name: &str, ty: &str, doc: Option<&str>, default: Option<CoreValue>) -> Field {
        Field {
            name: name.into(),
            ty: Some(Type::parse(ty)),
            doc: doc.map(Into::into),
            default,
            ..Field::default()
        }
    }

    fn object(name: &str, fields: Vec<Field>) -> TypeDecl {
        TypeDecl {
            name: name.into(),
            kind: TypeKind::Object(fields),
            ..TypeDecl::default()
        }
    }

    fn valid(schema: &Value, value: Value) -> bool {
        Compiled::new(schema).unwrap().check(&value).is_ok()
    }

    #[test]
    fn primitives_map_to_their_json_types() {
        let p = Program::default();
        for (ty, good, bad) in [
            ("str", json!("x"), json!(1)),
            ("int", json!(3), json!(3.5)),
            ("float", json!(3.5), json!("3.5")),
            ("bool", json!(true), json!("true")),
            ("path", json!("out/plan.md"), json!(["out"])),
            ("list[str]", json!(["a", "b"]), json!(["a", 1])),
            ("list", json!([1, "a"]), json!({})),
            ("dict[str, int]", json!({"a": 1}), json!({"a": "1"})),
            ("dict", json!({"a": [1]}), json!([])),
        ] {
            let schema = schema_for(&p, &Type::parse(ty));
            assert_eq!(schema["$schema"], DRAFT, "{ty}");
            assert!(valid(&schema, good.clone()), "{ty} should accept {good}");
            assert!(!valid(&schema, bad.clone()), "{ty} should reject {bad}");
        }
        let any = schema_for(&p, &Type::Any);
        assert!(valid(&any, json!(null)) && valid(&any, json!({"x": [1]})));
    }

    #[test]
    fn an_enum_lists_its_members_and_keeps_their_descriptions() {
        let p = program(vec![enum_decl(
            "Op",
            Some("The operation to apply."),
            &[("merge", Some("join two files")), ("split", None)],
        )]);
        let schema = schema_for(&p, &Type::Named("Op".into()));
        assert_eq!(schema["type"], "string");
        assert_eq!(schema["enum"], json!(["merge", "split"]));
        assert_eq!(
            schema["description"],
            "The operation to apply.\n\nMembers:\n- merge: join two files"
        );
        assert!(valid(&schema, json!("split")));
        assert!(!valid(&schema, json!("rotate")));
    }

    #[test]
    fn an_object_has_field_docs_defaults_and_requires_the_rest() {
        let p = program(vec![
            enum_decl("Op", None, &[("merge", None), ("split", None)]),
            object(
                "Args",
                vec![
                    field("out", "str", Some("output file path"), None),
                    field("width", "int", None, Some(CoreValue::Int(612))),
                    field("op", "Op", None, None),
                ],
            ),
        ]);
        let schema = schema_for(&p, &Type::Named("Args".into()));
        assert_eq!(
            schema["properties"]["out"]["description"],
            "output file path"
        );
        assert_eq!(schema["properties"]["width"]["default"], 612);
        assert_eq!(
            schema["properties"]["op"]["enum"],
            json!(["merge", "split"])
        );
        assert_eq!(schema["required"], json!(["out", "op"]));
        assert_eq!(schema["additionalProperties"], false);
        assert!(valid(&schema, json!({"out": "a.pdf", "op": "merge"})));
        assert!(!valid(&schema, json!({"out": "a.pdf"})));
        assert!(!valid(
            &schema,
            json!({"out": "a.pdf", "op": "merge", "extra": 1})
        ));
        assert!(!valid(&schema, json!({"out": "a.pdf", "op": "fold"})));

        let mut value = json!({"out": "a.pdf", "op": "merge"});
        apply_defaults(&schema, &mut value);
        assert_eq!(value, json!({"out": "a.pdf", "op": "merge", "width": 612}));
    }

    #[test]
    fn outcome_is_the_built_in_object() {
        let schema = schema_for(&Program::default(), &Type::Named("outcome".into()));
        assert!(valid(
            &schema,
            json!({"ok": false, "error": "boom", "output": ""})
        ));
        assert!(!valid(&schema, json!({"error": "boom"})));
        let mut value = json!({"ok": true});
        apply_defaults(&schema, &mut value);
        assert_eq!(
            value,
            json!({"ok": true, "error": "", "output": "", "value": null})
        );
    }

    #[test]
    fn a_recursive_type_refers_to_its_definition() {
        let p = program(vec![object(
            "Node",
            vec![
                field("label", "str", None, None),
                field(
                    "children",
                    "list[Node]",
                    None,
                    Some(CoreValue::List(vec![])),
                ),
            ],
        )]);
        let schema = schema_for(&p, &Type::Named("Node".into()));
        assert_eq!(
            schema["properties"]["children"]["items"]["$ref"],
            "#/$defs/Node"
        );
        assert_eq!(
            schema["$defs"]["Node"]["properties"]["children"]["items"]["$ref"],
            "#/$defs/Node"
        );
        assert!(valid(
            &schema,
            json!({"label": "a", "children": [{"label": "b", "children": []}]})
        ));
        assert!(!valid(
            &schema,
            json!({"label": "a", "children": [{"children": []}]})
        ));
    }

    #[test]
    fn an_unresolved_name_accepts_anything() {
        let schema = schema_for(&Program::default(), &Type::Named("Nope".into()));
        assert!(valid(&schema, json!(42)));
    }

    #[test]
    fn validation_errors_name_the_place_and_are_bounded() {
        let schema = json!({"type": "array", "items": {"type": "integer"}});
        let compiled = Compiled::new(&schema).unwrap();
        let err = compiled.check(&json!([1, "two"])).unwrap_err();
        assert!(err.contains("`/1`") && err.contains("integer"), "{err}");
        let many: Vec<Value> = (0..20).map(|i| json!(i.to_string())).collect();
        let err = compiled.check(&Value::Array(many)).unwrap_err();
        assert!(err.ends_with("and 12 more"), "{err}");
        let long = json!("x".repeat(5000));
        let err = Compiled::new(&json!({"type": "integer"}))
            .unwrap()
            .check(&long)
            .unwrap_err();
        assert!(err.chars().count() < 700, "{}", err.len());
        assert!(Compiled::new(&json!({"type": 12})).is_err());
    }

    #[test]
    fn every_generated_schema_is_in_the_own_checkers_dialect() {
        let p = program(vec![
            enum_decl(
                "Op",
                Some("op"),
                &[("merge", Some("join")), ("split", None)],
            ),
            object(
                "Args",
                vec![
                    field("out", "str", Some("output"), None),
                    field("width", "int", None, Some(CoreValue::Int(612))),
                    field("ops", "list[Op]", None, None),
                    field("extra", "dict[str, outcome]", None, None),
                ],
            ),
            object(
                "Node",
                vec![
                    field("label", "str", None, None),
                    field("kids", "list[Node]", Some("children"), None),
                    field("args", "Args", None, None),
                ],
            ),
        ]);
        for ty in [
            "str",
            "int",
            "float",
            "bool",
            "any",
            "path",
            "list",
            "list[str]",
            "dict",
            "dict[str, Op]",
            "Op",
            "Args",
            "Node",
            "list[Node]",
            "outcome",
            "Nope",
        ] {
            let schema = schema_for(&p, &Type::parse(ty));
            assert!(Shape::compile(&schema).is_ok(), "{ty}: {schema}");
            assert!(
                matches!(Compiled::new(&schema).unwrap().0, Checker::Own(_)),
                "{ty}"
            );
        }
    }

    #[test]
    fn a_misfit_answer_gets_the_own_checkers_words() {
        let p = program(vec![
            enum_decl("Op", None, &[("merge", None), ("split", None)]),
            object(
                "Args",
                vec![
                    field("out", "str", None, None),
                    field("op", "Op", None, None),
                ],
            ),
        ]);
        let compiled = Compiled::new(&schema_for(&p, &Type::parse("list[Args]"))).unwrap();
        let err = compiled
            .check(&json!([{"out": "a.pdf", "op": "merge"}, {"out": 7, "op": "splt", "x": 1}]))
            .unwrap_err();
        assert_eq!(
            err,
            "at `/1/out`: 7 is a number, not a string; \
             at `/1/op`: \"splt\" is not one of \"merge\", \"split\"; did you mean \"split\"?; \
             at `/1`: the property \"x\" is not allowed here; the properties are \"out\", \"op\""
        );
    }

    #[test]
    fn a_schema_beyond_the_dialect_is_refused_naming_the_feature() {
        let text = outside("the keyword `minLength` at the schema's root");
        assert!(
            text.contains("`minLength`") && text.contains("`json-schema` feature"),
            "{text}"
        );
        #[cfg(not(feature = "json-schema"))]
        assert_eq!(
            Compiled::new(&json!({"type": "string", "minLength": 1})).err(),
            Some(text)
        );
        #[cfg(feature = "json-schema")]
        {
            let full = Compiled::new(&json!({"type": "string", "minLength": 1})).unwrap();
            assert!(matches!(full.0, Checker::Full(_)));
            assert!(full.check(&json!("a")).is_ok() && full.check(&json!("")).is_err());
        }
    }

    #[test]
    fn the_cache_compiles_each_result_type_once() {
        let p = program(vec![enum_decl(
            "Mood",
            None,
            &[("up", None), ("down", None)],
        )]);
        let cache = SchemaCache::default();
        let mood = ais_core::Type::Named("Mood".into());
        let first = cache.get(&p, &mood);
        let again = cache.get(&p, &mood);
        assert!(std::sync::Arc::ptr_eq(&first, &again), "built once, shared");
        assert_eq!(first.schema, schema_for(&p, &mood));
        let compiled = first.compiled.as_ref().expect("a usable schema");
        assert!(compiled.check(&json!("up")).is_ok());
        assert!(compiled.check(&json!("sideways")).is_err());
        let text = cache.get(&p, &ais_core::Type::Str);
        assert!(!std::sync::Arc::ptr_eq(&first, &text), "one entry per type");
        assert_eq!(text.schema, schema_for(&p, &ais_core::Type::Str));
    }
}

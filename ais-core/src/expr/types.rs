//! Static types: the [`TypeEnv`] a guard or body is checked in, and the type rules.
//!
//! A carry's declared [`Type`] is read into a checker type [`Ty`]: `path` is a string,
//! declared enums and objects (and the built-in object `outcome`) are resolved by name, and an
//! untyped carry, an undeclared type name or an invalid type is `any` (checked at run time;
//! the validator reports the type itself elsewhere).

use crate::program::{Program, Type, TypeKind};
use crate::value::Value;
use indexmap::IndexMap;
use std::fmt;

/// A checker type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// Anything: checked at run time.
    Any,
    /// The type of `null` alone.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `str` (and `path`).
    Str,
    /// `list[T]`.
    List(Box<Ty>),
    /// `dict[str, V]`.
    Dict(Box<Ty>),
    /// A declared enum (a string at run time).
    Enum(String),
    /// A declared object, or the built-in `outcome` (a dict at run time).
    Object(String),
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Any => f.write_str("any"),
            Ty::Null => f.write_str("null"),
            Ty::Bool => f.write_str("bool"),
            Ty::Int => f.write_str("int"),
            Ty::Float => f.write_str("float"),
            Ty::Str => f.write_str("str"),
            Ty::List(t) if **t == Ty::Any => f.write_str("list"),
            Ty::List(t) => write!(f, "list[{t}]"),
            Ty::Dict(t) if **t == Ty::Any => f.write_str("dict"),
            Ty::Dict(t) => write!(f, "dict[str, {t}]"),
            Ty::Enum(n) | Ty::Object(n) => f.write_str(n),
        }
    }
}

impl Ty {
    /// The model type this checker type stands for (`null` becomes `any`).
    pub fn to_type(&self) -> Type {
        let inner = |t: &Ty| match t {
            Ty::Any | Ty::Null => None,
            t => Some(Box::new(t.to_type())),
        };
        match self {
            Ty::Any | Ty::Null => Type::Any,
            Ty::Bool => Type::Bool,
            Ty::Int => Type::Int,
            Ty::Float => Type::Float,
            Ty::Str => Type::Str,
            Ty::List(t) => Type::List(inner(t)),
            Ty::Dict(t) => Type::Dict(inner(t)),
            Ty::Enum(n) | Ty::Object(n) => Type::Named(n.clone()),
        }
    }

    pub(crate) fn list(t: Ty) -> Ty {
        Ty::List(Box::new(t))
    }

    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Float)
    }

    /// True for types whose values are strings at run time.
    pub(crate) fn is_stringy(&self) -> bool {
        matches!(self, Ty::Str | Ty::Enum(_))
    }
}

use crate::program::{OUTCOME, OUTCOME_FIELDS};

/// What the checker knows: the carries' types and the declared enums and objects.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeEnv {
    carries: Named<Ty>,
    enums: Named<Vec<String>>,
    objects: Named<Vec<(String, Ty)>>,
}

/// A name-keyed map in declaration order, hashed with foldhash: a program's every carry read
/// in a guard or body is looked up here, and SipHash showed in the profile of a large one.
type Named<V> = IndexMap<String, V, foldhash::fast::RandomState>;

impl TypeEnv {
    /// An environment with no carries, and the built-in object `outcome`.
    pub fn new() -> Self {
        let mut env = TypeEnv {
            carries: Named::default(),
            enums: Named::default(),
            objects: Named::default(),
        };
        let fields = OUTCOME_FIELDS
            .iter()
            .map(|(name, ty)| ((*name).to_owned(), env.resolve(ty)))
            .collect();
        env.objects.insert(OUTCOME.to_owned(), fields);
        env
    }

    /// The environment of a program: its declared types and its carries (the first
    /// declaration of a duplicated name wins; the validator reports duplicates).
    pub fn from_program(program: &Program) -> Self {
        let mut env = TypeEnv::new();
        env.add_program_types(program);
        for carry in program.carries() {
            if !env.carries.contains_key(&carry.name) {
                let ty = carry.ty.as_ref().map_or(Ty::Any, |t| env.resolve(t));
                env.carries.insert(carry.name.clone(), ty);
            }
        }
        env
    }

    /// The environment of a carry file alone: each carry's type inferred from its value
    /// (`null` and mixed collections infer `any`).
    pub fn from_values<'a>(carries: impl IntoIterator<Item = (&'a String, &'a Value)>) -> Self {
        let mut env = TypeEnv::new();
        for (name, value) in carries {
            env.carries.insert(name.clone(), infer(value, 0));
        }
        env
    }

    /// Adds a program's declared enums and objects (a declared `outcome` replaces the built-in).
    pub fn add_program_types(&mut self, program: &Program) {
        for decl in program.type_list() {
            match &decl.kind {
                TypeKind::Enum(members) => {
                    if !self.enums.contains_key(&decl.name) {
                        let names = members.iter().map(|m| m.name.clone()).collect();
                        self.enums.insert(decl.name.clone(), names);
                    }
                }
                TypeKind::Object(_) | TypeKind::Unknown(_) => {}
            }
        }
        // Objects second, so that their fields can name any declared enum; an object's fields
        // resolve against the names known so far, which is enough for field types (a field
        // typed by another object resolves because every object name is registered first).
        let objects: Vec<_> = program
            .type_list()
            .iter()
            .filter_map(|d| match &d.kind {
                TypeKind::Object(fields) => Some((d.name.clone(), fields)),
                _ => None,
            })
            .collect();
        for (name, _) in &objects {
            if name == OUTCOME || !self.objects.contains_key(name) {
                self.objects.insert(name.clone(), Vec::new());
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (name, fields) in objects {
            if !seen.insert(name.clone()) {
                continue;
            }
            let resolved = fields
                .iter()
                .map(|f| {
                    let ty = f.ty.as_ref().map_or(Ty::Any, |t| self.resolve(t));
                    (f.name.clone(), ty)
                })
                .collect();
            self.objects.insert(name, resolved);
        }
    }

    /// Declares (or redeclares) a carry.
    pub fn add_carry(&mut self, name: impl Into<String>, ty: &Type) {
        let ty = self.resolve(ty);
        self.carries.insert(name.into(), ty);
    }

    /// Declares an enum.
    pub fn add_enum(&mut self, name: impl Into<String>, members: impl IntoIterator<Item = String>) {
        self.enums
            .insert(name.into(), members.into_iter().collect());
    }

    /// Declares an object with typed fields.
    pub fn add_object(&mut self, name: impl Into<String>, fields: &[(String, Type)]) {
        let fields = fields
            .iter()
            .map(|(n, t)| (n.clone(), self.resolve(t)))
            .collect();
        self.objects.insert(name.into(), fields);
    }

    /// Reads a model type into a checker type.
    pub fn resolve(&self, ty: &Type) -> Ty {
        match ty {
            Type::Str | Type::Path => Ty::Str,
            Type::Int => Ty::Int,
            Type::Float => Ty::Float,
            Type::Bool => Ty::Bool,
            Type::Any | Type::Invalid(_) => Ty::Any,
            Type::List(t) => Ty::list(t.as_ref().map_or(Ty::Any, |t| self.resolve(t))),
            Type::Dict(t) => Ty::Dict(Box::new(t.as_ref().map_or(Ty::Any, |t| self.resolve(t)))),
            Type::Named(n) => {
                if self.enums.contains_key(n) {
                    Ty::Enum(n.clone())
                } else if self.objects.contains_key(n) {
                    Ty::Object(n.clone())
                } else {
                    Ty::Any
                }
            }
        }
    }

    /// A carry's type.
    pub fn carry(&self, name: &str) -> Option<&Ty> {
        self.carries.get(name)
    }

    /// The carry names, in declaration order.
    pub fn carry_names(&self) -> impl Iterator<Item = &str> {
        self.carries.keys().map(String::as_str)
    }

    /// An enum's members.
    pub fn enum_members(&self, name: &str) -> Option<&[String]> {
        self.enums.get(name).map(Vec::as_slice)
    }

    /// An object's fields.
    pub fn object_fields(&self, name: &str) -> Option<&[(String, Ty)]> {
        self.objects.get(name).map(Vec::as_slice)
    }

    /// True when a value of type `from` may be written into a slot of type `to`: `any` and
    /// `null` go anywhere, `int` widens to `float`, strings go into enums (membership is
    /// checked when the value is written), dicts and objects interchange, and lists and dicts
    /// by their element types.
    pub fn assignable(&self, from: &Ty, to: &Ty) -> bool {
        match (from, to) {
            (_, Ty::Any) | (Ty::Any | Ty::Null, _) => true,
            (Ty::Int, Ty::Float) => true,
            (Ty::Str | Ty::Enum(_), Ty::Str) => true,
            (Ty::Str, Ty::Enum(_)) => true,
            (Ty::Enum(a), Ty::Enum(b)) | (Ty::Object(a), Ty::Object(b)) => a == b,
            (Ty::List(a), Ty::List(b)) => self.assignable(a, b),
            (Ty::Dict(a), Ty::Dict(b)) => self.assignable(a, b),
            (Ty::Dict(_), Ty::Object(_)) | (Ty::Object(_), Ty::Dict(_)) => true,
            (a, b) => a == b,
        }
    }
}

impl Default for TypeEnv {
    /// The same as [`TypeEnv::new`]: no carries, and the built-in object `outcome`.
    fn default() -> Self {
        TypeEnv::new()
    }
}

/// True when values of the two types may be compared with `==` (and `in`): `any` and `null`
/// with everything, `int` with `float`, strings with enums, same-kind collections by their
/// elements, dicts with objects.
pub(crate) fn comparable(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Any | Ty::Null, _) | (_, Ty::Any | Ty::Null) => true,
        (x, y) if x.is_numeric() && y.is_numeric() => true,
        (Ty::Enum(x), Ty::Enum(y)) | (Ty::Object(x), Ty::Object(y)) => x == y,
        (x, y) if x.is_stringy() && y.is_stringy() => true,
        (Ty::List(x), Ty::List(y)) | (Ty::Dict(x), Ty::Dict(y)) => comparable(x, y),
        (Ty::Dict(_), Ty::Object(_)) | (Ty::Object(_), Ty::Dict(_)) => true,
        (x, y) => x == y,
    }
}

/// True when values of the two types may be ordered with `<` and friends: numbers with
/// numbers, strings with strings, bools with bools (enum members are not ordered).
pub(crate) fn orderable(a: &Ty, b: &Ty) -> bool {
    let ok = |t: &Ty| matches!(t, Ty::Any | Ty::Int | Ty::Float | Ty::Str | Ty::Bool);
    match (a, b) {
        (Ty::Any, t) | (t, Ty::Any) => ok(t),
        (x, y) if x.is_numeric() && y.is_numeric() => true,
        (Ty::Str, Ty::Str) | (Ty::Bool, Ty::Bool) => true,
        _ => false,
    }
}

/// The type of a value that is either `a` or `b`, when they agree: equal types, `int` and
/// `float` (as `float`), `null` with anything, `any` with anything (as `any`).
pub(crate) fn join(a: &Ty, b: &Ty) -> Option<Ty> {
    Some(match (a, b) {
        (x, y) if x == y => x.clone(),
        (Ty::Null, t) | (t, Ty::Null) => t.clone(),
        (Ty::Any, _) | (_, Ty::Any) => Ty::Any,
        (x, y) if x.is_numeric() && y.is_numeric() => Ty::Float,
        (Ty::Enum(_), Ty::Str) | (Ty::Str, Ty::Enum(_)) => Ty::Str,
        (Ty::List(x), Ty::List(y)) => Ty::list(join(x, y).unwrap_or(Ty::Any)),
        (Ty::Dict(x), Ty::Dict(y)) => Ty::Dict(Box::new(join(x, y).unwrap_or(Ty::Any))),
        _ => return None,
    })
}

/// The element type of a collection literal's items: their join, or `any` when they mix.
pub(crate) fn join_all<'a>(tys: impl IntoIterator<Item = &'a Ty>) -> Ty {
    let mut acc: Option<Ty> = None;
    for t in tys {
        acc = Some(match acc {
            None => t.clone(),
            Some(a) => match join(&a, t) {
                Some(j) => j,
                None => return Ty::Any,
            },
        });
    }
    match acc {
        None | Some(Ty::Null) => Ty::Any,
        Some(t) => t,
    }
}

/// Infers a value's type, to a bounded depth.
fn infer(value: &Value, depth: usize) -> Ty {
    if depth > 8 {
        return Ty::Any;
    }
    match value {
        Value::Null => Ty::Any,
        Value::Bool(_) => Ty::Bool,
        Value::Int(_) => Ty::Int,
        Value::Float(_) => Ty::Float,
        Value::Str(_) => Ty::Str,
        Value::List(items) => {
            let tys: Vec<Ty> = items.iter().take(64).map(|v| infer(v, depth + 1)).collect();
            Ty::list(if items.len() > 64 {
                Ty::Any
            } else {
                join_all(&tys)
            })
        }
        Value::Map(map) => {
            let tys: Vec<Ty> = map.values().take(64).map(|v| infer(v, depth + 1)).collect();
            Ty::Dict(Box::new(if map.len() > 64 {
                Ty::Any
            } else {
                join_all(&tys)
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_declared_and_builtin_types() {
        let mut env = TypeEnv::new();
        env.add_enum("Op", ["merge".to_owned(), "split".to_owned()]);
        assert_eq!(env.resolve(&Type::parse("Op")), Ty::Enum("Op".into()));
        assert_eq!(
            env.resolve(&Type::parse("outcome")),
            Ty::Object("outcome".into())
        );
        assert_eq!(env.resolve(&Type::parse("Nope")), Ty::Any);
        assert_eq!(env.resolve(&Type::parse("path")), Ty::Str);
        assert_eq!(
            env.resolve(&Type::parse("list[Op]")).to_type(),
            Type::parse("list[Op]")
        );
        assert_eq!(Ty::list(Ty::Any).to_type(), Type::List(None));
    }

    #[test]
    fn type_rules() {
        let env = TypeEnv::new();
        assert!(comparable(&Ty::Int, &Ty::Float));
        assert!(!comparable(&Ty::Str, &Ty::Int));
        assert!(comparable(&Ty::Enum("Op".into()), &Ty::Str));
        assert!(!comparable(
            &Ty::Enum("Op".into()),
            &Ty::Enum("Mode".into())
        ));
        assert!(orderable(&Ty::Int, &Ty::Float));
        assert!(!orderable(&Ty::Str, &Ty::Int));
        assert!(!orderable(&Ty::Null, &Ty::Int));
        assert!(env.assignable(&Ty::Int, &Ty::Float));
        assert!(!env.assignable(&Ty::Float, &Ty::Int));
        assert!(!env.assignable(&Ty::Str, &Ty::Int));
        assert!(env.assignable(&Ty::list(Ty::Str), &Ty::list(Ty::Any)));
        assert_eq!(join(&Ty::Int, &Ty::Float), Some(Ty::Float));
        assert_eq!(join(&Ty::Str, &Ty::Int), None);
        assert_eq!(join_all(&[Ty::Int, Ty::Str]), Ty::Any);
    }

    #[test]
    fn infers_types_from_values() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"n": 1, "xs": [1, 2.5], "m": {"a": "b"}, "z": null}"#)
                .unwrap();
        let Value::Map(map) = Value::from_json(&json) else {
            panic!()
        };
        let env = TypeEnv::from_values(&map);
        assert_eq!(env.carry("n"), Some(&Ty::Int));
        assert_eq!(env.carry("xs"), Some(&Ty::list(Ty::Float)));
        assert_eq!(env.carry("m"), Some(&Ty::Dict(Box::new(Ty::Str))));
        assert_eq!(env.carry("z"), Some(&Ty::Any));
    }
}

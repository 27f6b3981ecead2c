//! Declared types (§6.2), the built-in `outcome`, and type expressions (§6.1).

use super::Extras;
use crate::value::Value;
use std::fmt;

/// A declared type (§6.2).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TypeDecl {
    /// The type's name.
    pub name: String,
    /// `kind` and its contents.
    pub kind: TypeKind,
    /// `doc`.
    pub doc: Option<String>,
    /// Unknown fields.
    pub extra: Extras,
}

/// What a declared type is.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `kind: enum` with its `members`.
    Enum(Vec<EnumMember>),
    /// `kind: object` with its `fields`.
    Object(Vec<Field>),
    /// A missing or unknown `kind`, kept as written (empty when absent) and reported (W14).
    Unknown(String),
}

impl Default for TypeKind {
    fn default() -> Self {
        TypeKind::Unknown(String::new())
    }
}

/// An enum member, with its optional description.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EnumMember {
    /// The member's name.
    pub name: String,
    /// Its description (becomes the member's `sem` / schema description).
    pub doc: Option<String>,
}

/// An object type's field.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its type (`None`: untyped).
    pub ty: Option<Type>,
    /// `doc`: normative for SU instructions (it becomes the schema description).
    pub doc: Option<String>,
    /// `default`, when declared.
    pub default: Option<Value>,
    /// Unknown fields.
    pub extra: Extras,
}

/// The built-in object type `outcome` (the design's error values): what a tool or program that
/// ran yields, failed or not. This is its one definition; the binder (rule 2), the validator,
/// the expression checker and signatures all read it from here.
pub const OUTCOME: &str = "outcome";

/// The fields of [`OUTCOME`], in order, with their types: `ok: bool`, `error: str`,
/// `output: str`, `value: any`.
pub static OUTCOME_FIELDS: [(&str, Type); 4] = [
    ("ok", Type::Bool),
    ("error", Type::Str),
    ("output", Type::Str),
    ("value", Type::Any),
];

/// The fields (name and type) of the object type named `name`, given its declaration: a
/// declared `kind: object`, or the built-in [`OUTCOME`] when no type of that name is declared.
/// `None` for anything else.
pub fn object_fields<'a>(
    decl: Option<&'a TypeDecl>,
    name: &str,
) -> Option<Vec<(&'a str, Option<&'a Type>)>> {
    match decl {
        Some(decl) => match &decl.kind {
            TypeKind::Object(fields) => Some(
                fields
                    .iter()
                    .map(|f| (f.name.as_str(), f.ty.as_ref()))
                    .collect(),
            ),
            _ => None,
        },
        None if name == OUTCOME => {
            Some(OUTCOME_FIELDS.iter().map(|(n, t)| (*n, Some(t))).collect())
        }
        None => None,
    }
}

/// A type expression (§6.1): a primitive, a parameterized list or dict, or a declared name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `str`.
    Str,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `any`.
    Any,
    /// `path`: a program-controlled file path (a string at run time).
    Path,
    /// `list` (element type `None`) or `list[T]`.
    List(Option<Box<Type>>),
    /// `dict` (value type `None`) or `dict[str, V]`.
    Dict(Option<Box<Type>>),
    /// A declared enum or object, or the built-in object `outcome` — resolved by the validator.
    Named(String),
    /// Text that is not a type expression, kept as written and reported.
    Invalid(String),
}

impl Type {
    /// Parses a type expression: `str`, `int`, `float`, `bool`, `any`, `path`, `list`,
    /// `list[T]`, `dict`, `dict[str, V]`, or an identifier naming a declared type. Surrounding
    /// whitespace is ignored; anything else is [`Type::Invalid`].
    pub fn parse(text: &str) -> Type {
        let t = text.trim();
        match t {
            "str" => return Type::Str,
            "int" => return Type::Int,
            "float" => return Type::Float,
            "bool" => return Type::Bool,
            "any" => return Type::Any,
            "path" => return Type::Path,
            "list" => return Type::List(None),
            "dict" => return Type::Dict(None),
            _ => {}
        }
        if let Some(inner) = t.strip_prefix("list[").and_then(|r| r.strip_suffix(']')) {
            return match Type::parse(inner) {
                Type::Invalid(_) => Type::Invalid(t.to_owned()),
                elem => Type::List(Some(Box::new(elem))),
            };
        }
        if let Some(inner) = t.strip_prefix("dict[").and_then(|r| r.strip_suffix(']')) {
            if let Some((k, v)) = split_top_level_comma(inner)
                && k.trim() == "str"
            {
                return match Type::parse(v) {
                    Type::Invalid(_) => Type::Invalid(t.to_owned()),
                    val => Type::Dict(Some(Box::new(val))),
                };
            }
            return Type::Invalid(t.to_owned());
        }
        let mut chars = t.chars();
        let ident = matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_');
        if ident {
            Type::Named(t.to_owned())
        } else {
            Type::Invalid(t.to_owned())
        }
    }

    /// True for `list` and `list[T]`.
    pub fn is_list(&self) -> bool {
        matches!(self, Type::List(_))
    }
}

fn split_top_level_comma(s: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => return Some((&s[..i], &s[i + 1..])),
            _ => {}
        }
    }
    None
}

impl fmt::Display for Type {
    /// The canonical spelling, which [`Type::parse`] reads back to the same type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Str => f.write_str("str"),
            Type::Int => f.write_str("int"),
            Type::Float => f.write_str("float"),
            Type::Bool => f.write_str("bool"),
            Type::Any => f.write_str("any"),
            Type::Path => f.write_str("path"),
            Type::List(None) => f.write_str("list"),
            Type::List(Some(t)) => write!(f, "list[{t}]"),
            Type::Dict(None) => f.write_str("dict"),
            Type::Dict(Some(t)) => write!(f, "dict[str, {t}]"),
            Type::Named(n) | Type::Invalid(n) => f.write_str(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_and_print_back() {
        for text in [
            "str",
            "int",
            "float",
            "bool",
            "any",
            "path",
            "list",
            "list[str]",
            "dict",
            "dict[str, int]",
            "list[list[Op]]",
            "Args",
        ] {
            let ty = Type::parse(text);
            assert!(!matches!(ty, Type::Invalid(_)), "{text}");
            assert_eq!(ty.to_string(), text);
            assert_eq!(Type::parse(&ty.to_string()), ty);
        }
        assert_eq!(
            Type::parse(" list[ str ] "),
            Type::List(Some(Box::new(Type::Str)))
        );
        for bad in ["list[str", "dict[int, str]", "", "a b", "list[]"] {
            assert!(matches!(Type::parse(bad), Type::Invalid(_)), "{bad}");
        }
    }
}

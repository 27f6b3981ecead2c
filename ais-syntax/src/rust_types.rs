//! Rust types in tool signatures, read as AIS types (spec §6.1).
//!
//! | Rust | AIS |
//! |---|---|
//! | `&str`, `String`, `&String`, `Cow<str>` | `str` |
//! | `i64` and the other integer types | `int` |
//! | `f64`, `f32` | `float` |
//! | `bool` | `bool` |
//! | `Vec<T>`, `&[T]` | `list[T]` |
//! | `serde_json::Map<String, Value>` | `dict` |
//! | `HashMap<String, V>`, `BTreeMap<String, V>`, `IndexMap<String, V>` | `dict[str, V]` |
//! | `serde_json::Value`, `ais::Value` | `any` |
//! | `ArtifactPath`, `&Path`, `PathBuf` | `path` |
//! | `OutcomeValue` (`ais::OutcomeValue`) | `outcome` |
//! | `Option<T>`, `&T` | as `T` |
//! | a type the program declares | its name |
//!
//! A tool's result may be `Result<T, E>`: `T` is the result and the tool is *fallible* (its
//! `Err` becomes a routable error value, spec §10.2). `()` or no result is no result.

use ais_core::Type;
use syn::{GenericArgument, PathArguments, Type as RustType};

/// A tool result read from its Rust return type.
#[derive(Clone, Debug, PartialEq)]
pub struct RustReturn {
    /// The AIS result type; `None` for `()` or no return type.
    pub ty: Option<Type>,
    /// True when the Rust type is a `Result`.
    pub fallible: bool,
}

/// The AIS type of a Rust parameter or result type; `None` when it has no AIS reading (the
/// message names the type and what to write instead). `declared` is the program's declared
/// type names.
pub fn ais_type(ty: &RustType, declared: &[String]) -> Result<Type, String> {
    match ty {
        RustType::Reference(r) => match &*r.elem {
            RustType::Slice(s) => Ok(Type::List(Some(Box::new(ais_type(&s.elem, declared)?)))),
            RustType::Path(p) if last_ident(p).as_deref() == Some("Path") => Ok(Type::Path),
            other => ais_type(other, declared),
        },
        RustType::Paren(p) => ais_type(&p.elem, declared),
        RustType::Group(g) => ais_type(&g.elem, declared),
        RustType::Path(p) => path_type(p, declared),
        other => Err(format!(
            "`{}` has no AIS type; use `&str`/`String`, `i64`, `f64`, `bool`, `Vec<T>`, \
             `serde_json::Value`, `ais::ArtifactPath`, or a type the program declares",
            quote::quote!(#other)
        )),
    }
}

/// The type arguments of `ty` when it is a path type whose last segment is `name`
/// (`Result`, `std::io::Result`, `Option`): `None` for any other type. The macro's emitter
/// peels `Result` and `Option` with this, as [`ais_return`] reads `Result`.
pub fn named_args<'t>(ty: &'t RustType, name: &str) -> Option<Vec<&'t RustType>> {
    match ty {
        RustType::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name) => {
            Some(generic_args(p))
        }
        _ => None,
    }
}

fn last_ident(p: &syn::TypePath) -> Option<String> {
    p.path.segments.last().map(|s| s.ident.to_string())
}

fn generic_args(p: &syn::TypePath) -> Vec<&RustType> {
    match p.path.segments.last().map(|s| &s.arguments) {
        Some(PathArguments::AngleBracketed(a)) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn path_type(p: &syn::TypePath, declared: &[String]) -> Result<Type, String> {
    let name = last_ident(p).unwrap_or_default();
    let args = generic_args(p);
    let ty = match name.as_str() {
        "str" | "String" | "Cow" => Type::Str,
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => Type::Int,
        "f32" | "f64" => Type::Float,
        "bool" => Type::Bool,
        "Value" => Type::Any,
        "ArtifactPath" | "PathBuf" | "Path" => Type::Path,
        "OutcomeValue" => Type::Named("outcome".to_owned()),
        "Vec" | "VecDeque" => match args.first() {
            Some(t) => Type::List(Some(Box::new(ais_type(t, declared)?))),
            None => Type::List(None),
        },
        "Option" | "Box" | "Arc" | "Rc" => match args.first() {
            Some(t) => return ais_type(t, declared),
            None => return Err(format!("`{name}` needs its type argument")),
        },
        "Map" => Type::Dict(None),
        "HashMap" | "BTreeMap" | "IndexMap" => match args.get(1) {
            Some(v) => Type::Dict(Some(Box::new(ais_type(v, declared)?))),
            None => Type::Dict(None),
        },
        other if declared.iter().any(|d| d == other) => Type::Named(other.to_owned()),
        other => {
            // A misspelling of a declared type or of a Rust type with an AIS reading.
            let mut known: Vec<&str> = declared.iter().map(String::as_str).collect();
            known.extend(["String", "bool", "Value", "Vec", "ArtifactPath", "PathBuf"]);
            return Err(crate::words::suggest(
                format!(
                    "`{other}` has no AIS type: declare it in the program (`struct {other} {{ .. }}` \
                     or `enum {other} {{ .. }}`), or use `serde_json::Value` for any value"
                ),
                other,
                &known,
            ));
        }
    };
    Ok(ty)
}

/// A tool's result, read from its Rust return type.
pub fn ais_return(ty: Option<&RustType>, declared: &[String]) -> Result<RustReturn, String> {
    let Some(ty) = ty else {
        return Ok(RustReturn {
            ty: None,
            fallible: false,
        });
    };
    if let RustType::Tuple(t) = ty
        && t.elems.is_empty()
    {
        return Ok(RustReturn {
            ty: None,
            fallible: false,
        });
    }
    if let Some(args) = named_args(ty, "Result") {
        let inner = args.first().copied();
        let unit = matches!(inner, Some(RustType::Tuple(t)) if t.elems.is_empty());
        return Ok(RustReturn {
            ty: match inner {
                Some(t) if !unit => Some(ais_type(t, declared)?),
                _ => None,
            },
            fallible: true,
        });
    }
    Ok(RustReturn {
        ty: Some(ais_type(ty, declared)?),
        fallible: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(src: &str) -> Result<Type, String> {
        ais_type(&syn::parse_str(src).unwrap(), &["Verdict".to_owned()])
    }

    #[test]
    fn rust_types_read_as_ais_types() {
        assert_eq!(t("&str"), Ok(Type::Str));
        assert_eq!(t("String"), Ok(Type::Str));
        assert_eq!(t("i64"), Ok(Type::Int));
        assert_eq!(t("&[String]"), Ok(Type::List(Some(Box::new(Type::Str)))));
        assert_eq!(
            t("Vec<Verdict>").map(|t| t.to_string()),
            Ok("list[Verdict]".into())
        );
        assert_eq!(t("&ais::ArtifactPath"), Ok(Type::Path));
        assert_eq!(t("serde_json::Value"), Ok(Type::Any));
        assert_eq!(
            t("HashMap<String, i64>").map(|t| t.to_string()),
            Ok("dict[str, int]".into())
        );
        assert!(t("Frobnicator").unwrap_err().contains("declare it"));
    }

    #[test]
    fn results_are_fallible() {
        let r = ais_return(
            Some(&syn::parse_str("std::io::Result<String>").unwrap()),
            &[],
        );
        assert_eq!(
            r,
            Ok(RustReturn {
                ty: Some(Type::Str),
                fallible: true
            })
        );
        assert_eq!(ais_return(None, &[]).unwrap().ty, None);
    }
}

//! AIS types as Rust types, and literal values as typed Rust expressions.

use ais_core::{Program, Type, TypeKind, Value};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// An identifier for a name the user wrote, raw when it is a Rust keyword.
pub fn ident(name: &str, span: Span) -> syn::Ident {
    if syn::parse_str::<syn::Ident>(name).is_ok() {
        syn::Ident::new(name, span)
    } else {
        syn::Ident::new_raw(name, span)
    }
}

/// True when `name` is a declared enum of the program.
pub fn is_enum(program: &Program, name: &str) -> bool {
    program
        .type_decl(name)
        .is_some_and(|(_, t)| matches!(t.kind, TypeKind::Enum(_)))
}

/// The Rust type of an AIS type: `str` → `String`, `list[T]` → `Vec<T>`, a declared type →
/// its generated type, `outcome` → `ais::OutcomeValue`, `any` (and what does not resolve) →
/// `serde_json::Value`.
pub fn rust_type(ty: Option<&Type>, program: &Program) -> TokenStream {
    let p = quote!(::ais::__private);
    match ty {
        Some(Type::Str) | Some(Type::Path) => quote!(::std::string::String),
        Some(Type::Int) => quote!(i64),
        Some(Type::Float) => quote!(f64),
        Some(Type::Bool) => quote!(bool),
        Some(Type::List(inner)) => {
            let inner = rust_type(inner.as_deref(), program);
            quote!(::std::vec::Vec<#inner>)
        }
        Some(Type::Dict(None)) => {
            quote!(#p::serde_json::Map<::std::string::String, #p::serde_json::Value>)
        }
        Some(Type::Dict(Some(v))) => {
            let v = rust_type(Some(v), program);
            quote!(#p::IndexMap<::std::string::String, #v>)
        }
        Some(Type::Named(n)) if n == "outcome" => quote!(::ais::OutcomeValue),
        Some(Type::Named(n)) if program.type_decl(n).is_some() => {
            let id = format_ident!("{}", n);
            quote!(#id)
        }
        _ => quote!(#p::serde_json::Value),
    }
}

/// A typed Rust expression for a literal value of type `ty`, spanned at `span` so a value that
/// does not fit its type is a type error at the value.
pub fn rust_value(value: &Value, ty: Option<&Type>, program: &Program, span: Span) -> TokenStream {
    match (value, ty) {
        (Value::Str(s), Some(Type::Named(n))) if is_enum(program, n) => {
            let e = format_ident!("{}", n);
            let m = ident(s, span);
            quote_spanned!(span=> #e::#m)
        }
        (Value::Str(s), _) => quote_spanned!(span=> ::std::string::String::from(#s)),
        (Value::Int(i), Some(Type::Float)) => {
            let f = *i as f64;
            quote_spanned!(span=> #f)
        }
        (Value::Int(i), _) => quote_spanned!(span=> #i),
        (Value::Float(f), _) => quote_spanned!(span=> #f),
        (Value::Bool(b), _) => quote_spanned!(span=> #b),
        (Value::List(items), Some(Type::List(inner))) => {
            let items = items
                .iter()
                .map(|v| rust_value(v, inner.as_deref(), program, span));
            quote_spanned!(span=> ::std::vec![#(#items),*])
        }
        (Value::Null, _) => quote_spanned!(span=> ::std::default::Default::default()),
        (other, _) => {
            let text = other.to_json().to_string();
            quote_spanned!(span=> ::ais::__private::serde_json::from_value(::ais::__private::json(#text)).unwrap_or_default())
        }
    }
}

//! Code generation: the program type with its `AGIR`, the typed `Input` and `Report`, the
//! declared types as Rust enums and structs, and the native tool adapters. Generated code
//! reaches the facade only through `::ais::__private`.

use crate::calls::Checks;
use crate::rtypes::{ident, is_enum, rust_type, rust_value};
use ais_core::model::{Program, Type, TypeKind};
use ais_syntax::ast::{ParamDef, ProgramDef, ToolImpl, TypeBody};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};

const P: &str = "::ais::__private";

fn private() -> TokenStream {
    P.parse().unwrap_or_default()
}

fn serde_derives() -> TokenStream {
    let p = private();
    quote! {
        #[derive(#p::serde::Serialize, #p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = "::ais::__private::serde")]
        #[schemars(crate = "::ais::__private::schemars")]
    }
}

/// Everything generated for one program; `checks` is `None` for a stand-in (a program that did
/// not lower), which gets no tools.
pub fn program(def: &ProgramDef, program: &Program, checks: Option<&Checks>) -> TokenStream {
    let vis = &def.vis;
    let name = &def.ident;
    let input = format_ident!("{}Input", name);
    let report = format_ident!("{}Report", name);
    let agir = ais_core::agir::write(program);
    let program_name = program.name.clone().unwrap_or_default();
    let doc = program
        .description
        .clone()
        .unwrap_or_else(|| format!("The `{program_name}` agent program."));
    let types = declared_types(def, program);
    let (input_fields, report_fields) = carry_fields(program);
    let tools = checks.map(|c| tools(def, c)).unwrap_or_default();
    let p = private();
    let derives = serde_derives();
    let input_doc = format!("The inputs of [`{name}`]: one field per `input` carry.");
    let report_doc = format!(
        "The report of [`{name}`]: the produced carries (`None` when a run left one unset)."
    );
    quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #vis struct #name;

        #[doc = #input_doc]
        #[derive(Clone, Debug, Default, PartialEq)]
        #derives
        #vis struct #input { #input_fields }

        #[doc = #report_doc]
        #[derive(Clone, Debug, Default, PartialEq)]
        #derives
        #[serde(default)]
        #vis struct #report { #report_fields }

        #types

        impl #name {
            /// The program's canonical AG-IR text: what `ais fmt` prints for it and what
            /// `build.rs` export writes.
            pub const AGIR: &'static str = #agir;
            /// The program's name (its frontmatter `name`).
            pub const NAME: &'static str = #program_name;

            /// The program's model, read back from [`Self::AGIR`].
            pub fn program() -> #p::Program {
                #p::program(Self::AGIR, Self::NAME)
            }

            /// The program's Rust tools, registered by name with the runtime's registry.
            pub fn tools() -> #p::ToolRegistry {
                let mut registry = #p::ToolRegistry::new();
                #tools
                registry
            }
        }
    }
}

/// The `Input` fields (one per `input` carry) and the `Report` fields (every other carry).
fn carry_fields(program: &Program) -> (TokenStream, TokenStream) {
    let mut input = TokenStream::new();
    let mut report = TokenStream::new();
    for c in program.carries() {
        let field = ident(&c.name, Span::call_site());
        let ty = rust_type(c.ty.as_ref(), program);
        let doc = c
            .doc
            .clone()
            .unwrap_or_else(|| format!("The carry `{}`.", c.name));
        if c.is_input() {
            let ty = match &c.ty {
                Some(Type::Named(n)) if is_enum(program, n) => quote!(::std::option::Option<#ty>),
                _ => ty,
            };
            input.extend(quote!(#[doc = #doc] pub #field: #ty,));
        } else {
            report.extend(quote!(#[doc = #doc] pub #field: ::std::option::Option<#ty>,));
        }
    }
    (input, report)
}

fn doc_attr(doc: Option<&String>) -> TokenStream {
    match doc {
        Some(d) => quote!(#[doc = #d]),
        None => TokenStream::new(),
    }
}

/// The declared types: enums with their members, objects with their fields and defaults.
fn declared_types(def: &ProgramDef, program: &Program) -> TokenStream {
    let vis = &def.vis;
    let derives = serde_derives();
    let mut out = TokenStream::new();
    for (t, decl) in def.types.iter().zip(program.type_list()) {
        let name = ident(&t.name.text, t.name.span);
        let doc = doc_attr(decl.doc.as_ref());
        match (&t.body, &decl.kind) {
            (TypeBody::Enum(members), TypeKind::Enum(_)) => {
                let variants = members.iter().map(|(d, m)| {
                    let v = ident(&m.text, m.span);
                    let d = doc_attr(d.as_ref().map(|d| &d.text));
                    quote!(#d #v)
                });
                out.extend(quote! {
                    #doc
                    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
                    #derives
                    #[allow(non_camel_case_types)]
                    #vis enum #name { #(#variants),* }
                });
            }
            (TypeBody::Object(fields), TypeKind::Object(model)) => {
                let defs = fields.iter().zip(model).map(|(f, m)| {
                    let fname = ident(&f.name.text, f.name.span);
                    let ty = rust_type(m.ty.as_ref(), program);
                    let d = doc_attr(m.doc.as_ref());
                    quote!(#d pub #fname: #ty)
                });
                let defaults = fields.iter().zip(model).map(|(f, m)| {
                    let fname = ident(&f.name.text, f.name.span);
                    let value = match (&f.default, &m.ty) {
                        (Some(v), ty) => rust_value(&v.value, ty.as_ref(), program, v.site.start),
                        (None, Some(Type::Named(n))) if is_enum(program, n) => {
                            first_member(program, n)
                        }
                        (None, _) => quote!(::std::default::Default::default()),
                    };
                    quote!(#fname: #value)
                });
                out.extend(quote! {
                    #doc
                    #[derive(Clone, Debug, PartialEq)]
                    #derives
                    #[serde(default)]
                    #vis struct #name { #(#defs),* }

                    impl ::std::default::Default for #name {
                        fn default() -> Self {
                            #name { #(#defaults),* }
                        }
                    }
                });
            }
            _ => {}
        }
    }
    out
}

/// An enum field with no declared default starts at the enum's first member (spec §6.2: an
/// object field must have a default, or one must be synthesizable).
fn first_member(program: &Program, name: &str) -> TokenStream {
    let e = format_ident!("{}", name);
    match program.type_decl(name).map(|(_, t)| &t.kind) {
        Some(TypeKind::Enum(members)) if !members.is_empty() => {
            let m = ident(&members[0].name, Span::call_site());
            quote!(#e::#m)
        }
        _ => quote!(::std::default::Default::default()),
    }
}

/// The owned form of a parameter's type, which the adapter deserializes into: `&str` →
/// `String`, `&[T]` → `Vec<T>`, `&Path` → `PathBuf`, `&T` → `T`.
fn owned(ty: &syn::Type) -> (TokenStream, bool) {
    match ty {
        syn::Type::Reference(r) => {
            let inner = match &*r.elem {
                syn::Type::Path(p) if p.path.is_ident("str") => quote!(::std::string::String),
                syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Path") => {
                    quote!(::std::path::PathBuf)
                }
                syn::Type::Slice(s) => {
                    let e = &s.elem;
                    quote!(::std::vec::Vec<#e>)
                }
                other => other.to_token_stream(),
            };
            (inner, true)
        }
        other => (other.to_token_stream(), false),
    }
}

fn is_artifact(ty: &syn::Type) -> bool {
    let inner = match ty {
        syn::Type::Reference(r) => &*r.elem,
        other => other,
    };
    matches!(inner, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "ArtifactPath"))
}

/// The adapters of the program's Rust tools, each in a block with the tool's function and the
/// type-checked calls of the instructions that run it.
fn tools(def: &ProgramDef, checks: &Checks) -> TokenStream {
    let p = private();
    let mut out = TokenStream::new();
    for t in &def.tools {
        let (item, callee) = match &t.imp {
            ToolImpl::Inline(block) => {
                let name = &t.ident;
                let params = t
                    .params
                    .iter()
                    .map(|ParamDef { name, ty }| quote!(#name: #ty));
                let ret = t.ret.as_ref().map(|r| quote!(-> #r));
                let item = quote! {
                    #[allow(clippy::needless_pass_by_value)]
                    fn #name(#(#params),*) #ret #block
                };
                (item, name.to_token_stream())
            }
            ToolImpl::Path(path) => (TokenStream::new(), path.to_token_stream()),
            _ => continue,
        };
        if t.params.iter().any(|x| x.ty.is_none()) {
            continue;
        }
        let tool = t.ident.to_string();
        let mut lets = Vec::new();
        let mut args = Vec::new();
        for ParamDef { name, ty } in &t.params {
            let Some(ty) = ty else { continue };
            let pname = name.to_string();
            let var = format_ident!("__ais_{}", name);
            let (owned_ty, by_ref) = owned(ty);
            if is_artifact(ty) {
                lets.push(quote!(let #var = #p::artifact_arg(__args, __ctx, #tool, #pname)?;));
            } else {
                lets.push(quote!(let #var: #owned_ty = #p::arg(__args, #tool, #pname)?;));
            }
            args.push(if by_ref { quote!(&#var) } else { quote!(#var) });
        }
        let fallible = t.ret.as_ref().is_some_and(is_result_type);
        let ret = if fallible {
            quote!(#p::ret_fallible(#callee(#(#args),*), #tool))
        } else {
            quote!(#p::ret(#callee(#(#args),*), #tool))
        };
        let calls = checks.get(&tool).cloned().unwrap_or_default();
        let uses_ctx = t
            .params
            .iter()
            .any(|x| x.ty.as_ref().is_some_and(is_artifact));
        let ctx = if uses_ctx { quote!(__ctx) } else { quote!(_) };
        out.extend(quote_spanned! {t.ident.span()=>
            {
                #item
                #(#calls)*
                registry.register(#tool, #p::native(
                    |__args: &#p::ToolArgs, #ctx: &#p::ToolContext| {
                        #(#lets)*
                        #ret
                    },
                ));
            }
        });
    }
    out
}

fn is_result_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Result"))
}

/// After a parse error: a unit type for each `program Name` found in the tokens, with an empty
/// `AGIR`, so code naming the program does not add errors of its own.
pub fn parse_stand_in(input: TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut out = TokenStream::new();
    for w in tokens.windows(2) {
        if let (TokenTree::Ident(kw), TokenTree::Ident(name)) = (&w[0], &w[1])
            && kw == "program"
        {
            let p = private();
            out.extend(quote! {
                #[allow(dead_code)]
                pub struct #name;
                #[allow(dead_code)]
                impl #name {
                    /// Empty: the program did not parse.
                    pub const AGIR: &'static str = "";
                    /// Empty: the program did not parse.
                    pub const NAME: &'static str = "";
                    /// No tools: the program did not parse.
                    pub fn tools() -> #p::ToolRegistry {
                        #p::ToolRegistry::new()
                    }
                }
            });
        }
    }
    out
}

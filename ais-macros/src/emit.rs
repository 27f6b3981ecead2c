//! Code generation: the program type with its `AGIR`, the typed `Input` and `Report`, the
//! declared types as Rust enums and structs, and the native tool adapters. Generated code
//! reaches the facade only through `::ais::__private`.

use crate::calls::Checks;
use crate::rtypes::{ident, is_enum, rust_type, rust_value};
use ais_core::{Program, Type, TypeKind};
use ais_syntax::named_args;
use ais_syntax::{ParamDef, ProgramDef, ToolImpl, TypeBody};
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
    let program_name = program.name.clone().unwrap_or_default();
    let doc = program
        .description
        .clone()
        .unwrap_or_else(|| format!("The `{program_name}` agent program."));
    let types = declared_types(def, program);
    let (input_fields, report_fields) = carry_fields(program);
    let api = program_api(name, &input, &report, program);
    let linked = linked_impl(def, checks);
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

        #api

        #linked
    }
}

/// The program type's API: its `AGIR` and `NAME`, the model read back from them, its tools and
/// runtime, and `run`/`resume`/`replay` with the typed `input` and `report`.
fn program_api(
    name: &syn::Ident,
    input: &syn::Ident,
    report: &syn::Ident,
    program: &Program,
) -> TokenStream {
    let agir = ais_core::agir::write(program);
    let program_name = program.name.clone().unwrap_or_default();
    let p = private();
    quote! {
        impl #name {
            /// The program's canonical AG-IR text: what `ais fmt` prints for it and what
            /// `build.rs` export writes.
            pub const AGIR: &'static str = #agir;
            /// The program's name (its frontmatter `name`).
            pub const NAME: &'static str = #program_name;

            /// The program's model, read back from [`Self::AGIR`] once.
            pub fn program() -> &'static #p::Program {
                static PROGRAM: ::std::sync::OnceLock<#p::Program> = ::std::sync::OnceLock::new();
                PROGRAM.get_or_init(|| #p::program(Self::AGIR, Self::NAME))
            }

            /// Registers the program's Rust tools — and those of the programs it CALLs — in
            /// `registry`.
            pub fn register_tools(registry: &mut #p::ToolRegistry) {
                <Self as #p::Linked>::link_tools(registry, &mut ::std::vec::Vec::new());
            }

            /// The built-in tool library with the program's Rust tools (and those of the
            /// programs it CALLs).
            pub fn tools() -> #p::ToolRegistry {
                let mut registry = #p::ToolRegistry::with_builtins();
                Self::register_tools(&mut registry);
                registry
            }

            /// Registers the programs this one CALLs (and theirs, each once) with a runtime
            /// builder.
            pub fn add_programs(builder: #p::RuntimeBuilder) -> #p::RuntimeBuilder {
                <Self as #p::Linked>::link_programs(builder, &mut ::std::vec::Vec::new())
            }

            /// A runtime builder with the program's tools and the programs it CALLs; give it
            /// a model (`.model(..)`) and an output directory (`.out_dir(..)`), then `build()`.
            pub fn runtime() -> #p::RuntimeBuilder {
                Self::add_programs(#p::Runtime::builder().tools(Self::tools()))
            }

            /// Runs the program on `runtime` (built from [`Self::runtime`]) and returns its
            /// typed report.
            pub async fn run(
                input: #input,
                runtime: &#p::Runtime,
            ) -> ::std::result::Result<#report, ::ais::RunError> {
                #p::run(Self::program(), &input, runtime).await
            }

            /// Resumes a run of the program that paused for human input
            /// ([`::ais::RunError::Paused`]) from the pause's handle, with the human's answer,
            /// and returns its typed report (or why there is none: it may pause again).
            pub async fn resume(
                handle: &::std::path::Path,
                answer: ::std::string::String,
                runtime: &#p::Runtime,
            ) -> ::std::result::Result<#report, ::ais::RunError> {
                #p::resume(Self::program(), handle, answer, runtime).await
            }

            /// Replays a finished, journaled run of the program (a
            /// `ais::rt::journal::Recording`): every slot answered from the journal,
            /// never by a model, and every tool from the journal or live (`tools`). Returns
            /// what the replay found ([`::ais::Replayed::matches`]) and its typed report.
            pub async fn replay(
                recording: &#p::Recording,
                tools: #p::ToolReplay,
                runtime: &#p::Runtime,
            ) -> ::std::result::Result<::ais::Replayed<#report>, #p::ReplayError> {
                #p::replay(Self::program(), recording, tools, runtime).await
            }
        }
    }
}

/// `Linked` for the program type: how it registers the programs it CALLs and the Rust tools of
/// each (its own only when `checks` is given), each program once.
fn linked_impl(def: &ProgramDef, checks: Option<&Checks>) -> TokenStream {
    let name = &def.ident;
    let tools = checks.map(|c| tools(def, c)).unwrap_or_default();
    let (targets, target_names) = call_targets(def);
    let p = private();
    quote! {
        impl #p::Linked for #name {
            fn link_programs(
                builder: #p::RuntimeBuilder,
                seen: &mut ::std::vec::Vec<::std::any::TypeId>,
            ) -> #p::RuntimeBuilder {
                if !#p::first_visit::<Self>(seen) {
                    return builder;
                }
                let builder = builder #(.program(#target_names, ::std::clone::Clone::clone(#targets::program())))*;
                #(let builder = <#targets as #p::Linked>::link_programs(builder, seen);)*
                builder
            }

            fn link_tools(
                registry: &mut #p::ToolRegistry,
                seen: &mut ::std::vec::Vec<::std::any::TypeId>,
            ) {
                if !#p::first_visit::<Self>(seen) {
                    return;
                }
                #tools
                #(<#targets as #p::Linked>::link_tools(registry, seen);)*
            }
        }
    }
}

/// The `ais!` programs this one CALLs, by their Rust paths, and the target names the runtime
/// knows them by.
fn call_targets(def: &ProgramDef) -> (Vec<syn::Path>, Vec<String>) {
    let mut paths: Vec<syn::Path> = Vec::new();
    let mut names = Vec::new();
    for i in &def.instructions {
        if let Some((ais_syntax::CallTarget::Program(path), _)) = &i.target {
            let name = path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            if !names.contains(&name) {
                names.push(name);
                paths.push(path.clone());
            }
        }
    }
    (paths, names)
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
                // An input with a declared default (`= input(5)`): `None` takes the default.
                _ if c.default.is_some() => quote!(::std::option::Option<#ty>),
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

const NATIVE: &[&str] = &[
    "String", "bool", "i64", "i32", "u32", "u64", "usize", "f64", "f32", "Value",
];

/// True for a type the runtime's native adapters convert without JSON (`FromValue` /
/// `IntoValue`): the primitives, `Value`, and `Vec`/`Option` of those.
fn native(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else {
        return false;
    };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    match &last.arguments {
        syn::PathArguments::None => NATIVE.contains(&name.as_str()),
        syn::PathArguments::AngleBracketed(a) if name == "Vec" || name == "Option" => {
            matches!(a.args.first(), Some(syn::GenericArgument::Type(t)) if native(t))
        }
        _ => false,
    }
}

fn is_artifact(ty: &syn::Type) -> bool {
    let inner = match ty {
        syn::Type::Reference(r) => &*r.elem,
        other => other,
    };
    named_args(inner, "ArtifactPath").is_some()
}

/// The adapter's argument type for a parameter, and how the argument is passed to the tool:
/// `&str` takes a `String` and lends it; a type the runtime does not convert natively (a
/// declared enum or struct) travels as `Json<T>`.
fn adapter_arg(ty: &syn::Type, var: &syn::Ident) -> (TokenStream, TokenStream) {
    let p = private();
    if is_artifact(ty) {
        let pass = match ty {
            syn::Type::Reference(_) => quote!(&#var),
            _ => quote!(#var),
        };
        return (quote!(::ais::ArtifactPath), pass);
    }
    let (owned, by_ref) = match ty {
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Path(q) if q.path.is_ident("str") => {
                return (quote!(::std::string::String), quote!(&#var));
            }
            syn::Type::Slice(sl) => {
                let e = &sl.elem;
                (syn::parse_quote!(::std::vec::Vec<#e>), true)
            }
            other => (other.clone(), true),
        },
        other => (other.clone(), false),
    };
    let (arg, value) = if native(&owned) {
        (owned.to_token_stream(), quote!(#var))
    } else {
        (quote!(#p::Json<#owned>), quote!(#var.0))
    };
    let pass = if by_ref { quote!(&#value) } else { value };
    (arg, pass)
}

fn native_result(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Tuple(t) => t.elems.is_empty(),
        syn::Type::Reference(r) => matches!(&*r.elem, syn::Type::Path(p) if p.path.is_ident("str")),
        other => native(other),
    }
}

/// The tool's call, converted for the adapter's result: `Json` around a declared type.
fn adapter_result(ret: Option<&syn::Type>, call: TokenStream) -> TokenStream {
    let p = private();
    let Some(ty) = ret else {
        return call;
    };
    if let Some(args) = named_args(ty, "Result") {
        return match args.first() {
            Some(t) if !native_result(t) => quote!(#call.map(#p::Json)),
            _ => call,
        };
    }
    if native_result(ty) {
        call
    } else {
        quote!(#p::Json(#call))
    }
}

/// The adapters of the program's Rust tools, registered with the runtime's typed `fn`
/// adapters, each in a block with the tool's function and the type-checked calls of the
/// instructions that run it.
fn tools(def: &ProgramDef, checks: &Checks) -> TokenStream {
    let mut out = TokenStream::new();
    for t in &def.tools {
        if t.params.iter().any(|x| x.ty.is_none()) {
            continue;
        }
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
        let tool = t.ident.to_string();
        let names: Vec<String> = t.params.iter().map(|x| x.name.to_string()).collect();
        let mut vars = Vec::new();
        let mut args = Vec::new();
        let mut passes = Vec::new();
        for ParamDef { name, ty } in &t.params {
            let Some(ty) = ty else { continue };
            let var = format_ident!("__ais_{}", name);
            let (arg, pass) = adapter_arg(ty, &var);
            vars.push(var);
            args.push(arg);
            passes.push(pass);
        }
        let call = adapter_result(t.ret.as_ref(), quote!(#callee(#(#passes),*)));
        let calls = checks.get(&tool).cloned().unwrap_or_default();
        out.extend(quote_spanned! {t.ident.span()=>
            {
                #item
                #(#calls)*
                registry.register_fn(#tool, &[#(#names),*], |#(#vars: #args),*| #call);
            }
        });
    }
    out
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
                    /// No tools: the program did not parse.
                    pub fn register_tools(_: &mut #p::ToolRegistry) {}
                    /// An empty program: the program did not parse.
                    pub fn program() -> &'static #p::Program {
                        static PROGRAM: ::std::sync::OnceLock<#p::Program> = ::std::sync::OnceLock::new();
                        PROGRAM.get_or_init(::std::default::Default::default)
                    }
                }
                impl #p::Linked for #name {
                    fn link_programs(
                        builder: #p::RuntimeBuilder,
                        _: &mut ::std::vec::Vec<::std::any::TypeId>,
                    ) -> #p::RuntimeBuilder {
                        builder
                    }
                    fn link_tools(
                        _: &mut #p::ToolRegistry,
                        _: &mut ::std::vec::Vec<::std::any::TypeId>,
                    ) {
                    }
                }
            });
        }
    }
    out
}

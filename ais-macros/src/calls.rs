//! The calling convention, checked by rustc: for each DU instruction that runs a Rust tool,
//! the macro binds every parameter with the core's binder (spec §7) and emits an ordinary
//! typed call over stand-ins typed like the carries, each argument spanned at the DSL operand
//! it came from. A carry of the wrong type is then a type error at that operand. A parameter
//! that binds nothing (rule 6) is a macro error, unless the Rust parameter is an `Option`.

use crate::rtypes::{ident, rust_type};
use ais_core::bind::{BindSource, ParamBinding, ProgramIndex};
use ais_core::{Program, Type};
use ais_syntax::Errors;
use ais_syntax::named_args;
use ais_syntax::{InstrDef, ProgramDef, ToolDef, ToolImpl};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use std::collections::HashMap;

/// Per tool name: the type-checked (never run) calls to put beside the tool's function.
pub type Checks = HashMap<String, Vec<TokenStream>>;

/// The typed calls of every DU instruction that runs a Rust tool.
pub fn checks(def: &ProgramDef, program: &Program) -> syn::Result<Checks> {
    let mut errors = Errors::default();
    let mut out = Checks::new();
    let index = ProgramIndex::new(program);
    for (i, instr) in program.instructions().iter().enumerate() {
        let Some(d) = def.instructions.get(i) else {
            continue;
        };
        if !instr.is_du() {
            continue;
        }
        for tool in index.bound_tools(instr) {
            let Some(tdef) = def.tools.iter().find(|t| t.ident == tool.name) else {
                continue;
            };
            if !matches!(tdef.imp, ToolImpl::Inline(_) | ToolImpl::Path(_)) {
                continue;
            }
            let Some(sig) = tool
                .sig
                .as_deref()
                .and_then(|s| ais_core::sig::parse(s).ok())
            else {
                continue;
            };
            let bindings = index.bind_tool(instr, &sig, None);
            if let Some(call) = typed_call(program, d, tdef, &sig, &bindings, &mut errors) {
                out.entry(tool.name.clone()).or_default().push(call);
            }
        }
    }
    errors.finish().map(|()| out)
}

/// Where an operand was written: the read naming the carry, else the tool's name in the
/// instruction, else the instruction's id.
fn operand_span(d: &InstrDef, carry: &str) -> Span {
    d.reads
        .iter()
        .find(|r| r.text == carry)
        .map(|r| r.span)
        .or(d.tool.as_ref().map(|t| t.span))
        .unwrap_or(d.id.span)
}

fn carry_type(program: &Program, carry: &str, field: Option<&str>) -> Option<Type> {
    let ty = program.carry(carry)?.1.ty.clone();
    match (field, ty) {
        (None, ty) => ty,
        (Some(f), Some(Type::Named(n))) => match &program.type_decl(&n)?.1.kind {
            ais_core::TypeKind::Object(fields) => fields
                .iter()
                .find(|x| x.name == f)
                .and_then(|x| x.ty.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// How an argument of Rust type `ty` is passed a value `expr`: by reference for a `&T`
/// parameter, wrapped in `Some` for an `Option`.
fn pass(ty: &syn::Type, expr: TokenStream, span: Span) -> TokenStream {
    if let syn::Type::Reference(_) = ty {
        return quote_spanned!(span=> &#expr);
    }
    let Some(args) = named_args(ty, "Option") else {
        return expr;
    };
    let inner = match args.first() {
        Some(t) => pass(t, expr, span),
        None => expr,
    };
    quote_spanned!(span=> ::std::option::Option::Some(#inner))
}

fn is_option(ty: &syn::Type) -> bool {
    named_args(ty, "Option").is_some()
}

fn typed_call(
    program: &Program,
    d: &InstrDef,
    tdef: &ToolDef,
    sig: &ais_core::sig::Signature,
    bindings: &[ParamBinding],
    errors: &mut Errors,
) -> Option<TokenStream> {
    let mut lets = Vec::new();
    let mut args = Vec::new();
    for ((b, p), sp) in bindings.iter().zip(&tdef.params).zip(&sig.params) {
        let Some(rty) = &p.ty else {
            return None;
        };
        let is_path = sp.ty.as_ref() == Some(&Type::Path);
        match &b.source {
            _ if is_path => args.push(quote!(::ais::__private::carry())),
            BindSource::Carry(c) | BindSource::Field { carry: c, .. } => {
                let field = match &b.source {
                    BindSource::Field { field, .. } => Some(field.as_str()),
                    _ => None,
                };
                let span = operand_span(d, c);
                let var = ident(&format!("__ais_{c}"), span);
                let ty = rust_type(carry_type(program, c, None).as_ref(), program);
                lets.push(quote!(let #var: #ty = ::ais::__private::carry();));
                let expr = match field {
                    Some(f) => {
                        let f = ident(f, span);
                        quote_spanned!(span=> #var.#f)
                    }
                    None => var.to_token_stream(),
                };
                args.push(pass(rty, expr, span));
            }
            BindSource::Invocation(_) => args.push(quote!(::ais::__private::carry())),
            BindSource::Null if is_option(rty) => args.push(quote!(::std::option::Option::None)),
            BindSource::Null => {
                let at = d
                    .reads_span
                    .or(d.tool.as_ref().map(|t| t.span))
                    .unwrap_or(d.id.span);
                errors.push(
                    at,
                    format!(
                        "parameter `{}` of tool `{}` binds nothing here (spec §7.1 rule 6: it \
                         would be null); read a carry named `{}` in `{}`, or make the \
                         parameter an `Option`",
                        b.param, tdef.ident, b.param, d.id.text
                    ),
                );
                return None;
            }
        }
    }
    let callee = match &tdef.imp {
        ToolImpl::Path(path) => path.to_token_stream(),
        _ => tdef.ident.to_token_stream(),
    };
    Some(quote! {
        let _ = || {
            #(#lets)*
            let _ = #callee(#(#args),*);
        };
    })
}

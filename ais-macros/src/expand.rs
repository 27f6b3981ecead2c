//! The macro's phases: parse → lower → check → emit. Errors of a phase are reported together;
//! after an error the program still expands (a correctly typed stand-in) so that code using
//! it does not add errors of its own.

use ais_syntax::CallTarget;
use ais_syntax::{Diagnostic, diagnose_with};
use ais_syntax::{Lowered, lower_all};
use ais_syntax::{ProgramDef, Site};
use proc_macro2::{Punct, Spacing, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};

/// Expands one `ais! { ... }`.
pub fn expand(input: TokenStream) -> TokenStream {
    match ais_syntax::parse(input.clone()) {
        Ok(file) => {
            let lowered: Vec<_> = file.programs.iter().map(lower_all).collect();
            let block: Vec<(String, &ais_core::Program)> = file
                .programs
                .iter()
                .zip(&lowered)
                .map(|(d, (l, _))| (d.ident.to_string(), &l.program))
                .collect();
            file.programs
                .iter()
                .zip(lowered.iter())
                .map(|(def, (l, r))| program(def, l, r, &block))
                .collect()
        }
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(crate::emit::parse_stand_in(input));
            out
        }
    }
}

/// The programs of one `ais!` invocation, by their Rust names: the CALL targets it can see.
type Block<'a> = [(String, &'a ais_core::Program)];

fn program(
    def: &ProgramDef,
    lowered: &Lowered,
    lowering: &syn::Result<()>,
    block: &Block,
) -> TokenStream {
    let mut out = TokenStream::new();
    // Phases stop at their errors: a program that does not lower is not validated (its
    // findings would be about what is missing), and expands without its tools.
    if let Err(e) = lowering {
        out.extend(e.to_compile_error());
        out.extend(crate::emit::program(def, &lowered.program, None));
        return out;
    }
    // A CALL of a program that is not in the block but is close to one is a misspelling:
    // reported here, and the CALL left out of the expansion so rustc adds no E0433 of its own.
    let (def, unknown) = unknown_targets(def, block);
    let def = &def;
    let mut clean = unknown.is_empty();
    out.extend(unknown);
    let mut targets = |name: &str| {
        block
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| (*p).clone())
    };
    for d in diagnose_with(lowered, Site::one(def.ident.span()), &mut targets) {
        if d.is_error() {
            out.extend(error_at(d.site, &d.full_message()));
            clean = false;
        } else {
            out.extend(warning_at(&d));
        }
    }
    // The calling convention is checked only on a program the validator accepts: on a broken
    // one the binder would bind around the mistake and add errors of its own.
    let checks = if clean {
        match crate::calls::checks(def, &lowered.program) {
            Ok(checks) => checks,
            Err(e) => {
                out.extend(e.to_compile_error());
                Default::default()
            }
        }
    } else {
        Default::default()
    };
    out.extend(crate::emit::program(def, &lowered.program, Some(&checks)));
    out
}

/// `def` without the CALLs of a program that is not in `block` but whose name is close to
/// one there, and an X5 error at each: a misspelled target, with did-you-mean. A target with
/// a path (`other::Expert`), or one close to no program of the block, is left to rustc (it may
/// be a program imported from elsewhere).
fn unknown_targets(def: &ProgramDef, block: &Block) -> (ProgramDef, TokenStream) {
    let mut def = def.clone();
    let mut errors = TokenStream::new();
    let names: Vec<&str> = block.iter().map(|(n, _)| n.as_str()).collect();
    for instr in &mut def.instructions {
        let Some((CallTarget::Program(path), site)) = &instr.target else {
            continue;
        };
        let Some(ident) = path.get_ident().map(ToString::to_string) else {
            continue;
        };
        if names.contains(&ident.as_str()) {
            continue;
        }
        let close = ais_core::did_you_mean(&ident, names.iter().copied());
        let Some(first) = close.first() else { continue };
        let message = format!(
            "X5: CALL `{}` names the program `{ident}`, which this `ais!` does not define; did you mean `{first}`?\n  = help: write `CALL {first}(..)`, or define `program {ident} {{ .. }}` (programs in this `ais!`: {})",
            instr.id.text,
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        errors.extend(error_at(*site, &message));
        instr.target = None;
    }
    (def, errors)
}

/// A compile error over a site (its first and last token).
pub fn error_at(site: Site, message: &str) -> TokenStream {
    let mut start = Punct::new('<', Spacing::Alone);
    start.set_span(site.start);
    let mut end = Punct::new('>', Spacing::Alone);
    end.set_span(site.end);
    let tokens: TokenStream = [TokenTree::Punct(start), TokenTree::Punct(end)]
        .into_iter()
        .collect();
    syn::Error::new_spanned(tokens, message).to_compile_error()
}

/// A compiler warning at a site: the use of a deprecated item whose note is the finding,
/// spanned at the finding's token (so the warning points there, not at the macro call).
/// Stable Rust lets a macro warn no other way, so rustc words it as a deprecation: the item is
/// named so that the line reads as what it is, ``use of deprecated constant
/// `_::ais_check_warning`: G9: …``.
fn warning_at(d: &Diagnostic) -> TokenStream {
    let note = d.full_message();
    let span = d.site.start;
    let name = format_ident!("ais_check_warning", span = span);
    let use_it = quote_spanned!(span=> #name);
    quote! {
        #[allow(clippy::let_unit_value)]
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #name: () = ();
            let _ = #use_it;
        };
    }
}

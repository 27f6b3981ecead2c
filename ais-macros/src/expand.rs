//! The macro's phases: parse → lower → check → emit. Errors of a phase are reported together;
//! after an error the program still expands (a correctly typed stand-in) so that code using
//! it does not add errors of its own.

use ais_syntax::ast::{ProgramDef, Site};
use ais_syntax::diagnose::{Diagnostic, diagnose};
use ais_syntax::lower::lower_all;
use proc_macro2::{Punct, Spacing, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};

/// Expands one `ais! { ... }`.
pub fn expand(input: TokenStream) -> TokenStream {
    match ais_syntax::parse(input.clone()) {
        Ok(file) => file.programs.iter().map(program).collect(),
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(crate::emit::parse_stand_in(input));
            out
        }
    }
}

fn program(def: &ProgramDef) -> TokenStream {
    let (lowered, lowering) = lower_all(def);
    let mut out = TokenStream::new();
    // Phases stop at their errors: a program that does not lower is not validated (its
    // findings would be about what is missing), and expands without its tools.
    if let Err(e) = lowering {
        out.extend(e.to_compile_error());
        out.extend(crate::emit::program(def, &lowered.program, None));
        return out;
    }
    let mut clean = true;
    for d in diagnose(&lowered, Site::one(def.ident.span())) {
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
fn warning_at(d: &Diagnostic) -> TokenStream {
    let note = d.full_message();
    let span = d.site.start;
    let name = format_ident!("{}", d.id.as_str().to_lowercase(), span = span);
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

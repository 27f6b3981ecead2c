//! # ais-macros — the `ais!` procedural macro
//!
//! Thin by design: parse and lower with the shared front end (`ais-syntax`), validate with the
//! same checks as the `ais` CLI (`ais_core::check`), and generate code. Every error- or
//! fatal-severity finding becomes a compile error at the token it is about, led by its check id;
//! a warn finding becomes a compiler warning at its token; a program with errors still expands
//! to a correctly typed stand-in, so one mistake shows as one error.
//!
//! Use it through the facade crate: `ais::ais! { ... }` (see the `ais` crate's documentation
//! for the language and what is generated).

mod calls;
mod emit;
mod expand;
mod rtypes;

/// Writes an agent program as Rust; see the `ais` crate for the language.
#[proc_macro]
pub fn ais(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand::expand(input.into()).into()
}

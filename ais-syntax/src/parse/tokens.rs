//! Token-level helpers: any identifier (keywords included), raw token runs (the tokens between
//! two cursors, the tokens up to the next `;` of a CODE body or a guard), and the site such a
//! run covers.

use crate::ast::Site;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::Ident;
use syn::parse::ParseStream;

/// Any identifier, keywords included (`type`, `match`), where the DSL takes a name or word.
pub(super) trait ParseAnyIdent {
    fn parse_any_ident(input: ParseStream) -> syn::Result<Ident>;
}

impl ParseAnyIdent for Ident {
    fn parse_any_ident(input: ParseStream) -> syn::Result<Ident> {
        syn::ext::IdentExt::parse_any(input)
    }
}

/// The token trees from `begin` up to (not including) `end`.
pub(super) fn raw_between(begin: syn::buffer::Cursor, end: syn::buffer::Cursor) -> TokenStream {
    let mut out = TokenStream::new();
    let mut cur = begin;
    while cur != end {
        match cur.token_tree() {
            Some((tt, next)) => {
                out.extend([tt]);
                cur = next;
            }
            None => break,
        }
    }
    out
}

/// The tokens up to (not including) the next top-level `;`.
pub(super) fn tokens_until_semi(input: ParseStream) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut out = TokenStream::new();
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ';'
            {
                return Ok((out, rest));
            }
            out.extend([tt]);
            rest = next;
        }
        Ok((out, rest))
    })
}

/// The site from a token stream's first token to its last.
pub(crate) fn site_of(tokens: &TokenStream) -> Option<Site> {
    let mut iter = tokens.clone().into_iter();
    let first = iter.next()?;
    let last = iter.last().unwrap_or_else(|| first.clone());
    let end = match &last {
        TokenTree::Group(g) if g.delimiter() != Delimiter::None => g.span_close(),
        other => other.span(),
    };
    let start = match &first {
        TokenTree::Group(g) if g.delimiter() != Delimiter::None => g.span_open(),
        other => other.span(),
    };
    Some(Site::range(start, end))
}

//! `obligation r_id { kind: step, force: mandatory, bearer: agent, quote: ".." }`: an
//! obligation of the provenance record (spec §9.5).

use super::values::parse_word;
use crate::ast::{Name, ObligationDef, Site};
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token, braced};

/// One `obligation` item (the fields in any order, each at most once, commas between).
pub(super) fn parse_obligation(input: ParseStream) -> syn::Result<ObligationDef> {
    input.parse::<super::kw::obligation>()?;
    let name: Ident = input.parse()?;
    let mut def = ObligationDef {
        name: Name::from_ident(&name),
        kind: None,
        force: None,
        bearer: None,
        quote: None,
    };
    let content;
    braced!(content in input);
    while !content.is_empty() {
        let key: Ident = syn::ext::IdentExt::parse_any(&content)?;
        content.parse::<Token![:]>()?;
        let k = key.to_string();
        let slot = match k.as_str() {
            "kind" => &mut def.kind,
            "force" => &mut def.force,
            "bearer" => &mut def.bearer,
            "quote" => &mut def.quote,
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown obligation field `{k}`; expected `kind`, `force`, `bearer` or `quote`"
                    ),
                ));
            }
        };
        let value = if k == "quote" {
            let q: LitStr = content.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "`quote` is the source's words as a string literal",
                )
            })?;
            (q.value(), Site::one(q.span()))
        } else {
            parse_word(&content)?
        };
        if slot.replace(value).is_some() {
            return Err(syn::Error::new(key.span(), format!("`{k}` is given twice")));
        }
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(def)
}

//! Translation between AGS graph documents and AIS programs (docs/AGS.md, "Translation").
//!
//! [`import`] realizes a graph as an AG-IR program; [`export`] writes a program as an AGS
//! document. What one side cannot say rides in the other's extension fields — `x-ags` unknown
//! fields in AG-IR, `x-ais` extension members in AGS — so that `export(import(g))` is `g` and
//! `import(export(p))` is `p`.

mod export;
mod import;

pub use export::export;
pub use import::{ImportError, import, schedule};
pub(crate) use import::{gate_prompt, gate_verdict};

/// The AG-IR unknown field carrying what an AGS construct says beyond its realization.
pub(crate) const X_AGS: &str = "x-ags";
/// The AGS extension member carrying an AIS program AGS cannot express.
pub(crate) const X_AIS: &str = "x-ais";
/// The id of the TERMINAL an imported program ends with.
pub(crate) const TERMINAL_ID: &str = "ags_report";
/// Between a node id and an output name in a carry's name.
pub(crate) const CARRY_SEP: &str = "__";

/// The carry holding output `output` of node `node` (the node's id as an identifier,
/// [`ident`]).
pub(crate) fn carry_name(node: &str, output: &str) -> String {
    format!("{}{CARRY_SEP}{output}", ident(node))
}

/// A node id as an identifier the AIS expression language reads as one name. An AGS node id
/// (`[a-z0-9][a-z0-9_-]*`) may hold `-` (`my-gate__approved` would read as a subtraction) or
/// start with a digit: each `-` becomes `_H_` and a leading digit gets the prefix `N_`. An id
/// that is already an identifier is kept as it is; node ids are lowercase, so the capitals
/// make the mapping one to one ([`node_id`] inverts it).
///
/// ```text
/// my-gate → my_H_gate      1st-pass → N_1st_H_pass      draft → draft
/// ```
pub(crate) fn ident(node: &str) -> std::borrow::Cow<'_, str> {
    let digit = node.starts_with(|c: char| c.is_ascii_digit());
    if !digit && !node.contains('-') {
        return std::borrow::Cow::Borrowed(node);
    }
    let body = node.replace('-', "_H_");
    std::borrow::Cow::Owned(if digit { format!("N_{body}") } else { body })
}

/// The node id an [`ident`] stands for.
pub(crate) fn node_id(ident: &str) -> String {
    ident
        .strip_prefix("N_")
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(ident)
        .replace("_H_", "-")
}

/// The AIS type realizing an AGS value type (§9.1); the AGS type itself is kept in `x-ags`.
pub(crate) fn ags_type_to_ais(ty: &str) -> ais_core::Type {
    ais_core::Type::parse(match ty {
        "number" => "float",
        "integer" => "int",
        "boolean" => "bool",
        "file_set" | "array" => "list[str]",
        "object" | "json" | "artifact" | "any" => "any",
        _ => "str",
    })
}

#[cfg(test)]
mod tests {
    use super::{ident, node_id};

    #[test]
    fn a_node_id_becomes_one_identifier_and_back() {
        let ids = [
            "draft", "my-gate", "a--b", "a-_b", "a_-b", "1st", "1st-pass", "n_1st", "x-h-y",
        ];
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            let name = ident(id);
            let mut chars = name.chars();
            assert!(
                chars
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{id} → {name}"
            );
            assert_eq!(node_id(&name), id, "{id} → {name}");
            assert!(seen.insert(name.into_owned()), "{id} collides");
        }
        assert_eq!(ident("my-gate"), "my_H_gate");
        assert_eq!(ident("draft"), "draft");
    }
}

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

/// The carry holding output `output` of node `node`.
pub(crate) fn carry_name(node: &str, output: &str) -> String {
    format!("{node}{CARRY_SEP}{output}")
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

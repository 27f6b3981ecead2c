//! What to write to turn on an optional part of the runtime that this build lacks: one
//! message, worded for the package the user depends on. A program built on the `ais` facade
//! (which turns on this crate's `facade` marker) is told the facade's feature and its
//! Cargo.toml line; one built on `ais-rt` directly is told this crate's.

/// An optional part of the runtime behind a Cargo feature of the same name.
/// (A build with `http` on never names it, so its variant is unused there.)
#[derive(Clone, Copy, Debug)]
pub(crate) enum Feature {
    /// The live model providers and the `http_get` built-in.
    #[cfg_attr(feature = "http", allow(dead_code))]
    Http,
    /// MCP servers and their tools.
    Mcp,
    /// Slot answers checked against any JSON Schema, not only the schemas of AIS types.
    #[cfg_attr(feature = "json-schema", allow(dead_code))]
    JsonSchema,
}

impl Feature {
    fn name(self) -> &'static str {
        match self {
            Feature::Http => "http",
            Feature::Mcp => "mcp",
            Feature::JsonSchema => "json-schema",
        }
    }
}

/// The package whose features the user sets: `ais` when this runtime was reached through the
/// facade, else `ais-rt`.
const PACKAGE: &str = if cfg!(feature = "facade") {
    "ais"
} else {
    "ais-rt"
};

/// ``turn on the `http` feature of `ais`: `ais = { version = "0.1.0", features = ["http"] }` in
/// Cargo.toml``, for the package the user depends on.
pub(crate) fn turn_on(feature: Feature) -> String {
    turn_on_in(PACKAGE, feature)
}

fn turn_on_in(package: &str, feature: Feature) -> String {
    let f = feature.name();
    format!(
        "turn on the `{f}` feature of `{package}`: `{package} = {{ version = \"{v}\", features = \
         [\"{f}\"] }}` in Cargo.toml",
        v = env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_package_the_user_depends_on() {
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            turn_on_in("ais", Feature::Http),
            format!(
                "turn on the `http` feature of `ais`: `ais = {{ version = \"{v}\", features = \
                 [\"http\"] }}` in Cargo.toml"
            )
        );
        assert!(turn_on_in("ais-rt", Feature::Mcp).contains(&format!(
            "`ais-rt = {{ version = \"{v}\", features = [\"mcp\"] }}`"
        )));
    }
}

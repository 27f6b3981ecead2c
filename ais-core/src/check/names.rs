//! Name vocabularies of the calling convention (spec §7.2, §7.4, Appendix A.4) as the checks
//! use them.

/// Bare tool-parameter names a carry must not take (§7.4, W13).
const BARE_PARAM_NAMES: [&str; 7] = ["path", "content", "text", "data", "file", "out", "dest"];

/// True when a carry name is a bare tool-parameter name (§7.4).
pub(crate) fn is_bare_param_name(name: &str) -> bool {
    BARE_PARAM_NAMES.contains(&name)
}

/// Content parameter names (§7.2).
const CONTENT_NAMES: [&str; 9] = [
    "content", "text", "data", "body", "code", "source", "markdown", "html", "payload",
];

/// Path parameter names (§7.2).
const PATH_NAMES: [&str; 12] = [
    "path",
    "out",
    "dest",
    "outfile",
    "filename",
    "file",
    "out_path",
    "output_path",
    "outpath",
    "target",
    "target_path",
    "dest_path",
];

/// True when a parameter name is a content name (§7.2).
pub(crate) fn is_content_param(name: &str) -> bool {
    CONTENT_NAMES.contains(&name)
}

/// True when a parameter name is a path name (§7.2).
pub(crate) fn is_path_param(name: &str) -> bool {
    PATH_NAMES.contains(&name)
}

/// True when a carry is path-shaped (§7.2): `path`, `filename`, or a name ending in `_path`,
/// `_file`, `_filename`, `_dest`, `_out`, `_target`; `task` never is.
pub(crate) fn is_path_shaped(name: &str) -> bool {
    if name == "task" {
        return false;
    }
    name == "path"
        || name == "filename"
        || ["_path", "_file", "_filename", "_dest", "_out", "_target"]
            .iter()
            .any(|s| name.ends_with(s))
}

//! `build.rs` export: the second driver of the front end. It finds every `ais!` invocation in
//! Rust source files (at any depth: inside modules and function bodies too), runs the same
//! parse, lowering and checks as the macro, and writes one `.agir` per program — byte for byte
//! the program's `AGIR` constant.
//!
//! In `build.rs`:
//!
//! ```no_run
//! let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("agir");
//! if let Err(e) = ais_syntax::export(&["src/agents.rs"], &out) {
//!     eprintln!("{e}");
//!     std::process::exit(1);
//! }
//! ```

use crate::ast::Site;
use crate::diagnose::diagnose;
use crate::lower::lower;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Errors found while exporting, rendered rustc-style with `file:line:col`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportError {
    /// Each error, rendered.
    pub errors: Vec<String>,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.errors.join("\n\n"))
    }
}

impl std::error::Error for ExportError {}

/// One exported program: its name and canonical AG-IR text.
#[derive(Clone, Debug, PartialEq)]
pub struct Exported {
    /// The program's `name` (its file is `NAME.agir`).
    pub name: String,
    /// The canonical AG-IR text.
    pub agir: String,
}

/// The bodies of every `ais! { ... }` (or `ais::ais!`) in a token stream, at any depth.
fn invocations(tokens: TokenStream, out: &mut Vec<TokenStream>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tt) in trees.iter().enumerate() {
        if let TokenTree::Ident(id) = tt
            && id == "ais"
            && let Some(TokenTree::Punct(bang)) = trees.get(i + 1)
            && bang.as_char() == '!'
            && let Some(TokenTree::Group(body)) = trees.get(i + 2)
        {
            out.push(body.stream());
            continue;
        }
        if let TokenTree::Group(g) = tt
            && g.delimiter() != Delimiter::None
        {
            invocations(g.stream(), out);
        }
    }
}

fn render(file: &str, span: proc_macro2::Span, message: &str) -> String {
    let at = span.start();
    let (head, help) = match message.split_once("\n  = help: ") {
        Some((h, help)) => (h, Some(help)),
        None => (message, None),
    };
    let mut out = format!("error: {head}\n  --> {file}:{}:{}", at.line, at.column + 1);
    if let Some(help) = help {
        out.push_str(&format!("\n   = help: {help}"));
    }
    out
}

/// Exports every program written with `ais!` in `text` (the contents of `file`, named in
/// errors). All of a file's errors are reported together.
pub fn export_text(text: &str, file: &str) -> Result<Vec<Exported>, ExportError> {
    let tokens = TokenStream::from_str(text).map_err(|e| ExportError {
        errors: vec![render(file, e.span(), &format!("{e}"))],
    })?;
    let mut bodies = Vec::new();
    invocations(tokens, &mut bodies);
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for body in bodies {
        let parsed = match crate::parse(body) {
            Ok(f) => f,
            Err(e) => {
                errors.extend(
                    e.into_iter()
                        .map(|e| render(file, e.span(), &e.to_string())),
                );
                continue;
            }
        };
        for def in &parsed.programs {
            let lowered = match lower(def) {
                Ok(l) => l,
                Err(e) => {
                    errors.extend(
                        e.into_iter()
                            .map(|e| render(file, e.span(), &e.to_string())),
                    );
                    continue;
                }
            };
            let found = diagnose(&lowered, Site::one(def.ident.span()));
            let mut failed = false;
            for d in found.iter().filter(|d| d.is_error()) {
                errors.push(render(file, d.site.start, &d.full_message()));
                failed = true;
            }
            if !failed {
                out.push(Exported {
                    name: lowered.program.name.clone().unwrap_or_default(),
                    agir: ais_core::agir::write(&lowered.program),
                });
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(ExportError { errors })
    }
}

/// Scans `sources`, writes one `NAME.agir` per program into `out_dir` (created if missing),
/// and prints `cargo:rerun-if-changed` for each file scanned. Returns the files written.
pub fn export(
    sources: &[impl AsRef<Path>],
    out_dir: impl AsRef<Path>,
) -> Result<Vec<PathBuf>, ExportError> {
    let out_dir = out_dir.as_ref();
    let io = |what: String, e: std::io::Error| ExportError {
        errors: vec![format!("error: {what}: {e}")],
    };
    std::fs::create_dir_all(out_dir)
        .map_err(|e| io(format!("cannot create {}", out_dir.display()), e))?;
    let mut written = Vec::new();
    let mut errors = Vec::new();
    for source in sources {
        let source = source.as_ref();
        println!("cargo:rerun-if-changed={}", source.display());
        let text = std::fs::read_to_string(source)
            .map_err(|e| io(format!("cannot read {}", source.display()), e))?;
        match export_text(&text, &source.display().to_string()) {
            Ok(programs) => {
                for p in programs {
                    let path = out_dir.join(format!("{}.agir", p.name));
                    std::fs::write(&path, &p.agir)
                        .map_err(|e| io(format!("cannot write {}", path.display()), e))?;
                    written.push(path);
                }
            }
            Err(e) => errors.extend(e.errors),
        }
    }
    if errors.is_empty() {
        Ok(written)
    } else {
        Err(ExportError { errors })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invocations_are_found_at_any_depth_and_errors_carry_file_line_col() {
        let text = "mod agents {\n    fn f() {\n        ais::ais! {\n            /// Shout.\n            program Shout {\n                carries { task: str = input, loud: str }\n                /// Shout it.\n                draft: GEN-RAW(taks) -> loud;\n                done: TERMINAL(loud);\n                draft -> done;\n            }\n        }\n    }\n}\n";
        let err = export_text(text, "src/agents.rs").unwrap_err();
        assert_eq!(err.errors.len(), 1, "{err}");
        assert!(
            err.errors[0].contains("--> src/agents.rs:8:32"),
            "{}",
            err.errors[0]
        );
        assert!(
            err.errors[0].contains("= help: write `task`"),
            "{}",
            err.errors[0]
        );
        let fixed = text.replace("(taks)", "(task)");
        let ok = export_text(&fixed, "src/agents.rs").unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].name, "shout");
        assert!(ok[0].agir.starts_with("---\nname: shout\n"));
    }
}

//! Compile-fail cases of `ais!`, one per check that can be made at compile time, each named
//! after it (`w8_dangling_read.rs`). One `TestCases` for the whole folder: each compiles a crate.
//! The `.stderr` snapshots hold only messages the macro emits itself; rustc's own type errors
//! are asserted by `macro_typecheck.rs` instead, whose wording is not pinned.
//!
//! The book's claims about which error a mistake gives are held here too: the W8 example of its
//! `ais!` chapter (`book/src/macro.md`) is `w8_readme_misspelled_read` (that chapter's program
//! with its misspelling) and its
//! error block is that case's pinned `.stderr`; and every check of spec §9 the macro can
//! report has its case.

use ais::CheckId;
use std::path::Path;

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The fenced block of the book's `ais!` chapter (without its fences) whose first line is
/// `first`.
fn readme_block(readme: &str, fence: &str, first: &str) -> String {
    let open = format!("```{fence}\n{first}");
    let at = readme
        .find(&open)
        .unwrap_or_else(|| panic!("book/src/macro.md has a ```{fence} block starting `{first}`"));
    let body = &readme[at + fence.len() + 4..];
    body[..body.find("\n```").expect("the block is closed") + 1].to_owned()
}

#[test]
fn the_books_misspelled_read_gives_the_error_the_book_shows() {
    let readme = read("book/src/macro.md");
    let program = readme_block(&readme, "rust", "use ais::ais;");
    let case = read("tests/ui/w8_readme_misspelled_read.rs");
    // The case is the chapter's program with its misspelling, nothing else.
    let misspelled = program.replace("names_version(note)", "names_version(noet)");
    assert_ne!(
        misspelled, program,
        "the chapter's program calls `names_version(note)`"
    );
    assert_eq!(case, format!("{misspelled}\nfn main() {{}}\n"));
    // Its error, pinned by `ui()` against a real compile, is the one the chapter shows.
    let shown = readme_block(&readme, "", "error: W8:");
    let pinned = read("tests/ui/w8_readme_misspelled_read.stderr")
        .replace("tests/ui/w8_readme_misspelled_read.rs", "src/main.rs");
    assert_eq!(shown.trim_end(), pinned.trim_end());
}

/// The checks of spec §9 no `ais!` program can fail, each with the reason.
const NOT_FROM_THE_MACRO: &[(CheckId, &str)] = &[(
    CheckId::G7,
    "it looks at Python tool bodies' imports and a body's `lang`; an `ais!` tool is Rust or a command",
)];

#[test]
fn every_check_the_macro_can_report_has_a_compile_fail_case_named_after_it() {
    let cases: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui"))
            .expect("tests/ui")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| n.ends_with(".rs"))
            .collect();
    for id in CheckId::ALL {
        let name = id.as_str();
        // Spec §9's checks: well-formedness W, executability X, the battery G.
        if !name.starts_with(['W', 'X', 'G']) {
            continue;
        }
        let prefix = format!("{}_", name.to_lowercase());
        let has = cases.iter().any(|c| c.starts_with(&prefix));
        let exempt = NOT_FROM_THE_MACRO.iter().find(|(c, _)| *c == id);
        match (has, exempt) {
            (true, None) | (false, Some(_)) => {}
            (false, None) => panic!("no tests/ui/{prefix}*.rs case for {name}"),
            (true, Some((_, why))) => {
                panic!("{name} has a case but is listed as not from the macro ({why})")
            }
        }
    }
}

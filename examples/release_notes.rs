//! Release notes written with `ais!`, from two programs in one file: `ReleaseNotes` filters a
//! `git log` down to the user-facing commits in Rust, CALLs `DraftChangelog` (the second
//! program: a GEN-RAW draft, then a GEN-EDIT pass that revises it for users) and saves the
//! section it returns.
//!
//! The CALL names the callee's Rust type; `ReleaseNotes::runtime()` registers the callee with
//! the runtime (through `add_programs`) and its tools with the registry, so the sub-run finds
//! it by that name. From `.agir`, the runtime finds `draft_changelog.agir` in its program
//! directory by that same name (its `walker.name`).
//!
//! Run it on the SCRIPTED model shipped beside it (canned answers, no API key, no network):
//! `cargo run --example release_notes [OUT_DIR]`; print its AG-IR: `cargo run --example
//! release_notes -- --agir` (and the callee's: `-- --agir draft_changelog`).

use ais::ais;

ais! {
    /// Draft user-facing changelog entries from a list of commit subjects.
    pub program DraftChangelog (name = "draft_changelog") {
        carries {
            /// The release the entries are for.
            task: str = input,
            /// The user-facing commit subjects, one per line.
            commits: str = input,
            /// The first draft: one bullet per change.
            draft: str,
            /// The entries, edited for users.
            entries: str,
        }

        /// Write one Markdown bullet per user-visible change in the commits, grouped under
        /// `### Added`, `### Changed` and `### Fixed`. Leave out nothing a user would notice.
        draft_entries: GEN-RAW(task, commits) -> draft;
        /// Edit the draft for the people who use the product: plain words, present tense,
        /// no commit prefixes or issue numbers. Keep every bullet and every heading.
        polish: GEN-EDIT(draft) -> entries;
        done: TERMINAL(entries);

        draft_entries -> polish -> done;
    }

    /// Write the release notes for a version from its `git log --oneline` and save them.
    pub program ReleaseNotes (name = "release_notes", shape = pipeline) {
        carries {
            /// What to release and where to save the notes (`Release 2.4.0 to CHANGELOG.md`).
            task: str = input,
            /// The version being released.
            version: str = input,
            /// `git log --oneline` since the last release.
            log: str = input,
            /// The commit subjects a user would notice, one per line.
            commits: str,
            /// The changelog entries drafted by `DraftChangelog`.
            entries: str,
            /// The release's section of the changelog.
            notes: str,
            /// Where the notes were saved.
            notes_file: str,
        }

        /// Keep the subjects of the commits a user would notice: drop the hash, and drop
        /// `chore`, `ci`, `test`, `refactor` and `docs` commits and merges.
        #[surface(SENSE)]
        tool user_facing_commits(log: &str) -> String {
            const INTERNAL: [&str; 5] = ["chore", "ci", "test", "refactor", "docs"];
            log.lines()
                .filter_map(|line| line.trim().split_once(' ').map(|(_, subject)| subject.trim()))
                .filter(|subject| {
                    let kind = subject.split([':', '(']).next().unwrap_or_default();
                    !INTERNAL.contains(&kind) && !subject.starts_with("Merge ")
                })
                .collect::<Vec<_>>()
                .join("\n")
        }

        /// Write the notes to the file the task names and return its path.
        #[surface(ACT, artifact)]
        tool save_notes(notes: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(notes)
        }

        select: CODE user_facing_commits(log) -> commits;
        /// Draft the release's changelog entries from the user-facing commits.
        changelog: CALL DraftChangelog(task, commits) -> entries;
        render: CODE(version, entries) -> notes = "## " + version + "\n\n" + entries + "\n";
        #[allow(unrouted_failure)] // a failed write ends the run as an error
        save: ACT(artifact) save_notes(notes) -> notes_file;
        done: TERMINAL(notes_file, notes);

        select -> changelog -> render -> save -> done;
    }
}

/// The log the example releases.
pub const LOG: &str = "\
9f2c1e0 feat: export orders as CSV from the account page
41d7a2b fix: keep the cart when a session expires during checkout
0b3e9aa chore: bump serde to 1.0.219
c18f5d2 ci: cache the cargo registry
7ae0c44 feat(search): search orders by SKU
e5d1b7f test: cover the CSV export's header row
2f90c3a Merge pull request #212 from shop/csv-export
";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--agir") {
        match std::env::args().nth(2).as_deref() {
            Some("draft_changelog") => print!("{}", DraftChangelog::AGIR),
            _ => print!("{}", ReleaseNotes::AGIR),
        }
        return Ok(());
    }
    let out_dir = match arg {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tempfile::tempdir()?.keep(),
    };
    std::fs::create_dir_all(&out_dir)?;
    let responses = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/release_notes.responses.json"
    );
    let model = ais::rt::llm::from_spec(&format!("scripted:{responses}"))?;
    let runtime = ReleaseNotes::runtime()
        .model(model)
        .out_dir(out_dir.clone())
        .build();
    println!("model: SCRIPTED ({responses}), not a live model");
    let input = ReleaseNotesInput {
        task: "Release 2.4.0 and write its notes to CHANGELOG-2.4.0.md".into(),
        version: "2.4.0".into(),
        log: LOG.into(),
    };
    let report = ReleaseNotes::run(input, &runtime).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    let notes_file = report.notes_file.unwrap_or_default();
    println!("notes written to {}", out_dir.join(notes_file).display());
    Ok(())
}

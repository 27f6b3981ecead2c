use ais::ais;

ais! {
    /// Draft a release note; save it once it names the version.
    pub program ReleaseNote {
        carries { task: str = input, note: str, ok: bool, saved: outcome, problem: str }

        /// True when the note names a version such as `v1.4`.
        #[surface(SENSE)]
        tool names_version(note: &str) -> bool {
            note.split_whitespace().any(|w| w.starts_with('v') && w.contains('.'))
        }

        /// Save the note; an I/O error becomes a value the program routes on.
        #[surface(ACT, artifact)]
        tool save_note(note: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(note)
        }

        /// Write a three-line release note for the change in the task, naming its version.
        draft: GEN-RAW(task) -> note;
        check: SENSE names_version(noet) -> ok;
        gate: ROUTE(ok);
        save: ACT(artifact) save_note(note) -> saved;
        explain: CODE(saved) -> problem = "not saved: " + saved.error;
        done: TERMINAL(saved);

        draft -> check -> gate;
        gate -> save if ok;
        gate -> draft else;
        save -> done if saved.ok;
        save -> explain else;
        explain -> done;
    }
}

fn main() {}

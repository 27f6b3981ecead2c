use ais::ais;

ais! {
    /// Save the note.
    program Save {
        carries { task: str = input, path: str = input, saved: str }
        #[surface(ACT, artifact)]
        tool save_note(content: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(content)
        }
        #[allow(unrouted_failure)]
        save: ACT(artifact) save_note(task) -> saved;
        done: TERMINAL(saved);
        save -> done;
    }
}

fn main() {}

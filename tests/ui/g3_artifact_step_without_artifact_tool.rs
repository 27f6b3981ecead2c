use ais::ais;

ais! {
    /// Write the note where the user gets it.
    program Deliver {
        carries { task: str = input, note: str, kept: str }
        /// Keep the note in memory (it never reaches a file).
        #[surface(ACT)]
        tool keep(note: &str) -> String { note.to_owned() }
        /// Write the note.
        draft: GEN-RAW(task) -> note;
        save: ACT(artifact) keep(note) -> kept;
        done: TERMINAL(kept);
        draft -> save -> done;
    }
}

fn main() {}

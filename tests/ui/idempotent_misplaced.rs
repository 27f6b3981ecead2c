use ais::ais;

ais! {
    /// Write a draft.
    program Drafter {
        carries { task: str = input, draft: str }
        /// Write it once.
        #[idempotent]
        write: GEN-RAW(task) -> draft;
        done: TERMINAL(draft);
        write -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str }
        knowledge style = "Capital letters only, no punctuation but exclamation marks.";
        /// Shout the task.
        draft: GEN-RAW(task) -> loud;
        done: TERMINAL(loud);
        draft -> done;
    }
}

fn main() {}

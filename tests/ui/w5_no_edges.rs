use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str }
        /// Shout the task.
        draft: GEN-RAW(task) -> loud;
        done: TERMINAL(loud);
    }
}

fn main() {}

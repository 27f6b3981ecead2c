use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str }
        /// Shout the task.
        draft: GEN-RAW(taks) -> loud;
        done: TERMINAL(loud);
        draft -> done;
    }
}

fn main() {}

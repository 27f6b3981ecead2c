use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str, tone: str }
        /// Shout the task in the given tone.
        draft: GEN-RAW(task, tone) -> loud;
        done: TERMINAL(loud);
        draft -> done;
    }
}

fn main() {}

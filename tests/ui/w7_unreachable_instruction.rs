use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str, aside: str }
        /// Shout the task.
        draft: GEN-RAW(task) -> loud;
        /// Whisper something nobody asked for.
        whisper: GEN-RAW(task) -> aside;
        done: TERMINAL(loud);
        draft -> done;
        whisper -> done;
    }
}

fn main() {}

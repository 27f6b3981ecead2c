use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str, louder: str }
        /// Shout the task.
        draft: GEN-RAW(task) -> loud;
        /// Shout it louder.
        again: GEN-RAW(loud) -> louder;
        draft -> again;
    }
}

fn main() {}

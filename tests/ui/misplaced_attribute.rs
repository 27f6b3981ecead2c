use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str }
        /// Shout the task, three times at most.
        #[cap(3)]
        draft: GEN-RAW(task) -> loud;
        done: TERMINAL(loud);
        draft -> done;
    }
}

fn main() {}

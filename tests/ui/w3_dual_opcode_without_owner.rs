use ais::ais;

ais! {
    /// Look around.
    program Look {
        carries { task: str = input, seen: str }
        /// Describe what the task points at.
        look: SENSE(task) -> seen;
        done: TERMINAL(seen);
        look -> done;
    }
}

fn main() {}

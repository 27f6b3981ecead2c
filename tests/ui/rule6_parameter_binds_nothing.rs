use ais::ais;

ais! {
    /// Pad the task.
    program Pad {
        carries { task: str = input, padded: str }
        #[surface(ACT)]
        tool pad(task: &str, width: i64) -> String { format!("{task:>width$}", width = width as usize) }
        pad_it: ACT pad(task) -> padded;
        done: TERMINAL(padded);
        pad_it -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Stamp the task.
    program Stamper {
        carries { task: str = input, stamped: str }
        /// Stamps it.
        #[surface(ACT)]
        #[idempotent(true)]
        tool stamp(task: &str) -> String { format!("[stamped] {task}") }
        mark: ACT stamp(task) -> stamped;
        done: TERMINAL(stamped);
        mark -> done;
    }
}

fn main() {}

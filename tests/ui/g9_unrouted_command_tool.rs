use ais::ais;

ais! {
    /// Check a path with a subprocess.
    program Checker {
        carries { task: str = input, checked: str }
        /// Fails unless the task names an existing path.
        tool probe(task) = command "test -e {task}";
        check: SENSE probe(task) -> checked;
        done: TERMINAL(checked);
        check -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Count the words of a file.
    program WordCount {
        carries { task: str = input, count: str }
        /// Count them.
        #[traces_to("r1")]
        count: GEN-RAW(task) -> count;
        done: TERMINAL(count);
        count -> done;
        obligation r1 {
            kind: step,
            force: mandatory,
            quote: "Count the words.",
            cohesian: adaptive,
        }
    }
}

fn main() {}

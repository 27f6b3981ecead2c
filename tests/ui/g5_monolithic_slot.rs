#![deny(deprecated)]
use ais::ais;

ais! {
    /// Write a report on the task.
    program Report {
        carries { task: str = input, report: str }
        /// Write the report, cite every source, and keep it under a page.
        #[traces_to("R1", "R2")]
        write: GEN-RAW(task) -> report;
        done: TERMINAL(report);
        write -> done;
    }
}

fn main() {}

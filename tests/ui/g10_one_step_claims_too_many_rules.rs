#![deny(deprecated)]
use ais::ais;

ais! {
    /// Tidy a list of names.
    program Tidy {
        carries { task: str = input, tidy: str }
        obligation r1 { kind: step, force: mandatory, quote: "Do step 1." }
        obligation r2 { kind: step, force: mandatory, quote: "Do step 2." }
        obligation r3 { kind: step, force: mandatory, quote: "Do step 3." }
        obligation r4 { kind: step, force: mandatory, quote: "Do step 4." }
        obligation r5 { kind: step, force: mandatory, quote: "Do step 5." }
        obligation r6 { kind: step, force: mandatory, quote: "Do step 6." }
        obligation r7 { kind: step, force: mandatory, quote: "Do step 7." }
        obligation r8 { kind: step, force: mandatory, quote: "Do step 8." }
        obligation r9 { kind: step, force: mandatory, quote: "Do step 9." }
        obligation r10 { kind: step, force: mandatory, quote: "Do step 10." }
        obligation r11 { kind: step, force: mandatory, quote: "Do step 11." }
        obligation r12 { kind: step, force: mandatory, quote: "Do step 12." }
        obligation r13 { kind: step, force: mandatory, quote: "Do step 13." }

        /// Trim, sort and join the names of the task.
        #[surface(ACT)]
        tool tidy_names(task: &str) -> String {
            let mut names: Vec<&str> = task.split(',').map(str::trim).collect();
            names.sort_unstable();
            names.join(", ")
        }

        #[traces_to("r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13")]
        tidy: ACT tidy_names(task) -> tidy;
        done: TERMINAL(tidy);
        tidy -> done;
    }
}

fn main() {}

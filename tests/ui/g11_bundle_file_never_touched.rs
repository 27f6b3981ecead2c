#![deny(deprecated)]
use ais::ais;

ais! {
    /// Answer a question about the data, after the data's checks pass.
    program Answer {
        carries { task: str = input, checked: bool, answer: str }
        obligation r_check { kind: step, force: mandatory, quote: "Run `scripts/check.py` before you answer." }
        obligation r_answer { kind: step, force: mandatory, quote: "Answer in one paragraph." }

        /// True when the task is not empty.
        #[surface(SENSE)]
        tool looks_fine(task: &str) -> bool {
            !task.trim().is_empty()
        }

        #[traces_to("r_check")]
        check: SENSE looks_fine(task) -> checked;
        /// Answer in one paragraph.
        #[traces_to("r_answer")]
        answer: GEN-RAW(task) -> answer;
        done: TERMINAL(answer);
        check -> answer -> done;
    }
}

fn main() {}

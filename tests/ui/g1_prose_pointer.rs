#![deny(deprecated)]
use ais::ais;

ais! {
    /// Fill in the form.
    program Form {
        carries { task: str = input, filled: str }
        #[resident_on(fill)]
        knowledge form_rules = "See FORMS.md for the rules.";
        /// Fill in the form from the task.
        fill: GEN-RAW(task) -> filled;
        done: TERMINAL(filled);
        fill -> done;
    }
}

fn main() {}

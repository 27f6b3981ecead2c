#![deny(deprecated)]
use ais::ais;

ais! {
    /// Save the note.
    program Saver {
        carries { task: str = input, saved: str }
        #[surface(ACT)]
        tool save_note(task: &str) -> std::io::Result<String> {
            Ok(task.to_owned())
        }
        save: ACT save_note(task) -> saved;
        done: TERMINAL(saved);
        save -> done;
    }
}

fn main() {}

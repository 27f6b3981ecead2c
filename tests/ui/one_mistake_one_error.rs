use ais::ais;

ais! {
    /// Say the task loudly.
    program Shout {
        carries { task: str = input, loud: str }
        /// Shout the task.
        draft: GEN-RAW(taks) -> loud;
        done: TERMINAL(loud);
        draft -> done;
    }
}

fn main() {
    // The program still has its type, constants and tools after the error.
    let _ = Shout::AGIR;
    let _ = Shout::tools();
    let _ = ShoutInput { task: String::new() };
    let _: Option<String> = ShoutReport::default().loud;
}

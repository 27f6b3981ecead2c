use ais::ais;

ais! {
    /// Improve the draft until it passes.
    program Fix {
        carries { task: str = input, draft: str, ok: bool }
        #[surface(SENSE)]
        tool passes(draft: &str) -> bool { draft.lines().count() > 3 }
        /// Write a first draft.
        write: GEN-RAW(task) -> draft;
        check: SENSE passes(draft) -> ok;
        /// Improve the draft: more detail, same structure.
        #[verdict(ok)]
        improve: LOOP(model)(draft) -> draft;
        done: TERMINAL(draft);
        write -> check -> improve;
        improve -> check;
        improve -> done;
    }
}

fn main() {}

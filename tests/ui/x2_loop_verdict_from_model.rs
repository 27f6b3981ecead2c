use ais::ais;

ais! {
    /// Improve the draft until a reviewer likes it.
    program Fix {
        carries { task: str = input, draft: str, ok: bool, round: int = 0 }
        /// Write a first draft.
        write: GEN-RAW(task) -> draft;
        /// Say whether the draft is good enough.
        judge: SENSE(model)(draft) -> ok;
        /// Improve the draft: more detail, same structure.
        #[verdict(ok)] #[cap(3)] #[counter(round)]
        improve: LOOP(model)(draft) -> draft;
        done: TERMINAL(draft);
        write -> judge -> improve;
        improve -> judge;
        improve -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Draft and refine at once (they cannot run at once: refine reads the draft).
    program Pair {
        carries { task: str = input, first: str, second: str }
        #[concurrency(isolation = shared_read)]
        fan: SPAWN(task);
        /// Draft it.
        draft: GEN-RAW(task) -> first;
        /// Refine the draft.
        refine: GEN-RAW(first) -> second;
        done: TERMINAL(second);
        fan -> draft;
        fan -> refine;
        draft -> done;
        refine -> done;
    }
}

fn main() {}

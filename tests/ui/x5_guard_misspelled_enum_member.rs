use ais::ais;

ais! {
    /// Review a change and merge it when approved.
    program Review {
        carries { task: str = input, verdict: Verdict, merged: str }
        /// The reviewer's decision.
        enum Verdict { approve, reject }
        /// Decide whether the change is ready.
        review: GEN-ENUM(task) -> verdict;
        /// Write the merge message.
        merge: GEN-RAW(task) -> merged;
        done: TERMINAL(merged);
        gate: ROUTE(code)(verdict);
        review -> gate;
        gate -> merge if verdict == aprove;
        gate -> done else;
        merge -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Draft and check a plan.
    program Plan {
        carries { task: str = input, plan_md: str, plan_ok: bool }
        #[surface(SENSE)]
        tool has_steps(plan_md: &str) -> bool { plan_md.contains("1.") }
        /// Write a numbered plan.
        draft: GEN-RAW(task) -> plan_md;
        verify: SENSE has_steps(plan_md) -> plan_ok;
        done: TERMINAL(plan_md);
        draft -> verify;
        verify -> done if plan_ok + 1;
        verify -> draft else;
    }
}

fn main() {}

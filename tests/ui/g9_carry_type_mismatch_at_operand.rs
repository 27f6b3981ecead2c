use ais::ais;

ais! {
    /// Count the plan's lines.
    program Plan {
        carries { task: str = input, plan_md: str, plan_ok: bool, count: int }
        #[surface(SENSE)]
        tool has_steps(plan_md: &str) -> bool { plan_md.contains("1.") }
        #[surface(SENSE)]
        tool count_lines(text: &str) -> i64 { text.lines().count() as i64 }
        /// Write a numbered plan.
        draft: GEN-RAW(task) -> plan_md;
        verify: SENSE has_steps(plan_md) -> plan_ok;
        lines: SENSE count_lines(plan_ok) -> count;
        done: TERMINAL(plan_md);
        draft -> verify -> lines -> done;
    }
}

fn main() {}

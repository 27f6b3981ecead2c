use ais::ais;

ais! {
    /// Ship after a human says yes.
    program Ship {
        carries { task: str = input, approval: str = input, shipped: str }
        /// Decide whether to ship.
        gate: ROUTE(code)(approval);
        /// Write the release notes.
        ship: GEN-RAW(task) -> shipped;
        done: TERMINAL(shipped);
        gate -> ship;
        gate -> done;
        ship -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Ship after a human says yes.
    program Ship {
        carries { task: str = input, approval: str = input, approved: bool, shipped: str }
        /// Parse the human's answer.
        parse: CODE(approval) -> approved = approval == "yes";
        /// Decide whether to ship.
        gate: ROUTE(code)(approved);
        /// Write the release notes.
        ship: GEN-RAW(task) -> shipped;
        done: TERMINAL(shipped);
        parse -> gate;
        gate -> ship;
        gate -> done;
        ship -> done;
    }
}

fn main() {}

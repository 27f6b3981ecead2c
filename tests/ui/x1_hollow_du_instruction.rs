use ais::ais;

ais! {
    /// Look around.
    program Look {
        carries { task: str = input, seen: str }
        look: SENSE(code)(task) -> seen;
        done: TERMINAL(seen);
        look -> done;
    }
}

fn main() {}

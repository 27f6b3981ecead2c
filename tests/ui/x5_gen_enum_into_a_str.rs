use ais::ais;

ais! {
    /// Triage a ticket.
    program Triage {
        carries { task: str = input, kind: str }
        /// Say whether the ticket is a bug or a feature request.
        classify: GEN-ENUM(task) -> kind;
        done: TERMINAL(kind);
        classify -> done;
    }
}

fn main() {}

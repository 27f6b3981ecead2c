use ais::ais;

ais! {
    /// Sort the request.
    program Sort {
        carries { task: str = input, kind: Kind }
        enum Kind {}
        /// Which kind of request is it?
        classify: GEN-ENUM(task) -> kind;
        done: TERMINAL(kind);
        classify -> done;
    }
}

fn main() {}

use ais::ais;

ais! {
    /// Look a contact up.
    program Lookup {
        carries { task: str = input, name: str }
        /// The contact's name.
        find: GEN-RAW(task) -> name;
        done: TERMINAL(name);
        find -> done;
    }

    /// Add the contact the task names.
    program Adder {
        carries { task: str = input, name: str }
        /// Look the contact up.
        look: CALL Lokup(task) -> name;
        done: TERMINAL(name);
        look -> done;
    }
}

fn main() {}

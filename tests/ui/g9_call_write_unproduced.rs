use ais::ais;

ais! {
    /// Look a contact up.
    program Lookup {
        carries { task: str = input, name: str, email: str }
        /// The contact's name.
        find: GEN-RAW(task) -> name;
        /// Their email address.
        mail: GEN-RAW(name) -> email;
        done: TERMINAL(name, email);
        find -> mail -> done;
    }

    /// Add the contact the task names.
    program Adder {
        carries { task: str = input, name: str, email: str, phone: str }
        /// Look the contact up.
        look: CALL Lookup(task) -> (name, email, phone);
        done: TERMINAL(name, email, phone);
        look -> done;
    }
}

fn main() {}

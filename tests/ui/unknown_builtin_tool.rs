use ais::ais;

ais! {
    /// Read the file.
    program Read {
        carries { task: str = input, page: str }
        tool reed_file;
        read: SENSE reed_file(task) -> page;
        done: TERMINAL(page);
        read -> done;
    }
}

fn main() {}

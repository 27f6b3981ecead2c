use ais::ais;

ais! {
    /// Review every file.
    program Review {
        carries { task: str = input, files: list[str] = input, reviews: list[str] }
        fan: SPAWN(files) -> reviews;
        done: TERMINAL(reviews);
        fan -> done;
    }
}

fn main() {}

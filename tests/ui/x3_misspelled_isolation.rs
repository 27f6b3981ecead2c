use ais::ais;

ais! {
    /// Review every file.
    program Review {
        carries { task: str = input, files: list[str] = input, reviews: list[str] }
        #[concurrency(isolation = shared_raed)]
        fan: SPAWN(files) -> reviews;
        done: TERMINAL(reviews);
        fan -> done;
    }
}

fn main() {}

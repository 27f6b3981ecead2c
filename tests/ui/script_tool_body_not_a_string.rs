use ais::ais;

ais! {
    /// Count the words of a file.
    program WordCount {
        carries { task: str = input, count: str }
        tool count_words(path) -> String = python def run(path): pass;
        count: ACT count_words(task) -> count;
        done: TERMINAL(count);
        count -> done;
    }
}

fn main() {}

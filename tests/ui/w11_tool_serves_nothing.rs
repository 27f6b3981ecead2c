use ais::ais;

ais! {
    /// Count the words.
    program Count {
        carries { task: str = input, words: int }
        #[surface(SENSE)]
        #[serves(count_words)]
        tool word_count(text: &str) -> i64 { text.split_whitespace().count() as i64 }
        count: SENSE word_count(task) -> words;
        done: TERMINAL(words);
        count -> done;
    }
}

fn main() {}

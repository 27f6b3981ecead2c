use ais::ais;

ais! {
    /// Echo a file's name as its content.
    program Echo {
        carries { task: str = input, src_file: str = input, echoed: str }
        #[surface(ACT)]
        tool emit(content: &str) -> String { content.to_owned() }
        echo: ACT emit(src_file) -> echoed;
        done: TERMINAL(echoed);
        echo -> done;
    }
}

fn main() {}

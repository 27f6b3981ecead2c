use ais::ais;

struct Frob;

ais! {
    /// Frobnicate.
    program Frobber {
        carries { task: str = input, result: str }
        #[surface(ACT)]
        tool frob(task: &str, f: Frob) -> String { let _ = f; task.to_owned() }
        go: ACT frob(task) -> result;
        done: TERMINAL(result);
        go -> done;
    }
}

fn main() {}

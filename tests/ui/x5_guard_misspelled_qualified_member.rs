use ais::ais;

ais! {
    /// Answer questions; drop the rest.
    program Sort {
        carries { task: str = input, kind: Kind, answer: str }
        enum Kind { question, bug }
        /// Which kind of request is it?
        classify: GEN-ENUM(task) -> kind;
        gate: ROUTE(kind);
        /// Answer the question.
        answer_it: GEN-RAW(task) -> answer;
        done: TERMINAL(answer);
        classify -> gate;
        gate -> answer_it if kind == Kind.questoin;
        gate -> done else;
        answer_it -> done;
    }
}

fn main() {}

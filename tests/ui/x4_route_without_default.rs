use ais::ais;

ais! {
    /// Sort the request.
    program Sort {
        carries { task: str = input, kind: Kind, answer: str }
        enum Kind { question, bug, idea }
        /// Which kind of request is it?
        classify: GEN-ENUM(task) -> kind;
        gate: ROUTE(kind);
        /// Answer the question.
        answer_it: GEN-RAW(task) -> answer;
        /// Triage the bug.
        triage: GEN-RAW(task) -> answer;
        done: TERMINAL(answer);
        classify -> gate;
        gate -> answer_it if kind == Kind.question;
        gate -> triage if kind == Kind.bug;
        answer_it -> done;
        triage -> done;
    }
}

fn main() {}

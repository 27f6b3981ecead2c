//! CALL between `ais!` programs: programs that CALL each other (A calls B, B calls A; a
//! program that CALLs itself) register each program and its tools once, in finite time, and
//! the CALL runs the target with its own Rust tools.

use ais::ais;

ais! {
    /// Answer a question, asking the expert when it is a hard one.
    program Asker {
        carries { task: str = input, hard: bool, answer: str }
        #[surface(SENSE)]
        tool is_hard(task: &str) -> bool { task.ends_with('?') }
        judge: SENSE is_hard(task) -> hard;
        gate: ROUTE(hard);
        /// Ask the expert.
        ask: CALL Expert(task) -> answer;
        easy: CODE(task) -> answer = "easy: " + task;
        done: TERMINAL(answer);
        judge -> gate;
        gate -> ask if hard;
        gate -> easy else;
        ask -> done;
        easy -> done;
    }

    /// Answer a hard question, handing a trivial one back to the asker.
    program Expert {
        carries { task: str = input, trivial: bool, reply: str }
        #[surface(SENSE)]
        tool is_trivial(task: &str) -> bool { task.len() < 3 }
        #[surface(ACT)]
        tool think(task: &str) -> String { format!("considered: {task}") }
        sort: SENSE is_trivial(task) -> trivial;
        gate: ROUTE(trivial);
        /// Hand the question back.
        back: CALL Asker(task) -> reply;
        work: ACT think(task) -> reply;
        done: TERMINAL(reply);
        sort -> gate;
        gate -> back if trivial;
        gate -> work else;
        back -> done;
        work -> done;
    }

    /// Count down by calling itself.
    program Countdown {
        carries { task: str = input, result: str }
        /// Count down once more.
        again: CALL Countdown(task) -> result;
        done: TERMINAL(result);
        again -> done;
    }
}

#[test]
fn programs_that_call_each_other_register_each_program_once() {
    // Before, each side registered the other without end and overflowed the stack.
    let tools = Asker::tools();
    for name in ["is_hard", "is_trivial", "think"] {
        assert!(tools.get(name).is_some(), "`{name}` is registered");
    }
    let tools = Countdown::tools();
    assert!(tools.get("read_file").is_some(), "the built-ins stay");
    let _ = Countdown::runtime().build();
}

#[tokio::test]
async fn a_call_runs_the_target_with_its_own_rust_tools() {
    let rt = Asker::runtime().out_dir(std::env::temp_dir()).build();
    let hard = Asker::run(
        AskerInput {
            task: "why is the sky blue?".into(),
        },
        &rt,
    )
    .await
    .expect("runs");
    assert_eq!(
        hard.answer.as_deref(),
        Some("considered: why is the sky blue?")
    );
    let easy = Asker::run(
        AskerInput {
            task: "hello".into(),
        },
        &rt,
    )
    .await
    .expect("runs");
    assert_eq!(easy.answer.as_deref(), Some("easy: hello"));

    // The other side of the cycle: the expert hands a trivial question back to the asker.
    let rt = Expert::runtime().out_dir(std::env::temp_dir()).build();
    let back = Expert::run(ExpertInput { task: "hi".into() }, &rt)
        .await
        .expect("runs");
    assert_eq!(back.reply.as_deref(), Some("easy: hi"));
}

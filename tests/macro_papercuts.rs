//! What a new user writing `ais!` programs ran into, each pinned by a run: an input carry with
//! a default (`= input(5)`).

use ais::ais;

ais! {
    /// Say the task and a count.
    program Repeat {
        carries {
            task: str = input,
            /// How many times; three unless the caller says.
            times: int = input(3),
            said: str,
        }
        echo: CODE(task, times) -> said = task + " x" + str(times);
        done: TERMINAL(said);
        echo -> done;
    }
}

#[tokio::test]
async fn an_input_carry_with_a_default_takes_it_unless_the_caller_gives_one() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Repeat::runtime().out_dir(dir.path().into()).build();
    let report = Repeat::run(
        RepeatInput {
            task: "ab".into(),
            times: None,
        },
        &rt,
    )
    .await
    .expect("runs with the default");
    assert_eq!(report.said.as_deref(), Some("ab x3"));
    let report = Repeat::run(
        RepeatInput {
            task: "ab".into(),
            times: Some(1),
        },
        &rt,
    )
    .await
    .expect("runs with the caller's value");
    assert_eq!(report.said.as_deref(), Some("ab x1"));
    assert!(Repeat::AGIR.contains("default: 3"), "{}", Repeat::AGIR);
}

//! The front end end to end: the DSL's programs parse, lower to the program the AG-IR reader
//! gives for the same program, and place the validator's findings at their tokens.

use ais_core::Program;
use ais_syntax::diagnose;
use ais_syntax::lower;

fn lowered(text: &str) -> ais_syntax::Lowered {
    let file = ais_syntax::parse_str(text).expect("parses");
    lower(&file.programs[0]).expect("lowers")
}

/// What the DSL cannot say the same way as Appendix C: its tools are Rust, not Python, so
/// their bodies, language and (typed) signatures differ. Everything else must be equal.
fn without_tool_bodies(mut p: Program) -> Program {
    for t in p.tools.iter_mut().flatten() {
        t.body = None;
        t.lang = None;
        t.sig = t.sig.as_deref().map(|s| {
            ais_core::sig::parse(s)
                .map(|mut sig| {
                    for param in &mut sig.params {
                        param.ty = None;
                    }
                    sig.to_string()
                })
                .unwrap_or_else(|_| s.to_owned())
        });
    }
    p
}

#[test]
fn appendix_c_in_the_dsl_lowers_to_the_agir_program() {
    let dsl = lowered(include_str!("fixtures_writing_plans.txt"));
    let agir = ais_core::agir::read(include_str!("../../examples/writing_plans.agir"))
        .expect("the example reads");
    assert_eq!(
        without_tool_bodies(dsl.program.clone()),
        without_tool_bodies(agir.program)
    );
    let body = dsl.program.tools.as_ref().unwrap()[0]
        .body
        .as_deref()
        .unwrap();
    assert_eq!(
        body,
        "fn assemble_plan(header_md: &str, tasks_md: &str) -> String {\n    format!(\"{}\\n\\n{}\\n\", header_md.trim_end(), tasks_md.trim())\n}\n"
    );
    assert_eq!(
        dsl.program.tools.as_ref().unwrap()[2].sig.as_deref(),
        Some("(plan_md: str, path: path) -> str")
    );
}

#[test]
fn the_design_example_parses_lowers_and_checks_clean() {
    let text = r####"
        /// Create a detailed implementation plan with bite-sized TDD tasks.
        pub program WritingPlans (name = "writing_plans", shape = pipeline) {
            carries {
                task: str = input,
                header_md: str,
                tasks_md: str,
                plan_md: str,
                plan_ok: bool,
                plan_file: str,
            }

            #[resident_on(write_tasks)]
            knowledge task_format = "Break the work into bite-sized tasks. ...";

            /// Join the header and the task sections into one plan document.
            #[surface(ACT)]
            tool assemble_plan(header_md: &str, tasks_md: &str) -> String {
                format!("{}\n\n{}\n", header_md.trim_end(), tasks_md.trim())
            }

            /// True when the plan actually contains task sections.
            #[surface(SENSE)]
            tool verify_has_tasks(plan_md: &str) -> bool {
                plan_md.lines().any(|l| l.starts_with("### Task"))
            }

            /// Write the finished plan and return its path.
            #[surface(ACT, artifact)]
            tool save_plan(plan_md: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
                path.write(plan_md)
            }

            /// Write the plan's header: a feature name, a one-sentence goal, the stack.
            draft_header: GEN-RAW(task) -> header_md;
            /// Write the bite-sized, test-driven task sections.
            write_tasks: GEN-RAW(task, header_md) -> tasks_md;
            assemble: ACT assemble_plan(header_md, tasks_md) -> plan_md;
            verify: SENSE verify_has_tasks(plan_md) -> plan_ok;
            gate: ROUTE(plan_ok);
            save: ACT(artifact) save_plan(plan_md) -> plan_file;
            done: TERMINAL(plan_file);

            draft_header -> write_tasks -> assemble -> verify -> gate;
            gate -> save if plan_ok;
            gate -> done else;
            save -> done;
        }
    "####;
    let l = lowered(text);
    let p = &l.program;
    assert_eq!(p.instructions().len(), 7);
    let gate = p.instruction("gate").unwrap().1;
    assert_eq!(gate.owner, Some(ais_core::Owner::Code));
    assert_eq!(p.edge_list()[4].guard.as_deref(), Some("plan_ok"));
    assert_eq!(p.edge_list()[5].guard.as_deref(), Some("else"));
    let found = diagnose(&l, ais_syntax::Site::one(proc_macro2::Span::call_site()));
    let errors: Vec<_> = found
        .iter()
        .filter(|d| d.is_error())
        .map(|d| &d.message)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn a_loop_counter_is_produced_by_its_loop_and_checks_clean() {
    let text = r####"
        /// Improve the draft until it passes.
        program Fix {
            carries { task: str = input, draft: str, ok: bool, rounds: int }
            #[surface(SENSE)]
            tool passes(draft: &str) -> bool { draft.lines().count() > 3 }
            /// Write a first draft.
            write: GEN-RAW(task) -> draft;
            check: SENSE passes(draft) -> ok;
            /// Improve the draft: more detail, same structure.
            #[verdict(ok)]
            #[cap(3)]
            #[counter(rounds)]
            improve: LOOP(model)(draft) -> draft;
            done: TERMINAL(draft, rounds);
            write -> check -> improve;
            improve -> check;
            improve -> done;
        }
    "####;
    let l = lowered(text);
    let rounds = l.program.carry("rounds").unwrap().1;
    assert_eq!(rounds.produced_by.as_deref(), Some("improve"));
    let found = diagnose(&l, ais_syntax::Site::one(proc_macro2::Span::call_site()));
    let errors: Vec<_> = found.iter().map(|d| &d.message).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn a_misspelled_read_is_placed_at_its_token_with_a_suggestion() {
    let text = "program P {
        carries { task: str = input, note: str }
        /// Say it.
        draft: GEN-RAW(taks) -> note;
        done: TERMINAL(note);
        draft -> done;
    }";
    let l = lowered(text);
    let found = diagnose(&l, ais_syntax::Site::one(proc_macro2::Span::call_site()));
    let w8 = found
        .iter()
        .find(|d| d.id == ais_core::CheckId::W8)
        .expect("W8");
    assert!(w8.message.starts_with("W8: "), "{}", w8.message);
    assert!(
        w8.message.contains("did you mean `task`?"),
        "{}",
        w8.message
    );
    assert!(
        w8.help.as_deref().is_some_and(|h| h.contains("`task`")),
        "{:?}",
        w8.help
    );
    let at = w8.site.start.start();
    assert_eq!((at.line, at.column), (4, 23));
}

#[test]
fn every_opcode_and_operand_lowers() {
    let text = r####"
        /// All of it.
        program Everything (shape = "dispatch-router", agir_version = "0.1") {
            carries {
                task: str = input,
                /// The kind of request.
                kind: Kind,
                args: Args,
                items: list[str] = ["a", "b"],
                results: list[str],
                ok: bool = false,
                round: int = 0,
                fixed: str,
                sum: int,
                sub: str,
                answer: str = input,
            }
            /// What was asked.
            enum Kind { /// Make it.
                build, review }
            struct Args { /// Width in columns.
                width: int = 80, name: str = "x" }
            #[resident_on(classify, fill)]
            knowledge rules: value = {"max": 3};
            #[surface(SENSE)] tool check(fixed: &str) -> bool { !fixed.is_empty() }
            #[surface(ACT)] tool fix(task: &str) -> String = crate::fixers::fix;
            #[surface(ACT)] #[serves(run)] tool run_tests(target) = command "cargo test {target}";
            tool read_file;

            /// Pick the kind.
            classify: GEN-ENUM(task) -> kind;
            /// Fill the args.
            fill: GEN-FILL(task) -> args;
            /// Tidy the task.
            #[output(str)]
            edit: GEN-EDIT(task) -> fixed;
            route: ROUTE(kind);
            #[verdict(ok)] #[cap(3)] #[counter(round)]
            repair: LOOP fix(task) -> fixed;
            probe: SENSE check(fixed) -> ok;
            #[concurrency(isolation = private_write, max_parallel = 2)]
            fan: SPAWN(items) -> results;
            total: CODE(round) -> sum = round + 1;
            sub_run: CALL Review(task) -> sub;
            /// Ask around.
            #[autonomy(read_file)]
            look: SENSE(model)(task) -> sub;
            run: ACT(workspace)(task);
            done: TERMINAL(results);

            classify -> fill -> edit -> route;
            route -> repair if kind == Kind.build;
            route -> fan else;
            repair -> probe -> repair;
            probe -> fan if ok;
            fan -> total -> sub_run -> look -> run -> done;
            forbid classify -> done;
        }
    "####;
    let l = lowered(text);
    let p = &l.program;
    let text = ais_core::agir::write(p);
    let back = ais_core::agir::read(&text).expect("the written program reads back");
    assert_eq!(back.program, *p, "{text}");
    let repair = p.instruction("repair").unwrap().1;
    assert_eq!(
        (repair.cap, repair.counter.as_deref()),
        (Some(3), Some("round"))
    );
    assert_eq!(repair.owner, Some(ais_core::Owner::Code));
    assert_eq!(
        p.instruction("total").unwrap().1.body.as_deref(),
        Some("round + 1")
    );
    assert_eq!(
        p.instruction("sub_run").unwrap().1.target.as_deref(),
        Some("Review")
    );
    assert_eq!(
        p.edge_list()[3].guard.as_deref(),
        Some("kind == Kind.build")
    );
    assert_eq!(
        p.edge_list().last().unwrap().modality,
        Some(ais_core::Modality::Forbidden)
    );
    let tools = p.tool_list();
    assert_eq!(
        tools[1].body.as_deref(),
        Some("fn fix(task: &str) -> String { crate::fixers::fix(task) }")
    );
    assert_eq!(tools[2].sig.as_deref(), Some("(target) -> str"));
    assert_eq!(tools[3].sig.as_deref(), Some("(path) -> str"));
    assert_eq!(p.type_list()[1].doc, None);
    assert_eq!(p.carries()[1].doc.as_deref(), Some("The kind of request."));
    assert_eq!(p.shape.as_deref(), Some("dispatch-router"));
}

#[test]
fn what_cannot_lower_is_reported_all_at_once() {
    let text = "program P {
        tool f(x: Frob) -> Zap { 1 }
        tool reed_file;
        a: ACT(sideways) f(x);
    }";
    let file = ais_syntax::parse_str(text).unwrap();
    let err = lower(&file.programs[0]).unwrap_err();
    let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].contains("`Frob` has no AIS type"));
    assert!(
        messages[2].contains("did you mean `read_file`?"),
        "{}",
        messages[2]
    );
    assert!(messages[3].contains("unknown modifier `sideways`"));
}

#[test]
fn parse_errors_name_what_was_expected() {
    let err = ais_syntax::parse_str("program P { a: ACT f(x) }").unwrap_err();
    assert!(
        err.to_string()
            .contains("expected `;` after the operands to end the instruction `a`"),
        "{err}"
    );
    let err = ais_syntax::parse_str("program P { #[cap(3)] tool f; }").unwrap_err();
    assert!(
        err.to_string().contains("unknown attribute on a tool"),
        "{err}"
    );
}

/// Every word the DSL checks against a fixed list offers the close one when the author slipped
/// (`ais_core::did_you_mean`), and only then.
#[test]
fn a_misspelled_word_is_offered_the_close_allowed_one() {
    let parse_errors = [
        (
            "program P { obligation r { cohesian: adaptive } }",
            "; did you mean `cohesion`?",
        ),
        (
            "program P { source { path: \"a.md\", digets: \"x\" } }",
            "; did you mean `digest`?",
        ),
        (
            "program P { deviation { obligaton: r1 } }",
            "; did you mean `obligation`?",
        ),
        (
            "program P { mcp_server fs { comand: \"x\" } }",
            "; did you mean `command`?",
        ),
        (
            "#[concurrency(isolaton = private_write)] program P { }",
            "; did you mean `isolation`?",
        ),
        (
            "program P (shpae = pipeline) { }",
            "; did you mean `shape`?",
        ),
        (
            "program P { #[surfce(ACT)] tool f; }",
            "; did you mean `surface`?",
        ),
        (
            "program P { carrise { task: str = input } }",
            "; did you mean `carries`?",
        ),
        ("program P { toool f; }", "; did you mean `tool`?"),
    ];
    for (text, says) in parse_errors {
        let err = ais_syntax::parse_str(text).expect_err(text).to_string();
        assert!(err.ends_with(says), "{text}: {err}");
    }
    // Far from every allowed word: the list alone, no guess.
    let err = ais_syntax::parse_str("program P { obligation r { zzz: 1 } }").unwrap_err();
    assert!(!err.to_string().contains("did you mean"), "{err}");

    let text = "program P {
        struct Plan { steps: str }
        carries { task: str = input, saved: str }
        knowledge style: patern = \"Plain.\";
        tool f(x: Plna) -> Strnig { 1 }
        a: ACT(artefact) f(task) -> saved;
        done: TERMINAL(saved);
        a -> done;
    }";
    let file = ais_syntax::parse_str(text).unwrap();
    let messages: Vec<String> = lower(&file.programs[0])
        .unwrap_err()
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    for says in [
        "`Plna` has no AIS type: declare it in the program (`struct Plna { .. }` or `enum Plna { \
         .. }`), or use `serde_json::Value` for any value; did you mean `Plan`?",
        "; did you mean `String`?",
        "; did you mean `pattern`?",
        "unknown modifier `artefact`; expected `code` or `model` (the owner of a dual opcode) or \
         `artifact` / `workspace` (an ACT's surface); did you mean `artifact`?",
    ] {
        assert!(
            messages.iter().any(|m| m.ends_with(says)),
            "{says}: {messages:#?}"
        );
    }
}

#[test]
fn a_slot_names_its_model_tier_with_an_attribute() {
    let text = r####"
        program Tiers {
            carries { task: str = input, draft: str, summary: str }
            /// Write a first draft.
            #[model(small)]
            write: GEN-RAW(task) -> draft;
            /// Summarise it.
            sum: GEN-RAW(draft) -> summary;
            done: TERMINAL(summary);
            write -> sum -> done;
        }
    "####;
    let l = lowered(text);
    let ins = l.program.instructions();
    assert_eq!(ins[0].model.as_deref(), Some("small"));
    assert_eq!(ins[1].model, None);
    // The same program as AG-IR names the tier the same way.
    let agir = ais_core::agir::write(&l.program);
    assert!(agir.contains("model: small"), "{agir}");
    let err = ais_syntax::parse_str("program P { #[model(\"small\")] w: GEN-RAW(task) -> d; }");
    assert!(err.is_err(), "a tier is a name, not a string");
}

//! The text every provider sends: the system prompt (the instruction's doc and its resident
//! knowledge) and the first user message (the operands and what to answer). The protocols
//! differ only in how they carry these and the slot's history.

use super::http::excerpt;
use super::schema::{StrictSchema, unwrap_value};
use crate::llm::{Operand, Reply, SlotRequest, ToolCall};
use serde_json::Value;
use std::fmt::Write as _;

/// The system prompt: the role, the instruction and its knowledge.
pub(crate) fn system(request: &SlotRequest) -> String {
    let mut text = String::from(
        "You are the Stochastic Unit of an AIS program: you fill exactly one typed slot. \
         Do what the instruction says with the operands you are given. Answer only through the \
         structured output you are offered, with JSON that matches its schema; write no prose.",
    );
    let _ = write!(
        text,
        "\n\n# Instruction `{}` ({})\n\n{}",
        request.instruction,
        request.opcode,
        request.doc.trim()
    );
    for (name, content) in &request.knowledge {
        let _ = write!(text, "\n\n# Knowledge: {name}\n\n{}", content.trim());
    }
    text
}

/// The first user message: the operands, then what the answer must be.
pub(crate) fn user(
    request: &SlotRequest,
    schema: &StrictSchema,
    answer_tool: Option<&str>,
) -> String {
    let mut text = String::new();
    if request.operands.is_empty() {
        text.push_str("This slot has no operands.");
    } else {
        text.push_str("# Operands");
        for operand in &request.operands {
            operand_section(&mut text, operand);
        }
    }
    text.push_str("\n\n# Your answer\n");
    if let Some(choices) = &request.choices {
        let _ = write!(
            text,
            "\nAnswer with exactly one of: {}.",
            choices.join(", ")
        );
    }
    if let Some(sibling) = request.sibling {
        // Numbered as a person counts: the first sibling is sibling 1.
        let of = request
            .siblings
            .map(|n| format!(" of {n}"))
            .unwrap_or_default();
        let _ = write!(
            text,
            "\nYou are sibling {}{of} in a parallel fan-out; do your share.",
            sibling + 1
        );
    }
    if !request.tools.is_empty() {
        text.push_str("\nYou may call the tools offered to gather what you need before answering.");
    }
    if let Some(tool) = answer_tool {
        let _ = write!(
            text,
            "\nGive the final answer by calling the `{tool}` tool."
        );
    }
    if schema.wrapped {
        text.push_str("\nPut the result under the key \"value\".");
    }
    text
}

fn operand_section(text: &mut String, operand: &Operand) {
    let _ = write!(text, "\n\n## {} ({})", operand.name, operand.ty);
    if let Some(doc) = &operand.doc {
        let _ = write!(text, "\n{}", doc.trim());
    }
    match &operand.value {
        Value::String(s) => {
            let fence = fence_for(s);
            let _ = write!(text, "\n{fence}\n{s}\n{fence}");
        }
        other => {
            let json = serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string());
            let _ = write!(text, "\n```json\n{json}\n```");
        }
    }
}

/// A code fence longer than any run of backticks in `s`.
fn fence_for(s: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// What a repair turn says.
pub(crate) fn repair(error: &str) -> String {
    format!(
        "Your last answer does not match the schema: {error}\n\
         Answer again with a corrected value that matches the schema exactly."
    )
}

/// The result of a tool call that was not run because its round was refused.
pub(crate) fn not_run(error: &str) -> String {
    format!("not run: {error}")
}

/// A tool result as the text a protocol carries.
pub(crate) fn tool_output(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The id a call gets when the provider gave none: stable within one slot's history.
pub(crate) fn made_up_id(index: usize) -> String {
    format!("call_{index}")
}

/// The arguments of a call as the model sent them: a JSON object, or a string holding one.
/// Anything else is kept as it came, for the tool's binding to reject with a clear error.
pub(crate) fn parse_arguments(raw: &Value) -> Value {
    match raw {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| raw.clone()),
        other => other.clone(),
    }
}

/// The JSON in a model's text answer: the text itself, or the body of one code fence around
/// it (some OpenAI-compatible servers fence their JSON).
pub(crate) fn json_from_text(text: &str) -> Result<Value, serde_json::Error> {
    let trimmed = text.trim();
    match serde_json::from_str(trimmed) {
        Ok(value) => Ok(value),
        Err(err) => {
            let unfenced = trimmed
                .strip_prefix("```")
                .and_then(|rest| rest.strip_suffix("```"))
                .map(|body| body.trim_start_matches("json").trim());
            match unfenced {
                Some(body) => serde_json::from_str(body),
                None => Err(err),
            }
        }
    }
}

/// A text answer as the slot's value: the JSON in `content` ([`json_from_text`]), taken out of
/// the strict schema's wrapper when `wrapped`. `cut` (the provider stopped at its token limit)
/// is named in the error, with the start of the text.
pub(crate) fn text_answer(content: &str, wrapped: bool, cut: bool) -> Result<Value, String> {
    let value = json_from_text(content).map_err(|err| {
        format!(
            "the answer is not JSON{}: {err}; it began: {}",
            cut_note(cut),
            excerpt(content)
        )
    })?;
    Ok(unwrap_value(wrapped, value))
}

/// A text answer as a reply: the value ([`text_answer`]), or, when the text holds no JSON,
/// [`Reply::Unparsed`] with the error — repaired like any answer that does not validate.
pub(crate) fn text_reply(content: &str, wrapped: bool, cut: bool) -> Reply {
    match text_answer(content, wrapped, cut) {
        Ok(value) => Reply::Value { value },
        Err(error) => Reply::Unparsed {
            text: content.to_owned(),
            error,
        },
    }
}

/// The note an error about an answer carries when the provider cut it off at its token limit.
pub(crate) fn cut_note(cut: bool) -> &'static str {
    if cut {
        " (cut off at the token limit)"
    } else {
        ""
    }
}

/// A tool call with its arguments as a JSON string (OpenAI's spelling).
pub(crate) fn arguments_text(call: &ToolCall) -> String {
    call.arguments.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::providers::schema::strict_schema;
    use serde_json::json;

    fn request() -> SlotRequest {
        SlotRequest {
            instruction: "plan".into(),
            opcode: "GEN-FILL".into(),
            doc: "Write the plan.".into(),
            knowledge: vec![("style".into(), "Be brief.".into())],
            operands: vec![
                Operand {
                    name: "task".into(),
                    ty: "str".into(),
                    doc: Some("What to do".into()),
                    value: json!("fix ```code```"),
                },
                Operand {
                    name: "files".into(),
                    ty: "list[str]".into(),
                    doc: None,
                    value: json!(["a.rs"]),
                },
            ],
            schema: json!({"type": "string"}),
            choices: Some(vec!["a".into(), "b".into()]),
            tools: vec![],
            sibling: Some(2),
            siblings: Some(3),
            history: vec![],
        }
    }

    #[test]
    fn the_prompts_carry_doc_knowledge_operands_and_choices() {
        let request = request();
        let schema = strict_schema(&request.schema);
        let system = system(&request);
        assert!(system.contains("# Instruction `plan` (GEN-FILL)\n\nWrite the plan."));
        assert!(system.contains("# Knowledge: style\n\nBe brief."));
        let user = user(&request, &schema, Some("answer"));
        assert!(
            user.contains("## task (str)\nWhat to do\n````\nfix ```code```\n````"),
            "{user}"
        );
        assert!(user.contains("## files (list[str])\n```json\n[\n  \"a.rs\"\n]\n```"));
        assert!(user.contains("exactly one of: a, b."));
        // Index 2 of 3 is the third: numbered for the model as a person counts.
        assert!(
            user.contains("You are sibling 3 of 3 in a parallel fan-out"),
            "{user}"
        );
        assert!(user.contains("calling the `answer` tool"));
        assert!(user.contains("under the key \"value\""));
    }

    #[test]
    fn arguments_parse_from_text_or_stay_as_they_came() {
        assert_eq!(parse_arguments(&json!("{\"a\":1}")), json!({"a": 1}));
        assert_eq!(parse_arguments(&json!({"a": 1})), json!({"a": 1}));
        assert_eq!(parse_arguments(&json!("{oops")), json!("{oops"));
        assert_eq!(json_from_text(" {\"a\": 1} ").unwrap(), json!({"a": 1}));
        assert_eq!(
            json_from_text("```json\n{\"a\": 1}\n```").unwrap(),
            json!({"a": 1})
        );
        assert!(json_from_text("{\"a\": ").is_err());
    }

    #[test]
    fn text_answers_unwrap_and_say_when_the_provider_cut_them_off() {
        assert_eq!(
            text_answer("```json\n{\"value\": 7}\n```", true, false),
            Ok(json!(7))
        );
        assert_eq!(
            text_answer("{\"value\": 7}", false, false),
            Ok(json!({"value": 7}))
        );
        let cut = text_answer("{\"value\": [1, 2", true, true).unwrap_err();
        assert!(
            cut.starts_with("the answer is not JSON (cut off at the token limit): "),
            "{cut}"
        );
        assert!(cut.ends_with("it began: {\"value\": [1, 2"), "{cut}");
        let whole = text_answer("no JSON here", true, false).unwrap_err();
        assert!(whole.starts_with("the answer is not JSON: "), "{whole}");
        assert!(!whole.contains("cut off"), "{whole}");
    }
}

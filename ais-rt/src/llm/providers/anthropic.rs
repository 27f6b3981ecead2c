//! `anthropic:MODEL`: the Anthropic Messages API. The result comes back through a forced tool
//! call: an extra tool whose input schema is the slot's schema (transformed, wrapped when not
//! an object), with `tool_choice` forcing it — or, when the slot may call tools, forcing *some*
//! tool call, so that the model either gathers with a real tool or answers.

use super::http::{Secret, Transport, completion, excerpt};
use super::schema::{StrictSchema, strict_schema, unwrap_value, wrap_value};
use super::{Env, ProviderOptions, base_url, endpoint, prompt, required};
use crate::llm::{
    Completion, Model, ModelError, ModelFuture, Reply, SlotRequest, ToolCall, Turn, Usage,
};
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

const DEFAULT_BASE: &str = "https://api.anthropic.com";
/// The API version every request names.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages provider.
#[derive(Debug)]
pub(crate) struct Anthropic {
    name: String,
    model: String,
    url: Url,
    headers: HeaderMap,
    max_tokens: u32,
    transport: Transport,
}

impl Anthropic {
    /// Set up from `ANTHROPIC_API_KEY` (required) and `ANTHROPIC_BASE_URL`.
    pub(crate) fn from_env(
        spec: &str,
        model: &str,
        env: Env<'_>,
        options: ProviderOptions,
    ) -> Result<Self, ModelError> {
        let secret = Secret::new(required(env, "ANTHROPIC_API_KEY", spec)?);
        let base = base_url(env, "ANTHROPIC_BASE_URL", DEFAULT_BASE)?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), secret.header("")?);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        Ok(Anthropic {
            name: spec.to_string(),
            model: model.to_string(),
            url: endpoint(&base, "v1/messages", "ANTHROPIC_BASE_URL")?,
            headers,
            max_tokens: options.max_tokens,
            transport: Transport::new("anthropic", options, Some(secret))?,
        })
    }

    async fn exchange(&self, request: &SlotRequest) -> Result<Completion, ModelError> {
        let schema = strict_schema(&request.schema);
        let answer = answer_tool(request);
        let mut body = body(&self.model, self.max_tokens, request, &schema, &answer);
        let stream = super::stream_if_watched(&mut body, super::stream::ANTHROPIC, &[]);
        let (body, response) = self
            .transport
            .send(request, &self.url, &self.headers, body, stream)
            .await?;
        let parsed = parse(&response, &schema, &answer);
        completion(&self.name, body, response, parsed)
    }
}

impl Model for Anthropic {
    fn name(&self) -> &str {
        &self.name
    }

    fn max_completion_tokens(&self) -> Option<u64> {
        Some(u64::from(self.max_tokens))
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        Box::pin(self.exchange(request))
    }
}

/// The answer tool's name: `answer`, or a variant no slot tool has.
fn answer_tool(request: &SlotRequest) -> String {
    let taken = |name: &str| request.tools.iter().any(|tool| tool.name == name);
    let mut name = "answer".to_string();
    let mut n = 1;
    while taken(&name) {
        name = format!("answer_{n}");
        n += 1;
    }
    name
}

/// The id of the answer tool call made in turn `index` of the history.
fn answer_id(index: usize) -> String {
    format!("answer_{index}")
}

/// Messages alternate roles: a block for the same role as the last message joins it.
fn push(messages: &mut Vec<Value>, role: &str, block: Value) {
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(content) = last["content"].as_array_mut()
    {
        content.push(block);
        return;
    }
    messages.push(json!({"role": role, "content": [block]}));
}

fn body(
    model: &str,
    max_tokens: u32,
    request: &SlotRequest,
    schema: &StrictSchema,
    answer: &str,
) -> Value {
    let mut messages = Vec::new();
    let user = prompt::user(request, schema, Some(answer));
    push(&mut messages, "user", json!({"type": "text", "text": user}));
    let mut pending_answer: Option<String> = None;
    // Every tool_use must be answered by a tool_result in the next user message; a repair of
    // calls that did not run answers them with the repair's error.
    let mut unanswered: Vec<String> = Vec::new();
    for (index, turn) in request.history.iter().enumerate() {
        match turn {
            Turn::Assistant { value, tool_calls } => {
                if let Some(value) = value.as_ref().filter(|_| tool_calls.is_empty()) {
                    let mut input = wrap_value(schema.wrapped, value);
                    if !input.is_object() {
                        input = json!({"value": input});
                    }
                    let id = answer_id(index);
                    let block =
                        json!({"type": "tool_use", "id": id, "name": answer, "input": input});
                    push(&mut messages, "assistant", block);
                    pending_answer = Some(id);
                }
                unanswered = tool_calls.iter().map(|call| call.id.clone()).collect();
                for call in tool_calls {
                    let input = if call.arguments.is_object() {
                        call.arguments.clone()
                    } else {
                        json!({})
                    };
                    let block = json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input});
                    push(&mut messages, "assistant", block);
                }
            }
            Turn::ToolResult {
                call_id, output, ..
            } => {
                unanswered.retain(|id| id != call_id);
                let failed = output.get("ok") == Some(&Value::Bool(false));
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": prompt::tool_output(output),
                    "is_error": failed,
                });
                push(&mut messages, "user", block);
            }
            Turn::Unparsed { text } => {
                push(
                    &mut messages,
                    "assistant",
                    json!({"type": "text", "text": text}),
                );
            }
            Turn::Repair { error } => {
                for id in unanswered.drain(..) {
                    let content = prompt::not_run(error);
                    let block = json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": true});
                    push(&mut messages, "user", block);
                }
                let text = prompt::repair(error);
                let block = match pending_answer.take() {
                    Some(id) => {
                        json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": true})
                    }
                    None => json!({"type": "text", "text": text}),
                };
                push(&mut messages, "user", block);
            }
        }
    }
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters}))
        .collect();
    // The prefix that does not change between a slot's calls — the tools (the answer tool
    // carries the schema), then the system text (the instruction and its resident knowledge)
    // — is marked cacheable at its end: Anthropic caches tools, then system, up to a marker.
    tools.push(json!({
        "name": answer,
        "description": "Give the slot's final answer. Its input is the result, matching the schema exactly.",
        "input_schema": schema.schema,
        "cache_control": {"type": "ephemeral"},
    }));
    let tool_choice = if request.tools.is_empty() {
        json!({"type": "tool", "name": answer})
    } else {
        json!({"type": "any"})
    };
    json!({
        "model": model,
        "max_tokens": max_tokens,
        "system": [{
            "type": "text",
            "text": prompt::system(request),
            "cache_control": {"type": "ephemeral"},
        }],
        "messages": messages,
        "tools": tools,
        "tool_choice": tool_choice,
    })
}

fn parse(response: &Value, schema: &StrictSchema, answer: &str) -> Result<(Reply, Usage), String> {
    let content = response
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format!(
                "the response has no content: {}",
                excerpt(&response.to_string())
            )
        })?;
    let usage = usage(response.get("usage"));
    let tool_uses = || content.iter().filter(|block| block["type"] == "tool_use");
    if let Some(block) = tool_uses().find(|block| block["name"] == answer) {
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        let value = unwrap_value(schema.wrapped, input);
        return Ok((Reply::Value { value }, usage));
    }
    let calls = tool_uses()
        .enumerate()
        .map(|(index, block)| {
            let name = block["name"]
                .as_str()
                .ok_or(format!("tool_use block {index} has no name"))?;
            let id = block["id"]
                .as_str()
                .map_or_else(|| prompt::made_up_id(index), str::to_string);
            let arguments = block
                .get("input")
                .map_or(json!({}), prompt::parse_arguments);
            Ok(ToolCall {
                id,
                name: name.to_string(),
                arguments,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if !calls.is_empty() {
        return Ok((Reply::ToolCalls { calls }, usage));
    }
    // No tool call despite the forced choice: a text answer may still hold the JSON.
    let text: String = content
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect();
    let why = prompt::cut_note(response["stop_reason"] == "max_tokens");
    match prompt::json_from_text(&text) {
        Ok(value) if !text.trim().is_empty() => Ok((
            Reply::Value {
                value: unwrap_value(schema.wrapped, value),
            },
            usage,
        )),
        _ => Ok((
            Reply::Unparsed {
                error: format!(
                    "the model did not call the `{answer}` tool{why}; it said: {}",
                    excerpt(&text)
                ),
                text,
            },
            usage,
        )),
    }
}

/// Anthropic counts cache reads and writes apart from `input_tokens`; the prompt total is
/// their sum, so that it compares with the other providers' prompt counts.
fn usage(usage: Option<&Value>) -> Usage {
    let Some(usage) = usage else {
        return Usage::default();
    };
    let count = |key: &str| usage.get(key).and_then(Value::as_u64);
    let cached = count("cache_read_input_tokens");
    Usage {
        prompt_tokens: count("input_tokens").unwrap_or(0)
            + cached.unwrap_or(0)
            + count("cache_creation_input_tokens").unwrap_or(0),
        completion_tokens: count("output_tokens").unwrap_or(0),
        cached_tokens: cached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolSpec;

    fn request(tools: &[&str], history: Vec<Turn>) -> SlotRequest {
        SlotRequest {
            instruction: "pick".into(),
            opcode: "GEN-ENUM".into(),
            doc: "Pick one.".into(),
            knowledge: vec![],
            operands: vec![],
            schema: json!({"enum": ["a", "b"]}),
            choices: Some(vec!["a".into(), "b".into()]),
            tools: tools
                .iter()
                .map(|name| ToolSpec {
                    name: name.to_string(),
                    description: "d".into(),
                    parameters: json!({"type": "object"}),
                })
                .collect(),
            sibling: None,
            siblings: None,
            history,
        }
    }

    #[test]
    fn the_answer_tool_is_forced_and_named_apart_from_slot_tools() {
        let plain = request(&[], vec![]);
        let schema = strict_schema(&plain.schema);
        let body = body("m", 100, &plain, &schema, &answer_tool(&plain));
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "answer"})
        );
        assert_eq!(body["tools"][0]["input_schema"], schema.schema);
        let clash = request(&["answer"], vec![]);
        assert_eq!(answer_tool(&clash), "answer_1");
        let body = body_of(&clash);
        assert_eq!(body["tool_choice"], json!({"type": "any"}));
    }

    fn body_of(request: &SlotRequest) -> Value {
        let schema = strict_schema(&request.schema);
        body("m", 100, request, &schema, &answer_tool(request))
    }

    #[test]
    fn history_alternates_roles_and_repairs_answer_the_answer_call() {
        let history = vec![
            Turn::Assistant {
                value: None,
                tool_calls: vec![
                    ToolCall {
                        id: "t1".into(),
                        name: "look".into(),
                        arguments: json!({}),
                    },
                    ToolCall {
                        id: "t2".into(),
                        name: "look".into(),
                        arguments: json!({}),
                    },
                ],
            },
            Turn::ToolResult {
                call_id: "t1".into(),
                name: "look".into(),
                output: json!("one"),
            },
            Turn::ToolResult {
                call_id: "t2".into(),
                name: "look".into(),
                output: json!({"ok": false, "error": "x", "output": ""}),
            },
            Turn::Assistant {
                value: Some(json!("c")),
                tool_calls: vec![],
            },
            Turn::Repair {
                error: "\"c\" is not one of [\"a\",\"b\"]".into(),
            },
        ];
        let body = body_of(&request(&["look"], history));
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        assert_eq!(messages[1]["content"].as_array().unwrap().len(), 2);
        assert_eq!(messages[2]["content"][1]["is_error"], json!(true));
        assert_eq!(messages[3]["content"][0]["input"], json!({"value": "c"}));
        assert_eq!(
            messages[4]["content"][0]["tool_use_id"],
            messages[3]["content"][0]["id"]
        );
        assert!(
            messages[4]["content"][0]["content"]
                .as_str()
                .unwrap()
                .contains("is not one of")
        );
    }

    #[test]
    fn a_repair_of_calls_that_did_not_run_answers_each_call() {
        let history = vec![
            Turn::Assistant {
                value: None,
                tool_calls: vec![ToolCall {
                    id: "t1".into(),
                    name: "look".into(),
                    arguments: json!({}),
                }],
            },
            Turn::Repair {
                error: "all 8 tool rounds are used".into(),
            },
        ];
        let body = body_of(&request(&["look"], history));
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        let blocks = messages[2]["content"].as_array().unwrap();
        assert_eq!(blocks[0]["tool_use_id"], "t1");
        assert_eq!(blocks[0]["is_error"], true);
        assert_eq!(blocks[1]["type"], "text");
        assert!(
            blocks[1]["text"]
                .as_str()
                .unwrap()
                .contains("tool rounds are used")
        );
    }

    #[test]
    fn answers_parse_from_the_answer_call_other_calls_or_text() {
        let schema = strict_schema(&json!({"enum": ["a", "b"]}));
        let answer = json!({
            "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "x", "name": "answer", "input": {"value": "a"}}],
            "usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 1}
        });
        let (reply, usage) = parse(&answer, &schema, "answer").unwrap();
        assert_eq!(reply, Reply::Value { value: json!("a") });
        assert_eq!(
            usage,
            Usage {
                prompt_tokens: 106,
                completion_tokens: 2,
                cached_tokens: Some(100)
            }
        );
        let call = json!({"content": [{"type": "tool_use", "id": "t", "name": "look", "input": {"q": 1}}]});
        let (reply, _) = parse(&call, &schema, "answer").unwrap();
        assert!(
            matches!(reply, Reply::ToolCalls { calls } if calls[0].arguments == json!({"q": 1}))
        );
        let text = json!({"content": [{"type": "text", "text": "{\"value\": \"b\"}"}]});
        assert_eq!(
            parse(&text, &schema, "answer").unwrap().0,
            Reply::Value { value: json!("b") }
        );
        let prose =
            json!({"content": [{"type": "text", "text": "I think a"}], "stop_reason": "end_turn"});
        let (reply, _) = parse(&prose, &schema, "answer").unwrap();
        assert!(
            matches!(&reply, Reply::Unparsed { text, error } if text == "I think a" && error.contains("did not call")),
            "{reply:?}"
        );
    }
}

//! `openai:MODEL`: the OpenAI chat completions API, and every server that speaks it (vLLM,
//! llama.cpp's server, LM Studio) through `OPENAI_BASE_URL`.

use super::http::{Secret, Transport, completion, excerpt};
use super::schema::{StrictSchema, strict_schema, wrap_value};
use super::{Env, ProviderOptions, base_url, endpoint, prompt, required};
use crate::llm::{
    Completion, Model, ModelError, ModelFuture, Reply, SlotRequest, ToolCall, Turn, Usage,
};
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};

const DEFAULT_BASE: &str = "https://api.openai.com/v1";

/// The OpenAI chat completions provider.
#[derive(Debug)]
pub(crate) struct OpenAi {
    name: String,
    model: String,
    url: Url,
    headers: HeaderMap,
    transport: Transport,
}

impl OpenAi {
    /// Set up from `OPENAI_API_KEY` and `OPENAI_BASE_URL`. The key is required unless
    /// `OPENAI_BASE_URL` names another server (a local one often wants none).
    pub(crate) fn from_env(
        spec: &str,
        model: &str,
        env: Env<'_>,
        options: ProviderOptions,
    ) -> Result<Self, ModelError> {
        let custom_base = env("OPENAI_BASE_URL").is_some_and(|v| !v.trim().is_empty());
        let key = if custom_base {
            env("OPENAI_API_KEY").filter(|key| !key.trim().is_empty())
        } else {
            Some(required(env, "OPENAI_API_KEY", spec)?)
        };
        let base = base_url(env, "OPENAI_BASE_URL", DEFAULT_BASE)?;
        let url = endpoint(&base, "chat/completions", "OPENAI_BASE_URL")?;
        let secret = key.map(|key| Secret::new(key.trim().to_string()));
        let mut headers = HeaderMap::new();
        if let Some(secret) = &secret {
            headers.insert(AUTHORIZATION, secret.header("Bearer ")?);
        }
        Ok(OpenAi {
            name: spec.to_string(),
            model: model.to_string(),
            url,
            headers,
            transport: Transport::new("openai", options, secret)?,
        })
    }

    async fn exchange(&self, request: &SlotRequest) -> Result<Completion, ModelError> {
        let schema = strict_schema(&request.schema);
        let mut body = body(&self.model, request, &schema);
        let usage = ("stream_options", json!({"include_usage": true}));
        let stream = super::stream_if_watched(&mut body, super::stream::OPENAI, &[usage]);
        let (body, response) = self
            .transport
            .send(request, &self.url, &self.headers, body, stream)
            .await?;
        let parsed = parse(&response, &schema);
        completion(&self.name, body, response, parsed)
    }
}

impl Model for OpenAi {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        Box::pin(self.exchange(request))
    }
}

/// The request body.
fn body(model: &str, request: &SlotRequest, schema: &StrictSchema) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": prompt::system(request)}),
        json!({"role": "user", "content": prompt::user(request, schema, None)}),
    ];
    // Every tool call must be answered by a tool message before the next user message; a
    // repair of calls that did not run (past the round limit, on a slot without tools)
    // answers them with the repair's error.
    let mut unanswered: Vec<String> = Vec::new();
    for turn in &request.history {
        match turn {
            Turn::Assistant { value, tool_calls } if !tool_calls.is_empty() => {
                unanswered = tool_calls.iter().map(|call| call.id.clone()).collect();
                messages.push(json!({
                    "role": "assistant",
                    "content": value.as_ref().map(|v| wrap_value(schema.wrapped, v).to_string()),
                    "tool_calls": tool_calls.iter().map(|call| json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": prompt::arguments_text(call)},
                    })).collect::<Vec<_>>(),
                }));
            }
            Turn::Assistant { value, .. } => messages.push(json!({
                "role": "assistant",
                "content": wrap_value(schema.wrapped, value.as_ref().unwrap_or(&Value::Null)).to_string(),
            })),
            Turn::ToolResult {
                call_id, output, ..
            } => {
                unanswered.retain(|id| id != call_id);
                messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": prompt::tool_output(output)}));
            }
            Turn::Unparsed { text } => {
                messages.push(json!({"role": "assistant", "content": text}));
            }
            Turn::Repair { error } => {
                for id in unanswered.drain(..) {
                    messages.push(json!({"role": "tool", "tool_call_id": id, "content": prompt::not_run(error)}));
                }
                messages.push(json!({"role": "user", "content": prompt::repair(error)}));
            }
        }
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": schema_name(&request.instruction),
                "strict": schema.strict,
                "schema": schema.schema,
            },
        },
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
    }
    body
}

/// The schema's name: `^[a-zA-Z0-9_-]{1,64}$`.
fn schema_name(instruction: &str) -> String {
    let name: String = instruction
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "result".to_string()
    } else {
        name
    }
}

/// The reply and usage in a response body; an error names what is missing.
fn parse(response: &Value, schema: &StrictSchema) -> Result<(Reply, Usage), String> {
    let choice = response
        .get("choices")
        .and_then(|choices| choices.get(0))
        .ok_or_else(|| {
            format!(
                "the response has no choices: {}",
                excerpt(&response.to_string())
            )
        })?;
    let message = choice
        .get("message")
        .ok_or("the response's first choice has no message")?;
    let usage = usage(response.get("usage"));
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .filter(|calls| !calls.is_empty());
    if let Some(calls) = calls {
        let calls = calls
            .iter()
            .enumerate()
            .map(|(index, call)| tool_call(index, call))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((Reply::ToolCalls { calls }, usage));
    }
    if let Some(refusal) = message.get("refusal").and_then(Value::as_str) {
        return Err(format!("the model refused: {}", excerpt(refusal)));
    }
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .ok_or("the answer has neither content nor tool calls")?;
    let cut = choice.get("finish_reason").and_then(Value::as_str) == Some("length");
    Ok((prompt::text_reply(content, schema.wrapped, cut), usage))
}

/// The tool call at `index` of an answer (its errors count from 1, as a person does).
fn tool_call(index: usize, call: &Value) -> Result<ToolCall, String> {
    let number = index + 1;
    let function = call
        .get("function")
        .ok_or_else(|| format!("tool call {number} has no function"))?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("tool call {number} has no function name"))?;
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| prompt::made_up_id(index), str::to_string);
    let arguments = function
        .get("arguments")
        .map_or(json!({}), prompt::parse_arguments);
    Ok(ToolCall {
        id,
        name: name.to_string(),
        arguments,
    })
}

fn usage(usage: Option<&Value>) -> Usage {
    let count = |value: Option<&Value>| value.and_then(Value::as_u64);
    let Some(usage) = usage else {
        return Usage::default();
    };
    Usage {
        prompt_tokens: count(usage.get("prompt_tokens")).unwrap_or(0),
        completion_tokens: count(usage.get("completion_tokens")).unwrap_or(0),
        cached_tokens: count(usage.pointer("/prompt_tokens_details/cached_tokens")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_fit_the_pattern() {
        assert_eq!(schema_name("plan.step 1"), "plan_step_1");
        assert_eq!(schema_name(""), "result");
        assert_eq!(schema_name(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn a_repair_of_calls_that_did_not_run_answers_each_call() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: json!({}),
        };
        let request = crate::llm::SlotRequest {
            instruction: "s".into(),
            opcode: "GEN-FILL".into(),
            doc: "d".into(),
            knowledge: vec![],
            operands: vec![],
            schema: json!({"type": "string"}),
            choices: None,
            tools: vec![],
            sibling: None,
            siblings: None,
            history: vec![
                Turn::Assistant {
                    value: None,
                    tool_calls: vec![call("a"), call("b")],
                },
                Turn::ToolResult {
                    call_id: "a".into(),
                    name: "t".into(),
                    output: json!("done"),
                },
                Turn::Repair {
                    error: "this slot has no tools".into(),
                },
            ],
        };
        let schema = strict_schema(&request.schema);
        let body = body("m", &request, &schema);
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "tool", "tool", "user"]
        );
        assert_eq!(messages[4]["tool_call_id"], "b");
        assert_eq!(messages[4]["content"], "not run: this slot has no tools");
    }

    #[test]
    fn answers_parse_into_values_tool_calls_or_errors() {
        let wrapped = strict_schema(&json!({"type": "string"}));
        let response = json!({
            "choices": [{"message": {"content": "{\"value\": \"hi\"}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}
        });
        let (reply, usage) = parse(&response, &wrapped).unwrap();
        assert_eq!(reply, Reply::Value { value: json!("hi") });
        assert_eq!(
            usage,
            Usage {
                prompt_tokens: 10,
                completion_tokens: 3,
                cached_tokens: Some(4)
            }
        );

        let calls = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
        ]}}]});
        let (reply, usage) = parse(&calls, &wrapped).unwrap();
        assert_eq!(usage, Usage::default());
        assert_eq!(
            reply,
            Reply::ToolCalls {
                calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a"})
                }]
            }
        );

        let refusal = json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
        assert!(parse(&refusal, &wrapped).unwrap_err().contains("refused"));
        let cut = json!({"choices": [{"message": {"content": "{\"value\": \"h"}, "finish_reason": "length"}]});
        let (reply, _) = parse(&cut, &wrapped).unwrap();
        assert!(
            matches!(&reply, Reply::Unparsed { text, error } if text == "{\"value\": \"h" && error.contains("cut off")),
            "{reply:?}"
        );
        assert!(
            parse(&json!({}), &wrapped)
                .unwrap_err()
                .contains("no choices")
        );
    }
}

//! `ollama:MODEL`: Ollama's native `/api/chat`, with the slot's schema as its JSON Schema
//! `format` (the grammar-constrained mode; the OpenAI-compatible endpoint takes no schema).

use super::http::{Transport, completion, excerpt};
use super::schema::{StrictSchema, strict_schema, wrap_value};
use super::{Env, ProviderOptions, base_url, endpoint, prompt};
use crate::llm::{
    Completion, Model, ModelError, ModelErrorKind, ModelFuture, Reply, SlotRequest, ToolCall, Turn,
    Usage,
};
use reqwest::Url;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

const DEFAULT_HOST: &str = "http://localhost:11434";

/// The Ollama provider.
#[derive(Debug)]
pub(crate) struct Ollama {
    name: String,
    model: String,
    url: Url,
    transport: Transport,
}

impl Ollama {
    /// Set up from `OLLAMA_HOST` (default `http://localhost:11434`; `host:port` is accepted).
    pub(crate) fn from_env(
        spec: &str,
        model: &str,
        env: Env<'_>,
        options: ProviderOptions,
    ) -> Result<Self, ModelError> {
        let base = base_url(env, "OLLAMA_HOST", DEFAULT_HOST)?;
        Ok(Ollama {
            name: spec.to_string(),
            model: model.to_string(),
            url: endpoint(&base, "api/chat", "OLLAMA_HOST")?,
            transport: Transport::new("ollama", options, None)?,
        })
    }

    async fn exchange(&self, request: &SlotRequest) -> Result<Completion, ModelError> {
        let schema = strict_schema(&request.schema);
        let mut body = body(&self.model, request, &schema);
        let stream = super::stream_if_watched(&mut body, super::stream::OLLAMA, &[]);
        let (body, response) = self
            .transport
            .send(request, &self.url, &HeaderMap::new(), body, stream)
            .await
            .map_err(|err| self.hint(err))?;
        let parsed = parse(&response, &schema, calls_in_history(request));
        completion(&self.name, body, response, parsed)
    }

    /// The next step for the two usual failures: no server, no such model.
    fn hint(&self, mut err: ModelError) -> ModelError {
        if err.kind == ModelErrorKind::Transport && err.message.contains("request failed") {
            err.message.push_str(&format!(
                " (is Ollama running at {}? start it with `ollama serve`, or set OLLAMA_HOST)",
                self.url.origin().ascii_serialization()
            ));
        } else if err.message.contains("HTTP 404") {
            err.message.push_str(&format!(
                " (pull the model with `ollama pull {}`)",
                self.model
            ));
        }
        err
    }
}

impl Model for Ollama {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        Box::pin(self.exchange(request))
    }
}

/// How many tool calls earlier turns made: made-up ids continue from there.
fn calls_in_history(request: &SlotRequest) -> usize {
    request
        .history
        .iter()
        .map(|turn| match turn {
            Turn::Assistant { tool_calls, .. } => tool_calls.len(),
            _ => 0,
        })
        .sum()
}

fn body(model: &str, request: &SlotRequest, schema: &StrictSchema) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": prompt::system(request)}),
        json!({"role": "user", "content": prompt::user(request, schema, None)}),
    ];
    for turn in &request.history {
        messages.push(match turn {
            Turn::Assistant { value, tool_calls } => {
                let content = value
                    .as_ref()
                    .map_or_else(String::new, |v| wrap_value(schema.wrapped, v).to_string());
                let mut message = json!({"role": "assistant", "content": content});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = tool_calls
                        .iter()
                        .map(|call| {
                            json!({"function": {"name": call.name, "arguments": call.arguments}})
                        })
                        .collect();
                }
                message
            }
            Turn::ToolResult { name, output, .. } => json!({
                "role": "tool",
                "tool_name": name,
                "content": prompt::tool_output(output),
            }),
            Turn::Unparsed { text } => json!({"role": "assistant", "content": text}),
            Turn::Repair { error } => json!({"role": "user", "content": prompt::repair(error)}),
        });
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": false,
        "format": schema.schema,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }})
            })
            .collect();
    }
    body
}

fn parse(response: &Value, schema: &StrictSchema, offset: usize) -> Result<(Reply, Usage), String> {
    if let Some(error) = response.get("error").and_then(Value::as_str) {
        return Err(format!("Ollama answered an error: {}", excerpt(error)));
    }
    let message = response.get("message").ok_or_else(|| {
        format!(
            "the response has no message: {}",
            excerpt(&response.to_string())
        )
    })?;
    let usage = Usage {
        prompt_tokens: response
            .get("prompt_eval_count")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        completion_tokens: response
            .get("eval_count")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cached_tokens: None,
    };
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .filter(|calls| !calls.is_empty());
    if let Some(calls) = calls {
        let calls = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let function = call
                    .get("function")
                    .ok_or(format!("tool call {} has no function", index + 1))?;
                let name = function
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or(format!("tool call {} has no function name", index + 1))?;
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| prompt::made_up_id(offset + index), str::to_string);
                Ok(ToolCall {
                    id,
                    name: name.to_string(),
                    arguments: function
                        .get("arguments")
                        .map_or(json!({}), prompt::parse_arguments),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        return Ok((Reply::ToolCalls { calls }, usage));
    }
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .ok_or("the answer has neither content nor tool calls")?;
    let cut = response.get("done_reason").and_then(Value::as_str) == Some("length");
    Ok((prompt::text_reply(content, schema.wrapped, cut), usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_with_counts_and_made_up_ids() {
        let schema = strict_schema(&json!({"type": "integer"}));
        let response = json!({
            "message": {"role": "assistant", "content": "{\"value\": 7}"},
            "done": true, "prompt_eval_count": 12, "eval_count": 5
        });
        let (reply, usage) = parse(&response, &schema, 0).unwrap();
        assert_eq!(reply, Reply::Value { value: json!(7) });
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (12, 5));

        let calls = json!({"message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "grep", "arguments": {"pattern": "x"}}}
        ]}});
        let (reply, _) = parse(&calls, &schema, 3).unwrap();
        assert_eq!(
            reply,
            Reply::ToolCalls {
                calls: vec![ToolCall {
                    id: "call_3".into(),
                    name: "grep".into(),
                    arguments: json!({"pattern": "x"})
                }]
            }
        );
        assert!(
            parse(&json!({"error": "boom"}), &schema, 0)
                .unwrap_err()
                .contains("boom")
        );
        let bad = json!({"message": {"content": "seven"}});
        let (reply, _) = parse(&bad, &schema, 0).unwrap();
        assert!(
            matches!(&reply, Reply::Unparsed { text, error } if text == "seven" && error.contains("not JSON")),
            "{reply:?}"
        );
    }
}

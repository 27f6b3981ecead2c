//! Streamed answers, assembled into the body each protocol returns without streaming — so the
//! provider parses, and the slot validates, traces and journals, exactly what a plain request
//! would have given:
//!
//! - OpenAI-compatible (`stream: true`, `stream_options.include_usage`): SSE `data:` chunks of
//!   `choices[0].delta` (`content` text, `tool_calls` pieces by `index`), a `finish_reason`, a
//!   last chunk with `usage`, then `data: [DONE]`;
//! - Anthropic (`stream: true`): SSE events `message_start` (the message and its input usage),
//!   `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
//!   `content_block_stop`, `message_delta` (the stop reason and output usage), `message_stop`;
//! - Ollama (`stream: true`): NDJSON objects with `message.content` pieces, and a last one with
//!   `done: true` carrying the counts and the reason.
//!
//! A stream without its end marker (`[DONE]`, `message_stop`, `done: true`) was cut: an error.

use super::http::{Assemble, Framing, Streamed};
use serde_json::{Map, Value, json};

/// How the OpenAI-compatible provider reads a streamed answer.
pub(crate) const OPENAI: Streamed = Streamed {
    framing: Framing::Sse,
    assembler: || Box::<OpenAiStream>::default(),
};

/// How the Anthropic provider reads a streamed answer.
pub(crate) const ANTHROPIC: Streamed = Streamed {
    framing: Framing::Sse,
    assembler: || Box::<AnthropicStream>::default(),
};

/// How the Ollama provider reads a streamed answer.
pub(crate) const OLLAMA: Streamed = Streamed {
    framing: Framing::Ndjson,
    assembler: || Box::<OllamaStream>::default(),
};

fn json(data: &str) -> Result<Value, String> {
    serde_json::from_str(data).map_err(|e| format!("a streamed event is not JSON ({e})"))
}

fn text_of(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// An OpenAI-compatible stream.
#[derive(Default)]
struct OpenAiStream {
    id: Option<Value>,
    content: String,
    /// Tool calls by index: id, name, arguments text.
    calls: Vec<(String, String, String)>,
    finish: Option<Value>,
    usage: Option<Value>,
    done: bool,
}

impl Assemble for OpenAiStream {
    fn event(&mut self, _event: Option<&str>, data: &str) -> Result<Option<String>, String> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let chunk = json(data)?;
        if let Some(e) = chunk.get("error") {
            return Err(format!("the stream reported an error: {e}"));
        }
        if self.id.is_none() {
            self.id = chunk.get("id").cloned();
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(u.clone());
        }
        let Some(choice) = chunk["choices"].get(0) else {
            return Ok(None);
        };
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            self.finish = Some(f.clone());
        }
        let delta = &choice["delta"];
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0) as usize;
            if index >= 128 {
                return Err(format!("a streamed tool call has index {index}"));
            }
            if self.calls.len() <= index {
                self.calls.resize_with(index + 1, Default::default);
            }
            let slot = &mut self.calls[index];
            slot.0.push_str(text_of(&call["id"]));
            slot.1.push_str(text_of(&call["function"]["name"]));
            slot.2.push_str(text_of(&call["function"]["arguments"]));
        }
        let text = text_of(&delta["content"]);
        self.content.push_str(text);
        Ok(Some(text.to_owned()))
    }

    fn finish(self: Box<Self>) -> Result<Value, String> {
        if !self.done {
            return Err("no `data: [DONE]`".into());
        }
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.calls.is_empty() {
            message["tool_calls"] = self
                .calls
                .into_iter()
                .map(|(id, name, arguments)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            if self.content.is_empty() {
                message["content"] = Value::Null;
            }
        }
        let mut body = json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
        });
        if let Some(id) = self.id {
            body["id"] = id;
        }
        if let Some(u) = self.usage {
            body["usage"] = u;
        }
        Ok(body)
    }
}

/// An Anthropic stream.
#[derive(Default)]
struct AnthropicStream {
    message: Map<String, Value>,
    /// Content blocks by index, with the JSON text of a `tool_use` block's input.
    blocks: Vec<(Value, String)>,
    done: bool,
}

impl Assemble for AnthropicStream {
    fn event(&mut self, event: Option<&str>, data: &str) -> Result<Option<String>, String> {
        let e = json(data)?;
        let kind = event.unwrap_or_else(|| text_of(&e["type"]));
        let index = e["index"].as_u64().unwrap_or(0) as usize;
        if index >= 128 {
            return Err(format!("a streamed content block has index {index}"));
        }
        match kind {
            "message_start" => {
                if let Value::Object(m) = &e["message"] {
                    self.message = m.clone();
                }
            }
            "content_block_start" => {
                if self.blocks.len() <= index {
                    self.blocks.resize_with(index + 1, Default::default);
                }
                self.blocks[index].0 = e["content_block"].clone();
            }
            "content_block_delta" => {
                let Some((block, input)) = self.blocks.get_mut(index) else {
                    return Err(format!("a delta of content block {index}, never started"));
                };
                let delta = &e["delta"];
                let text = match text_of(&delta["type"]) {
                    "input_json_delta" => {
                        let piece = text_of(&delta["partial_json"]);
                        input.push_str(piece);
                        piece
                    }
                    "text_delta" => {
                        let piece = text_of(&delta["text"]);
                        let had = text_of(&block["text"]).to_owned();
                        block["text"] = Value::String(had + piece);
                        piece
                    }
                    _ => "",
                };
                return Ok(Some(text.to_owned()));
            }
            "message_delta" => {
                if let Some(reason) = e["delta"].get("stop_reason") {
                    self.message.insert("stop_reason".into(), reason.clone());
                }
                if let Value::Object(more) = &e["usage"] {
                    let usage = self.message.entry("usage").or_insert_with(|| json!({}));
                    for (k, v) in more {
                        usage[k] = v.clone();
                    }
                }
            }
            "message_stop" => self.done = true,
            "error" => return Err(format!("the stream reported an error: {}", e["error"])),
            _ => {}
        }
        Ok(None)
    }

    fn finish(self: Box<Self>) -> Result<Value, String> {
        if !self.done {
            return Err("no `message_stop`".into());
        }
        let mut message = self.message;
        let mut content = Vec::with_capacity(self.blocks.len());
        for (mut block, input) in self.blocks {
            if block["type"] == "tool_use" {
                // An empty input streams no delta: the block's own (`{}`) stands.
                if !input.trim().is_empty() {
                    block["input"] = serde_json::from_str(&input)
                        .map_err(|e| format!("a streamed tool input is not JSON ({e})"))?;
                }
            }
            content.push(block);
        }
        message.insert("content".into(), Value::Array(content));
        Ok(Value::Object(message))
    }
}

/// An Ollama stream.
#[derive(Default)]
struct OllamaStream {
    content: String,
    calls: Vec<Value>,
    last: Option<Value>,
}

impl Assemble for OllamaStream {
    fn event(&mut self, _event: Option<&str>, data: &str) -> Result<Option<String>, String> {
        let line = json(data)?;
        if let Some(e) = line.get("error") {
            return Err(format!("the stream reported an error: {e}"));
        }
        let message = &line["message"];
        let text = text_of(&message["content"]).to_owned();
        self.content.push_str(&text);
        self.calls.extend(
            message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .cloned(),
        );
        if line["done"] == true {
            self.last = Some(line);
        }
        Ok(Some(text))
    }

    fn finish(self: Box<Self>) -> Result<Value, String> {
        let mut last = self.last.ok_or("no line with `done: true`")?;
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.calls.is_empty() {
            message["tool_calls"] = Value::Array(self.calls);
        }
        last["message"] = message;
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(s: &Streamed, events: &[(Option<&str>, &str)]) -> Result<(Value, String), String> {
        let mut a = (s.assembler)();
        let mut shown = String::new();
        for (e, d) in events {
            shown += &a.event(*e, d)?.unwrap_or_default();
        }
        Ok((a.finish()?, shown))
    }

    #[test]
    fn openai_chunks_assemble_into_a_completion_with_tool_calls_and_usage() {
        let (body, shown) = feed(
            &OPENAI,
            &[
                (None, r#"{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"va"}}]}"#),
                (None, r#"{"choices":[{"index":0,"delta":{"content":"lue\":1}"},"finish_reason":"stop"}]}"#),
                (None, r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#),
                (None, "[DONE]"),
            ],
        )
        .unwrap();
        assert_eq!(shown, r#"{"value":1}"#);
        assert_eq!(body["choices"][0]["message"]["content"], r#"{"value":1}"#);
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["completion_tokens"], 2);
        let (body, _) = feed(
            &OPENAI,
            &[
                (None, r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"grep","arguments":"{\"pat"}}]}}]}"#),
                (None, r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"tern\":\"x\"}"}}]},"finish_reason":"tool_calls"}]}"#),
                (None, "[DONE]"),
            ],
        )
        .unwrap();
        let call = &body["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(call["function"]["arguments"], r#"{"pattern":"x"}"#);
        assert_eq!(body["choices"][0]["message"]["content"], Value::Null);
        // Cut before `[DONE]`.
        let cut = feed(
            &OPENAI,
            &[(None, r#"{"choices":[{"index":0,"delta":{"content":"{"}}]}"#)],
        );
        assert!(cut.unwrap_err().contains("[DONE]"));
    }

    #[test]
    fn anthropic_events_assemble_into_a_message_with_the_tool_input() {
        let (body, shown) = feed(
            &ANTHROPIC,
            &[
                (Some("message_start"), r#"{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}"#),
                (Some("content_block_start"), r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"answer","input":{}}}"#),
                (Some("content_block_delta"), r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"value\": \"hi"}}"#),
                (Some("content_block_delta"), r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" there\"}"}}"#),
                (Some("content_block_stop"), r#"{"type":"content_block_stop","index":0}"#),
                (Some("message_delta"), r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":6}}"#),
                (Some("message_stop"), r#"{"type":"message_stop"}"#),
            ],
        )
        .unwrap();
        assert_eq!(shown, r#"{"value": "hi there"}"#);
        assert_eq!(body["content"][0]["input"], json!({"value": "hi there"}));
        assert_eq!(body["stop_reason"], "tool_use");
        assert_eq!(
            body["usage"],
            json!({"input_tokens": 9, "output_tokens": 6})
        );
        let cut = feed(
            &ANTHROPIC,
            &[(
                Some("message_start"),
                r#"{"type":"message_start","message":{}}"#,
            )],
        );
        assert!(cut.unwrap_err().contains("message_stop"));
    }

    #[test]
    fn ollama_lines_assemble_into_the_last_with_the_whole_message() {
        let (body, shown) = feed(
            &OLLAMA,
            &[
                (None, r#"{"message":{"role":"assistant","content":"{\"value\""},"done":false}"#),
                (None, r#"{"message":{"role":"assistant","content":": 2}"},"done":false}"#),
                (None, r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":3}"#),
            ],
        )
        .unwrap();
        assert_eq!(shown, r#"{"value": 2}"#);
        assert_eq!(body["message"]["content"], r#"{"value": 2}"#);
        assert_eq!(body["eval_count"], 3);
        assert!(
            feed(
                &OLLAMA,
                &[(None, r#"{"message":{"content":"{"},"done":false}"#)]
            )
            .is_err()
        );
    }
}

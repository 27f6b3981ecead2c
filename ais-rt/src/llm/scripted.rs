//! The scripted model: canned responses from a JSON file, for tests, offline examples and
//! benchmarks. Every trace and report of a run with it says it was scripted
//! ([`Model::is_scripted`]).
//!
//! # The file
//!
//! `--model scripted:FILE.json` names a JSON object that maps an instruction id to the list of
//! responses its slot gives, consumed in order, one per exchange:
//!
//! ```json
//! {
//!   "$comment": "scripted responses for examples/writing_plans.agir",
//!   "draft_header": ["# Plan: a CSV export\n\nGoal: …"],
//!   "classify": ["merge"],
//!   "review[0]": [{"score": 4, "summary": "ok"}],
//!   "review": [{"score": 3, "summary": "fine"}]
//! }
//! ```
//!
//! - A response is the JSON value the slot returns: a string for `str`, a member name for an
//!   enum, an object for a GEN-FILL, an edge target id for an SU ROUTE. It is checked like any
//!   model's answer: a schema-invalid response gets a repair round, which consumes the next
//!   response in the list.
//! - A SPAWN sibling `i` takes its responses from `id[i]` when the file has that key, else from
//!   `id` (shared by the siblings, in the order they ask).
//! - A response `{"$tool_calls": [{"name": "grep", "arguments": {…}}, …]}` is a round of tool
//!   calls instead of a value (an `id` per call is optional).
//! - `"$latency_ms": N` makes every exchange take N milliseconds (a model's think time: for
//!   tests and benchmarks of concurrent slots, e.g. SPAWN siblings spread over endpoints).
//! - Other keys that start with `$` are notes, ignored.
//!
//! A malformed file is an error naming the file and the key; a slot with no response left is
//! an [`ModelErrorKind::Exhausted`] error naming the file and the id.

use super::{
    Completion, Exchange, Model, ModelError, ModelErrorKind, ModelFuture, Reply, SlotRequest,
    ToolCall, Usage,
};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The most bytes a scripted-response file may have.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The responses of one key: those left, and how many there were.
#[derive(Debug)]
struct Queue {
    left: VecDeque<Value>,
    total: usize,
}

/// A model that answers from a file of scripted responses (see the module docs).
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    file: PathBuf,
    queues: Mutex<HashMap<String, Queue>>,
    latency: Option<Duration>,
}

impl ScriptedModel {
    /// Reads the scripted responses in `path`. The error names the file, the key and what is
    /// wrong with it.
    pub fn from_file(path: &Path) -> Result<Self, ModelError> {
        let shown = path.display();
        let config = |what: String| ModelError::new(ModelErrorKind::Config, what);
        let text = ais_core::files::read_regular_text(path, MAX_FILE_BYTES).map_err(|e| {
            let next = if e.is_not_found() {
                "; name an existing JSON file with `--model scripted:FILE.json`"
            } else {
                "; save the responses to a JSON file and name it with `--model scripted:FILE.json`"
            };
            config(format!(
                "cannot read the scripted responses `{shown}`: {e}{next}"
            ))
        })?;
        let json: Value = serde_json::from_str(&text).map_err(|e| {
            config(format!(
                "the scripted responses `{shown}` are not valid JSON: {e} (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        Self::from_json(path, json)
    }

    /// Scripted responses from `json`, as if read from `file` (which names them in messages).
    pub fn from_json(file: &Path, json: Value) -> Result<Self, ModelError> {
        let shown = file.display();
        let config = |what: String| ModelError::new(ModelErrorKind::Config, what);
        let Value::Object(map) = json else {
            return Err(config(format!(
                "the scripted responses `{shown}` must be a JSON object mapping each instruction id to a list of responses, not {}",
                super::shape::kind_of(&json)
            )));
        };
        let latency = match map.get("$latency_ms") {
            None => None,
            Some(v) => Some(Duration::from_millis(v.as_u64().ok_or_else(|| {
                config(format!(
                    "in the scripted responses `{shown}`, `$latency_ms` must be a whole number of milliseconds, not `{v}`"
                ))
            })?)),
        };
        let mut queues = HashMap::new();
        for (key, responses) in map {
            if key.starts_with('$') {
                continue;
            }
            let Value::Array(list) = responses else {
                return Err(config(format!(
                    "in the scripted responses `{shown}`, `{key}` must map to a list of responses (`\"{key}\": [RESPONSE, …]`), not {}",
                    super::shape::kind_of(&responses)
                )));
            };
            for (i, response) in list.iter().enumerate() {
                if let Some(calls) = response.get("$tool_calls") {
                    tool_calls(calls).map_err(|e| {
                        config(format!(
                            "in the scripted responses `{shown}`, response {} of `{key}`: {e}",
                            i + 1
                        ))
                    })?;
                }
            }
            queues.insert(
                key,
                Queue {
                    total: list.len(),
                    left: list.into(),
                },
            );
        }
        Ok(ScriptedModel {
            name: format!("scripted:{shown}"),
            file: file.to_owned(),
            queues: Mutex::new(queues),
            latency,
        })
    }

    /// Makes every exchange take `latency` (for benchmarks of concurrent slots).
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = Some(latency);
        self
    }

    /// How many responses of each key have been used so far (keys with none used are left
    /// out), to carry a scripted run across a pause ([`ScriptedModel::skip`]).
    pub fn used(&self) -> std::collections::BTreeMap<String, usize> {
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        queues
            .iter()
            .map(|(k, q)| (k.clone(), q.total - q.left.len()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// The responses never asked for, by key (keys with all used are left out): reported at
    /// the end of a scripted run, since an unasked answer usually means the run took another
    /// path than the script expected (a step that failed, a branch not taken).
    pub fn unused(&self) -> std::collections::BTreeMap<String, usize> {
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        queues
            .iter()
            .map(|(k, q)| (k.clone(), q.left.len()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Drops the first `n` responses of each key in `used` (as [`ScriptedModel::used`] counted
    /// them), so that a resumed run continues the script where the paused one stopped. Keys the
    /// file no longer has are ignored.
    pub fn skip(&self, used: &std::collections::BTreeMap<String, usize>) {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        for (key, n) in used {
            if let Some(q) = queues.get_mut(key) {
                let n = (*n).min(q.left.len());
                q.left.drain(..n);
            }
        }
    }

    /// Drops the `n` responses a journaled slot of `instruction` (SPAWN sibling `sibling`)
    /// used, under the key its request took (the rule of every exchange: `id[i]` when the
    /// file has it, else `id`): a resumed run replays those slots from its journal and asks the
    /// script only for the rest.
    pub fn skip_exchanges(&self, instruction: &str, sibling: Option<usize>, n: usize) {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let key = match sibling {
            Some(i) if queues.contains_key(&format!("{instruction}[{i}]")) => {
                format!("{instruction}[{i}]")
            }
            _ => instruction.to_owned(),
        };
        if let Some(q) = queues.get_mut(&key) {
            let n = n.min(q.left.len());
            q.left.drain(..n);
        }
    }

    /// The keys of the file that name no instruction of `program` (an `id[i]` key by its
    /// `id`), in no particular order: likely misspellings, worth a warning.
    pub fn unknown_ids(&self, program: &ais_core::Program) -> Vec<String> {
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let mut unknown: Vec<String> = queues
            .keys()
            .filter(|key| program.instruction(base_id(key)).is_none())
            .cloned()
            .collect();
        unknown.sort();
        unknown
    }

    /// The next response for `request`, and the key it came from.
    fn next(&self, request: &SlotRequest) -> Result<(String, usize, Value), ModelError> {
        let id = &request.instruction;
        let shown = self.file.display();
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let key = match request.sibling {
            Some(i) if queues.contains_key(&format!("{id}[{i}]")) => format!("{id}[{i}]"),
            _ => id.clone(),
        };
        let Some(queue) = queues.get_mut(&key) else {
            let sibling = match request.sibling {
                // The sibling as a person counts it; the key keeps the index from 0.
                Some(i) => format!(" (SPAWN sibling {}: key `{id}[{i}]` or `{id}`)", i + 1),
                None => String::new(),
            };
            return Err(ModelError::new(
                ModelErrorKind::Exhausted,
                format!(
                    "the scripted responses `{shown}` have none for instruction `{id}`{sibling}; add `\"{id}\": [RESPONSE, …]` to the file (a string for `str`, a member name for an enum, an object for GEN-FILL, a target id for an SU ROUTE)"
                ),
            ));
        };
        let index = queue.total - queue.left.len();
        match queue.left.pop_front() {
            Some(response) => Ok((key, index, response)),
            None => Err(ModelError::new(
                ModelErrorKind::Exhausted,
                format!(
                    "the scripted responses `{shown}` have no response left for `{key}`: all {} are used (a repair round or a loop takes one each); add more to the list under `\"{key}\"`",
                    queue.total
                ),
            )),
        }
    }
}

/// The instruction id of a key: `review[3]` → `review`.
fn base_id(key: &str) -> &str {
    match key.strip_suffix(']').and_then(|k| k.rsplit_once('[')) {
        Some((id, index)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => id,
        _ => key,
    }
}

/// The tool calls of a `{"$tool_calls": [...]}` response.
fn tool_calls(calls: &Value) -> Result<Vec<ToolCall>, String> {
    let Value::Array(list) = calls else {
        return Err(
            "`$tool_calls` must be a list of `{\"name\": TOOL, \"arguments\": {…}}`".into(),
        );
    };
    list.iter()
        .enumerate()
        .map(|(i, call)| {
            let Some(name) = call.get("name").and_then(Value::as_str) else {
                return Err(format!("tool call {} has no string `name`", i + 1));
            };
            let id = match call.get("id").and_then(Value::as_str) {
                Some(id) => id.to_owned(),
                None => format!("call_{}", i + 1),
            };
            Ok(ToolCall {
                id,
                name: name.to_owned(),
                arguments: call.get("arguments").cloned().unwrap_or_else(|| json!({})),
            })
        })
        .collect()
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_scripted(&self) -> bool {
        true
    }

    fn complete<'a>(&'a self, request: &'a SlotRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            if let Some(latency) = self.latency {
                tokio::time::sleep(latency).await;
            }
            let (key, index, response) = self.next(request)?;
            let reply = match response.get("$tool_calls") {
                // Checked when the file was read.
                Some(calls) => Reply::ToolCalls {
                    calls: tool_calls(calls)
                        .map_err(|e| ModelError::new(ModelErrorKind::Protocol, e))?,
                },
                None => Reply::Value {
                    value: response.clone(),
                },
            };
            let request_json = serde_json::to_value(request).unwrap_or(Value::Null);
            Ok(Completion {
                reply,
                usage: Usage::default(),
                exchange: Exchange {
                    request: request_json,
                    response: json!({
                        "scripted": self.file.display().to_string(),
                        "key": key,
                        "index": index,
                        "response": response,
                    }),
                },
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str, sibling: Option<usize>) -> SlotRequest {
        SlotRequest {
            instruction: id.into(),
            opcode: "GEN-RAW".into(),
            doc: "Write it.".into(),
            knowledge: vec![],
            operands: vec![],
            schema: json!({"type": "string"}),
            choices: None,
            tools: vec![],
            sibling,
            siblings: None,
            history: vec![],
        }
    }

    fn model(json: Value) -> ScriptedModel {
        ScriptedModel::from_json(Path::new("plan.json"), json).unwrap()
    }

    fn value(c: Completion) -> Value {
        match c.reply {
            Reply::Value { value } => value,
            other => panic!("expected a value, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn responses_are_consumed_in_order_then_run_out() {
        let m = model(json!({"$comment": "note", "draft": ["one", "two"]}));
        assert!(m.is_scripted());
        assert_eq!(m.name(), "scripted:plan.json");
        let r = request("draft", None);
        assert_eq!(value(m.complete(&r).await.unwrap()), json!("one"));
        let second = m.complete(&r).await.unwrap();
        assert_eq!(second.exchange.response["index"], 1);
        assert_eq!(second.exchange.request["instruction"], "draft");
        assert_eq!(value(second), json!("two"));
        let err = m.complete(&r).await.unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Exhausted);
        assert!(
            err.message.contains("plan.json") && err.message.contains("`draft`"),
            "{}",
            err.message
        );
        let err = m.complete(&request("other", None)).await.unwrap_err();
        assert!(
            err.message.contains("none for instruction `other`"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn a_sibling_takes_its_own_key_first_then_the_shared_list() {
        let m = model(json!({"review[1]": ["mine"], "review": ["shared"]}));
        assert_eq!(
            value(m.complete(&request("review", Some(1))).await.unwrap()),
            json!("mine")
        );
        assert_eq!(
            value(m.complete(&request("review", Some(0))).await.unwrap()),
            json!("shared")
        );
        // Index 1's own list is used up; it does not fall back to the shared one.
        let err = m.complete(&request("review", Some(1))).await.unwrap_err();
        assert!(err.message.contains("`review[1]`"), "{}", err.message);
        // A missing key names the sibling as a person counts it, and the key by its index.
        let err = m.complete(&request("tally", Some(0))).await.unwrap_err();
        assert!(
            err.message
                .contains("(SPAWN sibling 1: key `tally[0]` or `tally`)"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn a_tool_call_response_is_a_tool_round() {
        let m = model(
            json!({"draft": [{"$tool_calls": [{"name": "grep", "arguments": {"pattern": "x"}}]}]}),
        );
        match m.complete(&request("draft", None)).await.unwrap().reply {
            Reply::ToolCalls { calls } => {
                assert_eq!(calls[0].name, "grep");
                assert_eq!(calls[0].id, "call_1");
                assert_eq!(calls[0].arguments, json!({"pattern": "x"}));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_malformed_file_names_the_file_and_the_key() {
        let path = Path::new("s.json");
        let err = ScriptedModel::from_json(path, json!(["x"])).unwrap_err();
        assert!(
            err.message.contains("`s.json` must be a JSON object"),
            "{}",
            err.message
        );
        let err = ScriptedModel::from_json(path, json!({"draft": "x"})).unwrap_err();
        assert!(
            err.message.contains("`draft` must map to a list"),
            "{}",
            err.message
        );
        let err =
            ScriptedModel::from_json(path, json!({"draft": [{"$tool_calls": [{}]}]})).unwrap_err();
        assert!(
            err.message.contains("response 1 of `draft`"),
            "{}",
            err.message
        );
        assert_eq!(err.kind, ModelErrorKind::Config);
    }

    #[test]
    fn files_are_read_with_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let err = ScriptedModel::from_file(&missing).unwrap_err();
        assert!(err.message.contains("missing.json"), "{}", err.message);
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{\"draft\": [\"x\",]}").unwrap();
        let err = ScriptedModel::from_file(&bad).unwrap_err();
        assert!(err.message.contains("not valid JSON") && err.message.contains("line 1"));
        let good = dir.path().join("good.json");
        std::fs::write(&good, "{\"draft\": [\"x\"]}").unwrap();
        assert!(ScriptedModel::from_file(&good).is_ok());
    }

    #[test]
    fn unknown_ids_are_the_keys_no_instruction_has() {
        let program = ais_core::agir::read(
            "nodes:\n  - {id: draft, type: GEN-RAW, doc: d, writes: [x]}\n  - {id: done, type: TERMINAL, reads: [x]}\ncarries:\n  x: {type: str}\n",
        )
        .unwrap()
        .program;
        let m = model(json!({"draft": [], "draft[2]": [], "drfat": [], "done[x]": []}));
        assert_eq!(m.unknown_ids(&program), vec!["done[x]", "drfat"]);
    }

    #[tokio::test]
    async fn a_script_continues_where_a_paused_run_stopped() {
        let first = model(json!({"a": ["1", "2", "3"], "b": ["x"]}));
        first.complete(&request("a", None)).await.unwrap();
        first.complete(&request("a", None)).await.unwrap();
        let used = first.used();
        assert_eq!(
            used.into_iter().collect::<Vec<_>>(),
            vec![("a".to_owned(), 2)]
        );
        let second = model(json!({"a": ["1", "2", "3"], "b": ["x"]}));
        second.skip(&first.used());
        assert_eq!(
            value(second.complete(&request("a", None)).await.unwrap()),
            json!("3")
        );
        assert_eq!(
            value(second.complete(&request("b", None)).await.unwrap()),
            json!("x")
        );
        let mut too_many = std::collections::BTreeMap::new();
        too_many.insert("b".to_owned(), 9);
        too_many.insert("gone".to_owned(), 1);
        second.skip(&too_many);
        assert!(second.complete(&request("b", None)).await.is_err());
    }

    #[tokio::test]
    async fn latency_delays_each_exchange() {
        let m = model(json!({"a": ["x"]})).with_latency(Duration::from_millis(30));
        let start = std::time::Instant::now();
        m.complete(&request("a", None)).await.unwrap();
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}

//! What a Restate server holds, through its admin API's SQL introspection (`POST /query`):
//! the runs of the workflows an endpoint serves, and which of them wait for an answer.

use crate::client::{ClientError, http_client};
use serde_json::{Value, json};

/// One run a server holds: an invocation of a workflow's `run` handler.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunListing {
    /// The run's id (the workflow's key).
    pub id: String,
    /// The workflow (the program's service name).
    pub workflow: String,
    /// Restate's status of the invocation (`running`, `backing-off`, `suspended`,
    /// `completed`, …), or `paused` while the run waits for an answer.
    pub status: String,
    /// For a completed run: `success` (the run returned its report, whatever the report's own
    /// status) or `failure` (Restate recorded a terminal error).
    pub completion: Option<String>,
    /// When it was submitted (RFC 3339, as the server gives it).
    pub created_at: String,
    /// When Restate last changed it.
    pub modified_at: String,
    /// The invocation's journal entries so far.
    pub journal_size: u64,
    /// The last failure of a retrying invocation (e.g. no endpoint answers).
    pub last_failure: Option<String>,
}

/// A Restate server's admin API.
#[derive(Clone, Debug)]
pub struct Admin {
    base: String,
    http: reqwest::Client,
}

/// `text` as a SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn text(row: &Value, col: &str) -> Option<String> {
    match row.get(col)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Admin {
    /// The admin API at `base` (e.g. `http://127.0.0.1:9070`).
    pub fn new(base: &str) -> Admin {
        Admin {
            base: base.trim_end_matches('/').to_owned(),
            http: http_client(),
        }
    }

    /// The rows of `sql`, run by the server's introspection engine.
    pub async fn query(&self, sql: &str) -> Result<Vec<Value>, ClientError> {
        let url = format!("{}/query", self.base);
        let r = self
            .http
            .post(&url)
            .header("accept", "application/json")
            .json(&json!({ "query": sql }))
            .send()
            .await
            .map_err(|e| ClientError::Transport {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let status = r.status().as_u16();
        let body = r.text().await.unwrap_or_default();
        if !(200..300).contains(&status) {
            return Err(ClientError::Status { url, status, body });
        }
        let v: Value = serde_json::from_str(&body).map_err(|e| ClientError::Status {
            url: url.clone(),
            status,
            body: format!("not JSON ({e}): {body}"),
        })?;
        match v.get("rows") {
            Some(Value::Array(rows)) => Ok(rows.clone()),
            _ => Err(ClientError::Status {
                url,
                status,
                body: format!("no `rows` in the answer: {body}"),
            }),
        }
    }

    /// The runs the server holds, oldest first; only `id`'s when given.
    pub async fn runs(&self, id: Option<&str>) -> Result<Vec<RunListing>, ClientError> {
        let only = id.map_or_else(String::new, |id| {
            format!(" AND target_service_key = {}", literal(id))
        });
        let rows = self
            .query(&format!(
                "SELECT target_service_name, target_service_key, status, completion_result, \
                 created_at, modified_at, journal_size, last_failure FROM sys_invocation \
                 WHERE target_service_ty = 'workflow' AND target_handler_name = 'run'{only} \
                 ORDER BY created_at"
            ))
            .await?;
        let paused: Vec<(String, String)> = self
            .query("SELECT service_name, service_key FROM state WHERE key = 'pause'")
            .await?
            .iter()
            .filter_map(|r| Some((text(r, "service_name")?, text(r, "service_key")?)))
            .collect();
        Ok(rows
            .iter()
            .filter_map(|r| {
                let workflow = text(r, "target_service_name")?;
                let id = text(r, "target_service_key")?;
                let mut status = text(r, "status").unwrap_or_default();
                if status != "completed" && paused.contains(&(workflow.clone(), id.clone())) {
                    status = "paused".into();
                }
                Some(RunListing {
                    completion: text(r, "completion_result"),
                    created_at: text(r, "created_at").unwrap_or_default(),
                    modified_at: text(r, "modified_at").unwrap_or_default(),
                    journal_size: r.get("journal_size").and_then(Value::as_u64).unwrap_or(0),
                    last_failure: text(r, "last_failure"),
                    id,
                    workflow,
                    status,
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_quote_in_an_id_stays_inside_the_literal() {
        assert_eq!(super::literal("a' OR '1'='1"), "'a'' OR ''1''=''1'");
    }
}

//! Drives runs through a Restate server's ingress: submit a run, follow it to its end or its
//! pause, answer a pause.
//!
//! The ingress paths are Restate's own: `POST /{workflow}/{id}/run/send` starts the run (once
//! per id: a second submission of the same id attaches to the first), `GET
//! /restate/workflow/{workflow}/{id}/attach` waits for its output, `POST
//! /{workflow}/{id}/{answer|pause}` calls the shared handlers.

use crate::workflow::RunRequest;
use serde_json::Value;
use std::time::Duration;

/// Why the ingress could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No answer from the server (its ingress or admin API).
    #[error(
        "the Restate server at {url} did not answer: {message}; is it running (`restate-server`)?"
    )]
    Transport {
        /// The URL.
        url: String,
        /// The transport error.
        message: String,
    },
    /// The server answered with an error.
    #[error("the Restate server answered {status} for {url}: {body}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The body (Restate's error message).
        body: String,
    },
}

/// How a followed run stood when [`Ingress::follow`] returned.
#[derive(Clone, Debug, PartialEq)]
pub enum Followed {
    /// The run ended: its report object (`ais run --format json`'s).
    Ended(Value),
    /// The run waits for a human answer: the pause (`{"n", "carry", "prompt", "instruction"}`).
    Paused(Value),
}

/// The HTTP client every request of this crate goes through (loopback and cluster URLs: no
/// proxy).
pub(crate) fn http_client() -> reqwest::Client {
    ais_rt::install_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// A Restate server's ingress.
#[derive(Clone, Debug)]
pub struct Ingress {
    base: String,
    http: reqwest::Client,
}

impl Ingress {
    /// The ingress at `base` (e.g. `http://127.0.0.1:8080`).
    pub fn new(base: &str) -> Ingress {
        Ingress {
            base: base.trim_end_matches('/').to_owned(),
            http: http_client(),
        }
    }

    async fn send(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<reqwest::Response, ClientError> {
        let r = req.send().await.map_err(|e| ClientError::Transport {
            url: url.to_owned(),
            message: e.to_string(),
        })?;
        if r.status().is_success() {
            return Ok(r);
        }
        let status = r.status().as_u16();
        let body = r.text().await.unwrap_or_default();
        Err(ClientError::Status {
            url: url.to_owned(),
            status,
            body,
        })
    }

    async fn json(&self, r: reqwest::Response, url: &str) -> Result<Value, ClientError> {
        let text = r.text().await.map_err(|e| ClientError::Transport {
            url: url.to_owned(),
            message: e.to_string(),
        })?;
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).map_err(|e| ClientError::Status {
            url: url.to_owned(),
            status: 200,
            body: format!("not JSON ({e}): {text}"),
        })
    }

    /// Starts run `id` of `workflow` (without waiting for it).
    pub async fn submit(
        &self,
        workflow: &str,
        id: &str,
        request: &RunRequest,
    ) -> Result<(), ClientError> {
        let url = format!("{}/{workflow}/{id}/run/send", self.base);
        self.send(self.http.post(&url).json(request), &url).await?;
        Ok(())
    }

    /// Waits for run `id` of `workflow` to end, and returns its report object.
    pub async fn output(&self, workflow: &str, id: &str) -> Result<Value, ClientError> {
        let url = format!("{}/restate/workflow/{workflow}/{id}/attach", self.base);
        let r = self.send(self.http.get(&url), &url).await?;
        self.json(r, &url).await
    }

    /// The pause run `id` waits on, or `None`.
    pub async fn pause(&self, workflow: &str, id: &str) -> Result<Option<Value>, ClientError> {
        let url = format!("{}/{workflow}/{id}/pause", self.base);
        let r = self.send(self.http.post(&url), &url).await?;
        Ok(Some(self.json(r, &url).await?).filter(|v| !v.is_null()))
    }

    /// Answers the pause run `id` waits on.
    pub async fn answer(&self, workflow: &str, id: &str, answer: &str) -> Result<(), ClientError> {
        let url = format!("{}/{workflow}/{id}/answer", self.base);
        self.send(self.http.post(&url).json(&answer), &url).await?;
        Ok(())
    }

    /// Follows run `id` until it ends or pauses for a human answer.
    pub async fn follow(&self, workflow: &str, id: &str) -> Result<Followed, ClientError> {
        self.follow_after(workflow, id, 0).await
    }

    /// Follows run `id` until it ends or pauses for a human answer after its `answered`-th
    /// pause (whose record stays on the server until the run has taken the answer).
    pub async fn follow_after(
        &self,
        workflow: &str,
        id: &str,
        answered: u64,
    ) -> Result<Followed, ClientError> {
        let output = self.output(workflow, id);
        tokio::pin!(output);
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                out = &mut output => return out.map(Followed::Ended),
                _ = tick.tick() => {
                    if let Some(p) = self.pause(workflow, id).await?
                        && pause_number(&p) > answered
                    {
                        return Ok(Followed::Paused(p));
                    }
                }
            }
        }
    }
}

/// The number of a pause (`n`: the run's first pause is 1).
pub fn pause_number(pause: &Value) -> u64 {
    pause.get("n").and_then(Value::as_u64).unwrap_or(0)
}

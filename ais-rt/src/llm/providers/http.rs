//! One JSON POST with the bounds every provider shares: a per-request timeout, retries with
//! exponential backoff and jitter on 429, 5xx, timeouts and dropped connections (honouring
//! `Retry-After`; never on any other 4xx), all inside the slot's total deadline.

use super::ProviderOptions;
use crate::llm::{Completion, Exchange, ModelError, ModelErrorKind, Reply, SlotRequest, Usage};
use backon::{ExponentialBuilder, Retryable};
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// A secret (an API key): never printed, never logged, scrubbed from any text that echoes it.
#[derive(Clone)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(value: String) -> Self {
        Secret(value)
    }

    /// A header value carrying the secret, marked sensitive so that no `Debug` shows it.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0)).map_err(|_| {
            ModelError::new(
                ModelErrorKind::Config,
                "the API key holds characters an HTTP header cannot carry; check the variable",
            )
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// `text` with every occurrence of the secret replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.0, "<redacted>")
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The HTTP side of a provider: one client, the bounds, and the start of each slot's deadline.
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    options: ProviderOptions,
    /// The provider label used in messages (`openai`, `ollama`, `anthropic`).
    label: &'static str,
    secret: Option<Secret>,
    /// When each slot (instruction, SPAWN sibling) started: its first exchange has no history.
    slots: Mutex<HashMap<(String, Option<usize>), Instant>>,
}

/// One failed attempt, before the retry policy judges it.
#[derive(Debug)]
struct Failure {
    error: ModelError,
    retry: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn fatal(error: ModelError) -> Self {
        Failure {
            error,
            retry: false,
            retry_after: None,
        }
    }
}

impl Transport {
    pub(crate) fn new(
        label: &'static str,
        options: ProviderOptions,
        secret: Option<Secret>,
    ) -> Result<Self, ModelError> {
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .user_agent(concat!("ais/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| {
                ModelError::new(
                    ModelErrorKind::Config,
                    format!("{label}: cannot set up the HTTP client: {err}"),
                )
            })?;
        Ok(Transport {
            client,
            options,
            label,
            secret,
            slots: Mutex::new(HashMap::new()),
        })
    }

    /// `text` with the secret scrubbed out.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.secret {
            Some(secret) => secret.scrub(text),
            None => text.to_string(),
        }
    }

    /// `value` with the secret scrubbed out of every string in it.
    pub(crate) fn scrub_value(&self, value: Value) -> Value {
        let Some(secret) = &self.secret else {
            return value;
        };
        let text = value.to_string();
        if secret.0.is_empty() || !text.contains(&secret.0) {
            return value;
        }
        serde_json::from_str(&secret.scrub(&text)).unwrap_or(Value::Null)
    }

    /// The deadline of the slot this exchange belongs to: a slot's first exchange (no history)
    /// starts its clock; later ones (tool rounds, repairs) share it.
    pub(crate) fn slot_deadline(
        &self,
        instruction: &str,
        sibling: Option<usize>,
        first: bool,
    ) -> Instant {
        let now = Instant::now();
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let key = (instruction.to_string(), sibling);
        let start = if first {
            slots.insert(key, now);
            now
        } else {
            *slots.entry(key).or_insert(now)
        };
        start + self.options.slot_deadline
    }

    /// Sends one exchange of `request`'s slot: `body` with the secret scrubbed out, POSTed to
    /// `url` under the slot's deadline. Returns the scrubbed body and the scrubbed response, as
    /// the trace keeps them. With `stream` (the provider asked for a streamed answer), a
    /// streamed response is read as it comes — each piece of text shown to the watcher
    /// ([`crate::llm::live`]) — and assembled into the body a plain request returns; a stream
    /// that ends before its end is retried like a dropped connection.
    pub(crate) async fn send(
        &self,
        request: &SlotRequest,
        url: &Url,
        headers: &HeaderMap,
        body: Value,
        stream: Option<Streamed>,
    ) -> Result<(Value, Value), ModelError> {
        let body = self.scrub_value(body);
        let deadline = self.slot_deadline(
            &request.instruction,
            request.sibling,
            request.history.is_empty(),
        );
        let asked = Asked {
            url,
            headers,
            body: &body,
            deadline,
            stream: stream.map(|s| (s, request)),
        };
        let response = self.post(&asked).await?;
        Ok((body, self.scrub_value(response)))
    }

    /// POSTs the request and returns the response body as JSON, retried under the bounds.
    async fn post(&self, asked: &Asked<'_>) -> Result<Value, ModelError> {
        let deadline = asked.deadline;
        let backoff = ExponentialBuilder::default()
            .with_jitter()
            .with_min_delay(self.options.min_backoff)
            .with_max_delay(self.options.max_backoff)
            .with_max_times(self.options.max_retries);
        let attempt = || self.attempt(asked);
        let retried = attempt
            .retry(backoff)
            .sleep(tokio::time::sleep)
            .when(|failure: &Failure| failure.retry)
            .adjust(|failure: &Failure, delay| {
                // The backoff decides whether to retry at all (None: retries used up);
                // the server's Retry-After, when it sent one, decides how long to wait.
                let delay = failure.retry_after.unwrap_or(delay?);
                // A wait that would end past the deadline is not worth starting.
                (Instant::now() + delay < deadline).then_some(delay)
            })
            .notify(|failure: &Failure, delay| {
                tracing::warn!(
                    provider = self.label,
                    error = %failure.error,
                    ?delay,
                    "model request failed; retrying"
                );
            });
        let remaining = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(remaining, retried).await {
            Ok(result) => result.map_err(|failure| failure.error),
            Err(_) => Err(self.deadline_error()),
        }
    }

    fn deadline_error(&self) -> ModelError {
        ModelError::new(
            ModelErrorKind::Timeout,
            format!(
                "{}: the slot's total deadline of {:?} ran out before the model answered",
                self.label, self.options.slot_deadline
            ),
        )
    }

    async fn attempt(&self, asked: &Asked<'_>) -> Result<Value, Failure> {
        let Asked {
            url,
            headers,
            body,
            deadline,
            ..
        } = *asked;
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(Failure::fatal(self.deadline_error()));
        }
        let timeout = self.options.request_timeout.min(remaining);
        let sent = self
            .client
            .post(url.clone())
            .headers(headers.clone())
            .json(body)
            .timeout(timeout)
            .send()
            .await;
        let capped = timeout < self.options.request_timeout;
        let mut response = sent.map_err(|err| self.transport_failure(&err, timeout, capped))?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        if let Some((streamed, request)) = &asked.stream
            && status.is_success()
            && is_streamed(response.headers())
        {
            return self.read_stream(response, streamed, request).await;
        }
        let limit = self.options.max_response_bytes;
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| self.transport_failure(&err, timeout, capped))?
        {
            if bytes.len() + chunk.len() > limit {
                return Err(Failure::fatal(ModelError::new(
                    ModelErrorKind::Protocol,
                    format!(
                        "{}: the response body is larger than {limit} bytes; not read further",
                        self.label
                    ),
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            return Err(self.status_failure(status, &text, retry_after));
        }
        let text = text.as_ref();
        serde_json::from_str(text).map_err(|err| {
            Failure::fatal(ModelError::new(
                ModelErrorKind::Protocol,
                format!(
                    "{}: the response body is not JSON ({err}); it began: {}",
                    self.label,
                    self.scrub(&excerpt(text))
                ),
            ))
        })
    }

    /// Reads a streamed answer to its end: each event (an SSE event, an NDJSON line) goes to a
    /// fresh assembler, whose text is shown to the watcher as it comes; the body is the
    /// assembler's once the stream ended at its end. A stream cut before (the connection
    /// dropped, the body ended early) is a transport failure, retried; a body past the size
    /// limit or an event that does not read is final.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        streamed: &Streamed,
        request: &SlotRequest,
    ) -> Result<Value, Failure> {
        use futures_util::StreamExt;
        let limit = self.options.max_response_bytes;
        let mut assembler = (streamed.assembler)();
        let protocol = |message: String| {
            Failure::fatal(ModelError::new(
                ModelErrorKind::Protocol,
                format!("{}: {}", self.label, self.scrub(&message)),
            ))
        };
        let mut feed = |event: Option<&str>, data: &str| -> Result<(), Failure> {
            let text = assembler.event(event, data).map_err(protocol)?;
            if let Some(text) = text {
                super::super::live::show(&request.instruction, request.sibling, &text);
            }
            Ok(())
        };
        // The body as it comes, counted against the limit; a transport error ends it.
        let read = std::sync::atomic::AtomicUsize::new(0);
        let over = || read.load(std::sync::atomic::Ordering::Relaxed) > limit;
        let mut cut: Option<Failure> = None;
        let bytes = response.bytes_stream().map(|chunk| {
            let chunk = chunk.map_err(|err| std::io::Error::other(err.to_string()))?;
            read.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed);
            Ok::<_, std::io::Error>(chunk)
        });
        match streamed.framing {
            Framing::Sse => {
                let mut events = Box::pin(sse_stream::SseStream::from_bytes_stream(bytes));
                while let Some(event) = events.next().await {
                    if over() {
                        break;
                    }
                    match event {
                        Ok(sse) => feed(sse.event.as_deref(), sse.data.as_deref().unwrap_or(""))?,
                        Err(e) => {
                            cut = Some(self.cut(&e.to_string()));
                            break;
                        }
                    }
                }
            }
            Framing::Ndjson => {
                let mut bytes = Box::pin(bytes);
                let mut line = Vec::new();
                while let Some(chunk) = bytes.next().await {
                    let chunk = match chunk {
                        Ok(c) => c,
                        Err(e) => {
                            cut = Some(self.cut(&e.to_string()));
                            break;
                        }
                    };
                    if over() {
                        break;
                    }
                    for &b in chunk.iter() {
                        if b == b'\n' {
                            let text = String::from_utf8_lossy(&line).into_owned();
                            line.clear();
                            if !text.trim().is_empty() {
                                feed(None, &text)?;
                            }
                        } else {
                            line.push(b);
                        }
                    }
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                if cut.is_none() && !text.trim().is_empty() {
                    feed(None, &text)?;
                }
            }
        }
        if over() {
            return Err(protocol(format!(
                "the streamed response is larger than {limit} bytes; not read further"
            )));
        }
        if let Some(failure) = cut {
            return Err(failure);
        }
        assembler.finish().map_err(|e| self.cut(&e))
    }

    /// A stream that ended before its end: retried like a dropped connection.
    fn cut(&self, why: &str) -> Failure {
        Failure {
            error: ModelError::new(
                ModelErrorKind::Transport,
                format!(
                    "{}: the streamed answer was cut before its end ({}); nothing of it is kept",
                    self.label,
                    self.scrub(why)
                ),
            ),
            retry: true,
            retry_after: None,
        }
    }

    /// A request that failed on the way; `capped` when its timeout was what remained of the
    /// slot's deadline (then running out is the deadline's doing, and final).
    fn transport_failure(&self, err: &reqwest::Error, timeout: Duration, capped: bool) -> Failure {
        if err.is_timeout() && capped {
            return Failure::fatal(self.deadline_error());
        }
        let (kind, message) = if err.is_timeout() {
            (
                ModelErrorKind::Timeout,
                format!(
                    "{}: no response within the request timeout of {timeout:?}",
                    self.label
                ),
            )
        } else {
            let mut message = format!("{}: the request failed: {err}", self.label);
            let mut source = std::error::Error::source(err);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            (ModelErrorKind::Transport, message)
        };
        Failure {
            error: ModelError::new(kind, self.scrub(&message)),
            retry: true,
            retry_after: None,
        }
    }

    fn status_failure(
        &self,
        status: StatusCode,
        text: &str,
        retry_after: Option<Duration>,
    ) -> Failure {
        let detail = self.scrub(&error_detail(text));
        let label = self.label;
        let (kind, retry, next) = match status.as_u16() {
            429 => (
                ModelErrorKind::RateLimited,
                true,
                "the provider kept rate-limiting; wait, or lower the parallelism",
            ),
            408 => (ModelErrorKind::Timeout, true, "the provider timed out"),
            500..=599 => (
                ModelErrorKind::Transport,
                true,
                "the provider kept failing; try again later",
            ),
            401 | 403 => (
                ModelErrorKind::Protocol,
                false,
                "check the API key and that it may use this model",
            ),
            404 => (
                ModelErrorKind::Protocol,
                false,
                "check the model name and the base URL",
            ),
            _ => (
                ModelErrorKind::Protocol,
                false,
                "the provider refused the request",
            ),
        };
        let message = format!("{label}: HTTP {status}: {detail} ({next})");
        Failure {
            error: ModelError::new(kind, message),
            retry,
            retry_after,
        }
    }
}

/// One request as the retries send it again.
struct Asked<'a> {
    url: &'a Url,
    headers: &'a HeaderMap,
    body: &'a Value,
    deadline: Instant,
    /// How a streamed answer is read, and the slot it answers (for the watcher).
    stream: Option<(Streamed, &'a SlotRequest)>,
}

/// How a streamed response body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events (OpenAI-compatible, Anthropic).
    Sse,
    /// One JSON object per line (Ollama).
    Ndjson,
}

/// A provider's way to read its streamed answer: the framing, and a fresh assembler for each
/// attempt.
#[derive(Clone, Copy)]
pub(crate) struct Streamed {
    pub framing: Framing,
    pub assembler: fn() -> Box<dyn Assemble>,
}

/// Assembles a streamed answer into the response body a plain request returns, so that it is
/// parsed, validated, traced and journaled exactly as that one.
pub(crate) trait Assemble: Send {
    /// One event: its SSE event name (none for NDJSON) and its data. Returns the text to show
    /// the watcher, if any; an error when the event does not read.
    fn event(&mut self, event: Option<&str>, data: &str) -> Result<Option<String>, String>;
    /// The whole body once the stream ended; an error (the stream was cut) when it ended
    /// before its end marker.
    fn finish(self: Box<Self>) -> Result<Value, String>;
}

/// Whether a response is streamed: `text/event-stream` or NDJSON. (A server that answers a
/// streamed request with plain JSON is read as plain JSON.)
fn is_streamed(headers: &HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            let t = t.to_ascii_lowercase();
            t.starts_with("text/event-stream")
                || t.starts_with("application/x-ndjson")
                || t.starts_with("application/ndjson")
        })
}

/// `Retry-After` as seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>()
        && seconds.is_finite()
        && seconds >= 0.0
    {
        return Some(Duration::from_secs_f64(seconds.min(86_400.0)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The provider's own error message when the body has one (`{"error": {"message": ...}}`,
/// `{"error": "..."}`), else the start of the body.
fn error_detail(text: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed.as_ref().and_then(|body| {
        let error = body.get("error")?;
        error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(str::to_string)
    });
    match message {
        Some(message) => excerpt(&message),
        None if text.trim().is_empty() => "(empty body)".to_string(),
        None => excerpt(text),
    }
}

/// At most 300 characters of `text`, on one line.
pub(crate) fn excerpt(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    match flat.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat.to_string(),
    }
}

/// The completion of one exchange: the provider's parse of the response (a `Protocol` error
/// named after the provider when it does not parse), with the raw exchange kept.
pub(crate) fn completion(
    name: &str,
    request: Value,
    response: Value,
    parsed: Result<(Reply, Usage), String>,
) -> Result<Completion, ModelError> {
    let (reply, usage) = parsed.map_err(|message| {
        ModelError::new(ModelErrorKind::Protocol, format!("{name}: {message}"))
    })?;
    Ok(Completion {
        reply,
        usage,
        exchange: Exchange { request, response },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_fractions_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("0.5"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(500)));
        let later = SystemTime::now() + Duration::from_secs(120);
        let date = httpdate::fmt_http_date(later);
        headers.insert(RETRY_AFTER, HeaderValue::from_str(&date).unwrap());
        let wait = retry_after(&headers).unwrap();
        assert!(
            wait > Duration::from_secs(100) && wait <= Duration::from_secs(120),
            "{wait:?}"
        );
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn error_detail_prefers_the_providers_message() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            error_detail(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_detail(""), "(empty body)");
        assert_eq!(excerpt(&"x".repeat(400)).chars().count(), 301);
    }

    #[test]
    fn a_secret_never_shows() {
        let secret = Secret::new("sk-test-123".to_string());
        assert_eq!(format!("{secret:?}"), "<redacted>");
        assert_eq!(
            secret.scrub("key sk-test-123 echoed"),
            "key <redacted> echoed"
        );
        let header = secret.header("Bearer ").unwrap();
        assert!(header.is_sensitive());
        assert!(!format!("{header:?}").contains("sk-test"));
    }
}

//! `http_get`: one GET over reqwest (rustls), under the call's timeout and body cap.

use super::{AccessPolicy, ToolError, ToolErrorKind, ToolLimits};
use ais_core::Value;
use std::sync::Arc;

/// Fetches `url` and returns its body as text (invalid UTF-8 replaced), through the client of
/// `policy`, which refuses internal addresses (see [`super::policy`]).
pub(crate) async fn get(
    url: &str,
    limits: &ToolLimits,
    policy: &Arc<AccessPolicy>,
) -> Result<Value, ToolError> {
    let url = url.trim();
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        ToolError::new(
            ToolErrorKind::BadArguments,
            format!("tool `http_get`: `{url}` is not a URL ({e}); give a full http(s) URL"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ToolError::new(
            ToolErrorKind::BadArguments,
            format!(
                "tool `http_get` fetches only http and https URLs, not `{}:`",
                parsed.scheme()
            ),
        ));
    }
    if let Some(why) = policy.refuse_url(&parsed) {
        return Err(ToolError::new(
            ToolErrorKind::PathEscape,
            format!("tool `http_get`: {why}"),
        ));
    }
    let client = policy.client()?;
    match tokio::time::timeout(limits.timeout, fetch(client, parsed, limits)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::new(
            ToolErrorKind::Timeout,
            format!(
                "tool `http_get`: `{url}` took longer than {:?} and was abandoned",
                limits.timeout
            ),
        )),
    }
}

async fn fetch(
    client: &reqwest::Client,
    url: reqwest::Url,
    limits: &ToolLimits,
) -> Result<Value, ToolError> {
    let shown = url.to_string();
    let failed = |e: reqwest::Error| {
        ToolError::new(
            ToolErrorKind::Io,
            format!("tool `http_get`: fetching `{shown}` failed: {e}"),
        )
    };
    let mut response = client.get(url.clone()).send().await.map_err(|e| {
        // A refusal by the resolver or the redirect policy is no network failure: say so.
        let chain = std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
            .map(ToString::to_string)
            .find(|m| m.contains("--allow-net"));
        match chain {
            Some(why) => ToolError::new(
                ToolErrorKind::PathEscape,
                format!("tool `http_get`: fetching `{shown}` refused: {why}"),
            ),
            None => failed(e),
        }
    })?;
    let status = response.status();
    let mut body = Vec::new();
    let mut over = false;
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        let room = limits.max_output_bytes.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            over = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if over {
        return Err(ToolError {
            kind: ToolErrorKind::OutputLimit,
            message: format!(
                "tool `http_get`: the body of `{shown}` is larger than the {}-byte output cap",
                limits.max_output_bytes
            ),
            output: text,
        });
    }
    if !status.is_success() {
        return Err(ToolError {
            kind: ToolErrorKind::Failed,
            message: format!("tool `http_get`: `{shown}` answered {status}"),
            output: text,
        });
    }
    Ok(Value::Str(text))
}

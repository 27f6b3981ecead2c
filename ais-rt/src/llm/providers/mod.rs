//! Real model providers for the Stochastic Unit, over HTTP.
//!
//! | spec | protocol | set up by |
//! |---|---|---|
//! | `openai:MODEL` | OpenAI chat completions, `response_format` JSON Schema (strict), tool calls | `OPENAI_API_KEY`, `OPENAI_BASE_URL` |
//! | `ollama:MODEL` | Ollama's `/api/chat`, JSON Schema `format`, tool calls | `OLLAMA_HOST` (default `http://localhost:11434`) |
//! | `anthropic:MODEL` | the Anthropic Messages API; the result through a forced tool call whose input schema is the slot's schema | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` |
//!
//! [`from_spec`] builds one from a spec (`AIS_MODEL` names the default: [`default_spec`]).
//! Everything is checked at construction — a missing key is a one-line
//! [`ModelErrorKind::Config`] error naming the variable — so a run fails before its first step.
//!
//! Each provider does one exchange per [`Model::complete`]: it renders the slot request and
//! its history into the protocol's messages, sends the slot's schema through the one strict
//! transform ([`schema::strict_schema`]), and parses the answer into a value (unwrapped) or
//! tool calls, with the usage and the raw exchange. The request goes out with a per-request
//! timeout and retries (exponential backoff with jitter on 429, 5xx, timeouts and dropped
//! connections, honouring `Retry-After`, never on another 4xx), all within the slot's total
//! deadline ([`ProviderOptions`], tunable through `AIS_MODEL_TIMEOUT`, `AIS_MODEL_DEADLINE`,
//! `AIS_MODEL_RETRIES` and `AIS_MODEL_MAX_TOKENS`). No key or `Authorization` header is ever in an exchange, an
//! error message or a log line.

#[cfg(feature = "http")]
mod anthropic;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod ollama;
#[cfg(feature = "http")]
mod openai;
#[cfg(feature = "http")]
mod prompt;
pub(crate) mod schema;

pub use schema::{StrictSchema, strict_schema};
#[cfg(feature = "http")]
mod stream;

#[cfg(feature = "http")]
pub(crate) use anthropic::Anthropic;
#[cfg(feature = "http")]
pub(crate) use ollama::Ollama;
#[cfg(feature = "http")]
pub(crate) use openai::OpenAi;

use crate::llm::{Model, ModelError, ModelErrorKind};
#[cfg(feature = "http")]
use reqwest::Url;
use std::sync::Arc;
use std::time::Duration;

/// The variable that names the default model spec.
pub const MODEL_ENV: &str = "AIS_MODEL";

/// Bounds on every exchange of a provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderOptions {
    /// How long one HTTP request may take (default 120 s).
    pub request_timeout: Duration,
    /// How long connecting may take (default 10 s).
    pub connect_timeout: Duration,
    /// How long one slot may take in all — every exchange, retry and wait (default 10 min).
    pub slot_deadline: Duration,
    /// Retries after the first attempt on 429, 5xx, timeouts and dropped connections
    /// (default 4).
    pub max_retries: usize,
    /// The first backoff (default 1 s); it doubles, with jitter, up to `max_backoff`.
    pub min_backoff: Duration,
    /// The longest backoff (default 60 s); a `Retry-After` overrides it.
    pub max_backoff: Duration,
    /// The answer's token limit, where the protocol requires one (Anthropic; default 4096).
    pub max_tokens: u32,
    /// The largest response body read (default 32 MiB); a larger one is a protocol error.
    pub max_response_bytes: usize,
}

impl Default for ProviderOptions {
    fn default() -> Self {
        ProviderOptions {
            request_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            slot_deadline: Duration::from_secs(600),
            max_retries: 4,
            min_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            max_tokens: 4096,
            max_response_bytes: 32 << 20,
        }
    }
}

impl ProviderOptions {
    /// The defaults, with what the environment overrides: `AIS_MODEL_TIMEOUT` (seconds per
    /// request), `AIS_MODEL_DEADLINE` (seconds per slot), `AIS_MODEL_RETRIES` and
    /// `AIS_MODEL_MAX_TOKENS`. A value that is not a number is a one-line
    /// [`ModelErrorKind::Config`] error naming the variable.
    pub fn from_env(env: Env<'_>) -> Result<Self, ModelError> {
        let mut options = ProviderOptions::default();
        if let Some(secs) = number(env, "AIS_MODEL_TIMEOUT")? {
            options.request_timeout = Duration::from_secs(secs.max(1));
        }
        if let Some(secs) = number(env, "AIS_MODEL_DEADLINE")? {
            options.slot_deadline = Duration::from_secs(secs.max(1));
        }
        if let Some(retries) = number(env, "AIS_MODEL_RETRIES")? {
            options.max_retries = usize::try_from(retries).unwrap_or(usize::MAX);
        }
        if let Some(tokens) = number(env, "AIS_MODEL_MAX_TOKENS")? {
            options.max_tokens = u32::try_from(tokens.max(1)).unwrap_or(u32::MAX);
        }
        Ok(options)
    }
}

fn number(env: Env<'_>, name: &str) -> Result<Option<u64>, ModelError> {
    let Some(raw) = env(name).filter(|raw| !raw.trim().is_empty()) else {
        return Ok(None);
    };
    raw.trim().parse::<u64>().map(Some).map_err(|_| {
        config(format!(
            "{name}=`{}` is not a whole number; unset it or write e.g. {name}=60",
            raw.trim()
        ))
    })
}

/// A way to read environment variables (the process environment, or a map in tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The default model spec from `AIS_MODEL`, when it is set and not blank.
pub fn default_spec() -> Option<String> {
    default_spec_with(&process_env)
}

/// [`default_spec`] reading variables through `env`.
pub(crate) fn default_spec_with(env: Env<'_>) -> Option<String> {
    env(MODEL_ENV)
        .map(|spec| spec.trim().to_string())
        .filter(|spec| !spec.is_empty())
}

/// Builds the provider a spec names (`openai:gpt-4o-mini`, `ollama:llama3.2`,
/// `anthropic:claude-sonnet-4-5`), set up from the process environment, with the bounds of
/// [`ProviderOptions::from_env`].
pub(crate) fn from_spec(spec: &str) -> Result<Arc<dyn Model>, ModelError> {
    let options = ProviderOptions::from_env(&process_env)?;
    from_spec_with(spec, &process_env, options)
}

/// [`from_spec`] reading variables through `env`, with `options` as the bounds.
pub(crate) fn from_spec_with(
    spec: &str,
    env: Env<'_>,
    options: ProviderOptions,
) -> Result<Arc<dyn Model>, ModelError> {
    let spec = spec.trim();
    let Some((provider, model)) = spec.split_once(':') else {
        return Err(config(format!(
            "model spec `{spec}` names no provider; write PROVIDER:MODEL, e.g. openai:gpt-4o-mini, \
             ollama:llama3.2 or anthropic:claude-sonnet-4-5 (or scripted:FILE.json for canned \
             responses)"
        )));
    };
    let model = model.trim();
    if model.is_empty() {
        return Err(config(format!(
            "model spec `{spec}` names no model after `{provider}:`; e.g. {provider}:{}",
            example_model(provider)
        )));
    }
    match provider {
        #[cfg(feature = "http")]
        "openai" => Ok(Arc::new(OpenAi::from_env(spec, model, env, options)?)),
        #[cfg(feature = "http")]
        "ollama" => Ok(Arc::new(Ollama::from_env(spec, model, env, options)?)),
        #[cfg(feature = "http")]
        "anthropic" => Ok(Arc::new(Anthropic::from_env(spec, model, env, options)?)),
        #[cfg(not(feature = "http"))]
        "openai" | "ollama" | "anthropic" => {
            let _ = (env, options);
            Err(config(format!(
                "`{spec}` is a live model, and this build has no HTTP providers; {}; or run on \
                 scripted:FILE.json",
                crate::feature::turn_on(crate::feature::Feature::Http)
            )))
        }
        "scripted" => Err(config(format!(
            "`{spec}` is a scripted model: the runtime's scripted model reads it, not a provider"
        ))),
        other => {
            let close =
                ais_core::did_you_mean(other, ["openai", "ollama", "anthropic", "scripted"]);
            let close = close
                .first()
                .map(|p| format!("; did you mean `{p}:{model}`?"))
                .unwrap_or_default();
            Err(config(format!(
                "unknown model provider `{other}` in `{spec}`; use openai:MODEL, ollama:MODEL, \
                 anthropic:MODEL or scripted:FILE.json{close}"
            )))
        }
    }
}

fn example_model(provider: &str) -> &'static str {
    match provider {
        "ollama" => "llama3.2",
        "anthropic" => "claude-sonnet-4-5",
        _ => "gpt-4o-mini",
    }
}

fn config(message: String) -> ModelError {
    ModelError::new(ModelErrorKind::Config, message)
}

#[cfg(feature = "http")]
/// A required variable, or the one-line error naming it.
fn required(env: Env<'_>, name: &str, spec: &str) -> Result<String, ModelError> {
    env(name)
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty())
        .ok_or_else(|| {
            config(format!(
                "{name} is not set; `{spec}` needs it (export {name}=...)"
            ))
        })
}

#[cfg(feature = "http")]
/// A base URL from `name`, or `default`; an `http`/`https` URL, with a path that ends in `/`
/// so that endpoints join onto it.
fn base_url(env: Env<'_>, name: &str, default: &str) -> Result<Url, ModelError> {
    let raw = env(name)
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty());
    let text = raw.as_deref().unwrap_or(default);
    // OLLAMA_HOST is often written `host` or `host:port`, without a scheme; Ollama reads that
    // as http on port 11434 (the port of the default URL).
    let schemeless = !text.contains("://");
    let text = if schemeless {
        format!("http://{text}")
    } else {
        text.to_string()
    };
    let mut url = Url::parse(&text).map_err(|err| {
        config(format!(
            "{name}=`{text}` is not a URL ({err}); e.g. {default}"
        ))
    })?;
    if schemeless && url.port().is_none() {
        let port = Url::parse(default).ok().and_then(|d| d.port());
        // Setting a port fails only on URLs that cannot have one, which the check below rejects.
        let _ = url.set_port(port);
    }
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(config(format!(
            "{name}=`{text}` is not an http or https URL with a host; e.g. {default}"
        )));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

#[cfg(feature = "http")]
/// `base` joined with a relative `endpoint`.
fn endpoint(base: &Url, endpoint: &str, variable: &str) -> Result<Url, ModelError> {
    base.join(endpoint).map_err(|err| {
        config(format!(
            "{variable}: cannot form the endpoint `{endpoint}`: {err}"
        ))
    })
}

#[cfg(feature = "http")]
/// Asks for a streamed answer, read as `streamed`, when the exchange is watched
/// ([`crate::llm::live`]): `stream: true` and the protocol's `extra` fields go in `body`.
/// An exchange nobody watches sends the body as it is and reads one JSON answer.
fn stream_if_watched(
    body: &mut serde_json::Value,
    streamed: http::Streamed,
    extra: &[(&str, serde_json::Value)],
) -> Option<http::Streamed> {
    if !crate::llm::live::watching() {
        return None;
    }
    body["stream"] = serde_json::Value::Bool(true);
    for (k, v) in extra {
        body[*k] = v.clone();
    }
    Some(streamed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn error(spec: &str, pairs: &[(&str, &str)]) -> ModelError {
        match from_spec_with(spec, &env_of(pairs), ProviderOptions::default()) {
            Ok(model) => panic!("{spec} built {}", model.name()),
            Err(err) => err,
        }
    }

    #[test]
    fn a_missing_key_is_a_one_line_config_error_naming_the_variable() {
        for (spec, var) in [
            ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
            ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ] {
            let err = error(spec, &[]);
            assert_eq!(err.kind, ModelErrorKind::Config);
            assert!(err.message.contains(var), "{}", err.message);
            assert!(!err.message.contains('\n'));
            let blank = error(spec, &[(var, "  ")]);
            assert!(blank.message.contains(var));
        }
    }

    #[test]
    fn no_debug_output_shows_the_key() {
        let env = env_of(&[
            ("OPENAI_API_KEY", "sk-hidden-1"),
            ("ANTHROPIC_API_KEY", "ak-hidden-2"),
        ]);
        let openai = OpenAi::from_env("openai:m", "m", &env, ProviderOptions::default()).unwrap();
        let anthropic =
            Anthropic::from_env("anthropic:m", "m", &env, ProviderOptions::default()).unwrap();
        let shown = format!("{openai:?} {anthropic:?}");
        assert!(!shown.contains("hidden"), "{shown}");
    }

    #[test]
    fn bad_specs_say_what_to_write() {
        assert!(error("gpt-4o", &[]).message.contains("PROVIDER:MODEL"));
        assert!(error("openai:", &[]).message.contains("openai:gpt-4o-mini"));
        assert!(
            error("mistral:large", &[])
                .message
                .contains("unknown model provider `mistral`")
        );
        // A misspelled provider is offered the close one, with the model kept.
        let typo = error("opneai:gpt-4o-mini", &[]).message;
        assert!(
            typo.ends_with("; did you mean `openai:gpt-4o-mini`?"),
            "{typo}"
        );
        assert!(!error("mistral:large", &[]).message.contains("did you mean"));
        assert!(error("scripted:x.json", &[]).message.contains("scripted"));
        let url = error("ollama:llama3.2", &[("OLLAMA_HOST", "ftp://x")]);
        assert!(url.message.contains("OLLAMA_HOST"), "{}", url.message);
    }

    #[test]
    fn providers_build_from_the_environment() {
        let env = env_of(&[("OPENAI_API_KEY", "sk-1"), ("ANTHROPIC_API_KEY", "ak-1")]);
        for spec in [
            "openai:gpt-4o-mini",
            "ollama:llama3.2",
            "anthropic:claude-x",
        ] {
            let model = from_spec_with(spec, &env, ProviderOptions::default()).unwrap();
            assert_eq!(model.name(), spec);
            assert!(!model.is_scripted());
        }
        // A local OpenAI-compatible server needs no key.
        let local = env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")]);
        assert!(from_spec_with("openai:qwen", &local, ProviderOptions::default()).is_ok());
    }

    #[test]
    fn base_urls_gain_a_scheme_and_a_trailing_slash() {
        let env = env_of(&[("OLLAMA_HOST", "127.0.0.1:9999")]);
        let url = base_url(&env, "OLLAMA_HOST", "http://localhost:11434").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:9999/");
        let env = env_of(&[("OLLAMA_HOST", "0.0.0.0")]);
        let url = base_url(&env, "OLLAMA_HOST", "http://localhost:11434").unwrap();
        assert_eq!(url.as_str(), "http://0.0.0.0:11434/");
        let env = env_of(&[("OLLAMA_HOST", "http://gpu-box")]);
        let url = base_url(&env, "OLLAMA_HOST", "http://localhost:11434").unwrap();
        assert_eq!(url.as_str(), "http://gpu-box/");
        let env = env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")]);
        let url = base_url(&env, "OPENAI_BASE_URL", "https://api.openai.com/v1").unwrap();
        assert_eq!(
            endpoint(&url, "chat/completions", "OPENAI_BASE_URL")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:1/v1/chat/completions"
        );
    }

    #[test]
    fn bounds_come_from_the_environment_or_a_clear_error() {
        let env = env_of(&[("AIS_MODEL_TIMEOUT", "300"), ("AIS_MODEL_RETRIES", " 0 ")]);
        let options = ProviderOptions::from_env(&env).unwrap();
        assert_eq!(options.request_timeout, Duration::from_secs(300));
        assert_eq!(options.max_retries, 0);
        assert_eq!(
            options.slot_deadline,
            ProviderOptions::default().slot_deadline
        );
        let err = ProviderOptions::from_env(&env_of(&[("AIS_MODEL_DEADLINE", "ten")])).unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Config);
        assert!(
            err.message.contains("AIS_MODEL_DEADLINE=`ten`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn the_default_spec_comes_from_ais_model() {
        assert_eq!(
            default_spec_with(&env_of(&[("AIS_MODEL", " ollama:x ")])),
            Some("ollama:x".into())
        );
        assert_eq!(default_spec_with(&env_of(&[("AIS_MODEL", "")])), None);
        assert_eq!(default_spec_with(&env_of(&[])), None);
    }
}

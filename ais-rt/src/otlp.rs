//! OpenTelemetry export (feature `otlp`): one trace per run, sent over OTLP http/protobuf.
//!
//! [`OtlpSink`] is a [`TraceSink`]: it is fed the [`StepEvent`]s the machine already emits, and
//! turns them into spans named and attributed by the OpenTelemetry GenAI semantic conventions:
//!
//! - the run: `invoke_workflow {program}` (`gen_ai.operation.name = invoke_workflow`), from the
//!   first step's start to [`OtlpSink::finish`];
//! - each step: `step {instruction}`, a child of the run, with `ais.instruction`, `ais.opcode`,
//!   `ais.unit`, `ais.step` (and `ais.sibling` for a SPAWN sibling, `ais.sub_step` — its
//!   label, `3.2` — for a step of a CALLed program, whose `ais.step` is its CALL's); a
//!   failed step has status error with the step's error as its description;
//! - each model exchange of a slot: `chat {model}`, a child of its step, with
//!   `gen_ai.operation.name = chat`, `gen_ai.provider.name` (the provider of the model spec:
//!   `openai`, `anthropic`, `ollama`, or `ais.scripted`), `gen_ai.request.model`, and
//!   `gen_ai.usage.input_tokens` / `output_tokens` (the exchange's own usage where its response
//!   reports it, else the slot's for a slot of one exchange); message contents
//!   (`gen_ai.input.messages`, `gen_ai.output.messages`, as JSON) only when
//!   [`OtlpOptions::contents`] asks for them, as the conventions require;
//! - each tool call: `execute_tool {tool}`, a child of its step, with `gen_ai.operation.name =
//!   execute_tool` and `gen_ai.tool.name`.
//!
//! A slot's step span also carries its totals: `gen_ai.response.model` (the model that
//! answered), `gen_ai.usage.input_tokens` / `output_tokens`, `ais.tier`, `ais.failovers` and
//! its cost in US dollars as `ais.usage.cost_usd` (`COST`: the conventions define no cost
//! attribute) when its models have prices; the run span carries the run's token totals and
//! cost when it ends.
//!
//! Events carry no timing per exchange, so a step's exchanges share its duration in order.
//! Every event is scrubbed ([`Scrubber`]) before anything of it becomes an attribute. The
//! exporter sends through the runtime's own reqwest (blocking, on the SDK's export thread).

use crate::trace::{Scrubber, StepEvent, TraceSink};
use opentelemetry::trace::{Span, SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer as SdkTracer};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a run is exported.
#[derive(Clone, Debug, Default)]
pub struct OtlpOptions {
    /// Put message contents (slot requests and responses) on the `chat` spans.
    pub contents: bool,
    /// The program's name, for the run span.
    pub program: String,
}

/// A [`TraceSink`] that exports a run as an OpenTelemetry trace over OTLP http/protobuf.
pub struct OtlpSink {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    options: OtlpOptions,
    scrubber: Scrubber,
    state: Mutex<State>,
    failed: std::sync::Arc<Mutex<Option<String>>>,
}

#[derive(Default)]
struct State {
    /// The run span, open from the first event.
    run: Option<Context>,
    /// When the last step ended.
    last_end: Option<SystemTime>,
    /// The run's totals so far: input and output tokens, and the cost of its priced slots.
    tokens: (i64, i64),
    cost: Option<f64>,
}

/// The OTLP exporter, remembering the first export that failed (the SDK's batch processor only
/// logs it), so that [`OtlpSink::finish`] can say the trace was not sent.
#[derive(Debug)]
struct Recording {
    inner: opentelemetry_otlp::SpanExporter,
    failed: std::sync::Arc<Mutex<Option<String>>>,
}

impl opentelemetry_sdk::trace::SpanExporter for Recording {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        let result = self.inner.export(batch).await;
        if let Err(e) = &result {
            let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
            failed.get_or_insert_with(|| e.to_string());
        }
        result
    }

    fn shutdown_with_timeout(
        &mut self,
        timeout: Duration,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}

/// The HTTP client the exporter sends with: the runtime's reqwest, blocking (the SDK exports
/// on its own thread).
#[derive(Debug)]
struct Client(reqwest::blocking::Client);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Client {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let mut req = self
            .0
            .request(parts.method, parts.uri.to_string())
            .body(body.to_vec());
        for (name, value) in &parts.headers {
            req = req.header(name, value);
        }
        let resp = req.send()?;
        let mut out = http::Response::builder().status(resp.status().as_u16());
        for (name, value) in resp.headers() {
            out = out.header(name.as_str(), value.as_bytes());
        }
        Ok(out.body(bytes::Bytes::from(resp.bytes()?.to_vec()))?)
    }
}

/// The traces endpoint of an OTLP base URL: `/v1/traces` appended when the URL has no path.
pub(crate) fn traces_endpoint(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    let after_scheme = trimmed.split_once("://").map_or(trimmed, |(_, rest)| rest);
    if after_scheme.contains('/') {
        trimmed.to_owned()
    } else {
        format!("{trimmed}/v1/traces")
    }
}

impl OtlpSink {
    /// A sink exporting to the OTLP/HTTP collector at `url` (`http://host:4318`, or the full
    /// `…/v1/traces` URL). Fails when the URL is not one or the exporter cannot be built.
    pub fn new(url: &str, options: OtlpOptions) -> Result<OtlpSink, String> {
        let endpoint = traces_endpoint(url);
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(format!(
                "`{url}` is not an http(s) URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318)"
            ));
        }
        crate::tls::install_crypto_provider();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot build the OTLP client: {e}"))?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(Client(client))
            .with_endpoint(endpoint)
            .with_protocol(Protocol::HttpBinary)
            .build()
            .map_err(|e| format!("cannot export to `{url}`: {e}"))?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("ais")
            .build();
        let failed = std::sync::Arc::default();
        let exporter = Recording {
            inner: exporter,
            failed: std::sync::Arc::clone(&failed),
        };
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("ais");
        Ok(OtlpSink {
            provider,
            tracer,
            options,
            scrubber: Scrubber::from_env(),
            state: Mutex::new(State::default()),
            failed,
        })
    }

    /// Ends the run span and sends every span; call once the run is over. Returns the
    /// exporter's error, if sending failed.
    pub fn finish(&self) -> Result<(), String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(run) = state.run.take() {
            let end = state.last_end.unwrap_or_else(SystemTime::now);
            let span = run.span();
            span.set_attribute(KeyValue::new("gen_ai.usage.input_tokens", state.tokens.0));
            span.set_attribute(KeyValue::new("gen_ai.usage.output_tokens", state.tokens.1));
            if let Some(cost) = state.cost {
                span.set_attribute(KeyValue::new(COST, cost));
            }
            span.end_with_timestamp(end);
        }
        drop(state);
        let shut = self.provider.shutdown();
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner()).take();
        match (failed, shut) {
            (Some(e), _) => Err(format!("cannot send the trace: {e}")),
            (None, Err(e)) => Err(format!("cannot send the trace: {e}")),
            (None, Ok(())) => Ok(()),
        }
    }

    fn run_context(&self, state: &mut State, start: SystemTime) -> Context {
        if let Some(run) = &state.run {
            return run.clone();
        }
        let name = if self.options.program.is_empty() {
            "invoke_workflow".to_owned()
        } else {
            format!("invoke_workflow {}", self.options.program)
        };
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(vec![
                KeyValue::new("gen_ai.operation.name", "invoke_workflow"),
                KeyValue::new("ais.program", self.options.program.clone()),
            ])
            .start_with_context(&self.tracer, &Context::new());
        let cx = Context::new().with_span(span);
        state.run = Some(cx.clone());
        cx
    }
}

/// The attribute of a cost in US dollars: the GenAI conventions define none, so it is ours.
pub(crate) const COST: &str = "ais.usage.cost_usd";

/// The provider and model of a model spec (`openai:gpt-4o` → `openai`, `gpt-4o`).
fn provider_and_model(spec: &str) -> (String, String) {
    match spec.split_once(':') {
        Some(("scripted", file)) => ("ais.scripted".into(), file.into()),
        Some((p, m)) => (p.into(), m.into()),
        None => ("unknown".into(), spec.into()),
    }
}

/// The input and output tokens an exchange's response reports (OpenAI, Anthropic, Ollama).
fn exchange_usage(response: &serde_json::Value) -> Option<(i64, i64)> {
    let u = &response["usage"];
    let pick = |a: &serde_json::Value, b: &serde_json::Value| a.as_i64().or_else(|| b.as_i64());
    let input = pick(&u["prompt_tokens"], &u["input_tokens"])
        .or_else(|| response["prompt_eval_count"].as_i64())?;
    let output = pick(&u["completion_tokens"], &u["output_tokens"])
        .or_else(|| response["eval_count"].as_i64())?;
    Some((input, output))
}

fn at(ms: u64, us: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms) + Duration::from_micros(us)
}

impl TraceSink for OtlpSink {
    fn event(&self, event: &StepEvent) {
        let json = self.scrubber.event_json(event);
        let start = at(event.started_ms, 0);
        let end = at(event.started_ms, event.elapsed_us);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let run = self.run_context(&mut state, start);
        state.last_end = Some(state.last_end.map_or(end, |l| l.max(end)));
        let mut attrs = vec![
            KeyValue::new("ais.instruction", event.instruction.clone()),
            KeyValue::new("ais.opcode", event.opcode.clone()),
            KeyValue::new("ais.unit", event.unit),
            KeyValue::new("ais.step", event.step as i64),
        ];
        if let Some(slot) = &event.slot {
            let (i, o) = (
                slot.usage.prompt_tokens as i64,
                slot.usage.completion_tokens as i64,
            );
            state.tokens = (state.tokens.0 + i, state.tokens.1 + o);
            attrs.extend([
                KeyValue::new("gen_ai.response.model", provider_and_model(&slot.model).1),
                KeyValue::new("gen_ai.usage.input_tokens", i),
                KeyValue::new("gen_ai.usage.output_tokens", o),
            ]);
            if !slot.tier.is_empty() {
                attrs.push(KeyValue::new("ais.tier", slot.tier.clone()));
            }
            if !slot.failovers.is_empty() {
                attrs.push(KeyValue::new("ais.failovers", slot.failovers.len() as i64));
            }
            if let Some(cost) = slot.cost {
                state.cost = Some(state.cost.unwrap_or(0.0) + cost);
                attrs.push(KeyValue::new(COST, cost));
            }
        }
        drop(state);
        if let Some(s) = event.sibling {
            attrs.push(KeyValue::new("ais.sibling", s as i64));
        }
        if !event.sub.is_empty() {
            attrs.push(KeyValue::new("ais.sub_step", event.label()));
        }
        let mut step = self
            .tracer
            .span_builder(format!("step {}", event.instruction))
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(attrs)
            .start_with_context(&self.tracer, &run);
        if let Some(err) = json["error"].as_str() {
            step.set_status(Status::error(err.to_owned()));
        }
        let step_cx = run.with_span(step);
        if let Some(slot) = &event.slot {
            self.chats(
                &step_cx,
                slot,
                &json["slot"]["exchanges"],
                start,
                event.elapsed_us,
            );
        }
        if let Some(tool) = &event.tool {
            let mut span = self
                .tracer
                .span_builder(format!("execute_tool {tool}"))
                .with_kind(SpanKind::Internal)
                .with_start_time(start)
                .with_attributes(vec![
                    KeyValue::new("gen_ai.operation.name", "execute_tool"),
                    KeyValue::new("gen_ai.tool.name", tool.clone()),
                    KeyValue::new("ais.instruction", event.instruction.clone()),
                ])
                .start_with_context(&self.tracer, &step_cx);
            if let Some(err) = json["error"].as_str() {
                span.set_status(Status::error(err.to_owned()));
            }
            span.end_with_timestamp(end);
        }
        step_cx.span().end_with_timestamp(end);
    }
}

impl OtlpSink {
    /// One `chat` span per exchange, sharing the step's duration in order.
    fn chats(
        &self,
        step: &Context,
        slot: &crate::trace::SlotTrace,
        exchanges: &serde_json::Value,
        start: SystemTime,
        elapsed_us: u64,
    ) {
        let (provider, model) = provider_and_model(&slot.model);
        let exchanges = exchanges.as_array().cloned().unwrap_or_default();
        let n = exchanges.len().max(1) as u64;
        let share = elapsed_us / n;
        for (k, ex) in exchanges.iter().enumerate() {
            let from = start + Duration::from_micros(share * k as u64);
            let mut attrs = vec![
                KeyValue::new("gen_ai.operation.name", "chat"),
                KeyValue::new("gen_ai.provider.name", provider.clone()),
                KeyValue::new("gen_ai.request.model", model.clone()),
            ];
            let usage = exchange_usage(&ex["response"]).or_else(|| {
                (exchanges.len() == 1).then_some((
                    slot.usage.prompt_tokens as i64,
                    slot.usage.completion_tokens as i64,
                ))
            });
            if let Some((i, o)) = usage {
                attrs.push(KeyValue::new("gen_ai.usage.input_tokens", i));
                attrs.push(KeyValue::new("gen_ai.usage.output_tokens", o));
            }
            if self.options.contents {
                attrs.push(KeyValue::new(
                    "gen_ai.input.messages",
                    ex["request"].to_string(),
                ));
                attrs.push(KeyValue::new(
                    "gen_ai.output.messages",
                    ex["response"].to_string(),
                ));
            }
            let mut span = self
                .tracer
                .span_builder(format!("chat {model}"))
                .with_kind(SpanKind::Client)
                .with_start_time(from)
                .with_attributes(attrs)
                .start_with_context(&self.tracer, step);
            span.end_with_timestamp(from + Duration::from_micros(share));
        }
    }
}

#[cfg(test)]
#[path = "otlp_tests.rs"]
mod tests;

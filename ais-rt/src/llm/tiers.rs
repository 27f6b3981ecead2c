//! The models of a run: named tiers, each a fallback [`Chain`] of models with their prices,
//! and the default chain a slot without `model:` uses. Built from a configuration file
//! ([`super::config::ModelsFile::build`]) or from one model ([`Models::single`]).

use super::{Model, ModelError, ModelFuture, SlotRequest, Usage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a model costs, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million prompt (input) tokens.
    pub input: f64,
    /// Per million completion (output) tokens.
    pub output: f64,
    /// Per million prompt tokens served from the provider's cache (default: `input`).
    #[serde(default)]
    pub cached_input: Option<f64>,
}

impl Price {
    /// The cost of `usage` in US dollars: uncached prompt tokens at `input`, cached ones at
    /// `cached_input`, completion tokens at `output`. (Anthropic's surcharge for writing its
    /// cache is not counted: the usage does not tell those tokens apart.)
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.unwrap_or(0).min(usage.prompt_tokens);
        let fresh = usage.prompt_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + usage.completion_tokens as f64 * self.output)
            / 1e6
    }

    /// Why this price cannot be used, if it cannot: a negative or non-finite number.
    pub fn problem(&self) -> Option<String> {
        let fields = [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cached_input", self.cached_input),
        ];
        fields.into_iter().find_map(|(name, v)| {
            v.filter(|v| !v.is_finite() || *v < 0.0).map(|v| {
                format!("`{name} = {v}` is no price; write dollars per million tokens, e.g. 0.5")
            })
        })
    }
}

/// One model of a chain, with its price when the configuration gives one.
#[derive(Clone)]
pub struct Link {
    /// The model.
    pub model: Arc<dyn Model>,
    /// Its price.
    pub price: Option<Price>,
}

/// A model the configuration names that could not be set up (a missing key, a bad URL): it
/// answers every exchange with that error. A run whose slots would ask it is refused before
/// its first step ([`Models::unavailable`]); a tier no slot uses does not stop the run.
#[derive(Debug)]
pub struct Unavailable {
    name: String,
    error: ModelError,
}

impl Unavailable {
    /// A stand-in for the model `name`, which could not be set up because of `error`.
    pub fn new(name: impl Into<String>, error: ModelError) -> Self {
        Unavailable {
            name: name.into(),
            error,
        }
    }
}

impl Model for Unavailable {
    fn name(&self) -> &str {
        &self.name
    }

    fn unavailable(&self) -> Option<&ModelError> {
        Some(&self.error)
    }

    fn complete<'a>(&'a self, _request: &'a SlotRequest) -> ModelFuture<'a> {
        let error = self.error.clone();
        Box::pin(async move { Err(error) })
    }
}

/// A tier's models, asked in order: when one gives no acceptable value (a transport error, a
/// 429 or 5xx past its retries, a timeout, or an answer still invalid after the repair
/// rounds), the next is asked ([`super::slot::fill`]).
#[derive(Clone)]
pub struct Chain {
    name: String,
    links: Vec<Link>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.links.iter().map(|l| l.model.name()).collect();
        f.debug_struct("Chain")
            .field("name", &self.name)
            .field("models", &names)
            .finish()
    }
}

impl Chain {
    /// The chain `name` of `links` (at least one).
    pub fn new(name: String, links: Vec<Link>) -> Self {
        Chain { name, links }
    }

    /// A chain of one model, named after it, with no price.
    pub fn single(model: Arc<dyn Model>) -> Self {
        Chain {
            name: model.name().to_owned(),
            links: vec![Link { model, price: None }],
        }
    }

    /// Its name: the tier's, or the model's for a chain of one given as a spec.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its models, in the order they are asked.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// True when any of its models is scripted.
    pub fn is_scripted(&self) -> bool {
        self.links.iter().any(|l| l.model.is_scripted())
    }
}

/// The models of a run.
#[derive(Clone, Debug, Default)]
pub struct Models {
    default: Option<Arc<Chain>>,
    tiers: BTreeMap<String, Arc<Chain>>,
}

impl Models {
    /// `tiers` by name, and the chain a slot without a tier uses.
    pub fn new(default: Option<Arc<Chain>>, tiers: BTreeMap<String, Arc<Chain>>) -> Self {
        Models { default, tiers }
    }

    /// One model for every slot (no tiers).
    pub fn single(model: Arc<dyn Model>) -> Self {
        Models {
            default: Some(Arc::new(Chain::single(model))),
            tiers: BTreeMap::new(),
        }
    }

    /// The default chain.
    pub fn default_chain(&self) -> Option<&Arc<Chain>> {
        self.default.as_ref()
    }

    /// Sets the default chain.
    pub fn set_default(&mut self, chain: Arc<Chain>) {
        self.default = Some(chain);
    }

    /// The chain of tier `name`.
    pub fn tier(&self, name: &str) -> Option<&Arc<Chain>> {
        self.tiers.get(name)
    }

    /// The tier names, sorted.
    pub fn tier_names(&self) -> impl Iterator<Item = &str> + Clone {
        self.tiers.keys().map(String::as_str)
    }

    /// True when no slot could be filled: no default and no tier.
    pub fn is_empty(&self) -> bool {
        self.default.is_none() && self.tiers.is_empty()
    }

    /// True when any model of any chain is scripted.
    pub fn is_scripted(&self) -> bool {
        self.default
            .iter()
            .chain(self.tiers.values())
            .any(|c| c.is_scripted())
    }

    /// Every chain, the default first.
    pub fn chains(&self) -> impl Iterator<Item = &Arc<Chain>> {
        self.default.iter().chain(self.tiers.values())
    }

    /// The same tiers (and default, when there is one), each answered by `model` alone: a
    /// replay's model that answers nothing.
    pub fn all_to(&self, model: Arc<dyn Model>) -> Models {
        let chain = Arc::new(Chain::single(model));
        Models {
            default: Some(chain.clone()),
            tiers: self
                .tiers
                .keys()
                .map(|k| (k.clone(), chain.clone()))
                .collect(),
        }
    }

    /// Why the chain a slot naming `tier` uses cannot serve, if one of its models could not be
    /// set up: that model's error.
    pub fn unavailable(&self, tier: Option<&str>) -> Option<&ModelError> {
        let chain = match tier {
            Some(t) => self.tiers.get(t)?,
            None => self.default.as_ref()?,
        };
        chain.links.iter().find_map(|l| l.model.unavailable())
    }

    /// The chain that fills a slot naming `tier` (none: the default), or what to do instead.
    pub fn for_slot(&self, tier: Option<&str>) -> Result<Arc<Chain>, String> {
        match tier {
            Some(t) => self.tiers.get(t).cloned().ok_or_else(|| {
                let names: Vec<&str> = self.tier_names().collect();
                let hint = ais_core::did_you_mean(t, names.iter().copied());
                let mean = hint
                    .first()
                    .map(|h| format!(" (did you mean `{h}`?)"))
                    .unwrap_or_default();
                if names.is_empty() {
                    format!(
                        "it names the model tier `{t}` and this run has no tiers; define `{t}` under `[models]` in ais.toml (or `--models FILE`)"
                    )
                } else {
                    format!(
                        "it names the model tier `{t}`, which the configuration does not define{mean}; its tiers are {}",
                        names.join(", ")
                    )
                }
            }),
            None => self.default.clone().ok_or_else(|| {
                "this run has no model; name one with `--model SPEC` (e.g. `--model scripted:responses.json`), or a `default` tier in ais.toml".to_owned()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_prices_cached_tokens_apart() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cached_input: Some(0.3),
        };
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 100_000,
            cached_tokens: Some(500_000),
        };
        let cost = price.cost(&usage);
        assert!((cost - (1.5 + 0.15 + 1.5)).abs() < 1e-9, "{cost}");
        let plain = Price {
            cached_input: None,
            ..price
        };
        assert!((plain.cost(&usage) - 4.5).abs() < 1e-9);
        assert!(price.problem().is_none());
        let bad = Price {
            input: -1.0,
            ..price
        };
        assert!(bad.problem().unwrap().contains("input = -1"));
    }
}

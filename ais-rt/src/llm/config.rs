//! The model configuration: named model tiers, fallback chains and prices, from a TOML file
//! (`ais.toml` in the project, or `ais run --models FILE`).
//!
//! ```toml
//! # The tier a slot without `model:` uses (`--model` overrides it).
//! default = "frontier"
//!
//! [models]
//! frontier = "anthropic:claude-sonnet-4-5"
//! small = "ollama:qwen3:8b"
//! judge = "frontier"                          # an alias: another tier's name
//! cheap = ["small", "openai:gpt-4o-mini"]     # a fallback chain, asked in order
//! local = { spec = "openai:qwen2.5-7b", base_url = "http://127.0.0.1:8000/v1", api_key_env = "LOCAL_KEY" }
//!
//! # What each model costs, in US dollars per million tokens (no defaults: a model with no
//! # price has no cost, and `--max-cost` refuses to budget it).
//! [prices."anthropic:claude-sonnet-4-5"]
//! input = 3.0
//! output = 15.0
//! cached_input = 0.3
//! ```
//!
//! - A tier is a model spec (`PROVIDER:MODEL`, or `scripted:FILE.json`), another tier's name
//!   (an alias), a table `{spec, base_url, api_key_env}` (a provider of its own: its base URL
//!   and the variable holding its key, instead of the provider's usual variables), or a list of
//!   these: a **fallback chain**. A chain's entries are flattened in order, an alias standing
//!   for its whole chain. A string holding `:` is a spec; any other string names a tier.
//! - Tier names are letters, digits, `_` and `-`. A name that is not defined, a cycle of
//!   aliases, an empty chain, or a field the file does not know is an error naming the place,
//!   with a did-you-mean for a misspelled tier.
//! - A relative `scripted:` path resolves against the file's directory.
//!
//! [`ModelsFile::read`] parses and checks a file; [`ModelsFile::build`] sets up every model it
//! names (each provider from the environment, as `--model` does) into the runtime's
//! [`Models`].

use super::tiers::{Chain, Link, Models, Price};
use super::{Model, ModelError, ModelErrorKind};
use ais_core::did_you_mean;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name of the configuration file a project keeps beside its programs.
pub(crate) const FILE_NAME: &str = "ais.toml";

/// The most bytes a configuration file may have.
const MAX_BYTES: u64 = 1 << 20;

/// One entry of a tier as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
enum Entry {
    /// A spec or a tier's name.
    Name(String),
    /// A fallback chain (before `Table`: serde would read a list as a struct's fields).
    List(Vec<Entry>),
    /// A provider of its own.
    Table(ProviderEntry),
}

/// `{spec, base_url, api_key_env}`: a provider with its own endpoint and key.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderEntry {
    spec: String,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    default: Option<String>,
    #[serde(default)]
    models: BTreeMap<String, Entry>,
    #[serde(default)]
    prices: BTreeMap<String, Price>,
}

/// How [`ModelsFile::build`] sets up one model: [`open`] from the environment, or a test's
/// own.
pub type Opener<'a> = dyn Fn(&ModelRef) -> Result<Arc<dyn Model>, ModelError> + 'a;

/// One model of a resolved chain: its spec and, for a table entry, its own endpoint and key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRef {
    /// The spec (`openai:gpt-4o-mini`, `scripted:/abs/path.json`).
    pub spec: String,
    /// Its own base URL, when the entry gave one.
    pub base_url: Option<String>,
    /// The variable holding its key, when the entry named one.
    pub api_key_env: Option<String>,
}

/// A checked configuration: each tier resolved to its chain of models, the default tier and
/// the prices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelsFile {
    /// Where it was read from (messages name it).
    pub path: PathBuf,
    /// Each tier's chain, flattened, in order.
    pub tiers: BTreeMap<String, Vec<ModelRef>>,
    /// The tier a slot without `model:` uses, when the file names one.
    pub default: Option<String>,
    /// Prices by model spec, per million tokens.
    pub prices: BTreeMap<String, Price>,
}

fn config(message: String) -> ModelError {
    ModelError::new(ModelErrorKind::Config, message)
}

/// True when `name` is a tier name as the file may define one.
fn is_tier_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl ModelsFile {
    /// The configuration of a project: `explicit` when given (it must exist), else
    /// `FILE_NAME` in the current directory, else in `program_dir`; `None` when there is none.
    pub fn discover(
        explicit: Option<&Path>,
        program_dir: &Path,
    ) -> Result<Option<Self>, ModelError> {
        if let Some(path) = explicit {
            return Self::read(path).map(Some);
        }
        for dir in [Path::new("."), program_dir] {
            let path = dir.join(FILE_NAME);
            if path.is_file() {
                return Self::read(&path).map(Some);
            }
        }
        Ok(None)
    }

    /// Reads and checks the configuration in `path`.
    pub fn read(path: &Path) -> Result<Self, ModelError> {
        let shown = path.display();
        let text = ais_core::files::read_regular_text(path, MAX_BYTES).map_err(|e| {
            config(format!(
                "cannot read the model configuration `{shown}`: {e}; name an existing file with `--models FILE`"
            ))
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        Self::parse(&text, path, &dir)
    }

    /// Checks the configuration `text`, as if read from `path`; relative `scripted:` paths
    /// resolve against `dir`.
    pub fn parse(text: &str, path: &Path, dir: &Path) -> Result<Self, ModelError> {
        let shown = path.display();
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_owned();
            let at = e
                .span()
                .map(|span| {
                    let line = text[..span.start.min(text.len())].lines().count().max(1);
                    format!(" (line {line})")
                })
                .unwrap_or_default();
            config(format!(
                "the model configuration `{shown}` does not read{at}: {message}; see `ais run --help` for its form"
            ))
        })?;
        for name in raw.models.keys() {
            if !is_tier_name(name) {
                return Err(config(format!(
                    "in `{shown}`, the tier name `{name}` has characters a tier name cannot have; use letters, digits, `_` and `-`"
                )));
            }
        }
        let mut tiers = BTreeMap::new();
        for name in raw.models.keys() {
            let mut chain = Vec::new();
            let mut path_taken = vec![name.as_str()];
            flatten(
                &raw,
                &raw.models[name],
                dir,
                &mut path_taken,
                &mut chain,
                &shown,
            )?;
            if chain.is_empty() {
                return Err(config(format!(
                    "in `{shown}`, the tier `{name}` is an empty list; name at least one model"
                )));
            }
            tiers.insert(name.clone(), chain);
        }
        for (spec, price) in &raw.prices {
            if let Some(problem) = price.problem() {
                return Err(config(format!(
                    "in `{shown}`, the price of `{spec}`: {problem}"
                )));
            }
        }
        if let Some(default) = &raw.default
            && !tiers.contains_key(default)
        {
            return Err(unknown_tier(&shown.to_string(), "`default`", default, &raw));
        }
        Ok(ModelsFile {
            path: path.to_owned(),
            tiers,
            default: raw.default,
            prices: raw.prices,
        })
    }

    /// The tier names, sorted.
    pub fn tier_names(&self) -> impl Iterator<Item = &str> + Clone {
        self.tiers.keys().map(String::as_str)
    }

    /// Sets up every model the tiers name (each once, however many tiers share it) and the
    /// default: `default` (a `--model` value: a tier's name or a spec) when given, else the
    /// file's `default`. `open` builds one model from its reference (the providers from the
    /// environment, a scripted file, a test's stand-in). A model of a tier that cannot be set
    /// up becomes an [`Unavailable`](super::tiers::Unavailable) stand-in (check the tiers a
    /// program uses with [`Models::unavailable`]); a `default` spec that cannot is an error.
    pub fn build(&self, default: Option<&str>, open: &Opener<'_>) -> Result<Models, ModelError> {
        let mut opened: BTreeMap<String, Arc<dyn Model>> = BTreeMap::new();
        let mut link = |r: &ModelRef| -> Result<Link, ModelError> {
            let key = format!("{}|{:?}|{:?}", r.spec, r.base_url, r.api_key_env);
            let model = match opened.get(&key) {
                Some(m) => m.clone(),
                None => {
                    let m = open(r).unwrap_or_else(|error| {
                        Arc::new(super::tiers::Unavailable::new(r.spec.clone(), error))
                    });
                    opened.insert(key, m.clone());
                    m
                }
            };
            Ok(Link {
                price: self.prices.get(&r.spec).copied(),
                model,
            })
        };
        let mut tiers = BTreeMap::new();
        for (name, refs) in &self.tiers {
            let links = refs.iter().map(&mut link).collect::<Result<Vec<_>, _>>()?;
            tiers.insert(name.clone(), Arc::new(Chain::new(name.clone(), links)));
        }
        let default = match default.map(str::trim).filter(|d| !d.is_empty()) {
            Some(d) if tiers.contains_key(d) => Some(tiers[d].clone()),
            Some(d) if d.contains(':') => {
                let r = ModelRef {
                    spec: d.to_owned(),
                    base_url: None,
                    api_key_env: None,
                };
                let l = link(&r)?;
                if let Some(error) = l.model.unavailable() {
                    return Err(error.clone());
                }
                Some(Arc::new(Chain::new(d.to_owned(), vec![l])))
            }
            Some(d) => {
                let names: Vec<&str> = self.tier_names().collect();
                let hint = did_you_mean(d, names.iter().copied());
                return Err(config(format!(
                    "`--model {d}` names no tier of `{}` and is no model spec{}; name a tier ({}) or write PROVIDER:MODEL",
                    self.path.display(),
                    suggestion(&hint),
                    names.join(", ")
                )));
            }
            None => self.default.as_ref().map(|d| tiers[d].clone()),
        };
        Ok(Models::new(default, tiers))
    }
}

/// ` (did you mean `x`?)` for a non-empty suggestion list.
fn suggestion(names: &[String]) -> String {
    match names.first() {
        Some(n) => format!(" (did you mean `{n}`?)"),
        None => String::new(),
    }
}

fn unknown_tier(shown: &str, place: &str, name: &str, raw: &Raw) -> ModelError {
    let hint = did_you_mean(name, raw.models.keys().map(String::as_str));
    config(format!(
        "in `{shown}`, {place} names the tier `{name}`, which `[models]` does not define{}; define it, or write a model spec PROVIDER:MODEL",
        suggestion(&hint)
    ))
}

/// Appends the models `entry` stands for to `out`, aliases followed (`taken` is the alias path,
/// for cycles).
fn flatten<'a>(
    raw: &'a Raw,
    entry: &'a Entry,
    dir: &Path,
    taken: &mut Vec<&'a str>,
    out: &mut Vec<ModelRef>,
    shown: &std::path::Display<'_>,
) -> Result<(), ModelError> {
    match entry {
        Entry::List(items) => {
            // A nested list reads as the same chain, flattened.
            for item in items {
                flatten(raw, item, dir, taken, out, shown)?;
            }
        }
        Entry::Table(p) => {
            check_spec(&p.spec, shown, taken)?;
            out.push(ModelRef {
                spec: resolve_scripted(&p.spec, dir),
                base_url: p.base_url.clone(),
                api_key_env: p.api_key_env.clone(),
            });
        }
        Entry::Name(text) if text.contains(':') => {
            check_spec(text, shown, taken)?;
            out.push(ModelRef {
                spec: resolve_scripted(text.trim(), dir),
                base_url: None,
                api_key_env: None,
            });
        }
        Entry::Name(alias) => {
            let alias = alias.trim();
            let Some(target) = raw.models.get(alias) else {
                let place = format!("the tier `{}`", taken[0]);
                return Err(unknown_tier(&shown.to_string(), &place, alias, raw));
            };
            if let Some(at) = taken.iter().position(|t| *t == alias) {
                let mut cycle: Vec<&str> = taken[at..].to_vec();
                cycle.push(alias);
                return Err(config(format!(
                    "in `{shown}`, the tiers name each other in a cycle ({}); end it with a model spec",
                    cycle.join(" → ")
                )));
            }
            let (key, _) = raw
                .models
                .get_key_value(alias)
                .unwrap_or_else(|| unreachable!("looked up above"));
            taken.push(key.as_str());
            flatten(raw, target, dir, taken, out, shown)?;
            taken.pop();
        }
    }
    Ok(())
}

/// A spec names a provider and a model.
fn check_spec(
    spec: &str,
    shown: &std::path::Display<'_>,
    taken: &[&str],
) -> Result<(), ModelError> {
    let spec = spec.trim();
    match spec.split_once(':') {
        Some((p, m)) if !p.is_empty() && !m.trim().is_empty() => Ok(()),
        _ => Err(config(format!(
            "in `{shown}`, the tier `{}` names `{spec}`, which is no model spec; write PROVIDER:MODEL, e.g. ollama:qwen3:8b",
            taken[0]
        ))),
    }
}

/// A `scripted:` spec with a relative file resolved against `dir`.
fn resolve_scripted(spec: &str, dir: &Path) -> String {
    match spec.strip_prefix("scripted:") {
        Some(file) if Path::new(file).is_relative() => {
            format!("scripted:{}", dir.join(file).display())
        }
        _ => spec.to_owned(),
    }
}

/// The model a [`ModelRef`] names, set up from the process environment: a scripted file, or a
/// provider whose base URL and key variable the entry may override.
pub fn open(r: &ModelRef) -> Result<Arc<dyn Model>, ModelError> {
    let env = super::providers::process_env;
    let options = super::providers::ProviderOptions::from_env(&env)?;
    open_with(r, &env, options)
}

/// [`open`] reading variables through `env`, with `options` as the providers' bounds.
pub fn open_with(
    r: &ModelRef,
    env: super::providers::Env<'_>,
    options: super::providers::ProviderOptions,
) -> Result<Arc<dyn Model>, ModelError> {
    if r.spec.starts_with("scripted:") {
        return super::from_spec(&r.spec);
    }
    let provider = r.spec.split_once(':').map_or("", |(p, _)| p);
    let (url_var, key_var) = match provider {
        "openai" => ("OPENAI_BASE_URL", Some("OPENAI_API_KEY")),
        "anthropic" => ("ANTHROPIC_BASE_URL", Some("ANTHROPIC_API_KEY")),
        _ => ("OLLAMA_HOST", None),
    };
    if let Some(var) = &r.api_key_env
        && key_var.is_some()
        && env(var).is_none_or(|v| v.trim().is_empty())
    {
        return Err(config(format!(
            "{var} is not set; `{}` takes its key from it (export {var}=...)",
            r.spec
        )));
    }
    let base_url = r.base_url.clone();
    let key_env = r.api_key_env.clone();
    let overlay = move |name: &str| -> Option<String> {
        if name == url_var
            && let Some(url) = &base_url
        {
            return Some(url.clone());
        }
        if Some(name) == key_var
            && let Some(var) = &key_env
        {
            return env(var);
        }
        env(name)
    };
    super::providers::from_spec_with(&r.spec, &overlay, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ModelsFile, ModelError> {
        ModelsFile::parse(text, Path::new("ais.toml"), Path::new("/proj"))
    }

    fn specs(file: &ModelsFile, tier: &str) -> Vec<String> {
        file.tiers[tier].iter().map(|r| r.spec.clone()).collect()
    }

    #[test]
    fn tiers_aliases_and_chains_resolve_in_order() {
        let file = parse(
            r#"
default = "judge"
[models]
frontier = "anthropic:claude-x"
small = "ollama:qwen3:8b"
judge = "frontier"
cheap = ["small", { spec = "openai:m", base_url = "http://127.0.0.1:9/v1" }, "judge"]
canned = "scripted:answers.json"
[prices."openai:m"]
input = 0.5
output = 1.5
"#,
        )
        .unwrap();
        assert_eq!(specs(&file, "judge"), ["anthropic:claude-x"]);
        assert_eq!(specs(&file, "small"), ["ollama:qwen3:8b"]);
        assert_eq!(
            specs(&file, "cheap"),
            ["ollama:qwen3:8b", "openai:m", "anthropic:claude-x"]
        );
        assert_eq!(
            file.tiers["cheap"][1].base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        assert_eq!(specs(&file, "canned"), ["scripted:/proj/answers.json"]);
        assert_eq!(file.default.as_deref(), Some("judge"));
        assert_eq!(file.prices["openai:m"].output, 1.5);
    }

    #[test]
    fn mistakes_are_named_with_the_next_step() {
        let cases = [
            (
                "[models]\na = \"smal\"\nsmall = \"ollama:x\"",
                "did you mean `small`?",
            ),
            ("[models]\na = \"b\"\nb = \"a\"", "cycle (a → b → a)"),
            ("[models]\na = []", "empty list"),
            ("[models]\na = \"openai:\"", "no model spec"),
            (
                "[models]\n\"a b\" = \"openai:m\"",
                "characters a tier name cannot have",
            ),
            (
                "default = \"nope\"\n[models]\nnope2 = \"openai:m\"",
                "`default` names the tier `nope`",
            ),
            (
                "[models]\na = { spec = \"openai:m\", base = \"x\" }",
                "does not read",
            ),
            ("[modles]\na = \"openai:m\"", "does not read (line 1)"),
            ("[prices.\"openai:m\"]\ninput = \"cheap\"", "does not read"),
        ];
        for (text, needle) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Config);
            assert!(err.message.contains(needle), "{text}: {}", err.message);
            assert!(err.message.contains("ais.toml"), "{}", err.message);
        }
    }

    #[test]
    fn a_table_entry_gets_its_own_url_and_key_variable() {
        let r = ModelRef {
            spec: "openai:local".into(),
            base_url: Some("http://127.0.0.1:1/v1".into()),
            api_key_env: Some("LOCAL_KEY".into()),
        };
        let env = |name: &str| match name {
            "LOCAL_KEY" => Some("sk-local".to_owned()),
            _ => None,
        };
        let options = crate::llm::providers::ProviderOptions::default();
        let model = open_with(&r, &env, options.clone()).unwrap();
        assert_eq!(model.name(), "openai:local");
        // The usual variables are not needed: a missing OPENAI_API_KEY is no error here.
        let plain = ModelRef {
            spec: "anthropic:x".into(),
            base_url: None,
            api_key_env: Some("MY_ANTHROPIC".into()),
        };
        let err = open_with(&plain, &|_| None, options).err().unwrap();
        assert!(
            err.message.contains("MY_ANTHROPIC is not set"),
            "{}",
            err.message
        );
    }

    #[test]
    fn the_model_flag_names_a_tier_or_a_spec() {
        let file = parse("[models]\nsmall = \"scripted:s.json\"\n").unwrap();
        let open = |r: &ModelRef| -> Result<Arc<dyn Model>, ModelError> {
            Ok(Arc::new(super::super::ScriptedModel::from_json(
                Path::new(&r.spec),
                serde_json::json!({}),
            )?))
        };
        let models = file.build(Some("small"), &open).unwrap();
        assert_eq!(models.default_chain().unwrap().name(), "small");
        let models = file.build(Some("scripted:other.json"), &open).unwrap();
        assert_eq!(
            models.default_chain().unwrap().name(),
            "scripted:other.json"
        );
        let err = file.build(Some("smal"), &open).err().unwrap();
        assert!(
            err.message.contains("did you mean `small`?"),
            "{}",
            err.message
        );
        assert!(file.build(None, &open).unwrap().default_chain().is_none());
    }
}

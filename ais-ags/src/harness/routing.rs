//! Intelligence routing (SPEC.md §11.4). This harness's routing profile has one model class:
//! the run's model, whose tier the operator states in `AIS_MODEL_TIER` (`minimal`, `standard`,
//! `advanced`, `frontier`; `standard` when unset). A node demanding more is refused before any
//! token is spent (`RT011`, the node `blocked`) unless its `intelligence.allow_downgrade` is
//! true, when it runs on the model and the attempt records `downgraded: true` with the reason;
//! a node demanding less routes up to it (rule 4). With `failure.retry.escalate_intelligence`
//! each retry demands `intelligence.escalate_to`, else one tier more, clamped at `frontier`.

use crate::graph::{Int, Node, Tier};
use serde_json::{Value as Json, json};

/// The environment variable naming the run model's tier.
pub const TIER_ENV: &str = "AIS_MODEL_TIER";

/// The tiers, in order (level 1 to 4).
pub const TIERS: [&str; 4] = ["minimal", "standard", "advanced", "frontier"];

/// The level (1–4) of a tier name.
pub fn level(tier: &str) -> Option<usize> {
    TIERS.iter().position(|t| *t == tier).map(|i| i + 1)
}

/// The run model's tier: `AIS_MODEL_TIER`, else `standard`; an unknown name is an error.
pub fn model_tier() -> Result<String, String> {
    match std::env::var(TIER_ENV) {
        Ok(t) if !t.trim().is_empty() => {
            let t = t.trim().to_ascii_lowercase();
            level(&t).map(|_| t.clone()).ok_or_else(|| {
                format!(
                    "{TIER_ENV}={t} is not a tier: name one of {}",
                    TIERS.join(", ")
                )
            })
        }
        _ => Ok("standard".into()),
    }
}

/// The level (1–4) of a tier.
fn rank(tier: Tier) -> usize {
    Tier::ALL
        .iter()
        .position(|t| *t == tier)
        .map_or(2, |i| i + 1)
}

/// The tier node `node` demands at attempt `attempt` (1-based), or `None` when it names none.
fn demanded(node: &Node, attempt: u64) -> Option<usize> {
    let intel = node.intelligence.as_ref()?;
    let base = rank(intel.tier);
    let escalate = node.retry().and_then(|r| r.escalate_intelligence) == Some(true);
    if attempt <= 1 || !escalate {
        return Some(base);
    }
    Some(match intel.escalate_to {
        Some(t) => rank(t).max(base),
        None => base
            .saturating_add(usize::try_from(attempt).unwrap_or(usize::MAX) - 1)
            .min(TIERS.len()),
    })
}

/// The environment variable stating the run model's usable context window, in tokens.
pub const CONTEXT_ENV: &str = "AIS_MODEL_CONTEXT_TOKENS";

/// The run model's usable context window as the operator states it ([`CONTEXT_ENV`]).
pub fn model_context() -> Option<u64> {
    std::env::var(CONTEXT_ENV).ok()?.trim().parse().ok()
}

/// Rule 5: `intelligence.min_context_tokens` is a hard floor, whatever the tier — a node
/// demanding more context than the model is stated to have (`have`; unknown when unstated) is
/// refused (`RT011`), a downgrade allowed or not.
pub fn context_floor(node: &Node, have: Option<u64>) -> Result<(), String> {
    let Some(want) = node
        .intelligence
        .as_ref()
        .and_then(|i| i.min_context_tokens.as_ref())
        .and_then(Int::get)
    else {
        return Ok(());
    };
    match have {
        Some(h) if h >= want => Ok(()),
        Some(h) => Err(format!(
            "RT011: the node needs a context window of at least {want} tokens and the run's model has {h} ({CONTEXT_ENV}); run it with a model that has one"
        )),
        None => Err(format!(
            "RT011: the node needs a context window of at least {want} tokens and the run's model's is not stated: state it, e.g. `{CONTEXT_ENV}={want}`, when the model has one that large"
        )),
    }
}

/// Routes attempt `attempt` of `node` to a model of tier `model`: the run record's `routed`
/// object, or the `RT011` refusal's message.
pub fn route(node: &Node, attempt: u64, model: &str) -> Result<Json, String> {
    context_floor(node, model_context())?;
    let have = level(model).unwrap_or(2);
    let Some(want) = demanded(node, attempt) else {
        return Ok(json!({"effective_tier": model, "downgraded": false}));
    };
    let requested = TIERS[want - 1];
    if want <= have {
        return Ok(
            json!({"requested_tier": requested, "effective_tier": model, "downgraded": false}),
        );
    }
    let allow = node.intelligence.as_ref().and_then(|i| i.allow_downgrade) == Some(true);
    if allow {
        return Ok(
            json!({"requested_tier": requested, "effective_tier": model, "downgraded": true,
            "reason": format!("the run's model is `{model}` ({TIER_ENV}); `allow_downgrade: true`")}),
        );
    }
    Err(format!(
        "RT011: attempt {attempt} demands tier `{requested}` and the run's model is `{model}` ({TIER_ENV}); set `intelligence.allow_downgrade: true`, or run with a model of tier `{requested}` and `{TIER_ENV}={requested}`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node of `fields` (a title and a description added).
    fn node(fields: Json) -> Node {
        let mut n = json!({"title": "T", "description": "D"});
        n.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        serde_json::from_value(n).unwrap()
    }

    #[test]
    fn routing_up_down_and_escalation() {
        let n = node(json!({"intelligence": {"tier": "advanced"}}));
        assert!(route(&n, 1, "frontier").is_ok());
        assert!(route(&n, 1, "standard").unwrap_err().starts_with("RT011"));
        let d = node(json!({"intelligence": {"tier": "advanced", "allow_downgrade": true}}));
        assert_eq!(route(&d, 1, "standard").unwrap()["downgraded"], true);
        let e = node(
            json!({"intelligence": {"tier": "standard"}, "failure": {"retry": {"escalate_intelligence": true}}}),
        );
        assert!(route(&e, 1, "standard").is_ok());
        assert!(
            route(&e, 2, "standard").is_err(),
            "the retry demands advanced"
        );
        assert_eq!(
            route(&e, 5, "frontier").unwrap()["requested_tier"],
            "frontier"
        );
        assert!(route(&node(json!({})), 1, "minimal").is_ok());
    }

    #[test]
    fn the_context_floor_holds_whatever_the_tier_or_a_downgrade() {
        let n = node(
            json!({"intelligence": {"tier": "minimal", "allow_downgrade": true, "min_context_tokens": 100000}}),
        );
        // (the model's stated window, refused)
        for (have, refused) in [
            (None, true),
            (Some(99_999), true),
            (Some(100_000), false),
            (Some(200_000), false),
        ] {
            let r = context_floor(&n, have);
            assert_eq!(r.is_err(), refused, "{have:?}: {r:?}");
            if let Err(e) = r {
                assert!(e.starts_with("RT011") && e.contains(CONTEXT_ENV), "{e}");
            }
        }
        assert!(context_floor(&node(json!({})), None).is_ok());
    }
}

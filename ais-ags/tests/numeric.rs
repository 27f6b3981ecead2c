//! The harness's numeric fields, as a hostile graph writes them: any number — `1.0e300`,
//! negative, zero, fractions, the largest integers — gives a bounded duration, a tier in range
//! or a refusal, never a panic.

use ais_ags::{
    MAX_RETRY_DELAY_SECONDS, capped_seconds as seconds, retry_delay, route_intelligence as route,
};
use proptest::prelude::*;
use serde_json::json;
use std::time::Duration;

/// A retry block as a graph writes it.
fn retry(spec: serde_json::Value) -> ais_ags::RetryPolicy {
    serde_json::from_value(spec).expect("a retry block")
}

/// A node of `fields` (a title and a description added).
fn node(fields: serde_json::Value) -> ais_ags::Node {
    let mut n = json!({"title": "T", "description": "D"});
    n.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    serde_json::from_value(n).expect("a node")
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("JSON has no NaN or infinity", |f| f.is_finite()),
        Just(1.0e300),
        Just(-1.0e300),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(0.0),
        (0.0f64..1.0e6),
    ]
}

#[test]
fn the_issue_s_delay_is_a_bounded_wait() {
    let spec = json!({"backoff": "exponential", "initial_delay_seconds": 1.0e300,
        "max_delay_seconds": 1.0e300, "jitter": false});
    assert_eq!(
        retry_delay(&retry(spec), 3, 0.0),
        Duration::from_secs_f64(MAX_RETRY_DELAY_SECONDS)
    );
    assert_eq!(seconds(-5.0, 10.0), Duration::ZERO);
    assert_eq!(seconds(f64::NAN, 10.0), Duration::ZERO);
    assert_eq!(seconds(1.0e300, 10.0), Duration::from_secs(10));
}

proptest! {
    #[test]
    fn any_retry_block_gives_a_bounded_delay(
        initial in number(),
        max in number(),
        attempt in any::<u64>(),
        draw in any::<f64>(),
        backoff in prop::sample::select(vec!["none", "fixed", "linear", "exponential"]),
        jitter in any::<bool>(),
    ) {
        let spec = json!({"backoff": backoff, "initial_delay_seconds": initial,
            "max_delay_seconds": max, "jitter": jitter});
        let d = retry_delay(&retry(spec), attempt, draw);
        prop_assert!(d <= Duration::from_secs_f64(MAX_RETRY_DELAY_SECONDS));
    }

    #[test]
    fn any_intelligence_level_routes_or_refuses(
        level in any::<u64>(),
        attempt in any::<u64>(),
        tokens in any::<u64>(),
        escalate in any::<bool>(),
        tier in prop::sample::select(vec!["minimal", "standard", "advanced", "frontier"]),
    ) {
        let n = node(json!({"intelligence": {"tier": tier, "level": level, "min_context_tokens": tokens},
            "failure": {"retry": {"escalate_intelligence": escalate}}}));
        let _ = route(&n, attempt, "standard");
        let n = node(json!({"intelligence": {"tier": tier, "level": level, "escalate_to": tier}}));
        let _ = route(&n, attempt, "frontier");
    }

    #[test]
    fn any_seconds_convert(secs in number(), cap in 0.0f64..1.0e9) {
        prop_assert!(seconds(secs, cap) <= Duration::from_secs_f64(cap));
    }
}

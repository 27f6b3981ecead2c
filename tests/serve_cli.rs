//! `ais serve` in the default build (without the `restate` feature): it says how to get it.
#![cfg(not(feature = "restate"))]

use std::process::Command;

#[test]
fn serve_without_the_restate_feature_says_how_to_build_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_ais"))
        .args(["serve", "--restate", "examples/writing_plans.agir"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("built without Restate support"), "{err}");
    assert!(err.contains("--features restate"), "{err}");
}

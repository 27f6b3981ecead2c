//! Shared by the tests: a temporary root holding `examples/writing_plans.agir` as `plan.agir`.

#![allow(dead_code)]

use ais_edit::Editor;
use serde_json::{Value as Json, json};
use std::path::PathBuf;

pub const PLAN: &str = include_str!("../../../examples/writing_plans.agir");

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub editor: Editor,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("plan.agir"), PLAN).unwrap();
        let editor = Editor::new(dir.path()).unwrap();
        Fixture { dir, editor }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("plan.agir")
    }

    pub fn text(&self) -> String {
        std::fs::read_to_string(self.path()).unwrap()
    }

    pub fn call(&self, verb: &str, args: Json) -> Json {
        self.editor.call(verb, &args)
    }

    pub fn patch(&self, ops: Json) -> Json {
        self.call("patch", json!({"file": "plan.agir", "ops": ops}))
    }

    /// Applies the ops; panics with the answer unless accepted.
    pub fn ok(&self, ops: Json) -> Json {
        let r = self.patch(ops);
        assert_eq!(
            r["status"],
            "ok",
            "{}",
            serde_json::to_string_pretty(&r).unwrap()
        );
        r
    }

    /// Applies the ops; panics unless rejected for `reason`; the file must be unchanged.
    pub fn rejected(&self, ops: Json, reason: &str) -> Json {
        let before = self.text();
        let r = self.patch(ops);
        assert_eq!(
            r["status"],
            "rejected",
            "{}",
            serde_json::to_string_pretty(&r).unwrap()
        );
        assert_eq!(
            r["reason"],
            reason,
            "{}",
            serde_json::to_string_pretty(&r).unwrap()
        );
        assert_eq!(self.text(), before, "a rejected patch wrote");
        r
    }

    pub fn generation(&self, target: &str) -> String {
        let v = self.call("view", json!({"file": "plan.agir", "target": target}));
        v["generation"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_owned()
    }

    pub fn program(&self) -> ais_core::Program {
        ais_core::agir::read(&self.text()).unwrap().program
    }
}

/// The repairs of a rejection, as (verb, args).
pub fn repairs(r: &Json) -> Vec<(String, Json)> {
    r["possible_repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["call"]["tool"].as_str().unwrap().to_owned(),
                x["call"]["args"].clone(),
            )
        })
        .collect()
}

//! Issue 7, bug 3: an empty or program-less module is never `clean`. Each REQUIRED part of
//! §8.2 that is missing is reported with its id and a repair; a module with no instructions
//! has no runnable program (X5, `failed`) and no TERMINAL (W6).

use ais_core::plan::lower;
use ais_core::{CheckId, Outcome, Repairs, Severity, check};

/// Checks with repairs; `repaired` holds the program the findings are about, repaired or not.
fn checked(text: &str) -> ais_core::Checked {
    let doc = ais_core::agir::read(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let mut c = check(&doc.program, &doc.source_map, Repairs::Mechanical);
    c.repaired.get_or_insert(doc.program);
    c
}

#[test]
fn an_empty_or_program_less_document_has_no_runnable_program() {
    for text in [
        "",
        "   \n\n",
        "~\n",
        "---\nname: m\ndescription: d\n---\n",
        "nodes: []\n",
        "walker:\n  name: w\n  carries: {task: {type: str, role: input}}\nnodes:\nedges: []\n",
    ] {
        let c = checked(text);
        assert_eq!(c.outcome, Outcome::Failed, "{text:?}: {:#?}", c.findings);
        let ids: Vec<CheckId> = c.findings.iter().filter_map(|f| f.id.check()).collect();
        assert!(ids.contains(&CheckId::X5), "{text:?}: {ids:?}");
        assert!(ids.contains(&CheckId::W6), "{text:?}: {ids:?}");
        for f in &c.findings {
            assert!(f.repair.is_some(), "{text:?}: {} has no repair", f.id);
        }
        let x5 = c.findings.iter().find(|f| f.id == CheckId::X5).unwrap();
        assert_eq!(x5.severity, Severity::Fatal);
        assert!(
            x5.message.contains("no entry instruction"),
            "{}",
            x5.message
        );
        // The compile oracle agrees: nothing lowers.
        assert!(lower(c.repaired.as_ref().unwrap()).is_err(), "{text:?}");
    }
}

#[test]
fn each_missing_required_name_is_its_own_finding() {
    let body = "walker:\n  carries:\n    task: {type: str, role: input}\nnodes:\n  - {id: done, type: TERMINAL, reads: [task]}\nedges: []\n";
    let c = checked(body);
    let s1: Vec<&str> = c
        .findings
        .iter()
        .filter(|f| f.id == CheckId::S1)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(s1.len(), 3, "{:#?}", c.findings);
    assert!(s1.iter().any(|m| m.contains("frontmatter `name`")));
    assert!(s1.iter().any(|m| m.contains("frontmatter `description`")));
    assert!(s1.iter().any(|m| m.contains("walker has no `name`")));
    assert_eq!(c.outcome, Outcome::Degraded);
    for f in c.findings.iter().filter(|f| f.id == CheckId::S1) {
        assert_eq!(f.severity, Severity::Warn);
    }
    // With all three, nothing is reported about them.
    let full = format!(
        "---\nname: m\ndescription: d\n---\n{}",
        body.replace("walker:\n", "walker:\n  name: m\n")
    );
    let c = checked(&full);
    assert!(
        c.findings.iter().all(|f| f.id != CheckId::S1),
        "{:#?}",
        c.findings
    );
    assert_eq!(c.outcome, Outcome::Clean, "{:#?}", c.findings);
    // The walker's repair names the module's name when there is one.
    let c = checked(&format!("---\nname: m\ndescription: d\n---\n{body}"));
    let f = c
        .findings
        .iter()
        .find(|f| f.id == CheckId::S1)
        .expect("walker.name");
    assert!(
        f.repair.as_ref().unwrap().summary.contains("`name: m`"),
        "{f:?}"
    );
}

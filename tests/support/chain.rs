//! A chain of `n` CODE steps ending at a TERMINAL: the long program the graph tests and the
//! graph benchmark draw.

/// The AG-IR text of the chain.
pub fn long_program(n: usize) -> String {
    let mut t = String::from(
        "walker:\n  carries:\n    task: {type: str, role: input}\n    k: {type: int}\nnodes:\n",
    );
    for i in 0..n {
        t.push_str(&format!(
            "  - {{id: s{i}, type: CODE, owner: code, reads: [k], writes: [k], body: \"k + 1\"}}\n"
        ));
    }
    t.push_str("  - {id: done, type: TERMINAL, reads: [k]}\nedges:\n");
    for i in 0..n {
        let to = if i + 1 == n {
            "done".to_owned()
        } else {
            format!("s{}", i + 1)
        };
        t.push_str(&format!("  - {{from: s{i}, to: {to}}}\n"));
    }
    t
}

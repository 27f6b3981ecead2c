//! Did-you-mean at any scale: names close to a misspelled one, by Jaro–Winkler similarity.
//!
//! A [`Suggester`] indexes a set of candidate names once (by length) and answers each
//! misspelled name with at most [`MAX_SUGGESTIONS`] names, best first. Up to [`EXACT_LIMIT`]
//! candidates every one is scored, so the answer is exactly the best-scoring names. Beyond
//! that, candidates are visited nearest in length first (half the budget for the same length,
//! a quarter for one character off, …), within a length those sharing the longest prefix or
//! suffix first, and at most [`SCORE_BUDGET`] are scored per name; an answer for a name
//! already asked is remembered. A large set may so miss a distant suggestion that an
//! exhaustive search would find; it never suggests a name scoring under [`THRESHOLD`]. So 10,000 unknown names against 10,000 candidates cost about 10,000 × 512
//! scores instead of 10⁸, and a check with many findings stays near-linear.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// The most names suggested for one misspelled name.
pub const MAX_SUGGESTIONS: usize = 3;
/// Up to this many candidates, every one is scored.
pub const EXACT_LIMIT: usize = 512;
/// Beyond [`EXACT_LIMIT`], the most candidates scored for one name.
pub const SCORE_BUDGET: usize = 128;
/// The least similarity (Jaro–Winkler, 0–1) of a suggestion.
pub const THRESHOLD: f64 = 0.8;

/// Where an expression's checker finds the did-you-mean index of a program's carry names: an
/// index built once per program, and only when some name is unknown (an index over many
/// carries costs more than checking every expression that names them correctly).
pub(crate) trait CarryNames {
    /// The index, built on the first call.
    fn suggester(&self) -> &Suggester<'_>;
}

/// An index of candidate names for did-you-mean suggestions.
pub struct Suggester<'a> {
    /// The candidates, deduplicated: as given, lowercase, lowercase reversed, length in
    /// characters.
    names: Vec<Name<'a>>,
    /// The candidates of each length, in two orders.
    by_len: BTreeMap<usize, Bucket>,
    /// Answers already given.
    memo: RefCell<HashMap<String, Vec<String>>>,
}

struct Name<'a> {
    given: &'a str,
    lower: String,
    reversed: String,
}

/// The candidates of one length, sorted by their text and by their reversed text, so that the
/// names sharing the longest prefix or suffix with a misspelled one are found first.
#[derive(Default)]
struct Bucket {
    forward: Vec<usize>,
    backward: Vec<usize>,
}

impl<'a> Suggester<'a> {
    /// Indexes the candidates (empty names are ignored, duplicates kept once).
    pub fn new(candidates: impl IntoIterator<Item = &'a str>) -> Self {
        let mut seen = std::collections::HashSet::new();
        let mut names = Vec::new();
        let mut by_len: BTreeMap<usize, Bucket> = BTreeMap::new();
        for c in candidates {
            if c.is_empty() || !seen.insert(c) {
                continue;
            }
            let lower = c.to_lowercase();
            let len = lower.chars().count();
            let bucket = by_len.entry(len).or_default();
            bucket.forward.push(names.len());
            bucket.backward.push(names.len());
            names.push(Name {
                given: c,
                reversed: lower.chars().rev().collect(),
                lower,
            });
        }
        if names.len() > EXACT_LIMIT {
            for b in by_len.values_mut() {
                b.forward
                    .sort_by(|x, y| names[*x].lower.cmp(&names[*y].lower));
                b.backward
                    .sort_by(|x, y| names[*x].reversed.cmp(&names[*y].reversed));
            }
        }
        Suggester {
            names,
            by_len,
            memo: RefCell::new(HashMap::new()),
        }
    }

    /// The candidates closest to `name` (never `name` itself), best first; at most
    /// [`MAX_SUGGESTIONS`].
    pub fn suggest(&self, name: &str) -> Vec<String> {
        if let Some(known) = self.memo.borrow().get(name) {
            return known.clone();
        }
        let answer = self.compute(name);
        self.memo
            .borrow_mut()
            .insert(name.to_owned(), answer.clone());
        answer
    }

    fn compute(&self, name: &str) -> Vec<String> {
        let lower = name.to_lowercase();
        let len = lower.chars().count();
        let mut scored: Vec<(f64, &str)> = Vec::new();
        let mut consider = |i: usize| {
            let c = &self.names[i];
            if c.given == name {
                return;
            }
            let score = strsim::jaro_winkler(&lower, &c.lower);
            if score >= THRESHOLD {
                scored.push((score, c.given));
            }
        };
        if self.names.len() <= EXACT_LIMIT {
            (0..self.names.len()).for_each(&mut consider);
        } else {
            let reversed: String = lower.chars().rev().collect();
            let mut budget = SCORE_BUDGET;
            let longest = self.by_len.keys().next_back().copied().unwrap_or(0);
            for d in 0..=longest.max(len) {
                let lens = [len.checked_add(d), len.checked_sub(d).filter(|_| d > 0)];
                for l in lens.into_iter().flatten() {
                    let Some(bucket) = self.by_len.get(&l) else {
                        continue;
                    };
                    if budget == 0 {
                        break;
                    }
                    // Nearer lengths get more of the budget: half for the same length, a
                    // quarter for one off, …, at least 16.
                    let share = (SCORE_BUDGET >> (d + 1)).max(16).min(budget);
                    budget -= share;
                    for i in self.neighbours(bucket, &lower, &reversed, share) {
                        consider(i);
                    }
                }
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(MAX_SUGGESTIONS)
            .map(|(_, c)| c.to_owned())
            .collect()
    }

    /// Up to `n` candidates of a bucket, nearest first around where `lower` (and its reversal)
    /// would sort: the names sharing the longest prefix or suffix with it.
    fn neighbours(&self, b: &Bucket, lower: &str, reversed: &str, n: usize) -> Vec<usize> {
        let at_f = b
            .forward
            .partition_point(|i| self.names[*i].lower.as_str() < lower);
        let at_b = b
            .backward
            .partition_point(|i| self.names[*i].reversed.as_str() < reversed);
        let mut out = Vec::with_capacity(n.min(b.forward.len()));
        let mut seen = std::collections::HashSet::new();
        let mut step = 0usize;
        while out.len() < n && step <= b.forward.len() {
            let around = [
                at_f.checked_add(step).and_then(|k| b.forward.get(k)),
                at_f.checked_sub(step + 1).and_then(|k| b.forward.get(k)),
                at_b.checked_add(step).and_then(|k| b.backward.get(k)),
                at_b.checked_sub(step + 1).and_then(|k| b.backward.get(k)),
            ];
            for &i in around.into_iter().flatten() {
                if out.len() < n && seen.insert(i) {
                    out.push(i);
                }
            }
            step += 1;
        }
        out
    }
}

/// The names among `candidates` closest to `name`, best first (see [`Suggester`]).
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    Suggester::new(candidates).suggest(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact search, as it was before the index: every candidate scored.
    fn exhaustive(name: &str, candidates: &[String]) -> Vec<String> {
        let mut scored: Vec<(f64, &str)> = candidates
            .iter()
            .map(String::as_str)
            .filter(|c| *c != name && !c.is_empty())
            .map(|c| {
                (
                    strsim::jaro_winkler(&name.to_lowercase(), &c.to_lowercase()),
                    c,
                )
            })
            .filter(|(s, _)| *s >= THRESHOLD)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.dedup_by(|a, b| a.1 == b.1);
        scored
            .into_iter()
            .take(3)
            .map(|(_, c)| c.to_owned())
            .collect()
    }

    #[test]
    fn small_sets_get_exactly_the_best_names() {
        let names: Vec<String> = ["plan_md", "task", "plan_ok", "plan_file", "PLAN_MD", "x"]
            .map(String::from)
            .to_vec();
        for probe in ["plan_mdd", "Task", "zzz", "plan", "plan_md", ""] {
            let s = Suggester::new(names.iter().map(String::as_str));
            assert_eq!(s.suggest(probe), exhaustive(probe, &names), "{probe}");
        }
    }

    #[test]
    fn large_sets_find_the_misspelled_name_and_stay_bounded() {
        let names: Vec<String> = (0..20_000).map(|i| format!("carry_{i:05}")).collect();
        let s = Suggester::new(names.iter().map(String::as_str));
        let got = s.suggest("carry_01234x");
        assert_eq!(
            got.first().map(String::as_str),
            Some("carry_01234"),
            "{got:?}"
        );
        assert!(got.len() <= MAX_SUGGESTIONS);
        // A name of a very different length is not compared with everything.
        assert!(s.suggest("q").is_empty());
        // Asked again: the same answer.
        assert_eq!(s.suggest("carry_01234x"), got);
        let started = std::time::Instant::now();
        for i in 0..2_000 {
            let _ = s.suggest(&format!("carry_{i:05}z"));
        }
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}

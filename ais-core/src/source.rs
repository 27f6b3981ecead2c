//! Source positions: where each element of a [`Program`](crate::program::Program) came from.
//!
//! The model holds plain data; positions live beside it in a [`SourceMap`], keyed by a
//! [`Locus`] (which element, which field, which list entry). The AG-IR reader fills a
//! `SourceMap` with line:column positions; the `ais!` macro keeps its own map from the same
//! `Locus` keys to token spans. A [`Finding`](crate::diag::Finding) names a `Locus`, so both
//! drivers can point at the exact place a finding is about.

use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

mod packed;

/// A 1-based line and column in a source text (columns count characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Pos {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column number.
    pub column: u32,
}

impl Pos {
    /// A position from a 1-based line and column.
    pub fn new(line: u32, column: u32) -> Self {
        Pos { line, column }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A range inside the text of one field — a name inside a guard, a CODE body or a signature:
/// 1-based line and column (in characters) within that text, and its length in characters.
///
/// A finding about part of a field carries one beside its [`Locus`]; each front end turns it
/// into its own location (a line and column in the `.agir` file, a sub-span of a string literal
/// in the macro).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SubRange {
    /// 1-based line within the field's text.
    pub line: u32,
    /// 1-based column (characters) within that line.
    pub column: u32,
    /// The length in characters (0 when only the start is known).
    pub len: u32,
}

impl SubRange {
    /// A range from a position within the field's text and a length.
    pub fn new(at: Pos, len: u32) -> Self {
        SubRange {
            line: at.line,
            column: at.column,
            len,
        }
    }
}

/// An element of a program, by its index in the program's own lists.
///
/// Indices (not names) identify elements so that a program with duplicate or empty ids can still
/// be pointed into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "index", rename_all = "snake_case")]
pub enum Element {
    /// The module as a whole (top-level sections).
    Program,
    /// The frontmatter block.
    Frontmatter,
    /// `types[i]`.
    Type(usize),
    /// `types[i].fields[j]` (or `members[j]` of an enum).
    TypeField(usize, usize),
    /// `knowledge[i]`.
    Knowledge(usize),
    /// `tools[i]`.
    Tool(usize),
    /// `walker` (its name and section).
    Walker,
    /// `walker.carries[i]`.
    Carry(usize),
    /// `nodes[i]`.
    Instruction(usize),
    /// `edges[i]`.
    Edge(usize),
    /// The module-level `concurrency` section.
    Concurrency,
    /// The `faithfulness` section.
    Faithfulness,
    /// `faithfulness.obligations[i]`.
    Obligation(usize),
    /// `faithfulness.deviations[i]`.
    AcceptedDeviation(usize),
}

spelled! {
    /// A field of a program element, as a [`Locus`] names it: one variant per field of the
    /// model (the nested ones, such as `autonomy.tools`, included), spelled as in AG-IR, and
    /// [`FieldKey::Other`] for a field the model does not know (kept as written by the
    /// reader). Checks name fields by variant, so a misspelled field does not compile.
    #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    #[allow(missing_docs)]
    pub enum FieldKey {
        AgirVersion => "agir_version",
        Autonomy => "autonomy",
        AutonomyTools => "autonomy.tools",
        Bearer => "bearer",
        Body => "body",
        Cap => "cap",
        Carries => "carries",
        Command => "command",
        Concurrency => "concurrency",
        ConcurrencyIsolation => "concurrency.isolation",
        ConcurrencyMaxParallel => "concurrency.max_parallel",
        ConcurrencyReason => "concurrency.reason",
        ConcurrencySpawn => "concurrency.spawn",
        Counter => "counter",
        Default => "default",
        Description => "description",
        Deviations => "deviations",
        Digest => "digest",
        Doc => "doc",
        Edges => "edges",
        Element => "element",
        Faithfulness => "faithfulness",
        Fields => "fields",
        Force => "force",
        From => "from",
        Guard => "guard",
        Id => "id",
        Isolation => "isolation",
        Kind => "kind",
        Knowledge => "knowledge",
        Lang => "lang",
        MaxParallel => "max_parallel",
        Members => "members",
        Modality => "modality",
        Model => "model",
        Name => "name",
        Nodes => "nodes",
        Obligation => "obligation",
        Obligations => "obligations",
        Op => "op",
        Output => "output",
        Owner => "owner",
        Path => "path",
        Pattern => "pattern",
        ProducedBy => "produced_by",
        Quote => "quote",
        Reads => "reads",
        RealizedBy => "realized_by",
        Reason => "reason",
        ResidentOn => "resident_on",
        Role => "role",
        Serves => "serves",
        Shape => "shape",
        Sig => "sig",
        Source => "source",
        Spawn => "spawn",
        Standalone => "standalone",
        Surface => "surface",
        Target => "target",
        Template => "template",
        To => "to",
        Tool => "tool",
        Tools => "tools",
        TracesTo => "traces_to",
        Type => "type",
        Types => "types",
        Value => "value",
        Verdict => "verdict",
        Walker => "walker",
        Writes => "writes",
    } else {
        /// A field the model does not know, as written.
        Other(String)
    }
}

impl From<&str> for FieldKey {
    /// A field named as written: for a reader recording the keys it meets. Checks use the
    /// variants themselves.
    fn from(text: &str) -> FieldKey {
        FieldKey::parse(text)
    }
}

impl From<&String> for FieldKey {
    fn from(text: &String) -> FieldKey {
        FieldKey::parse(text)
    }
}

impl fmt::Display for FieldKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place inside a program: an element, optionally one of its fields, optionally one entry of
/// that field when the field is a list (`reads[1]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Locus {
    /// The element.
    pub element: Element,
    /// The field within the element, if any.
    pub field: Option<FieldKey>,
    /// The entry within a list-valued field, if any.
    pub index: Option<usize>,
}

impl Locus {
    /// The element as a whole.
    pub fn element(element: Element) -> Self {
        Locus {
            element,
            field: None,
            index: None,
        }
    }

    /// One field of an element.
    pub fn field(element: Element, field: impl Into<FieldKey>) -> Self {
        Locus {
            element,
            field: Some(field.into()),
            index: None,
        }
    }

    /// One entry of a list-valued field of an element.
    pub fn entry(element: Element, field: impl Into<FieldKey>, index: usize) -> Self {
        Locus {
            element,
            field: Some(field.into()),
            index: Some(index),
        }
    }

    /// The field's AG-IR spelling, if the locus names a field.
    pub fn field_str(&self) -> Option<&str> {
        self.field.as_ref().map(FieldKey::as_str)
    }

    /// This locus without its list index, then without its field: the fallbacks a lookup tries.
    fn coarser(&self) -> Option<Locus> {
        if self.index.is_some() {
            Some(Locus {
                element: self.element,
                field: self.field.clone(),
                index: None,
            })
        } else if self.field.is_some() {
            Some(Locus::element(self.element))
        } else {
            None
        }
    }
}

/// A front end's map from the model's places to its own locations: a [`SourceMap`] gives
/// line:column positions in a `.agir` file; the `ais!` macro implements it over token spans.
/// The validator is written once against this trait (see
/// [`check::check`](crate::check::check)).
pub trait Locator {
    /// The front end's location: [`Pos`] for a file, a span for the macro.
    type Location: Clone + fmt::Debug + PartialEq;

    /// Where `locus` stands, falling back to coarser places (the field, the element) when the
    /// finer one is unknown.
    fn locate(&self, locus: &Locus) -> Option<Self::Location>;

    /// Where `range` inside the value of the field at `locus` stands; `token` is the text
    /// expected there. `None` (the default) when the front end cannot point inside a value:
    /// the finding is then placed at the field.
    fn locate_inner(
        &self,
        locus: &Locus,
        range: SubRange,
        token: Option<&str>,
    ) -> Option<Self::Location> {
        let _ = (locus, range, token);
        None
    }

    /// The order in which findings at two locations are reported (source order where the
    /// front end has one; the default keeps the validator's order).
    fn order(&self, a: &Self::Location, b: &Self::Location) -> std::cmp::Ordering {
        let _ = (a, b);
        std::cmp::Ordering::Equal
    }
}

impl Locator for SourceMap {
    type Location = Pos;

    fn locate(&self, locus: &Locus) -> Option<Pos> {
        self.lookup(locus)
    }

    fn locate_inner(&self, locus: &Locus, range: SubRange, token: Option<&str>) -> Option<Pos> {
        self.lookup_inner(locus, range, token)
    }

    fn order(&self, a: &Pos, b: &Pos) -> std::cmp::Ordering {
        a.cmp(b)
    }
}

/// Where each [`Locus`] of a program stands in its source text.
///
/// Recording is a push onto a list: a document of 10,000 instructions records some 180,000
/// positions and looks up only the few that findings name. Each position is kept packed (28
/// bytes: the locus as small integers, see the `packed` module). The first 32 lookups scan the list;
/// only a caller that looks up more gets the hash index over it (megabytes for a large
/// program, which a run whose program has three warnings never needs).
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    /// Every recorded position, in recording order (a locus may repeat; the first wins).
    entries: Vec<(packed::Key, Pos)>,
    /// The spellings of the unknown fields the packed loci name.
    fields: packed::Fields,
    /// The shapes of the recorded loci: a lookup of a shape never recorded is a miss at once,
    /// not a scan of every position.
    shapes: packed::Shapes,
    /// Packed locus → index of its first entry, built once the lookups outnumber the scans
    /// allowed.
    index: OnceLock<HashMap<packed::Key, usize, foldhash::fast::RandomState>>,
    /// The lookups answered by a scan so far.
    scans: ScanCount,
    /// The text the positions point into, when the reader attached it: it lets a position
    /// inside a field's value ([`SubRange`]) be found in the file.
    source: Option<Arc<str>>,
    /// Byte offset of the start of each line of `source`, built on the first lookup inside a
    /// field: a place inside a guard costs a line lookup, not a scan of the file.
    line_starts: OnceLock<Vec<usize>>,
}

/// How many lookups a [`SourceMap`] answers by scanning its list before it builds its index:
/// a scan costs a pass over the positions, the index several times their memory.
const SCANS_BEFORE_INDEX: usize = 32;

/// A [`SourceMap`]'s count of scanned lookups (a clone starts its own count).
#[derive(Debug, Default)]
struct ScanCount(AtomicUsize);

impl Clone for ScanCount {
    fn clone(&self) -> Self {
        ScanCount::default()
    }
}

impl PartialEq for SourceMap {
    /// Two maps are equal when they give the same positions (the lookup index is a cache).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl SourceMap {
    /// An empty map (a program built in code has no positions).
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the position of a locus (the first record wins). A locus whose indices do not
    /// fit 32 bits (an element past the 4 billionth) is not recorded: its lookups fall back to
    /// a coarser place.
    pub fn insert(&mut self, locus: Locus, pos: Pos) {
        let Some(key) = self.fields.pack(&locus) else {
            return;
        };
        self.shapes.insert(&key);
        self.entries.push((key, pos));
        // A lookup may already have built the index: keep it true.
        if let Some(index) = self.index.get_mut() {
            index.entry(key).or_insert(self.entries.len() - 1);
        }
    }

    /// Attaches the text the positions point into, so that [`SourceMap::lookup_inner`] can
    /// place a range inside a field's value.
    pub fn attach_source(&mut self, text: &str) {
        self.source = Some(Arc::from(text));
        self.line_starts = OnceLock::new();
    }

    /// The position of a locus, falling back to its field, then to its element, when the finer
    /// place was not recorded.
    pub fn lookup(&self, locus: &Locus) -> Option<Pos> {
        let mut cur = Some(locus.clone());
        while let Some(l) = cur {
            if let Some(p) = self.lookup_exact(&l) {
                return Some(p);
            }
            cur = l.coarser();
        }
        None
    }

    /// The lines of many loci at once, in one pass over the positions and without the lookup
    /// index: `wanted` maps a locus to its slot in the answer (`None`: not wanted), and each
    /// slot gets the line of its first locus with a field (or, failing that, of its first
    /// element-level locus) — what [`SourceMap::lookup`] would give a field locus without a
    /// list index, for `n` loci at the cost of one scan.
    pub fn lines_of(&self, n: usize, wanted: impl Fn(&Locus) -> Option<usize>) -> Vec<Option<u32>> {
        let mut exact: Vec<Option<u32>> = vec![None; n];
        let mut coarse: Vec<Option<u32>> = vec![None; n];
        for (key, pos) in &self.entries {
            let locus = self.fields.unpack(key);
            let Some(slot) = wanted(&locus).filter(|&k| k < n) else {
                continue;
            };
            let kept = if locus.field.is_some() {
                &mut exact[slot]
            } else {
                &mut coarse[slot]
            };
            kept.get_or_insert(pos.line);
        }
        exact.iter().zip(coarse).map(|(e, c)| e.or(c)).collect()
    }

    /// The position recorded for exactly this locus, without fallback.
    fn lookup_exact(&self, locus: &Locus) -> Option<Pos> {
        // An unknown field never recorded has no key, and no position.
        let key = self
            .fields
            .find(locus)
            .filter(|k| self.shapes.may_hold(k))?;
        if self.index.get().is_none()
            && self.scans.0.fetch_add(1, Ordering::Relaxed) < SCANS_BEFORE_INDEX
        {
            return self
                .entries
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, p)| *p);
        }
        let index = self.index.get_or_init(|| {
            let mut index =
                HashMap::with_capacity_and_hasher(self.entries.len(), Default::default());
            for (i, (k, _)) in self.entries.iter().enumerate() {
                index.entry(*k).or_insert(i);
            }
            index
        });
        let &i = index.get(&key)?;
        self.entries.get(i).map(|(_, p)| *p)
    }

    /// The position in the file of `range` inside the value of the field at `locus` — a name
    /// inside a guard — when the text is attached, the field's own position was recorded, and
    /// the value is a plain or quoted scalar on one line, or a block scalar (`|`, `>`). When
    /// `token` is given, the text there must start with it (an escape sequence before it in a
    /// double-quoted scalar shifts columns; the answer is then `None`, not a wrong place).
    pub fn lookup_inner(&self, locus: &Locus, range: SubRange, token: Option<&str>) -> Option<Pos> {
        let start = self.lookup_exact(locus)?;
        let first = self.source_line(start.line)?;
        let skip = usize::try_from(start.column).ok()?.checked_sub(1)?;
        let opening = first.chars().nth(skip)?;
        let (line, column) = match opening {
            '"' | '\'' if range.line == 1 => (start.line, start.column + range.column),
            '|' | '>' => {
                // The block's indentation is that of its first content line.
                let body = self.source_line(start.line.checked_add(1)?)?;
                let indent = body.chars().take_while(|c| *c == ' ').count();
                let indent = u32::try_from(indent).ok()?;
                (start.line + range.line, indent + range.column)
            }
            '"' | '\'' => return None,
            // A plain scalar, or a block scalar's content (where the reader places it): lines
            // keep the block's indentation.
            _ => (
                start.line + range.line - 1,
                (start.column - 1).checked_add(range.column)?,
            ),
        };
        if let Some(token) = token {
            let row = self.source_line(line)?;
            let from = usize::try_from(column).ok()?.checked_sub(1)?;
            let at: String = row.chars().skip(from).take(token.chars().count()).collect();
            if at != token {
                return None;
            }
        }
        Some(Pos::new(line, column))
    }

    /// The text of a 1-based line of the attached source, without its line break.
    fn source_line(&self, line: u32) -> Option<&str> {
        let text = self.source.as_deref()?;
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .filter(|&i| i < text.len())
                .collect()
        });
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let from = *starts.get(index)?;
        let to = starts.get(index + 1).map_or(text.len(), |next| next - 1);
        let row = text.get(from..to)?;
        Some(row.strip_suffix('\r').unwrap_or(row))
    }

    /// Makes room for at least `additional` more positions (a reader that knows the size of
    /// its input can avoid regrowing).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    /// Gives back the room [`SourceMap::reserve`] made and recording did not use.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
    }

    /// Every recorded position, in recording order (a locus may repeat; the first wins).
    pub fn iter(&self) -> impl Iterator<Item = (Locus, Pos)> + '_ {
        self.entries
            .iter()
            .map(|(k, p)| (self.fields.unpack(k), *p))
    }

    /// The number of positions recorded (a locus recorded twice counts twice).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanned_and_indexed_lookups_agree_and_lines_of_finds_the_first() {
        let mut map = SourceMap::new();
        for i in 0..100 {
            let line = i as u32 + 1;
            map.insert(
                Locus::element(Element::Instruction(i)),
                Pos { line, column: 1 },
            );
            let id = Locus::field(Element::Instruction(i), FieldKey::Id);
            map.insert(id.clone(), Pos { line, column: 3 });
            // A later record of the same locus never wins.
            map.insert(
                id,
                Pos {
                    line: 999,
                    column: 1,
                },
            );
        }
        map.insert(
            Locus::element(Element::Instruction(100)),
            Pos {
                line: 500,
                column: 1,
            },
        );
        // Past SCANS_BEFORE_INDEX lookups the index answers: the same positions throughout.
        for round in 0..3 {
            for i in 0..101 {
                let want = if i < 100 { (i as u32 + 1, 3) } else { (500, 1) };
                let p = map
                    .lookup(&Locus::field(Element::Instruction(i), FieldKey::Id))
                    .unwrap();
                assert_eq!((p.line, p.column), want, "round {round}, instruction {i}");
            }
        }
        assert!(map.index.get().is_some());
        let lines = map.lines_of(102, |l| match l.element {
            Element::Instruction(i) => Some(i),
            _ => None,
        });
        assert_eq!(lines[0], Some(1));
        assert_eq!(lines[99], Some(100));
        assert_eq!(
            lines[100],
            Some(500),
            "the element's line when the field has none"
        );
        assert_eq!(lines[101], None);
    }

    #[test]
    fn a_shape_never_recorded_is_a_miss_without_a_scan_and_falls_back() {
        let mut map = SourceMap::new();
        for i in 0..10 {
            map.insert(
                Locus::element(Element::Instruction(i)),
                Pos::new(i as u32 + 1, 1),
            );
            map.insert(
                Locus::field(Element::Instruction(i), FieldKey::Id),
                Pos::new(i as u32 + 1, 3),
            );
        }
        map.insert(Locus::field(Element::Edge(0), "x-note"), Pos::new(40, 5));
        // No frontmatter, no `doc` on any instruction: misses, and no lookup was spent on a scan.
        assert_eq!(map.lookup(&Locus::element(Element::Frontmatter)), None);
        let doc = Locus::field(Element::Instruction(4), FieldKey::Doc);
        assert_eq!(
            map.lookup(&doc),
            Some(Pos::new(5, 1)),
            "falls back to the element"
        );
        assert_eq!(
            map.lookup(&Locus::field(Element::Instruction(4), FieldKey::Id)),
            Some(Pos::new(5, 3))
        );
        // An unknown field shares its shape bit with its kind's other unknown fields.
        assert_eq!(
            map.lookup(&Locus::field(Element::Edge(0), "x-note")),
            Some(Pos::new(40, 5))
        );
        assert_eq!(map.lookup(&Locus::field(Element::Edge(1), "x-note")), None);
        // Scans: instruction 4 (after its `doc`), its `id`, edge 0's field and the same field of
        // edge 1 (a miss; no edge was recorded as a whole, so its fallback costs none); the
        // frontmatter and the `doc` field cost none.
        assert_eq!(map.scans.0.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn fields_spell_and_parse_both_ways() {
        assert_eq!(FieldKey::parse("reads"), FieldKey::Reads);
        assert_eq!(FieldKey::AutonomyTools.as_str(), "autonomy.tools");
        assert_eq!(
            FieldKey::parse("x-custom"),
            FieldKey::Other("x-custom".into())
        );
        assert_eq!(
            Locus::field(Element::Edge(0), FieldKey::Guard),
            Locus::field(Element::Edge(0), FieldKey::Guard)
        );
        assert_eq!(
            Locus::field(Element::Edge(0), FieldKey::Guard).field_str(),
            Some("guard")
        );
    }

    #[test]
    fn the_first_record_wins_before_and_after_a_lookup() {
        let mut map = SourceMap::new();
        let at = Locus::field(Element::Edge(1), FieldKey::Guard);
        map.insert(at.clone(), Pos::new(3, 4));
        map.insert(at.clone(), Pos::new(9, 9));
        assert_eq!(map.lookup(&at), Some(Pos::new(3, 4)));
        let late = Locus::field(Element::Edge(2), FieldKey::Guard);
        map.insert(late.clone(), Pos::new(5, 6));
        map.insert(late.clone(), Pos::new(7, 8));
        assert_eq!(map.lookup(&late), Some(Pos::new(5, 6)));
        assert_eq!(map.len(), 4);
    }

    #[test]
    fn lookup_falls_back_from_entry_to_field_to_element() {
        let mut map = SourceMap::new();
        map.insert(Locus::element(Element::Instruction(2)), Pos::new(10, 5));
        map.insert(
            Locus::field(Element::Instruction(2), FieldKey::Reads),
            Pos::new(13, 5),
        );
        assert_eq!(
            map.lookup(&Locus::entry(Element::Instruction(2), FieldKey::Reads, 1)),
            Some(Pos::new(13, 5))
        );
        assert_eq!(
            map.lookup(&Locus::field(Element::Instruction(2), FieldKey::Doc)),
            Some(Pos::new(10, 5))
        );
        assert_eq!(map.lookup(&Locus::element(Element::Instruction(3))), None);
    }
}

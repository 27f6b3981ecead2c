//! A [`SourceMap`](super::SourceMap)'s packed form of a [`Locus`]: small integers instead of
//! an enum of `usize`s, an optional [`FieldKey`] and an optional `usize`. A recorded position
//! takes 28 bytes this way where a `(Locus, Pos)` takes 72 — a document of 20,000
//! instructions records some 400,000 positions, so the packing saves about 17 MB of a run's
//! peak memory.

use super::{Element, FieldKey, Locus};
use std::collections::HashMap;

/// A [`Locus`] as small integers. Equal loci pack to equal keys within one [`Fields`] table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    /// Which kind of [`Element`] (its variant, in declaration order).
    element: u8,
    /// The element's first index (0 when it has none).
    a: u32,
    /// The element's second index ([`Element::TypeField`]'s field; 0 otherwise).
    b: u32,
    /// 0: no field; `1..=FieldKey::ALL.len()`: a known field; beyond: an unknown field,
    /// by its number in the [`Fields`] table.
    field: u32,
    /// The list entry, [`NO_INDEX`] when the locus names none.
    index: u32,
}

impl Key {
    /// The key's shape, its element kind and field code (codes past 127 share the last bit),
    /// as a bit number in a [`Shapes`] set.
    fn shape(&self) -> usize {
        usize::from(self.element) * SHAPE_FIELDS + self.field.min(SHAPE_FIELDS as u32 - 1) as usize
    }
}

/// Field codes a [`Shapes`] set tells apart per element kind.
const SHAPE_FIELDS: usize = 128;

/// The element kinds a [`Key`] packs ([`Element`]'s variants).
const ELEMENT_KINDS: usize = 14;

/// The shapes (element kind and field) of the keys a map has recorded: a lookup of a shape no
/// key has — the frontmatter of a document without one, a field no element of its kind wrote —
/// is answered without scanning the map's positions.
#[derive(Clone, Debug)]
pub(super) struct Shapes([u64; ELEMENT_KINDS * SHAPE_FIELDS / 64]);

impl Default for Shapes {
    fn default() -> Self {
        Shapes([0; ELEMENT_KINDS * SHAPE_FIELDS / 64])
    }
}

impl Shapes {
    /// Records a key's shape.
    pub(super) fn insert(&mut self, key: &Key) {
        let bit = key.shape();
        if let Some(word) = self.0.get_mut(bit / 64) {
            *word |= 1 << (bit % 64);
        }
    }

    /// Whether a key of this shape may have been recorded.
    pub(super) fn may_hold(&self, key: &Key) -> bool {
        let bit = key.shape();
        self.0
            .get(bit / 64)
            .is_none_or(|word| word & (1 << (bit % 64)) != 0)
    }
}

/// [`Key::index`] for a locus without a list index.
const NO_INDEX: u32 = u32::MAX;

/// The known fields, numbered from 1 by their place here.
static KNOWN_FIELDS: &[FieldKey] = &FieldKey::ALL;

/// The number of known fields: codes past it name unknown fields.
fn known_count() -> u32 {
    KNOWN_FIELDS.len() as u32
}

/// The spellings of the unknown fields ([`FieldKey::Other`]) a map has recorded, each once.
#[derive(Clone, Debug, Default)]
pub(super) struct Fields {
    /// By number.
    names: Vec<Box<str>>,
    /// Number by spelling.
    numbers: HashMap<Box<str>, u32>,
}

impl Fields {
    /// The key of a locus, recording an unknown field's spelling. `None` when an index does
    /// not fit the packing (an element past the 4 billionth): such a position is not kept,
    /// and a lookup falls back to a coarser place.
    pub(super) fn pack(&mut self, locus: &Locus) -> Option<Key> {
        let field = match &locus.field {
            Some(FieldKey::Other(name)) => match self.numbers.get(name.as_str()) {
                Some(&n) => known_count() + 1 + n,
                None => {
                    let n = u32::try_from(self.names.len()).ok()?;
                    let code = (known_count() + 1).checked_add(n)?;
                    self.names.push(name.as_str().into());
                    self.numbers.insert(name.as_str().into(), n);
                    code
                }
            },
            other => known(other.as_ref()),
        };
        key(locus, field)
    }

    /// The key of a locus if this table can name it (`None`: an unknown field never recorded,
    /// so no position can be recorded for it either).
    pub(super) fn find(&self, locus: &Locus) -> Option<Key> {
        let field = match &locus.field {
            Some(FieldKey::Other(name)) => known_count() + 1 + *self.numbers.get(name.as_str())?,
            other => known(other.as_ref()),
        };
        key(locus, field)
    }

    /// The locus a key stands for.
    pub(super) fn unpack(&self, key: &Key) -> Locus {
        let (a, b) = (key.a as usize, key.b as usize);
        let element = match key.element {
            0 => Element::Program,
            1 => Element::Frontmatter,
            2 => Element::Type(a),
            3 => Element::TypeField(a, b),
            4 => Element::Knowledge(a),
            5 => Element::Tool(a),
            6 => Element::Walker,
            7 => Element::Carry(a),
            8 => Element::Instruction(a),
            9 => Element::Edge(a),
            10 => Element::Concurrency,
            12 => Element::Obligation(a),
            13 => Element::AcceptedDeviation(a),
            _ => Element::Faithfulness,
        };
        let known = known_count();
        let field = match key.field {
            0 => None,
            code if code <= known => KNOWN_FIELDS.get(code as usize - 1).cloned(),
            code => self
                .names
                .get((code - known - 1) as usize)
                .map(|name| FieldKey::Other(name.to_string())),
        };
        Locus {
            element,
            field,
            index: (key.index != NO_INDEX).then_some(key.index as usize),
        }
    }
}

/// The code of a known field (or of none); an unknown one is the table's to number.
fn known(field: Option<&FieldKey>) -> u32 {
    match field {
        None => 0,
        Some(f) => KNOWN_FIELDS
            .iter()
            .position(|k| k == f)
            .map_or(0, |i| i as u32 + 1),
    }
}

/// The key of a locus whose field has the code `field`.
fn key(locus: &Locus, field: u32) -> Option<Key> {
    let small = |i: usize| u32::try_from(i).ok().filter(|&i| i != NO_INDEX);
    let (element, a, b) = match locus.element {
        Element::Program => (0, 0, 0),
        Element::Frontmatter => (1, 0, 0),
        Element::Type(a) => (2, small(a)?, 0),
        Element::TypeField(a, b) => (3, small(a)?, small(b)?),
        Element::Knowledge(a) => (4, small(a)?, 0),
        Element::Tool(a) => (5, small(a)?, 0),
        Element::Walker => (6, 0, 0),
        Element::Carry(a) => (7, small(a)?, 0),
        Element::Instruction(a) => (8, small(a)?, 0),
        Element::Edge(a) => (9, small(a)?, 0),
        Element::Concurrency => (10, 0, 0),
        Element::Faithfulness => (11, 0, 0),
        Element::Obligation(a) => (12, small(a)?, 0),
        Element::AcceptedDeviation(a) => (13, small(a)?, 0),
    };
    let index = match locus.index {
        None => NO_INDEX,
        Some(i) => small(i)?,
    };
    Some(Key {
        element,
        a,
        b,
        field,
        index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_locus_packs_and_unpacks_to_itself() {
        let mut fields = Fields::default();
        let mut loci = vec![
            Locus::element(Element::Program),
            Locus::element(Element::Frontmatter),
            Locus::field(Element::TypeField(3, 7), FieldKey::Type),
            Locus::entry(Element::Instruction(19_999), FieldKey::Reads, 2),
            Locus::field(Element::Edge(4), "x-custom"),
            Locus::entry(Element::Carry(0), "x-other", 0),
            Locus::element(Element::Faithfulness),
            Locus::entry(Element::Obligation(7), FieldKey::RealizedBy, 1),
            Locus::field(Element::AcceptedDeviation(2), FieldKey::Reason),
            Locus::element(Element::Concurrency),
            Locus::element(Element::Walker),
            Locus::field(Element::Tool(1), FieldKey::AutonomyTools),
            Locus::element(Element::Knowledge(2)),
            Locus::element(Element::Type(5)),
        ];
        loci.extend(
            FieldKey::ALL
                .iter()
                .map(|f| Locus::field(Element::Walker, f.clone())),
        );
        for locus in &loci {
            let key = fields.pack(locus).expect("packs");
            assert_eq!(fields.find(locus), Some(key), "{locus:?}");
            assert_eq!(&fields.unpack(&key), locus);
        }
        // The same unknown field packs to the same key; one never recorded cannot be found.
        let again = Locus::field(Element::Edge(4), "x-custom");
        assert_eq!(fields.pack(&again), fields.find(&again));
        assert_eq!(fields.names.len(), 2);
        assert_eq!(
            fields.find(&Locus::field(Element::Edge(4), "x-never")),
            None
        );
        // An index the packing cannot hold is refused, not wrapped onto another element.
        if usize::BITS > 32 {
            let far = Locus::element(Element::Instruction(u32::MAX as usize + 1));
            assert_eq!(fields.pack(&far), None);
            let at_max = Locus::entry(Element::Edge(0), FieldKey::Reads, u32::MAX as usize);
            assert_eq!(fields.pack(&at_max), None);
        }
        assert_eq!(std::mem::size_of::<(Key, crate::source::Pos)>(), 28);
    }
}

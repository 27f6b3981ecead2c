//! Where each [`Locus`] of a lowered program was written: the span map that lets every
//! validator finding be placed at its token.

use crate::ast::Site;
use ais_core::{Element, Locus};
use proc_macro2::Span;

/// A map from the core's [`Locus`] keys to the DSL's token spans — the macro's counterpart of
/// the AG-IR reader's [`SourceMap`](ais_core::SourceMap).
#[derive(Clone, Debug, Default)]
pub struct SpanMap {
    entries: Vec<(Locus, Site)>,
    /// Per edge index: the guard's tokens, each with its byte offset in the guard's text.
    guards: Vec<(usize, Vec<(usize, Span)>)>,
}

impl SpanMap {
    /// An empty map.
    pub fn new() -> SpanMap {
        SpanMap::default()
    }

    /// Records where a locus was written (the first record wins).
    pub fn insert(&mut self, locus: Locus, site: Site) {
        self.entries.push((locus, site));
    }

    /// Records the tokens of an edge's guard with their offsets in the guard's text.
    pub fn insert_guard(&mut self, edge: usize, tokens: Vec<(usize, Span)>) {
        self.guards.push((edge, tokens));
    }

    /// The site of a locus, falling back to its field without the entry index, then to its
    /// element, when the finer place was not recorded.
    pub fn lookup(&self, locus: &Locus) -> Option<Site> {
        let exact = |l: &Locus| {
            self.entries
                .iter()
                .find(|(k, _)| k == l)
                .map(|(_, site)| *site)
        };
        if let Some(site) = exact(locus) {
            return Some(site);
        }
        if locus.index.is_some() {
            let field = Locus {
                element: locus.element,
                field: locus.field.clone(),
                index: None,
            };
            if let Some(site) = exact(&field) {
                return Some(site);
            }
        }
        exact(&Locus::element(locus.element))
    }

    /// The token of an edge's guard that starts at or before `offset` (a byte offset into the
    /// guard's text), for a finding that points inside the guard.
    pub fn guard_token(&self, edge: usize, offset: usize) -> Option<Span> {
        let (_, tokens) = self.guards.iter().find(|(e, _)| *e == edge)?;
        tokens
            .iter()
            .take_while(|(o, _)| *o <= offset)
            .last()
            .or(tokens.first())
            .map(|(_, s)| *s)
    }

    /// The site of an element as a whole.
    pub fn element(&self, element: Element) -> Option<Site> {
        self.lookup(&Locus::element(element))
    }
}

//! A skill read as markdown (CommonMark with tables, by pulldown-cmark): its frontmatter, its
//! blocks (headings, paragraphs, list items, code blocks, tables, HTML), each with its span and
//! the scopes that govern it (the list intros and headings around it, nearest first), and its
//! sentences.
//!
//! # Frontmatter
//!
//! A skill's frontmatter is a YAML mapping between two `---` lines at the top of the file,
//! after any blank lines and HTML comments (a vendored skill often opens with a licence
//! comment); text between two such lines that is neither a mapping nor names the skill is
//! markdown (two thematic breaks). It is read with the core's YAML reader ([`ais_core::agir::read_data`]) within small
//! limits; `name` and `description` are taken from it. Frontmatter that is not valid YAML is
//! not fatal — many published skills write `description: Use when: …` — and is reported as a
//! [`Frontmatter::problem`] with its line; `name` and `description` are then read from their
//! `key: value` lines as plain text. The frontmatter is the router's contract (when to
//! reach for the skill), not the procedure: it is not parsed as markdown, and grounding does
//! not accept quotes from it.
//!
//! # List intros
//!
//! A list's *intro* is the paragraph (or, for a nested list, the text of the item that holds
//! it) directly before the list, in the same container, when its text ends with `:` — "You may
//! optionally:", "**If Subagent-Driven chosen:**". A paragraph that merely stands above a list
//! does not govern it.
//!
//! # Sentences
//!
//! A block's text is split after `.`, `!` or `?` (and any closing quotes or brackets) followed
//! by white space and then a character that can open a sentence (an upper-case letter, a
//! digit, a quote, a bracket, a backtick or `*`), unless the word ending there is a common
//! abbreviation (`e.g.`, `i.e.`, `etc.`, `vs.`, `cf.`, `approx.`, `Dr.`, `Mr.`, `Mrs.`, `Ms.`,
//! `No.`, `Fig.`) or a single letter; a line break in the text (a hard break) also ends one. A
//! table's sentences are its rows. Code blocks and HTML blocks are not split.

use crate::text::{LineIndex, Span};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use std::ops::Range;

/// The skill's frontmatter.
#[derive(Clone, Debug, Serialize)]
pub struct Frontmatter {
    /// Where it stands, fences included.
    pub span: Span,
    /// Its `name`, when it is a string.
    pub name: Option<String>,
    /// Its `description`, when it is a string.
    pub description: Option<String>,
    /// All of it, as JSON data, when it is valid YAML.
    pub data: Option<serde_json::Value>,
    /// Why it could not be read, with its line, when it is not valid YAML.
    pub problem: Option<String>,
}

/// What a block is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum BlockKind {
    /// A heading of level 1 to 6.
    Heading {
        /// Its level.
        level: u8,
    },
    /// A paragraph.
    Paragraph,
    /// The text of a list item (its first paragraph, or its text in a tight list).
    ListItem {
        /// Whether the list is numbered.
        ordered: bool,
        /// How deep the list is nested (1 for a top-level list).
        depth: usize,
    },
    /// A code block.
    Code {
        /// Its info string (`python`, `bash title=x`), empty when it has none.
        info: String,
        /// Whether it is fenced (an indented block is not).
        fenced: bool,
    },
    /// A table (one line of text per row, cells separated by ` | `).
    Table,
    /// An HTML block (a comment, a `<details>`).
    Html,
}

/// A scope that governs a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "block")]
pub enum Scope {
    /// The intro of a list the block is in (the index of the intro's block).
    ListIntro(usize),
    /// An enclosing heading (the index of the heading's block).
    Heading(usize),
}

/// A piece of block text and the source bytes it came from.
#[derive(Clone, Debug)]
struct Segment {
    text: usize,
    source: Range<usize>,
    exact: bool,
}

/// One block of the skill.
#[derive(Clone, Debug, Serialize)]
pub struct Block {
    /// What it is.
    #[serde(flatten)]
    pub kind: BlockKind,
    /// Where it stands.
    pub span: Span,
    /// Its text: inline markup removed (emphasis, code-span backticks, link syntax) for prose; the
    /// body, verbatim, for code; the raw HTML for HTML.
    pub text: String,
    /// For a code block, where its body stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Span>,
    /// The scopes that govern it, nearest first: the intros of the lists it is in, innermost
    /// first, then its enclosing headings, innermost first.
    pub scopes: Vec<Scope>,
    /// Whether it is the intro of the list that follows it.
    pub intro: bool,
    #[serde(skip)]
    container: usize,
    #[serde(skip)]
    first_sentence: Option<usize>,
    #[serde(skip)]
    segments: Vec<Segment>,
}

impl Block {
    /// The source byte range of text bytes `range` (clamped to the pieces they came from).
    pub fn source_of(&self, range: Range<usize>) -> Range<usize> {
        let find = |at: usize, end: bool| -> usize {
            let i = self
                .segments
                .partition_point(|s| s.text <= at)
                .saturating_sub(1);
            match self.segments.get(i) {
                None => self.span.start,
                Some(s) if s.exact => {
                    (s.source.start + (at - s.text) + usize::from(end)).min(s.source.end)
                }
                Some(s) if end => s.source.end,
                Some(s) => s.source.start,
            }
        };
        if range.is_empty() {
            let at = find(range.start, false);
            return at..at;
        }
        find(range.start, false)..find(range.end - 1, true)
    }

    /// Whether the block is prose (split into sentences and read for markers).
    pub fn is_prose(&self) -> bool {
        matches!(
            self.kind,
            BlockKind::Paragraph | BlockKind::ListItem { .. } | BlockKind::Table
        )
    }
}

/// A sentence of a prose block.
#[derive(Clone, Debug, Serialize)]
pub struct Sentence {
    /// The index of its block.
    pub block: usize,
    /// Where it stands.
    pub span: Span,
    /// Its text (as in the block's text).
    pub text: String,
}

/// How a reference to another file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefForm {
    /// A link or image destination.
    Link,
    /// A code span.
    CodeSpan,
    /// A word of prose.
    Prose,
    /// A word inside a code block.
    Code,
}

/// A piece of text that may name another file: a link destination, a code span, or a run of
/// prose or code text to be scanned for paths.
#[derive(Clone, Debug)]
pub(crate) struct RefText {
    pub form: RefForm,
    pub text: String,
    pub source: Range<usize>,
    /// Whether `text` is `source`'s bytes exactly (so an offset in it is an offset there).
    pub exact: bool,
}

/// A skill read as markdown.
#[derive(Clone, Debug, Serialize)]
pub struct Document {
    /// Its frontmatter, when it has one.
    pub frontmatter: Option<Frontmatter>,
    /// Where the body (the markdown after the frontmatter) starts, in bytes.
    pub body_start: usize,
    /// Its blocks, in document order.
    pub blocks: Vec<Block>,
    /// The sentences of its prose blocks, in document order.
    pub sentences: Vec<Sentence>,
    #[serde(skip)]
    pub(crate) refs: Vec<RefText>,
    /// Block indices in text order.
    #[serde(skip)]
    by_start: Vec<usize>,
}

impl Document {
    /// Reads `text` (the whole skill file) as markdown.
    pub fn parse(text: &str, lines: &LineIndex) -> Document {
        let (frontmatter, body_start) = frontmatter(text, lines);
        let mut walker = Walker::new(text, lines);
        let options = Options::ENABLE_TABLES
            | Options::ENABLE_STRIKETHROUGH
            | Options::ENABLE_TASKLISTS
            | Options::ENABLE_FOOTNOTES;
        for (event, range) in Parser::new_ext(&text[body_start..], options).into_offset_iter() {
            let range = range.start + body_start..range.end + body_start;
            walker.event(event, range);
        }
        let mut blocks = walker.blocks;
        let mut sentences: Vec<Sentence> = blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.is_prose())
            .flat_map(|(i, b)| {
                let pieces = if b.kind == BlockKind::Table {
                    split_rows(&b.text)
                } else {
                    split_sentences(&b.text)
                };
                pieces.into_iter().map(move |r| {
                    let source = b.source_of(r.clone());
                    Sentence {
                        block: i,
                        span: lines.span(text, source.start, source.end),
                        text: b.text[r].to_owned(),
                    }
                })
            })
            .collect();
        // Blocks and sentences do not overlap; kept in text order they are found by binary
        // search (a hostile skill of 300,000 sentences must not cost a scan per lookup).
        sentences.sort_by_key(|s| s.span.start);
        for (i, s) in sentences.iter().enumerate() {
            blocks[s.block].first_sentence.get_or_insert(i);
        }
        let mut by_start: Vec<usize> = (0..blocks.len()).collect();
        by_start.sort_by_key(|&i| blocks[i].span.start);
        Document {
            frontmatter,
            body_start,
            blocks,
            sentences,
            refs: walker.refs,
            by_start,
        }
    }

    /// The index of the block that holds byte `at`.
    pub fn block_at(&self, at: usize) -> Option<usize> {
        let k = self
            .by_start
            .partition_point(|&i| self.blocks[i].span.start <= at);
        let i = *self.by_start.get(k.checked_sub(1)?)?;
        self.blocks[i].span.covers(at).then_some(i)
    }

    /// The sentence that holds byte `at`, if any.
    pub fn sentence_at(&self, at: usize) -> Option<&Sentence> {
        let k = self.sentences.partition_point(|s| s.span.start <= at);
        let s = self.sentences.get(k.checked_sub(1)?)?;
        s.span.covers(at).then_some(s)
    }

    /// The first sentence of block `block`, if it is prose.
    pub fn first_sentence(&self, block: usize) -> Option<&Sentence> {
        self.sentences.get(self.blocks.get(block)?.first_sentence?)
    }
}

fn frontmatter(text: &str, lines: &LineIndex) -> (Option<Frontmatter>, usize) {
    let mut at = 0;
    // Blank lines and HTML comments may come first.
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        if trimmed.starts_with("<!--") {
            match trimmed.find("-->") {
                Some(end) => at = text.len() - trimmed.len() + end + 3,
                None => return (None, 0),
            }
        } else {
            at = text.len() - trimmed.len();
            break;
        }
    }
    // The fence must open a line.
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..at].trim().is_empty() {
        return (None, 0);
    }
    let first_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    if text[at..first_end].trim_end() != "---" {
        return (None, 0);
    }
    let yaml_start = (first_end + 1).min(text.len());
    let mut line = yaml_start;
    while line < text.len() {
        let end = text[line..].find('\n').map_or(text.len(), |i| line + i);
        let l = text[line..end].trim_end();
        if l == "---" || l == "..." {
            let body = (end + 1).min(text.len());
            let yaml = &text[yaml_start..line];
            let fm = read_frontmatter(text, lines, at, body, yaml_start, yaml);
            // Two thematic breaks at the top are not frontmatter: frontmatter is a mapping, or
            // at least names the skill.
            let mapping = fm.data.as_ref().is_some_and(serde_json::Value::is_object);
            if !mapping && fm.name.is_none() && fm.description.is_none() {
                return (None, 0);
            }
            return (Some(fm), body);
        }
        line = end + 1;
    }
    (None, 0) // an unclosed `---` is a thematic break, not frontmatter
}

fn read_frontmatter(
    text: &str,
    lines: &LineIndex,
    start: usize,
    end: usize,
    yaml_start: usize,
    yaml: &str,
) -> Frontmatter {
    let limits = ais_core::agir::Limits {
        max_bytes: 64 * 1024,
        max_depth: 16,
        max_alias_nodes: 1_000,
        max_alias_bytes: 64 * 1024,
        max_nodes: 10_000,
    };
    let first_line = lines.pos(text, yaml_start).line;
    let mut fm = Frontmatter {
        span: lines.span(text, start, end),
        name: None,
        description: None,
        data: None,
        problem: None,
    };
    match ais_core::agir::read_data(yaml, &limits) {
        Ok(data) => {
            let field = |k: &str| {
                data.value
                    .get(k)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            };
            fm.name = field("name");
            fm.description = field("description");
            fm.data = Some(data.value);
        }
        Err(e) => {
            // Many published skills write `description: Use when: …`, which is not YAML; the
            // two fields the lift needs are still read from their lines.
            fm.name = plain_field(yaml, "name");
            fm.description = plain_field(yaml, "description");
            let at = e
                .pos
                .map(|p| format!("line {}: ", p.line + first_line - 1))
                .unwrap_or_default();
            fm.problem = Some(format!(
                "{at}the frontmatter is not valid YAML: {}",
                e.message
            ));
        }
    }
    fm
}

/// The value of a top-level `key: value` line of text that is not valid YAML: the rest of the
/// line, trimmed, without surrounding quotes.
fn plain_field(yaml: &str, key: &str) -> Option<String> {
    yaml.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?.trim();
        let unquoted = rest
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .or_else(|| rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
            .unwrap_or(rest);
        (!unquoted.is_empty()).then(|| unquoted.to_owned())
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Collecting {
    Prose(CollectKind),
    Item,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CollectKind {
    Paragraph,
    Heading(u8),
    Table,
    Html,
}

struct Collector {
    what: Collecting,
    range: Range<usize>,
    text: String,
    segments: Vec<Segment>,
    /// For an item: its container id, list depth and numbering, and whether its text was
    /// already emitted as a block.
    item: Option<(usize, usize, bool, bool)>,
    first_source: Option<usize>,
    last_source: usize,
}

struct ListFrame {
    intro: Option<usize>,
}

struct CodeFrame {
    range: Range<usize>,
    info: String,
    fenced: bool,
    body: String,
    body_range: Option<Range<usize>>,
}

struct Walker<'a> {
    text: &'a str,
    lines: &'a LineIndex,
    blocks: Vec<Block>,
    refs: Vec<RefText>,
    headings: Vec<(u8, usize)>,
    lists: Vec<ListFrame>,
    containers: Vec<usize>,
    next_container: usize,
    collectors: Vec<Collector>,
    /// For each open paragraph: whether its text flows into its item's text.
    paragraphs: Vec<bool>,
    code: Option<CodeFrame>,
}

impl<'a> Walker<'a> {
    fn new(text: &'a str, lines: &'a LineIndex) -> Walker<'a> {
        Walker {
            text,
            lines,
            blocks: Vec::new(),
            refs: Vec::new(),
            headings: Vec::new(),
            lists: Vec::new(),
            containers: vec![0],
            next_container: 1,
            collectors: Vec::new(),
            paragraphs: Vec::new(),
            code: None,
        }
    }

    fn container(&self) -> usize {
        *self.containers.last().unwrap_or(&0)
    }

    fn scopes(&self) -> Vec<Scope> {
        let mut scopes: Vec<Scope> = self
            .lists
            .iter()
            .rev()
            .filter_map(|l| l.intro.map(Scope::ListIntro))
            .collect();
        scopes.extend(self.headings.iter().rev().map(|&(_, b)| Scope::Heading(b)));
        scopes
    }

    fn push_block(
        &mut self,
        kind: BlockKind,
        range: Range<usize>,
        text: String,
        segments: Vec<Segment>,
        container: usize,
    ) -> usize {
        let span = self.lines.span(self.text, range.start, range.end);
        self.blocks.push(Block {
            kind,
            span,
            text,
            body: None,
            scopes: self.scopes(),
            intro: false,
            first_sentence: None,
            container,
            segments,
        });
        self.blocks.len() - 1
    }

    /// Emits the text an item holds so far as its list-item block (before a nested block).
    fn flush_item(&mut self) {
        let Some(c) = self.collectors.last_mut() else {
            return;
        };
        let Some((container, depth, ordered, _)) = c.item else {
            return;
        };
        if c.text.trim().is_empty() {
            return;
        }
        let text = std::mem::take(&mut c.text);
        let segments = std::mem::take(&mut c.segments);
        let start = c.first_source.take().unwrap_or(c.range.start);
        let end = c.last_source.max(start);
        if let Some(item) = c.item.as_mut() {
            item.3 = true;
        }
        let (text, segments) = trim_text(text, segments);
        self.push_block(
            BlockKind::ListItem { ordered, depth },
            start..end,
            text,
            segments,
            container,
        );
    }

    fn append(&mut self, piece: &str, source: Range<usize>, exact: bool) {
        if let Some(code) = self.code.as_mut() {
            code.body.push_str(piece);
            let r = code.body_range.get_or_insert(source.clone());
            r.end = source.end;
            return;
        }
        let Some(c) = self.collectors.last_mut() else {
            return;
        };
        c.segments.push(Segment {
            text: c.text.len(),
            source: source.clone(),
            exact,
        });
        c.text.push_str(piece);
        c.first_source.get_or_insert(source.start);
        c.last_source = source.end;
    }

    /// Appends text the source does not spell (a table's cell and row separators), placed
    /// where the text before it ended.
    fn append_separator(&mut self, piece: &str) {
        if let Some(c) = self.collectors.last_mut() {
            let at = c.last_source;
            c.segments.push(Segment {
                text: c.text.len(),
                source: at..at,
                exact: false,
            });
            c.text.push_str(piece);
        }
    }

    fn open(&mut self, what: Collecting, range: Range<usize>) {
        self.collectors.push(Collector {
            what,
            range,
            text: String::new(),
            segments: Vec::new(),
            item: None,
            first_source: None,
            last_source: 0,
        });
    }

    fn close(&mut self) -> Option<usize> {
        let c = self.collectors.pop()?;
        let Collecting::Prose(kind) = c.what else {
            return None;
        };
        let kind = match kind {
            CollectKind::Paragraph => BlockKind::Paragraph,
            CollectKind::Heading(level) => BlockKind::Heading { level },
            CollectKind::Table => BlockKind::Table,
            CollectKind::Html => BlockKind::Html,
        };
        let (text, segments) = trim_text(c.text, c.segments);
        let container = self.container();
        Some(self.push_block(kind, c.range, text, segments, container))
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        let exact = |s: &str| s == &self.text[range.clone()];
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                let ex = exact(&t);
                if self.code.is_none() {
                    // Adjacent pieces of text (split at `~`, `_`, entities) are scanned as one.
                    match self.refs.last_mut() {
                        Some(last)
                            if last.form == RefForm::Prose
                                && last.exact
                                && ex
                                && last.source.end == range.start =>
                        {
                            last.text.push_str(&t);
                            last.source.end = range.end;
                        }
                        _ => self.refs.push(RefText {
                            form: RefForm::Prose,
                            text: t.to_string(),
                            source: range.clone(),
                            exact: ex,
                        }),
                    }
                }
                self.append(&t, range, ex);
            }
            Event::Code(t) => {
                let raw = &self.text[range.clone()];
                let ticks = raw.len() - raw.trim_start_matches('`').len();
                let inner = (range.start + ticks)..(range.end - ticks.min(range.len() - ticks));
                self.refs.push(RefText {
                    form: RefForm::CodeSpan,
                    text: t.trim().to_owned(),
                    source: inner.clone(),
                    exact: false,
                });
                self.append(&t, inner, false);
            }
            Event::SoftBreak => self.append(" ", range, false),
            Event::HardBreak => self.append("\n", range, false),
            Event::Html(t) | Event::InlineHtml(t) => {
                let ex = exact(&t);
                self.append(&t, range, ex);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.append(&t, range, false),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        match tag {
            Tag::Paragraph => {
                let merge = self.collectors.last().is_some_and(|c| {
                    c.what == Collecting::Item
                        && c.text.trim().is_empty()
                        && c.item.is_some_and(|i| !i.3)
                });
                if !merge {
                    self.flush_item();
                    self.open(Collecting::Prose(CollectKind::Paragraph), range);
                }
                self.paragraphs.push(merge);
            }
            Tag::Heading { level, .. } => {
                self.flush_item();
                // A heading is governed by the headings above its level, not by its siblings.
                let level = level as u8;
                while self.headings.last().is_some_and(|&(l, _)| l >= level) {
                    self.headings.pop();
                }
                self.open(Collecting::Prose(CollectKind::Heading(level)), range);
            }
            Tag::Table(_) => {
                self.flush_item();
                self.open(Collecting::Prose(CollectKind::Table), range);
            }
            Tag::HtmlBlock => {
                self.flush_item();
                self.open(Collecting::Prose(CollectKind::Html), range);
            }
            Tag::List(_) => {
                self.flush_item();
                let here = self.container();
                let intro = self.blocks.len().checked_sub(1).filter(|&b| {
                    let block = &self.blocks[b];
                    block.container == here
                        && matches!(
                            block.kind,
                            BlockKind::Paragraph | BlockKind::ListItem { .. }
                        )
                        && block.text.trim_end().ends_with(':')
                });
                if let Some(b) = intro {
                    self.blocks[b].intro = true;
                }
                self.lists.push(ListFrame { intro });
                // Numbering is read per item (the start number is all the event gives).
            }
            Tag::Item => {
                let id = self.next_container;
                self.next_container += 1;
                self.containers.push(id);
                let depth = self.lists.len();
                let ordered = self.text[range.clone()]
                    .trim_start()
                    .starts_with(|c: char| c.is_ascii_digit());
                self.open(Collecting::Item, range);
                if let Some(c) = self.collectors.last_mut() {
                    c.item = Some((id, depth, ordered, false));
                }
            }
            Tag::BlockQuote(_) | Tag::FootnoteDefinition(_) => {
                self.flush_item();
                let id = self.next_container;
                self.next_container += 1;
                self.containers.push(id);
            }
            Tag::CodeBlock(kind) => {
                self.flush_item();
                let (info, fenced) = match kind {
                    CodeBlockKind::Fenced(info) => (info.trim().to_owned(), true),
                    CodeBlockKind::Indented => (String::new(), false),
                };
                self.code = Some(CodeFrame {
                    range,
                    info,
                    fenced,
                    body: String::new(),
                    body_range: None,
                });
            }
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.refs.push(RefText {
                    form: RefForm::Link,
                    text: dest_url.to_string(),
                    source: range,
                    exact: false,
                });
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph if !self.paragraphs.pop().unwrap_or(false) => {
                self.close();
            }
            TagEnd::Heading(level) => {
                if let Some(b) = self.close() {
                    self.headings.push((level as u8, b));
                }
            }
            TagEnd::Table | TagEnd::HtmlBlock => {
                self.close();
            }
            TagEnd::TableCell => self.append_separator(" | "),
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(c) = self.collectors.last_mut() {
                    let trimmed = c.text.trim_end_matches(" | ").len();
                    c.text.truncate(trimmed);
                    c.segments.retain(|s| s.text < trimmed);
                }
                self.append_separator("\n");
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush_item();
                self.collectors.pop();
                self.containers.pop();
            }
            TagEnd::BlockQuote(_) | TagEnd::FootnoteDefinition => {
                self.containers.pop();
            }
            TagEnd::CodeBlock => {
                let Some(code) = self.code.take() else {
                    return;
                };
                let container = self.container();
                let body = code.body_range.clone();
                let b = self.push_block(
                    BlockKind::Code {
                        info: code.info,
                        fenced: code.fenced,
                    },
                    code.range,
                    code.body.clone(),
                    Vec::new(),
                    container,
                );
                self.blocks[b].body = body.map(|r| self.lines.span(self.text, r.start, r.end));
                if let Some(r) = code.body_range {
                    self.refs.push(RefText {
                        form: RefForm::Code,
                        text: code.body,
                        source: r,
                        exact: true,
                    });
                }
            }
            _ => {}
        }
    }
}

/// Trims white space off a block's text, keeping its segments in step.
fn trim_text(text: String, segments: Vec<Segment>) -> (String, Vec<Segment>) {
    let lead = text.len() - text.trim_start().len();
    let kept = text.trim().to_owned();
    let mut out = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        let seg_end = segments.get(i + 1).map_or(text.len(), |n| n.text);
        if seg_end <= lead || (s.text >= lead + kept.len() && !kept.is_empty()) {
            continue;
        }
        let mut s = s.clone();
        if s.text < lead {
            if s.exact {
                s.source.start = (s.source.start + lead - s.text).min(s.source.end);
            }
            s.text = 0;
        } else {
            s.text -= lead;
        }
        out.push(s);
    }
    (kept, out)
}

/// The byte ranges of a table's rows (its text's lines).
fn split_rows(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        if !line.trim().is_empty() {
            out.push(at..at + line.len());
        }
        at += line.len() + 1;
    }
    out
}

const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "cf", "approx", "dr", "mr", "mrs", "ms", "no", "fig",
];

/// The byte ranges of `text`'s sentences (see the [module docs](self)).
pub fn split_sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let push = |out: &mut Vec<Range<usize>>, a: usize, b: usize| {
        let piece = &text[a..b];
        let lead = piece.len() - piece.trim_start().len();
        let trail = piece.trim_end().len();
        if trail > lead {
            out.push(a + lead..a + trail);
        }
    };
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        if c == '\n' {
            push(&mut out, start, at);
            start = at + 1;
            k += 1;
            continue;
        }
        if matches!(c, '.' | '!' | '?') {
            let mut j = k + 1;
            while j < chars.len()
                && matches!(
                    chars[j].1,
                    '.' | '!' | '?' | '"' | '\'' | ')' | ']' | '\u{201D}' | '\u{2019}' | '*' | '_'
                )
            {
                j += 1;
            }
            let gap = j < chars.len() && chars[j].1.is_whitespace() && chars[j].1 != '\n';
            let mut n = j;
            while n < chars.len() && chars[n].1.is_whitespace() {
                n += 1;
            }
            let opens = n < chars.len()
                && (chars[n].1.is_uppercase()
                    || chars[n].1.is_ascii_digit()
                    || matches!(
                        chars[n].1,
                        '"' | '\'' | '(' | '[' | '`' | '*' | '\u{201C}' | '\u{2018}'
                    ));
            let word: String = text[start..at]
                .rsplit(|ch: char| ch.is_whitespace() || ch == '(')
                .next()
                .unwrap_or("")
                .to_lowercase();
            let abbreviation = ABBREVIATIONS.contains(&word.as_str())
                || (word.chars().count() == 1 && word.chars().all(char::is_alphabetic));
            if gap && opens && (c != '.' || !abbreviation) {
                let end = chars.get(j).map_or(text.len(), |&(i, _)| i);
                push(&mut out, start, end);
                start = chars.get(n).map_or(text.len(), |&(i, _)| i);
                k = n;
                continue;
            }
            k = j;
            continue;
        }
        k += 1;
    }
    push(&mut out, start, text.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(text: &str) -> Vec<&str> {
        split_sentences(text)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn sentences_split_at_terminators_not_abbreviations() {
        assert_eq!(
            sentences("Write the plan. Save it, e.g. to docs. Then commit! Done? Yes."),
            [
                "Write the plan.",
                "Save it, e.g. to docs.",
                "Then commit!",
                "Done?",
                "Yes."
            ]
        );
        assert_eq!(
            sentences("Use v1.2 of scripts/check.py now."),
            ["Use v1.2 of scripts/check.py now."]
        );
        assert_eq!(sentences("a\nb"), ["a", "b"]);
        assert_eq!(sentences("DRY. YAGNI. TDD."), ["DRY.", "YAGNI.", "TDD."]);
    }
}

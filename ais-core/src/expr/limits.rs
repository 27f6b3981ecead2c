//! [`Limits`]: the host-set bounds on parsing, checking and evaluating an expression.

/// Host-set bounds. Source text cannot change them. Exceeding one is a
/// [`Category::LimitError`](super::Category::LimitError), never a hang or an out-of-memory.
///
/// The defaults follow the Aegis reference runtime for the source side (source bytes, nesting,
/// tokens) and are larger on the value side, because carries hold whole documents and row
/// lists that a guard or body must be able to read and split:
///
/// | bound | default | Aegis |
/// |---|---:|---:|
/// | source bytes | 65,536 | 65,536 |
/// | identifier bytes | 128 | 64 |
/// | nesting depth: brackets, parentheses, calls, subscripts, field access, unary operators | 32 | 32 |
/// | tree height: nesting plus operator chains (`a + b + …`, `a and b and …`) | 1,024 | — |
/// | tokens | 8,192 | 8,192 |
/// | operations per evaluation | 200,000 | 20,000 |
/// | bytes allocated per evaluation (cumulative, conservative) | 16,777,216 | 2,000,000 |
/// | bytes in one string produced | 1,048,576 | 16,384 |
/// | items in one list or dict produced | 100,000 | — |
///
/// Checking an expression evaluates its constant parts under the same operation and
/// allocation bounds, with one budget for the whole expression.
///
/// Besides these, comparing or printing a value nested more than 128 levels deep is a
/// `limit_error` (carry values can be that deep; the evaluator never recurses further).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most UTF-8 bytes of expression text.
    pub max_source_bytes: usize,
    /// The most bytes in one identifier.
    pub max_identifier_bytes: usize,
    /// The deepest nesting of sub-expressions: parentheses, list/set/dict literals, call
    /// arguments, subscripts, field and method access, unary `-` and `not`, the `else` branch
    /// of a conditional. A flat chain of binary operators (`a + b + c`, `x and y and z`) is
    /// one level, however long.
    pub max_depth: usize,
    /// The tallest syntax tree: nesting plus the links of operator chains (`a + b + c` is two
    /// levels tall). It bounds the passes that recurse over the tree (the evaluator and
    /// printer grow their stack on the heap along operator chains; dropping and cloning a
    /// tree do not), so raise it with care.
    pub max_height: usize,
    /// The most tokens, punctuation included.
    pub max_tokens: usize,
    /// The most operations one evaluation may perform. Each node visited counts one, and work
    /// proportional to a value's size (searching, copying, sorting, comparing) counts one per
    /// element or per 64 bytes.
    pub max_operations: u64,
    /// The most bytes one evaluation may allocate, counted cumulatively and conservatively (a
    /// value is charged when it is produced, whether or not it is kept).
    pub max_allocation_bytes: u64,
    /// The most UTF-8 bytes in a string literal or a string an evaluation produces.
    pub max_string_bytes: usize,
    /// The most items in a list or dict literal or one an evaluation produces.
    pub max_collection_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_source_bytes: 65_536,
            max_identifier_bytes: 128,
            max_depth: 32,
            max_height: 1_024,
            max_tokens: 8_192,
            max_operations: 200_000,
            max_allocation_bytes: 16 * 1024 * 1024,
            max_string_bytes: 1024 * 1024,
            max_collection_len: 100_000,
        }
    }
}

/// Runs `f` — one level of a recursion over an expression tree — on a fresh heap-allocated
/// stack segment when less than a red zone of stack is left, so a tall tree (a long operator
/// chain, up to [`Limits::max_height`]) cannot overflow a small thread stack.
#[inline]
pub(crate) fn deeper<R>(f: impl FnOnce() -> R) -> R {
    // The red zone covers the frames between two calls of this (at most the nesting depth
    // of non-chain levels, each a few KB in a debug build).
    stacker::maybe_grow(512 * 1024, 4 * 1024 * 1024, f)
}

/// Implements `Clone`, `PartialEq` and `Debug` for a tree node with `kind` and `pos` fields one
/// level at a time through [`deeper`], so that copying, comparing or printing a tree as tall as
/// [`Limits::max_height`] cannot overflow a small stack, as the derived ones would.
macro_rules! tall_tree_node {
    ($node:ident) => {
        impl Clone for $node {
            fn clone(&self) -> Self {
                $crate::expr::limits::deeper(|| $node {
                    kind: self.kind.clone(),
                    pos: self.pos,
                })
            }
        }

        impl PartialEq for $node {
            fn eq(&self, other: &Self) -> bool {
                $crate::expr::limits::deeper(|| self.pos == other.pos && self.kind == other.kind)
            }
        }

        impl std::fmt::Debug for $node {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::expr::limits::deeper(|| {
                    f.debug_struct(stringify!($node))
                        .field("kind", &self.kind)
                        .field("pos", &self.pos)
                        .finish()
                })
            }
        }
    };
}
pub(crate) use tall_tree_node;

//! The fixed library of pure functions and methods: their static types and their run-time
//! behaviour ([`call`], in `calls.rs`). Nothing here reaches the host: no I/O, clock,
//! randomness or environment.

use super::Category;
use super::ExprError;
use super::ops::rt_err;
use super::types::Ty;

pub(crate) use super::calls::call;
use crate::source::Pos;

/// A library function or method. A method's receiver is its first argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Builtin {
    // Functions.
    Len,
    Str,
    Int,
    Float,
    Bool,
    Abs,
    Round,
    Min,
    Max,
    Sum,
    Sorted,
    Reversed,
    Any,
    All,
    // String methods.
    Lower,
    Upper,
    Strip,
    Lstrip,
    Rstrip,
    Split,
    Splitlines,
    Join,
    Replace,
    Startswith,
    Endswith,
    Find,
    Isdigit,
    Isalpha,
    Isspace,
    // Methods of several receivers.
    Contains,
    Count,
    Index,
    // Dict methods.
    Keys,
    Values,
    Items,
    Get,
}

/// The library functions, by name.
pub(crate) const FUNCTIONS: &[(&str, Builtin)] = &[
    ("len", Builtin::Len),
    ("str", Builtin::Str),
    ("int", Builtin::Int),
    ("float", Builtin::Float),
    ("bool", Builtin::Bool),
    ("abs", Builtin::Abs),
    ("round", Builtin::Round),
    ("min", Builtin::Min),
    ("max", Builtin::Max),
    ("sum", Builtin::Sum),
    ("sorted", Builtin::Sorted),
    ("reversed", Builtin::Reversed),
    ("any", Builtin::Any),
    ("all", Builtin::All),
];

/// The library methods, by name.
pub(crate) const METHODS: &[(&str, Builtin)] = &[
    ("lower", Builtin::Lower),
    ("upper", Builtin::Upper),
    ("strip", Builtin::Strip),
    ("lstrip", Builtin::Lstrip),
    ("rstrip", Builtin::Rstrip),
    ("split", Builtin::Split),
    ("splitlines", Builtin::Splitlines),
    ("join", Builtin::Join),
    ("replace", Builtin::Replace),
    ("startswith", Builtin::Startswith),
    ("endswith", Builtin::Endswith),
    ("find", Builtin::Find),
    ("isdigit", Builtin::Isdigit),
    ("isalpha", Builtin::Isalpha),
    ("isspace", Builtin::Isspace),
    ("contains", Builtin::Contains),
    ("count", Builtin::Count),
    ("index", Builtin::Index),
    ("keys", Builtin::Keys),
    ("values", Builtin::Values),
    ("items", Builtin::Items),
    ("get", Builtin::Get),
];

pub(crate) fn function(name: &str) -> Option<Builtin> {
    FUNCTIONS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

pub(crate) fn method(name: &str) -> Option<Builtin> {
    METHODS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

impl Builtin {
    pub(crate) fn name(self) -> &'static str {
        FUNCTIONS
            .iter()
            .chain(METHODS)
            .find(|(_, b)| *b == self)
            .map_or("?", |(n, _)| n)
    }

    pub(super) fn is_method(self) -> bool {
        METHODS.iter().any(|(_, b)| *b == self)
    }

    /// How the call is written, for messages: `len(x)` or `x.lower()`.
    pub(super) fn spelled(self) -> String {
        if self.is_method() {
            format!("`.{}()`", self.name())
        } else {
            format!("`{}()`", self.name())
        }
    }
}

pub(super) fn type_err(pos: Pos, message: impl Into<String>) -> ExprError {
    rt_err(Category::TypeError, pos, message)
}

pub(super) fn value_err(pos: Pos, message: impl Into<String>) -> ExprError {
    rt_err(Category::ValueError, pos, message)
}

fn fits(t: &Ty, want: &[&Ty]) -> bool {
    *t == Ty::Any
        || want.iter().any(|w| match (w, t) {
            (Ty::Str, Ty::Enum(_)) => true,
            (Ty::List(_), Ty::List(_)) | (Ty::Dict(_), Ty::Dict(_) | Ty::Object(_)) => true,
            (w, t) => *w == t,
        })
}

fn elem(t: &Ty) -> Ty {
    match t {
        Ty::List(e) | Ty::Dict(e) => (**e).clone(),
        _ => Ty::Any,
    }
}

/// Checks a call's argument types; returns its result type.
pub(crate) fn check(b: Builtin, args: &[Ty], pos: Pos) -> Result<Ty, ExprError> {
    let n = args.len();
    let (min, max) = arity(b);
    // Methods count their receiver; messages count the arguments in parentheses.
    let shift = usize::from(b.is_method());
    if n < min || n > max {
        let (lo, hi) = (min - shift, max.saturating_sub(shift));
        let want = if max == usize::MAX {
            format!("at least {lo}")
        } else if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo} to {hi}")
        };
        return Err(type_err(
            pos,
            format!(
                "{} takes {want} argument{}, not {}",
                b.spelled(),
                if want == "1" { "" } else { "s" },
                n - shift
            ),
        ));
    }
    let a = Args { b, tys: args, pos };
    match b {
        Builtin::Len
        | Builtin::Str
        | Builtin::Int
        | Builtin::Float
        | Builtin::Bool
        | Builtin::Abs
        | Builtin::Round => check_convert(&a),
        Builtin::Min
        | Builtin::Max
        | Builtin::Sum
        | Builtin::Sorted
        | Builtin::Reversed
        | Builtin::Any
        | Builtin::All => check_aggregate(&a),
        Builtin::Lower
        | Builtin::Upper
        | Builtin::Strip
        | Builtin::Lstrip
        | Builtin::Rstrip
        | Builtin::Split
        | Builtin::Splitlines
        | Builtin::Join
        | Builtin::Replace
        | Builtin::Startswith
        | Builtin::Endswith
        | Builtin::Find
        | Builtin::Isdigit
        | Builtin::Isalpha
        | Builtin::Isspace => check_text(&a),
        Builtin::Contains
        | Builtin::Count
        | Builtin::Index
        | Builtin::Keys
        | Builtin::Values
        | Builtin::Items
        | Builtin::Get => check_lookup(&a),
    }
}

/// A call's argument types (the receiver first, for a method), being checked.
struct Args<'a> {
    b: Builtin,
    tys: &'a [Ty],
    pos: Pos,
}

impl Args<'_> {
    /// The type of argument `i` (`any` past the end: arity was checked).
    fn arg(&self, i: usize) -> &Ty {
        self.tys.get(i).unwrap_or(&Ty::Any)
    }

    /// Argument `i` must fit one of `want`, described as `what` in the error.
    fn need(&self, i: usize, want: &[&Ty], what: &str) -> Result<(), ExprError> {
        let t = self.arg(i);
        if fits(t, want) {
            return Ok(());
        }
        let which = if self.b.is_method() && i == 0 {
            "its receiver".to_owned()
        } else {
            format!("argument {}", i + 1 - usize::from(self.b.is_method()))
        };
        Err(type_err(
            self.pos,
            format!("{} needs {what} as {which}, not a {t}", self.b.spelled()),
        ))
    }
}

/// `len`, the conversions and `abs`, `round`.
fn check_convert(a: &Args<'_>) -> Result<Ty, ExprError> {
    let list = Ty::list(Ty::Any);
    let dict = Ty::Dict(Box::new(Ty::Any));
    Ok(match a.b {
        Builtin::Len => {
            a.need(0, &[&Ty::Str, &list, &dict], "a str, list or dict")?;
            Ty::Int
        }
        Builtin::Str => Ty::Str,
        Builtin::Int => {
            a.need(
                0,
                &[&Ty::Int, &Ty::Float, &Ty::Bool, &Ty::Str],
                "a number, bool or str",
            )?;
            Ty::Int
        }
        Builtin::Float => {
            a.need(
                0,
                &[&Ty::Int, &Ty::Float, &Ty::Bool, &Ty::Str],
                "a number, bool or str",
            )?;
            Ty::Float
        }
        Builtin::Bool => Ty::Bool,
        Builtin::Abs => {
            a.need(0, &[&Ty::Int, &Ty::Float], "a number")?;
            a.arg(0).clone()
        }
        // The last builtins `check` routes here: `round`.
        _ => {
            a.need(0, &[&Ty::Int, &Ty::Float], "a number")?;
            Ty::Int
        }
    })
}

/// The list builtins: `min`, `max`, `sum`, `sorted`, `reversed`, `any`, `all`.
fn check_aggregate(a: &Args<'_>) -> Result<Ty, ExprError> {
    let (b, pos) = (a.b, a.pos);
    let list = Ty::list(Ty::Any);
    Ok(match b {
        Builtin::Min | Builtin::Max => {
            if a.tys.len() == 1 {
                a.need(0, &[&list], "a list (or two or more values)")?;
                let e = elem(a.arg(0));
                if !matches!(e, Ty::Any | Ty::Int | Ty::Float | Ty::Str | Ty::Bool) {
                    return Err(type_err(
                        pos,
                        format!("{} needs orderable items, not {e}", b.spelled()),
                    ));
                }
                e
            } else {
                let joined = super::types::join_all(a.tys);
                if !matches!(joined, Ty::Any | Ty::Int | Ty::Float | Ty::Str | Ty::Bool) {
                    return Err(type_err(
                        pos,
                        format!("{} needs numbers or strings of one kind", b.spelled()),
                    ));
                }
                joined
            }
        }
        Builtin::Sum => {
            a.need(0, &[&list], "a list of numbers")?;
            match elem(a.arg(0)) {
                Ty::Int => Ty::Int,
                Ty::Float => Ty::Float,
                Ty::Any => Ty::Any,
                e => {
                    return Err(type_err(
                        pos,
                        format!("`sum()` needs a list of numbers, not of {e}"),
                    ));
                }
            }
        }
        Builtin::Sorted | Builtin::Reversed => {
            a.need(0, &[&list], "a list")?;
            a.arg(0).clone()
        }
        // The last builtins `check` routes here: `any`, `all`.
        _ => {
            a.need(0, &[&list], "a list of bools")?;
            if !matches!(elem(a.arg(0)), Ty::Any | Ty::Bool) {
                return Err(type_err(
                    pos,
                    format!("{} needs a list of bools", b.spelled()),
                ));
            }
            Ty::Bool
        }
    })
}

/// The string methods.
fn check_text(a: &Args<'_>) -> Result<Ty, ExprError> {
    let (b, pos) = (a.b, a.pos);
    let list = Ty::list(Ty::Any);
    Ok(match b {
        Builtin::Lower | Builtin::Upper => {
            a.need(0, &[&Ty::Str], "a str")?;
            Ty::Str
        }
        Builtin::Strip | Builtin::Lstrip | Builtin::Rstrip => {
            a.need(0, &[&Ty::Str], "a str")?;
            if a.tys.len() == 2 {
                a.need(1, &[&Ty::Str, &Ty::Null], "a str of characters")?;
            }
            Ty::Str
        }
        Builtin::Split => {
            a.need(0, &[&Ty::Str], "a str")?;
            if a.tys.len() == 2 {
                a.need(1, &[&Ty::Str, &Ty::Null], "a separator str")?;
            }
            Ty::list(Ty::Str)
        }
        Builtin::Splitlines => {
            a.need(0, &[&Ty::Str], "a str")?;
            Ty::list(Ty::Str)
        }
        Builtin::Join => {
            a.need(0, &[&Ty::Str], "a separator str")?;
            a.need(1, &[&list], "a list of str")?;
            if !matches!(elem(a.arg(1)), Ty::Any | Ty::Str | Ty::Enum(_)) {
                return Err(type_err(
                    pos,
                    format!(
                        "`.join()` needs a list of str, not {}: convert the items with `str()` first",
                        a.arg(1)
                    ),
                ));
            }
            Ty::Str
        }
        Builtin::Replace => {
            a.need(0, &[&Ty::Str], "a str")?;
            a.need(1, &[&Ty::Str], "a str")?;
            a.need(2, &[&Ty::Str], "a str")?;
            Ty::Str
        }
        Builtin::Startswith | Builtin::Endswith => {
            a.need(0, &[&Ty::Str], "a str")?;
            a.need(1, &[&Ty::Str], "a str")?;
            Ty::Bool
        }
        Builtin::Find => {
            a.need(0, &[&Ty::Str], "a str")?;
            a.need(1, &[&Ty::Str], "a str")?;
            Ty::Int
        }
        // The last builtins `check` routes here: `isdigit`, `isalpha`, `isspace`.
        _ => {
            a.need(0, &[&Ty::Str], "a str")?;
            Ty::Bool
        }
    })
}

/// Searching (`.contains()`, `.count()`, `.index()`) and the dict methods.
fn check_lookup(a: &Args<'_>) -> Result<Ty, ExprError> {
    let (b, pos) = (a.b, a.pos);
    let list = Ty::list(Ty::Any);
    let dict = Ty::Dict(Box::new(Ty::Any));
    Ok(match b {
        Builtin::Contains => {
            a.need(0, &[&Ty::Str, &list, &dict], "a str, list or dict")?;
            member_check(a.arg(0), a.arg(1), pos, b)?;
            Ty::Bool
        }
        Builtin::Count => {
            a.need(0, &[&Ty::Str, &list], "a str or list")?;
            member_check(a.arg(0), a.arg(1), pos, b)?;
            Ty::Int
        }
        Builtin::Index => {
            a.need(0, &[&list], "a list")?;
            member_check(a.arg(0), a.arg(1), pos, b)?;
            Ty::Int
        }
        Builtin::Keys => {
            a.need(0, &[&dict], "a dict")?;
            Ty::list(Ty::Str)
        }
        Builtin::Values => {
            a.need(0, &[&dict], "a dict")?;
            Ty::list(match a.arg(0) {
                Ty::Dict(v) => (**v).clone(),
                _ => Ty::Any,
            })
        }
        Builtin::Items => {
            a.need(0, &[&dict], "a dict")?;
            Ty::list(Ty::list(Ty::Any))
        }
        // The last builtins `check` routes here: `get`.
        _ => {
            a.need(0, &[&dict], "a dict")?;
            a.need(1, &[&Ty::Str], "a str key")?;
            let v = match a.arg(0) {
                Ty::Dict(v) => (**v).clone(),
                _ => Ty::Any,
            };
            match a.tys.get(2) {
                Some(d) => super::types::join(&v, d).unwrap_or(Ty::Any),
                None => v,
            }
        }
    })
}

/// Checks that `item` can be searched for in `container` (a substring in a str, an item in
/// a list, a key in a dict).
pub(crate) fn member_check(
    container: &Ty,
    item: &Ty,
    pos: Pos,
    b: Builtin,
) -> Result<(), ExprError> {
    let ok = match container {
        Ty::Str | Ty::Enum(_) => fits(item, &[&Ty::Str]),
        Ty::Dict(_) | Ty::Object(_) => fits(item, &[&Ty::Str]),
        Ty::List(e) => super::types::comparable(e, item),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        let what = if b == Builtin::Contains {
            "`in`".to_owned()
        } else {
            b.spelled()
        };
        Err(type_err(
            pos,
            format!("{what} cannot look for a {item} in a {container}"),
        ))
    }
}

fn arity(b: Builtin) -> (usize, usize) {
    match b {
        Builtin::Min | Builtin::Max => (1, usize::MAX),
        Builtin::Strip | Builtin::Lstrip | Builtin::Rstrip | Builtin::Split => (1, 2),
        Builtin::Get => (2, 3),
        Builtin::Replace => (3, 3),
        Builtin::Join
        | Builtin::Startswith
        | Builtin::Endswith
        | Builtin::Find
        | Builtin::Contains
        | Builtin::Count
        | Builtin::Index => (2, 2),
        _ => (1, 1),
    }
}

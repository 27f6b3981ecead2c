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
    let arg = |i: usize| args.get(i).unwrap_or(&Ty::Any);
    let need = |i: usize, want: &[&Ty], what: &str| -> Result<(), ExprError> {
        let t = arg(i);
        if fits(t, want) {
            Ok(())
        } else {
            let which = if b.is_method() && i == 0 {
                "its receiver".to_owned()
            } else {
                format!("argument {}", i + 1 - shift)
            };
            Err(type_err(
                pos,
                format!("{} needs {what} as {which}, not a {t}", b.spelled()),
            ))
        }
    };
    let list = Ty::list(Ty::Any);
    let dict = Ty::Dict(Box::new(Ty::Any));
    Ok(match b {
        Builtin::Len => {
            need(0, &[&Ty::Str, &list, &dict], "a str, list or dict")?;
            Ty::Int
        }
        Builtin::Str => Ty::Str,
        Builtin::Int => {
            need(
                0,
                &[&Ty::Int, &Ty::Float, &Ty::Bool, &Ty::Str],
                "a number, bool or str",
            )?;
            Ty::Int
        }
        Builtin::Float => {
            need(
                0,
                &[&Ty::Int, &Ty::Float, &Ty::Bool, &Ty::Str],
                "a number, bool or str",
            )?;
            Ty::Float
        }
        Builtin::Bool => Ty::Bool,
        Builtin::Abs => {
            need(0, &[&Ty::Int, &Ty::Float], "a number")?;
            arg(0).clone()
        }
        Builtin::Round => {
            need(0, &[&Ty::Int, &Ty::Float], "a number")?;
            Ty::Int
        }
        Builtin::Min | Builtin::Max => {
            if n == 1 {
                need(0, &[&list], "a list (or two or more values)")?;
                let e = elem(arg(0));
                if !matches!(e, Ty::Any | Ty::Int | Ty::Float | Ty::Str | Ty::Bool) {
                    return Err(type_err(
                        pos,
                        format!("{} needs orderable items, not {e}", b.spelled()),
                    ));
                }
                e
            } else {
                let joined = super::types::join_all(args);
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
            need(0, &[&list], "a list of numbers")?;
            match elem(arg(0)) {
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
            need(0, &[&list], "a list")?;
            arg(0).clone()
        }
        Builtin::Any | Builtin::All => {
            need(0, &[&list], "a list of bools")?;
            if !matches!(elem(arg(0)), Ty::Any | Ty::Bool) {
                return Err(type_err(
                    pos,
                    format!("{} needs a list of bools", b.spelled()),
                ));
            }
            Ty::Bool
        }
        Builtin::Lower | Builtin::Upper => {
            need(0, &[&Ty::Str], "a str")?;
            Ty::Str
        }
        Builtin::Strip | Builtin::Lstrip | Builtin::Rstrip => {
            need(0, &[&Ty::Str], "a str")?;
            if n == 2 {
                need(1, &[&Ty::Str, &Ty::Null], "a str of characters")?;
            }
            Ty::Str
        }
        Builtin::Split => {
            need(0, &[&Ty::Str], "a str")?;
            if n == 2 {
                need(1, &[&Ty::Str, &Ty::Null], "a separator str")?;
            }
            Ty::list(Ty::Str)
        }
        Builtin::Splitlines => {
            need(0, &[&Ty::Str], "a str")?;
            Ty::list(Ty::Str)
        }
        Builtin::Join => {
            need(0, &[&Ty::Str], "a separator str")?;
            need(1, &[&list], "a list of str")?;
            if !matches!(elem(arg(1)), Ty::Any | Ty::Str | Ty::Enum(_)) {
                return Err(type_err(
                    pos,
                    format!(
                        "`.join()` needs a list of str, not {}: convert the items with `str()` first",
                        arg(1)
                    ),
                ));
            }
            Ty::Str
        }
        Builtin::Replace => {
            need(0, &[&Ty::Str], "a str")?;
            need(1, &[&Ty::Str], "a str")?;
            need(2, &[&Ty::Str], "a str")?;
            Ty::Str
        }
        Builtin::Startswith | Builtin::Endswith => {
            need(0, &[&Ty::Str], "a str")?;
            need(1, &[&Ty::Str], "a str")?;
            Ty::Bool
        }
        Builtin::Find => {
            need(0, &[&Ty::Str], "a str")?;
            need(1, &[&Ty::Str], "a str")?;
            Ty::Int
        }
        Builtin::Isdigit | Builtin::Isalpha | Builtin::Isspace => {
            need(0, &[&Ty::Str], "a str")?;
            Ty::Bool
        }
        Builtin::Contains => {
            need(0, &[&Ty::Str, &list, &dict], "a str, list or dict")?;
            member_check(arg(0), arg(1), pos, b)?;
            Ty::Bool
        }
        Builtin::Count => {
            need(0, &[&Ty::Str, &list], "a str or list")?;
            member_check(arg(0), arg(1), pos, b)?;
            Ty::Int
        }
        Builtin::Index => {
            need(0, &[&list], "a list")?;
            member_check(arg(0), arg(1), pos, b)?;
            Ty::Int
        }
        Builtin::Keys => {
            need(0, &[&dict], "a dict")?;
            Ty::list(Ty::Str)
        }
        Builtin::Values => {
            need(0, &[&dict], "a dict")?;
            Ty::list(match arg(0) {
                Ty::Dict(v) => (**v).clone(),
                _ => Ty::Any,
            })
        }
        Builtin::Items => {
            need(0, &[&dict], "a dict")?;
            Ty::list(Ty::list(Ty::Any))
        }
        Builtin::Get => {
            need(0, &[&dict], "a dict")?;
            need(1, &[&Ty::Str], "a str key")?;
            let v = match arg(0) {
                Ty::Dict(v) => (**v).clone(),
                _ => Ty::Any,
            };
            match args.get(2) {
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

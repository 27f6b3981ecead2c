//! `spelled!`: an enum whose variants are spelled as text, declared from one table, so that
//! its variant list, `ALL`, `as_str` and `parse` cannot disagree.
//!
//! Two shapes:
//!
//! - **Closed** (`enum E { A => "a", … }`): `as_str(&self) -> &'static str` and
//!   `parse(&str) -> Option<E>`.
//! - **Open** (`enum E { A => "a", … } else { Unknown(String) }`): the extra variant keeps any
//!   other spelling as written, so reading never loses what the author wrote;
//!   `as_str(&self) -> &str` and `parse(&str) -> E`. Written `else lenient { … }`, no `parse`
//!   is generated: the enum reads more spellings than it writes and says how itself.
//!
//! - **Closed, with serde** (`enum E { A => "a", … } serde`): the closed shape, written and
//!   read by serde as its spelling (another text is an `unknown variant` error listing the
//!   spellings), and displayed as it; each variant's doc comment is kept (`doc()`) for
//!   a schema that documents the spellings. Other crates of the workspace declare their enums
//!   spelled as text with it (`ais_core::spelled!`): the runtime's run status, fault kinds,
//!   effect kinds.
//!
//! All get `ALL`, the spelled variants in declaration order.

/// Declares an enum spelled as text: its variants, `ALL`, `as_str` and `parse` from one
/// table, so they cannot disagree. Closed (`enum E { A => "a", … }`), closed and spelled by
/// serde too (`… serde`, which needs `serde` among the caller's dependencies), or open with a
/// catch-all variant (`… else { Unknown(String) }`).
///
/// ```
/// ais_core::spelled! {
///     /// A light.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Light {
///         /// Stop.
///         Red => "red",
///         /// Go: the way
///         /// is clear.
///         Green => "green",
///     }
///     serde
/// }
/// assert_eq!(Light::Red.as_str(), "red");
/// assert_eq!(Light::Green.doc(), "Go: the way\nis clear.");
/// assert_eq!(Light::parse("green"), Some(Light::Green));
/// assert_eq!(serde_json::to_string(&Light::Green).unwrap(), "\"green\"");
/// assert!(serde_json::from_str::<Light>("\"blue\"").is_err());
/// ```
#[macro_export]
macro_rules! spelled {
    // Open, with `parse` generated.
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vm:meta])* $v:ident => $text:literal, )*
        } else {
            $(#[$um:meta])* $unknown:ident(String) $(,)?
        }
    ) => {
        $crate::spelled!(@open $(#[$m])* $vis enum $name { $( $(#[$vm])* $v => $text, )* }
            $(#[$um])* $unknown);

        impl $name {
            /// Reads the spelling; any other text is kept as written in the catch-all variant.
            pub fn parse(text: &str) -> $name {
                match text {
                    $( $text => $name::$v, )*
                    other => $name::$unknown(other.to_owned()),
                }
            }
        }

        $crate::spelled!(@serialize $name);

        /// Read from its spelling (any other text kept in the catch-all variant, as `parse`).
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Ok($name::parse(&text))
            }
        }
    };
    // Written by serde as its `as_str` (also for a type with a hand-written `as_str`).
    (@serialize $name:ident) => {
        /// Written as its spelling.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
    // Open, reading its own (more lenient) spellings.
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vm:meta])* $v:ident => $text:literal, )*
        } else lenient {
            $(#[$um:meta])* $unknown:ident(String) $(,)?
        }
    ) => {
        $crate::spelled!(@open $(#[$m])* $vis enum $name { $( $(#[$vm])* $v => $text, )* }
            $(#[$um])* $unknown);
    };
    (@open
        $(#[$m:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vm:meta])* $v:ident => $text:literal, )*
        }
        $(#[$um:meta])* $unknown:ident
    ) => {
        $(#[$m])*
        $vis enum $name {
            $( $(#[$vm])* $v, )*
            $(#[$um])*
            $unknown(String),
        }

        impl $name {
            /// Every spelled variant, in declaration order.
            pub const ALL: [$name; [$($text),*].len()] = [$($name::$v),*];

            /// The spelling, as written in AG-IR (the catch-all as it was written).
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$v => $text, )*
                    $name::$unknown(s) => s,
                }
            }
        }
    };
    // Closed, written and read by serde as its spelling; its variants carry doc comments only.
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident {
            $( $(#[doc = $doc:literal])* $v:ident => $text:literal, )*
        }
        serde
    ) => {
        $crate::spelled!($(#[$m])* $vis enum $name { $( $(#[doc = $doc])* $v => $text, )* });

        impl $name {
            /// Every spelling, in declaration order.
            pub const SPELLINGS: &'static [&'static str] = &[$($text),*];

            /// This variant's doc comment as one text (what a generated schema or reference
            /// describes the spelling with): its lines joined by newlines, each without the
            /// space after its `///`.
            pub fn doc(&self) -> String {
                let lines: &[&str] = match self {
                    $( $name::$v => &[$($doc),*], )*
                };
                lines
                    .iter()
                    .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
                    .collect::<Vec<_>>()
                    .join("\n")
                    .trim()
                    .to_owned()
            }
        }

        $crate::spelled!(@serialize $name);

        /// Read from its spelling; any other text is an error naming the spellings.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                $name::parse(&text).ok_or_else(|| {
                    <D::Error as serde::de::Error>::unknown_variant(&text, $name::SPELLINGS)
                })
            }
        }

        /// Displayed as its spelling.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    // Closed.
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vm:meta])* $v:ident => $text:literal, )*
        }
    ) => {
        $(#[$m])*
        $vis enum $name {
            $( $(#[$vm])* $v, )*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$($text),*].len()] = [$($name::$v),*];

            /// The spelling.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $( $name::$v => $text, )*
                }
            }

            /// The variant for its spelling; `None` for any other text.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $( $text => Some($name::$v), )*
                    _ => None,
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::diag::CheckId;
    use crate::expr::Category;
    use crate::program::{
        ContentKind, Isolation, Modality, Opcode, Owner, Role, Surface, ToolSurface,
    };
    use crate::source::FieldKey;

    /// Every spelling reads back to its variant (no two variants share a spelling), and any
    /// other text is kept as written.
    #[test]
    fn every_spelling_reads_back_and_unknown_text_is_kept() {
        macro_rules! open {
            ($($e:ident :: $unknown:ident),*) => {$(
                for v in $e::ALL {
                    assert_eq!($e::parse(v.as_str()), v, "{}", stringify!($e));
                }
                assert_eq!($e::parse("no such"), $e::$unknown("no such".into()));
                assert_eq!($e::$unknown("as written".into()).as_str(), "as written");
            )*};
        }
        open!(
            Role::Unknown,
            Opcode::Unknown,
            Owner::Unknown,
            Surface::Unknown
        );
        open!(Isolation::Unknown, Modality::Unknown, FieldKey::Other);
        macro_rules! closed {
            ($($e:ident),*) => {$(
                for v in $e::ALL {
                    assert_eq!($e::parse(v.as_str()), Some(v), "{}", stringify!($e));
                }
                assert_eq!($e::parse("no such"), None);
            )*};
        }
        closed!(CheckId, Category, ContentKind);
        assert_eq!(Opcode::ALL.len(), 12);
        assert_eq!(CheckId::ALL.len(), 36);
        // The lenient surface writes its canonical spellings and reads them back.
        for v in ToolSurface::ALL {
            assert_eq!(ToolSurface::parse(v.as_str()), v);
        }
    }
}

//! Native Rust tools: typed `fn`s and closures adapted to the [`Tool`] seam (the conversions are documented on [`ToolRegistry::register_fn`]).

use super::artifact::{ArtifactRoot, RelativeDest};
use super::{Tool, ToolArgs, ToolContext, ToolError, ToolErrorKind, ToolFuture, ToolRegistry};
use ais_core::Value;
use indexmap::IndexMap;
use std::borrow::Cow;
use std::fmt::Display;
use std::future::Future;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;

/// Why a value does not convert: the kind expected and the kind found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueMismatch {
    /// What the parameter takes (`int`, `list of str`, …).
    pub expected: Cow<'static, str>,
    /// What was given: the value's kind, with detail where it helps.
    pub found: Cow<'static, str>,
}

impl ValueMismatch {
    /// A mismatch: `expected` was wanted, `value` was given.
    pub fn new(expected: impl Into<Cow<'static, str>>, value: &Value) -> Self {
        ValueMismatch {
            expected: expected.into(),
            found: Cow::Borrowed(value.kind_name()),
        }
    }
}

/// A type a carry value converts into.
pub trait FromValue: Sized {
    /// Converts `value` (never `null`: an unbound argument goes to [`unbound`](Self::unbound)).
    fn from_value(value: Value) -> Result<Self, ValueMismatch>;

    /// The value of an unbound (missing or `null`) argument; `None` when the type needs one.
    fn unbound() -> Option<Self> {
        None
    }

    /// What this type takes, for messages.
    fn expected() -> Cow<'static, str>;
}

/// A type a tool argument converts into, given the call's context. Every [`FromValue`] type is
/// one; so is [`ArtifactPath`].
pub trait FromArg: Sized {
    /// Converts the argument bound to a parameter (`None` when it is missing). The error's
    /// message need not name the tool or the parameter; the adapter adds both.
    fn from_arg(value: Option<Value>, ctx: &ToolContext) -> Result<Self, ToolError>;
}

impl<T: FromValue> FromArg for T {
    fn from_arg(value: Option<Value>, _ctx: &ToolContext) -> Result<Self, ToolError> {
        match value {
            None | Some(Value::Null) => T::unbound().ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::BadArguments,
                    format!("is unbound (null) but needs {}", T::expected()),
                )
            }),
            Some(value) => T::from_value(value).map_err(|m| {
                ToolError::new(
                    ToolErrorKind::BadArguments,
                    format!("needs {}, got {}", m.expected, m.found),
                )
            }),
        }
    }
}

impl FromValue for String {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        match value {
            Value::Str(s) => Ok(s),
            other => Err(ValueMismatch::new("str", &other)),
        }
    }
    fn expected() -> Cow<'static, str> {
        "str".into()
    }
}

impl FromValue for bool {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(ValueMismatch::new("bool", &other)),
        }
    }
    fn expected() -> Cow<'static, str> {
        "bool".into()
    }
}

/// An integral value as `i64`: an int, or a float with no fractional part in range.
fn integral(value: &Value) -> Option<i64> {
    match *value {
        Value::Int(i) => Some(i),
        Value::Float(f) if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 => {
            Some(f as i64)
        }
        _ => None,
    }
}

macro_rules! int_from_value {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(value: Value) -> Result<Self, ValueMismatch> {
                match integral(&value) {
                    Some(i) => <$t>::try_from(i).map_err(|_| ValueMismatch {
                        expected: Self::expected(),
                        found: format!("{i}, out of range").into(),
                    }),
                    None => Err(ValueMismatch::new(Self::expected(), &value)),
                }
            }
            fn expected() -> Cow<'static, str> {
                concat!("int (", stringify!($t), ")").into()
            }
        }
    )*};
}
int_from_value!(i64, i32, u32, u64, usize);

impl FromValue for f64 {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        match value {
            Value::Float(f) => Ok(f),
            Value::Int(i) => Ok(i as f64),
            other => Err(ValueMismatch::new("float", &other)),
        }
    }
    fn expected() -> Cow<'static, str> {
        "float".into()
    }
}

impl FromValue for f32 {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        f64::from_value(value).map(|f| f as f32)
    }
    fn expected() -> Cow<'static, str> {
        "float".into()
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        match value {
            Value::List(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::Null => T::unbound().ok_or_else(|| ValueMismatch {
                        expected: Self::expected(),
                        found: format!("null at item {i}").into(),
                    }),
                    item => T::from_value(item).map_err(|m| ValueMismatch {
                        expected: Self::expected(),
                        found: format!("{} at item {i}", m.found).into(),
                    }),
                })
                .collect(),
            other => Err(ValueMismatch::new(Self::expected(), &other)),
        }
    }
    fn expected() -> Cow<'static, str> {
        format!("list of {}", T::expected()).into()
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        T::from_value(value).map(Some)
    }
    fn unbound() -> Option<Self> {
        Some(None)
    }
    fn expected() -> Cow<'static, str> {
        format!("{} or null", T::expected()).into()
    }
}

impl<T: FromValue> FromValue for IndexMap<String, T> {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        match value {
            Value::Map(entries) => entries
                .into_iter()
                .map(|(k, v)| {
                    let converted = match v {
                        Value::Null => T::unbound().ok_or_else(|| "null".into()),
                        v => T::from_value(v).map_err(|m| m.found),
                    };
                    converted
                        .map(|v| (k.clone(), v))
                        .map_err(|found| ValueMismatch {
                            expected: Self::expected(),
                            found: format!("{found} at key `{k}`").into(),
                        })
                })
                .collect(),
            other => Err(ValueMismatch::new(Self::expected(), &other)),
        }
    }
    fn expected() -> Cow<'static, str> {
        format!("dict of {}", T::expected()).into()
    }
}

impl FromValue for Value {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        Ok(value)
    }
    fn unbound() -> Option<Self> {
        Some(Value::Null)
    }
    fn expected() -> Cow<'static, str> {
        "any value".into()
    }
}

impl FromValue for serde_json::Value {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        Ok(value.to_json())
    }
    fn unbound() -> Option<Self> {
        Some(serde_json::Value::Null)
    }
    fn expected() -> Cow<'static, str> {
        "any value".into()
    }
}

/// A value carried as JSON: any `serde::Deserialize` type as an argument, any
/// `serde::Serialize` type as a result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Json<T>(pub T);

impl<T: serde::de::DeserializeOwned> FromValue for Json<T> {
    fn from_value(value: Value) -> Result<Self, ValueMismatch> {
        let kind = value.kind_name();
        serde_json::from_value(value.to_json())
            .map(Json)
            .map_err(|e| ValueMismatch {
                expected: Self::expected(),
                found: format!("a {kind} that does not fit: {e}").into(),
            })
    }
    fn expected() -> Cow<'static, str> {
        format!("a value of type {}", std::any::type_name::<T>()).into()
    }
}

/// A destination path argument, already checked under the output root (or the sibling's
/// scratch directory): never absolute, never `..`. Write it with [`write`](Self::write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactPath {
    root: ArtifactRoot,
    dest: RelativeDest,
}

impl ArtifactPath {
    /// A destination `raw` under `root`, after the lexical checks of [`RelativeDest::parse`].
    pub fn new(root: ArtifactRoot, raw: &str) -> Result<Self, ToolError> {
        Ok(ArtifactPath {
            root,
            dest: RelativeDest::parse(raw)?,
        })
    }

    /// The destination relative to the root (`notes/plan.md`).
    pub fn relative(&self) -> String {
        self.dest.as_path_string()
    }

    /// The destination's full path.
    pub fn path(&self) -> PathBuf {
        self.root.dir().join(self.relative())
    }

    /// Writes `content` atomically, never through a symlink (see [`ArtifactRoot`]); returns the
    /// relative path written. An escape through a symlink is an error of kind
    /// `PermissionDenied`.
    pub fn write(&self, content: impl AsRef<[u8]>) -> std::io::Result<String> {
        self.root
            .write_dest(&self.dest, content.as_ref())
            .map(|()| self.relative())
            .map_err(|e| {
                let kind = match e.kind {
                    ToolErrorKind::PathEscape => std::io::ErrorKind::PermissionDenied,
                    _ => std::io::ErrorKind::Other,
                };
                std::io::Error::new(kind, e.message)
            })
    }
}

impl FromArg for ArtifactPath {
    fn from_arg(value: Option<Value>, ctx: &ToolContext) -> Result<Self, ToolError> {
        match value {
            Some(Value::Str(raw)) => ArtifactPath::new(ArtifactRoot::for_writes(ctx), &raw),
            None | Some(Value::Null) => Err(ToolError::new(
                ToolErrorKind::BadArguments,
                "is unbound (null) but needs a destination path",
            )),
            Some(other) => Err(ToolError::new(
                ToolErrorKind::BadArguments,
                format!("needs a destination path (str), got {}", other.kind_name()),
            )),
        }
    }
}

/// A value a native tool returns.
pub trait IntoValue {
    /// Converts into a carry value (an error for a value no carry can hold, like NaN).
    fn into_value(self) -> Result<Value, ToolError>;
}

/// What a native tool's function returns: a value, or a `Result` whose `Err` is a routable
/// failure.
pub trait IntoToolResult {
    /// Converts into the tool call's result.
    fn into_tool_result(self) -> Result<Value, ToolError>;
}

macro_rules! into_value_via_from {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            fn into_value(self) -> Result<Value, ToolError> {
                Ok(Value::from(self))
            }
        }
    )*};
}
into_value_via_from!(String, &'static str, bool, i64);

macro_rules! into_value_int {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            fn into_value(self) -> Result<Value, ToolError> {
                i64::try_from(self).map(Value::Int).map_err(|_| ToolError::new(
                    ToolErrorKind::Failed,
                    format!("returned {self}, which does not fit a 64-bit int"),
                ))
            }
        }
    )*};
}
into_value_int!(i32, u32, u64, usize);

impl IntoValue for f64 {
    fn into_value(self) -> Result<Value, ToolError> {
        if self.is_finite() {
            Ok(Value::Float(self))
        } else {
            Err(ToolError::new(
                ToolErrorKind::Failed,
                format!("returned {self}, which no carry can hold"),
            ))
        }
    }
}

impl IntoValue for f32 {
    fn into_value(self) -> Result<Value, ToolError> {
        f64::from(self).into_value()
    }
}

impl IntoValue for () {
    fn into_value(self) -> Result<Value, ToolError> {
        Ok(Value::Null)
    }
}

impl IntoValue for Value {
    fn into_value(self) -> Result<Value, ToolError> {
        Ok(self)
    }
}

impl IntoValue for serde_json::Value {
    fn into_value(self) -> Result<Value, ToolError> {
        Ok(Value::from_json(&self))
    }
}

impl<T: serde::Serialize> IntoValue for Json<T> {
    fn into_value(self) -> Result<Value, ToolError> {
        serde_json::to_value(&self.0)
            .map(|json| Value::from_json(&json))
            .map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Failed,
                    format!("returned a value that does not serialize: {e}"),
                )
            })
    }
}

impl<T: IntoValue> IntoValue for Vec<T> {
    fn into_value(self) -> Result<Value, ToolError> {
        self.into_iter()
            .map(IntoValue::into_value)
            .collect::<Result<_, _>>()
            .map(Value::List)
    }
}

impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> Result<Value, ToolError> {
        self.map_or(Ok(Value::Null), IntoValue::into_value)
    }
}

impl<V: IntoValue> IntoValue for IndexMap<String, V> {
    fn into_value(self) -> Result<Value, ToolError> {
        self.into_iter()
            .map(|(k, v)| v.into_value().map(|v| (k, v)))
            .collect::<Result<_, _>>()
            .map(Value::Map)
    }
}

macro_rules! into_tool_result_plain {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> Result<Value, ToolError> {
                self.into_value()
            }
        }
    )*};
}
into_tool_result_plain!(
    String,
    &'static str,
    bool,
    i64,
    i32,
    u32,
    u64,
    usize,
    f64,
    f32,
    (),
    Value,
    serde_json::Value
);

impl<T: serde::Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        self.into_value()
    }
}

impl<T: IntoValue> IntoToolResult for Vec<T> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        self.into_value()
    }
}

impl<T: IntoValue> IntoToolResult for Option<T> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        self.into_value()
    }
}

impl<V: IntoValue> IntoToolResult for IndexMap<String, V> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        self.into_value()
    }
}

impl<T: IntoValue, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<Value, ToolError> {
        match self {
            Ok(value) => value.into_value(),
            Err(e) => Err(ToolError::new(ToolErrorKind::Failed, e.to_string())),
        }
    }
}

/// Takes the argument of parameter `i`, `name`: positionally when the call's `i`-th argument
/// has that name, else by name. Leaves `null` in its place (no allocation).
fn take(params: &mut IndexMap<String, Value>, i: usize, name: &str) -> Option<Value> {
    if let Some((key, value)) = params.get_index_mut(i)
        && key == name
    {
        return Some(std::mem::take(value));
    }
    params.get_mut(name).map(std::mem::take)
}

/// Converts parameter `i` of `tool`, naming both in an error.
fn arg<A: FromArg>(
    tool: &str,
    names: &[Box<str>],
    params: &mut IndexMap<String, Value>,
    i: usize,
    ctx: &ToolContext,
) -> Result<A, ToolError> {
    let name = &names[i];
    A::from_arg(take(params, i, name), ctx).map_err(|mut e| {
        e.message = format!("tool `{tool}`: parameter `{name}` {}", e.message);
        e
    })
}

/// Names a failure of the tool itself after the tool.
fn named(tool: &str, result: Result<Value, ToolError>) -> Result<Value, ToolError> {
    result.map_err(|mut e| {
        e.message = format!("tool `{tool}` failed: {}", e.message);
        e
    })
}

/// A synchronous function usable as a native tool, with argument types `Args` (a tuple).
pub trait SyncToolFn<Args>: Send + Sync + 'static {
    /// How many parameters it takes.
    const ARITY: usize;
    /// Converts the arguments and calls it.
    fn invoke(
        &self,
        tool: &str,
        names: &[Box<str>],
        args: ToolArgs,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError>;
}

/// An async function usable as a native tool, with argument types `Args` (a tuple).
pub trait AsyncToolFn<Args>: Send + Sync + 'static {
    /// How many parameters it takes.
    const ARITY: usize;
    /// What its future yields.
    type Output: IntoToolResult;
    /// Its future.
    type Future: Future<Output = Self::Output> + Send + 'static;
    /// Converts the arguments and starts the call.
    fn invoke(
        &self,
        tool: &str,
        names: &[Box<str>],
        args: ToolArgs,
        ctx: &ToolContext,
    ) -> Result<Self::Future, ToolError>;
}

macro_rules! fn_impls {
    ($n:expr; $($a:ident : $t:ident),*) => {
        impl<F, R, $($t: FromArg),*> SyncToolFn<($($t,)*)> for F
        where
            F: Fn($($t),*) -> R + Send + Sync + 'static,
            R: IntoToolResult,
        {
            const ARITY: usize = $n;
            #[allow(unused_variables, unused_mut, unused_assignments)]
            fn invoke(
                &self,
                tool: &str,
                names: &[Box<str>],
                args: ToolArgs,
                ctx: &ToolContext,
            ) -> Result<Value, ToolError> {
                let mut params = args.params;
                let mut i = 0usize;
                $(
                    let $a: $t = arg(tool, names, &mut params, i, ctx)?;
                    i += 1;
                )*
                named(tool, (self)($($a),*).into_tool_result())
            }
        }

        impl<F, Fut, R, $($t: FromArg),*> AsyncToolFn<($($t,)*)> for F
        where
            F: Fn($($t),*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoToolResult,
        {
            const ARITY: usize = $n;
            type Output = R;
            type Future = Fut;
            #[allow(unused_variables, unused_mut, unused_assignments)]
            fn invoke(
                &self,
                tool: &str,
                names: &[Box<str>],
                args: ToolArgs,
                ctx: &ToolContext,
            ) -> Result<Fut, ToolError> {
                let mut params = args.params;
                let mut i = 0usize;
                $(
                    let $a: $t = arg(tool, names, &mut params, i, ctx)?;
                    i += 1;
                )*
                Ok((self)($($a),*))
            }
        }
    };
}

fn_impls!(0;);
fn_impls!(1; a1: A1);
fn_impls!(2; a1: A1, a2: A2);
fn_impls!(3; a1: A1, a2: A2, a3: A3);
fn_impls!(4; a1: A1, a2: A2, a3: A3, a4: A4);
fn_impls!(5; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5);
fn_impls!(6; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6);
fn_impls!(7; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7);
fn_impls!(8; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8);
fn_impls!(9; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9);
fn_impls!(10; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10);
fn_impls!(11; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10,
    a11: A11);
fn_impls!(12; a1: A1, a2: A2, a3: A3, a4: A4, a5: A5, a6: A6, a7: A7, a8: A8, a9: A9, a10: A10,
    a11: A11, a12: A12);

/// A native tool: a function with its name and parameter names.
pub(crate) struct FnTool<F, Args> {
    name: Box<str>,
    params: Box<[Box<str>]>,
    f: F,
    _args: PhantomData<fn() -> Args>,
}

impl<F, Args> FnTool<F, Args> {
    fn new(name: &str, params: &[&str], f: F, arity: usize) -> Self {
        assert_eq!(
            params.len(),
            arity,
            "native tool `{name}`: {} parameter names given for a function of {arity} arguments",
            params.len()
        );
        FnTool {
            name: name.into(),
            params: params.iter().map(|p| Box::<str>::from(*p)).collect(),
            f,
            _args: PhantomData,
        }
    }
}

/// A synchronous native tool.
pub(crate) struct SyncFnTool<F, Args>(FnTool<F, Args>);

/// An async native tool.
pub(crate) struct AsyncFnTool<F, Args>(FnTool<F, Args>);

impl<F: SyncToolFn<Args>, Args: 'static> Tool for SyncFnTool<F, Args> {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let t = &self.0;
        Box::pin(std::future::ready(
            t.f.invoke(&t.name, &t.params, args, ctx),
        ))
    }

    fn call_now(
        &self,
        args: ToolArgs,
        ctx: &ToolContext,
    ) -> Result<Result<Value, ToolError>, ToolArgs> {
        let t = &self.0;
        Ok(t.f.invoke(&t.name, &t.params, args, ctx))
    }
}

impl<F: AsyncToolFn<Args>, Args: 'static> Tool for AsyncFnTool<F, Args> {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let t = &self.0;
        match t.f.invoke(&t.name, &t.params, args, ctx) {
            Ok(future) => Box::pin(async move { named(&t.name, future.await.into_tool_result()) }),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

impl ToolRegistry {
    /// Registers the synchronous function `f` as the native tool `name`, whose parameters are
    /// `params` in signature order (see [`FromArg`] and [`IntoToolResult`] for the conversions).
    ///
    /// # Panics
    ///
    /// When `params` does not name exactly as many parameters as `f` takes (a programming
    /// error, caught at registration).
    ///
    /// # Native tools
    ///
    /// Native Rust tools: typed `fn`s and closures adapted to the [`Tool`] seam.
    ///
    /// [`ToolRegistry::register_fn`] and [`ToolRegistry::register_async_fn`] take a tool's name, its
    /// parameter names in signature order, and a function of up to 12 typed arguments:
    ///
    /// ```
    /// use ais_rt::{ToolArgs, ToolContext, ToolRegistry};
    /// use ais_core::Value;
    ///
    /// let mut tools = ToolRegistry::new();
    /// tools.register_fn("assemble", &["header", "tasks"], |header: String, tasks: Vec<String>| {
    ///     format!("{header}\n\n{}", tasks.join("\n"))
    /// });
    /// tools.register_fn("ratio", &["a", "b"], |a: i64, b: i64| -> Result<f64, String> {
    ///     if b == 0 { Err("division by zero".into()) } else { Ok(a as f64 / b as f64) }
    /// });
    ///
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let ctx = ToolContext::new(std::env::temp_dir());
    /// let mut args = ToolArgs::default();
    /// args.params.insert("a".into(), Value::Int(3));
    /// args.params.insert("b".into(), Value::Int(0));
    /// let err = rt.block_on(tools.get("ratio").unwrap().call(args, &ctx)).unwrap_err();
    /// assert_eq!(err.message, "tool `ratio` failed: division by zero");
    /// ```
    ///
    /// - **Arguments** are taken by parameter name (positionally first, so a call whose arguments
    ///   come in signature order costs one string comparison per argument, no hashing), converted
    ///   by [`FromArg`]: every [`FromValue`] type — `String`, the integer types, `f64`/`f32`,
    ///   `bool`, `Vec<T>`, `Option<T>`, `IndexMap<String, T>`, [`ais_core::Value`],
    ///   `serde_json::Value`, and any `serde::Deserialize` type through [`Json`] — plus
    ///   [`ArtifactPath`], a destination already
    ///   checked under the output root. (For `&str`, take a `String` and borrow it.) A missing or
    ///   `null` argument is unbound: an `Option` gets `None`, a `Value` gets `null`, anything else is
    ///   a [`ToolErrorKind::BadArguments`] error naming the tool, the parameter and the value's
    ///   kind; so is a value of the wrong kind.
    /// - **Results** go through [`IntoToolResult`]: every type above (as a value), `()`, `&'static
    ///   str`, and `Result<T, E: Display>`, whose `Err` becomes a routable
    ///   [`ToolErrorKind::Failed`] error with the error's text.
    /// - **Cost.** A sync call allocates nothing beyond its arguments' own values and the one boxed
    ///   future the [`Tool`] seam returns — and not even that through [`Tool::call_now`], which a
    ///   sync tool answers in place; an async call boxes its future once.
    pub fn register_fn<F, Args>(&mut self, name: &str, params: &[&str], f: F) -> &mut Self
    where
        F: SyncToolFn<Args>,
        Args: 'static,
    {
        let tool = SyncFnTool(FnTool::new(name, params, f, F::ARITY));
        self.register(name, Arc::new(tool))
    }

    /// Registers the async function `f` (a closure returning a future) as the native tool
    /// `name`, whose parameters are `params` in signature order.
    ///
    /// # Panics
    ///
    /// When `params` does not name exactly as many parameters as `f` takes.
    pub fn register_async_fn<F, Args>(&mut self, name: &str, params: &[&str], f: F) -> &mut Self
    where
        F: AsyncToolFn<Args>,
        Args: 'static,
    {
        let tool = AsyncFnTool(FnTool::new(name, params, f, F::ARITY));
        self.register(name, Arc::new(tool))
    }
}

/// A native tool held to its declared result type ([`ToolRegistry::held_to_signature`]).
pub(crate) struct Typed {
    pub inner: Arc<dyn Tool>,
    pub name: String,
    pub ty: ais_core::Type,
    /// The program's declared types (a program with only its `types` section).
    pub types: Arc<ais_core::Program>,
}

impl Typed {
    fn check(&self, v: Value) -> Result<Value, ToolError> {
        match crate::journal::fits(&self.types, &self.ty, &v) {
            Ok(()) => Ok(v),
            Err(seen) => Err(ToolError::new(
                ToolErrorKind::BadResult,
                format!(
                    "tool `{}` returned {seen}: its signature declares `-> {}`; a native tool's result is not converted, so the tool must return that type",
                    self.name, self.ty
                ),
            )),
        }
    }
}

impl Tool for Typed {
    fn call<'a>(&'a self, args: ToolArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { self.inner.call(args, ctx).await.and_then(|v| self.check(v)) })
    }

    fn call_now(
        &self,
        args: ToolArgs,
        ctx: &ToolContext,
    ) -> Result<Result<Value, ToolError>, ToolArgs> {
        self.inner
            .call_now(args, ctx)
            .map(|r| r.and_then(|v| self.check(v)))
    }
}

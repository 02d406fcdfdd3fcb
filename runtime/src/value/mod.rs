//! chatparse's JSON value: [`Value`], [`Map`] and [`Number`].
//!
//! Parsed messages must be the reference's Python values exactly: integers of any size (Python's
//! `int` is unbounded, so a 30-digit integer in tool arguments must come back digit for digit) and
//! objects in `dict` order (schema order, then input order). `serde_json::Value` does that only
//! with its `arbitrary_precision` and `preserve_order` features, and Cargo turns features on for
//! every crate in a build: a library that enabled them would change how the embedding
//! application's own `serde` code behaves (`#[serde(untagged)]` enums and `#[serde(flatten)]`
//! stop reading numbers). So chatparse has its own value type, with an API that mirrors
//! `serde_json`'s, and leaves `serde_json`'s features alone.
//!
//! - [`Value`], [`Map`] (insertion-ordered) and [`Number`] (ints of any size, floats);
//! - [`json!`](crate::json) builds values like `serde_json::json!`, keeping key order;
//! - [`from_str`] parses JSON text as Python's `json.loads` does; `to_string()` ([`Display`]) and
//!   [`to_string_pretty`] print it as `serde_json::to_string`/`to_string_pretty` would;
//! - `Value` is `Serialize`/`Deserialize`, and converts to and from `serde_json::Value`.
//!
//! Nesting costs no stack: cloning, comparing, printing and dropping objects are iterative, and
//! `serde` serialization recurses at most [`SERDE_DEPTH`] levels (deeper containers go out as one
//! `RawValue`), so the 994 levels [`crate::py::json::loads`] accepts are safe on small threads.
//! Dropping nested *arrays* is Rust's own `Vec` drop, one short frame chain per level (see the
//! README's note on stacks).
//!
//! [`Display`]: std::fmt::Display
//!
//! ```
//! use chatparse_runtime::{json, value::Value};
//! let v = json!({"name": "f", "arguments": {"z": 1, "a": 123456789012345678901234567890u128}});
//! assert_eq!(v["arguments"]["z"], 1);
//! assert_eq!(v.to_string(), r#"{"name":"f","arguments":{"z":1,"a":123456789012345678901234567890}}"#);
//! assert_eq!(chatparse_runtime::value::from_str(&v.to_string()).unwrap(), v);
//! ```

mod json_object;
mod map;
mod number;
mod ser;
mod to_value;

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

pub use json_object::JsonObject;
pub use map::{
    Entry, IntoIter, Iter, IterMut, Keys, Map, OccupiedEntry, VacantEntry, Values, ValuesMut,
};
pub use number::Number;
pub(crate) use ser::write_str as write_json_str;
pub use ser::{to_string_pretty, to_value, SERDE_DEPTH};

pub use crate::json;
pub use crate::py::json::JsonError;

/// A JSON value, as Python's `json` module gives it (see the [module docs](self)).
#[derive(Default)]
pub enum Value {
    /// `null` (Python `None`).
    #[default]
    Null,
    /// `true`/`false`.
    Bool(bool),
    /// An int of any size or a finite float.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, keys in insertion order.
    Object(Map),
}

/// Parses JSON text as CPython's `json.loads` does (see [`crate::py::json::loads`]): exact
/// integers, floats as the nearest `f64`, duplicate keys keep the first position and the last
/// value, nesting up to [`crate::py::json::MAX_DEPTH`].
///
/// ```
/// let v = chatparse_runtime::value::from_str(r#"{"b": 1, "a": [2.5, null]}"#).unwrap();
/// assert_eq!(v.to_string(), r#"{"b":1,"a":[2.5,null]}"#);
/// assert!(chatparse_runtime::value::from_str("{").is_err());
/// ```
pub fn from_str(text: &str) -> Result<Value, JsonError> {
    crate::py::json::loads(text)
}

static NULL: Value = Value::Null;

impl Value {
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// Whether this is a boolean.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }
    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }
    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }
    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }
    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
    /// Whether this is an integer that fits in `i64`.
    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }
    /// Whether this is an integer that fits in `u64`.
    pub fn is_u64(&self) -> bool {
        self.as_u64().is_some()
    }
    /// Whether this is a float.
    pub fn is_f64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_f64())
    }
    /// `Some(())` for `null`.
    pub fn as_null(&self) -> Option<()> {
        self.is_null().then_some(())
    }
    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    /// The integer as `i64`, if this is one that fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }
    /// The integer as `u64`, if this is one that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }
    /// The number as `f64` (see [`Number::as_f64`]).
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The array, mutably, if this is one.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// The object, mutably, if this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// An object's member or an array's element; `None` when absent or of the wrong kind.
    ///
    /// ```
    /// let v = chatparse_runtime::json!({"a": [1, 2]});
    /// assert_eq!(v.get("a").and_then(|a| a.get(1)), Some(&chatparse_runtime::json!(2)));
    /// assert!(v.get("b").is_none());
    /// ```
    pub fn get<I: ValueIndex>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }
    /// [`Value::get`], mutably.
    pub fn get_mut<I: ValueIndex>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }
    /// The value at a JSON pointer (`/a/0/b`, RFC 6901); `""` is the value itself.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut target = self;
        for token in rest.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            target = match target {
                Value::Object(m) => m.get(token.as_str())?,
                Value::Array(a) => {
                    if token.starts_with('+') || (token.len() > 1 && token.starts_with('0')) {
                        return None;
                    }
                    a.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(target)
    }
    /// Takes the value out, leaving `null`.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    /// Whether this is a non-empty array or object.
    fn has_children(&self) -> bool {
        match self {
            Value::Array(a) => !a.is_empty(),
            Value::Object(m) => !m.is_empty(),
            _ => false,
        }
    }

    /// Whether this is a container holding a non-empty container.
    fn has_grandchildren(&self) -> bool {
        match self {
            Value::Array(a) => a.iter().any(Value::has_children),
            Value::Object(m) => m.values().any(Value::has_children),
            _ => false,
        }
    }

    /// This value with its containers emptied (children are filled in by `clone`). An object
    /// is left without capacity: `clone_iteratively` replaces it whole ([`Map::map_cloned`],
    /// which builds its entries at their exact size).
    fn shallow_clone(&self) -> Value {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Number(n) => Value::Number(n.clone()),
            Value::String(s) => Value::String(s.clone()),
            Value::Array(a) => Value::Array(Vec::with_capacity(a.len())),
            Value::Object(_) => Value::Object(Map::new()),
        }
    }
}

/// Drops values without recursion (nested containers are emptied onto a heap stack first).
fn drop_iteratively(mut pending: Vec<Value>) {
    while let Some(mut v) = pending.pop() {
        match &mut v {
            Value::Array(a) => pending.append(a),
            Value::Object(m) => m.drain_values_into(&mut pending),
            _ => {}
        }
    }
}

thread_local! {
    /// How many containers deep the `Value::clone` running on this thread has recursed.
    static CLONE_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Containers `Value::clone` copies by recursion before it goes on iteratively. Why recurse at
/// all: the recursive copy clones each object's entries (and a large one's index) as they are,
/// where the iterative one inserts every key again (looking it up): a streamed tool call's copy
/// cost about 9,000 instructions that way when every insert hashed its key. Why a bound: deep values
/// must cost no stack (the iterative copy's reason).
const RECURSIVE_CLONE_DEPTH: usize = 32;

/// Restores the recursion depth when a recursive copy ends (also if it panics).
struct CloneLevel(usize);

impl Drop for CloneLevel {
    fn drop(&mut self) {
        CLONE_DEPTH.with(|d| d.set(self.0));
    }
}

impl Clone for Value {
    /// Recursive for the first 32 containers down, then iterative: deep values
    /// cost no more stack than that.
    fn clone(&self) -> Value {
        if !self.has_children() {
            return self.shallow_clone();
        }
        let depth = CLONE_DEPTH.with(Cell::get);
        if depth >= RECURSIVE_CLONE_DEPTH {
            return self.clone_iteratively();
        }
        CLONE_DEPTH.with(|d| d.set(depth + 1));
        let _level = CloneLevel(depth);
        match self {
            // Each child through `Value::clone`, one level deeper.
            Value::Array(a) => Value::Array(a.clone()),
            Value::Object(m) => Value::Object(m.clone()),
            scalar => scalar.shallow_clone(),
        }
    }
}

impl Value {
    /// A copy without recursion: containers are filled from a heap stack.
    fn clone_iteratively(&self) -> Value {
        let mut root = self.shallow_clone();
        {
            let mut stack: Vec<(&Value, &mut Value)> = vec![(self, &mut root)];
            while let Some((src, dst)) = stack.pop() {
                match (src, dst) {
                    (Value::Array(s), Value::Array(d)) => {
                        d.extend(s.iter().map(Value::shallow_clone));
                        stack.extend(s.iter().zip(d.iter_mut()).filter(|(s, _)| s.has_children()));
                    }
                    (Value::Object(s), Value::Object(d)) => {
                        *d = s.map_cloned(Value::shallow_clone);
                        stack.extend(
                            s.values()
                                .zip(d.values_mut())
                                .filter(|(s, _)| s.has_children()),
                        );
                    }
                    _ => {}
                }
            }
        }
        root
    }
}

/// Iterative deep equality (objects regardless of key order, as `serde_json`).
fn eq_pairs<'a>(mut stack: Vec<(&'a Value, &'a Value)>) -> bool {
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if x == y => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y))
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for (k, v) in x {
                    match y.get(k) {
                        Some(w) => stack.push((v, w)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

fn eq_maps(x: &Map, y: &Map) -> bool {
    if x.len() != y.len() {
        return false;
    }
    let mut stack = Vec::with_capacity(x.len());
    for (k, v) in x {
        match y.get(k) {
            Some(w) => stack.push((v, w)),
            None => return false,
        }
    }
    eq_pairs(stack)
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        eq_pairs(vec![(self, other)])
    }
}

impl Eq for Value {}

impl fmt::Debug for Value {
    /// The compact JSON text (iterative, like [`Display`](fmt::Display)).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&ser::to_json_string(self, f.alternate()))
    }
}

impl fmt::Display for Value {
    /// Compact JSON as `serde_json::to_string` writes it; `{:#}` is `to_string_pretty`.
    ///
    /// ```
    /// let v = chatparse_runtime::json!({"a": [1, 1.5, "\n"]});
    /// assert_eq!(v.to_string(), r#"{"a":[1,1.5,"\n"]}"#);
    /// assert_eq!(format!("{v:#}"), "{\n  \"a\": [\n    1,\n    1.5,\n    \"\\n\"\n  ]\n}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&ser::to_json_string(self, f.alternate()))
    }
}

mod private {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for str {}
    impl Sealed for String {}
    impl<T: ?Sized + Sealed> Sealed for &T {}
}

/// What [`Value::get`] and `value[…]` accept: `usize` for arrays, strings for objects.
pub trait ValueIndex: private::Sealed {
    #[doc(hidden)]
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    #[doc(hidden)]
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    #[doc(hidden)]
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

impl ValueIndex for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array()?.get(*self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut()?.get_mut(*self)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        match v {
            Value::Array(a) => {
                let len = a.len();
                a.get_mut(*self)
                    .unwrap_or_else(|| panic!("index {self} out of bounds: the len is {len}"))
            }
            _ => panic!("cannot access index {self} of a JSON value that is not an array"),
        }
    }
}

impl ValueIndex for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object()?.get(self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut()?.get_mut(self)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        match v {
            Value::Object(m) => m.entry(self.to_owned()).or_insert(Value::Null),
            _ => panic!("cannot access key {self:?} of a JSON value that is not an object"),
        }
    }
}

impl ValueIndex for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl<T: ?Sized + ValueIndex> ValueIndex for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

impl<I: ValueIndex> std::ops::Index<I> for Value {
    type Output = Value;
    /// `null` when absent, as `serde_json`.
    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

impl<I: ValueIndex> std::ops::IndexMut<I> for Value {
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

// ---- conversions into Value ----

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}
impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}
impl From<Cow<'_, str>> for Value {
    fn from(s: Cow<'_, str>) -> Value {
        Value::String(s.into_owned())
    }
}
impl From<char> for Value {
    fn from(c: char) -> Value {
        Value::String(c.to_string())
    }
}
impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(m)
    }
}
impl From<()> for Value {
    fn from((): ()) -> Value {
        Value::Null
    }
}
impl From<f64> for Value {
    /// Infinite and NaN become `null`, as in `serde_json`.
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}
impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Value::from(f64::from(f))
    }
}
macro_rules! from_integer {
    ($($t:ty)*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from(n))
            }
        }
    )*};
}
from_integer!(i8 i16 i32 i64 isize i128 u8 u16 u32 u64 usize u128);

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(v: &[T]) -> Value {
        Value::Array(v.iter().cloned().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}
impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Value {
        Value::Array(iter.into_iter().map(Into::into).collect())
    }
}
impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Value {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Value {
        Value::Object(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// Values by reference, for [`json!`](crate::json): its interpolated expressions are borrowed,
/// as in `serde_json::json!`.
pub trait ToValue {
    /// This as a [`Value`].
    fn to_value(&self) -> Value;
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}
impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::String(self.to_owned())
    }
}
impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::String(self.clone())
    }
}
impl ToValue for Cow<'_, str> {
    fn to_value(&self) -> Value {
        Value::String(self.to_string())
    }
}
impl ToValue for Number {
    fn to_value(&self) -> Value {
        Value::Number(self.clone())
    }
}
impl ToValue for Map {
    fn to_value(&self) -> Value {
        Value::Object(self.clone())
    }
}
impl ToValue for serde_json::Value {
    fn to_value(&self) -> Value {
        Value::from(self)
    }
}
macro_rules! to_value_copy {
    ($($t:ty)*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
to_value_copy!(bool char f32 f64 i8 i16 i32 i64 isize i128 u8 u16 u32 u64 usize u128);
impl<T: ToValue> ToValue for [T] {
    fn to_value(&self) -> Value {
        Value::Array(self.iter().map(ToValue::to_value).collect())
    }
}
impl<T: ToValue, const N: usize> ToValue for [T; N] {
    fn to_value(&self) -> Value {
        self[..].to_value()
    }
}
impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        self[..].to_value()
    }
}
impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}
impl<T: ?Sized + ToValue> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}
impl<T: ?Sized + ToValue> ToValue for &mut T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}
impl<T: ?Sized + ToValue> ToValue for Box<T> {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

// ---- comparisons with plain Rust values ----

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}
impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}
impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}
impl PartialEq<Value> for str {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}
impl PartialEq<Value> for &str {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}
impl PartialEq<Value> for String {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}
impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}
impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}
macro_rules! eq_integer {
    ($($t:ty)*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.as_number().and_then(Number::as_i128) == Some(*other as i128)
            }
        }
        impl PartialEq<Value> for $t {
            fn eq(&self, other: &Value) -> bool {
                other == self
            }
        }
    )*};
}
eq_integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

// ---- serde_json interop ----

impl From<Value> for serde_json::Value {
    /// Order is kept only if `serde_json`'s `preserve_order` is on (otherwise its map sorts);
    /// integers beyond 128 bits become the nearest float. Recursive: one stack frame per level.
    fn from(v: Value) -> serde_json::Value {
        serde_json::Value::from(&v)
    }
}

impl From<&Value> for serde_json::Value {
    /// See `From<Value>`.
    fn from(v: &Value) -> serde_json::Value {
        match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone().into()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(Into::into).collect()),
            Value::Object(m) => serde_json::Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<&serde_json::Value> for Value {
    /// In the map's iteration order. Recursive: one stack frame per level.
    fn from(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.into()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(a) => Value::Array(a.iter().map(Value::from).collect()),
            serde_json::Value::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), Value::from(v))).collect())
            }
        }
    }
}

impl From<serde_json::Value> for Value {
    /// See `From<&serde_json::Value>`.
    fn from(v: serde_json::Value) -> Value {
        Value::from(&v)
    }
}

#[cfg(test)]
mod tests;

//! Python, where the reference's answers depend on it: `json.loads` ([`json`]), `int()`/`float()`
//! and truthy strings ([`coerce`]), unbounded ints and `float.__repr__` ([`num`]), `str`-level
//! behaviour such as `lstrip`, `str()` and `repr()` of values ([`text`]), and the Unicode
//! character classes of CPython 3.11 ([`unicode`], from `chatparse-pyre`, which needs them for
//! `re`). Everything that must agree with CPython asks this module rather than Rust's std.

pub mod coerce;
pub mod json;
pub(crate) mod num;
pub(crate) mod text;

pub use chatparse_pyre::unicode;

use serde_json::Value;

/// Python's type name for a JSON value (`int`/`float` kept apart), as in its error messages.
///
/// ```
/// use chatparse_runtime::py::python_type;
/// assert_eq!(python_type(&serde_json::json!(1)), "int");
/// assert_eq!(python_type(&serde_json::json!(1.0)), "float");
/// assert_eq!(python_type(&serde_json::json!(null)), "NoneType");
/// ```
pub fn python_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if coerce::is_integer(n) => "int",
        Value::Number(_) => "float",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python's `str.strip()` (Python's whitespace, which is not Rust's).
///
/// ```
/// assert_eq!(chatparse_runtime::py::strip("\u{1c} x \n"), "x");
/// ```
pub fn strip(s: &str) -> &str {
    s.trim_matches(unicode::is_space)
}

/// Whether two JSON values are the same Python value *as printed*: equal types, the same number
/// text (`1` is not `1.0`, `1e2` is not `100.0`), the same keys in the same order, recursively.
/// Stricter than `==` on `serde_json::Value`, which ignores key order.
///
/// ```
/// use chatparse_runtime::py::identical;
/// use serde_json::json;
/// assert!(identical(&json!({"a": 1, "b": [2.5]}), &json!({"a": 1, "b": [2.5]})));
/// assert!(!identical(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
/// assert!(!identical(&json!(1), &json!(1.0)));
/// ```
pub fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.to_string() == y.to_string(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| identical(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
        }
        _ => a == b,
    }
}

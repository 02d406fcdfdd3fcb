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

use crate::value::Value;

/// Python's type name for a JSON value (`int`/`float` kept apart), as in its error messages.
///
/// ```
/// use chatparse_runtime::py::python_type;
/// assert_eq!(python_type(&chatparse_runtime::json!(1)), "int");
/// assert_eq!(python_type(&chatparse_runtime::json!(1.0)), "float");
/// assert_eq!(python_type(&chatparse_runtime::json!(null)), "NoneType");
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
/// Stricter than `==` on [`Value`], which ignores key order.
///
/// ```
/// use chatparse_runtime::py::identical;
/// use chatparse_runtime::json;
/// assert!(identical(&json!({"a": 1, "b": [2.5]}), &json!({"a": 1, "b": [2.5]})));
/// assert!(!identical(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
/// assert!(!identical(&json!(1), &json!(1.0)));
/// ```
pub fn identical(a: &Value, b: &Value) -> bool {
    // Iterative: deep values cost no stack.
    let mut pending = vec![(a, b)];
    while let Some((a, b)) = pending.pop() {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                pending.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                for ((ka, va), (kb, vb)) in x.iter().zip(y) {
                    if ka != kb {
                        return false;
                    }
                    pending.push((va, vb));
                }
            }
            // Numbers compare as printed (`1` is not `1.0`), as `Number`'s `==` does.
            _ => {
                if a != b {
                    return false;
                }
            }
        }
    }
    true
}

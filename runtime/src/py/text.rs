//! Python string-level behaviour python jmespath depends on: `lstrip`, `to_number`'s
//! `int()`-then-`float()` (through [`crate::py::coerce`]), `json.dumps` with `ensure_ascii`, and
//! `str()`/`repr()` for error messages.

use super::num::{float_repr, PyNum};
use crate::py::coerce::{self, CoerceError};
use crate::py::unicode::repr;
use crate::value::Value;

/// Python `s.lstrip()`.
pub(crate) fn py_lstrip(s: &str) -> &str {
    s.trim_start_matches(crate::py::unicode::is_space)
}

/// What `to_number` yields for a string: `int(s)`, else `float(s)`, else null.
pub(crate) enum ParsedNumber {
    Num(PyNum),
    /// `float(s)` gave `inf` or `nan`.
    NonFinite,
    Invalid,
}

/// Python `int(s)` then `float(s)` on a string, as jmespath's `to_number` does: any `int()`
/// failure (the 4300-digit limit included, a ValueError too) falls through to `float()`.
pub(crate) fn parse_py_number(s: &str) -> ParsedNumber {
    if let Ok(n) = coerce::int_from_str(s) {
        return ParsedNumber::Num(PyNum::from_number(&n));
    }
    match coerce::float_from_str(s) {
        Ok(f) => ParsedNumber::Num(PyNum::Float(f)),
        Err(CoerceError::NonFinite) => ParsedNumber::NonFinite,
        Err(_) => ParsedNumber::Invalid,
    }
}

/// Appends `s` JSON-quoted with `ensure_ascii=True` (see [`crate::py::json::write_ascii_string`]).
pub(crate) fn json_quote_ascii(s: &str, out: &mut String) {
    crate::py::json::write_ascii_string(s, out);
}

/// Python `repr()` of a JSON value (`None`, `True`, `{'a': 1}`, ...), with
/// nesting below `MAX_DATA_DEPTH` elided.
pub(crate) fn py_repr_value(v: &Value, depth: usize) -> String {
    if depth > crate::jmespath::MAX_DATA_DEPTH {
        return "...".into();
    }
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match PyNum::from_number(n) {
            PyNum::Int(b) => b.to_decimal(),
            PyNum::Float(f) => float_repr(f),
        },
        Value::String(s) => repr(s),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(|v| py_repr_value(v, depth + 1)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", repr(k), py_repr_value(v, depth + 1)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// Python `str()` of a JSON value: strings bare, everything else `repr()`.
pub(crate) fn py_str_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr_value(other, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> String {
        match parse_py_number(s) {
            ParsedNumber::Num(PyNum::Int(b)) => b.to_decimal(),
            ParsedNumber::Num(PyNum::Float(f)) => float_repr(f),
            ParsedNumber::NonFinite => "nonfinite".into(),
            ParsedNumber::Invalid => "ERR".into(),
        }
    }

    #[test]
    fn int_float_parsing_matches_python() {
        for (s, want) in [
            ("\u{1c}5", "ERR"),
            ("\u{b}5\u{c}", "5"),
            ("\u{a0}5\u{3000}", "5"),
            (" -5", "-5"),
            ("- 5", "ERR"),
            ("+5", "5"),
            ("0_7", "7"),
            ("00", "0"),
            ("_1", "ERR"),
            ("1_", "ERR"),
            ("1__0", "ERR"),
            ("1_0.5", "10.5"),
            ("1_.5", "ERR"),
            ("1._5", "ERR"),
            (".5", "0.5"),
            ("5.", "5.0"),
            (".", "ERR"),
            ("1e", "ERR"),
            ("inf", "nonfinite"),
            ("-Infinity", "nonfinite"),
            ("+nAn", "nonfinite"),
            ("1e1_0", "10000000000.0"),
            ("0x1", "ERR"),
            ("1E5", "100000.0"),
            ("  ", "ERR"),
            ("", "ERR"),
            ("1 2", "ERR"),
            ("\u{661}\u{662}.\u{665}", "12.5"),
            ("\u{ff11}\u{ff12}", "12"),
            ("1.5e+3_0", "1.5e+30"),
            ("1e400", "nonfinite"),
        ] {
            assert_eq!(parsed(s), want, "{s:?}");
        }
        let long = format!("{}1", "0".repeat(4400));
        assert_eq!(parsed(&long), "1.0");
    }

    #[test]
    fn ascii_quoting() {
        let mut out = String::new();
        json_quote_ascii("a\"é😀\u{7f}\u{1}", &mut out);
        assert_eq!(out, r#""a\"\u00e9\ud83d\ude00\u007f\u0001""#);
    }
}

//! Python's `int()`, `float()` and truthy-string conversions, as the reference applies them to
//! parsed values.
//!
//! Rust's `str::parse` accepts different spellings (no Unicode digits, no underscores, other
//! whitespace), so each conversion validates CPython 3.11's grammar itself and only then asks
//! Rust for the (correctly rounded, like Python's) value.
//!
//! CPython first rewrites the string (`_PyUnicode_TransformDecimalAndSpaceToASCII`): ASCII
//! characters stay, other `str.isspace` characters become a space, other Unicode decimal digits
//! become their ASCII digit, anything else ends the string with an invalid character. It then
//! strips only ASCII whitespace (` \t\n\v\f\r`). So `int("\u3000 12")` is 12, but
//! `int("\x1c12")` is invalid even though `"\x1c".isspace()`.

use crate::py::unicode::{decimal_value, is_space};
use crate::value::{Number, Value};

/// Why a conversion does not give a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoerceError {
    /// Python raises `ValueError` (not a valid literal).
    Invalid,
    /// Python would produce inf/nan (unrepresentable in JSON).
    NonFinite,
    /// An integer over Python's 4300-digit limit, or too large to convert to float (`OverflowError`).
    TooLarge,
}

/// Python's `int()` refuses decimal strings with more digits than this (`sys.int_info`).
const INT_MAX_STR_DIGITS: usize = 4300;

/// `Py_ISSPACE`: the whitespace CPython strips after the Unicode rewrite.
fn is_ascii_py_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// `_PyUnicode_TransformDecimalAndSpaceToASCII`: `None` marks where CPython writes its `?`
/// (a character that can be neither), after which the string ends.
fn to_ascii(s: &str) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 127 {
            out.push(c as u8);
        } else if is_space(c) {
            out.push(b' ');
        } else if let Some(d) = decimal_value(c) {
            out.push(b'0' + d as u8);
        } else {
            return (out, true);
        }
    }
    (out, false)
}

/// Python `int(s)` for a str.
///
/// The result is exact for any length Python allows and its text is canonical (`"-0"` and
/// `"007"` give `0` and `7`), so it serializes exactly as Python's `json.dumps` would.
///
/// ```
/// use chatparse_runtime::py::coerce::{int_from_str, CoerceError};
/// assert_eq!(int_from_str(" -1_000 ").unwrap().to_string(), "-1000");
/// assert_eq!(int_from_str("١٢٣").unwrap().to_string(), "123");
/// assert_eq!(int_from_str("1.0"), Err(CoerceError::Invalid));
/// assert_eq!(int_from_str(&"9".repeat(4301)), Err(CoerceError::TooLarge));
/// ```
pub fn int_from_str(s: &str) -> Result<Number, CoerceError> {
    let (mut ascii, bad_char) = to_ascii(s);
    if bad_char {
        ascii.push(b'?');
    }
    // PyLong_FromString reads a C string: an embedded NUL ends it, and the caller then rejects
    // the unread rest (unless the digit limit was already exceeded).
    let nul = ascii.iter().position(|&b| b == 0);
    let text = &ascii[..nul.unwrap_or(ascii.len())];

    let mut i = 0;
    while text.get(i).copied().is_some_and(is_ascii_py_space) {
        i += 1;
    }
    let negative = match text.get(i) {
        Some(b'+') => {
            i += 1;
            false
        }
        Some(b'-') => {
            i += 1;
            true
        }
        _ => false,
    };
    if text.get(i) == Some(&b'_') {
        return Err(CoerceError::Invalid);
    }
    let mut digits = String::new();
    let mut prev = 0u8;
    while let Some(&b) = text.get(i) {
        if b == b'_' {
            if prev == b'_' {
                return Err(CoerceError::Invalid);
            }
        } else if b.is_ascii_digit() {
            digits.push(b as char);
        } else {
            break;
        }
        prev = b;
        i += 1;
    }
    if prev == b'_' {
        return Err(CoerceError::Invalid);
    }
    if digits.len() > INT_MAX_STR_DIGITS {
        return Err(CoerceError::TooLarge);
    }
    if digits.is_empty() {
        return Err(CoerceError::Invalid);
    }
    while text.get(i).copied().is_some_and(is_ascii_py_space) {
        i += 1;
    }
    if i != ascii.len() {
        return Err(CoerceError::Invalid);
    }
    let magnitude = digits.trim_start_matches('0');
    let canonical = match (magnitude.is_empty(), negative) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{magnitude}"),
        (false, false) => magnitude.to_owned(),
    };
    int_number(&canonical).ok_or(CoerceError::Invalid)
}

/// A Number from canonical integer text (`0` or `-?[1-9][0-9]*`).
fn int_number(canonical: &str) -> Option<Number> {
    Number::from_integer_str(canonical)
}

/// Python `float(s)` for a str.
///
/// ```
/// use chatparse_runtime::py::coerce::{float_from_str, CoerceError};
/// assert_eq!(float_from_str(" 1_000.5 "), Ok(1000.5));
/// assert_eq!(float_from_str(".5e1"), Ok(5.0));
/// assert_eq!(float_from_str("-inf"), Err(CoerceError::NonFinite));
/// assert_eq!(float_from_str("1e400"), Err(CoerceError::NonFinite));
/// assert_eq!(float_from_str("0x10"), Err(CoerceError::Invalid));
/// ```
pub fn float_from_str(s: &str) -> Result<f64, CoerceError> {
    let (ascii, bad_char) = to_ascii(s);
    if bad_char {
        return Err(CoerceError::Invalid);
    }
    // `_Py_string_to_number_with_underscores`: each `_` sits between two digits; drop them.
    let mut text = Vec::with_capacity(ascii.len());
    let mut prev = 0u8;
    for &b in &ascii {
        if b == b'_' {
            if !prev.is_ascii_digit() {
                return Err(CoerceError::Invalid);
            }
        } else {
            if prev == b'_' && !b.is_ascii_digit() {
                return Err(CoerceError::Invalid);
            }
            text.push(b);
        }
        prev = b;
    }
    if prev == b'_' {
        return Err(CoerceError::Invalid);
    }
    let start = text
        .iter()
        .position(|&b| !is_ascii_py_space(b))
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|&b| !is_ascii_py_space(b))
        .map_or(start, |i| i + 1);
    let body = text.get(start..end).unwrap_or_default();
    parse_float_body(body)
}

/// `PyOS_string_to_double` on a stripped, underscore-free ASCII string, requiring it to be used up.
fn parse_float_body(body: &[u8]) -> Result<f64, CoerceError> {
    let (negative, rest) = match body.first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    if ["inf", "infinity", "nan"]
        .iter()
        .any(|word| rest.eq_ignore_ascii_case(word.as_bytes()))
    {
        return Err(CoerceError::NonFinite);
    }
    let run = |from: usize| {
        rest.get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int_len = run(0);
    let mut i = int_len;
    let mut frac = &rest[..0];
    if rest.get(i) == Some(&b'.') {
        let frac_len = run(i + 1);
        frac = &rest[i + 1..i + 1 + frac_len];
        i += 1 + frac_len;
    }
    if int_len == 0 && frac.is_empty() {
        return Err(CoerceError::Invalid);
    }
    let mut exponent = &rest[..0];
    let mut exp_negative = false;
    if let Some(b'e' | b'E') = rest.get(i) {
        let mut j = i + 1;
        if let Some(&sign @ (b'+' | b'-')) = rest.get(j) {
            exp_negative = sign == b'-';
            j += 1;
        }
        let exp_len = run(j);
        if exp_len == 0 {
            return Err(CoerceError::Invalid);
        }
        exponent = &rest[j..j + exp_len];
        i = j + exp_len;
    }
    if i != rest.len() {
        return Err(CoerceError::Invalid);
    }
    // Rebuild in one spelling Rust certainly accepts; its parse is correctly rounded, like Python's.
    let digits = |d: &[u8]| {
        if d.is_empty() {
            "0".to_owned()
        } else {
            String::from_utf8_lossy(d).into_owned()
        }
    };
    let normalized = format!(
        "{}{}.{}e{}{}",
        if negative { "-" } else { "" },
        digits(&rest[..int_len]),
        digits(frac),
        if exp_negative { "-" } else { "" },
        digits(exponent),
    );
    match normalized.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(f),
        Ok(_) => Err(CoerceError::NonFinite),
        Err(_) => Err(CoerceError::Invalid),
    }
}

/// Python `float(n)` for a JSON number (int or float).
///
/// Ints round to nearest (ties to even), as Python's `int.__float__` does; one that rounds past
/// the largest float is Python's `OverflowError` ([`CoerceError::TooLarge`]).
///
/// ```
/// use chatparse_runtime::py::coerce::{float_from_number, CoerceError};
/// use chatparse_runtime::value::Number;
/// let n = Number::from_integer_str("9007199254740993").unwrap();
/// assert_eq!(float_from_number(&n), Ok(9007199254740992.0));
/// let huge = Number::from_integer_str(&"9".repeat(400)).unwrap();
/// assert_eq!(float_from_number(&huge), Err(CoerceError::TooLarge));
/// ```
pub fn float_from_number(n: &Number) -> Result<f64, CoerceError> {
    let parsed = match (n.as_i64(), n.as_u64(), n.as_big_digits()) {
        // `as` rounds to nearest, ties to even, as `int.__float__`.
        (Some(i), _, _) => i as f64,
        (None, Some(u), _) => u as f64,
        (None, None, Some(digits)) => digits.parse::<f64>().map_err(|_| CoerceError::Invalid)?,
        (None, None, None) => n.as_f64().ok_or(CoerceError::Invalid)?,
    };
    if parsed.is_finite() {
        Ok(parsed)
    } else if is_integer(n) {
        Err(CoerceError::TooLarge)
    } else {
        Err(CoerceError::NonFinite)
    }
}

/// A JSON number for a finite float, as Python's `json.dumps` would carry it (always a float).
///
/// Built with `Number::from_f64`, so its text always has a `.` or an exponent and
/// [`is_integer`] says no, even for `3.0`.
///
/// ```
/// use chatparse_runtime::py::coerce::{float_value, is_integer, CoerceError};
/// let v = float_value(3.0).unwrap();
/// assert!(!is_integer(v.as_number().unwrap()));
/// assert_eq!(float_value(f64::NAN), Err(CoerceError::NonFinite));
/// ```
pub fn float_value(f: f64) -> Result<Value, CoerceError> {
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or(CoerceError::NonFinite)
}

/// Whether a JSON number is an integer in Python's sense (an `int`, not a `float`).
///
/// `1.0` is a float in Python (`json.loads("1.0")` is `1.0`, not `1`), so the value alone
/// cannot decide; [`Number`] keeps the kind.
///
/// ```
/// use chatparse_runtime::py::coerce::is_integer;
/// let n = |s: &str| chatparse_runtime::value::from_str(s).unwrap().as_number().unwrap().clone();
/// assert!(is_integer(&n("-12")) && is_integer(&n("123456789012345678901234567890")));
/// assert!(!is_integer(&n("1.0")) && !is_integer(&n("1e3")));
/// ```
pub fn is_integer(n: &Number) -> bool {
    n.is_integer()
}

/// Python `s.lower() in ("true", "1")` / `("false", "0")`.
///
/// No character outside ASCII lowercases (in Python's or Rust's tables) to any of the letters
/// involved, so Unicode lowercasing and the two tables' version differences cannot matter.
///
/// ```
/// use chatparse_runtime::py::coerce::bool_from_str;
/// assert_eq!(bool_from_str("TRUE"), Some(true));
/// assert_eq!(bool_from_str("0"), Some(false));
/// assert_eq!(bool_from_str(" true"), None);
/// ```
pub fn bool_from_str(s: &str) -> Option<bool> {
    if s.len() > 5 {
        return None; // lowercasing never shortens a string
    }
    match s.to_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn int_ok(s: &str, expected: &str) {
        assert_eq!(
            int_from_str(s).map(|n| n.to_string()),
            Ok(expected.to_owned()),
            "int({s:?})"
        );
    }

    #[test]
    fn int_matches_python() {
        // Each line: int(s) in CPython 3.11.
        int_ok("1", "1");
        int_ok(" 12 ", "12");
        int_ok("+5", "5");
        int_ok("-0", "0");
        int_ok("007", "7");
        int_ok("0_7", "7");
        int_ok("1_000", "1000");
        int_ok("١٢٣", "123");
        int_ok("\u{a0}12\u{3000}", "12");
        int_ok("٣_٤", "34");
        int_ok("\t\n\u{b}\u{c}\r 9\u{85}", "9");
        int_ok("𝟗", "9");
        int_ok("٠٠", "0");
        int_ok("-00012345678901234567890", "-12345678901234567890");
        int_ok(&"1".repeat(4300), &"1".repeat(4300));
        for s in [
            "_1",
            "1__0",
            "1_",
            "+_1",
            "- 5",
            "",
            " ",
            "\u{1c}5\u{1f}",
            "1.0",
            "0x10",
            "1e3",
            "12a",
            "1 2",
            "²",
            "\u{200b}1",
            "1\0",
            " 1\0 ",
            "1\u{7f}",
            "+",
            "--1",
            "1é",
        ] {
            assert_eq!(int_from_str(s), Err(CoerceError::Invalid), "int({s:?})");
        }
        let ones = "1".repeat(4301);
        for s in [
            ones.clone(),
            format!("{ones}x"),
            format!("{ones}\0"),
            format!("{ones}é"),
            format!("-{ones}"),
            "1_".repeat(4300) + "1",
            "0".repeat(4301),
        ] {
            assert_eq!(int_from_str(&s), Err(CoerceError::TooLarge), "int({s:?})");
        }
        for s in [
            format!("x{ones}"),
            format!("{ones}_"),
            format!("1__{ones}"),
            format!("{ones}__"),
        ] {
            assert_eq!(int_from_str(&s), Err(CoerceError::Invalid), "int({s:?})");
        }
    }

    #[test]
    fn float_matches_python() {
        // Each pair: float(s) in CPython 3.11.
        for (s, f) in [
            ("1", 1.0),
            ("1.", 1.0),
            (".5", 0.5),
            ("1e5", 100000.0),
            ("1E+05", 100000.0),
            ("-1.5e-3", -0.0015),
            ("1e-400", 0.0),
            (" 1.5 ", 1.5),
            ("1_000.5", 1000.5),
            ("1.0_5", 1.05),
            ("1e1_0", 1e10),
            ("+.5", 0.5),
            ("1.e5", 100000.0),
            ("١.٥", 1.5),
            ("١_٢.٥", 12.5),
            ("٣e٢", 300.0),
            ("1e-99999999999999999999", 0.0),
            ("0e99999999999", 0.0),
            ("00012", 12.0),
            ("\u{a0}1.5\u{2003}", 1.5),
            ("\u{b}1.5\u{c}", 1.5),
            ("1.5\u{85}", 1.5),
            ("0.1", 0.1),
            ("9007199254740993", 9007199254740992.0),
            ("1_1.1_1e1_1", 1111000000000.0),
        ] {
            assert_eq!(float_from_str(s), Ok(f), "float({s:?})");
        }
        // float('-0') and float('-0.0') are -0.0
        assert!(float_from_str("-0").unwrap().is_sign_negative());
        let tiny = format!("0.{}1e400", "0".repeat(400)); // float(...) == 0.1
        assert_eq!(float_from_str(&tiny), Ok(0.1));
        for s in [
            "inf",
            "INFINITY",
            "-iNf",
            "+nan",
            "nan",
            "-nan",
            "1e400",
            "-1e400",
            "Infinity",
            "nAn",
            "1e99999999999999999999",
        ] {
            assert_eq!(
                float_from_str(s),
                Err(CoerceError::NonFinite),
                "float({s:?})"
            );
        }
        assert_eq!(
            float_from_str(&format!("1{}", "0".repeat(400))),
            Err(CoerceError::NonFinite)
        );
        for s in [
            "infinit",
            "infinityx",
            "hex",
            "0x1p3",
            "1e",
            ".",
            "e5",
            "1 2",
            "1_e5",
            "_1",
            "1_",
            "1__0",
            "1._5",
            "-.e5",
            ".e5",
            "",
            " ",
            "1d5",
            "1f",
            "infinity_",
            "in_f",
            "1e+",
            "1e-5_",
            "+",
            "-",
            "+-1",
            "--1",
            "1.5\0",
            "\u{1c}1.5",
            "1.5\u{1f}",
            "ｉｎｆ",
        ] {
            assert_eq!(float_from_str(s), Err(CoerceError::Invalid), "float({s:?})");
        }
    }

    #[test]
    fn float_from_number_matches_python() {
        let n = |s: &str| {
            crate::value::from_str(s)
                .unwrap()
                .as_number()
                .unwrap()
                .clone()
        };
        assert_eq!(float_from_number(&n("3")), Ok(3.0));
        assert_eq!(float_from_number(&n("-2.5e-3")), Ok(-0.0025));
        // float(2**53 + 1) == 2**53 (ties to even)
        assert_eq!(
            float_from_number(&n("9007199254740993")),
            Ok(9007199254740992.0)
        );
        // float(2**1024 - 2**970 - 1) == 0x1.fffffffffffffp+1023
        let below = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791";
        assert_eq!(float_from_number(&n(below)), Ok(f64::MAX));
        // float(2**1024 - 2**970) raises OverflowError
        let at = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
        assert_eq!(float_from_number(&n(at)), Err(CoerceError::TooLarge));
        assert_eq!(
            float_from_number(&n(&format!("-1{}", "0".repeat(400)))),
            Err(CoerceError::TooLarge)
        );
        // A float Number is always finite (`json.loads("1e400")` is `inf`, which the parser
        // reports as `NonFinite` before any Number exists).
        assert!(crate::value::from_str("1e400").is_err());
    }

    #[test]
    fn float_value_and_is_integer() {
        for f in [0.0, -0.0, 1.0, 1e5, 1e16, 1e20, 1e300, 5e-324, 0.1, -3.0] {
            let v = float_value(f).unwrap();
            let n = v.as_number().unwrap();
            assert!(!is_integer(n), "{f} -> {n}");
            assert_eq!(float_from_number(n).unwrap().to_bits(), f.to_bits());
        }
        assert_eq!(float_value(f64::INFINITY), Err(CoerceError::NonFinite));
        assert!(is_integer(&Number::from(5)));
        assert!(is_integer(&int_from_str("-0").unwrap()));
    }

    #[test]
    fn bool_matches_python() {
        for (s, b) in [
            ("TRUE", Some(true)),
            ("True", Some(true)),
            ("tRuE", Some(true)),
            ("1", Some(true)),
            ("0", Some(false)),
            ("False", Some(false)),
            ("FALSE", Some(false)),
            (" true", None),
            ("true ", None),
            ("yes", None),
            ("１", None),
            ("", None),
            ("truee", None),
        ] {
            assert_eq!(bool_from_str(s), b, "{s:?}");
        }
        // No non-ASCII character lowercases to something containing these letters.
        for c in (128..=0x10FFFF).filter_map(char::from_u32) {
            let lower: String = c.to_lowercase().collect();
            assert!(!lower.contains(|l: char| "truefals10".contains(l)), "{c:?}");
        }
    }

    proptest! {
        #[test]
        fn int_never_panics_and_agrees_with_rust_on_plain_decimals(s in any::<String>(), n in any::<i64>()) {
            let _ = int_from_str(&s);
            prop_assert_eq!(int_from_str(&n.to_string()).unwrap().as_i64(), Some(n));
        }

        #[test]
        fn float_never_panics_and_round_trips(s in any::<String>(), f in any::<f64>()) {
            let _ = float_from_str(&s);
            let _ = float_from_str(&s.replace(|c: char| !c.is_ascii(), "5"));
            if f.is_finite() {
                // repr(f) and Rust's Display both round-trip
                prop_assert_eq!(float_from_str(&format!("{f:e}")).map(f64::to_bits), Ok(f.to_bits()));
                prop_assert_eq!(float_from_str(&format!("{f:?}")).map(f64::to_bits), Ok(f.to_bits()));
            }
        }

        #[test]
        fn float_grammar_fuzz(s in "[ +\\-0-9_.eE]{0,12}") {
            // Anything accepted must also be accepted by Rust after dropping underscores.
            if let Ok(f) = float_from_str(&s) {
                let plain: f64 = s.trim().replace('_', "").parse().unwrap();
                prop_assert_eq!(f.to_bits(), plain.to_bits());
            }
        }
    }
}

//! Small pieces of Python's `str` behaviour that `re` relies on for group names and numbers.

use crate::unicode;
use once_cell::sync::Lazy;

/// `str.isidentifier()`: XID_Start or `_`, then XID_Continue (Rust's Unicode tables).
pub(crate) fn is_identifier(s: &str) -> bool {
    // ASCII first: the ASCII letters are ASCII's XID_Start, and they with the digits its
    // XID_Continue. Why: the Unicode pattern costs about 4 million instructions to compile,
    // which was a third of loading a small spec in a fresh process, and group names are ASCII
    // almost always.
    if s.is_ascii() {
        let mut bytes = s.bytes();
        return bytes
            .next()
            .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
            && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric());
    }
    static IDENT: Lazy<Option<regex::Regex>> =
        Lazy::new(|| regex::Regex::new(r"\A[\p{XID_Start}_]\p{XID_Continue}*\z").ok());
    match IDENT.as_ref() {
        Some(re) => re.is_match(s),
        // Unreachable in practice (the pattern is fixed); fall back to ASCII identifiers.
        None => {
            let mut chars = s.chars();
            chars
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        }
    }
}

/// The value of `int(s)` (base 10), as a sign and a normalised decimal digit string,
/// or `None` where Python raises `ValueError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyInt {
    pub negative: bool,
    /// Without leading zeros ("0" for zero).
    pub digits: String,
}

impl PyInt {
    /// The value when it fits, else `usize::MAX` (callers compare against small limits).
    pub(crate) fn saturating_usize(&self) -> usize {
        self.digits.parse::<usize>().unwrap_or(usize::MAX)
    }
}

/// Python's `int(s)`: surrounding whitespace, a sign, Unicode decimal digits and single
/// underscores between digits are accepted.
pub(crate) fn py_int(s: &str) -> Option<PyInt> {
    let trimmed = s.trim_matches(unicode::is_space);
    let (negative, body) = match trimmed.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
    };
    if body.is_empty() {
        return None;
    }
    let mut digits = String::new();
    let mut prev_underscore = true; // forbids a leading underscore
    for c in body.chars() {
        if c == '_' {
            if prev_underscore {
                return None;
            }
            prev_underscore = true;
            continue;
        }
        let d = unicode::decimal_value(c)?;
        prev_underscore = false;
        if !(digits.is_empty() && d == 0) {
            digits.push(char::from_digit(d, 10)?);
        }
    }
    if prev_underscore {
        return None;
    }
    if digits.is_empty() {
        digits.push('0');
    }
    Some(PyInt { negative, digits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        // python3: [s.isidentifier() for s in ['a', '_1', '1', 'a-b', 'é', '', 'a b']]
        //   -> [True, True, False, False, True, False, False]
        let got: Vec<bool> = ["a", "_1", "1", "a-b", "é", "", "a b"]
            .iter()
            .map(|s| is_identifier(s))
            .collect();
        assert_eq!(got, [true, true, false, false, true, false, false]);
    }

    #[test]
    fn ascii_identifiers_are_pythons() {
        // python3: ''.join('1' if chr(i).isidentifier() else '0' for i in range(128)), and the
        // same for 'a' + chr(i)
        let alone = "00000000000000000000000000000000000000000000000000000000000000000111111111111111111111111110000101111111111111111111111111100000";
        let after_a = "00000000000000000000000000000000000000000000000011111111110000000111111111111111111111111110000101111111111111111111111111100000";
        for (i, (alone, after_a)) in alone.bytes().zip(after_a.bytes()).enumerate() {
            let c = char::from(i as u8);
            assert_eq!(is_identifier(&c.to_string()), alone == b'1', "{i}");
            assert_eq!(is_identifier(&format!("a{c}")), after_a == b'1', "a + {i}");
        }
    }

    #[test]
    fn ints() {
        let v = |s: &str| py_int(s).map(|i| (i.negative, i.digits));
        // python3: int(' 1_0 '), int('+007'), int('-3'), int('١٢'), int('0')
        assert_eq!(v(" 1_0 "), Some((false, "10".into())));
        assert_eq!(v("+007"), Some((false, "7".into())));
        assert_eq!(v("-3"), Some((true, "3".into())));
        assert_eq!(v("١٢"), Some((false, "12".into())));
        assert_eq!(v("0"), Some((false, "0".into())));
        // python3: int('_1'), int('1_'), int('1__0'), int(''), int('a'), int('+') all raise
        for bad in ["_1", "1_", "1__0", "", "a", "+", "1 2"] {
            assert_eq!(v(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn repr() {
        // python3: repr('a'), repr("it's"), repr('a\nb\\')
        assert_eq!(crate::unicode::repr("a"), "'a'");
        assert_eq!(crate::unicode::repr("it's"), "\"it's\"");
        assert_eq!(crate::unicode::repr("a\nb\\"), "'a\\nb\\\\'");
    }
}

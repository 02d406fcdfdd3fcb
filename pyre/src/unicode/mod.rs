//! Python's character classes, copied from the Unicode database of the Python that runs the
//! reference parser (see `pyre/gen_unicode_tables.py`). Rust's own `\w`, `\s` and
//! `char::is_whitespace` are defined differently (marks, connector punctuation, U+001C–U+001F),
//! so every place that must agree with Python asks this module instead.

mod tables;

pub use tables::{DECIMAL, NON_PRINTABLE, SPACE, UNICODE_VERSION, WORD};

fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Python `re`'s `\w` for str patterns (equivalently `c.isalnum() or c == "_"`).
///
/// ```
/// use chatparse_pyre::unicode::is_word;
/// assert!(is_word('é') && is_word('_') && is_word('½'));
/// assert!(!is_word('\u{0301}')); // a combining mark: Rust's \w says yes, Python says no
/// ```
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    in_ranges(WORD, c)
}

/// Python's `str.isspace` (and `re`'s `\s`).
///
/// ```
/// use chatparse_pyre::unicode::is_space;
/// assert!(is_space('\u{1c}') && is_space('\u{3000}'));
/// assert!(!is_space('\u{200b}'));
/// ```
#[inline]
pub fn is_space(c: char) -> bool {
    if c.is_ascii() {
        return matches!(c, '\t'..='\r' | '\x1c'..='\x20');
    }
    in_ranges(SPACE, c)
}

/// The value of a Unicode decimal digit (`str.isdecimal`), as Python's `int()` reads it.
///
/// ```
/// use chatparse_pyre::unicode::decimal_value;
/// assert_eq!(decimal_value('7'), Some(7));
/// assert_eq!(decimal_value('٣'), Some(3));
/// assert_eq!(decimal_value('½'), None);
/// ```
pub fn decimal_value(c: char) -> Option<u32> {
    if c.is_ascii_digit() {
        return Some(c as u32 - '0' as u32);
    }
    if !in_ranges(DECIMAL, c) {
        return None;
    }
    let cp = c as u32;
    let idx = tables::DECIMAL_ZEROS.partition_point(|&zero| zero <= cp);
    let zero = tables::DECIMAL_ZEROS[idx.checked_sub(1)?];
    Some(cp - zero)
}

/// Python's `str.isprintable()` for one character.
pub fn is_printable(c: char) -> bool {
    !in_ranges(NON_PRINTABLE, c)
}

/// Python's `repr()` of a str: the quote Python picks, `\\`, `\n`, `\r`, `\t` and the quote
/// escaped, other non-printable characters as `\xhh`, `\uhhhh` or `\Uhhhhhhhh`.
///
/// ```
/// use chatparse_pyre::unicode::repr;
/// assert_eq!(repr("it's"), r#""it's""#);
/// assert_eq!(repr("a\tb\u{7f}\u{a0}é\u{200b}"), r"'a\tb\x7f\xa0é\u200b'");
/// assert_eq!(repr("\u{e0001}"), r"'\U000e0001'");
/// ```
pub fn repr(s: &str) -> String {
    use std::fmt::Write;
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let cp = c as u32;
                let _ = if cp <= 0xff {
                    write!(out, "\\x{cp:02x}")
                } else if cp <= 0xffff {
                    write!(out, "\\u{cp:04x}")
                } else {
                    write!(out, "\\U{cp:08x}")
                };
            }
        }
    }
    out.push(quote);
    out
}

/// A regex character class (Rust `regex` syntax) for a table, e.g. `[\u{30}-\u{39}…]`.
pub fn class_for(ranges: &[(u32, u32)]) -> String {
    use std::fmt::Write;
    let mut out = String::from("[");
    for &(lo, hi) in ranges {
        if lo == hi {
            let _ = write!(out, "\\x{{{lo:X}}}");
        } else {
            let _ = write!(out, "\\x{{{lo:X}}}-\\x{{{hi:X}}}");
        }
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_runs_cover_every_digit() {
        for &(lo, hi) in DECIMAL {
            for cp in lo..=hi {
                let c = char::from_u32(cp).unwrap();
                let v = decimal_value(c).unwrap();
                assert!(v < 10, "{cp:X} -> {v}");
            }
        }
    }

    #[test]
    fn rust_and_python_word_classes_differ_where_expected() {
        // U+0301 COMBINING ACUTE ACCENT: a mark, \w in Rust, not in Python.
        assert!(regex::Regex::new(r"\w").unwrap().is_match("\u{301}"));
        assert!(!is_word('\u{301}'));
        // U+00B2 SUPERSCRIPT TWO: category No, \w in Python, not in Rust.
        assert!(!regex::Regex::new(r"\w").unwrap().is_match("²"));
        assert!(is_word('²'));
    }
}

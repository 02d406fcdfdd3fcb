//! `re.sub` replacement templates (a transcription of `_parser.parse_template`, Python 3.11).

use super::parse::{Source, Tok};
use crate::pyutil::{is_identifier, py_int};
use crate::unicode::repr;
use crate::{Captures, RegexError};

const MAXGROUPS: usize = 1_073_741_823;

const FIX_TEMPLATE: &str = "refer to groups as \\1 or \\g<name>, write \\\\ for a literal \
     backslash; Python rejects unknown escapes of ASCII letters in templates";

/// One piece of an expanded replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Literal(String),
    /// A group's text, or '' when it did not take part in the match.
    Group(usize),
}

/// Parses `template` for a pattern with `groups` capture groups named by `names[1..]`.
pub(crate) fn parse_template(
    template: &str,
    groups: usize,
    names: &[Option<String>],
) -> Result<Vec<Piece>, RegexError> {
    let mut s = Source::new(template)?;
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let add_group = |literal: &mut String,
                     pieces: &mut Vec<Piece>,
                     s: &Source,
                     index: usize,
                     shown: &str,
                     offset: usize|
     -> Result<(), RegexError> {
        if index > groups {
            return Err(s.error(
                format!("invalid group reference {shown}"),
                offset,
                FIX_TEMPLATE,
            ));
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(literal)));
        }
        pieces.push(Piece::Group(index));
        Ok(())
    };
    while let Some(this) = s.get()? {
        let c = match this {
            Tok::Ch(c) => {
                literal.push(c);
                continue;
            }
            Tok::Esc(c) => c,
        };
        match c {
            'g' => {
                if !s.matches('<')? {
                    return Err(s.error("missing <", 0, FIX_TEMPLATE));
                }
                let name = s.getuntil('>', "group name")?;
                let off = name.chars().count() + 1;
                if is_identifier(&name) {
                    let index = names
                        .iter()
                        .position(|n| n.as_deref() == Some(name.as_str()));
                    let Some(index) = index else {
                        return Err(RegexError::new(
                            format!("unknown group name {}", repr(&name)),
                            "use the name of a (?P<name>...) group of the pattern",
                            None,
                        ));
                    };
                    add_group(
                        &mut literal,
                        &mut pieces,
                        &s,
                        index,
                        &index.to_string(),
                        off,
                    )?;
                } else {
                    let n = match py_int(&name) {
                        Some(n) if !n.negative => n,
                        _ => {
                            return Err(s.error(
                                format!("bad character in group name {}", repr(&name)),
                                off,
                                FIX_TEMPLATE,
                            ));
                        }
                    };
                    let index = n.saturating_usize();
                    if index >= MAXGROUPS {
                        return Err(s.error(
                            format!("invalid group reference {}", n.digits),
                            off,
                            FIX_TEMPLATE,
                        ));
                    }
                    add_group(&mut literal, &mut pieces, &s, index, &n.digits, off)?;
                }
            }
            '0' => {
                let mut text = String::from("0");
                for _ in 0..2 {
                    match s.next {
                        Some(Tok::Ch(d @ '0'..='7')) => {
                            text.push(d);
                            s.advance()?;
                        }
                        _ => break,
                    }
                }
                let v = u32::from_str_radix(&text, 8).unwrap_or(0) & 0xff;
                literal.push(char::from_u32(v).unwrap_or('\0'));
            }
            '1'..='9' => {
                let mut text = format!("\\{c}");
                let mut octal = false;
                if let Some(Tok::Ch(d @ '0'..='9')) = s.next {
                    s.advance()?;
                    text.push(d);
                    if c <= '7' && d <= '7' {
                        if let Some(Tok::Ch(e @ '0'..='7')) = s.next {
                            s.advance()?;
                            text.push(e);
                            octal = true;
                            let v = u32::from_str_radix(&text[1..], 8).unwrap_or(u32::MAX);
                            if v > 0o377 {
                                return Err(s.error(
                                    format!("octal escape value {text} outside of range 0-0o377"),
                                    text.chars().count(),
                                    FIX_TEMPLATE,
                                ));
                            }
                            literal.push(char::from_u32(v).unwrap_or('\0'));
                        }
                    }
                }
                if !octal {
                    let digits = &text[1..];
                    let index: usize = digits.parse().unwrap_or(usize::MAX);
                    let off = text.chars().count() - 1;
                    add_group(&mut literal, &mut pieces, &s, index, digits, off)?;
                }
            }
            _ => match simple_escape(c) {
                Some(e) => literal.push(e),
                None if c.is_ascii_alphabetic() => {
                    return Err(s.error(format!("bad escape \\{c}"), 2, FIX_TEMPLATE));
                }
                None => {
                    literal.push('\\');
                    literal.push(c);
                }
            },
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(pieces)
}

/// Python's `ESCAPES` as template escapes (`\b` is a backspace here).
fn simple_escape(c: char) -> Option<char> {
    Some(match c {
        'a' => '\x07',
        'b' => '\x08',
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\x0b',
        '\\' => '\\',
        _ => return None,
    })
}

/// Appends the expansion of `pieces` for one match.
pub(crate) fn expand(pieces: &[Piece], caps: &Captures<'_>, out: &mut String) {
    for p in pieces {
        match p {
            Piece::Literal(s) => out.push_str(s),
            Piece::Group(i) => out.push_str(caps.get(*i).unwrap_or("")),
        }
    }
}

//! Recognising patterns whose single capture is a *literal-delimited region*, so that a stream
//! scanner can find it incrementally with exactly `re.search`/`re.finditer`'s result.
//!
//! The shape (on the parsed Python pattern, DOTALL):
//!
//! ```text
//! [ ( ]  OPEN  [ (?!A|B|…|$) ]  [ (?:X|Y|[^…])*? TERM ]  [ ( ]  .*?  )  (?:C1|C2|…|$)
//! ```
//!
//! `OPEN`, `TERM`, the look-ahead alternatives, `X`, `Y` and the closers are literals (no case
//! folding); group 1 is the only group and wraps either the body alone or everything from
//! `OPEN` to the body. Why an incremental scan gives the regex's answer:
//! - the closers include `$`, so once the body starts the match always succeeds: the body ends at
//!   the first position where a closer matches (lazy `.*?`), which a forward scan finds;
//! - before the body, the pattern is deterministic: the look-ahead is decided by the text right
//!   after `OPEN`, and the header loop tries `TERM` first (the rest then always succeeds, so it
//!   commits), otherwise at most one alternative can match at any position (their first
//!   characters, or the literals themselves, exclude each other), so there is nothing to
//!   backtrack into; a failure there fails the start position and the search moves to the next
//!   occurrence of `OPEN`.

use chatparse_pyre::syntax::ast::{Assertion, ClassItem, Fold, Node, RepeatKind};
use chatparse_pyre::PyRegex;

/// One alternative of a header loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderAlt {
    /// A literal.
    Lit(String),
    /// A class of code point ranges (`[^<]`), possibly negated.
    Class {
        /// Whether the class is negated.
        negated: bool,
        /// Inclusive ranges.
        ranges: Vec<(u32, u32)>,
    },
}

impl HeaderAlt {
    /// Whether the class alternative matches `c` (literals: never).
    pub fn class_matches(&self, c: char) -> bool {
        match self {
            HeaderAlt::Lit(_) => false,
            HeaderAlt::Class { negated, ranges } => {
                let cp = c as u32;
                ranges.iter().any(|&(lo, hi)| lo <= cp && cp <= hi) != *negated
            }
        }
    }
}

/// `(?:alternatives)*? terminator` between the opener and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The loop's alternatives, in pattern order.
    pub alternatives: Vec<HeaderAlt>,
    /// The literal that ends the header.
    pub terminator: String,
}

/// An alternative of a look-ahead or closer: a literal or `$`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delim {
    /// A literal.
    Lit(String),
    /// `$` (no MULTILINE): at the end, or before a final `\n`.
    Dollar,
}

/// A pattern of the region shape (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionShape {
    /// The literal every match starts with.
    pub opener: String,
    /// A negative look-ahead right after the opener: its alternatives.
    pub not_followed_by: Vec<Delim>,
    /// The header between the opener (and look-ahead) and the body.
    pub header: Option<Header>,
    /// Whether group 1 starts at the opener (otherwise it is the body alone).
    pub capture_from_opener: bool,
    /// The closers, in pattern order; one of them is `$`.
    pub closers: Vec<Delim>,
}

#[derive(Debug)]
enum Piece<'a> {
    Lit(String),
    Open,
    Close,
    Body,
    Look(&'a Node),
    Loop(&'a Node),
    Alt(&'a Node),
}

fn flatten<'a>(node: &'a Node, out: &mut Vec<Piece<'a>>) -> Result<(), String> {
    match node {
        Node::Empty => {}
        Node::Char {
            cp,
            fold: Fold::None,
        } => {
            let c = char::from_u32(*cp).ok_or("a lone surrogate")?;
            match out.last_mut() {
                Some(Piece::Lit(s)) => s.push(c),
                _ => out.push(Piece::Lit(c.to_string())),
            }
        }
        Node::Group { index: None, node } => match &**node {
            Node::Alt(_) => out.push(Piece::Alt(node)),
            other => flatten(other, out)?,
        },
        Node::Group {
            index: Some(_),
            node,
        } => {
            out.push(Piece::Open);
            flatten(node, out)?;
            out.push(Piece::Close);
        }
        Node::Concat(nodes) => {
            for n in nodes {
                flatten(n, out)?;
            }
        }
        Node::Alt(_) => out.push(Piece::Alt(node)),
        Node::Repeat {
            node: inner,
            min: 0,
            max: None,
            kind: RepeatKind::Lazy,
        } => {
            if matches!(**inner, Node::Any { dotall: true }) {
                out.push(Piece::Body);
            } else {
                out.push(Piece::Loop(inner));
            }
        }
        Node::Look {
            behind: false,
            negated: true,
            node,
        } => out.push(Piece::Look(node)),
        Node::Assert(Assertion::Dollar) => out.push(Piece::Alt(node)),
        Node::Char { .. } => return Err("a case-insensitive literal".into()),
        Node::Any { .. } | Node::Class(_) => {
            return Err("a character class outside a header loop".into())
        }
        Node::Assert(_) => return Err("an anchor other than a final `$`".into()),
        Node::Repeat { .. } => return Err("a repetition other than a lazy `.*?` body".into()),
        Node::Look { .. } => return Err("a look-around other than `(?!…)` after the opener".into()),
        Node::Atomic(_) | Node::Backref { .. } | Node::Cond { .. } => {
            return Err("an atomic group, backreference or conditional".into())
        }
    }
    Ok(())
}

/// A literal, if `node` is one (characters without folding, through non-capturing groups).
fn literal_of(node: &Node) -> Option<String> {
    fn walk(node: &Node, out: &mut String) -> bool {
        match node {
            Node::Char {
                cp,
                fold: Fold::None,
            } => char::from_u32(*cp).map(|c| out.push(c)).is_some(),
            Node::Group { index: None, node } => walk(node, out),
            Node::Concat(nodes) => nodes.iter().all(|n| walk(n, out)),
            _ => false,
        }
    }
    let mut s = String::new();
    (walk(node, &mut s) && !s.is_empty()).then_some(s)
}

/// Literal or `$` alternatives.
fn delims(node: &Node) -> Option<Vec<Delim>> {
    let alts: Vec<&Node> = match node {
        Node::Alt(alts) => alts.iter().collect(),
        Node::Group { index: None, node } => return delims(node),
        other => vec![other],
    };
    alts.into_iter()
        .map(|a| match a {
            Node::Assert(Assertion::Dollar) => Some(Delim::Dollar),
            other => literal_of(other).map(Delim::Lit),
        })
        .collect()
}

fn header_alts(node: &Node) -> Option<Vec<HeaderAlt>> {
    let alts: Vec<&Node> = match node {
        Node::Alt(alts) => alts.iter().collect(),
        Node::Group { index: None, node } => return header_alts(node),
        other => vec![other],
    };
    alts.into_iter()
        .map(|a| match a {
            Node::Class(class) if class.fold == Fold::None => {
                let ranges = class
                    .items
                    .iter()
                    .map(|item| match item {
                        ClassItem::Range(lo, hi) => Some((*lo, *hi)),
                        ClassItem::Category(_) => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(HeaderAlt::Class {
                    negated: class.negated,
                    ranges,
                })
            }
            other => literal_of(other).map(HeaderAlt::Lit),
        })
        .collect()
}

/// Whether two literals can both match at one position.
fn overlap(a: &str, b: &str) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn check_header(header: &Header) -> Result<(), String> {
    let alts = &header.alternatives;
    for (i, a) in alts.iter().enumerate() {
        for b in alts.iter().skip(i + 1) {
            let clash = match (a, b) {
                (HeaderAlt::Lit(x), HeaderAlt::Lit(y)) => overlap(x, y),
                (HeaderAlt::Lit(x), class) | (class, HeaderAlt::Lit(x)) => {
                    x.chars().next().is_some_and(|c| class.class_matches(c))
                }
                (HeaderAlt::Class { .. }, HeaderAlt::Class { .. }) => true,
            };
            if clash {
                return Err(
                    "the header loop's alternatives can match at the same position (backtracking \
                     could choose between them)"
                        .into(),
                );
            }
        }
    }
    Ok(())
}

/// The region shape of `regex`, or why it has none (see [`RegionShape`]).
///
/// ```
/// use chatparse_runtime::pyre::PyRegex;
/// use chatparse_runtime::stream::region_shape;
/// let r = PyRegex::new(r"<think>(.*?)(?:</think>|$)").unwrap();
/// assert_eq!(region_shape(&r).unwrap().opener, "<think>");
/// assert!(region_shape(&PyRegex::new(r"^\s*(.*)").unwrap()).is_err());
/// ```
pub fn region_shape(regex: &PyRegex) -> Result<RegionShape, String> {
    shape_of(
        &regex.syntax_tree().root,
        regex.group_count(),
        regex.has_named_groups(),
    )
}

fn shape_of(root: &Node, groups: usize, named: bool) -> Result<RegionShape, String> {
    if groups != 1 || named {
        return Err("it needs exactly one unnamed capture group".into());
    }
    let mut pieces = Vec::new();
    flatten(root, &mut pieces)?;
    let mut it = pieces.into_iter().peekable();
    let capture_from_opener = matches!(it.peek(), Some(Piece::Open));
    if capture_from_opener {
        it.next();
    }
    let opener = match it.next() {
        Some(Piece::Lit(s)) => s,
        _ => return Err("it does not start with a literal opener".into()),
    };
    let mut not_followed_by = Vec::new();
    if let Some(Piece::Look(node)) = it.peek() {
        not_followed_by =
            delims(node).ok_or("its look-ahead has an alternative that is not a literal or `$`")?;
        it.next();
    }
    let mut header = None;
    if let Some(Piece::Loop(node)) = it.peek() {
        let alternatives = header_alts(node).ok_or(
            "its lazy loop before the body has an alternative that is not a literal or a plain \
             character class",
        )?;
        it.next();
        let terminator = match it.next() {
            Some(Piece::Lit(s)) => s,
            _ => return Err("its lazy loop before the body is not followed by a literal".into()),
        };
        let h = Header {
            alternatives,
            terminator,
        };
        check_header(&h)?;
        header = Some(h);
    }
    if !capture_from_opener {
        match it.next() {
            Some(Piece::Open) => {}
            _ => {
                return Err(
                    "its capture group is neither the body `(.*?)` nor everything from the opener"
                        .into(),
                )
            }
        }
    }
    match (it.next(), it.next()) {
        (Some(Piece::Body), Some(Piece::Close)) => {}
        _ => {
            return Err(
                "its capture group does not end with a lazy DOTALL `.*?` body right after a \
                 literal opener"
                    .into(),
            )
        }
    }
    let closers = match it.next() {
        Some(Piece::Alt(node)) => {
            delims(node).ok_or("a closer alternative is not a literal or `$`")?
        }
        Some(Piece::Lit(s)) => vec![Delim::Lit(s)],
        _ => return Err("the body is not followed by a choice of literal closers and `$`".into()),
    };
    if it.next().is_some() {
        return Err("something follows the closers".into());
    }
    if !closers.contains(&Delim::Dollar) {
        return Err(
            "no closer alternative is `$`, so an unclosed region is not a match (the match \
             depends on text that has not arrived)"
                .into(),
        );
    }
    Ok(RegionShape {
        opener,
        not_followed_by,
        header,
        capture_from_opener,
        closers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(p: &str) -> Result<RegionShape, String> {
        region_shape(&PyRegex::new(p).unwrap())
    }

    fn lit(s: &str) -> Delim {
        Delim::Lit(s.to_owned())
    }

    #[test]
    fn literal_delimited_fields_have_a_shape() {
        let s = shape(r"<\|channel\|>final<\|message\|>(.*?)(?:<\|return\|>|<\|end\|>|$)").unwrap();
        assert_eq!(s.opener, "<|channel|>final<|message|>");
        assert!(!s.capture_from_opener && s.header.is_none() && s.not_followed_by.is_empty());
        assert_eq!(
            s.closers,
            [lit("<|return|>"), lit("<|end|>"), Delim::Dollar]
        );

        // gpt_oss's tool calls: the capture starts at the opener, a header loop before the body.
        let s = shape(
            r"(to=functions\.(?:[^<]|<\|channel\|>|<\|constrain\|>)*?<\|message\|>.*?)(?:<\|call\|>|$)",
        )
        .unwrap();
        assert!(s.capture_from_opener);
        let header = s.header.unwrap();
        assert_eq!(header.terminator, "<|message|>");
        assert_eq!(header.alternatives.len(), 3);
        assert!(header.alternatives[0].class_matches('x'));
        assert!(!header.alternatives[0].class_matches('<'));

        // cohere's reasoning: a negative look-ahead after the opener.
        let s = shape(r"<\|START_THINKING\|>(?!<\|END_THINKING\|>|$)(.*?)(?:<\|END_THINKING\|>|$)")
            .unwrap();
        assert_eq!(s.not_followed_by, [lit("<|END_THINKING|>"), Delim::Dollar]);
        assert_eq!(shape(r"<a>(.*?)$").unwrap().closers, [Delim::Dollar]);
    }

    #[test]
    fn other_patterns_say_why_not() {
        for (pattern, why) in [
            (r"(?i)<a>(.*?)$", "case-insensitive"),
            (r"<a>(.*?)</a>", "no closer alternative is `$`"),
            (r"<a>(.*)$", "repetition other than a lazy"),
            (r"(?:<a>|<b>)(.*?)$", "literal opener"),
            (r"<a>(?:x|xy)*?<b>(.*?)$", "same position"),
            (r"<a>(?P<x>.*?)$", "unnamed"),
            (r"^<a>(.*?)$", "anchor"),
            (r"<a>\s*(.*?)$", "repetition"),
            (r"<a>(.*?)(?:</a>|$)x", "follows the closers"),
            (r"<a>(.*?)(?:</a>\s|$)", "not a literal"),
        ] {
            let err = shape(pattern).unwrap_err();
            assert!(err.contains(why), "{pattern}: {err}");
        }
    }
}

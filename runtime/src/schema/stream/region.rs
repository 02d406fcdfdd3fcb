//! Recognising patterns whose single capture is a *literal-delimited region*, so that a stream
//! scanner can find it incrementally with exactly `re.search`/`re.finditer`'s result.
//!
//! The shape (on the parsed Python pattern, DOTALL):
//!
//! ```text
//! [ ( ]  OPEN  [ \b ]  [ (?!A|B|…|$) ]  [ (?:X|Y|[^…])*? TERM ]  [ ( ]  .*?  )  (?:C1|C2|…|$)
//! ```
//!
//! `OPEN`, `TERM`, the look-ahead alternatives, `X`, `Y` and the closers are literals (no case
//! folding); group 1 is the only group and wraps either the body alone or everything from
//! `OPEN` to the body. `OPEN` may also be a choice of literals, `(?:O1|O2|…)`, when group 1 starts
//! at it. A `\b` right after `OPEN` is allowed when every opener ends in a word character: there
//! it means "not followed by a word character", an alternative of the look-ahead
//! ([`Delim::Word`]). Why an incremental scan gives the regex's answer:
//! - the closers include `$`, so once the body starts the match always succeeds: the body ends at
//!   the first position where a closer matches (lazy `.*?`), which a forward scan finds;
//! - before the body, the pattern is deterministic: at a start position the openers are tried in
//!   pattern order, the look-ahead is decided by the text right after the opener, and the header
//!   loop tries `TERM` first (the rest then always succeeds, so it commits), otherwise at most one
//!   alternative can match at any position (their first characters, or the literals themselves,
//!   exclude each other), so there is nothing to backtrack into but the next opener at the same
//!   position; a failure of them all fails the start position and the search moves on.

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

/// An alternative of a look-ahead or closer: a literal or `$` (and, in a look-ahead only, a word
/// character).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delim {
    /// A literal.
    Lit(String),
    /// `$` (no MULTILINE): at the end, or before a final `\n`.
    Dollar,
    /// A word character: Python `re`'s `\w` for str patterns (`c.isalnum() or c == "_"`), or
    /// `[a-zA-Z0-9_]` under `re.ASCII`. Only in [`RegionShape::not_followed_by`], where it stands
    /// for a `\b` right after an opener that ends in a word character: there the boundary holds
    /// exactly when no word character follows (at the end of the text too).
    Word {
        /// `re.ASCII` was in force.
        ascii: bool,
    },
}

impl Delim {
    /// Whether `c` is a word character for [`Delim::Word`] (`false` for the other alternatives).
    ///
    /// ```
    /// use chatparse_runtime::stream::Delim;
    /// let word = Delim::Word { ascii: false };
    /// assert!(word.is_word_char('é') && word.is_word_char('_') && !word.is_word_char('>'));
    /// assert!(!Delim::Word { ascii: true }.is_word_char('é'));
    /// ```
    pub fn is_word_char(&self, c: char) -> bool {
        match self {
            Delim::Word { ascii: true } => c.is_ascii_alphanumeric() || c == '_',
            Delim::Word { ascii: false } => chatparse_pyre::unicode::is_word(c),
            Delim::Lit(_) | Delim::Dollar => false,
        }
    }
}

/// A pattern of the region shape (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionShape {
    /// The literal every match starts with (the first of the openers, when there are several).
    pub opener: String,
    /// The other literals a match may start with, in pattern order after `opener`
    /// (`(?:<tool_call>|<function=)`): at a position the openers are tried in that order, and the
    /// first that matches there and passes the look-ahead starts the match. Only when group 1
    /// starts at the opener (`capture_from_opener`), so that the captured text never depends on
    /// which opener matched.
    pub other_openers: Vec<String>,
    /// A negative look-ahead right after the opener: its alternatives (a `\b` after the opener
    /// is [`Delim::Word`] here).
    pub not_followed_by: Vec<Delim>,
    /// The header between the opener (and look-ahead) and the body.
    pub header: Option<Header>,
    /// Whether group 1 starts at the opener (otherwise it starts with the body).
    pub capture_from_opener: bool,
    /// Whether group 1 ends after the closer that ends the match (`(<a>.*?(?:</a>|$))`;
    /// otherwise it ends with the body).
    pub capture_with_closer: bool,
    /// The closers, in pattern order; one of them is `$`. Literals and `$` only.
    pub closers: Vec<Delim>,
}

impl RegionShape {
    /// Every opener, in pattern order: `opener`, then `other_openers`.
    pub fn openers(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.opener.as_str()).chain(self.other_openers.iter().map(String::as_str))
    }
}

#[derive(Debug)]
enum Piece<'a> {
    Lit(String),
    Open,
    Close,
    Body,
    Look(&'a Node),
    /// `\b`, with whether `re.ASCII` was in force.
    Boundary(bool),
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
        Node::Assert(Assertion::WordBoundary { ascii }) => out.push(Piece::Boundary(*ascii)),
        Node::Char { .. } => return Err("a case-insensitive literal".into()),
        Node::Any { .. } | Node::Class(_) => {
            return Err("a character class outside a header loop".into())
        }
        Node::Assert(_) => {
            return Err("an anchor other than a final `$` or a `\\b` after the opener".into())
        }
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
    // The opener: a literal, or a choice of literals (with a literal before or after it, which
    // belongs to each of them).
    let prefix = match it.peek() {
        Some(Piece::Lit(_)) => match it.next() {
            Some(Piece::Lit(s)) => s,
            _ => String::new(),
        },
        _ => String::new(),
    };
    let mut openers = match it.peek() {
        Some(Piece::Alt(node)) => {
            let choice = delims(node)
                .filter(|alts| alts.iter().all(|a| matches!(a, Delim::Lit(_))))
                .ok_or("its opener is a choice with an alternative that is not a literal")?;
            it.next();
            choice
                .into_iter()
                .map(|a| match a {
                    Delim::Lit(l) => format!("{prefix}{l}"),
                    _ => String::new(),
                })
                .collect()
        }
        _ if !prefix.is_empty() => vec![prefix],
        _ => return Err("it does not start with a literal opener".into()),
    };
    if openers.len() > 1 {
        if let Some(Piece::Lit(_)) = it.peek() {
            if let Some(Piece::Lit(suffix)) = it.next() {
                openers.iter_mut().for_each(|o| o.push_str(&suffix));
            }
        }
    }
    let mut not_followed_by = Vec::new();
    loop {
        match it.peek() {
            Some(Piece::Look(node)) => {
                not_followed_by.extend(
                    delims(node)
                        .ok_or("its look-ahead has an alternative that is not a literal or `$`")?,
                );
            }
            Some(&Piece::Boundary(ascii)) => {
                // After a word character, `\b` holds exactly where no word character follows.
                let word = Delim::Word { ascii };
                if !openers
                    .iter()
                    .all(|o| o.chars().next_back().is_some_and(|c| word.is_word_char(c)))
                {
                    return Err(
                        "a `\\b` after an opener that does not end in a word character".into(),
                    );
                }
                if !not_followed_by.contains(&word) {
                    not_followed_by.push(word);
                }
            }
            _ => break,
        }
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
    let not_body = || {
        "its capture group does not end with a lazy DOTALL `.*?` body right after a literal \
         opener, or with the closers after it"
            .to_owned()
    };
    if !matches!(it.next(), Some(Piece::Body)) {
        return Err(not_body());
    }
    // The capture ends with the body, or with the closer after it.
    let capture_with_closer = !matches!(it.peek(), Some(Piece::Close));
    if !capture_with_closer {
        it.next();
    }
    let closers = match it.next() {
        Some(Piece::Alt(node)) => {
            delims(node).ok_or("a closer alternative is not a literal or `$`")?
        }
        Some(Piece::Lit(s)) => vec![Delim::Lit(s)],
        _ => return Err("the body is not followed by a choice of literal closers and `$`".into()),
    };
    if capture_with_closer && !matches!(it.next(), Some(Piece::Close)) {
        return Err(not_body());
    }
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
    if openers.len() > 1 && (!capture_from_opener || header.is_some()) {
        return Err(
            "it has several openers but its capture group is not everything from the opener \
             without a header loop (the captured text would depend on which opener matched)"
                .into(),
        );
    }
    let opener = openers.remove(0);
    Ok(RegionShape {
        opener,
        other_openers: openers,
        not_followed_by,
        header,
        capture_from_opener,
        capture_with_closer,
        closers,
    })
}

/// A pattern whose matches follow one another with no text between them:
///
/// ```text
/// [ (?:SEP)? ]  ( .+? )  (?:C1|C2|…|$)
/// ```
///
/// an optional literal separator, the one capture group holding a lazy DOTALL body of at least
/// one character, then literal closers or `$` (with `$` among them). `mistral_small`'s calls,
/// `(?:\[TOOL_CALLS\])?(.+?)(?:\[TOOL_CALLS\]|$)`, are written so: the marker before each call is
/// the closer of the call before it. Why an incremental scan gives `re.finditer`'s answer: a match
/// can start anywhere there is a character (the body takes any), so each starts where the one
/// before ended; the separator, when it is there and a character follows it, is taken (a greedy
/// `?` that the rest never makes backtrack, since the closers include `$`); the body ends at the
/// first closer after its first character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeparatedShape {
    /// The optional literal a match starts with.
    pub(crate) separator: Option<String>,
    /// The closers, in pattern order; one of them is `$`.
    pub(crate) closers: Vec<Delim>,
}

/// The separated shape of `regex`, or why it has none (see [`SeparatedShape`]).
pub(crate) fn separated_shape(regex: &PyRegex) -> Result<SeparatedShape, String> {
    if regex.group_count() != 1 || regex.has_named_groups() {
        return Err("it needs exactly one unnamed capture group".into());
    }
    let nodes: Vec<&Node> = match &regex.syntax_tree().root {
        Node::Concat(nodes) => nodes.iter().collect(),
        other => vec![other],
    };
    let mut it = nodes.into_iter().peekable();
    let mut separator = None;
    if let Some(Node::Repeat {
        node,
        min: 0,
        max: Some(1),
        kind: RepeatKind::Greedy,
    }) = it.peek()
    {
        separator = Some(literal_of(node).ok_or("its optional start is not a literal")?);
        it.next();
    }
    let body = match it.next() {
        Some(Node::Group {
            index: Some(_),
            node,
        }) => &**node,
        _ => return Err("its capture group is not a lazy DOTALL `(.+?)` body".into()),
    };
    if !matches!(body, Node::Repeat { node, min: 1, max: None, kind: RepeatKind::Lazy }
        if matches!(**node, Node::Any { dotall: true }))
    {
        return Err("its capture group is not a lazy DOTALL `(.+?)` body".into());
    }
    let closers = it
        .next()
        .and_then(delims)
        .ok_or("the body is not followed by a choice of literal closers and `$`")?;
    if it.next().is_some() {
        return Err("something follows the closers".into());
    }
    if !closers.contains(&Delim::Dollar) {
        return Err("no closer alternative is `$`".into());
    }
    Ok(SeparatedShape { separator, closers })
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
    fn several_openers_word_boundaries_and_closers_in_the_capture() {
        // qwen3_coder's calls: a choice of openers, the capture from the opener to its closer.
        let s = shape(r"((?:<tool_call>|<function=).*?(?:</function>|</tool_call>|$))").unwrap();
        assert_eq!(s.opener, "<tool_call>");
        assert_eq!(s.other_openers, ["<function="]);
        assert_eq!(
            s.openers().collect::<Vec<_>>(),
            ["<tool_call>", "<function="]
        );
        assert!(s.capture_from_opener && s.capture_with_closer);
        assert_eq!(
            s.closers,
            [lit("</function>"), lit("</tool_call>"), Delim::Dollar]
        );

        // minimax_m2's: `\b` after an opener that ends in a word character.
        let s = shape(r"(<invoke\b.*?(?:</invoke>|$))").unwrap();
        assert_eq!(s.opener, "<invoke");
        assert!(s.other_openers.is_empty());
        assert_eq!(s.not_followed_by, [Delim::Word { ascii: false }]);
        assert_eq!(
            shape(r"(?a)(<invoke\b.*?(?:</invoke>|$))")
                .unwrap()
                .not_followed_by,
            [Delim::Word { ascii: true }]
        );
        let s = shape(r"(<｜DSML｜invoke\b.*?(?:</｜DSML｜invoke>|$))").unwrap();
        assert_eq!(s.opener, "<｜DSML｜invoke");
        assert_eq!(s.closers, [lit("</｜DSML｜invoke>"), Delim::Dollar]);

        // A literal before or after the choice belongs to every opener; `\b` and a look-ahead
        // after them are one look-ahead.
        let s = shape(r"(<(?:a|b)c\b(?!x|$).*?)(?:</c>|$)").unwrap();
        assert_eq!(s.openers().collect::<Vec<_>>(), ["<ac", "<bc"]);
        assert!(!s.capture_with_closer);
        assert_eq!(
            s.not_followed_by,
            [Delim::Word { ascii: false }, lit("x"), Delim::Dollar]
        );
        // The body alone after one of several openers: where it starts depends on the opener.
        assert!(shape(r"(?:<a>|<b>)(.*?)(?:</a>|$)").is_err());
        // The closers may be captured after the body alone too.
        assert!(shape(r"<a>(.*?(?:</a>|$))").unwrap().capture_with_closer);
    }

    #[test]
    fn separated_shapes() {
        let sep = |p: &str| separated_shape(&PyRegex::new(p).unwrap());
        let s = sep(r"(?:\[TOOL_CALLS\])?(.+?)(?:\[TOOL_CALLS\]|$)").unwrap();
        assert_eq!(s.separator.as_deref(), Some("[TOOL_CALLS]"));
        assert_eq!(s.closers, [lit("[TOOL_CALLS]"), Delim::Dollar]);
        let s = sep(r"(.+?)(?:>>>|$)").unwrap();
        assert_eq!(s.separator, None);
        for (pattern, why) in [
            (r"(?:a)?(.*?)(?:a|$)", "`(.+?)`"),
            (r"(?:a)?(.+)(?:a|$)", "`(.+?)`"),
            (r"(?:a)?(.+?)a", "no closer alternative is `$`"),
            (r"(?:a)?(.+?)\s", "not followed by a choice"),
            (r"(?:a)?(.+?)(?:a)", "no closer alternative is `$`"),
            (r"(?:a|b)?(.+?)(?:a|$)", "optional start is not a literal"),
            (r"(?:a)?(.+?)(?:a|$)b", "something follows"),
            (r"(?:a)?(?P<x>.+?)(?:a|$)", "unnamed"),
        ] {
            let err = sep(pattern).unwrap_err();
            assert!(err.contains(why), "{pattern}: {err}");
        }
        // A region shape is not a separated one.
        assert!(sep(r"<a>(.*?)(?:</a>|$)").is_err());
    }

    #[test]
    fn other_patterns_say_why_not() {
        for (pattern, why) in [
            (r"(?i)<a>(.*?)$", "case-insensitive"),
            (r"<a>(.*?)</a>", "no closer alternative is `$`"),
            (r"<a>(.*)$", "repetition other than a lazy"),
            (r"(?:<a>|<b>)(.*?)$", "several openers"),
            (r"((?:<a>|<b>)(?:x|y)*?<c>.*?)$", "several openers"),
            (r"((?:<a>|$).*?)$", "not a literal"),
            (r"(.*?)$", "literal opener"),
            (r"(<a>\b.*?)$", "does not end in a word character"),
            (
                r"(<a\b|<b>.*?)$",
                "choice with an alternative that is not a literal",
            ),
            (r"(\b<a.*?)$", "literal opener"),
            (
                r"(<a.*?\b(?:</a>|$))",
                "not followed by a choice of literal closers",
            ),
            (r"(<a.*?(?:</a>|$))x", "follows the closers"),
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

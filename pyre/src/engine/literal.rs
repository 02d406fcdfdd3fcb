//! Substring-search matching for the commonest schema shape: a literal opener, a DOTALL `.*?`
//! (or `.*`) body, and a closer that is a choice of literals, `LIT.*`, `$` or `\Z`, with capture
//! groups at the seams: `<tool_call>(.*?)(?:</tool_call>|$)`, `((?:<a>|<b>).*?(?:</a>|$))`,
//! `^<TOOLCALL>(.*?)(?:</TOOLCALL>.*)?$`, `<\|message\|>(.*)`.
//!
//! A regex engine resolving the lazy body's capture walks the body byte by byte through an NFA
//! (milliseconds over a 64 KB reasoning trace); here the body's end is the nearest closer, found
//! with `memchr::memmem`. The result is exactly the regex's, by the argument at each step below:
//! the shape is recognised on the parsed Python pattern, so anything else (case folding, classes,
//! a group inside a closer, …) keeps the regex engine.

use memchr::memmem::{Finder, FinderRev};

use super::spans::Spans;
use crate::syntax::ast::{Assertion, Fold, Node, RepeatKind};

/// Literals a plan may search for; more alternatives than this keep the regex engine (and keep
/// [`ScanCache`] on the stack).
const MAX_LITERALS: usize = 8;

/// One alternative of the closer, in pattern order.
#[derive(Debug, Clone)]
enum Closer {
    /// A literal (`</tool_call>`): the match ends after it.
    Lit(usize),
    /// A literal followed by a greedy DOTALL `.*` (`</TOOLCALL>.*`): the match ends at the end.
    LitToEnd(usize),
    /// `$` without MULTILINE: at the end, or before a final `\n`.
    Dollar,
    /// `\Z`: at the end.
    End,
    /// Nothing after the body.
    Empty,
}

/// Boundaries of a match: 0 = start, 1 = after the opener, 2 = after the body, 3 = end.
type Boundary = usize;

/// A pattern of the recognised shape, ready to search.
#[derive(Debug)]
pub(crate) struct LiteralPlan {
    /// `^` (or `\A`): only a match at the very start of the haystack.
    anchored: bool,
    /// The opener's alternatives (indices into `literals`), in pattern order.
    openers: Vec<usize>,
    lazy: bool,
    closers: Vec<Closer>,
    forward: Vec<Finder<'static>>,
    backward: Vec<FinderRev<'static>>,
    /// Python group `g` (index `g - 1`) spans boundaries `groups[g - 1]`.
    groups: Vec<(Boundary, Boundary)>,
}

/// Remembered literal positions, so that successive searches of one `finditer` never rescan
/// text: `found[i] = Some((from, at))` means literal `i`'s first occurrence at or after `from`
/// is `at` (`None` = nowhere).
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanCache {
    found: [Option<(usize, Option<usize>)>; MAX_LITERALS],
}

/// Flattened pattern pieces, before shape recognition.
#[derive(Debug, Clone)]
enum Piece {
    Char(char),
    GroupOpen(usize),
    GroupClose(usize),
    Star {
        lazy: bool,
    },
    Start,
    Dollar,
    End,
    /// A non-capturing alternation, each alternative flattened.
    Alt(Vec<Vec<Piece>>),
    /// `(?:…)?`, greedy.
    Optional(Vec<Piece>),
}

fn flatten(node: &Node, out: &mut Vec<Piece>) -> Option<()> {
    match node {
        Node::Empty => {}
        Node::Char {
            cp,
            fold: Fold::None,
        } => out.push(Piece::Char(char::from_u32(*cp)?)),
        Node::Group { index: None, node } => flatten(node, out)?,
        Node::Group {
            index: Some(i),
            node,
        } => {
            out.push(Piece::GroupOpen(*i));
            flatten(node, out)?;
            out.push(Piece::GroupClose(*i));
        }
        Node::Concat(nodes) => {
            for n in nodes {
                flatten(n, out)?;
            }
        }
        Node::Alt(alts) => {
            let mut flat = Vec::with_capacity(alts.len());
            for alt in alts {
                let mut v = Vec::new();
                flatten(alt, &mut v)?;
                flat.push(v);
            }
            out.push(Piece::Alt(flat));
        }
        Node::Repeat {
            node,
            min: 0,
            max: None,
            kind: kind @ (RepeatKind::Lazy | RepeatKind::Greedy),
        } if matches!(**node, Node::Any { dotall: true }) => out.push(Piece::Star {
            lazy: *kind == RepeatKind::Lazy,
        }),
        Node::Repeat {
            node,
            min: 0,
            max: Some(1),
            kind: RepeatKind::Greedy,
        } => {
            let mut v = Vec::new();
            flatten(node, &mut v)?;
            out.push(Piece::Optional(v));
        }
        Node::Assert(Assertion::TextStart) => out.push(Piece::Start),
        Node::Assert(Assertion::Dollar) => out.push(Piece::Dollar),
        Node::Assert(Assertion::TextEnd) => out.push(Piece::End),
        _ => return None,
    }
    Some(())
}

/// The literal every match of `root` begins with (leading characters, through groups), if any.
///
/// ```
/// let ast = chatparse_pyre::syntax::parse("<tool_call>(.*?)</tool_call>")?;
/// assert_eq!(chatparse_pyre::required_prefix(&ast.root).as_deref(), Some("<tool_call>"));
/// # Ok::<(), chatparse_pyre::RegexError>(())
/// ```
pub fn required_prefix(root: &Node) -> Option<String> {
    let mut prefix = Vec::new();
    literal_edge(root, Edge::Start, &mut prefix);
    (!prefix.is_empty()).then(|| prefix.into_iter().collect())
}

/// The literal every match of `root` ends with (trailing characters, through groups), if any:
/// [`required_prefix`] read from the other end.
///
/// ```
/// let ast = chatparse_pyre::syntax::parse("<tool_call>(.*?)</tool_call>")?;
/// assert_eq!(chatparse_pyre::required_suffix(&ast.root).as_deref(), Some("</tool_call>"));
/// let ast = chatparse_pyre::syntax::parse("a(?:b|c)")?;
/// assert_eq!(chatparse_pyre::required_suffix(&ast.root), None);
/// # Ok::<(), chatparse_pyre::RegexError>(())
/// ```
pub fn required_suffix(root: &Node) -> Option<String> {
    let mut reversed = Vec::new();
    literal_edge(root, Edge::End, &mut reversed);
    (!reversed.is_empty()).then(|| reversed.into_iter().rev().collect())
}

/// Which end of a match [`literal_edge`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Start,
    End,
}

/// Pushes the literal characters at `edge` of every match of `node` onto `out` (in reading
/// order from that edge: reversed for [`Edge::End`]); whether all of `node` is literal, so that
/// the literal goes on into what is next to it.
fn literal_edge(node: &Node, edge: Edge, out: &mut Vec<char>) -> bool {
    match node {
        Node::Char {
            cp,
            fold: Fold::None,
        } => match char::from_u32(*cp) {
            Some(c) => {
                out.push(c);
                true
            }
            None => false,
        },
        Node::Group { node, .. } => literal_edge(node, edge, out),
        Node::Concat(nodes) if edge == Edge::Start => {
            nodes.iter().all(|n| literal_edge(n, edge, out))
        }
        Node::Concat(nodes) => nodes.iter().rev().all(|n| literal_edge(n, edge, out)),
        Node::Empty => true,
        _ => false,
    }
}

/// The pieces as a literal string, if they are only characters.
fn as_literal(pieces: &[Piece]) -> Option<String> {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Char(c) => Some(*c),
            _ => None,
        })
        .collect::<Option<String>>()
        .filter(|s| !s.is_empty())
}

/// `LIT` followed by a greedy `.*`.
fn as_literal_to_end(pieces: &[Piece]) -> Option<String> {
    match pieces.split_last()? {
        (Piece::Star { lazy: false }, lit) => as_literal(lit),
        _ => None,
    }
}

struct Builder {
    literals: Vec<String>,
}

impl Builder {
    fn literal(&mut self, s: String) -> usize {
        if let Some(i) = self.literals.iter().position(|l| *l == s) {
            return i;
        }
        self.literals.push(s);
        self.literals.len() - 1
    }

    fn closer(&mut self, pieces: &[Piece]) -> Option<Closer> {
        match pieces {
            [] => Some(Closer::Empty),
            [Piece::Dollar] => Some(Closer::Dollar),
            [Piece::End] => Some(Closer::End),
            _ => {
                if let Some(lit) = as_literal(pieces) {
                    Some(Closer::Lit(self.literal(lit)))
                } else {
                    as_literal_to_end(pieces).map(|lit| Closer::LitToEnd(self.literal(lit)))
                }
            }
        }
    }

    /// The closer pieces (after the body) as ordered alternatives.
    fn closers(&mut self, pieces: &[Piece]) -> Option<Vec<Closer>> {
        match pieces {
            [Piece::Alt(alts)] => alts.iter().map(|a| self.closer(a)).collect(),
            // `(?:LIT.*)?$`: the optional part first, else `$` right there.
            [Piece::Optional(opt), Piece::Dollar] => {
                let lit = as_literal_to_end(opt)?;
                Some(vec![Closer::LitToEnd(self.literal(lit)), Closer::Dollar])
            }
            _ => Some(vec![self.closer(pieces)?]),
        }
    }
}

impl LiteralPlan {
    /// The plan for `root`, when the pattern has the recognised shape.
    pub(crate) fn new(root: &Node, group_count: usize) -> Option<Self> {
        let mut pieces = Vec::new();
        flatten(root, &mut pieces)?;
        // Walk the pieces: [^] opener [seam] body [seam] closer, recording at which boundary each
        // group marker sits (0 = start, 1 = after the opener, 2 = after the body, 3 = end).
        let mut groups = vec![(usize::MAX, usize::MAX); group_count];
        let mut anchored = false;
        let mut opener: Vec<Piece> = Vec::new();
        let mut star: Option<bool> = None;
        let mut closer_pieces: Vec<Piece> = Vec::new();
        let mut opener_done = false;
        let mut closed_in_closer = false;
        for piece in pieces {
            let boundary = match (&star, opener.is_empty(), closer_pieces.is_empty()) {
                (Some(_), _, false) => 3,
                (Some(_), _, true) => 2,
                (None, true, _) => 0,
                (None, false, _) => 1,
            };
            match piece {
                Piece::GroupOpen(g) => {
                    // A group may not open inside the closer.
                    if boundary == 3 {
                        return None;
                    }
                    if boundary == 1 {
                        opener_done = true;
                    }
                    groups.get_mut(g.checked_sub(1)?)?.0 = boundary;
                }
                Piece::GroupClose(g) => {
                    closed_in_closer |= boundary == 3;
                    if boundary == 1 {
                        opener_done = true;
                    }
                    groups.get_mut(g.checked_sub(1)?)?.1 = boundary;
                }
                Piece::Start if boundary == 0 && !anchored => anchored = true,
                Piece::Char(c) if star.is_none() && !opener_done => opener.push(Piece::Char(c)),
                Piece::Alt(alts) if star.is_none() && opener.is_empty() => {
                    opener.push(Piece::Alt(alts));
                    opener_done = true;
                }
                Piece::Star { lazy } if star.is_none() && !opener.is_empty() => star = Some(lazy),
                other if star.is_some() => {
                    // A group that closed inside the closer would split it.
                    if closed_in_closer {
                        return None;
                    }
                    closer_pieces.push(other);
                }
                _ => return None,
            }
        }
        let lazy = star?;
        if groups.iter().any(|g| g.1 == usize::MAX || g.0 > g.1) {
            return None;
        }
        let mut builder = Builder {
            literals: Vec::new(),
        };
        let openers: Vec<usize> = match opener.as_slice() {
            [Piece::Alt(alts)] => alts
                .iter()
                .map(|a| as_literal(a).map(|l| builder.literal(l)))
                .collect::<Option<_>>()?,
            chars => vec![builder.literal(as_literal(chars)?)],
        };
        let closers = builder.closers(&closer_pieces)?;
        if builder.literals.len() > MAX_LITERALS {
            return None;
        }
        // Several openers are only exact when the closer always matches somewhere (see
        // `search`), which `$`, `\Z` or nothing guarantee.
        let closer_always = closers
            .iter()
            .any(|c| matches!(c, Closer::Dollar | Closer::End | Closer::Empty));
        if openers.len() > 1 && !closer_always {
            return None;
        }
        let forward = builder
            .literals
            .iter()
            .map(|l| Finder::new(l.as_bytes()).into_owned())
            .collect();
        let backward = builder
            .literals
            .iter()
            .map(|l| FinderRev::new(l.as_bytes()).into_owned())
            .collect();
        Some(LiteralPlan {
            anchored,
            openers,
            lazy,
            closers,
            forward,
            backward,
            groups,
        })
    }

    /// First occurrence of literal `i` at or after `from`, through the cache.
    fn find(&self, i: usize, hay: &[u8], from: usize, cache: &mut ScanCache) -> Option<usize> {
        if let Some(Some((cached_from, at))) = cache.found.get(i) {
            // The first occurrence after an earlier `from` is also the first after this one,
            // unless it lies before this one.
            if *cached_from <= from && at.is_none_or(|at| at >= from) {
                return *at;
            }
        }
        let at = self
            .forward
            .get(i)?
            .find(hay.get(from..)?)
            .map(|at| at + from);
        if let Some(slot) = cache.found.get_mut(i) {
            *slot = Some((from, at));
        }
        at
    }

    /// Literal `i`'s bytes (held by its forward finder).
    fn literal(&self, i: usize) -> &[u8] {
        self.forward.get(i).map_or(&[][..], Finder::needle)
    }

    fn literal_len(&self, i: usize) -> usize {
        self.literal(i).len()
    }

    /// Whether closer `c` matches at `p`, and where the match then ends.
    fn closer_at(&self, c: &Closer, hay: &[u8], p: usize) -> Option<usize> {
        let lit_at = |i: usize| {
            let lit = self.literal(i);
            hay.get(p..)?.starts_with(lit).then_some(p + lit.len())
        };
        match *c {
            Closer::Lit(i) => lit_at(i),
            Closer::LitToEnd(i) => lit_at(i).map(|_| hay.len()),
            Closer::Dollar => {
                (p == hay.len() || (p + 1 == hay.len() && hay[p] == b'\n')).then_some(p)
            }
            Closer::End => (p == hay.len()).then_some(p),
            Closer::Empty => Some(p),
        }
    }

    /// `pattern.search(hay, pos)`: the match's group spans in Python numbering.
    ///
    /// Why it is exact. The body matches any text, so a match starting at `i` exists iff an
    /// opener sits at `i` and a closer matches somewhere at or after the body's start. With one
    /// opener the leftmost match therefore starts at the opener's first occurrence, or there is
    /// none at all (a later start only moves the body start later). With several, a closer that
    /// always matches (`$`, `\Z`, nothing) makes every opener occurrence a match; the earliest
    /// wins, with the first alternative (in pattern order) that sits there. A lazy body ends at
    /// the first position where some closer matches, a greedy one at the last; at that position
    /// the first closer alternative that matches is the one taken.
    pub(crate) fn search(&self, hay: &str, pos: usize, cache: &mut ScanCache) -> Option<Spans> {
        let bytes = hay.as_bytes();
        if pos > bytes.len() || (self.anchored && pos > 0) {
            return None;
        }
        // The opener.
        let (start, opener) = if self.anchored {
            let o = *self
                .openers
                .iter()
                .find(|&&o| bytes.starts_with(self.literal(o)))?;
            (0, o)
        } else {
            let mut best: Option<(usize, usize)> = None;
            for &o in &self.openers {
                if let Some(at) = self.find(o, bytes, pos, cache) {
                    if best.is_none_or(|(b, _)| at < b) {
                        best = Some((at, o));
                    }
                }
            }
            best?
        };
        let body = start + self.literal_len(opener);
        // The body's end.
        let end_of_body = if self.lazy {
            let mut first: Option<usize> = None;
            for c in &self.closers {
                let at = match *c {
                    Closer::Lit(i) | Closer::LitToEnd(i) => self.find(i, bytes, body, cache),
                    Closer::Dollar => Some(if bytes.last() == Some(&b'\n') && bytes.len() > body {
                        bytes.len() - 1
                    } else {
                        bytes.len()
                    }),
                    Closer::End => Some(bytes.len()),
                    Closer::Empty => Some(body),
                };
                if let Some(at) = at {
                    first = Some(first.map_or(at, |f| f.min(at)));
                }
            }
            first?
        } else {
            let mut last: Option<usize> = None;
            for c in &self.closers {
                let at = match *c {
                    Closer::Lit(i) | Closer::LitToEnd(i) => self
                        .backward
                        .get(i)?
                        .rfind(bytes.get(body..)?)
                        .map(|at| at + body),
                    Closer::Dollar | Closer::End | Closer::Empty => Some(bytes.len()),
                };
                if let Some(at) = at {
                    last = Some(last.map_or(at, |l| l.max(at)));
                }
            }
            last?
        };
        let end = self
            .closers
            .iter()
            .find_map(|c| self.closer_at(c, bytes, end_of_body))?;
        let bounds = [start, body, end_of_body, end];
        let mut spans = Spans::new(self.groups.len() + 1);
        spans.set(0, Some((start, end)));
        for (g, &(s, e)) in self.groups.iter().enumerate() {
            spans.set(g + 1, Some((*bounds.get(s)?, *bounds.get(e)?)));
        }
        Some(spans)
    }
}

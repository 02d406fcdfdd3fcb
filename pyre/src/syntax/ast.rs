//! The parsed form of a Python pattern, with every flag already resolved onto the nodes it
//! affects (case folding, `.`, `^`/`$`, ASCII classes), so that emission never has to track
//! Python's flag scoping.

/// Python's `MAXWIDTH` (`1 << 64`): widths saturate here, as in `SubPattern.getwidth`.
pub const MAXWIDTH: u128 = 1 << 64;

/// How a literal, class or backreference compares characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Exact comparison.
    None,
    /// `re.IGNORECASE` with Unicode semantics (emitted as Rust's `(?i)`).
    Unicode,
    /// `re.IGNORECASE | re.ASCII`: only ASCII letters fold.
    Ascii,
}

/// The three shorthand classes, with their negations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CategoryKind {
    Digit,
    Word,
    Space,
}

/// `\d`, `\W`, … as Python resolves them under the flags in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category {
    pub kind: CategoryKind,
    pub negated: bool,
    /// `re.ASCII` in force: the ASCII-only set.
    pub ascii: bool,
}

/// One member of a bracketed class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassItem {
    /// An inclusive code point range (a single literal is `lo == hi`). May contain
    /// surrogates, which a Rust `str` never holds; emission drops them.
    Range(u32, u32),
    Category(Category),
}

/// A character class: a union of items, possibly negated as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    pub negated: bool,
    pub items: Vec<ClassItem>,
    pub fold: Fold,
}

/// Zero-width assertions that are not look-arounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assertion {
    /// `\A`, or `^` without MULTILINE.
    TextStart,
    /// `\Z`.
    TextEnd,
    /// `$` without MULTILINE: at the end, or before a newline that ends the string.
    Dollar,
    /// `^` under MULTILINE.
    LineStart,
    /// `$` under MULTILINE.
    LineEnd,
    /// `\b`; `ascii` when `re.ASCII` is in force.
    WordBoundary { ascii: bool },
    /// `\B`; `ascii` when `re.ASCII` is in force.
    NotWordBoundary { ascii: bool },
}

/// Greedy, lazy (`*?`) or possessive (`*+`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepeatKind {
    Greedy,
    Lazy,
    Possessive,
}

/// A node of the pattern tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Empty,
    /// One code point (possibly a lone surrogate, which can never match a `str`).
    Char {
        cp: u32,
        fold: Fold,
    },
    /// `.`; `dotall` unless a scoped `(?-s:…)` turned DOTALL off.
    Any {
        dotall: bool,
    },
    Class(Class),
    Assert(Assertion),
    /// `(…)` with `index = Some(n)`, or `(?:…)`/`(?flags:…)` with `None`.
    Group {
        index: Option<usize>,
        node: Box<Node>,
    },
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        /// `None` = unbounded (Python's `MAXREPEAT`).
        max: Option<u32>,
        kind: RepeatKind,
    },
    Look {
        behind: bool,
        negated: bool,
        node: Box<Node>,
    },
    Atomic(Box<Node>),
    Backref {
        group: usize,
        fold: Fold,
    },
    /// `(?(group)yes|no)`.
    Cond {
        group: usize,
        yes: Box<Node>,
        no: Option<Box<Node>>,
    },
}

/// `(min, max)` number of characters a node can match, as Python's `getwidth` computes it.
pub type Width = (u128, u128);

impl Node {
    /// Python's `SubPattern.getwidth` for this node; `group_widths[g]` is group `g`'s width.
    pub fn width(&self, group_widths: &[Width]) -> Width {
        let (lo, hi) = match self {
            Node::Empty | Node::Assert(_) | Node::Look { .. } => (0, 0),
            Node::Char { .. } | Node::Any { .. } | Node::Class(_) => (1, 1),
            Node::Group { node, .. } | Node::Atomic(node) => node.width(group_widths),
            Node::Concat(nodes) => nodes.iter().fold((0, 0), |(lo, hi), n| {
                let (l, h) = n.width(group_widths);
                (lo + l, hi + h)
            }),
            Node::Alt(nodes) => {
                let mut lo = MAXWIDTH;
                let mut hi = 0;
                for n in nodes {
                    let (l, h) = n.width(group_widths);
                    lo = lo.min(l);
                    hi = hi.max(h);
                }
                (lo, hi)
            }
            Node::Repeat { node, min, max, .. } => {
                let (l, h) = node.width(group_widths);
                let lo = l * u128::from(*min);
                let hi = match max {
                    None if h > 0 => MAXWIDTH,
                    None => 0,
                    Some(m) => h * u128::from(*m),
                };
                (lo, hi)
            }
            Node::Backref { group, .. } => group_widths.get(*group).copied().unwrap_or((0, 0)),
            Node::Cond { yes, no, .. } => {
                let (l, h) = yes.width(group_widths);
                match no {
                    Some(no) => {
                        let (l2, h2) = no.width(group_widths);
                        (l.min(l2), h.max(h2))
                    }
                    None => (0, h),
                }
            }
        };
        (lo.min(MAXWIDTH), hi.min(MAXWIDTH))
    }

    /// Whether a capture group occurs anywhere inside.
    pub fn has_capture(&self) -> bool {
        match self {
            Node::Group { index: Some(_), .. } => true,
            Node::Group { node, .. }
            | Node::Atomic(node)
            | Node::Repeat { node, .. }
            | Node::Look { node, .. } => node.has_capture(),
            Node::Concat(nodes) | Node::Alt(nodes) => nodes.iter().any(Node::has_capture),
            Node::Cond { yes, no, .. } => {
                yes.has_capture() || no.as_ref().is_some_and(|n| n.has_capture())
            }
            _ => false,
        }
    }
}

/// The whole parsed pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ast {
    pub root: Node,
    /// Names of groups `1..=n` (index 0 unused and `None`).
    pub names: Vec<Option<String>>,
    /// Width of each group (index 0 unused), for backreference widths.
    pub group_widths: Vec<Width>,
}

impl Ast {
    /// Number of capture groups.
    pub fn group_count(&self) -> usize {
        self.names.len().saturating_sub(1)
    }
}

//! One-character matchers with Python's class semantics, for the backtracking matcher: `.`,
//! bracketed classes and the shorthand categories, decided per character with the tables in
//! `crate::unicode` (ASCII characters through a precomputed bitmap).

use crate::syntax::ast::{Category, CategoryKind, Class, ClassItem, Fold, Node};
use crate::unicode;

/// What one step of a match may consume: exactly one character with these properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// DOTALL `.`.
    Any,
    /// `.` with DOTALL scoped off.
    AnyButNewline,
    /// A class (or a single literal character), by index into the program's sets.
    Set(u32),
}

/// A Python class (case-sensitive): `negated` applied over the union of `items`.
#[derive(Debug, Clone)]
pub(crate) struct CharSet {
    /// Membership of the 128 ASCII characters, negation included.
    ascii: u128,
    negated: bool,
    items: Vec<ClassItem>,
}

impl CharSet {
    /// The set for a class node, or `None` under case folding (kept on the other engines).
    pub(crate) fn of_class(class: &Class) -> Option<Self> {
        if class.fold != Fold::None {
            return None;
        }
        Some(Self::new(class.negated, class.items.clone()))
    }

    fn new(negated: bool, items: Vec<ClassItem>) -> Self {
        let mut set = CharSet {
            ascii: 0,
            negated,
            items,
        };
        for b in 0u8..128 {
            if set.slow_contains(char::from(b)) {
                set.ascii |= 1 << b;
            }
        }
        set
    }

    /// Exactly the code point `cp` (a surrogate gives the empty set: a `str` never holds one).
    pub(crate) fn single(cp: u32) -> Self {
        Self::new(false, vec![ClassItem::Range(cp, cp)])
    }

    #[inline]
    pub(crate) fn contains(&self, c: char) -> bool {
        let cp = c as u32;
        if cp < 128 {
            return self.ascii & (1 << cp) != 0;
        }
        self.slow_contains(c)
    }

    fn slow_contains(&self, c: char) -> bool {
        let cp = c as u32;
        let hit = self.items.iter().any(|item| match *item {
            ClassItem::Range(lo, hi) => lo <= cp && cp <= hi,
            ClassItem::Category(cat) => category_contains(cat, c),
        });
        hit != self.negated
    }

    /// The ASCII bytes outside the set when it is "everything but a few ASCII characters"
    /// (`[^<]`, `[^>\n]`), so that the first character outside it is a `memchr` away.
    pub(crate) fn excluded_ascii(&self) -> Option<Vec<u8>> {
        if !self.negated {
            return None;
        }
        let mut out = Vec::new();
        for item in &self.items {
            match *item {
                ClassItem::Range(lo, hi) if hi < 128 => {
                    out.extend((lo..=hi).filter_map(|b| u8::try_from(b).ok()));
                }
                _ => return None,
            }
        }
        (out.len() <= 3).then_some(out)
    }
}

/// `\d`, `\w`, `\s` and their negations, Unicode or (`re.ASCII`) ASCII-only.
fn category_contains(cat: Category, c: char) -> bool {
    let hit = if cat.ascii {
        c.is_ascii()
            && match cat.kind {
                CategoryKind::Digit => c.is_ascii_digit(),
                CategoryKind::Word => c.is_ascii_alphanumeric() || c == '_',
                CategoryKind::Space => matches!(c, ' ' | '\t'..='\r'),
            }
    } else {
        match cat.kind {
            CategoryKind::Digit => unicode::decimal_value(c).is_some(),
            CategoryKind::Word => unicode::is_word(c),
            CategoryKind::Space => unicode::is_space(c),
        }
    };
    hit != cat.negated
}

/// Python's `\w` test behind `\b`/`\B` (`ascii` under `re.ASCII`).
pub(crate) fn is_word(c: char, ascii: bool) -> bool {
    if ascii {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        unicode::is_word(c)
    }
}

/// The character starting at byte `pos` (a char boundary), if any.
#[inline]
pub(crate) fn char_at(hay: &str, pos: usize) -> Option<char> {
    let b = *hay.as_bytes().get(pos)?;
    if b < 0x80 {
        return Some(char::from(b));
    }
    hay.get(pos..)?.chars().next()
}

/// The char boundary before `pos` (`pos > 0`, itself a boundary).
#[inline]
pub(crate) fn prev_boundary(hay: &str, pos: usize) -> usize {
    let bytes = hay.as_bytes();
    let mut p = pos.saturating_sub(1);
    while p > 0 && bytes.get(p).is_some_and(|&b| (b as i8) < -0x40) {
        p -= 1;
    }
    p
}

/// The character ending at byte `pos`, if any.
#[inline]
pub(crate) fn char_before(hay: &str, pos: usize) -> Option<char> {
    if pos == 0 {
        return None;
    }
    char_at(hay, prev_boundary(hay, pos))
}

/// The one-character item a node stands for, when it is one (a literal character, `.` or a
/// case-sensitive class, possibly inside non-capturing groups); `sets` receives new classes.
pub(crate) fn item_of(node: &Node, sets: &mut Vec<CharSet>) -> Option<Item> {
    let set = match node {
        Node::Any { dotall: true } => return Some(Item::Any),
        Node::Any { dotall: false } => return Some(Item::AnyButNewline),
        Node::Char {
            cp,
            fold: Fold::None,
        } => CharSet::single(*cp),
        Node::Class(class) => CharSet::of_class(class)?,
        Node::Group { index: None, node } => return item_of(node, sets),
        _ => return None,
    };
    let index = u32::try_from(sets.len()).ok()?;
    sets.push(set);
    Some(Item::Set(index))
}

impl Item {
    #[inline]
    pub(crate) fn matches(self, sets: &[CharSet], c: char) -> bool {
        match self {
            Item::Any => true,
            Item::AnyButNewline => c != '\n',
            Item::Set(i) => sets.get(i as usize).is_some_and(|s| s.contains(c)),
        }
    }
}

//! Turns an [`Ast`] into Rust regex syntax (for `regex` or `fancy-regex`), chooses the engine,
//! and rejects the constructs whose Python semantics neither engine reproduces.

use std::fmt::Write;

use once_cell::sync::Lazy;

use super::ast::{
    Assertion, Ast, Category, CategoryKind, Class, ClassItem, Fold, Node, RepeatKind, Width,
};
use crate::unicode;
use crate::{Engine, RegexError};

/// A class that matches nothing (Python code points a Rust `str` cannot hold).
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

static UNI_WORD: Lazy<String> = Lazy::new(|| unicode::class_for(unicode::WORD));
static UNI_DIGIT: Lazy<String> = Lazy::new(|| unicode::class_for(unicode::DECIMAL));
static UNI_SPACE: Lazy<String> = Lazy::new(|| unicode::class_for(unicode::SPACE));
const ASCII_WORD: &str = r"[0-9A-Za-z_]";
const ASCII_DIGIT: &str = r"[0-9]";
const ASCII_SPACE: &str = r"[\x{9}-\x{D}\x{20}]";

/// A no-op (`x{0}`) that fancy-regex keeps in its tree. Its optimiser rewrites some shapes
/// in ways that change captures or priorities (`(a+?)*` into `(a+?)?`, `X*Y?X+` into
/// `(?:X*Y)?X+`); a barrier between adjacent repeats and after a repeated group's content
/// keeps those shapes from appearing.
const FANCY_BARRIER: &str = r"\x{0}{0}";

/// `I`, `i`, `İ`, `ı`: one case-insensitive equivalence class for Python (its `_casefix`
/// plus `lower('İ') == 'i'`), but two singletons and a pair for Rust's simple case folding.
const I_FAMILY: [u32; 4] = [0x49, 0x69, 0x130, 0x131];
const I_FAMILY_CLASS: &str = r"[\x{49}\x{69}\x{130}\x{131}]";

/// A `$` emitted as a consuming `(\n?)\z` capture (engine `Regex` only): when that capture
/// is non-empty, Python's match (and every enclosing group) ends one byte earlier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DollarFixup {
    /// Rust capture index of the hidden `(\n?)`.
    pub rust_group: usize,
    /// Python groups enclosing the `$`, whose end moves back with group 0.
    pub python_groups: Vec<usize>,
}

/// The output of emission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Emitted {
    pub pattern: String,
    /// Rust capture index of each Python group (`[0] == 0`).
    pub group_map: Vec<usize>,
    pub fixups: Vec<DollarFixup>,
}

/// `Engine::Fancy` when the pattern needs look-around, backreferences, atomic groups,
/// conditionals, Python's `\b`/`\B`, or a `$` that the consuming form cannot replace.
pub(crate) fn choose_engine(ast: &Ast) -> Engine {
    if needs_fancy(&ast.root) || !dollars_in_tail(&ast.root, true) {
        Engine::Fancy
    } else {
        Engine::Regex
    }
}

fn needs_fancy(node: &Node) -> bool {
    match node {
        Node::Look { .. } | Node::Atomic(_) | Node::Backref { .. } | Node::Cond { .. } => true,
        Node::Assert(Assertion::WordBoundary { ascii: false })
        | Node::Assert(Assertion::NotWordBoundary { .. }) => true,
        Node::Repeat {
            kind: RepeatKind::Possessive,
            ..
        } => true,
        Node::Repeat { node, .. } | Node::Group { node, .. } => needs_fancy(node),
        Node::Concat(nodes) | Node::Alt(nodes) => nodes.iter().any(needs_fancy),
        _ => false,
    }
}

/// Matches nothing and captures nothing.
fn is_void(node: &Node) -> bool {
    match node {
        Node::Empty => true,
        Node::Group { index: None, node } => is_void(node),
        Node::Concat(nodes) => nodes.iter().all(is_void),
        _ => false,
    }
}

/// Whether every non-MULTILINE `$` is followed by nothing at all up to the end of the
/// pattern (only closing groups, alternatives and optional repeats), so that consuming the
/// final newline cannot change what else matches.
fn dollars_in_tail(node: &Node, tail: bool) -> bool {
    match node {
        Node::Assert(Assertion::Dollar) => tail,
        Node::Concat(nodes) => nodes.iter().enumerate().all(|(i, n)| {
            let rest_void = nodes[i + 1..].iter().all(is_void);
            dollars_in_tail(n, tail && rest_void)
        }),
        Node::Alt(nodes) => nodes.iter().all(|n| dollars_in_tail(n, tail)),
        Node::Group { node, .. } => dollars_in_tail(node, tail),
        Node::Repeat {
            node, max, kind, ..
        } => {
            let once = matches!(max, Some(m) if *m <= 1) && *kind != RepeatKind::Possessive;
            dollars_in_tail(node, tail && once)
        }
        Node::Look { node, .. } | Node::Atomic(node) => dollars_in_tail(node, false),
        Node::Cond { yes, no, .. } => {
            dollars_in_tail(yes, false) && no.as_ref().is_none_or(|n| dollars_in_tail(n, false))
        }
        _ => true,
    }
}

/// The order in which Python tries a node's ways of matching, abstracted to whether they
/// consume text (`n`: some path is non-empty; `e`: number of empty paths, 2 = several;
/// `bad`: an empty path is tried before a non-empty one).
#[derive(Debug, Clone, Copy)]
struct Order {
    n: bool,
    e: u8,
    bad: bool,
}

const ORDER_N: Order = Order {
    n: true,
    e: 0,
    bad: false,
};
const ORDER_E: Order = Order {
    n: false,
    e: 1,
    bad: false,
};

fn alt_order(a: Order, b: Order) -> Order {
    Order {
        n: a.n || b.n,
        e: (a.e + b.e).min(2),
        bad: a.bad || b.bad || (a.e > 0 && b.n),
    }
}

fn concat_order(p: Order, q: Order) -> Order {
    Order {
        n: p.n || (p.e > 0 && q.n),
        e: (p.e * q.e).min(2),
        bad: p.bad || q.bad || (p.e >= 2 && q.e > 0 && q.n),
    }
}

fn single_path(o: Order) -> Order {
    Order {
        n: o.n,
        e: o.e.min(1),
        bad: false,
    }
}

fn order(node: &Node, widths: &[Width]) -> Order {
    match node {
        Node::Empty | Node::Assert(_) | Node::Look { .. } => ORDER_E,
        Node::Char { .. } | Node::Any { .. } | Node::Class(_) => ORDER_N,
        Node::Group { node, .. } => order(node, widths),
        Node::Atomic(node) => single_path(order(node, widths)),
        Node::Backref { group, .. } => {
            let (lo, hi) = widths.get(*group).copied().unwrap_or((0, 0));
            if lo > 0 {
                ORDER_N
            } else if hi == 0 {
                ORDER_E
            } else {
                Order {
                    n: true,
                    e: 1,
                    bad: false,
                }
            }
        }
        Node::Concat(nodes) => nodes
            .iter()
            .fold(ORDER_E, |acc, n| concat_order(acc, order(n, widths))),
        Node::Alt(nodes) => {
            let mut it = nodes.iter().map(|n| order(n, widths));
            let first = it.next().unwrap_or(ORDER_E);
            it.fold(first, alt_order)
        }
        Node::Cond { yes, no, .. } => {
            let y = order(yes, widths);
            let n = no.as_ref().map_or(ORDER_E, |n| order(n, widths));
            Order {
                n: y.n || n.n,
                e: y.e.max(n.e),
                bad: y.bad || n.bad,
            }
        }
        Node::Repeat {
            node,
            min,
            max,
            kind,
        } => {
            let x = order(node, widths);
            let o = if *max == Some(0) {
                ORDER_E
            } else if node.width(widths).1 == 0 {
                Order {
                    n: false,
                    e: 2,
                    bad: false,
                }
            } else {
                let first = if *min >= 1 {
                    x
                } else if *kind == RepeatKind::Lazy {
                    alt_order(ORDER_E, x)
                } else {
                    alt_order(x, ORDER_E)
                };
                if *max != Some(1) && x.e > 0 && x.n {
                    Order { e: 2, ..first }
                } else {
                    first
                }
            };
            if *kind == RepeatKind::Possessive {
                single_path(o)
            } else {
                o
            }
        }
    }
}

/// Rejects what would translate but not behave like Python.
pub(crate) fn check_supported(ast: &Ast) -> Result<(), RegexError> {
    check_node(&ast.root, &ast.group_widths)?;
    check_size(&ast.root)
}

/// The largest [`expanded_size`] a pattern may have. A search's cost grows with it: the finite
/// automata step through up to that many states per input character, and the backtracking
/// engines unroll counted repeats into that many instructions. Nested counted repeats multiply
/// (`(?:a{1,100}){1,100}` is 10,000 positions, and took seconds on 3 KB), so a pattern past this
/// limit is rejected rather than left to run. The shipped schemas stay below 200.
pub const MAX_EXPANDED_SIZE: u64 = 1_000;

/// The number of positions (characters, classes, assertions, backreferences) a pattern has once
/// every counted repeat inside another repeat or of a compound body is written out: `(?:ab){2,5}`
/// is 10, `(?:a{2,})+` is 6 (three copies, twice), `(?:a{1,100}){1,100}` is 10,000. A repeat of a single character or
/// class outside any other repeat (`x{1000,70000}`) counts 1, as it is one step per character in
/// every engine (`sre`'s `REPEAT_ONE`, a counter in the automata's single thread per start).
/// Saturates at `u64::MAX`.
pub fn expanded_size(node: &Node) -> u64 {
    size_of(node, false)
}

fn size_of(node: &Node, in_repeat: bool) -> u64 {
    match node {
        Node::Empty => 0,
        Node::Char { .. }
        | Node::Any { .. }
        | Node::Class(_)
        | Node::Assert(_)
        | Node::Backref { .. } => 1,
        Node::Group { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
            size_of(node, in_repeat)
        }
        Node::Concat(nodes) | Node::Alt(nodes) => nodes
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(size_of(n, in_repeat))),
        Node::Repeat { node, min, max, .. } => {
            let single = matches!(
                node.as_ref(),
                Node::Char { .. } | Node::Any { .. } | Node::Class(_)
            );
            if single && !in_repeat {
                return 1;
            }
            let copies = match max {
                Some(m) => u64::from(*m).max(1),
                None => u64::from(*min).saturating_add(1),
            };
            size_of(node, true).saturating_mul(copies)
        }
        Node::Cond { yes, no, .. } => size_of(yes, in_repeat)
            .saturating_add(no.as_deref().map_or(0, |n| size_of(n, in_repeat))),
    }
}

fn check_size(root: &Node) -> Result<(), RegexError> {
    let size = expanded_size(root);
    if size <= MAX_EXPANDED_SIZE {
        return Ok(());
    }
    Err(RegexError::new(
        format!(
            "the pattern is too costly: its counted repeats expand to {} positions \
             (at most {MAX_EXPANDED_SIZE}), and every search would step through them for each \
             input character",
            if size == u64::MAX {
                "more than 10^19".to_owned()
            } else {
                size.to_string()
            }
        ),
        "lower the repetition counts, or use an unbounded repeat where the count does not \
         matter: (?:a{1,100})+ or a+ instead of (?:a{1,100}){1,100}",
        None,
    ))
}

fn check_node(node: &Node, widths: &[Width]) -> Result<(), RegexError> {
    match node {
        Node::Backref {
            fold: Fold::Ascii, ..
        } => Err(RegexError::new(
            "case-insensitive backreferences under the ASCII flag are not supported",
            "drop the a flag or the i flag around the backreference",
            None,
        )),
        Node::Repeat {
            node: body,
            min,
            max,
            kind,
        } => {
            let (lo, hi) = body.width(widths);
            let optional_iterations = max.is_none_or(|m| m >= 2 && m > *min);
            if lo == 0 && hi > 0 && optional_iterations {
                if body.has_capture() {
                    return Err(RegexError::new(
                        "a capture group inside a repetition whose body can match the empty \
                         string is not supported: Python keeps the captures of a final empty \
                         iteration, the Rust engines do not",
                        "make the repeated part always consume a character (e.g. (a+)* instead \
                         of (a*)*), or capture the whole repetition instead: ((?:a|b)*)",
                        None,
                    ));
                }
                if *kind != RepeatKind::Lazy && order(body, widths).bad {
                    return Err(RegexError::new(
                        "a repetition whose body prefers an empty match over a non-empty one \
                         (e.g. (?:b|a??)*) is not supported: Python stops repeating after the \
                         empty match, the Rust engines skip it",
                        "make the repeated part always consume a character, or put its empty \
                         alternative last",
                        None,
                    ));
                }
            }
            check_node(body, widths)
        }
        Node::Group { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
            check_node(node, widths)
        }
        Node::Concat(nodes) | Node::Alt(nodes) => {
            nodes.iter().try_for_each(|n| check_node(n, widths))
        }
        Node::Cond { yes, no, .. } => {
            check_node(yes, widths)?;
            no.as_ref().map_or(Ok(()), |n| check_node(n, widths))
        }
        _ => Ok(()),
    }
}

/// Emits `ast` for `engine`. With `Engine::Fancy`, `$` becomes the exact `(?=\n?\z)`;
/// with `Engine::Regex` (only chosen when every `$` is in tail position) it becomes a hidden
/// consuming capture `(\n?)\z` recorded in [`Emitted::fixups`].
pub(crate) fn emit(ast: &Ast, engine: Engine) -> Emitted {
    let mut numbering = Numbering {
        engine,
        next: 1,
        map: vec![0; ast.names.len().max(1)],
        hidden: Vec::new(),
    };
    numbering.visit(&ast.root);
    let mut e = Emitter {
        engine,
        out: String::new(),
        map: numbering.map,
        hidden: numbering.hidden.into_iter(),
        open_groups: Vec::new(),
        fixups: Vec::new(),
        widths: &ast.group_widths,
    };
    e.node(&ast.root, true);
    Emitted {
        pattern: e.out,
        group_map: e.map,
        fixups: e.fixups,
    }
}

/// Assigns Rust capture numbers in the order the emitter opens parentheses.
struct Numbering {
    engine: Engine,
    next: usize,
    map: Vec<usize>,
    hidden: Vec<usize>,
}

impl Numbering {
    fn visit(&mut self, node: &Node) {
        match node {
            Node::Group { index, node } => {
                if let Some(i) = index {
                    if let Some(slot) = self.map.get_mut(*i) {
                        *slot = self.next;
                    }
                    self.next += 1;
                }
                self.visit(node);
            }
            Node::Assert(Assertion::Dollar) if self.engine == Engine::Regex => {
                self.hidden.push(self.next);
                self.next += 1;
            }
            Node::Repeat { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
                self.visit(node)
            }
            Node::Concat(nodes) | Node::Alt(nodes) => nodes.iter().for_each(|n| self.visit(n)),
            Node::Cond { yes, no, .. } => {
                self.visit(yes);
                if let Some(no) = no {
                    self.visit(no);
                }
            }
            _ => {}
        }
    }
}

struct Emitter<'a> {
    engine: Engine,
    out: String,
    map: Vec<usize>,
    hidden: std::vec::IntoIter<usize>,
    open_groups: Vec<usize>,
    fixups: Vec<DollarFixup>,
    widths: &'a [Width],
}

impl Emitter<'_> {
    /// `bare`: the node is alone inside parentheses, so an alternation needs no group.
    fn node(&mut self, node: &Node, bare: bool) {
        match node {
            Node::Empty => {}
            Node::Char { cp, fold } => self.char(*cp, *fold),
            Node::Any { dotall: true } => self.out.push_str("(?s:.)"),
            Node::Any { dotall: false } => self.out.push_str(r"[^\n]"),
            Node::Class(class) => self.class(class),
            Node::Assert(a) => self.assertion(*a),
            Node::Group { index, node } => match index {
                Some(i) => {
                    self.out.push('(');
                    self.open_groups.push(*i);
                    self.node(node, true);
                    self.open_groups.pop();
                    self.out.push(')');
                }
                None => self.wrapped("(?:", node),
            },
            Node::Concat(nodes) => {
                for (i, n) in nodes.iter().enumerate() {
                    if self.engine == Engine::Fancy
                        && i > 0
                        && is_repeat_like(n)
                        && is_repeat_like(&nodes[i - 1])
                    {
                        self.out.push_str(FANCY_BARRIER);
                    }
                    self.node(n, false);
                }
            }
            Node::Alt(nodes) => {
                if !bare {
                    self.out.push_str("(?:");
                }
                for (i, n) in nodes.iter().enumerate() {
                    if i > 0 {
                        self.out.push('|');
                    }
                    self.node(n, true);
                }
                if !bare {
                    self.out.push(')');
                }
            }
            Node::Repeat {
                node,
                min,
                max,
                kind,
            } => self.repeat(node, *min, *max, *kind),
            Node::Look {
                behind,
                negated,
                node,
            } => {
                let open = match (behind, negated) {
                    (false, false) => "(?=",
                    (false, true) => "(?!",
                    (true, false) => "(?<=",
                    (true, true) => "(?<!",
                };
                self.wrapped(open, node);
            }
            Node::Atomic(node) => self.wrapped("(?>", node),
            Node::Backref { group, fold } => {
                let n = self.map.get(*group).copied().unwrap_or(0);
                if *fold == Fold::None {
                    let _ = write!(self.out, "(?:\\{n})");
                } else {
                    let _ = write!(self.out, "(?i:\\{n})");
                }
            }
            Node::Cond { group, yes, no } => {
                let n = self.map.get(*group).copied().unwrap_or(0);
                let _ = write!(self.out, "(?({n})");
                self.wrapped("(?:", yes);
                self.out.push('|');
                if let Some(no) = no {
                    self.wrapped("(?:", no);
                }
                self.out.push(')');
            }
        }
    }

    fn wrapped(&mut self, open: &str, node: &Node) {
        self.out.push_str(open);
        self.node(node, true);
        self.out.push(')');
    }

    fn repeat(&mut self, body: &Node, min: u32, max: Option<u32>, kind: RepeatKind) {
        if max == Some(0) {
            // Never runs, but its groups must still exist for the numbering.
            self.out.push_str("(?:");
            self.out.push_str(NEVER);
            self.wrapped("(?:", body);
            self.out.push_str("|)");
            return;
        }
        if body.width(self.widths).1 == 0 {
            // fancy-regex cannot repeat zero-width items; Python runs such a body at most
            // once per position (later iterations would repeat the same test).
            let open = if kind == RepeatKind::Possessive {
                "(?>"
            } else {
                "(?:"
            };
            self.out.push_str(open);
            if min >= 1 {
                self.node(body, true);
            } else if kind == RepeatKind::Lazy {
                self.out.push('|');
                self.wrapped("(?:", body);
            } else {
                self.wrapped("(?:", body);
                self.out.push('|');
            }
            self.out.push(')');
            return;
        }
        if kind == RepeatKind::Possessive {
            self.out.push_str("(?>");
        }
        let atom = matches!(
            body,
            Node::Group { .. } | Node::Class(_) | Node::Any { .. } | Node::Char { .. }
        );
        if let (Engine::Fancy, Some((index, inner))) = (self.engine, repeated_capture(body)) {
            // `(X+?)*` would be rewritten by fancy-regex into `(X+?)?`; keep the group's
            // content from being a bare repeat.
            self.out.push('(');
            self.open_groups.push(index);
            self.node(inner, true);
            self.open_groups.pop();
            self.out.push_str(FANCY_BARRIER);
            self.out.push(')');
        } else if atom {
            self.node(body, false);
        } else {
            self.wrapped("(?:", body);
        }
        match (min, max) {
            (0, None) => self.out.push('*'),
            (1, None) => self.out.push('+'),
            (0, Some(1)) => self.out.push('?'),
            (m, None) => {
                let _ = write!(self.out, "{{{m},}}");
            }
            (m, Some(n)) if m == n => {
                let _ = write!(self.out, "{{{m}}}");
            }
            (m, Some(n)) => {
                let _ = write!(self.out, "{{{m},{n}}}");
            }
        }
        match kind {
            RepeatKind::Greedy => {}
            RepeatKind::Lazy => self.out.push('?'),
            RepeatKind::Possessive => self.out.push(')'),
        }
    }

    fn char(&mut self, cp: u32, fold: Fold) {
        let Some(c) = char::from_u32(cp) else {
            self.out.push_str(NEVER);
            return;
        };
        match fold {
            Fold::Ascii if c.is_ascii_alphabetic() => {
                let _ = write!(
                    self.out,
                    "[{}{}]",
                    c.to_ascii_lowercase(),
                    c.to_ascii_uppercase()
                );
            }
            Fold::Unicode if I_FAMILY.contains(&cp) => {
                self.out.push_str(I_FAMILY_CLASS);
            }
            Fold::Unicode if !c.is_ascii() || c.is_ascii_alphabetic() => {
                self.out.push_str("(?i:");
                push_literal(&mut self.out, c);
                self.out.push(')');
            }
            _ => push_literal(&mut self.out, c),
        }
    }

    fn class(&mut self, class: &Class) {
        let mut body = String::new();
        for item in &class.items {
            match *item {
                ClassItem::Range(lo, hi) => {
                    push_range(&mut body, lo, hi);
                    if class.fold == Fold::Ascii {
                        for (a, z, shift) in [('a', 'z', -32i32), ('A', 'Z', 32)] {
                            let (a, z) = (a as u32, z as u32);
                            let (l, h) = (lo.max(a), hi.min(z));
                            if l <= h {
                                let sh = |v: u32| v.saturating_add_signed(shift);
                                push_range(&mut body, sh(l), sh(h));
                            }
                        }
                    }
                }
                ClassItem::Category(cat) => body.push_str(&category_class(cat)),
            }
        }
        let wrap = class.fold == Fold::Unicode;
        if wrap
            && class.items.iter().any(|item| match *item {
                ClassItem::Range(lo, hi) => I_FAMILY.iter().any(|&i| lo <= i && i <= hi),
                ClassItem::Category(_) => false,
            })
        {
            body.push_str(&I_FAMILY_CLASS[1..I_FAMILY_CLASS.len() - 1]);
        }
        if wrap {
            self.out.push_str("(?i:");
        }
        match (body.is_empty(), class.negated) {
            (true, false) => self.out.push_str(NEVER),
            (true, true) => self.out.push_str("(?s:.)"),
            (false, negated) => {
                self.out.push('[');
                if negated {
                    self.out.push('^');
                }
                self.out.push_str(&body);
                self.out.push(']');
            }
        }
        if wrap {
            self.out.push(')');
        }
    }

    fn assertion(&mut self, a: Assertion) {
        match a {
            Assertion::TextStart => self.out.push_str(r"\A"),
            Assertion::TextEnd => self.out.push_str(r"\z"),
            Assertion::LineStart => self.out.push_str("(?m:^)"),
            Assertion::LineEnd => self.out.push_str("(?m:$)"),
            Assertion::Dollar => match self.engine {
                Engine::Fancy => self.out.push_str(r"(?=\n?\z)"),
                Engine::Regex => {
                    let rust_group = self.hidden.next().unwrap_or(0);
                    self.fixups.push(DollarFixup {
                        rust_group,
                        python_groups: self.open_groups.clone(),
                    });
                    self.out.push_str(r"(\n?)\z");
                }
            },
            Assertion::WordBoundary { ascii: true } if self.engine == Engine::Regex => {
                self.out.push_str(r"(?-u:\b)");
            }
            Assertion::WordBoundary { ascii } => {
                let w = word_class(ascii);
                let _ = write!(self.out, "(?:(?<={w})(?!{w})|(?<!{w})(?={w}))");
            }
            Assertion::NotWordBoundary { ascii } => {
                // Python 3.11's \B never matches in an empty string.
                let w = word_class(ascii);
                let _ = write!(self.out, r"(?!\A\z)(?:(?<={w})(?={w})|(?<!{w})(?!{w}))");
            }
        }
    }
}

/// A repeat, possibly inside non-capturing groups (which fancy-regex drops).
fn is_repeat_like(node: &Node) -> bool {
    match node {
        Node::Repeat { .. } => true,
        Node::Group { index: None, node } => is_repeat_like(node),
        _ => false,
    }
}

/// The capture group (index and content) that `body` is, through non-capturing groups.
fn repeated_capture(body: &Node) -> Option<(usize, &Node)> {
    match body {
        Node::Group {
            index: Some(i),
            node,
        } => Some((*i, node)),
        Node::Group { index: None, node } => repeated_capture(node),
        _ => None,
    }
}

fn word_class(ascii: bool) -> &'static str {
    if ascii {
        ASCII_WORD
    } else {
        UNI_WORD.as_str()
    }
}

/// The Rust class for a Python shorthand, as a nested `[...]` or `[^...]`.
fn category_class(cat: Category) -> String {
    let base: &str = match (cat.kind, cat.ascii) {
        (CategoryKind::Digit, true) => ASCII_DIGIT,
        (CategoryKind::Word, true) => ASCII_WORD,
        (CategoryKind::Space, true) => ASCII_SPACE,
        (CategoryKind::Digit, false) => UNI_DIGIT.as_str(),
        (CategoryKind::Word, false) => UNI_WORD.as_str(),
        (CategoryKind::Space, false) => UNI_SPACE.as_str(),
    };
    if cat.negated {
        format!("[^{}", &base[1..])
    } else {
        base.to_string()
    }
}

/// Appends the scalar values of `lo..=hi` (surrogates dropped) as class members.
fn push_range(out: &mut String, lo: u32, hi: u32) {
    let mut parts = Vec::with_capacity(2);
    if lo <= 0xD7FF {
        parts.push((lo, hi.min(0xD7FF)));
    }
    if hi >= 0xE000 {
        parts.push((lo.max(0xE000), hi.min(0x10FFFF)));
    }
    for (l, h) in parts {
        if l > h {
            continue;
        }
        push_class_char(out, l);
        if h > l {
            out.push('-');
            push_class_char(out, h);
        }
    }
}

fn push_class_char(out: &mut String, cp: u32) {
    match char::from_u32(cp) {
        Some(c) if c.is_ascii_alphanumeric() => out.push(c),
        _ => {
            let _ = write!(out, "\\x{{{cp:X}}}");
        }
    }
}

/// Appends one literal character, escaped for both `regex` and `fancy-regex`.
fn push_literal(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
        out.push(c);
    } else if c.is_ascii_graphic() || c == ' ' || (!c.is_ascii() && c.is_alphanumeric()) {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", c as u32);
    }
}

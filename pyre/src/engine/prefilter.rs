//! Answers without any engine when the text holds none of a pattern's markers.
//!
//! Most calls parse short output with none of the format's delimiters in it ("Hello! How can I
//! help you today?"); every pattern still ran its engine over it, a fixed cost that dominated
//! tiny messages. Two exact shortcuts, both decided once per pattern from the syntax tree:
//!
//! - **Required literals** ([`required`]): a set `S` of literals such that every match of the
//!   pattern contains one of them as a substring of the text. A text (from the search position
//!   on) without any of them has no match. `<tool_call>(.*?)</tool_call>` requires
//!   `<tool_call>`; `^(?:\s*<think>)?(.*?</think>)` requires `</think>`.
//! - **The stripped whole message**: a pattern like qwen3's
//!   `^\s*(?:<think>…)?(?:(?P<content>\S(?:.*?\S)??)\s*)??(?:<tool_call>…)?(?:<\|im_end\|>|$)`.
//!   Every node that requires a literal (by the same analysis) cannot match anywhere in a text
//!   that holds none of those literals, so it is replaced by "fail" and the tree simplified
//!   exactly as sre would explore it: an optional or lazy-optional failing item only ever takes
//!   its empty branch, a failing alternative is never chosen, a concatenation with a failing
//!   item fails, a capture group that never matched is `None`. When what remains is
//!   `^\s*(?:(G)\s*)??$` with `G = \S(?:.*?\S)??` (DOTALL `.`, Unicode `\s`), sre's answer is
//!   known in closed form (see [`strip`]): the match is the whole text and `G` is the text
//!   stripped of Python whitespace, `None` when nothing is left.
//!
//! Both are checked by one pass over the text per marker set: `memchr` over the literals'
//! distinct first bytes (all of qwen3's five markers start with `<`), `memmem` when there are
//! more than three first bytes. Look-arounds, atomic groups, backreferences and conditionals are
//! left alone (the required-literal analysis gives them nothing, and the reduction gives up on
//! patterns containing them).

use memchr::memmem::Finder;

use super::spans::Spans;
use crate::syntax::ast::{Assertion, CategoryKind, ClassItem, Fold, Node, RepeatKind};

/// Literals such that every match contains at least one of them.
#[derive(Debug, Clone)]
pub(crate) struct Markers {
    literals: Vec<String>,
    /// Distinct first bytes of `literals`, when there are at most three.
    first_bytes: Option<Vec<u8>>,
    finders: Vec<Finder<'static>>,
}

impl Markers {
    fn new(mut literals: Vec<String>) -> Markers {
        literals.sort();
        literals.dedup();
        let mut firsts: Vec<u8> = literals.iter().map(|l| l.as_bytes()[0]).collect();
        firsts.sort_unstable();
        firsts.dedup();
        let first_bytes = (firsts.len() <= 3).then_some(firsts);
        let finders = if first_bytes.is_some() {
            Vec::new()
        } else {
            literals
                .iter()
                .map(|l| Finder::new(l.as_bytes()).into_owned())
                .collect()
        };
        Markers {
            literals,
            first_bytes,
            finders,
        }
    }

    /// Whether any of the literals occurs in `text`.
    pub(crate) fn any_in(&self, text: &[u8]) -> bool {
        let Some(firsts) = &self.first_bytes else {
            return self.finders.iter().any(|f| f.find(text).is_some());
        };
        let hit = |i: usize| {
            let rest = &text[i..];
            self.literals.iter().any(|l| rest.starts_with(l.as_bytes()))
        };
        match firsts[..] {
            [a] => memchr::memchr_iter(a, text).any(hit),
            [a, b] => memchr::memchr2_iter(a, b, text).any(hit),
            [a, b, c] => memchr::memchr3_iter(a, b, c, text).any(hit),
            _ => true,
        }
    }

    pub(crate) fn literals(&self) -> &[String] {
        &self.literals
    }
}

/// What a search returns when the text holds none of the markers.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// No match.
    NoMatch,
    /// The whole-message shape: the match spans the text from 0, capture group `group` is the
    /// text stripped of whitespace (`None` when all of it is whitespace), every other group is
    /// `None`.
    Strip { group: usize, groups: usize },
}

/// A pattern's shortcut: when the text holds none of `markers`, the answer is `outcome`.
#[derive(Debug, Clone)]
pub(crate) struct Prefilter {
    pub(crate) markers: Markers,
    pub(crate) outcome: Outcome,
}

impl Prefilter {
    /// The shortcut for a pattern with `root` and `groups` capture groups, if it has one.
    pub(crate) fn new(root: &Node, groups: usize) -> Option<Prefilter> {
        if let Some(literals) = required(root) {
            return Some(Prefilter {
                markers: Markers::new(literals),
                outcome: Outcome::NoMatch,
            });
        }
        if has_opaque(root) {
            return None;
        }
        let mut killed = Vec::new();
        let reduced = reduce(root, &mut killed)?;
        let group = strip_group(&reduced)?;
        if killed.is_empty() {
            // The pattern is the bare strip shape: no markers, nothing gained.
            return None;
        }
        Some(Prefilter {
            markers: Markers::new(killed),
            outcome: Outcome::Strip { group, groups },
        })
    }

    /// The answer of a search from byte `pos`, when it is known without an engine.
    /// `Some(None)`: no match; `None`: run the pattern.
    pub(crate) fn search(&self, hay: &str, pos: usize) -> Option<Option<Spans>> {
        let rest = hay.as_bytes().get(pos..)?;
        if self.markers.any_in(rest) {
            return None;
        }
        Some(match self.outcome {
            Outcome::NoMatch => None,
            // `^` (TextStart) matches only at 0.
            Outcome::Strip { .. } if pos > 0 => None,
            Outcome::Strip { group, groups } => {
                let mut spans = Spans::new(groups + 1);
                spans.set(0, Some((0, hay.len())));
                spans.set(group, strip(hay));
                Some(spans)
            }
        })
    }

    /// Whether a search from `pos` certainly finds nothing (for the search after an empty
    /// match, which only uses the no-match answer).
    pub(crate) fn no_match_from(&self, hay: &str, pos: usize) -> bool {
        matches!(self.outcome, Outcome::NoMatch)
            && hay
                .as_bytes()
                .get(pos..)
                .is_some_and(|rest| !self.markers.any_in(rest))
    }
}

/// The span of `G` in `^\s*(?:(G)\s*)??$`, `G = \S(?:.*?\S)??` (DOTALL), as sre finds it:
/// the greedy `\s*` takes the leading whitespace; the lazy `??` first skips the group, and `$`
/// then matches only if no non-space is left (a `\n` before the end would have been taken by
/// `\s*`); otherwise `G` starts at the first non-space and grows lazily to the first end after a
/// non-space where `\s*$` matches, which is after the last non-space (a shorter one leaves a
/// non-space before the end, and `$` before a final `\n` needs only spaces up to it). The
/// trailing greedy `\s*` then runs to the end, so the match is always the whole text.
pub(crate) fn strip(hay: &str) -> Option<(usize, usize)> {
    let start = hay.len() - hay.trim_start_matches(crate::unicode::is_space).len();
    if start == hay.len() {
        return None;
    }
    let end = hay.trim_end_matches(crate::unicode::is_space).len();
    Some((start, end))
}

/// The character an exact (unfolded) character node matches: the analyses' unit of a literal.
fn exact_char(node: &Node) -> Option<char> {
    match node {
        Node::Char {
            cp,
            fold: Fold::None,
        } => char::from_u32(*cp),
        _ => None,
    }
}

/// A set of literals every match of `node` contains one of (each as a substring of the text),
/// if the analysis finds one. Only exact (unfolded) characters count.
pub(crate) fn required(node: &Node) -> Option<Vec<String>> {
    required_ranked(node, 1)
}

/// [`required`], choosing among the candidate sets those whose literals all have at least
/// `floor` bytes first (see [`better`]).
fn required_ranked(node: &Node, floor: usize) -> Option<Vec<String>> {
    match node {
        Node::Char { .. } => exact_char(node).map(|c| vec![c.to_string()]),
        Node::Group { node, .. } | Node::Atomic(node) => required_ranked(node, floor),
        Node::Repeat { node, min, .. } if *min >= 1 => required_ranked(node, floor),
        Node::Alt(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(required_ranked(b, floor)?);
            }
            (!all.is_empty()).then_some(all)
        }
        Node::Concat(items) => {
            let mut best: Option<Vec<String>> = None;
            let mut consider = |set: Vec<String>| {
                if best.as_ref().is_none_or(|b| better(&set, b, floor)) {
                    best = Some(set);
                }
            };
            // Runs of consecutive exact characters match consecutive text.
            let mut run = String::new();
            for item in items {
                match exact_char(item) {
                    Some(c) => run.push(c),
                    None => {
                        if !run.is_empty() {
                            consider(vec![std::mem::take(&mut run)]);
                        }
                        if let Some(set) = required_ranked(item, floor) {
                            consider(set);
                        }
                    }
                }
            }
            if !run.is_empty() {
                consider(vec![run]);
            }
            best
        }
        _ => None,
    }
}

/// Which of two candidate sets the search checks. First the set whose literals all have at
/// least `floor` bytes (the reduction kills a node only with such a set: [`MIN_MARKER`]); then
/// the set none of whose literals starts with a letter, digit or white space. Why: the check is
/// a `memchr` pass over the literals' first bytes with a comparison at every hit, so its cost
/// on prose is the first bytes' frequency there — Llama 3's `^\s*(\{\s*"(?:name|type)"\s*:)`
/// hit `n` and `t` every few bytes with `name`/`type` (about 18 instructions a byte), where `{`
/// is not hit at all. Then the set whose shortest literal is longer (rarer in text), then fewer
/// literals. Every candidate is exact; the ranking only decides the cost.
fn better(a: &[String], b: &[String], floor: usize) -> bool {
    let min = |s: &[String]| s.iter().map(String::len).min().unwrap_or(0);
    let rare = |s: &[String]| {
        s.iter().all(|l| {
            l.as_bytes()
                .first()
                .is_some_and(|b| !b.is_ascii_alphanumeric() && !b.is_ascii_whitespace())
        })
    };
    let key = |s: &[String]| (min(s) >= floor, rare(s), min(s), std::cmp::Reverse(s.len()));
    key(a) > key(b)
}

/// Look-arounds, atomic groups, backreferences and conditionals: the reduction leaves patterns
/// with these alone.
fn has_opaque(node: &Node) -> bool {
    match node {
        Node::Look { .. } | Node::Atomic(_) | Node::Backref { .. } | Node::Cond { .. } => true,
        Node::Group { node, .. } | Node::Repeat { node, .. } => has_opaque(node),
        Node::Concat(items) | Node::Alt(items) => items.iter().any(has_opaque),
        _ => false,
    }
}

/// Literals of at least this many bytes make a node fail when absent (one-character literals
/// such as `{` or `"` are too common in content to be worth a check).
const MIN_MARKER: usize = 2;

/// `node` with every item that requires a marker replaced by failure (`None`), simplified;
/// the markers used are pushed to `killed`.
fn reduce(node: &Node, killed: &mut Vec<String>) -> Option<Node> {
    if let Some(set) = required_ranked(node, MIN_MARKER) {
        if set.iter().all(|l| l.len() >= MIN_MARKER) {
            killed.extend(set);
            return None;
        }
    }
    match node {
        Node::Group { index: None, node } => reduce(node, killed),
        Node::Group {
            index: Some(i),
            node,
        } => Some(Node::Group {
            index: Some(*i),
            node: Box::new(reduce(node, killed)?),
        }),
        Node::Repeat {
            node,
            min,
            max,
            kind,
        } => match reduce(node, killed) {
            Some(inner) => Some(Node::Repeat {
                node: Box::new(inner),
                min: *min,
                max: *max,
                kind: *kind,
            }),
            // Zero iterations is the only way through (a group inside never participates).
            None if *min == 0 => Some(Node::Empty),
            None => None,
        },
        Node::Alt(branches) => {
            let mut kept: Vec<Node> = Vec::new();
            for b in branches {
                if let Some(r) = reduce(b, killed) {
                    kept.push(r);
                }
            }
            match kept.len() {
                0 => None,
                1 => kept.pop(),
                _ => Some(Node::Alt(kept)),
            }
        }
        Node::Concat(items) => {
            let mut out = Vec::new();
            for item in items {
                match reduce(item, killed)? {
                    Node::Empty => {}
                    Node::Concat(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            Some(match out.len() {
                0 => Node::Empty,
                1 => out.pop().unwrap_or(Node::Empty),
                _ => Node::Concat(out),
            })
        }
        other => Some(other.clone()),
    }
}

/// `Some(true)` for `\S`, `Some(false)` for `\s` (Unicode, as a one-item class).
fn space_class(node: &Node) -> Option<bool> {
    let Node::Class(class) = node else {
        return None;
    };
    match class.items[..] {
        [ClassItem::Category(cat)] if cat.kind == CategoryKind::Space && !cat.ascii => {
            Some(cat.negated != class.negated)
        }
        _ => None,
    }
}

fn is_star(node: &Node, kind: RepeatKind, item: impl Fn(&Node) -> bool) -> bool {
    matches!(node, Node::Repeat { node, min: 0, max: None, kind: k } if *k == kind && item(node))
}

fn is_lazy_opt(node: &Node) -> Option<&Node> {
    match node {
        Node::Repeat {
            node,
            min: 0,
            max: Some(1),
            kind: RepeatKind::Lazy,
        } => Some(unwrap_concat(node)),
        _ => None,
    }
}

fn unwrap_concat(node: &Node) -> &Node {
    match node {
        Node::Group { index: None, node } => unwrap_concat(node),
        _ => node,
    }
}

fn is_ws_star(node: &Node) -> bool {
    is_star(node, RepeatKind::Greedy, |n| space_class(n) == Some(false))
}

/// The group index when `node` is exactly `^\s*(?:(G)\s*)??$`, `G = \S(?:.*?\S)??`.
fn strip_group(node: &Node) -> Option<usize> {
    let Node::Concat(items) = node else {
        return None;
    };
    let [Node::Assert(Assertion::TextStart), lead, opt, Node::Assert(Assertion::Dollar)] =
        &items[..]
    else {
        return None;
    };
    if !is_ws_star(lead) {
        return None;
    }
    let Node::Concat(body) = is_lazy_opt(opt)? else {
        return None;
    };
    let [Node::Group {
        index: Some(group),
        node: g,
    }, trail] = &body[..]
    else {
        return None;
    };
    if !is_ws_star(trail) {
        return None;
    }
    let Node::Concat(g) = unwrap_concat(g) else {
        return None;
    };
    let [first, rest] = &g[..] else {
        return None;
    };
    if space_class(first) != Some(true) {
        return None;
    }
    let Node::Concat(rest) = is_lazy_opt(rest)? else {
        return None;
    };
    let [dots, last] = &rest[..] else {
        return None;
    };
    let dotall_lazy = is_star(dots, RepeatKind::Lazy, |n| {
        matches!(n, Node::Any { dotall: true })
    });
    (dotall_lazy && space_class(last) == Some(true)).then_some(*group)
}

/// The shape `^(?:L X)?Y` with `L` a literal, answered for a text `L + R` where `R` starts with
/// a non-space character and holds none of the markers: sre tries the optional group first, `L`
/// matches, and `X` (its marker items failing, as in [`Prefilter::new`]) reduces to the
/// whole-message shape, so by [`strip`] it matches all of `R` with group `group` = `R` stripped
/// (never `None`: `R` starts with a non-space) and every other group of `X` not taking part.
/// `Y` then runs at the end of the text, and it too reduces to the whole-message shape, whose
/// first path at the end is `\s*` empty, its group skipped, `$`: every group of `Y` takes no
/// part. (`X` ends in `$` after a greedy `\s*`, so it ends at the very end.) This is what
/// DeepSeek R1's, ERNIE 4.5's and MiniMax M2's root patterns answer after their substitution
/// `^\s*([^<\s])` → `<think>\1` put `<think>` in front of a plain answer. Two wider shapes give
/// the same answer: `^(?:(?:L X)?Y)?` (the outer group is taken), and `X Y` that reduce only
/// together, to a head and then the whole-message shape ([`after_a_head`]): the literal is then
/// `L` and the head's text, which is what functionary v3.2's root pattern answers on its plain
/// answer `>>>all\n…`.
#[derive(Debug, Clone)]
pub(crate) struct AfterLiteral {
    pub(crate) literal: String,
    pub(crate) group: usize,
    /// The markers of `X` and `Y`.
    pub(crate) markers: Vec<String>,
}

pub(crate) fn after_literal(root: &Node) -> Option<AfterLiteral> {
    if has_opaque(root) {
        return None;
    }
    let Node::Concat(items) = root else {
        return None;
    };
    let items = whole_optional(items);
    let [Node::Assert(Assertion::TextStart), Node::Repeat {
        node,
        min: 0,
        max: Some(1),
        kind: RepeatKind::Greedy,
    }, rest @ ..] = &items[..]
    else {
        return None;
    };
    let Node::Concat(body) = unwrap_concat(node) else {
        return None;
    };
    let mut literal = String::new();
    let mut x = body.iter().peekable();
    while let Some(c) = x.peek().and_then(|n| exact_char(n)) {
        literal.push(c);
        x.next();
    }
    if literal.is_empty() {
        return None;
    }
    let x: Vec<Node> = x.cloned().collect();
    let (head, group, mut markers) = separately(&x, rest).or_else(|| after_a_head(&x, rest))?;
    literal.push_str(&head);
    markers.sort();
    markers.dedup();
    // A marker holding another is absent whenever that one is (`>>>all` beside `>>>`).
    let all = markers.clone();
    markers.retain(|m| !all.iter().any(|o| o != m && m.contains(o.as_str())));
    Some(AfterLiteral {
        literal,
        group,
        markers,
    })
}

/// `items` without a greedy optional group around all that follows `^`: for `^(?:Z)?`, the
/// items of `^Z`. Why that is exact here: sre tries `Z` first, and every answer this module
/// gives is a match, so `Z`'s match is the pattern's.
fn whole_optional(items: &[Node]) -> Vec<Node> {
    if let [start @ Node::Assert(Assertion::TextStart), Node::Repeat {
        node,
        min: 0,
        max: Some(1),
        kind: RepeatKind::Greedy,
    }] = items
    {
        if let Node::Concat(inner) = unwrap_concat(node) {
            let mut out = vec![start.clone()];
            out.extend(inner.iter().cloned());
            return out;
        }
    }
    items.to_vec()
}

fn anchored(tail: &[Node]) -> Node {
    let mut items = vec![Node::Assert(Assertion::TextStart)];
    items.extend(tail.iter().cloned());
    Node::Concat(items)
}

/// `X` and `Y` each reduce to the whole-message shape (DeepSeek R1's `^(?:<think>…(?:</think>|$))?…`):
/// no head, `X`'s group, and the markers.
fn separately(x: &[Node], y: &[Node]) -> Option<(String, usize, Vec<String>)> {
    let mut markers = Vec::new();
    let group = strip_group(&reduce(&anchored(x), &mut markers)?)?;
    strip_group(&reduce(&anchored(y), &mut markers)?)?;
    Some((String::new(), group, markers))
}

/// `X Y` together reduce to a head `H` and then the whole-message shape (functionary v3.2's
/// `^(?:(?:>>>all[ \t]*\r?\n\s*(?:(?P<content>…)\s*)??)?(?:(?P<tool_calls>>>>…)\s*)?(?:…|$))?`:
/// `H` = `[ \t]*\r?\n`, and the `$` that ends the whole-message shape is `Y`'s). Reading `X Y` as
/// one concatenation is exact because sre, having taken the optional group, backtracks into
/// `X` before it gives the group up, and this concatenation has a match. The head's text `h`
/// ([`head_text`]) is what the returned literal adds after `L`: on `L + h + R`, `H` matches `h`
/// and nothing else, and the whole-message shape then reads `R`.
fn after_a_head(x: &[Node], y: &[Node]) -> Option<(String, usize, Vec<String>)> {
    let mut markers = Vec::new();
    let mut joined = x.to_vec();
    joined.extend(y.iter().cloned());
    let Node::Concat(items) = reduce(&anchored(&joined), &mut markers)? else {
        return None;
    };
    // `^`, the head, then `\s*`, the lazy optional group and `$`.
    let head = items.get(1..items.len().checked_sub(3)?)?;
    let group = strip_group(&anchored(items.get(items.len() - 3..)?))?;
    Some((head_text(head)?, group, markers))
}

/// The text `h` a head matches when the text continues with `h` and then a character that is
/// not white space, if sre has no other way to match it there: the head's exact characters
/// spell `h`, and each of its other items is a greedy or lazy optional repetition (`?`, `*`)
/// of one character class that matches neither the next exact character (so it repeats zero
/// times: a greedy one's first try fails, a lazy one's first choice is zero and the rest
/// matches) nor, with no exact character after it, any character at all (refused). No group
/// may take part.
fn head_text(head: &[Node]) -> Option<String> {
    let mut text = String::new();
    let mut pending: Vec<&Node> = Vec::new();
    let mut sets = Vec::new();
    for item in head {
        match item {
            Node::Char { .. } => {
                let c = exact_char(item)?;
                for optional in pending.drain(..) {
                    let one = super::charset::item_of(optional, &mut sets)?;
                    if one.matches(&sets, c) {
                        return None;
                    }
                }
                text.push(c);
            }
            Node::Repeat {
                node,
                min: 0,
                kind: RepeatKind::Greedy | RepeatKind::Lazy,
                ..
            } if !matches!(&**node, Node::Group { index: Some(_), .. }) => pending.push(node),
            _ => return None,
        }
    }
    pending.is_empty().then_some(text)
}

/// The literal `L` when `root` is exactly `^\s*(?:L)?` (Unicode `\s`, both greedy, `L` exact
/// characters): on a text that does not hold `L`, the greedy `\s*` takes the leading white
/// space and `L` cannot follow it, so the match is that white space, at 0 and nowhere else
/// (`^`); `re.sub` with the replacement `L` then writes `L` in front of the text with its
/// leading white space removed. Functionary v3.2's root substitution `^\s*(?:>>>)?` → `>>>`.
pub(crate) fn optional_literal_after_space(root: &Node) -> Option<String> {
    let Node::Concat(items) = root else {
        return None;
    };
    let [Node::Assert(Assertion::TextStart), lead, Node::Repeat {
        node,
        min: 0,
        max: Some(1),
        kind: RepeatKind::Greedy,
    }] = &items[..]
    else {
        return None;
    };
    if !is_ws_star(lead) {
        return None;
    }
    let chars = match unwrap_concat(node) {
        Node::Concat(chars) => &chars[..],
        one => std::slice::from_ref(one),
    };
    let literal = chars.iter().map(exact_char).collect::<Option<String>>()?;
    (!literal.is_empty()).then_some(literal)
}

/// The characters `E` when `root` is exactly `^\s*([^E\s])` (Unicode `\s`, `E` literal
/// characters, group 1): the pattern matches exactly when the text's first non-space character
/// exists and is not in `E` (the greedy `\s*` takes every leading space; giving one back puts a
/// space, which the class refuses, in front of the group), and group 1 is that character.
pub(crate) fn first_non_space_except(root: &Node) -> Option<Vec<char>> {
    let Node::Concat(items) = root else {
        return None;
    };
    let [Node::Assert(Assertion::TextStart), lead, Node::Group {
        index: Some(1),
        node,
    }] = &items[..]
    else {
        return None;
    };
    if !is_ws_star(lead) {
        return None;
    }
    let Node::Class(class) = &**node else {
        return None;
    };
    if !class.negated || class.fold != Fold::None {
        return None;
    }
    let mut except = Vec::new();
    let mut space = false;
    for item in &class.items {
        match item {
            ClassItem::Category(cat)
                if cat.kind == CategoryKind::Space && !cat.ascii && !cat.negated =>
            {
                space = true
            }
            ClassItem::Range(lo, hi) if lo == hi => except.push(char::from_u32(*lo)?),
            _ => return None,
        }
    }
    space.then_some(except)
}

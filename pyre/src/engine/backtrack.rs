//! A backtracking matcher with Python `sre` semantics, for patterns the finite-automata engine
//! cannot run as written (a `$` in mid-pattern, look-around) and whose lazy loops the
//! automata would walk byte by byte.
//!
//! It tries alternatives, repeats and lazy loops in exactly the order `sre` does (greedy: most
//! first; lazy: fewest first; alternatives left to right; captures restored on backtracking), so
//! its matches are `re`'s. What it adds is the skip of [`super::lead`]: a lazy loop whose
//! continuation needs a literal, `$` or `\Z` within a few class steps jumps straight to the
//! nearest place it can succeed, found by substring search. That turns the whole-message
//! patterns of most schemas (`^\s*(?:<think>\s*(?:(?P<r>\S(?:.*?\S)??)\s*)??(?:</think>|$)…`)
//! from a scan of every byte into a handful of `memmem` calls.
//!
//! Supported: literals, `.`, case-sensitive classes, every assertion, groups, alternation,
//! greedy and lazy repeats (of bodies that always consume, or at most once),
//! look-ahead and fixed-width look-behind. Anything else (case folding, backreferences,
//! conditionals, atomic groups, possessive repeats) keeps the other engines. A step budget
//! turns catastrophic backtracking into an `Err(())` ("gave up") that the caller answers with
//! the finite automata, or reports as too costly when only a backtracker can run the pattern.

use super::charset::{self, CharSet, Item};
use super::lead::{Cont, GroupCache, Skip};
use super::spans::Spans;
use crate::syntax::ast::{Assertion, Ast, Node, RepeatKind};

/// Complex repeats are unrolled: counts above this keep the other engines.
const MAX_UNROLL: u32 = 64;
/// Instructions above this keep the other engines.
const MAX_PROGRAM: usize = 20_000;

#[derive(Debug)]
enum Inst {
    Lit(Box<str>),
    One(Item),
    Assert(Assertion),
    /// Records the position in capture slot `n`.
    Save(u32),
    /// Tries `first`, then on failure `second`.
    Split(u32, u32),
    Jump(u32),
    /// A single-character repeat (`sre`'s `REPEAT_ONE`/`MIN_REPEAT_ONE`); continues at the next
    /// instruction. `max == u32::MAX` is unbounded.
    Repeat {
        item: Item,
        min: u32,
        max: u32,
        greedy: bool,
        skip: Option<u32>,
    },
    /// A lazy unbounded repeat of a deterministic alternation (`(?:[^<]|<\|channel\|>)*?`,
    /// see [`AltBody`]); continues at the next instruction.
    LazyAlt {
        body: u32,
        min: u32,
        skip: Option<u32>,
    },
    /// A look-around whose body starts at the next instruction and ends with `LookEnd`; `behind`
    /// is the body's width in characters for a look-behind.
    Look {
        behind: Option<u32>,
        negated: bool,
        next: u32,
    },
    LookEnd,
    Match,
}

/// A compiled pattern for the backtracking matcher.
#[derive(Debug)]
pub(crate) struct Program {
    insts: Vec<Inst>,
    sets: Vec<CharSet>,
    /// For each set that is "anything but a few ASCII characters", those characters.
    stops: Vec<Option<Vec<u8>>>,
    /// The bodies of `LazyAlt` loops.
    alts: Vec<AltBody>,
    /// Each lazy loop's skip, with the offset of its entries in the search's cache slice.
    skips: Vec<(Skip, usize)>,
    /// Where a match can start (a skip over the whole pattern), when known; its cache entries
    /// come first.
    start_skip: Option<Skip>,
    cache_len: usize,
    /// Every match starts at the beginning of the text (`^`/`\A` leads every path).
    anchored: bool,
    groups: usize,
}

struct Compiler {
    insts: Vec<Inst>,
    sets: Vec<CharSet>,
    skips: Vec<Skip>,
    alts: Vec<AltBody>,
}

/// The body of a lazy loop that is an alternation of at most one one-character item and
/// literals, such that at most one branch can match at any position: the item matches no
/// literal's first character, and no literal is a prefix of another. Each iteration then has a
/// single way to go on, so the loop backtracks like a one-character repeat (one frame, one
/// position) instead of through a `Split` per character, and a skip can walk the text between
/// with `memchr` over the item's stop bytes (`<` for `[^<]`).
#[derive(Debug)]
struct AltBody {
    item: Option<Item>,
    lits: Vec<Box<str>>,
}

impl AltBody {
    fn of(body: &Node, sets: &mut Vec<CharSet>) -> Option<AltBody> {
        let branches = match body {
            Node::Group { index: None, node } => match node.as_ref() {
                Node::Alt(branches) => branches,
                _ => return None,
            },
            Node::Alt(branches) => branches,
            _ => return None,
        };
        let mut item = None;
        let mut lits: Vec<Box<str>> = Vec::new();
        for branch in branches {
            if let Some(lit) = literal_of(branch) {
                if lit.chars().count() > 1 {
                    lits.push(lit.into_boxed_str());
                    continue;
                }
            }
            match charset::item_of(branch, sets) {
                Some(found) if item.is_none() => item = Some(found),
                _ => return None,
            }
        }
        for (i, lit) in lits.iter().enumerate() {
            let first = lit.chars().next()?;
            if item.is_some_and(|item| item.matches(sets, first)) {
                return None;
            }
            let clash = lits
                .iter()
                .enumerate()
                .any(|(j, other)| i != j && other.starts_with(&**lit));
            if clash {
                return None;
            }
        }
        (!lits.is_empty()).then_some(AltBody { item, lits })
    }
}

/// The text of a node that is a plain (case-sensitive) literal of one or more characters.
fn literal_of(node: &Node) -> Option<String> {
    let one = |n: &Node| match n {
        Node::Char {
            cp,
            fold: crate::syntax::ast::Fold::None,
        } => char::from_u32(*cp),
        _ => None,
    };
    match node {
        Node::Group { index: None, node } => literal_of(node),
        Node::Concat(nodes) if !nodes.is_empty() => nodes.iter().map(one).collect(),
        other => one(other).map(String::from),
    }
}

impl Compiler {
    fn emit(&mut self, inst: Inst) -> Option<u32> {
        if self.insts.len() >= MAX_PROGRAM {
            return None;
        }
        self.insts.push(inst);
        u32::try_from(self.insts.len() - 1).ok()
    }

    /// The skip of a lazy loop followed by `cont`, registered in the program: `Some(None)` when
    /// the continuation gives no bound, `None` when the program is too large.
    fn lazy_skip(&mut self, cont: &Cont<'_>) -> Option<Option<u32>> {
        match Skip::of(cont, &mut self.sets) {
            Some(skip) => {
                self.skips.push(skip);
                Some(Some(u32::try_from(self.skips.len() - 1).ok()?))
            }
            None => Some(None),
        }
    }

    fn here(&self) -> u32 {
        u32::try_from(self.insts.len()).unwrap_or(u32::MAX)
    }

    fn patch(&mut self, at: u32, target: u32, second: bool) {
        match self.insts.get_mut(at as usize) {
            Some(Inst::Split(a, b)) => {
                if second {
                    *b = target;
                } else {
                    *a = target;
                }
            }
            Some(Inst::Jump(t)) => *t = target,
            Some(Inst::Look { next, .. }) => *next = target,
            _ => {}
        }
    }

    fn seq(&mut self, nodes: &[Node], cont: &Cont<'_>) -> Option<()> {
        let mut i = 0;
        while i < nodes.len() {
            // Consecutive literal characters become one literal.
            let mut lit = String::new();
            while let Some(Node::Char {
                cp,
                fold: crate::syntax::ast::Fold::None,
            }) = nodes.get(i)
            {
                match char::from_u32(*cp) {
                    Some(c) => lit.push(c),
                    None => break,
                }
                i += 1;
            }
            if !lit.is_empty() {
                self.emit(Inst::Lit(lit.into_boxed_str()))?;
                continue;
            }
            self.node(&nodes[i], &Cont::Then(&nodes[i + 1..], cont))?;
            i += 1;
        }
        Some(())
    }

    fn node(&mut self, node: &Node, cont: &Cont<'_>) -> Option<()> {
        match node {
            Node::Empty => Some(()),
            Node::Char { .. } | Node::Any { .. } | Node::Class(_) => {
                match charset::item_of(node, &mut self.sets) {
                    Some(item) => self.emit(Inst::One(item)).map(drop),
                    None => None,
                }
            }
            Node::Assert(a) => self.emit(Inst::Assert(*a)).map(drop),
            Node::Group { index, node } => {
                let Some(g) = index else {
                    return self.node(node, cont);
                };
                let g = u32::try_from(*g).ok()?;
                self.emit(Inst::Save(2 * g))?;
                self.node(node, cont)?;
                self.emit(Inst::Save(2 * g + 1)).map(drop)
            }
            Node::Concat(nodes) => self.seq(nodes, cont),
            Node::Alt(branches) => {
                let mut jumps = Vec::new();
                for (i, branch) in branches.iter().enumerate() {
                    if i + 1 == branches.len() {
                        self.node(branch, cont)?;
                    } else {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.patch(split, split + 1, false);
                        self.node(branch, cont)?;
                        jumps.push(self.emit(Inst::Jump(0))?);
                        let next = self.here();
                        self.patch(split, next, true);
                    }
                }
                let end = self.here();
                for j in jumps {
                    self.patch(j, end, false);
                }
                Some(())
            }
            Node::Repeat {
                node: body,
                min,
                max,
                kind,
            } => self.repeat(body, *min, *max, *kind, cont),
            Node::Look {
                behind,
                negated,
                node: body,
            } => {
                let width = if *behind {
                    let (lo, hi) = body.width(&[]);
                    if lo != hi || body.has_backref() {
                        return None;
                    }
                    Some(u32::try_from(lo).ok()?)
                } else {
                    None
                };
                let look = self.emit(Inst::Look {
                    behind: width,
                    negated: *negated,
                    next: 0,
                })?;
                self.node(body, &Cont::Opaque)?;
                self.emit(Inst::LookEnd)?;
                let next = self.here();
                self.patch(look, next, false);
                Some(())
            }
            Node::Atomic(_) | Node::Backref { .. } | Node::Cond { .. } => None,
        }
    }

    fn repeat(
        &mut self,
        body: &Node,
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
        cont: &Cont<'_>,
    ) -> Option<()> {
        let greedy = match kind {
            RepeatKind::Greedy => true,
            RepeatKind::Lazy => false,
            RepeatKind::Possessive => return None,
        };
        if let Some(item) = charset::item_of(body, &mut self.sets) {
            let skip = if greedy || max.is_some() {
                None
            } else {
                self.lazy_skip(cont)?
            };
            return self
                .emit(Inst::Repeat {
                    item,
                    min,
                    max: max.unwrap_or(u32::MAX),
                    greedy,
                    skip,
                })
                .map(drop);
        }
        if !greedy && max.is_none() && min <= MAX_UNROLL {
            if let Some(alt) = AltBody::of(body, &mut self.sets) {
                let skip = self.lazy_skip(cont)?;
                self.alts.push(alt);
                let body = u32::try_from(self.alts.len() - 1).ok()?;
                return self.emit(Inst::LazyAlt { body, min, skip }).map(drop);
            }
        }
        let (lo, _) = body.width(&[]);
        let once = max.is_some_and(|m| m <= 1);
        if lo == 0 && !once {
            // sre stops repeating a body that matched empty where the previous iteration
            // started; leave such repeats to the engines that implement that rule. (With at
            // most one iteration the rule never applies: sre's `MAX_UNTIL`/`MIN_UNTIL` then try
            // the body and the tail in plain backtracking order, restoring marks between.)
            return None;
        }
        if min > MAX_UNROLL || max.is_some_and(|m| m > MAX_UNROLL) {
            return None;
        }
        let body_cont = if once { cont } else { &Cont::Opaque };
        for _ in 0..min {
            self.node(body, body_cont)?;
        }
        match max {
            None => {
                let top = self.emit(Inst::Split(0, 0))?;
                self.node(body, &Cont::Opaque)?;
                self.emit(Inst::Jump(top))?;
                let after = self.here();
                if greedy {
                    self.patch(top, top + 1, false);
                    self.patch(top, after, true);
                } else {
                    self.patch(top, after, false);
                    self.patch(top, top + 1, true);
                }
            }
            Some(max) => {
                let mut splits = Vec::new();
                for _ in min..max {
                    let split = self.emit(Inst::Split(0, 0))?;
                    splits.push(split);
                    self.node(body, body_cont)?;
                }
                let after = self.here();
                for split in splits {
                    if greedy {
                        self.patch(split, split + 1, false);
                        self.patch(split, after, true);
                    } else {
                        self.patch(split, after, false);
                        self.patch(split, split + 1, true);
                    }
                }
            }
        }
        Some(())
    }
}

impl Node {
    fn has_backref(&self) -> bool {
        match self {
            Node::Backref { .. } => true,
            Node::Group { node, .. }
            | Node::Atomic(node)
            | Node::Repeat { node, .. }
            | Node::Look { node, .. } => node.has_backref(),
            Node::Concat(nodes) | Node::Alt(nodes) => nodes.iter().any(Node::has_backref),
            Node::Cond { .. } => true,
            _ => false,
        }
    }
}

/// Whether every match must start at the beginning of the text.
pub(crate) fn starts_anchored(node: &Node) -> bool {
    match node {
        Node::Assert(Assertion::TextStart) => true,
        Node::Group { node, .. } | Node::Atomic(node) => starts_anchored(node),
        Node::Concat(nodes) => nodes.first().is_some_and(starts_anchored),
        Node::Alt(nodes) => nodes.iter().all(starts_anchored),
        _ => false,
    }
}

/// A saved way to resume, or a capture to restore, on failure.
#[derive(Debug, Clone, Copy)]
enum Frame {
    Resume {
        pc: u32,
        pos: usize,
    },
    Restore {
        slot: u32,
        old: Option<usize>,
    },
    /// A greedy repeat that may give back characters down to `min_pos`.
    Greedy {
        next: u32,
        min_pos: usize,
        pos: usize,
    },
    /// A lazy repeat at `pc` that has matched `count` items up to `pos`.
    Lazy {
        pc: u32,
        pos: usize,
        count: u32,
    },
}

/// The outcome of one attempt.
enum Outcome {
    Matched(usize),
    Failed,
    /// The step budget ran out.
    GaveUp,
}

/// Per-search state.
struct Run<'p, 'h> {
    prog: &'p Program,
    hay: &'h str,
    slots: Vec<Option<usize>>,
    caches: Vec<GroupCache>,
    budget: u64,
    /// `Some(p)`: an empty match at `p` does not count (sre's `must_advance`).
    not_empty_at: Option<usize>,
    /// Backtracking stacks to reuse (one per nesting level of look-arounds).
    pool: Vec<Vec<Frame>>,
}

impl Program {
    /// Compiles `ast`, or `None` when it uses something this matcher leaves to other engines.
    pub(crate) fn compile(ast: &Ast) -> Option<Program> {
        let mut c = Compiler {
            insts: Vec::new(),
            sets: Vec::new(),
            skips: Vec::new(),
            alts: Vec::new(),
        };
        c.node(&ast.root, &Cont::End)?;
        c.emit(Inst::Match)?;
        let root = std::slice::from_ref(&ast.root);
        let start_skip = Skip::of(&Cont::Then(root, &Cont::End), &mut c.sets);
        let mut cache_len = start_skip.as_ref().map_or(0, Skip::cache_len);
        let skips = c
            .skips
            .into_iter()
            .map(|skip| {
                let offset = cache_len;
                cache_len += skip.cache_len();
                (skip, offset)
            })
            .collect();
        Some(Program {
            insts: c.insts,
            stops: c.sets.iter().map(CharSet::excluded_ascii).collect(),
            sets: c.sets,
            alts: c.alts,
            skips,
            start_skip,
            cache_len,
            anchored: starts_anchored(&ast.root),
            groups: ast.group_count(),
        })
    }

    /// `pattern.search(hay, pos)`: the leftmost match starting at or after `pos`, with Python's
    /// groups; with `not_empty_at = Some(pos)`, an empty match at `pos` is passed over.
    /// Every step taken is subtracted from `budget`; `Err(())` when it ran out (the caller asks
    /// another engine or reports the pattern as too costly).
    pub(crate) fn search(
        &self,
        hay: &str,
        pos: usize,
        not_empty_at: Option<usize>,
        budget: &mut u64,
    ) -> Result<Option<Spans>, ()> {
        if pos > hay.len() {
            return Ok(None);
        }
        let mut scratch = SCRATCH.take().unwrap_or_default();
        scratch.slots.clear();
        scratch.slots.resize(2 * (self.groups + 1), None);
        scratch.caches.clear();
        scratch.caches.resize(self.cache_len, GroupCache::default());
        let mut run = Run {
            prog: self,
            hay,
            slots: std::mem::take(&mut scratch.slots),
            caches: std::mem::take(&mut scratch.caches),
            budget: *budget,
            not_empty_at,
            pool: std::mem::take(&mut scratch.pool),
        };
        let found = run.search_from(pos);
        *budget = run.budget;
        scratch.slots = run.slots;
        scratch.caches = run.caches;
        scratch.pool = run.pool;
        SCRATCH.set(Some(scratch));
        found
    }
}

/// Reusable allocations of a search, one set per thread (a nested search, from a look-around
/// callback or another thread, simply builds its own).
#[derive(Default)]
struct Scratch {
    slots: Vec<Option<usize>>,
    caches: Vec<GroupCache>,
    pool: Vec<Vec<Frame>>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

impl Run<'_, '_> {
    fn search_from(&mut self, pos: usize) -> Result<Option<Spans>, ()> {
        let prog = self.prog;
        let hay = self.hay;
        let mut at = pos;
        loop {
            if prog.anchored && at > 0 {
                return Ok(None);
            }
            if let Some(skip) = &prog.start_skip {
                let cache = self.caches.get_mut(..skip.cache_len()).unwrap_or_default();
                match skip.lower_bound(hay, at, &prog.sets, cache) {
                    Some(next) => at = next,
                    None => return Ok(None),
                }
                if prog.anchored && at > 0 {
                    return Ok(None);
                }
            }
            self.slots.iter_mut().for_each(|s| *s = None);
            match self.attempt(0, at) {
                Outcome::Matched(end) => {
                    let mut spans = Spans::new(prog.groups + 1);
                    spans.set(0, Some((at, end)));
                    for g in 1..=prog.groups {
                        if let (Some(Some(s)), Some(Some(e))) =
                            (self.slots.get(2 * g), self.slots.get(2 * g + 1))
                        {
                            spans.set(g, Some((*s, *e)));
                        }
                    }
                    return Ok(Some(spans));
                }
                Outcome::GaveUp => return Err(()),
                Outcome::Failed => {}
            }
            if at >= hay.len() {
                return Ok(None);
            }
            at += charset::char_at(hay, at).map_or(1, char::len_utf8);
        }
    }
}

impl Run<'_, '_> {
    fn assert(&self, a: Assertion, pos: usize) -> bool {
        let hay = self.hay;
        let len = hay.len();
        match a {
            Assertion::TextStart => pos == 0,
            Assertion::TextEnd => pos == len,
            Assertion::Dollar => pos == len || (pos + 1 == len && hay.as_bytes()[pos] == b'\n'),
            Assertion::LineStart => pos == 0 || hay.as_bytes()[pos - 1] == b'\n',
            Assertion::LineEnd => pos == len || hay.as_bytes()[pos] == b'\n',
            Assertion::WordBoundary { ascii } | Assertion::NotWordBoundary { ascii } => {
                if len == 0 {
                    // Python 3.11: neither \b nor \B matches in an empty string.
                    return false;
                }
                let before =
                    charset::char_before(hay, pos).is_some_and(|c| charset::is_word(c, ascii));
                let after = charset::char_at(hay, pos).is_some_and(|c| charset::is_word(c, ascii));
                (before != after) == matches!(a, Assertion::WordBoundary { .. })
            }
        }
    }

    fn item_at(&self, item: Item, pos: usize) -> Option<usize> {
        let c = charset::char_at(self.hay, pos)?;
        item.matches(&self.prog.sets, c).then(|| pos + c.len_utf8())
    }

    /// Runs the program from `pc` at `pos` until `Match` (or `LookEnd` for a look-around body).
    fn attempt(&mut self, pc: u32, pos: usize) -> Outcome {
        let mut stack = self.pool.pop().unwrap_or_default();
        stack.clear();
        let outcome = self.attempt_on(&mut stack, pc, pos);
        self.pool.push(stack);
        outcome
    }

    fn attempt_on(&mut self, stack: &mut Vec<Frame>, pc: u32, pos: usize) -> Outcome {
        let mut pc = pc as usize;
        let mut pos = pos;
        let insts = &self.prog.insts;
        loop {
            if self.budget == 0 {
                return Outcome::GaveUp;
            }
            self.budget -= 1;
            let ok = match &insts[pc] {
                Inst::Lit(lit) => {
                    if self
                        .hay
                        .as_bytes()
                        .get(pos..)
                        .is_some_and(|rest| rest.starts_with(lit.as_bytes()))
                    {
                        pos += lit.len();
                        pc += 1;
                        true
                    } else {
                        false
                    }
                }
                Inst::One(item) => match self.item_at(*item, pos) {
                    Some(next) => {
                        pos = next;
                        pc += 1;
                        true
                    }
                    None => false,
                },
                Inst::Assert(a) => {
                    pc += 1;
                    self.assert(*a, pos)
                }
                Inst::Save(slot) => {
                    let slot = *slot as usize;
                    stack.push(Frame::Restore {
                        slot: slot as u32,
                        old: self.slots[slot],
                    });
                    self.slots[slot] = Some(pos);
                    pc += 1;
                    true
                }
                Inst::Split(first, second) => {
                    stack.push(Frame::Resume { pc: *second, pos });
                    pc = *first as usize;
                    true
                }
                Inst::Jump(target) => {
                    pc = *target as usize;
                    true
                }
                Inst::Repeat {
                    item,
                    min,
                    max,
                    greedy,
                    ..
                } => match self.repeat_start(*item, *min, *max, *greedy, pos) {
                    None => false,
                    Some((min_pos, end, count)) => {
                        if *greedy {
                            if end > min_pos {
                                stack.push(Frame::Greedy {
                                    next: pc as u32 + 1,
                                    min_pos,
                                    pos: end,
                                });
                            }
                        } else if count < *max {
                            stack.push(Frame::Lazy {
                                pc: pc as u32,
                                pos: end,
                                count,
                            });
                        }
                        pos = end;
                        pc += 1;
                        true
                    }
                },
                Inst::LazyAlt { body, min, .. } => {
                    let mut p = Some(pos);
                    for _ in 0..*min {
                        p = p.and_then(|p| self.alt_step(*body, p));
                    }
                    match p {
                        None => false,
                        Some(p) => {
                            stack.push(Frame::Lazy {
                                pc: pc as u32,
                                pos: p,
                                count: *min,
                            });
                            pos = p;
                            pc += 1;
                            true
                        }
                    }
                }
                Inst::Look {
                    behind,
                    negated,
                    next,
                } => {
                    let body = pc as u32 + 1;
                    let from = match behind {
                        None => Some(pos),
                        Some(width) => {
                            let mut p = pos;
                            let mut ok = true;
                            for _ in 0..*width {
                                if p == 0 {
                                    ok = false;
                                    break;
                                }
                                p = charset::prev_boundary(self.hay, p);
                            }
                            ok.then_some(p)
                        }
                    };
                    let saved = self.slots.clone();
                    let matched = match from {
                        None => false,
                        Some(from) => match self.attempt(body, from) {
                            Outcome::Matched(_) => true,
                            Outcome::Failed => false,
                            Outcome::GaveUp => return Outcome::GaveUp,
                        },
                    };
                    if matched && !negated {
                        // Captures made inside a positive look-around stay (as in sre), and
                        // are undone on backtracking past it.
                        for (slot, old) in saved.iter().enumerate() {
                            if self.slots[slot] != *old {
                                stack.push(Frame::Restore {
                                    slot: slot as u32,
                                    old: *old,
                                });
                            }
                        }
                    } else {
                        self.slots.copy_from_slice(&saved);
                    }
                    pc = *next as usize;
                    matched != *negated
                }
                Inst::LookEnd => return Outcome::Matched(pos),
                Inst::Match => {
                    // Attempts start at or after the search's start, so a match ending there
                    // is empty there.
                    if self.not_empty_at == Some(pos) {
                        false
                    } else {
                        return Outcome::Matched(pos);
                    }
                }
            };
            if ok {
                continue;
            }
            // Backtrack.
            loop {
                let Some(frame) = stack.pop() else {
                    return Outcome::Failed;
                };
                match frame {
                    Frame::Restore { slot, old } => self.slots[slot as usize] = old,
                    Frame::Resume { pc: p, pos: at } => {
                        pc = p as usize;
                        pos = at;
                        break;
                    }
                    Frame::Greedy {
                        next,
                        min_pos,
                        pos: at,
                    } => {
                        let back = charset::prev_boundary(self.hay, at);
                        if back > min_pos {
                            stack.push(Frame::Greedy {
                                next,
                                min_pos,
                                pos: back,
                            });
                        }
                        pc = next as usize;
                        pos = back;
                        break;
                    }
                    Frame::Lazy {
                        pc: rep,
                        pos: at,
                        count,
                    } => {
                        if let Inst::LazyAlt { body, skip, .. } = insts[rep as usize] {
                            let Some(mut next) = self.alt_step(body, at) else {
                                continue;
                            };
                            if let Some(skip) = skip {
                                let Some(to) = self.alt_skip_to(skip, body, next) else {
                                    continue;
                                };
                                next = to;
                            }
                            stack.push(Frame::Lazy {
                                pc: rep,
                                pos: next,
                                count: count.saturating_add(1),
                            });
                            pc = rep as usize + 1;
                            pos = next;
                            break;
                        }
                        let Inst::Repeat {
                            item, max, skip, ..
                        } = insts[rep as usize]
                        else {
                            return Outcome::Failed;
                        };
                        let Some(mut next) = self.item_at(item, at) else {
                            continue;
                        };
                        // Only unbounded loops skip, so after a skip the count only has to stay
                        // below `max`.
                        let count = count.saturating_add(1);
                        if let Some(skip) = skip {
                            let Some(to) = self.skip_to(skip, item, next) else {
                                continue;
                            };
                            next = to;
                        }
                        if count < max {
                            stack.push(Frame::Lazy {
                                pc: rep,
                                pos: next,
                                count,
                            });
                        }
                        pc = rep as usize + 1;
                        pos = next;
                        break;
                    }
                }
            }
        }
    }

    /// Matches a single-character repeat's first try at `pos`: `min` items, then (greedy) as
    /// many more as allowed. Returns the position after the `min`th item, where this try ends,
    /// and how many items it took; `None` if fewer than `min` are there.
    fn repeat_start(
        &self,
        item: Item,
        min: u32,
        max: u32,
        greedy: bool,
        pos: usize,
    ) -> Option<(usize, usize, u32)> {
        let mut p = pos;
        for _ in 0..min {
            p = self.item_at(item, p)?;
        }
        let min_pos = p;
        if !greedy {
            return Some((min_pos, p, min));
        }
        if max == u32::MAX {
            // Unbounded: the count no longer matters, only where the run ends.
            return Some((min_pos, self.run_end(item, p, self.hay.len()), max));
        }
        let mut count = min;
        while count < max {
            match self.item_at(item, p) {
                Some(next) => {
                    p = next;
                    count += 1;
                }
                None => break,
            }
        }
        Some((min_pos, p, count))
    }

    /// Where the run of `item`s starting at `pos` ends, or `limit` if it goes on that far.
    fn run_end(&self, item: Item, pos: usize, limit: usize) -> usize {
        let hay = self.hay.as_bytes();
        let rest = hay.get(pos..limit).unwrap_or_default();
        let stop = match item {
            Item::Any => return limit,
            Item::AnyButNewline => memchr::memchr(b'\n', rest),
            Item::Set(i) => match self.prog.stops.get(i as usize).and_then(Option::as_deref) {
                Some([a]) => memchr::memchr(*a, rest),
                Some([a, b]) => memchr::memchr2(*a, *b, rest),
                Some([a, b, c]) => memchr::memchr3(*a, *b, *c, rest),
                _ => {
                    let mut p = pos;
                    while p < limit {
                        match self.item_at(item, p) {
                            Some(next) => p = next,
                            None => break,
                        }
                    }
                    return p;
                }
            },
        };
        stop.map_or(limit, |at| pos + at)
    }

    /// The next position at or after `from` where lazy loop `skip` can try its continuation,
    /// having consumed `item`s all the way; `None` when there is none.
    fn skip_to(&mut self, skip: u32, item: Item, from: usize) -> Option<usize> {
        let prog = self.prog;
        let (skip, offset) = prog.skips.get(skip as usize)?;
        let cache = self.caches.get_mut(*offset..*offset + skip.cache_len())?;
        let to = skip.lower_bound(self.hay, from, &prog.sets, cache)?;
        // Every character passed over must be one the loop can consume.
        (item == Item::Any || self.run_end(item, from, to) >= to).then_some(to)
    }

    /// One iteration of `LazyAlt` body `body` at `pos`: where it ends, if a branch matches.
    fn alt_step(&self, body: u32, pos: usize) -> Option<usize> {
        let alt = self.prog.alts.get(body as usize)?;
        if let Some(item) = alt.item {
            if let Some(next) = self.item_at(item, pos) {
                return Some(next);
            }
        }
        let rest = self.hay.as_bytes().get(pos..)?;
        alt.lits
            .iter()
            .find(|lit| rest.starts_with(lit.as_bytes()))
            .map(|lit| pos + lit.len())
    }

    /// The first position at or after `from` that `LazyAlt` body `body` reaches by iterating and
    /// where skip `skip` allows the continuation; `None` when the loop stops before that.
    fn alt_skip_to(&mut self, skip: u32, body: u32, from: usize) -> Option<usize> {
        let prog = self.prog;
        let (skip, offset) = prog.skips.get(skip as usize)?;
        let cache = self.caches.get_mut(*offset..*offset + skip.cache_len())?;
        let to = skip.lower_bound(self.hay, from, &prog.sets, cache)?;
        let item = prog.alts.get(body as usize)?.item;
        let mut p = from;
        while p < to {
            // The item's run (a `memchr` to its next stop byte for `[^<]`), then a literal.
            if let Some(item) = item {
                p = self.run_end(item, p, to);
                if p >= to {
                    break;
                }
            }
            p = self.alt_step(body, p)?;
        }
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alt_loops(pattern: &str) -> usize {
        let ast = crate::syntax::parse::parse(pattern).expect("pattern parses");
        Program::compile(&ast).map_or(0, |prog| prog.alts.len())
    }

    /// Which lazy loops become `LazyAlt` (the crosscheck table's `ALT_LOOP_SHAPES` holds both
    /// kinds to Python's answers).
    #[test]
    fn deterministic_alternations_become_one_step_loops() {
        for pattern in [
            r"(to=functions\.(?:[^<]|<\|channel\|>|<\|constrain\|>)*?<\|message\|>.*?)(?:<\|call\|>|$)",
            r"<a>((?:[^<]|<b>)+?)<m>",
            r"<a>((?:[^<]|<b>){2,}?)<m>",
            r"((?:<b>|x)*?)(?:<e>|$)",
            r"(?:a|bc|de)*?x",
            r"((?:[^<]|<b>|<bc>)*?)<m>",
            r"((?:\s|<b>)*?)<m>",
        ] {
            assert_eq!(alt_loops(pattern), 1, "{pattern}");
        }
        for pattern in [
            // a literal one branch is a prefix of another
            r"((?:[^<]|<b|<bc>)*?)<m>",
            // the item matches a literal's first character
            r"((?:.|<b>)*?)<m>",
            r"((?:[<x]|<b>)*?)<m>",
            // a capture in the body
            r"((?:[^<]|(<b>))*?)<m>",
            // greedy and bounded loops keep the generic form
            r"((?:[^<]|<b>)*)<m>",
            r"((?:[^<]|<b>){0,5}?)<m>",
        ] {
            assert_eq!(alt_loops(pattern), 0, "{pattern}");
        }
    }
}

//! Where a piece of pattern can possibly start: the skip behind the backtracking matcher's lazy
//! loops and candidate starts.
//!
//! A lazy loop (`.*?` and its relatives) tries its continuation at every position in turn; over a
//! 64 KB reasoning trace that is 64 K failed attempts. When the continuation must, after a few
//! one-character steps, reach a literal, `$` or `\Z` — `\S\s*(?:</think>|<\|im_end\|>.*|$)` — no
//! position can succeed before the nearest such *start* minus what those steps can span, so the
//! loop jumps there. Nearest starts come from `memchr::memmem` (or a multi-literal prefilter).
//!
//! Why the bound is safe. Suppose the continuation matches at `p* ≥ q`: its steps span
//! `[t1 = p*, t2), …, [tk, x*)` and a start (literal occurrence or `$` position) sits at `x*`.
//! Let `o ≤ x*` be the nearest start at or after `q`. Walking back from `o` over the steps in
//! reverse — one character for a single step, the maximal run of the class for a starred step —
//! never ends above `p*`: by induction, if the walk is at `y ≤ t(i+1)` before step `i`, a single
//! step moves it to `y - 1 char ≤ ti`; a starred step either starts at `y ≤ ti` or at
//! `ti < y ≤ t(i+1)`, where `[ti, y)` lies inside the step's own run of class characters, so the
//! maximal run reaches `ti` or further. Zero-width assertions and look-arounds are ignored (they
//! only remove matches), and alternatives and optional pieces contribute one branch each, the
//! bound being the least over branches. A positive look-ahead whose every branch reaches a start
//! stands in for the continuation: it must match where it stands, so its steps and starts obey the
//! same argument. Nothing is ever skipped that could match.

use memchr::memmem::Finder;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{MatchKind, Span};

use super::charset::{self, CharSet, Item};
use crate::syntax::ast::{Assertion, Node};

/// The pattern after a point, for the analysis: the rest of each enclosing sequence, innermost
/// first.
pub(crate) enum Cont<'a> {
    /// The end of the pattern: anything may follow, so no bound is possible.
    End,
    /// Unknown (the end of a repeated body): no bound.
    Opaque,
    /// These nodes, then the continuation.
    Then(&'a [Node], &'a Cont<'a>),
}

/// One character, or a maximal run of characters, walked back over from a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    One,
    Star(Item),
}

/// What a branch of the continuation reaches after its steps.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Start {
    Lit(String),
    /// `$`: the end, or before a final `\n`.
    Dollar,
    /// `\Z`.
    End,
}

const MAX_BRANCHES: usize = 16;
const MAX_STEPS: usize = 8;

struct Analysis<'s> {
    sets: &'s mut Vec<CharSet>,
    steps: Vec<Step>,
    branches: Vec<(Vec<Step>, Start)>,
}

impl Analysis<'_> {
    /// Adds the branches of `cont`; `false` when no bound can be given.
    fn cont(&mut self, cont: &Cont<'_>) -> bool {
        match cont {
            Cont::End | Cont::Opaque => false,
            Cont::Then(nodes, next) => match nodes.split_first() {
                None => self.cont(next),
                Some((first, rest)) => self.node(first, &Cont::Then(rest, next)),
            },
        }
    }

    fn push(&mut self, start: Start) -> bool {
        if self.branches.len() >= MAX_BRANCHES {
            return false;
        }
        self.branches.push((self.steps.clone(), start));
        true
    }

    fn with_step(&mut self, step: Step, cont: &Cont<'_>) -> bool {
        if self.steps.len() >= MAX_STEPS {
            return false;
        }
        self.steps.push(step);
        let ok = self.cont(cont);
        self.steps.pop();
        ok
    }

    fn node(&mut self, node: &Node, cont: &Cont<'_>) -> bool {
        match node {
            Node::Look {
                behind: false,
                negated: false,
                node: body,
            } => {
                // The look-ahead must match where it stands: when each of its own branches
                // reaches a start, those bound the continuation; otherwise it only removes
                // matches and the pattern after it gives the bound.
                let mark = self.branches.len();
                if self.cont(&Cont::Then(std::slice::from_ref(body), &Cont::End)) {
                    return true;
                }
                self.branches.truncate(mark);
                self.cont(cont)
            }
            Node::Empty | Node::Look { .. } => self.cont(cont),
            Node::Assert(Assertion::Dollar) => self.push(Start::Dollar),
            Node::Assert(Assertion::TextEnd) => self.push(Start::End),
            Node::Assert(Assertion::LineEnd) => false,
            Node::Assert(_) => self.cont(cont),
            Node::Char {
                cp,
                fold: crate::syntax::ast::Fold::None,
            } => {
                let Some(c) = char::from_u32(*cp) else {
                    // A lone surrogate never matches: this branch starts nowhere.
                    return true;
                };
                let mut lit = String::from(c);
                if let Cont::Then(rest, _) = cont {
                    for next in rest.iter() {
                        match next {
                            Node::Char {
                                cp,
                                fold: crate::syntax::ast::Fold::None,
                            } => match char::from_u32(*cp) {
                                Some(c) => lit.push(c),
                                None => break,
                            },
                            _ => break,
                        }
                    }
                }
                self.push(Start::Lit(lit))
            }
            Node::Char { .. } | Node::Any { .. } | Node::Class(_) => {
                self.with_step(Step::One, cont)
            }
            Node::Group { node, .. } | Node::Atomic(node) => {
                self.cont(&Cont::Then(std::slice::from_ref(node), cont))
            }
            Node::Concat(nodes) => self.cont(&Cont::Then(nodes, cont)),
            Node::Alt(branches) => branches
                .iter()
                .all(|b| self.cont(&Cont::Then(std::slice::from_ref(b), cont))),
            Node::Repeat {
                node: body,
                min,
                max,
                ..
            } => {
                if *max == Some(0) {
                    return self.cont(cont);
                }
                if let Some(item) = charset::item_of(body, self.sets) {
                    if *min == 1 && *max == Some(1) {
                        return self.with_step(Step::One, cont);
                    }
                    if item == Item::Any {
                        // A run of anything walks back to the floor: no bound.
                        return false;
                    }
                    return self.with_step(Step::Star(item), cont);
                }
                let once = max.is_some_and(|m| m <= 1);
                let body_cont = if once { cont } else { &Cont::Opaque };
                if !self.cont(&Cont::Then(std::slice::from_ref(body), body_cont)) {
                    return false;
                }
                *min > 0 || self.cont(cont)
            }
            Node::Backref { .. } | Node::Cond { .. } => false,
        }
    }
}

/// Branches sharing their steps, searched together.
#[derive(Debug)]
struct Group {
    steps: Vec<Step>,
    lits: Lits,
    dollar: bool,
    end: bool,
}

#[derive(Debug)]
enum Lits {
    None,
    // boxed: a finder is ~300 bytes and most skips have none
    One(Box<Finder<'static>>),
    Few(Box<FewStarts>),
    Many(Prefilter),
}

/// Literals with at most three distinct first bytes: `memchr` on those bytes, checking the
/// literals at each hit. On text without those bytes this runs several times faster than the
/// multi-literal prefilter (Teddy); on text dense with them it hands over to the prefilter.
#[derive(Debug)]
struct FewStarts {
    first: FirstBytes,
    lits: Vec<Box<[u8]>>,
    prefilter: Prefilter,
}

#[derive(Debug, Clone, Copy)]
enum FirstBytes {
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
}

impl FewStarts {
    /// Hits of a first byte where no literal starts, per search, before the prefilter takes over.
    const MAX_MISSES: u32 = 16;

    fn new(lits: &[String], prefilter: Prefilter) -> Option<FewStarts> {
        let mut first = Vec::new();
        for lit in lits {
            let &b = lit.as_bytes().first()?;
            if !first.contains(&b) {
                first.push(b);
            }
        }
        let first = match *first.as_slice() {
            [a] => FirstBytes::One(a),
            [a, b] => FirstBytes::Two(a, b),
            [a, b, c] => FirstBytes::Three(a, b, c),
            _ => return None,
        };
        Some(FewStarts {
            first,
            lits: lits.iter().map(|l| l.as_bytes().into()).collect(),
            prefilter,
        })
    }

    /// The least position `≥ q` where one of the literals starts.
    fn find(&self, hay: &[u8], q: usize) -> Option<usize> {
        let mut at = q;
        let mut misses = 0;
        while at < hay.len() {
            let rest = &hay[at..];
            let hit = match self.first {
                FirstBytes::One(a) => memchr::memchr(a, rest),
                FirstBytes::Two(a, b) => memchr::memchr2(a, b, rest),
                FirstBytes::Three(a, b, c) => memchr::memchr3(a, b, c, rest),
            }?;
            let p = at + hit;
            if self.lits.iter().any(|lit| hay[p..].starts_with(lit)) {
                return Some(p);
            }
            at = p + 1;
            misses += 1;
            if misses > Self::MAX_MISSES {
                return self
                    .prefilter
                    .find(hay, Span::from(at..hay.len()))
                    .map(|span| span.start);
            }
        }
        None
    }
}

/// A lower bound on where a continuation can match; see the module docs.
#[derive(Debug)]
pub(crate) struct Skip {
    groups: Vec<Group>,
}

/// Per-search memory of one group of a [`Skip`], so that a loop asking again and again never
/// rescans text: the last start found and the walk back from it. A skip uses
/// [`Skip::cache_len`] consecutive entries of a caller-owned slice, reset to default per search.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GroupCache {
    /// The nearest literal at or after `.0` is `.1` (`None`: nowhere).
    lit: Option<(usize, Option<usize>)>,
    /// Walking back from `.0` with floor `.1` ended at `.2`.
    walk: Option<(usize, usize, usize)>,
}

impl Skip {
    /// The bound for `cont`, or `None` when the continuation gives none (it may start with
    /// anything, reaches the end of the pattern, …). New classes are added to `sets`.
    pub(crate) fn of(cont: &Cont<'_>, sets: &mut Vec<CharSet>) -> Option<Skip> {
        let mut analysis = Analysis {
            sets,
            steps: Vec::new(),
            branches: Vec::new(),
        };
        if !analysis.cont(cont) {
            return None;
        }
        let mut grouped: Vec<(Vec<Step>, Vec<String>, bool, bool)> = Vec::new();
        for (steps, start) in analysis.branches {
            let at = match grouped.iter().position(|g| g.0 == steps) {
                Some(at) => at,
                None => {
                    grouped.push((steps, Vec::new(), false, false));
                    grouped.len() - 1
                }
            };
            let group = &mut grouped[at];
            match start {
                Start::Lit(lit) if !group.1.contains(&lit) => group.1.push(lit),
                Start::Lit(_) => {}
                Start::Dollar => group.2 = true,
                Start::End => group.3 = true,
            }
        }
        let mut groups = Vec::new();
        for (steps, lits, dollar, end) in grouped {
            let lits = match lits.as_slice() {
                [] => Lits::None,
                [one] => Lits::One(Box::new(Finder::new(one.as_bytes()).into_owned())),
                many => {
                    let prefilter = Prefilter::new(MatchKind::LeftmostFirst, many)?;
                    match FewStarts::new(many, prefilter.clone()) {
                        Some(few) => Lits::Few(Box::new(few)),
                        None => Lits::Many(prefilter),
                    }
                }
            };
            groups.push(Group {
                steps,
                lits,
                dollar,
                end,
            });
        }
        Some(Skip { groups })
    }

    /// How many [`GroupCache`] entries [`Skip::lower_bound`] needs.
    pub(crate) fn cache_len(&self) -> usize {
        self.groups.len()
    }

    /// The least position `≥ q` where the continuation can match, or `None` if none can.
    pub(crate) fn lower_bound(
        &self,
        hay: &str,
        q: usize,
        sets: &[CharSet],
        cache: &mut [GroupCache],
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (group, gc) in self.groups.iter().zip(cache.iter_mut()) {
            let Some(o) = group.next_start(hay, q, gc) else {
                continue;
            };
            let y = group.walk_back(hay, o, q, sets, gc);
            let bound = y.max(q);
            best = Some(best.map_or(bound, |b| b.min(bound)));
            if bound == q {
                break;
            }
        }
        best
    }
}

impl Group {
    /// The nearest start at or after `q`.
    fn next_start(&self, hay: &str, q: usize, gc: &mut GroupCache) -> Option<usize> {
        let len = hay.len();
        let mut best = None;
        if self.end && q <= len {
            best = Some(len);
        }
        if self.dollar {
            if q < len && hay.as_bytes()[len - 1] == b'\n' {
                best = Some(len - 1);
            } else if q <= len {
                best = Some(len);
            }
        }
        let lit = match gc.lit {
            Some((from, found)) if from <= q && found.is_none_or(|at| at >= q) => found,
            _ => {
                let found = match &self.lits {
                    Lits::None => None,
                    Lits::One(finder) => hay
                        .as_bytes()
                        .get(q..)
                        .and_then(|rest| finder.find(rest))
                        .map(|at| q + at),
                    Lits::Few(few) => few.find(hay.as_bytes(), q),
                    Lits::Many(pre) => {
                        if q > len {
                            None
                        } else {
                            pre.find(hay.as_bytes(), Span::from(q..len))
                                .map(|span| span.start)
                        }
                    }
                };
                gc.lit = Some((q, found));
                found
            }
        };
        match (best, lit) {
            (Some(b), Some(l)) => Some(b.min(l)),
            (b, l) => b.or(l),
        }
    }

    /// Walks back from `o` over the steps in reverse, not below `floor` (where the walk stops,
    /// the caller's bound is `floor` anyway).
    fn walk_back(
        &self,
        hay: &str,
        o: usize,
        floor: usize,
        sets: &[CharSet],
        gc: &mut GroupCache,
    ) -> usize {
        if let Some((from, old_floor, y)) = gc.walk {
            // An unclamped walk is exact for any floor; a clamped one still is for floors above.
            if from == o && (y > old_floor || floor >= old_floor) {
                return y.max(floor);
            }
        }
        let mut y = o;
        for step in self.steps.iter().rev() {
            if y <= floor {
                break;
            }
            match *step {
                Step::One => y = charset::prev_boundary(hay, y),
                Step::Star(item) => {
                    while y > floor {
                        match charset::char_before(hay, y) {
                            Some(c) if item.matches(sets, c) => {
                                y = charset::prev_boundary(hay, y);
                            }
                            _ => break,
                        }
                    }
                }
            }
        }
        let y = y.max(floor);
        gc.walk = Some((o, floor, y));
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn few(lits: &[&str]) -> FewStarts {
        let lits: Vec<String> = lits.iter().map(|s| s.to_string()).collect();
        let prefilter = Prefilter::new(MatchKind::LeftmostFirst, &lits).expect("literals");
        FewStarts::new(&lits, prefilter).expect("three first bytes or fewer")
    }

    fn naive(lits: &[&str], hay: &[u8], q: usize) -> Option<usize> {
        (q..hay.len()).find(|&p| lits.iter().any(|l| hay[p..].starts_with(l.as_bytes())))
    }

    /// The bound a skip gives for `pattern` (the continuation of a lazy loop) from `q`, or
    /// `None` when the analysis gives no skip.
    fn bound(pattern: &str, hay: &str, q: usize) -> Option<Option<usize>> {
        let ast = crate::syntax::parse::parse(pattern).expect("pattern parses");
        let mut sets = Vec::new();
        let root = std::slice::from_ref(&ast.root);
        let skip = Skip::of(&Cont::Then(root, &Cont::End), &mut sets)?;
        let mut cache = vec![GroupCache::default(); skip.cache_len()];
        Some(skip.lower_bound(hay, q, &sets, &mut cache))
    }

    #[test]
    fn positive_look_aheads_bound_by_their_own_starts() {
        // lfm2's key/value continuation: the whitespace run before the next `,`, or before `$`
        let kv = r"\s*(?=,\s*[A-Za-z_]\w*\s*=|$)";
        assert_eq!(bound(kv, "a='x, y'  , b=1", 0), Some(Some(4)));
        assert_eq!(bound(kv, "a='x, y'  , b=1", 5), Some(Some(8)));
        assert_eq!(bound(kv, "abc", 0), Some(Some(3)));
        // a look-ahead that can match empty says nothing; what follows it bounds
        assert_eq!(bound(r"(?=(?:<e>)?)<f>", "<e> <f>", 0), Some(Some(4)));
        // neither can bound: no skip
        assert_eq!(bound(r"(?=.*<e>)", "x<e>", 0), None);
        // negative look-aheads and look-behinds are still ignored
        assert_eq!(bound(r"(?!<e>)<f>", "<e><f>", 0), Some(Some(3)));
    }

    #[test]
    fn more_than_three_first_bytes_keep_the_prefilter() {
        let lits: Vec<String> = ["<a", ">b", "[c", "{d"].map(String::from).to_vec();
        let prefilter = Prefilter::new(MatchKind::LeftmostFirst, &lits).expect("literals");
        assert!(FewStarts::new(&lits, prefilter).is_none());
    }

    #[test]
    fn finds_the_nearest_literal_past_false_hits() {
        let f = few(&[">>>", "<|eot_id|>"]);
        let hay = b"a > b >> c <| d <|eot_id|> >>>";
        assert_eq!(f.find(hay, 0), Some(16));
        assert_eq!(f.find(hay, 17), Some(27));
        assert_eq!(f.find(hay, 28), None);
        assert_eq!(f.find(hay, hay.len()), None);
    }

    #[test]
    fn hands_over_to_the_prefilter_on_dense_first_bytes() {
        let f = few(&[">>>", "<|eot_id|>"]);
        let hay = format!("{}>>>", "> <".repeat(100));
        assert_eq!(f.find(hay.as_bytes(), 0), Some(300));
    }

    proptest! {
        #[test]
        fn agrees_with_a_naive_search(hay in "[<>|ab]{0,80}", q in 0usize..90) {
            let lits = [">>", "<|a", "|b>", "<<"];
            let f = few(&lits);
            prop_assert_eq!(f.find(hay.as_bytes(), q), naive(&lits, hay.as_bytes(), q));
        }
    }
}

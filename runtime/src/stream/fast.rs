//! The feed fast path: per parser state, cheap tests on the unrouted text that prove the full
//! delimiter search would find nothing to commit, and where its held-back text would start.
//!
//! In a state (inside an explicit region, or in the implicit one) the parser watches a fixed set
//! of delimiters. For that set, computed once per template:
//! - `first`: every byte that can start a complete or a (non-empty) partial match of a watched
//!   delimiter. No such byte in the unrouted text → no match and nothing to hold: route it all.
//! - `required`: a set of bytes every complete match contains at least one of. None of them in
//!   the unrouted text → no complete match; then the held-back text starts at the leftmost partial
//!   match, found by `hold`, a dense DFA of the union of the delimiters' partial-match languages
//!   (`Q(d)`, see `template::delim::reads_at_end`) run backwards from the end of the buffer. It
//!   stops at the first byte no partial match can contain, so it reads a few bytes per feed. It
//!   is a lazy DFA (states built as visited, cache owned by the parser), so that a Unicode class
//!   in a delimiter costs nothing at load time.
//!
//! While text is held, `pos` stays put and every feed asks again about a longer `buffer[pos..]`;
//! a held run that keeps growing (white space under `\s*<|im_end|>`) made each of these tests
//! read the whole run per feed, quadratic in its length (issue 21). So a verdict keeps what it
//! read ([`VerdictMemo`]): the byte scans look at the new bytes only, and the hold's start is
//! carried forward by a forward DFA of the same language (`stream::resume::Prefixes`; the
//! backwards search runs only from just past a start that stopped being one).
//!
//! Each test is exact, not a heuristic: when it applies, the result is the one the full search
//! (`scan`) would give. A delimiter that can match the empty string disables the fast path of the
//! states that watch it.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::{Class, Hir, HirKind};

use super::resume::{GaveUp, Leftmost, Prefixes};

/// A set of bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ByteSet([u64; 4]);

impl ByteSet {
    pub(crate) fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    fn insert_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.insert(b);
        }
    }

    #[inline]
    pub(crate) fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    pub(crate) fn union(&mut self, other: &ByteSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }

    fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether any byte of `hay` is in the set.
    #[inline]
    pub(crate) fn any_in(&self, hay: &[u8]) -> bool {
        hay.iter().any(|&b| self.contains(b))
    }

    /// The bytes of the set, when there are at most three (for `memchr`).
    fn few(&self) -> Option<Vec<u8>> {
        (self.len() <= 3).then(|| (0..=255u8).filter(|&b| self.contains(b)).collect())
    }
}

/// A byte-set search: `memchr` for up to three bytes, a table otherwise.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scan {
    None,
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
    Table(ByteSet),
}

impl Scan {
    pub(crate) fn new(set: ByteSet) -> Scan {
        match set.few().as_deref() {
            Some([]) => Scan::None,
            Some([a]) => Scan::One(*a),
            Some([a, b]) => Scan::Two(*a, *b),
            Some([a, b, c]) => Scan::Three(*a, *b, *c),
            _ => Scan::Table(set),
        }
    }

    /// Whether any byte of `hay` is in the set.
    #[inline]
    pub(crate) fn any_in(&self, hay: &[u8]) -> bool {
        // Below a vector's width, a loop beats `memchr`'s dispatch.
        if hay.len() < 16 {
            return match *self {
                Scan::None => false,
                Scan::One(a) => hay.contains(&a),
                Scan::Two(a, b) => hay.iter().any(|&x| x == a || x == b),
                Scan::Three(a, b, c) => hay.iter().any(|&x| x == a || x == b || x == c),
                Scan::Table(set) => set.any_in(hay),
            };
        }
        match *self {
            Scan::None => false,
            Scan::One(a) => memchr::memchr(a, hay).is_some(),
            Scan::Two(a, b) => memchr::memchr2(a, b, hay).is_some(),
            Scan::Three(a, b, c) => memchr::memchr3(a, b, c, hay).is_some(),
            Scan::Table(set) => set.any_in(hay),
        }
    }
}

/// The bytes that can start the UTF-8 encoding of a char of `class`.
fn class_first_bytes(class: &Class) -> ByteSet {
    let mut set = ByteSet::default();
    match class {
        Class::Bytes(c) => {
            for r in c.ranges() {
                set.insert_range(r.start(), r.end());
            }
        }
        Class::Unicode(c) => {
            for r in c.ranges() {
                let (lo, hi) = (u32::from(r.start()), u32::from(r.end()));
                if lo <= 0x7f {
                    set.insert_range(lo as u8, hi.min(0x7f) as u8);
                }
                if hi >= 0x80 {
                    // Lead bytes grow with the code point: every char of the range starts with
                    // a byte between the first one's and the last one's.
                    let lead = |c: char| {
                        let mut buf = [0u8; 4];
                        c.encode_utf8(&mut buf).as_bytes()[0]
                    };
                    let first = if lo >= 0x80 { r.start() } else { '\u{80}' };
                    set.insert_range(lead(first), lead(r.end()));
                }
            }
        }
    }
    set
}

/// `(first bytes, nullable)`: the bytes a non-empty match of `h` can start with, and whether
/// `h` can match the empty string (assertions count as empty).
pub(crate) fn first_bytes(h: &Hir) -> (ByteSet, bool) {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => (ByteSet::default(), true),
        HirKind::Literal(lit) => {
            let mut set = ByteSet::default();
            match lit.0.first() {
                Some(&b) => {
                    set.insert(b);
                    (set, false)
                }
                None => (set, true),
            }
        }
        HirKind::Class(c) => (class_first_bytes(c), false),
        HirKind::Repetition(rep) => {
            let (set, nullable) = first_bytes(&rep.sub);
            (set, nullable || rep.min == 0)
        }
        HirKind::Capture(cap) => first_bytes(&cap.sub),
        HirKind::Concat(parts) => {
            let mut set = ByteSet::default();
            for part in parts {
                let (s, nullable) = first_bytes(part);
                set.union(&s);
                if !nullable {
                    return (set, false);
                }
            }
            (set, true)
        }
        HirKind::Alternation(alts) => {
            let mut set = ByteSet::default();
            let mut nullable = false;
            for alt in alts {
                let (s, n) = first_bytes(alt);
                set.union(&s);
                nullable |= n;
            }
            (set, nullable)
        }
    }
}

/// A set of bytes every match of `h` contains at least one of (`None`: no such set found, e.g.
/// when `h` can match the empty string).
pub(crate) fn required_bytes(h: &Hir) -> Option<ByteSet> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => None,
        HirKind::Literal(lit) => {
            let mut set = ByteSet::default();
            set.insert(*lit.0.first()?);
            Some(set)
        }
        HirKind::Class(c) => Some(class_first_bytes(c)),
        HirKind::Repetition(rep) if rep.min > 0 => required_bytes(&rep.sub),
        HirKind::Repetition(_) => None,
        HirKind::Capture(cap) => required_bytes(&cap.sub),
        HirKind::Concat(parts) => parts
            .iter()
            .filter_map(required_bytes)
            .min_by_key(ByteSet::len),
        HirKind::Alternation(alts) => {
            let mut set = ByteSet::default();
            for alt in alts {
                set.union(&required_bytes(alt)?);
            }
            Some(set)
        }
    }
}

/// What the fast path needs to know about one delimiter.
#[derive(Debug, Clone)]
pub(crate) struct DelimFacts {
    /// First bytes of its complete and partial matches; `None` when it can match empty.
    pub first: Option<ByteSet>,
    /// Bytes every complete match contains one of.
    pub required: Option<ByteSet>,
    /// Its partial-match language `Q(d)`.
    pub partial: Hir,
}

/// The fast-path tests of one parser state.
#[derive(Debug)]
pub(crate) struct StateFilter {
    first: Scan,
    required: Option<Scan>,
    hold: Option<DFA>,
    /// The partial-match language forwards, to carry the hold's start across feeds (`None`:
    /// a delimiter has look-around; every verdict then searches back from the end).
    prefixes: Option<Prefixes>,
}

/// What the last verdicts of one state read, so that the next one (same `pos`, a longer
/// buffer) reads only the new bytes: the parser feeds held text (a run of white space before
/// `<|im_end|>`) without moving `pos`, and re-reading it per feed was quadratic (issue 21).
/// Kept per state by the parser, next to the DFA caches; the buffer only grows, so what was
/// read of it stays true.
#[derive(Debug, Default)]
pub(crate) struct VerdictMemo {
    /// The `pos` these facts are about (`None`: nothing read yet).
    from: Option<usize>,
    /// The buffer length read to.
    read: usize,
    /// A first byte is in `buffer[from..read]`.
    first: bool,
    /// A required byte is in `buffer[from..read]`.
    required: bool,
    /// The hold found at `read`, with the forward state to carry it on.
    hold: Option<Leftmost>,
}

/// A state's DFA caches, made on first use, and its memo.
#[derive(Debug, Default)]
pub(crate) struct FilterScratch {
    reverse: Option<Cache>,
    forward: Option<Cache>,
    memo: VerdictMemo,
}

/// What the fast path decided for the unrouted text `buffer[pos..]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No delimiter can match; route `buffer[pos..hold]` and hold back the rest.
    Route { hold: usize },
    /// Run the full search.
    Search,
}

/// Size limits of the hold-back DFA's NFA and cache (small for real delimiters; a pathological
/// one just goes without a fast path).
const DFA_LIMIT: usize = 1 << 20;

impl StateFilter {
    /// The filter of a state watching `delims`; `None` when one of them can match empty.
    pub(crate) fn new<'a>(delims: impl IntoIterator<Item = &'a DelimFacts>) -> Option<Self> {
        let mut first = ByteSet::default();
        let mut required = Some(ByteSet::default());
        let mut partials = Vec::new();
        for d in delims {
            first.union(d.first.as_ref()?);
            required = match (required, &d.required) {
                (Some(mut r), Some(d)) => {
                    r.union(d);
                    Some(r)
                }
                _ => None,
            };
            partials.push(d.partial.clone());
        }
        // When every first byte is also required, finding none of the required bytes means
        // finding no first byte either: the DFA would never run.
        let useful = required.is_some_and(|r| {
            let mut both = r;
            both.union(&first);
            both != r
        });
        let partial = Hir::alternation(partials);
        let hold = if useful {
            hold_dfa(partial.clone())
        } else {
            None
        };
        let prefixes = hold.as_ref().and_then(|_| Prefixes::new(&partial));
        Some(StateFilter {
            first: Scan::new(first),
            required: required.map(Scan::new),
            hold,
            prefixes,
        })
    }

    /// The verdict on `buffer[pos..]`; `scratch` is this state's caches and memo in the parser.
    /// The same as [`StateFilter::verdict_afresh`]; it reads only what the memo has not (see
    /// [`VerdictMemo`]).
    pub(crate) fn verdict(&self, buffer: &str, pos: usize, scratch: &mut FilterScratch) -> Verdict {
        let len = buffer.len();
        let bytes = buffer.as_bytes();
        if pos > len {
            return Verdict::Search;
        }
        let memo = &mut scratch.memo;
        if memo.from != Some(pos) || memo.read > len {
            *memo = carried(memo, pos, len);
        }
        let new = bytes.get(memo.read..len).unwrap_or_default();
        memo.read = len;
        memo.first = memo.first || self.first.any_in(new);
        if !memo.first {
            // No partial match to carry: it would start with a first byte.
            memo.hold = None;
            return Verdict::Route { hold: len };
        }
        let (Some(required), Some(dfa)) = (&self.required, &self.hold) else {
            memo.hold = None;
            return Verdict::Search;
        };
        memo.required = memo.required || required.any_in(new);
        if memo.required {
            return Verdict::Search;
        }
        let rev = scratch.reverse.get_or_insert_with(|| dfa.create_cache());
        let mut search = |lower: usize| {
            let input = Input::new(buffer).range(lower..len).anchored(Anchored::Yes);
            match dfa.try_search_rev(rev, &input) {
                Ok(m) => Ok(m.map(|m| m.offset())),
                Err(_) => Err(GaveUp),
            }
        };
        let found = match &self.prefixes {
            Some(prefixes) => {
                let fwd = scratch
                    .forward
                    .get_or_insert_with(|| prefixes.create_cache());
                prefixes.leftmost(fwd, bytes, pos, memo.hold, search)
            }
            None => search(pos).map(|start| Leftmost::untracked(pos, start.unwrap_or(len))),
        };
        match found {
            Ok(hold) => {
                memo.hold = Some(hold);
                Verdict::Route { hold: hold.start }
            }
            Err(GaveUp) => {
                memo.hold = None;
                Verdict::Search
            }
        }
    }

    /// The verdict on `buffer[pos..]` read whole, as before the memo: what
    /// [`StateFilter::verdict`] must answer (the property tests compare them).
    #[cfg(test)]
    pub(crate) fn verdict_afresh(
        &self,
        buffer: &str,
        pos: usize,
        cache: &mut Option<Cache>,
    ) -> Verdict {
        let len = buffer.len();
        let Some(rest) = buffer.as_bytes().get(pos..) else {
            return Verdict::Search;
        };
        if !self.first.any_in(rest) {
            return Verdict::Route { hold: len };
        }
        let (Some(required), Some(dfa)) = (&self.required, &self.hold) else {
            return Verdict::Search;
        };
        if required.any_in(rest) {
            return Verdict::Search;
        }
        let input = Input::new(buffer).range(pos..len).anchored(Anchored::Yes);
        let cache = cache.get_or_insert_with(|| dfa.create_cache());
        match dfa.try_search_rev(cache, &input) {
            Ok(Some(m)) => Verdict::Route { hold: m.offset() },
            Ok(None) => Verdict::Route { hold: len },
            Err(_) => Verdict::Search,
        }
    }
}

/// The memo for `pos`, from one for an earlier `pos` when it carries over: the parser moves
/// `pos` to the hold a verdict returned, and then what was read past it stays true (no required
/// byte; a first byte, the hold's own, unless nothing is left; the same hold). Otherwise empty.
fn carried(memo: &VerdictMemo, pos: usize, len: usize) -> VerdictMemo {
    match memo.hold {
        Some(hold)
            if memo.from.is_some_and(|f| f <= pos)
                && hold.start == pos
                && !memo.required
                && memo.read <= len =>
        {
            VerdictMemo {
                from: Some(pos),
                read: memo.read,
                first: pos < memo.read,
                required: false,
                hold: Some(hold),
            }
        }
        _ => VerdictMemo {
            from: Some(pos),
            read: pos,
            ..VerdictMemo::default()
        },
    }
}

/// A reverse lazy DFA whose anchored search from the end of a span finds the leftmost start of
/// a string of `partial` ending there.
fn hold_dfa(partial: Hir) -> Option<DFA> {
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .reverse(true)
                .which_captures(thompson::WhichCaptures::None)
                .nfa_size_limit(Some(DFA_LIMIT)),
        )
        .build_from_hir(&partial)
        .ok()?;
    DFA::builder()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                .cache_capacity(DFA_LIMIT),
        )
        .build_from_nfa(nfa)
        .ok()
}

/// `Q` of a set of literals: their proper prefixes.
pub(crate) fn literal_prefixes(literals: &[String]) -> Hir {
    let mut alts = Vec::new();
    for lit in literals {
        for (i, _) in lit.char_indices() {
            alts.push(Hir::literal(lit.as_bytes().get(..i).unwrap_or(b"")));
        }
    }
    Hir::alternation(alts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hir(p: &str) -> Hir {
        regex_syntax::parse(p).unwrap()
    }

    #[test]
    fn first_and_required_bytes() {
        let (first, nullable) = first_bytes(&hir(r"\s*<tool_call>"));
        assert!(!nullable);
        assert!(first.contains(b' ') && first.contains(b'<') && first.contains(0xe2));
        assert!(!first.contains(b'a'));
        let req = required_bytes(&hir(r"\s*<tool_call>")).unwrap();
        assert!(req.contains(b'<') && !req.contains(b' '));
        assert!(first_bytes(&hir(r"a*|b")).1);
        assert!(required_bytes(&hir(r"a*")).is_none());
        let req = required_bytes(&hir(r"x+(?:ab|cd)")).unwrap();
        assert!(req.contains(b'x') || (req.contains(b'a') && req.contains(b'c')));
    }

    /// The filter of a state watching these patterns.
    fn filter(patterns: &[&str]) -> StateFilter {
        let facts: Vec<DelimFacts> = patterns
            .iter()
            .map(|p| {
                let h = hir(p);
                let (first, nullable) = first_bytes(&h);
                DelimFacts {
                    first: (!nullable).then_some(first),
                    required: required_bytes(&h),
                    partial: crate::template::delim::reads_at_end(&h).unwrap(),
                }
            })
            .collect();
        StateFilter::new(&facts).unwrap()
    }

    /// Delimiter sets: qwen3's implicit state and qwen3_5's call close (the white-space runs
    /// of issue 21), languages whose candidates die while later ones live, one with
    /// look-around (no forward DFA: every verdict searches back).
    const SETS: &[&[&str]] = &[
        &[
            "<think>",
            r"\s*<tool_call>",
            r"\s*(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>)",
        ],
        &[r"</function>\s*</tool_call>"],
        &[r"[ab]*c", r"\s+x"],
        &[r"(?:ab)*c", r"x{0,3}y", r"a+\s*b"],
        &[r"a\Bbc", r"\s*z"],
    ];

    const PIECES: &[&str] = &[
        " ",
        "  ",
        "\n",
        "\u{2028}",
        "\u{a0}",
        "<",
        "<|im_e",
        "<|eot",
        "_id|>",
        "</function>",
        "</tool_call>",
        "<tool",
        "a",
        "b",
        "ab",
        "c",
        "x",
        "y",
        "z",
        "é",
        "q",
    ];

    /// `pos` moves as the parser moves it: to the hold a verdict routes up to, or (a full
    /// search that committed something) anywhere ahead.
    fn walk(set: usize, pieces: &[(usize, u8, proptest::sample::Index)]) {
        let f = filter(SETS[set]);
        let mut scratch = FilterScratch::default();
        let mut fresh = None;
        let mut buffer = String::new();
        let mut pos = 0;
        for (piece, jump, to) in pieces {
            buffer.push_str(PIECES[*piece]);
            if *jump == 0 {
                let bounds: Vec<usize> = (pos..=buffer.len())
                    .filter(|&i| buffer.is_char_boundary(i))
                    .collect();
                pos = bounds[to.index(bounds.len())];
            }
            let resumed = f.verdict(&buffer, pos, &mut scratch);
            let whole = f.verdict_afresh(&buffer, pos, &mut fresh);
            assert_eq!(resumed, whole, "{buffer:?} from {pos}");
            if let Verdict::Route { hold } = resumed {
                pos = pos.max(hold);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// A verdict that resumes from its memo after arbitrary appends (and moves of `pos`)
        /// equals a fresh verdict on the whole buffer.
        #[test]
        fn resumed_verdict_is_whole_verdict(
            set in 0..SETS.len(),
            pieces in proptest::collection::vec(
                (0..PIECES.len(), 0u8..8, proptest::prelude::any::<proptest::sample::Index>()),
                0..40,
            ),
        ) {
            walk(set, &pieces);
        }
    }

    #[test]
    fn a_long_white_space_run_is_held_from_its_start() {
        let f = filter(SETS[0]);
        let mut scratch = FilterScratch::default();
        let mut buffer = "Done.".to_owned();
        assert_eq!(
            f.verdict(&buffer, 0, &mut scratch),
            Verdict::Route { hold: 5 }
        );
        for _ in 0..1000 {
            buffer.push_str("\n ");
            assert_eq!(
                f.verdict(&buffer, 5, &mut scratch),
                Verdict::Route { hold: 5 }
            );
        }
        buffer.push_str("<|im_e");
        assert_eq!(f.verdict(&buffer, 5, &mut scratch), Verdict::Search);
    }
}

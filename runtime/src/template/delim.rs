//! Delimiter matching with the reference's partial-match semantics.
//!
//! The reference compiles every delimiter (a literal, a list of literals, or a pattern) with the
//! third-party `regex` module and calls `pattern.search(buffer, pos, partial=True)`. Measured
//! against regex 2026.11.15, that call:
//! 1. returns the leftmost *complete* match from `pos` if there is one anywhere in the buffer
//!    (leftmost-first, like `re.search`), even when an earlier position could still grow into a
//!    match with more input;
//! 2. otherwise returns the leftmost *partial* match: the first start from which the matcher, having
//!    consumed the rest of the buffer, tries to read one more character. Assertions (`\b`, `$`,
//!    `\A`) are evaluated against the buffer as it is, they never cause a partial match.
//!
//! Literal delimiters are searched with `memchr::memmem` (the alternation the reference builds
//! sorts literals longest first, so at one start the longest literal wins). Pattern delimiters run
//! their Python pattern's translation ([`crate::pyre::translate`]) on the `regex` crate for step 1,
//! and for step 2 a second pattern derived from the translation's syntax tree: `Q(p)\z`, where
//! `Q(p)` is the set of strings that drive `p`'s matcher to a read at the end (see [`reads_at_end`]).
//! Its leftmost match from `pos` is the leftmost partial match; being anchored at the end, the
//! `regex` crate finds it scanning backwards from the end of the buffer, so the cost is the length
//! of the viable tail, not of the buffer. Patterns that need `fancy-regex` (look-around,
//! backreferences, Python's Unicode `\b`) have no such tree and are refused as delimiters.

use regex_syntax::hir::{Hir, HirKind, Look, Repetition};

use crate::pyre::{PyRegex, Translation};
use crate::stream::fast::{first_bytes, literal_prefixes, required_bytes, ByteSet, DelimFacts};
use crate::stream::resume::{Prefixes, Unmatched};

/// Compiled-program size limit (as `pyre` uses for its own engines).
const SIZE_LIMIT: usize = 256 << 20;

/// One match of a delimiter: byte offsets in the buffer, and the named groups that took part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub start: usize,
    pub end: usize,
    /// Where the matcher stopped reading: `end`, or one past it when a tail `$` matched before
    /// the final newline (Python's `$` looks past it). A match that read to the end of the buffer
    /// is not final while more text may come: the newline may stop being the final one.
    pub read_to: usize,
    /// `m.groupdict()` without the `None`s, in group order.
    pub named: Vec<(String, String)>,
}

/// What `pattern.search(buffer, pos, partial=...)` returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Search {
    /// No match (and, in partial mode, no partial match before the end of the buffer).
    None,
    /// A partial match starting here (always before the end of the buffer).
    Partial(usize),
    /// A complete match.
    Full(Found),
}

/// A set of literal delimiters (`open`, `close`, `start_anchor` given as strings).
#[derive(Debug, Clone)]
pub(crate) struct Literals {
    /// Deduplicated, sorted longest first (stable), the reference's alternation order.
    pub ordered: Vec<String>,
    /// One literal is a strict prefix of another: a match at the buffer's edge may still grow.
    pub can_extend: bool,
    /// A searcher per literal of `ordered`.
    finders: Vec<memchr::memmem::Finder<'static>>,
    facts: DelimFacts,
}

impl Literals {
    pub(crate) fn new(raw: Vec<String>) -> Self {
        let mut literals: Vec<String> = Vec::with_capacity(raw.len());
        for s in raw {
            if !literals.contains(&s) {
                literals.push(s);
            }
        }
        let mut ordered = literals.clone();
        ordered.sort_by_key(|s| std::cmp::Reverse(s.len_chars()));
        let can_extend = literals
            .iter()
            .any(|a| literals.iter().any(|b| a != b && a.starts_with(b.as_str())));
        let finders = ordered
            .iter()
            .map(|l| memchr::memmem::Finder::new(l.as_bytes()).into_owned())
            .collect();
        let facts = literal_facts(&ordered);
        Literals {
            ordered,
            can_extend,
            finders,
            facts,
        }
    }

    /// The leftmost occurrence at or after `pos` (longest literal on ties).
    pub(crate) fn find(&self, hay: &str, pos: usize) -> Option<(usize, usize)> {
        let rest = hay.as_bytes().get(pos..)?;
        let mut best: Option<(usize, usize)> = None;
        for (lit, finder) in self.ordered.iter().zip(&self.finders) {
            // Only a strictly earlier start can beat what we have (ties go to the longer literal,
            // which comes first in `ordered`).
            let limit = best.map_or(rest.len(), |(s, _)| (s - pos + lit.len()).min(rest.len()));
            let window = rest.get(..limit).unwrap_or(rest);
            if let Some(i) = finder.find(window) {
                let start = pos + i;
                if best.is_none_or(|(s, _)| start < s) {
                    best = Some((start, start + lit.len()));
                }
            }
        }
        best
    }

    /// The reference's partial search: complete match first, else the leftmost start whose tail
    /// is a proper prefix of some literal.
    pub(crate) fn search(&self, hay: &str, pos: usize, partial: bool) -> Search {
        self.search_skipping(hay, pos, pos, partial)
    }

    /// [`Literals::search`] when no literal occurs in `hay[pos..read]` (known from an earlier
    /// search): a match must end past `read`, so the search for one starts where the longest
    /// literal would have to.
    pub(crate) fn search_after(&self, hay: &str, pos: usize, read: usize, partial: bool) -> Search {
        let longest = self.ordered.iter().map(String::len).max().unwrap_or(0);
        let skip = (read + 1).saturating_sub(longest).max(pos);
        self.search_skipping(hay, pos, skip, partial)
    }

    fn search_skipping(&self, hay: &str, pos: usize, skip: usize, partial: bool) -> Search {
        if let Some((start, end)) = self.find(hay, skip) {
            return Search::Full(Found {
                start,
                end,
                read_to: end,
                named: Vec::new(),
            });
        }
        if !partial {
            return Search::None;
        }
        self.partial_start(hay, pos)
            .map_or(Search::None, Search::Partial)
    }

    /// The leftmost start at or after `pos` whose tail is a proper prefix of some literal: where
    /// a match could still begin once more text arrives.
    pub(crate) fn partial_start(&self, hay: &str, pos: usize) -> Option<usize> {
        // In bytes: a literal with fewer chars than another can still have more bytes.
        let longest = self.ordered.iter().map(String::len).max().unwrap_or(0);
        let from = hay.len().saturating_sub(longest.saturating_sub(1)).max(pos);
        (from..hay.len()).find(|&p| {
            hay.get(p..).is_some_and(|tail| {
                self.ordered
                    .iter()
                    .any(|l| l.len() > tail.len() && l.starts_with(tail))
            })
        })
    }

    /// What the feed fast path needs: first bytes, required bytes, partial-match language.
    pub(crate) fn facts(&self) -> &DelimFacts {
        &self.facts
    }

    /// `re.finditer` over the alternation: the end of the last non-overlapping match.
    pub(crate) fn last_match_end(&self, hay: &str) -> Option<usize> {
        let mut pos = 0;
        let mut last = None;
        while let Some((_, end)) = self.find(hay, pos) {
            last = Some(end);
            pos = end;
        }
        last
    }
}

fn literal_facts(literals: &[String]) -> DelimFacts {
    let mut first = Some(ByteSet::default());
    for lit in literals {
        match (lit.as_bytes().first(), first.as_mut()) {
            (Some(&b), Some(set)) => set.insert(b),
            _ => first = None,
        }
    }
    DelimFacts {
        first,
        // Every literal contains its own first byte.
        required: first,
        partial: literal_prefixes(literals),
    }
}

trait LenChars {
    fn len_chars(&self) -> usize;
}

impl LenChars for String {
    fn len_chars(&self) -> usize {
        self.chars().count()
    }
}

/// Why a pattern cannot be a streaming delimiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatternRefused {
    pub message: String,
    pub fix: String,
}

/// Compiles a translated delimiter pattern (the whole match, or its partial-match form).
fn build(pattern: &str) -> Result<regex::Regex, regex::Error> {
    // Fuzz builds remember compiled delimiters: they were 28 % of the spec-loading target's time
    // (perf on the running target); see `chatparse_pyre::fuzzing_memo` for why that is exact.
    #[cfg(fuzzing)]
    return chatparse_pyre::fuzzing_memo::remembered(pattern.to_owned(), || compile(pattern));
    #[cfg(not(fuzzing))]
    compile(pattern)
}

fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .nest_limit(1000)
        .build()
}

/// A pattern delimiter (`open_pattern`, `close_pattern`).
#[derive(Debug)]
pub(crate) struct Pattern {
    full: regex::Regex,
    partial: regex::Regex,
    translation: Translation,
    facts: DelimFacts,
    /// The forward DFAs that let a search resume across feeds (`template::resume`); `None`
    /// with look-around.
    pub(crate) resumable: Option<(Unmatched, Prefixes)>,
}

impl Pattern {
    /// Compiles an already-validated Python pattern for streaming.
    pub(crate) fn new(python: PyRegex) -> Result<Self, PatternRefused> {
        let translation = python.translation().clone();
        if translation.engine != crate::pyre::Engine::Regex {
            return Err(PatternRefused {
                message: "this pattern needs look-around, a backreference, an atomic group, a \
                          conditional or Python's Unicode \\b, which a streaming delimiter cannot \
                          use (its partial matches at the end of the buffer cannot be computed)"
                    .to_owned(),
                fix: "write the delimiter without look-around or backreferences (a plain \
                      sequence, classes, groups, alternatives and repeats)"
                    .to_owned(),
            });
        }
        let refuse = |what: &str, e: &dyn std::fmt::Display| PatternRefused {
            message: format!("the translated pattern {what}: {e}"),
            fix: "simplify the pattern".to_owned(),
        };
        let hir = regex_syntax::ParserBuilder::new()
            .nest_limit(1000)
            .build()
            .parse(&translation.rust_pattern)
            .map_err(|e| refuse("does not parse", &e))?;
        let q = reads_at_end(&hir).ok_or_else(|| PatternRefused {
            message: "the pattern contains a byte-level literal that is not UTF-8".to_owned(),
            fix: "use Unicode text in the pattern".to_owned(),
        })?;
        let (first, nullable) = first_bytes(&hir);
        let facts = DelimFacts {
            first: (!nullable).then_some(first),
            required: required_bytes(&hir),
            partial: q.clone(),
        };
        let resumable = Unmatched::new(&hir).zip(Prefixes::new(&q));
        let partial_hir = Hir::concat(vec![q, Hir::look(Look::End)]);
        let full = build(&translation.rust_pattern).map_err(|e| refuse("does not compile", &e))?;
        let partial =
            build(&partial_hir.to_string()).map_err(|e| refuse("has no partial-match form", &e))?;
        Ok(Pattern {
            full,
            partial,
            translation,
            facts,
            resumable,
        })
    }

    /// What the feed fast path needs: first bytes, required bytes, partial-match language.
    pub(crate) fn facts(&self) -> &DelimFacts {
        &self.facts
    }

    /// `pattern.search(hay, pos)` (Python semantics: text before `pos` is context for
    /// look-behind-like assertions, `^` only matches at 0), with the partial step when asked.
    pub(crate) fn search(&self, hay: &str, pos: usize, partial: bool) -> Search {
        if pos > hay.len() {
            return Search::None;
        }
        let rest = hay.as_bytes().get(pos..).unwrap_or_default();
        // A complete match contains one of the required bytes: skip the regex without one.
        let may_match = self.facts.required.is_none_or(|r| r.any_in(rest));
        // Find first, and pay for capture slots only when there is a match.
        if may_match && self.full.find_at(hay, pos).is_some() {
            let mut locs = self.full.capture_locations();
            if self.full.captures_read_at(&mut locs, hay, pos).is_some() {
                return Search::Full(self.python_found(hay, &locs));
            }
        }
        if !partial {
            return Search::None;
        }
        self.partial_start(hay, pos)
            .map_or(Search::None, Search::Partial)
    }

    /// The leftmost start at or after `pos` from which the matcher, having read the rest of
    /// `hay`, would read one more character: where a match could still begin (or, at a
    /// complete match's start, take an alternative it prefers) once more text arrives.
    pub(crate) fn partial_start(&self, hay: &str, pos: usize) -> Option<usize> {
        if pos > hay.len() {
            return None;
        }
        self.partial
            .find_at(hay, pos)
            .map(|m| m.start())
            .filter(|&start| start < hay.len())
    }

    /// Maps Rust capture slots to Python's groups, undoing a tail `$`'s consumed newline
    /// (as `PyRegex` does for its own searches).
    fn python_found(&self, hay: &str, locs: &regex::CaptureLocations) -> Found {
        let t = &self.translation;
        let mut spans: Vec<Option<(usize, usize)>> =
            t.group_map.iter().map(|&r| locs.get(r)).collect();
        for fix in &t.dollar_fixups {
            if let Some((s, e)) = locs.get(fix.rust_group) {
                if e > s {
                    for &g in std::iter::once(&0).chain(&fix.python_groups) {
                        if let Some(Some((gs, ge))) = spans.get_mut(g) {
                            *ge = ge.saturating_sub(1).max(*gs);
                        }
                    }
                }
            }
        }
        let (start, end) = spans.first().copied().flatten().unwrap_or((0, 0));
        let read_to = locs.get(0).map_or(end, |(_, e)| e.max(end));
        let named = t
            .group_names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| {
                let name = name.as_ref()?;
                let (s, e) = spans.get(i + 1).copied().flatten()?;
                Some((name.clone(), hay.get(s..e)?.to_owned()))
            })
            .collect();
        Found {
            start,
            end,
            read_to,
            named,
        }
    }
}

/// `Q(h)`: the strings that take `h`'s backtracking matcher to an attempt to read one more
/// character at the end of the text. Those are exactly the tails from which the `regex` module
/// reports a partial match: it reports one when a consuming step (a literal character or a
/// class) runs out of text; assertions never do.
///
/// - a literal `c1…ck`: its proper prefixes (`ε`, `c1`, …, `c1…ck-1`);
/// - a class: `ε`;
/// - an assertion, or the empty pattern: nothing;
/// - `x{m,n}`: `x{0,n-1} Q(x)` (nothing when `n == 0`);
/// - `x y`: `Q(x) | x Q(y)`; `x | y`: `Q(x) | Q(y)`; a group: `Q` of its body.
///
/// `None` when a literal is not UTF-8 (impossible for patterns of Unicode text).
pub(crate) fn reads_at_end(h: &Hir) -> Option<Hir> {
    Some(match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Hir::fail(),
        HirKind::Literal(lit) => {
            let text = std::str::from_utf8(&lit.0).ok()?;
            let chars: Vec<char> = text.chars().collect();
            let mut acc = Hir::empty();
            if let Some((_, proper)) = chars.split_last() {
                for c in proper.iter().rev() {
                    let mut buf = [0u8; 4];
                    let one = Hir::literal(c.encode_utf8(&mut buf).as_bytes());
                    acc = Hir::alternation(vec![Hir::empty(), Hir::concat(vec![one, acc])]);
                }
            } else {
                acc = Hir::fail();
            }
            acc
        }
        HirKind::Class(_) => Hir::empty(),
        HirKind::Repetition(rep) => match rep.max {
            Some(0) => Hir::fail(),
            max => Hir::concat(vec![
                Hir::repetition(Repetition {
                    min: 0,
                    max: max.map(|m| m - 1),
                    greedy: rep.greedy,
                    sub: rep.sub.clone(),
                }),
                reads_at_end(&rep.sub)?,
            ]),
        },
        HirKind::Capture(cap) => reads_at_end(&cap.sub)?,
        HirKind::Concat(parts) => {
            let Some((last, init)) = parts.split_last() else {
                return Some(Hir::fail());
            };
            let mut acc = reads_at_end(last)?;
            for part in init.iter().rev() {
                acc = Hir::alternation(vec![
                    reads_at_end(part)?,
                    Hir::concat(vec![part.clone(), acc]),
                ]);
            }
            acc
        }
        HirKind::Alternation(alts) => {
            Hir::alternation(alts.iter().map(reads_at_end).collect::<Option<Vec<_>>>()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(p: &str) -> Pattern {
        Pattern::new(PyRegex::new(p).unwrap()).unwrap()
    }

    fn show(s: Search) -> String {
        match s {
            Search::None => "none".into(),
            Search::Partial(p) => format!("partial {p}"),
            Search::Full(f) => format!("full {}..{}", f.start, f.end),
        }
    }

    /// Each line was measured with `regex.compile(p, regex.DOTALL).search(t, partial=True)`
    /// (regex 2026.11.15); a partial match at the very end is our `None`.
    #[test]
    fn partial_search_matches_the_regex_module() {
        for (p, t, want) in [
            (r"\s*<tool_call>", "abc  <tool", "partial 3"),
            (r"\s*<tool_call>", "abc  <tool_call>", "full 3..16"),
            (r"\s*<tool_call>", "abc  ", "partial 3"),
            (r"\s*<tool_call>", "abc", "none"),
            (r"\s*<tool_call>", "ab <x <tool_call> <tool", "full 5..17"),
            (r"<a>|<abc>", "x<ab", "partial 1"),
            (r"ab|c", "xa c", "full 3..4"),
            (r"a.*b", "xa  ", "partial 1"),
            (r"a.*b|c", "xa c", "full 3..4"),
            (r"<eos>|s", "x<eos", "full 4..5"),
            (r"abcd|c", "xabc", "full 3..4"),
            (r"a{3}", "xaa", "partial 1"),
            (r"a+", "baa", "full 1..3"),
            (r"x$", "ax", "full 1..2"),
            (r"a$", "xa\n", "full 1..2"),
            (r"a\Ab", "xa", "none"),
            (r"^ab", "xa", "none"),
            (r"(?m)^ab", "x\na", "partial 2"),
            (
                r"\s*(?:<\|im_end\|>|<\|endoftext\|>)",
                "hello\n<|im_",
                "partial 5",
            ),
            (r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "hel lo", "none"),
            (
                r"\s*(?:<\|im_end\|>|<\|endoftext\|>)",
                "hel <|im_e",
                "partial 3",
            ),
            (
                r"</function>\s*</tool_call>",
                "foo</function>\n",
                "partial 3",
            ),
            (r"(?:<a>)*<b>", "q<a><a", "partial 1"),
            (r"[^x]*x", "abc", "partial 0"),
            (
                r"<\|tool_call>call:(?P<name>\w+)",
                "x<|tool_call>call:get_w",
                "full 1..23",
            ),
            (
                r"<\|tool_call>call:(?P<name>\w+)",
                "x<|tool_call>call:",
                "partial 1",
            ),
            (r"a*", "bbb", "full 0..0"),
        ] {
            assert_eq!(show(pat(p).search(t, 0, true)), want, "{p:?} on {t:?}");
        }
    }

    #[test]
    fn literal_search() {
        let l = Literals::new(vec!["<a>".into(), "<a-long>".into()]);
        assert!(!l.can_extend);
        assert_eq!(show(l.search("x<a-lo", 0, true)), "partial 1");
        assert_eq!(show(l.search("x<a-long>", 0, true)), "full 1..9");
        let l = Literals::new(vec!["</a>".into(), "</a>>".into()]);
        assert!(l.can_extend);
        assert_eq!(show(l.search("</a>x</a>>", 1, true)), "full 5..10");
        assert_eq!(show(l.search("é</", 0, true)), "partial 2");
        assert_eq!(show(l.search("é</", 0, false)), "none");
        let aa = Literals::new(vec!["aa".into()]);
        assert_eq!(aa.last_match_end("aaa"), Some(2));
        assert_eq!(aa.last_match_end("aaaa"), Some(4));
    }

    #[test]
    fn refuses_fancy_patterns() {
        assert!(Pattern::new(PyRegex::new(r"a(?=b)").unwrap()).is_err());
        assert!(Pattern::new(PyRegex::new(r"\bend\b").unwrap()).is_err());
    }
}

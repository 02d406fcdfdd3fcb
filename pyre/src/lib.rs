//! Python `re` patterns (always compiled with `re.DOTALL`) on Rust regex engines.
//!
//! Hugging Face response schemas carry Python regexes, and the reference parser runs them
//! with `re.search`, `re.finditer` and `re.sub`. This module parses the pattern with a
//! transcription of Python 3.11's `re/_parser.py` (same errors, same positions), emits an
//! equivalent pattern for the `regex` crate — or for `fancy-regex` when look-around,
//! backreferences, atomic groups, conditionals or Python's `\b` are needed — and drives
//! the searches itself so that matches, groups and empty-match rules equal Python's.
//!
//! What differs from Rust syntax and is translated:
//! - `$` (no MULTILINE) also matches before a final `\n`: `(?=\n?\z)`, or, where nothing
//!   can follow it, a consuming `(\n?)\z` whose newline is then taken off the reported spans.
//! - `\d`, `\w`, `\s`, `\b`, `\B` use Python's Unicode sets (`crate::unicode`), or ASCII
//!   under `(?a)`. Python 3.11's `\B` never matches in an empty string.
//! - `\Z` is Rust's `\z`; `\<`, `\>` and other escaped punctuation are literals;
//!   `{` that is not a repetition is a literal; `{,n}` is `{0,n}`; class syntax is
//!   re-emitted with every member escaped, so `[[]`, `[a&&b]`, `[a--b]` keep Python's meaning.
//!
//! Case-insensitive matching (`(?i)`) is emitted as Rust's `(?i)` (simple case folding);
//! Python instead compares `lower(c)` and adds a few equivalences (`re/_casefix.py`).
//! A brute force over every code point (python3 3.11.7 against regex-syntax 0.8) found:
//! - single literals: 58 code points differ. `I i İ ı` form one class in Python (two in
//!   Rust); this module emits that class explicitly, so literals and classes containing
//!   them are exact. The other 54 are letters added after Python's Unicode 14 (U+019B/U+A7DC,
//!   U+0264/U+A7CB, U+1C89/U+1C8A, U+A7CC/U+A7CD, U+A7DA/U+A7DB, Garay U+10D50–U+10D65 and
//!   U+10D70–U+10D85): Python 3.11 matches them exactly, Rust also matches their case pair.
//! - classes: `(?i)[a-z]`, `[^a-z]`, `[k]`, `[\u0100-\u017f]`, Greek: identical;
//!   `(?i)[\w]` also matches U+0345, U+A7CB and U+A7DC in Rust only.
//! - backreferences under `(?i)` compare with fancy-regex's folding (not brute-forced).
//!
//! Under `(?ai)` folding is ASCII-only and emitted explicitly (`[kK]`), as in Python.
//!
//! Rejected with a [`RegexError`] (never approximated): `\N{...}`, the `(?t)` flag,
//! case-insensitive backreferences under `(?a)`, repetitions whose body can match empty
//! while containing a capture group or preferring the empty match (see `emit.rs`), and
//! anything the Rust engines refuse (e.g. their size limits).

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod engine;
mod pyutil;
pub mod syntax;
#[cfg(test)]
mod tests;
pub mod unicode;

use once_cell::sync::OnceCell;

pub use engine::literal::{required_prefix, required_suffix};
pub use engine::matcher::{FANCY_BACKTRACK_LIMIT, STEPS_PER_BYTE};
pub use syntax::emit::DollarFixup;
pub use syntax::{expanded_size, MAX_EXPANDED_SIZE};

use engine::literal::ScanCache;
use engine::matcher::Compiled;
use engine::spans::Spans;
use engine::{Automaton, Strategy};
use syntax::{ast, emit, parse, replacement};

/// Fuzz builds only (`--cfg fuzzing`, set by cargo-fuzz): compiled patterns remembered by key.
///
/// Why: the fuzz targets that load arbitrary specs spent about 87 % of their time compiling
/// patterns (callgrind on 100 corpus inputs), and mutated inputs repeat most of their patterns.
/// Compilation is a pure function of its arguments, so a remembered engine is the one a fresh
/// compile would give: what the targets check (loading, matching, streaming) is unchanged, at
/// several times the executions per second. Never compiled into a release build. chatparse's
/// streaming delimiters use it too.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing_memo {
    use std::any::{Any, TypeId};
    use std::cell::RefCell;
    use std::collections::HashMap;

    /// Entries kept at most; the memo starts afresh when full (bounds a long run's memory).
    const CAPACITY: usize = 8192;

    thread_local! {
        static MEMO: RefCell<HashMap<(TypeId, String), Box<dyn Any>>> =
            RefCell::new(HashMap::new());
    }

    /// `build()`'s value, built once per `key` (and type) while it stays in the memo.
    pub fn remembered<V: Clone + 'static>(key: String, build: impl FnOnce() -> V) -> V {
        let key = (TypeId::of::<V>(), key);
        let found = MEMO.with(|m| {
            m.borrow()
                .get(&key)
                .and_then(|v| v.downcast_ref::<V>())
                .cloned()
        });
        if let Some(found) = found {
            return found;
        }
        let built = build();
        MEMO.with(|m| {
            let mut memo = m.borrow_mut();
            if memo.len() >= CAPACITY {
                memo.clear();
            }
            memo.insert(key, Box::new(built.clone()));
        });
        built
    }
}

/// Which Rust engine runs a translated pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The `regex` crate (finite automata; no look-around or backreferences).
    Regex,
    /// `fancy-regex` (backtracking), only for patterns that need it.
    Fancy,
}

/// A Python pattern that cannot be compiled or faithfully translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexError {
    /// What is wrong, e.g. "bad escape \\q" (Python's `re.error` message where it has one).
    pub message: String,
    /// How to fix it.
    pub fix: String,
    /// Character offset in the Python pattern, when known.
    pub offset: Option<usize>,
}

impl RegexError {
    pub(crate) fn new(
        message: impl Into<String>,
        fix: impl Into<String>,
        offset: Option<usize>,
    ) -> Self {
        RegexError {
            message: message.into(),
            fix: fix.into(),
            offset,
        }
    }
}

impl std::fmt::Display for RegexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(pos) = self.offset {
            write!(f, " at position {pos}")?;
        }
        write!(f, " ({})", self.fix)
    }
}

impl std::error::Error for RegexError {}

/// A runtime failure of a matcher: the search exceeded its step budget (see [`Budget`]), or an
/// engine failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchError {
    /// What failed; the input that triggered it is not included.
    pub message: String,
    /// Set when the search stopped because it would have taken more steps than the input's
    /// budget allows: the pattern is too costly for this input (catastrophic backtracking).
    pub budget: Option<Budget>,
}

/// The step budget a search exceeded.
///
/// Patterns that only a backtracker can run (look-around, backreferences, a `$` in mid-pattern)
/// get, per `search`/`finditer`/`sub` call on `n` bytes, [`FANCY_BACKTRACK_LIMIT`] `+`
/// [`STEPS_PER_BYTE`]` * n` steps of our backtracker, then (once per call) a fancy-regex search
/// with as many backtracks (`n` rounded up to a power of two from 1 KB; fancy-regex alone, for
/// the patterns ours cannot run, gets that limit per search). Patterns the finite automata can
/// run never exceed one (they fall back to the automata, linear in `n` with
/// [`MAX_EXPANDED_SIZE`] as the bound on states per byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The steps the search was allowed.
    pub steps: u64,
    /// The input's length in bytes.
    pub input_len: usize,
}

impl MatchError {
    pub(crate) fn too_costly(steps: u64, input_len: usize) -> Self {
        MatchError {
            message: format!(
                "the pattern is too costly for this input: the search needed more than {steps} \
                 backtracking steps on {input_len} bytes (nested or adjacent repeats that can \
                 match the same text backtrack exponentially; make them unambiguous, e.g. \
                 (?:\\S(?:.*?\\S)??)?? instead of a repeated group of such loops)"
            ),
            budget: Some(Budget { steps, input_len }),
        }
    }
}

impl std::fmt::Display for MatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MatchError {}

/// The result of translating a Python pattern (always with DOTALL) to Rust syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    /// The pattern for [`Translation::engine`].
    pub rust_pattern: String,
    pub engine: Engine,
    /// Names of capture groups 1..=n; `None` for unnamed groups.
    pub group_names: Vec<Option<String>>,
    /// Whether the pattern can match the empty string (by Python's width computation, so
    /// `\b` counts as empty); such patterns need the "must advance" search in `find_iter`.
    pub can_match_empty: bool,
    /// Rust capture index of each Python group (`group_map[0] == 0`); they differ only when
    /// hidden `$` captures are present.
    pub group_map: Vec<usize>,
    /// Hidden `(\n?)\z` captures standing for a tail `$` (engine `Regex` only).
    pub dollar_fixups: Vec<DollarFixup>,
}

/// Translates a Python pattern (as compiled with `re.DOTALL`) to Rust syntax.
pub fn translate(python_pattern: &str) -> Result<Translation, RegexError> {
    let ast = parse::parse(python_pattern)?;
    emit::check_supported(&ast)?;
    Ok(translation_of(&ast))
}

fn translation_of(ast: &ast::Ast) -> Translation {
    let engine = emit::choose_engine(ast);
    let emitted = emit::emit(ast, engine);
    Translation {
        rust_pattern: emitted.pattern,
        engine,
        group_names: ast.names.iter().skip(1).cloned().collect(),
        can_match_empty: ast.root.width(&ast.group_widths).0 == 0,
        group_map: emitted.group_map,
        dollar_fixups: emitted.fixups,
    }
}

/// What a pattern answers when the text holds none of its markers ([`PyRegex::marker_analysis`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerAnalysis {
    /// The literals, sorted: a text (from the search position on) without any of them decides
    /// the search as below.
    pub markers: Vec<String>,
    /// `None`: no match, from any position. `Some(g)`: the pattern is anchored at the text's
    /// start; a search from 0 matches the whole text, group `g` is the text stripped of Python
    /// white space ([`stripped_span`]; not taking part when nothing is left), and every other
    /// group takes no part.
    pub stripped_group: Option<usize>,
}

/// What a `^(?:L X)?Y` pattern answers for `L` followed by marker-free text
/// ([`PyRegex::after_literal_analysis`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfterLiteral {
    /// `L`.
    pub literal: String,
    /// The group that holds the text after `L`, stripped.
    pub group: usize,
    /// The literals that text must not hold, sorted.
    pub markers: Vec<String>,
}

/// The byte range of `text` stripped of Python white space (`str.strip()`, which is what `\s`
/// matches), `None` when nothing is left: the group a whole-message pattern's marker shortcut
/// answers with (`engine/prefilter.rs`).
///
/// ```
/// assert_eq!(chatparse_pyre::stripped_span(" \u{3000}Hi there\n"), Some((4, 12)));
/// assert_eq!(chatparse_pyre::stripped_span(" \t\u{85}"), None);
/// ```
pub fn stripped_span(text: &str) -> Option<(usize, usize)> {
    engine::prefilter::strip(text)
}

/// A compiled Python pattern with Python `re` semantics.
#[derive(Debug)]
pub struct PyRegex {
    pattern: String,
    translation: Translation,
    ast: ast::Ast,
    /// The compiled `regex`/fancy-regex engine: the whole answer under
    /// [`Strategy::Automaton`], the fallback of the backtracker.
    main: Compiled,
    /// How searches run (chosen once from the pattern's shape; see `engine`).
    strategy: Strategy,
    /// The answer without any engine when the text holds none of the pattern's markers
    /// (`engine/prefilter.rs`).
    prefilter: Option<engine::prefilter::Prefilter>,
    /// `(?:P)(?!\G)` on fancy-regex, for the search after an empty match; one per budget rung
    /// (see `engine::matcher::fancy_rung`), each built on first use.
    not_empty_at_start: Vec<OnceCell<Result<Compiled, RegexError>>>,
    /// `main` with the larger budgets of rungs 1.. when it runs on fancy-regex (built on first
    /// use; `main` itself has rung 0's).
    fancy_rungs: Vec<OnceCell<Result<Compiled, RegexError>>>,
    /// The fixed part of the backtracking budgets ([`FANCY_BACKTRACK_LIMIT`] but in tests).
    backtrack_limit: usize,
    /// Every match starts at the text's start (`^` without `MULTILINE`, `\A`): a search from
    /// any later position finds none (`re.sub` and `re.finditer` search again after each match).
    text_start_only: bool,
}

/// One match: group 0 and every capture group, as slices of the haystack.
#[derive(Debug, Clone)]
pub struct Captures<'h> {
    hay: &'h str,
    /// Python numbering: `spans[0]` is the whole match.
    spans: Spans,
}

impl<'h> Captures<'h> {
    /// Group `i`'s text (`0` = whole match); `None` if it did not take part or does not exist.
    pub fn get(&self, i: usize) -> Option<&'h str> {
        let (s, e) = self.span(i)?;
        self.hay.get(s..e)
    }

    /// Group `i`'s byte offsets in the haystack.
    pub fn span(&self, i: usize) -> Option<(usize, usize)> {
        self.spans.get(i)
    }

    /// Byte offset where the match starts.
    pub fn start(&self) -> usize {
        self.span(0).map_or(0, |s| s.0)
    }

    /// Byte offset where the match ends.
    pub fn end(&self) -> usize {
        self.span(0).map_or(0, |s| s.1)
    }

    /// The whole match (group 0).
    pub fn as_str(&self) -> &'h str {
        self.get(0).unwrap_or("")
    }

    /// Number of groups including group 0 (Python's `m.re.groups + 1`).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Always `false`: group 0 is always present.
    pub fn is_empty(&self) -> bool {
        self.spans.len() == 0
    }
}

/// A parsed `re.sub` replacement template.
#[derive(Debug, Clone)]
pub struct Replacement {
    pieces: Vec<replacement::Piece>,
}

impl Replacement {
    /// Parses `template` as `re.sub` would for `regex`: `\1`, `\g<name>`, `\g<0>`, escapes,
    /// octal; unknown ASCII-letter escapes and references to missing groups are errors.
    pub fn parse(template: &str, regex: &PyRegex) -> Result<Self, RegexError> {
        let pieces = replacement::parse_template(template, regex.group_count(), &regex.ast.names)?;
        Ok(Replacement { pieces })
    }

    /// The groups the replacement writes, in the order it writes them (`\\1\\3\\2` gives 1, 3, 2).
    ///
    /// ```
    /// use chatparse_pyre::{PyRegex, Replacement};
    /// let re = PyRegex::new(r"(a)(b)(c)").unwrap();
    /// let r = Replacement::parse(r"\1-\3\g<2>", &re).unwrap();
    /// assert_eq!(r.groups().collect::<Vec<_>>(), [1, 3, 2]);
    /// ```
    pub fn groups(&self) -> impl Iterator<Item = usize> + '_ {
        self.pieces.iter().filter_map(|piece| match piece {
            replacement::Piece::Group(g) => Some(*g),
            replacement::Piece::Literal(_) => None,
        })
    }

    /// The replacement for one match (what `m.expand(template)` returns).
    pub fn expand(&self, caps: &Captures<'_>) -> String {
        let mut out = String::new();
        replacement::expand(&self.pieces, caps, &mut out);
        out
    }
}

/// What [`PyRegex::sub_slice`] made: a byte range of the input when the result is one, else a new
/// string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Substituted {
    Slice(std::ops::Range<usize>),
    Owned(String),
}

/// A `re.sub` result as it is built: a range of the input while it still is one (with a literal
/// waiting to be found right before the first range), then a string.
enum SubOutput<'r> {
    Slice {
        range: Option<(usize, usize)>,
        pending: &'r str,
    },
    Owned(String),
}

impl<'r> SubOutput<'r> {
    /// Appends `hay[x..y]`.
    fn push_range(&mut self, hay: &str, x: usize, y: usize) {
        if x >= y {
            return;
        }
        let bytes = hay.as_bytes();
        match self {
            SubOutput::Slice { range, pending } => match *range {
                None if pending.is_empty() => *range = Some((x, y)),
                None if x >= pending.len()
                    && bytes[x - pending.len()..x] == *pending.as_bytes() =>
                {
                    *range = Some((x - pending.len(), y));
                    *pending = "";
                }
                Some((a, b)) if b == x => *range = Some((a, y)),
                _ => {
                    self.make_owned(hay);
                    self.push_range(hay, x, y);
                }
            },
            SubOutput::Owned(out) => out.push_str(hay.get(x..y).unwrap_or("")),
        }
    }

    /// Appends replacement text.
    fn push_literal(&mut self, hay: &str, text: &'r str) {
        if text.is_empty() {
            return;
        }
        match self {
            SubOutput::Slice { range, pending } => match *range {
                None if pending.is_empty() => *pending = text,
                Some((a, b)) if hay.as_bytes()[b..].starts_with(text.as_bytes()) => {
                    *range = Some((a, b + text.len()));
                }
                _ => {
                    self.make_owned(hay);
                    self.push_literal(hay, text);
                }
            },
            SubOutput::Owned(out) => out.push_str(text),
        }
    }

    fn make_owned(&mut self, hay: &str) {
        if let SubOutput::Slice { range, pending } = self {
            // Room for replacements a little longer than what they replace (`<think>\1`):
            // growing past the capacity would copy the whole output once more.
            let mut out = String::with_capacity(hay.len().saturating_add(256));
            out.push_str(pending);
            if let Some((a, b)) = *range {
                out.push_str(hay.get(a..b).unwrap_or(""));
            }
            *self = SubOutput::Owned(out);
        }
    }
}

/// `re.finditer`: successive non-overlapping matches with Python 3.7+ empty-match rules.
pub struct FindIter<'r, 'h> {
    regex: &'r PyRegex,
    hay: &'h str,
    pos: usize,
    /// The previous match was empty at `pos`: the next one may not be empty there.
    must_advance: bool,
    done: bool,
    /// Literal positions already found, so successive matches never rescan text.
    cache: ScanCache,
    /// Backtracking left for all the searches of this iteration.
    steps: Allowance,
}

/// What one `search`/`finditer`/`sub` call may still spend on backtracking: our backtracker's
/// steps, and whether fancy-regex already answered a search it gave up on (it may do so once per
/// call, within its own limit, so that the call stays linear in the input).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowance {
    steps: u64,
    fancy_fallback_used: bool,
}

impl<'h> Iterator for FindIter<'_, 'h> {
    type Item = Result<Captures<'h>, MatchError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos > self.hay.len() {
            return None;
        }
        let found = if self.must_advance {
            self.regex
                .search_not_empty_at(self.hay, self.pos, &mut self.steps)
        } else {
            self.regex
                .search_at(self.hay, self.pos, &mut self.cache, &mut self.steps)
        };
        match found {
            Ok(Some(caps)) => {
                let (s, e) = caps.span(0).unwrap_or((self.pos, self.pos));
                self.pos = e;
                self.must_advance = s == e;
                Some(Ok(caps))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(err) => {
                self.done = true;
                Some(Err(err))
            }
        }
    }
}

impl PyRegex {
    /// Parses, checks, translates and compiles a Python pattern.
    pub fn new(python_pattern: &str) -> Result<Self, RegexError> {
        Self::with_backtrack_limit(python_pattern, FANCY_BACKTRACK_LIMIT)
    }

    /// Like [`PyRegex::new`] with another fixed part of the backtracking budget (tests use a
    /// small one to reach [`MatchError`] quickly).
    pub(crate) fn with_backtrack_limit(
        python_pattern: &str,
        backtrack_limit: usize,
    ) -> Result<Self, RegexError> {
        let ast = parse::parse(python_pattern)?;
        emit::check_supported(&ast)?;
        let translation = translation_of(&ast);
        let main = Compiled::new(
            &translation.rust_pattern,
            translation.engine,
            engine::matcher::fancy_limit(backtrack_limit, 0),
        )?;
        let strategy = Strategy::choose(&ast, &translation);
        let prefilter = strategy.prefilter(&ast);
        let text_start_only = engine::backtrack::starts_anchored(&ast.root);
        Ok(PyRegex {
            prefilter,
            pattern: python_pattern.to_string(),
            translation,
            ast,
            main,
            strategy,
            not_empty_at_start: (0..engine::matcher::FANCY_RUNGS)
                .map(|_| OnceCell::new())
                .collect(),
            fancy_rungs: (1..engine::matcher::FANCY_RUNGS)
                .map(|_| OnceCell::new())
                .collect(),
            backtrack_limit,
            text_start_only,
        })
    }

    /// Runs every search on the regex engine, never on substring searches (see
    /// chatparse's `Schema::disable_fast_paths`). Not API: a hook for benchmarks and tests.
    #[cfg(any(test, feature = "unstable-bench-hooks"))]
    #[doc(hidden)]
    pub fn disable_fast_paths(&mut self) {
        self.strategy = Strategy::Automaton(Automaton::Scan);
        self.prefilter = None;
    }

    /// Runs every search on the backtracking matcher, if it supports the pattern (tests hold it
    /// to Python's answers on patterns the selection would give to other engines).
    #[cfg(test)]
    pub(crate) fn force_backtrack(&mut self) -> bool {
        match engine::backtrack::Program::compile(&self.ast) {
            Some(program) => {
                self.prefilter = None;
                self.strategy = Strategy::Backtrack {
                    program,
                    fallback: Automaton::Scan,
                };
                true
            }
            None => false,
        }
    }

    /// Whether searches run on chatparse's own backtracking matcher (with substring-search
    /// skips through lazy loops) rather than on a `regex`/`fancy-regex` engine. Patterns that
    /// reduce to plain substring searches use neither.
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// let whole = PyRegex::new(r"^\s*(?:<think>(?P<r>.*?)(?:</think>|$))?(?P<c>.*?)\s*$").unwrap();
    /// assert!(whole.uses_backtracking_matcher());
    /// let plain = PyRegex::new(r"<think>(.*?)(?:</think>|$)").unwrap();
    /// assert!(plain.uses_substring_search() && !plain.uses_backtracking_matcher());
    /// ```
    pub fn uses_backtracking_matcher(&self) -> bool {
        matches!(self.strategy, Strategy::Backtrack { .. })
    }

    /// Whether searches run as substring searches instead of on a regex engine (the pattern is a
    /// literal opener, a DOTALL `.*?`/`.*` body and literal/`$` closers).
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// assert!(PyRegex::new(r"<think>(.*?)(?:</think>|$)").unwrap().uses_substring_search());
    /// assert!(!PyRegex::new(r"<think>\s*(.*?)</think>").unwrap().uses_substring_search());
    /// ```
    pub fn uses_substring_search(&self) -> bool {
        matches!(self.strategy, Strategy::Substring(_))
    }

    /// The literals whose absence answers a search without any engine, and whether the answer
    /// is then the stripped whole text (`true`) or no match (`false`); see `engine/prefilter.rs`.
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// let re = PyRegex::new(r"^(?:\s*<think>)?(.*?</think>)").unwrap();
    /// assert_eq!(re.marker_shortcut(), Some((&["</think>".to_string()][..], false)));
    /// let re = PyRegex::new(r"^\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??(?:<end>|$)").unwrap();
    /// assert_eq!(re.marker_shortcut(), Some((&["<end>".to_string()][..], true)));
    /// ```
    pub fn marker_shortcut(&self) -> Option<(&[String], bool)> {
        self.prefilter.as_ref().map(|p| {
            (
                p.markers.literals(),
                matches!(p.outcome, engine::prefilter::Outcome::Strip { .. }),
            )
        })
    }

    /// The marker analysis of the pattern's syntax tree (`engine/prefilter.rs`), whatever engine
    /// runs it and whether or not searches use it: the literals whose absence from the text
    /// decides every search, and what a search then answers. Code generators use it to answer a
    /// marker-free message without any search.
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// let re = PyRegex::new(r"^\s*(?:<a>.*)?(?:(?P<c>\S(?:.*?\S)??)\s*)??(?:<end>|$)").unwrap();
    /// let found = re.marker_analysis().unwrap();
    /// assert_eq!(found.markers, ["<a>", "<end>"]);
    /// assert_eq!(found.stripped_group, Some(1));
    /// let found = PyRegex::new(r"<a>(.*)").unwrap().marker_analysis().unwrap();
    /// assert_eq!((&found.markers[..], found.stripped_group), (&["<a>".to_string()][..], None));
    /// ```
    pub fn marker_analysis(&self) -> Option<MarkerAnalysis> {
        let found = engine::prefilter::Prefilter::new(&self.ast.root, self.ast.group_count())?;
        Some(MarkerAnalysis {
            markers: found.markers.literals().to_vec(),
            stripped_group: match found.outcome {
                engine::prefilter::Outcome::Strip { group, .. } => Some(group),
                engine::prefilter::Outcome::NoMatch => None,
            },
        })
    }

    /// For a pattern `^(?:L X)?Y` (`L` a literal; also inside an outer `(?:…)?`): what a search
    /// of `literal + R` answers when `R` starts with a non-space character and holds none of
    /// the returned markers — the match from 0, group `group` is `R` stripped of white space,
    /// and every other group takes no part (see `engine/prefilter.rs`, `after_literal`). The
    /// literal is `L`, or `L` and the text of a head `X` starts with (functionary v3.2's
    /// `>>>all` and `[ \t]*\r?\n`: `>>>all\n`).
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// let re = PyRegex::new(r"^(?:<t>\s*(?:(?P<r>\S(?:.*?\S)??)\s*)??(?:</t>|$))?\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??$").unwrap();
    /// let found = re.after_literal_analysis().unwrap();
    /// assert_eq!((found.literal.as_str(), found.group, &found.markers[..]), ("<t>", 1, &["</t>".to_string()][..]));
    /// let re = PyRegex::new(r"^(?:(?:>>>all[ \t]*\r?\n\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??)?(?:(?P<calls>>>>\w+\n.*?)\s*)?(?:<\|eot_id\|>|$))?").unwrap();
    /// let found = re.after_literal_analysis().unwrap();
    /// assert_eq!((found.literal.as_str(), found.group), (">>>all\n", 1));
    /// assert_eq!(found.markers, ["<|eot_id|>", ">>>"]);
    /// ```
    pub fn after_literal_analysis(&self) -> Option<AfterLiteral> {
        let found = engine::prefilter::after_literal(&self.ast.root)?;
        Some(AfterLiteral {
            literal: found.literal,
            group: found.group,
            markers: found.markers,
        })
    }

    /// The characters `E` when the pattern is exactly `^\s*([^E\s])`: it matches exactly when
    /// the text's first non-space character exists and is none of `E`, and group 1 is that
    /// character (so `re.sub` with the replacement `L\1` puts `L` in front of the text with its
    /// leading white space removed).
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// assert_eq!(PyRegex::new(r"^\s*([^<\s])").unwrap().first_non_space_except(), Some(vec!['<']));
    /// assert_eq!(PyRegex::new(r"^\s*([^<])").unwrap().first_non_space_except(), None);
    /// ```
    pub fn first_non_space_except(&self) -> Option<Vec<char>> {
        engine::prefilter::first_non_space_except(&self.ast.root)
    }

    /// The literal `L` when the pattern is exactly `^\s*(?:L)?`: on a text without `L` it
    /// matches the leading white space only, so `re.sub` with the replacement `L` puts `L` in
    /// front of the text with its leading white space removed (functionary v3.2's root
    /// substitution).
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// assert_eq!(PyRegex::new(r"^\s*(?:>>>)?").unwrap().optional_literal_after_space().as_deref(), Some(">>>"));
    /// assert_eq!(PyRegex::new(r"^\s*(?:>>>)??").unwrap().optional_literal_after_space(), None);
    /// assert_eq!(PyRegex::new(r"^\s*(?:>>>|x)?").unwrap().optional_literal_after_space(), None);
    /// ```
    pub fn optional_literal_after_space(&self) -> Option<String> {
        engine::prefilter::optional_literal_after_space(&self.ast.root)
    }

    /// The Python pattern this was built from.
    pub fn python_pattern(&self) -> &str {
        &self.pattern
    }

    /// How the pattern was translated (for diagnostics).
    pub fn translation(&self) -> &Translation {
        &self.translation
    }

    /// The parsed pattern, flags resolved (see [`syntax`]): for tools that recognise shapes.
    pub fn syntax_tree(&self) -> &syntax::Ast {
        &self.ast
    }

    /// Number of capture groups (Python's `pattern.groups`).
    pub fn group_count(&self) -> usize {
        self.ast.group_count()
    }

    /// Names of groups 1..=n.
    pub fn group_names(&self) -> &[Option<String>] {
        &self.translation.group_names
    }

    /// Whether any group is named (`pattern.groupindex` is non-empty).
    pub fn has_named_groups(&self) -> bool {
        self.translation.group_names.iter().any(Option::is_some)
    }

    /// The number of the group called `name` (`pattern.groupindex[name]`).
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.translation
            .group_names
            .iter()
            .position(|n| n.as_deref() == Some(name))
            .map(|i| i + 1)
    }

    /// Whether capture group `group` takes part in every match (it is not inside an alternative,
    /// an optional repeat, a look-around or a conditional). Code generators use it to know that a
    /// match never yields `None` for that group.
    ///
    /// ```
    /// use chatparse_pyre::PyRegex;
    /// assert!(PyRegex::new("<a>(.*?)</a>").unwrap().group_always_participates(1));
    /// assert!(!PyRegex::new("(?:<a>(.*?)</a>)?").unwrap().group_always_participates(1));
    /// assert!(!PyRegex::new("x|(y)").unwrap().group_always_participates(1));
    /// ```
    pub fn group_always_participates(&self, group: usize) -> bool {
        fn walk(node: &ast::Node, group: usize) -> Option<bool> {
            use ast::Node;
            match node {
                Node::Group { index, node } => {
                    if *index == Some(group) {
                        return Some(true);
                    }
                    walk(node, group)
                }
                Node::Atomic(node) => walk(node, group),
                Node::Concat(nodes) => nodes.iter().find_map(|n| walk(n, group)),
                Node::Alt(nodes) => {
                    let found = nodes.iter().find_map(|n| walk(n, group))?;
                    Some(found && nodes.len() == 1)
                }
                Node::Repeat { node, min, .. } => walk(node, group).map(|f| f && *min >= 1),
                Node::Look { node, .. } => walk(node, group).map(|_| false),
                Node::Cond { yes, no, .. } => walk(yes, group)
                    .or_else(|| no.as_deref().and_then(|n| walk(n, group)))
                    .map(|_| false),
                _ => None,
            }
        }
        walk(&self.ast.root, group).unwrap_or(false)
    }

    /// `re.search(pattern, hay, re.DOTALL)`.
    pub fn search<'h>(&self, hay: &'h str) -> Result<Option<Captures<'h>>, MatchError> {
        let mut steps = self.allowance(hay);
        self.search_at(hay, 0, &mut ScanCache::default(), &mut steps)
    }

    /// `re.finditer(pattern, hay, re.DOTALL)`, Python 3.7+ empty-match rules.
    pub fn find_iter<'r, 'h>(&'r self, hay: &'h str) -> FindIter<'r, 'h> {
        FindIter {
            regex: self,
            hay,
            pos: 0,
            must_advance: false,
            done: false,
            cache: ScanCache::default(),
            steps: self.allowance(hay),
        }
    }

    /// `re.sub(pattern, replacement, hay, flags=re.DOTALL)`.
    pub fn sub(&self, replacement: &Replacement, hay: &str) -> Result<String, MatchError> {
        Ok(match self.sub_slice(replacement, hay)? {
            Substituted::Slice(range) => hay.get(range).unwrap_or("").to_owned(),
            Substituted::Owned(out) => out,
        })
    }

    /// `re.sub` without copying when the result is a slice of `hay`: nothing matched, a match
    /// at the end was replaced by nothing (`<\|end\|>.*` → ``), or a replacement rebuilt text that
    /// was already there (`^(?:\s*<think>)?(.*?</think>)` → `<think>\1` on output that starts
    /// with `<think>`). The result is compared byte for byte as it is built; only when it departs
    /// from the input is a new string made.
    ///
    /// ```
    /// use chatparse_pyre::{PyRegex, Replacement, Substituted};
    /// let re = PyRegex::new(r"^(?:\s*<think>)?(.*?</think>)").unwrap();
    /// let rep = Replacement::parse(r"<think>\1", &re).unwrap();
    /// let hay = "  <think>hmm</think>Hi";
    /// assert_eq!(re.sub_slice(&rep, hay).unwrap(), Substituted::Slice(2..hay.len()));
    /// let hay = "hmm</think>Hi";
    /// let out = Substituted::Owned("<think>hmm</think>Hi".to_owned());
    /// assert_eq!(re.sub_slice(&rep, hay).unwrap(), out);
    /// ```
    pub fn sub_slice(
        &self,
        replacement: &Replacement,
        hay: &str,
    ) -> Result<Substituted, MatchError> {
        let mut out = SubOutput::Slice {
            range: None,
            pending: "",
        };
        let mut last = 0;
        for caps in self.find_iter(hay) {
            let caps = caps?;
            let (s, e) = caps.span(0).unwrap_or((last, last));
            out.push_range(hay, last, s);
            for piece in &replacement.pieces {
                match piece {
                    replacement::Piece::Literal(text) => out.push_literal(hay, text),
                    replacement::Piece::Group(i) => {
                        if let Some((gs, ge)) = caps.span(*i) {
                            out.push_range(hay, gs, ge);
                        }
                    }
                }
            }
            last = e;
        }
        out.push_range(hay, last, hay.len());
        Ok(match out {
            SubOutput::Slice { range, pending: "" } => {
                let (a, b) = range.unwrap_or((0, 0));
                Substituted::Slice(a..b)
            }
            SubOutput::Slice { pending, .. } => Substituted::Owned(pending.to_owned()),
            SubOutput::Owned(out) => Substituted::Owned(out),
        })
    }

    /// The first match starting at or after byte `pos` (Python's `pattern.search(hay, pos)`
    /// for char-boundary `pos`).
    fn search_at<'h>(
        &self,
        hay: &'h str,
        pos: usize,
        cache: &mut ScanCache,
        steps: &mut Allowance,
    ) -> Result<Option<Captures<'h>>, MatchError> {
        if self.text_start_only && pos > 0 {
            return Ok(None);
        }
        if let Some(answer) = self.prefilter.as_ref().and_then(|p| p.search(hay, pos)) {
            return Ok(answer.map(|spans| Captures { hay, spans }));
        }
        let automaton = match &self.strategy {
            Strategy::Substring(plan) => {
                return Ok(plan
                    .search(hay, pos, cache)
                    .map(|spans| Captures { hay, spans }))
            }
            Strategy::Backtrack { program, fallback } => {
                // Past its step budget the backtracker gives up, and the compiled engine answers:
                // the finite automata, or fancy-regex within its own budget (it answers some
                // searches ours cannot, e.g. by running a look-ahead's literal first).
                if let Ok(found) = program.search(hay, pos, None, &mut steps.steps) {
                    return Ok(found.map(|spans| Captures { hay, spans }));
                }
                self.fancy_fallback(hay, steps)?;
                fallback
            }
            Strategy::Automaton(automaton) => automaton,
        };
        if let Automaton::Prefixed(prefix) = automaton {
            return Ok(self
                .prefixed_search(prefix, hay, pos)
                .map(|raw| self.python_captures(hay, &raw)));
        }
        let Some(raw) = self.fancy_for(hay.len())?.captures_at(hay, pos)? else {
            return Ok(None);
        };
        Ok(Some(self.python_captures(hay, &raw)))
    }

    /// `main`, or on fancy-regex the variant whose backtrack limit covers `len` bytes.
    fn fancy_for(&self, len: usize) -> Result<&Compiled, MatchError> {
        let rung = engine::matcher::fancy_rung(len);
        if rung == 0 || !matches!(self.main, Compiled::Fancy(..)) {
            return Ok(&self.main);
        }
        self.fancy_rungs[rung - 1]
            .get_or_init(|| {
                Compiled::new(
                    &self.translation.rust_pattern,
                    Engine::Fancy,
                    engine::matcher::fancy_limit(self.backtrack_limit, rung),
                )
            })
            .as_ref()
            .map_err(|e| MatchError {
                message: format!("cannot build the search for a longer input: {}", e.message),
                budget: None,
            })
    }

    /// Every match starts with the literal `prefix`: its occurrences, in order, are the only
    /// possible starts, and the first one where an anchored search succeeds is the leftmost
    /// match (with the same groups, since an anchored search prefers exactly as an unanchored one
    /// does at that start). This spares the regex engine's reverse scans from an inner literal
    /// back over long text (`to=functions\.[^<]*?<\|message\|>` after a 64 KB reasoning trace).
    fn prefixed_search(
        &self,
        prefix: &memchr::memmem::Finder<'_>,
        hay: &str,
        pos: usize,
    ) -> Option<Spans> {
        // Each anchored search may scan to the end of the text: once they have been charged
        // eight passes over it, one unanchored search (linear) finishes the job.
        let mut allowance = (hay.len() - pos.min(hay.len())).saturating_mul(8) + 4096;
        let mut from = pos;
        loop {
            let at = from + prefix.find(hay.as_bytes().get(from..)?)?;
            let charge = hay.len() - at + 1;
            if charge > allowance {
                return self.main.captures_at(hay, at).ok()?;
            }
            allowance -= charge;
            if let Some(found) = self.main.captures_anchored_at(hay, at)? {
                return Some(found);
            }
            from = at + 1;
        }
    }

    /// Steps the backtracking matcher may take over all the searches of one `search`,
    /// `find_iter` or `sub` call. Patterns `main` runs on finite automata (linear time) get a
    /// budget that any linear match stays far below, so that a pattern which backtracks badly
    /// costs little before the automata answer; for patterns only a backtracker can run, the
    /// budget, then one fancy-regex search within its own limit, bound the work (see [`Budget`]).
    fn allowance(&self, hay: &str) -> Allowance {
        Allowance {
            steps: self.backtrack_budget(hay),
            fancy_fallback_used: false,
        }
    }

    /// Our backtracker gave up: the finite automata answer for free, fancy-regex once per call.
    fn fancy_fallback(&self, hay: &str, steps: &mut Allowance) -> Result<(), MatchError> {
        if self.translation.engine == Engine::Fancy {
            if steps.fancy_fallback_used {
                return Err(MatchError::too_costly(
                    self.backtrack_budget(hay),
                    hay.len(),
                ));
            }
            steps.fancy_fallback_used = true;
        }
        Ok(())
    }

    /// The steps of [`Self::allowance`].
    fn backtrack_budget(&self, hay: &str) -> u64 {
        let len = hay.len() as u64;
        match self.translation.engine {
            Engine::Regex => 100_000 + 64 * len,
            Engine::Fancy => (self.backtrack_limit as u64)
                .saturating_add((STEPS_PER_BYTE as u64).saturating_mul(len)),
        }
    }

    /// Like [`Self::search_at`], but a match may not be empty at `pos` itself (sre's
    /// `must_advance`): a non-empty match at `pos` or any match further on is fine.
    fn search_not_empty_at<'h>(
        &self,
        hay: &'h str,
        pos: usize,
        steps: &mut Allowance,
    ) -> Result<Option<Captures<'h>>, MatchError> {
        if self.text_start_only && pos > 0 {
            return Ok(None);
        }
        if !self.translation.can_match_empty {
            return self.search_at(hay, pos, &mut ScanCache::default(), steps);
        }
        if self
            .prefilter
            .as_ref()
            .is_some_and(|p| p.no_match_from(hay, pos))
        {
            return Ok(None);
        }
        if let Some(program) = self.strategy.backtracker() {
            if let Ok(found) = program.search(hay, pos, Some(pos), &mut steps.steps) {
                return Ok(found.map(|spans| Captures { hay, spans }));
            }
            self.fancy_fallback(hay, steps)?;
        }
        let rung = engine::matcher::fancy_rung(hay.len());
        let compiled = self.not_empty_at_start[rung].get_or_init(|| {
            let emitted = emit::emit(&self.ast, Engine::Fancy);
            let pattern = format!("(?:{})(?!\\G)", emitted.pattern);
            let limit = engine::matcher::fancy_limit(self.backtrack_limit, rung);
            Compiled::new(&pattern, Engine::Fancy, limit)
        });
        let compiled = compiled.as_ref().map_err(|e| MatchError {
            message: format!(
                "cannot build the search after an empty match: {}",
                e.message
            ),
            budget: None,
        })?;
        let Some(raw) = compiled.captures_at(hay, pos)? else {
            return Ok(None);
        };
        // The fancy form has no hidden groups: Rust numbering is Python's.
        let mut spans = Spans::new(self.group_count() + 1);
        for i in 0..spans.len() {
            spans.set(i, raw.get(i));
        }
        Ok(Some(Captures { hay, spans }))
    }

    /// Maps Rust slots to Python groups and undoes the consumed newline of a tail `$`.
    fn python_captures<'h>(&self, hay: &'h str, raw: &Spans) -> Captures<'h> {
        let t = &self.translation;
        let mut spans = Spans::new(t.group_map.len());
        for (python, &rust) in t.group_map.iter().enumerate() {
            spans.set(python, raw.get(rust));
        }
        for fix in &t.dollar_fixups {
            if let Some((s, e)) = raw.get(fix.rust_group) {
                if e > s {
                    for &g in std::iter::once(&0).chain(&fix.python_groups) {
                        if let Some((gs, ge)) = spans.get(g) {
                            spans.set(g, Some((gs, ge.saturating_sub(1).max(gs))));
                        }
                    }
                }
            }
        }
        Captures { hay, spans }
    }
}

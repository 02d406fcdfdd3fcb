//! What a generated parse read, kept for its family's completeness check.
//!
//! The call-region check ([`Check::CallGaps`]), gpt-oss's ([`Check::GptOss`]) and functionary
//! v3.2's ([`Check::FunctionaryV3_2`]) read the output with the schema's own patterns: the root
//! pattern (after its substitutions) for the calls' region and the calls' iterator in it, or
//! each field's pattern and the calls' iterator, or the root pattern's groups in the output the
//! root substitution rewrote and the calls' iterator's matches with their text. A
//! generated parser has just run exactly those searches over exactly that text, and running them
//! again was most of the check's cost (hermes' one-call message: 6,300 of 32,000 instructions).
//! So [`Check::verify_parse`] records, while the generated parse runs, what those searches found
//! — through the two steps every back end shares ([`support::search`](crate::support::search) and
//! [`support::iterate`](crate::support::iterate)), told apart by their schema pointer — and
//! decides from the record. The interpreter's check ([`Check::unread`]) still searches for
//! itself, and the tests compare the two verdicts.
//!
//! The record is per thread (a parse runs on one thread) and only while `verify_parse` runs; a
//! step outside it costs one thread-local read.

use std::cell::{Cell, RefCell};

pub(crate) use super::check::recipients::CallRead;
use super::check::recipients::{self, RootRead};
use super::check::{
    call_gaps_iterator, cohere_text_outside, find_from, gaps_unread, offset_in, outside_piece,
    outside_read, region_gaps, RegionGap,
};
use super::{Check, Schema, Unread};

thread_local! {
    /// The check being recorded for; `None` outside [`Check::verify_parse`]. On its own (a
    /// `Cell` without destructor): the steps of every parse read it, and reading it costs a few
    /// instructions where reading [`RECORDING`] (which has a destructor to register) costs
    /// about a hundred.
    static RECORDING_FOR: Cell<Option<Check>> = const { Cell::new(None) };
    static RECORDING: Recording = const {
        Recording {
            input: Cell::new((0, 0)),
            root_searched: Cell::new(false),
            root_group: Cell::new(None),
            gaps: RefCell::new(None),
            region: RefCell::new(None),
            read: RefCell::new(ReadSpans::EMPTY),
            root: RefCell::new(None),
            calls: RefCell::new(CallsRead::NotRun),
        }
    };
}

/// The pointer of the calls' iterator the call-region check reads.
const CALLS_ITERATOR: &str = "/properties/tool_calls/x-regex-iterator";

/// What the parse read so far. Cells, not one `RefCell<Option<…>>`: a tiny message's parse
/// touches only the flags.
struct Recording {
    /// The parsed output's address and length: a step's text is the output itself only when
    /// both are equal (gpt-oss's fields search the whole output).
    input: Cell<(usize, usize)>,
    /// [`Check::CallGaps`]: whether the root pattern was searched (with or without a match).
    root_searched: Cell<bool>,
    /// [`Check::CallGaps`]: the span of the root pattern's `tool_calls` group, when the pattern
    /// searched the output itself (no substitution rewrote it).
    root_group: Cell<Option<(usize, usize)>>,
    /// [`Check::CallGaps`]: the gaps of the calls' region, once the calls' iterator ran over it.
    gaps: RefCell<Option<Vec<RegionGap>>>,
    /// [`Check::CallGaps`]: the region's text, kept when it has gaps and is not a slice of the
    /// output (the interpreter hands the group on as a copy): where it is in the output, the gaps
    /// are placed by the root group's span (see [`place_copied_region`]).
    region: RefCell<Option<String>>,
    /// [`Check::GptOss`]: the spans the fields' first matches and the calls' matches cover.
    read: RefCell<ReadSpans>,
    /// [`Check::FunctionaryV3_2`]: what the root pattern read, once it was searched.
    root: RefCell<Option<RootSearched>>,
    /// [`Check::FunctionaryV3_2`]: the calls' iterator's matches in the root's `tool_calls`
    /// region.
    calls: RefCell<CallsRead>,
}

/// [`Check::FunctionaryV3_2`]: the root pattern's search (over the output after the root
/// substitution) and what it found.
struct RootSearched {
    /// The text searched: where it is in the output, or a copy of it (the substitution wrote a
    /// new text, as it does whenever the output does not start with `>>>`).
    searched: SearchedText,
    /// The spans of the `content` and `tool_calls` groups in it; `None` when nothing matched.
    groups: Option<(Option<Span>, Option<Span>)>,
}

/// A byte range.
type Span = (usize, usize);

enum SearchedText {
    /// `output[start..end]`.
    InOutput(usize, usize),
    Copy(String),
}

impl SearchedText {
    fn in_output<'a>(&'a self, output: &'a str) -> Option<&'a str> {
        match self {
            SearchedText::InOutput(start, end) => output.get(*start..*end),
            SearchedText::Copy(text) => Some(text),
        }
    }
}

/// [`Check::FunctionaryV3_2`]: what the calls' iterator read.
enum CallsRead {
    /// It did not run (yet).
    NotRun,
    /// Its matches in the root pattern's `tool_calls` region.
    Read(Vec<CallRead>),
    /// Its matches in a copy of a text (the interpreter hands the root pattern's groups on as
    /// copies), which is the region when it is the same text as the group in the output.
    ReadCopy(Vec<CallRead>, String),
    /// It ran over a text the recording cannot tell is that region: the check searches for
    /// itself.
    Elsewhere,
}

/// Spans, the first sixteen in place: a usual gpt-oss message is recorded without allocating
/// (its parse allocates nothing when every field borrows from the output).
struct ReadSpans {
    inline: [(usize, usize); 16],
    len: usize,
    spilled: Vec<(usize, usize)>,
}

impl ReadSpans {
    const EMPTY: ReadSpans = ReadSpans {
        inline: [(0, 0); 16],
        len: 0,
        spilled: Vec::new(),
    };

    fn push(&mut self, span: (usize, usize)) {
        if self.len < self.inline.len() {
            self.inline[self.len] = span;
            self.len += 1;
        } else {
            if self.spilled.is_empty() {
                self.spilled.extend_from_slice(&self.inline);
            }
            self.spilled.push(span);
        }
    }

    fn as_mut_slice(&mut self) -> &mut [(usize, usize)] {
        if self.spilled.is_empty() {
            &mut self.inline[..self.len]
        } else {
            &mut self.spilled
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.spilled = Vec::new();
    }
}

/// The recording of one parse; ends it when dropped (also when the parse panics).
struct Guard;

impl Guard {
    /// Starts recording for `check` over `text`; `None` when a recording is already running on
    /// this thread (a parse inside the parse: never in generated code), which is left alone.
    fn start(check: Check, text: &str) -> Option<Guard> {
        if recording_for().is_some() {
            return None;
        }
        RECORDING_FOR.with(|c| c.set(Some(check)));
        RECORDING.with(|r| {
            r.input.set((text.as_ptr() as usize, text.len()));
            r.root_searched.set(false);
            r.root_group.set(None);
            r.root.take();
            *r.calls.borrow_mut() = CallsRead::NotRun;
        });
        Some(Guard)
    }

    /// [`Check::unread`] of `text`, from what the parse read.
    fn unread(&self, schema: &Schema, text: &str) -> Vec<Unread> {
        RECORDING.with(|r| {
            let mut out = match recording_for() {
                Some(Check::CallGaps) => call_gaps_unread(r, schema, text),
                Some(Check::GptOss) if schema.root().properties.is_some() => {
                    outside_read(text, r.read.borrow_mut().as_mut_slice())
                }
                Some(Check::FunctionaryV3_2) => functionary_unread(r, schema, text),
                _ => Vec::new(),
            };
            out.sort_by_key(|u| u.span);
            out
        })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        RECORDING_FOR.with(|c| c.set(None));
        RECORDING.with(|r| {
            r.gaps.take();
            r.region.take();
            r.read.borrow_mut().clear();
            r.root.take();
            *r.calls.borrow_mut() = CallsRead::NotRun;
        });
    }
}

/// The call-region check from the recorded gaps.
fn call_gaps_unread(r: &Recording, schema: &Schema, text: &str) -> Vec<Unread> {
    place_copied_region(r, text);
    let gaps = r.gaps.borrow();
    let gaps = match gaps.as_deref() {
        Some(gaps) => gaps,
        // The root pattern ran and the calls' iterator did not: the root cut no `tool_calls`
        // region (or matched nothing), so no text is among calls.
        None if r.root_searched.get() => return Vec::new(),
        // Neither ran as the recording expects: the check searches for itself.
        None => return Check::CallGaps.unread(schema, text),
    };
    if gaps.is_empty() {
        return Vec::new();
    }
    // Only a schema of the check's shape has gaps to report, and only when a call is somewhere
    // in the output (`call_gaps` asks the same, in another order).
    let Some(iterator) = call_gaps_iterator(schema) else {
        return Vec::new();
    };
    if !matches!(iterator.regex.search(text), Ok(Some(_))) {
        return Vec::new();
    }
    gaps_unread(text, gaps)
}

/// functionary v3.2's check from what the parse read: the root pattern's groups in the output
/// after the root substitution, and the calls' iterator's matches in the `tool_calls` group (see
/// [`recipients::decide`], which the searching check decides with too).
fn functionary_unread(r: &Recording, schema: &Schema, text: &str) -> Vec<Unread> {
    let search = || Check::FunctionaryV3_2.unread(schema, text);
    if recipients::groups(schema).is_none() {
        return Vec::new();
    }
    let root = r.root.borrow();
    // The root pattern did not run as the recording expects: the check searches for itself.
    let Some(root) = root.as_ref() else {
        return search();
    };
    let Some(rewritten) = root.searched.in_output(text) else {
        return search();
    };
    // It matched nothing: nothing read, nothing to report (as the searching check says).
    let Some((content, calls)) = root.groups else {
        return Vec::new();
    };
    let root_read = RootRead {
        rewritten,
        content,
        calls,
    };
    let read = r.calls.borrow();
    let read: &[CallRead] = match (&*read, calls.and(call_gaps_iterator(schema))) {
        // No region, or a schema whose iterator the check does not read: no calls to look at.
        (_, None) => &[],
        (CallsRead::Read(read), Some(_)) => read,
        (CallsRead::ReadCopy(read, copy), Some(_))
            if calls.and_then(|(start, end)| rewritten.get(start..end)) == Some(copy.as_str()) =>
        {
            read
        }
        (CallsRead::NotRun | CallsRead::ReadCopy(..) | CallsRead::Elsewhere, Some(_)) => {
            return search()
        }
    };
    recipients::decide(schema, text, &root_read, read, true)
}

/// Places the gaps of a region the calls' iterator read from a copy (the interpreter's root
/// pattern hands its groups on as copies) where the region is in the output: at the root
/// group's span, when the root pattern searched the output itself and the group's text is the
/// copy's. That is where [`Check::unread`] places them (the group as a slice of the output); a
/// region not found there keeps its gaps found by their text, as `unread` finds a region that a
/// substitution rewrote.
fn place_copied_region(r: &Recording, text: &str) {
    let Some(region) = r.region.take() else {
        return;
    };
    let Some((start, end)) = r.root_group.get() else {
        return;
    };
    if text.get(start..end) != Some(region.as_str()) {
        return;
    }
    if let Some(gaps) = r.gaps.borrow_mut().as_mut() {
        for gap in gaps {
            gap.place(start);
        }
    }
}

fn recording_for() -> Option<Check> {
    RECORDING_FOR.with(Cell::get)
}

fn is_input(recording: &Recording, text: &str) -> bool {
    recording.input.get() == (text.as_ptr() as usize, text.len())
}

/// `/properties/NAME/x-regex` of a root property.
fn is_field_pattern(pointer: &str) -> bool {
    pointer
        .strip_prefix("/properties/")
        .and_then(|rest| rest.strip_suffix("/x-regex"))
        .is_some_and(|name| !name.contains('/'))
}

/// Whether the iterator at `pointer` running over `text` is one the recording keeps: the caller
/// then collects its matches' spans for [`iterated`] (and their first group's, for
/// [`iterated_calls`]).
pub(crate) fn wants_matches(pointer: &str, text: &str) -> Wanted {
    let wanted = match recording_for() {
        Some(Check::CallGaps) => pointer == CALLS_ITERATOR,
        Some(Check::FunctionaryV3_2) => {
            return if pointer == CALLS_ITERATOR {
                Wanted::MatchesAndTheirText
            } else {
                Wanted::Nothing
            };
        }
        Some(Check::GptOss) => {
            pointer
                .strip_suffix("-iterator")
                .is_some_and(is_field_pattern)
                && RECORDING.with(|r| is_input(r, text))
        }
        _ => false,
    };
    if wanted {
        Wanted::Matches
    } else {
        Wanted::Nothing
    }
}

/// What [`iterate`](crate::support::iterate) collects for the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    Nothing,
    /// The matches' spans ([`iterated`]).
    Matches,
    /// The matches' spans and their first group's ([`iterated_calls`]).
    MatchesAndTheirText,
}

/// [`Check::FunctionaryV3_2`]: the matches of the calls' iterator, which ran over `text`, and
/// [`wants_matches`] asked for with their text. Kept when `text` is the `tool_calls` group the
/// root pattern found: where it found it (a slice of the output at its place), or the same text
/// (compared now with the group of the copy the recording kept, or when the check decides with
/// the group in the output).
pub(crate) fn iterated_calls(text: &str, calls: Vec<CallRead>) {
    RECORDING.with(|r| {
        let root = r.root.borrow();
        let region = root.as_ref().and_then(|root| {
            let (_, Some((start, end))) = root.groups? else {
                return None;
            };
            Some((&root.searched, start, end))
        });
        let read = match region {
            Some((SearchedText::InOutput(at, _), start, end)) => {
                if offset_in(r.input.get(), text) == Some(at + start) && text.len() == end - start {
                    CallsRead::Read(calls)
                } else {
                    CallsRead::ReadCopy(calls, text.to_owned())
                }
            }
            Some((SearchedText::Copy(copy), start, end)) if copy.get(start..end) == Some(text) => {
                CallsRead::Read(calls)
            }
            Some((SearchedText::Copy(_), _, _)) | None => CallsRead::Elsewhere,
        };
        *r.calls.borrow_mut() = read;
    });
}

/// The matches (spans in `text`) of the iterator at `pointer`, which [`wants_matches`] asked for.
pub(crate) fn iterated(pointer: &str, text: &str, spans: &[(usize, usize)]) {
    let Some(check) = recording_for() else {
        return;
    };
    RECORDING.with(|r| match check {
        Check::CallGaps if pointer == CALLS_ITERATOR => {
            // The region is the text the calls' iterator ran over: the root group, as the check
            // cuts it.
            let region_at = offset_in(r.input.get(), text);
            let gaps = region_gaps(region_at, text, spans);
            if region_at.is_none() && !gaps.is_empty() {
                *r.region.borrow_mut() = Some(text.to_owned());
            }
            *r.gaps.borrow_mut() = Some(gaps);
        }
        Check::GptOss => {
            let mut read = r.read.borrow_mut();
            for &span in spans {
                read.push(span);
            }
        }
        _ => {}
    });
}

/// A search of the pattern at `pointer` (`regex`) over `text` ran, and found `found`.
pub(crate) fn searched(
    pointer: &str,
    text: &str,
    regex: &crate::pyre::PyRegex,
    found: Option<&crate::pyre::Captures<'_>>,
) {
    let Some(check) = recording_for() else {
        return;
    };
    RECORDING.with(|r| match check {
        Check::CallGaps if pointer == "/x-regex" => {
            r.root_searched.set(true);
            let group = found
                .filter(|_| is_input(r, text))
                .zip(regex.group_index("tool_calls"))
                .and_then(|(found, group)| found.span(group));
            r.root_group.set(group);
        }
        Check::FunctionaryV3_2 if pointer == "/x-regex" => {
            let (address, len) = r.input.get();
            let searched = match offset_in((address, len), text) {
                Some(at) => SearchedText::InOutput(at, at + text.len()),
                None => SearchedText::Copy(text.to_owned()),
            };
            let groups = found.map(|found| {
                let span = |name| regex.group_index(name).and_then(|group| found.span(group));
                (span("content"), span("tool_calls"))
            });
            *r.root.borrow_mut() = Some(RootSearched { searched, groups });
            *r.calls.borrow_mut() = CallsRead::NotRun;
        }
        Check::GptOss if is_field_pattern(pointer) && is_input(r, text) => {
            if let Some(found) = found {
                r.read.borrow_mut().push((found.start(), found.end()));
            }
        }
        _ => {}
    });
}

impl Check {
    /// `parse()` (a generated parser's schema-only parse of `text`), then this check, deciding
    /// from what the parse read where it can instead of searching again: the same verdict as
    /// [`Check::verify`] after it. The call-region, gpt-oss and functionary v3.2 checks record
    /// the searches of the generated parse (through the steps every back end shares); the
    /// others search for themselves.
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// let schema = chatparse_runtime::Schema::from_json_str(r#"{"type": "object"}"#)?;
    /// let parse = || Ok::<_, chatparse_runtime::ParseError>(1);
    /// assert_eq!(Check::CallGaps.verify_parse(&schema, "Hi", parse)?, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_parse<T>(
        &self,
        schema: &Schema,
        text: &str,
        parse: impl FnOnce() -> Result<T, crate::ParseError>,
    ) -> Result<T, crate::ParseError> {
        let guard = match self {
            Check::CallGaps | Check::GptOss | Check::FunctionaryV3_2 => Guard::start(*self, text),
            _ => None,
        };
        let Some(guard) = guard else {
            // Not recorded (another family, or a parse inside a parse): search as the
            // interpreter does.
            let message = parse()?;
            self.verify(schema, text)?;
            return Ok(message);
        };
        let message = parse()?;
        match guard.unread(schema, text).into_iter().next() {
            None => Ok(message),
            Some(u) => Err(u.into_error(text)),
        }
    }
}

impl Check {
    /// Whether [`Check::verify_marker_free`] is `Ok` for every text: [`Check::CallGaps`], which
    /// reads only a calls' region the marker-free answer never has. A `const fn`, so that
    /// generated code, whose check is a constant, skips the call (and the schema it reads) at
    /// compile time.
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// assert!(Check::CallGaps.understands_every_marker_free_answer());
    /// assert!(!Check::GptOss.understands_every_marker_free_answer());
    /// ```
    pub const fn understands_every_marker_free_answer(&self) -> bool {
        matches!(self, Check::CallGaps)
    }

    /// Whether [`Check::verify_marker_free`] is `Ok` for every text without any of `literals`
    /// (a generated parser's `MARKER_FREE_LITERALS`, whose absence its marker-free answer needs):
    /// [`Check::understands_every_marker_free_answer`], or a check that reports nothing without
    /// its openers where each opener holds one of `literals` (so is absent with them). A
    /// `const fn`, for the same reason.
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// assert!(Check::MistralJsonList.understands_marker_free_answers_without(&["[TOOL_CALLS]"]));
    /// assert!(Check::MistralJsonList.understands_marker_free_answers_without(&["_CALLS]"]));
    /// assert!(!Check::MistralJsonList.understands_marker_free_answers_without(&["[TOOL_CALLS]x"]));
    /// assert!(!Check::MistralJsonList.understands_marker_free_answers_without(&[]));
    /// assert!(!Check::GptOss.understands_marker_free_answers_without(&["<|start|>"]));
    /// ```
    pub const fn understands_marker_free_answers_without(&self, literals: &[&str]) -> bool {
        if self.understands_every_marker_free_answer() {
            return true;
        }
        let Some(openers) = self.openers() else {
            return false;
        };
        let mut i = 0;
        while i < openers.literals.len() {
            let mut j = 0;
            let mut held = false;
            while j < literals.len() && !held {
                held = contains(openers.literals[i], literals[j]);
                j += 1;
            }
            if !held {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether [`Check::verify_marker_free`] is `Ok` for every text without any of `literals`
    /// that starts, after its leading white space, with `head` and then a character that is not
    /// white space (a generated parser's `MARKER_FREE_HEAD` and `MARKER_FREE_LITERALS`: its
    /// marker-free path answers only such texts): what
    /// [`Check::understands_marker_free_answers_without`] says, and functionary v3.2's check
    /// after the `all` recipient. There, without `>>>` and `<|eot_id|>`, the root pattern reads
    /// all that follows `>>>all\n` as the content, and the check names nothing outside what it
    /// read but white space and that recipient (`recipients::decide`). A `const fn`, for the
    /// same reason.
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// let f = Check::FunctionaryV3_2;
    /// assert!(f.understands_marker_free_answers_after("all\n", &["<|eot_id|>", ">>>"]));
    /// assert!(!f.understands_marker_free_answers_after("", &["<|eot_id|>", ">>>"]));
    /// assert!(!f.understands_marker_free_answers_after("all\n", &[">>>"]));
    /// assert!(Check::CallGaps.understands_marker_free_answers_after("", &[]));
    /// ```
    pub const fn understands_marker_free_answers_after(
        &self,
        head: &str,
        literals: &[&str],
    ) -> bool {
        if self.understands_marker_free_answers_without(literals) {
            return true;
        }
        matches!(self, Check::FunctionaryV3_2)
            && same(head, "all\n")
            && absent_with(">>>", literals)
            && absent_with("<|eot_id|>", literals)
    }

    /// The check's verdict on `text` when the generated parser answered it on its marker-free
    /// path (`parse_marker_free`: none of the schema's markers is in the output, and the code
    /// generator proved what every pattern then finds): the same verdict as [`Check::verify`].
    ///
    /// - [`Check::CallGaps`] reads only the root pattern's `tool_calls` region, and the
    ///   marker-free answer has none (the generator gives no marker-free answer where the
    ///   stripped text would be that region): nothing to report.
    /// - [`Check::GptOss`] reports the output outside what the fields' patterns found, and they
    ///   found nothing: the whole output, as [`Check::verify`] would say it.
    /// - [`Check::CohereCommandR7b`] reports text outside its blocks; with no `<|` in the text
    ///   (every marker it knows starts so) that is the whole text, trimmed.
    /// - The others read the output text for themselves, and each reports nothing when the text
    ///   holds none of its openers ([`Check::openers`]); otherwise they run as always.
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// let schema = chatparse_runtime::Schema::from_json_str(r#"{"type": "object"}"#)?;
    /// assert!(Check::CallGaps.verify_marker_free(&schema, "Hello!").is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_marker_free(&self, schema: &Schema, text: &str) -> Result<(), crate::ParseError> {
        // (The arm below answers `Ok` before anything is read; generated code asks
        // `understands_every_marker_free_answer` first so as not to load the schema.)
        let first = match self {
            _ if self.understands_every_marker_free_answer() => return Ok(()),
            // Nothing read: the one part is the whole text (unless it is only scaffolding).
            Check::GptOss if schema.root().properties.is_some() => {
                outside_piece(text, 0, text.len())
            }
            // Every marker of Command R7B's check starts with `<|`: without one, no block was
            // read and the one piece is the whole text, as `cohere` would find it.
            Check::CohereCommandR7b if find_from(text, "<|", 0).is_none() => {
                cohere_text_outside(text)
            }
            _ if self.openers().is_some_and(|o| o.absent_in(text)) => return Ok(()),
            _ => return self.verify(schema, text),
        };
        match first {
            None => Ok(()),
            Some(u) => Err(u.into_error(text)),
        }
    }
}

/// Whether `a` and `b` are the same text, at compile time.
const fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || contains(a, b))
}

/// Whether `marker` is absent from every text without any of `literals` (one of them occurs
/// in it), at compile time.
const fn absent_with(marker: &str, literals: &[&str]) -> bool {
    let mut j = 0;
    while j < literals.len() {
        if contains(marker, literals[j]) {
            return true;
        }
        j += 1;
    }
    false
}

/// Whether `needle` (not empty) occurs in `hay`, at compile time.
const fn contains(hay: &str, needle: &str) -> bool {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    if needle.is_empty() {
        return false;
    }
    let mut at = 0;
    while at + needle.len() <= hay.len() {
        let mut k = 0;
        while k < needle.len() && hay[at + k] == needle[k] {
            k += 1;
        }
        if k == needle.len() {
            return true;
        }
        at += 1;
    }
    false
}

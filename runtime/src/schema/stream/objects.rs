//! Tool calls written as JSON objects one after another (`llama3_json`): `<|python_tag|>{…}`, or
//! a bare `{"name": …}` at the start of the output, with further calls after a `;` or another
//! `<|python_tag|>`. The calls field rewrites `}; {"name":` into `}<|python_tag|>{"name":` with a
//! substitution, and its iterator `(\{.*?)(?:<\|python_tag\|>|$)` takes each call from a `{` to
//! the next tag. [`ObjectScan`] finds where each of those matches ends as the text arrives, so a
//! call can be sent once it is decided instead of with the final message.
//!
//! Why a call sent is the final message's call: the profile is checked (when it loads) to hold
//! for a field whose substitution and iterator are exactly these patterns (built from the
//! opener), so the scan follows what they do, step by step:
//!
//! * `re.sub` rewrites the matches of `\}\s*;\s*(\{\s*"(?:name|type)"\s*:)` left to right. A match
//!   holds one `}`, at its start, and no `<`, so a match found in the text that has arrived is
//!   final: no match that later text completes can start before it (it would hold its `}`), and
//!   no later text changes one already complete (the pattern has no look-ahead or anchor).
//! * `re.finditer` then takes a call from the first `{` to the first tag after it: one the model
//!   wrote, or one the substitution inserted after a `}`. The next call starts at the first `{`
//!   after the tag (a tag the substitution inserts is followed by its `{`). Whichever tag comes
//!   first ends the call, so a call is decided once either has arrived whole (before anything
//!   that may end the calls' part of the output: the calls' group of the root regex runs from
//!   the opener to the first end token).
//! * The last call runs to `$`, the end of the calls' text: it is decided once an end token has
//!   arrived (the text before it, less trailing white space, which the root regex leaves out).
//!
//! Each call's text is read by the field's own `items` schema, as the one-shot parse reads it;
//! a call that does not parse stops the scan (the final message, the one-shot parse, says what
//! becomes of it: a strict parse fails).
//!
//! While a call is open its text is sent as it arrives (strict streams: a call that then fails
//! to parse fails the whole message), up to its last non-space character and before a `}` that
//! more text may complete into a join: the text up to there is the call's whatever follows (a
//! tag, a join or an end token can only end it later), so adapters read its name and arguments
//! before it is decided.

use chatparse_pyre::PyRegex;
use memchr::memmem;

use super::decided::{CallStep, CallsText, DecidedCalls};
use crate::py::unicode::is_space;
use crate::schema::interp::{parse_node, Walk};
use crate::schema::{Items, Node, NodeType};
use crate::stream::spaces::SpaceRuns;
use crate::support::Content;

/// The substitution that joins `;`-separated calls, with `{TAG}` for the escaped opener.
const JOIN_PATTERN: &str = r#"\}\s*;\s*(\{\s*"(?:name|type)"\s*:)"#;
/// The iterator that cuts the joined text into calls.
const ITERATOR_PATTERN: &str = r"(\{.*?)(?:{TAG}|$)";
/// The root substitution that gives a bare call at the start of the output its opener.
pub(crate) const BARE_PATTERN: &str = r#"^\s*(\{\s*"(?:name|type)"\s*:)"#;

/// Where the scan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// After the opener: white space, then the first call's `{` (anything else: the opener did
    /// not open the calls, and the final message says what the text is).
    FirstBrace { at: usize },
    /// Inside a call that starts at `start`.
    Call { start: usize },
    /// After a tag the model wrote: the next call starts at the next `{`.
    NextBrace { at: usize },
    /// Nothing more is read: the final message brings the rest.
    Done,
}

/// The incremental scan of `;`- or tag-separated JSON calls (see the module documentation).
#[derive(Debug)]
pub(crate) struct ObjectScan<'p> {
    /// The calls field.
    pub(crate) field: &'p str,
    items: &'p Node,
    /// The tag the iterator cuts at (the calls' opener).
    tag: &'p str,
    /// The field's substitution that joins `;`-separated calls.
    join: &'p PyRegex,
    /// Whether a bare call at the start of the output opens the calls (see [`opens_bare`]).
    pub(crate) bare: bool,
    stage: Stage,
    /// Where the substitution's next match is searched from (`re.sub` resumes after a match;
    /// positions before the last `}` seen without a match start none).
    join_from: usize,
    /// The text read byte by byte for the join: its last `}` and what follows it.
    tail: JoinTail,
    /// Where the search for a tag the model wrote resumes.
    tag_from: usize,
}

impl<'p> ObjectScan<'p> {
    /// A scan of `node`'s calls, cut at `tag` (checked by [`ObjectScan::check`]).
    pub(crate) fn new(
        field: &'p str,
        root: &'p Node,
        node: &'p Node,
        tag: &'p str,
    ) -> Result<Self, String> {
        Self::check(node, tag)?;
        let Items::Each(items) = &node.items else {
            return Err("it has no `items` schema".into());
        };
        Ok(ObjectScan {
            field,
            items,
            tag,
            bare: opens_bare(root, tag),
            join: &node.substitutions[0].pattern.regex,
            stage: Stage::Done,
            join_from: 0,
            tag_from: 0,
            tail: JoinTail::default(),
        })
    }

    /// Whether `node`'s calls are written as this scan reads them, or why not: an array whose
    /// one substitution and iterator are exactly the patterns of the module documentation, with
    /// `tag` the opener.
    pub(crate) fn check(node: &Node, tag: &str) -> Result<(), String> {
        let escaped = escape(tag);
        let iterator = ITERATOR_PATTERN.replace("{TAG}", &escaped);
        let joined_by = |s: &crate::schema::Substitution| {
            s.pattern.regex.python_pattern() == JOIN_PATTERN
                && s.replacement_source == format!("}}{tag}\\1")
        };
        let fits = node.node_type == NodeType::Array
            && node.regex.is_none()
            && node.parser.is_none()
            && node.key_value.is_none()
            && matches!(node.items, Items::Each(_))
            && node.substitutions.len() == 1
            && joined_by(&node.substitutions[0])
            && node
                .iterator
                .as_ref()
                .is_some_and(|i| i.regex.python_pattern() == iterator);
        if fits {
            Ok(())
        } else {
            Err(format!(
                "only an array with the substitution `{JOIN_PATTERN}` → `}}{tag}\\1` and the \
                 iterator `{iterator}` streams as JSON objects"
            ))
        }
    }

    /// Starts reading the calls after their opener, which ends at `opener_end`.
    pub(crate) fn start(&mut self, opener_end: usize) {
        self.stage = Stage::FirstBrace { at: opener_end };
        self.join_from = opener_end;
        self.tag_from = opener_end;
        self.tail = JoinTail::at(opener_end);
    }

    /// Starts reading the calls at a bare `{` at `at` (the root substitution gave it the opener).
    pub(crate) fn start_bare(&mut self, at: usize) {
        self.enter_call(at);
        self.join_from = at;
        self.tail = JoinTail::at(at);
    }

    fn enter_call(&mut self, start: usize) {
        self.stage = Stage::Call { start };
        self.tag_from = start + 1;
    }

    /// Reads `text[..limit]` on from where the last read stopped; `ended`: the calls' text ends
    /// at `limit` (an end token is there).
    fn next_in(&mut self, text: &str, limit: usize, ended: bool) -> CallStep {
        let bytes = &text.as_bytes()[..limit];
        loop {
            match self.stage {
                Stage::Done => return CallStep::Done,
                Stage::FirstBrace { at } => {
                    let rest = text.get(at.min(limit)..limit).unwrap_or_default();
                    match rest.char_indices().find(|&(_, c)| !is_space(c)) {
                        Some((i, '{')) => self.enter_call(at + i),
                        Some(_) => self.stage = Stage::Done,
                        None if ended => self.stage = Stage::Done,
                        None => {
                            self.stage = Stage::FirstBrace { at: limit.max(at) };
                            return CallStep::Wait;
                        }
                    }
                }
                Stage::NextBrace { at } => match memchr::memchr(b'{', &bytes[at.min(limit)..]) {
                    Some(i) => self.enter_call(at + i),
                    None if ended => self.stage = Stage::Done,
                    None => {
                        self.stage = Stage::NextBrace { at: limit.max(at) };
                        return CallStep::Wait;
                    }
                },
                Stage::Call { start } => {
                    self.tail.read(text, limit);
                    let tag = self.find_tag(bytes);
                    let join = match self.find_join(text, limit, start) {
                        Ok(join) => join,
                        Err(()) => {
                            self.stage = Stage::Done;
                            return CallStep::Done;
                        }
                    };
                    let end = match (tag, join) {
                        (Some(t), Some((j, _, _))) if t < j => {
                            self.stage = Stage::NextBrace {
                                at: t + self.tag.len(),
                            };
                            t
                        }
                        (Some(t), None) => {
                            self.stage = Stage::NextBrace {
                                at: t + self.tag.len(),
                            };
                            t
                        }
                        (_, Some((j, next, join_end))) => {
                            // The substitution keeps the `}` and puts the tag after it.
                            self.join_from = join_end;
                            self.enter_call(next);
                            j + 1
                        }
                        (None, None) if ended => {
                            self.stage = Stage::Done;
                            start + text[start..limit].trim_end_matches(is_space).len()
                        }
                        (None, None) => {
                            return CallStep::Open {
                                start,
                                known: self.tail.open_known(start),
                            }
                        }
                    };
                    let value = parse_node(
                        self.items,
                        Content::borrowed(&text[start..end]),
                        &mut Walk::strict(),
                    );
                    return match value {
                        Ok(value) => CallStep::Call { start, end, value },
                        Err(_) => {
                            self.stage = Stage::Done;
                            CallStep::Done
                        }
                    };
                }
            }
        }
    }

    /// The first whole tag the model wrote from `tag_from` on.
    fn find_tag(&mut self, bytes: &[u8]) -> Option<usize> {
        let from = self.tag_from.min(bytes.len());
        match memmem::find(&bytes[from..], self.tag.as_bytes()) {
            Some(i) => Some(from + i),
            None => {
                self.tag_from = bytes.len().saturating_sub(self.tag.len() - 1).max(from);
                None
            }
        }
    }

    /// The substitution's first match at or after `start` in `text[..limit]`, as the `}`'s
    /// position, where the next call's `{` is and where the match ends. Matches before `start`
    /// (after a tag, before the next `{`) only insert a tag before that `{`: they are passed.
    /// `Err` when the regex engine gives up (the one-shot parse would too).
    #[allow(clippy::type_complexity)]
    fn find_join(
        &mut self,
        text: &str,
        limit: usize,
        start: usize,
    ) -> Result<Option<(usize, usize, usize)>, ()> {
        loop {
            let from = self.join_from.min(limit);
            // The byte-by-byte reading finds every match the regex does (it reads the same
            // pattern), so without one completed after `from` there is nothing to search: a
            // long call costs its bytes once, not once per chunk.
            let found = if self.tail.completed_after(from) {
                self.join.search(&text[from..limit]).map_err(|_| ())?
            } else {
                None
            };
            let Some(m) = found else {
                // Only the last `}` may begin a match that more text completes, and only if
                // the text after it may still become the rest of one.
                self.join_from = match self.tail.live_brace() {
                    Some(brace) if brace >= from => brace,
                    _ => limit,
                };
                return Ok(None);
            };
            let (at, end) = (from + m.start(), from + m.end());
            if at < start {
                self.join_from = end;
                continue;
            }
            let next = from + m.span(1).map_or(m.end(), |s| s.0);
            return Ok(Some((at, next, end)));
        }
    }
}

impl DecidedCalls for ObjectScan<'_> {
    fn next(&mut self, calls: CallsText<'_>) -> CallStep {
        self.next_in(calls.text, calls.limit, calls.ended())
    }
}

/// The join pattern `\}\s*;\s*(\{\s*"(?:name|type)"\s*:)` read one character at a time, as the
/// text arrives: where the last `}` is, how far the text after it has gone into the pattern,
/// where the last match completed, and where the last non-space character ends. Each character
/// is read once, so the open call's known text, and whether the regex needs to run, cost the
/// new text only (the scan used to look back over the whole call on every chunk).
#[derive(Debug, Clone, Copy, Default)]
struct JoinTail {
    /// How far the text has been read.
    read_to: usize,
    /// The last `}` read, and the state of the text after it.
    brace: Option<usize>,
    state: TailState,
    /// Where the last match read ends.
    completed: Option<usize>,
    /// Where the last non-space character read ends.
    non_space_end: usize,
}

/// How far the text after the last `}` has gone into the rest of a join match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum TailState {
    /// No `}` yet, or the text after it cannot be the rest of a match.
    #[default]
    Dead,
    /// `\s*` before `;`.
    BeforeSemicolon,
    /// `\s*` before `{`.
    BeforeBrace,
    /// `\s*` before the key.
    BeforeKey,
    /// `n` (1 to 5) bytes of `"name"` (`name: true`) or `"type"` read.
    Key { name: bool, n: u8 },
    /// `\s*` before `:`.
    BeforeColon,
}

impl JoinTail {
    /// A reading that starts at `at`.
    fn at(at: usize) -> Self {
        JoinTail {
            read_to: at,
            non_space_end: at,
            ..JoinTail::default()
        }
    }

    /// Reads `text[..limit]` on from where the last read stopped.
    fn read(&mut self, text: &str, limit: usize) {
        let Some(new) = text.get(self.read_to..limit) else {
            return;
        };
        for (i, c) in new.char_indices() {
            let at = self.read_to + i;
            if !is_space(c) {
                self.non_space_end = at + c.len_utf8();
            }
            if c == '}' {
                self.brace = Some(at);
                self.state = TailState::BeforeSemicolon;
                continue;
            }
            self.state = match (self.state, c) {
                (TailState::Dead, _) => TailState::Dead,
                (TailState::Key { .. }, c) if is_space(c) => TailState::Dead,
                (state, c) if is_space(c) => state,
                (TailState::BeforeSemicolon, ';') => TailState::BeforeBrace,
                (TailState::BeforeBrace, '{') => TailState::BeforeKey,
                (TailState::BeforeKey, '"') => TailState::Key { name: true, n: 1 },
                (TailState::Key { n: 1, .. }, 'n') => TailState::Key { name: true, n: 2 },
                (TailState::Key { n: 1, .. }, 't') => TailState::Key { name: false, n: 2 },
                (TailState::Key { name, n }, c) => {
                    let key = if name { "\"name\"" } else { "\"type\"" };
                    match key[usize::from(n)..].chars().next() {
                        Some(k) if k == c && n == 5 => TailState::BeforeColon,
                        Some(k) if k == c => TailState::Key { name, n: n + 1 },
                        _ => TailState::Dead,
                    }
                }
                (TailState::BeforeColon, ':') => {
                    self.completed = Some(at + 1);
                    TailState::Dead
                }
                _ => TailState::Dead,
            };
        }
        self.read_to = limit;
    }

    /// Whether a match read ends after `from` (the regex then finds it, or one before it).
    fn completed_after(&self, from: usize) -> bool {
        self.completed.is_some_and(|end| end > from)
    }

    /// The last `}` read, if the text after it may still become the rest of a match.
    fn live_brace(&self) -> Option<usize> {
        self.brace.filter(|_| self.state != TailState::Dead)
    }

    /// How far the text of the call open at `start` is its own, with the text read and no tag
    /// or join found after it: up to its last non-space character (white space before the end
    /// of the calls' text is not the call's), and before a `}` that more text may complete into
    /// a join (the call then ends after that `}`, and what follows is not its text).
    fn open_known(&self, start: usize) -> usize {
        match self.live_brace() {
            Some(brace) if brace >= start => brace + 1,
            _ => self.non_space_end.max(start),
        }
    }
}

/// A literal as a pattern that matches it, its special characters escaped (as the shipped
/// schemas write them: `<\|python_tag\|>`).
fn escape(literal: &str) -> String {
    let mut out = String::new();
    for c in literal.chars() {
        if r"\.^$*+?{}[]|()".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether the root's substitutions give a bare call at the start of the output the opener
/// `tag` (and do nothing else): then such a call opens the calls as the opener does.
pub(crate) fn opens_bare(root: &Node, tag: &str) -> bool {
    match root.substitutions.as_slice() {
        [s] => {
            s.pattern.regex.python_pattern() == BARE_PATTERN
                && s.replacement_source == format!("{tag}\\1")
        }
        _ => false,
    }
}

/// Whether `rest` (the output from its first non-space character) begins a bare call, as the
/// root substitution [`BARE_PATTERN`] reads it: `{`, white space, `"name"` or `"type"`, white
/// space, `:`. `None` while more text is needed.
pub(crate) fn bare_call_at(rest: &str, spaces: &mut SpaceRuns) -> Option<bool> {
    let mut chars = rest.char_indices();
    if chars.next()?.1 != '{' {
        return Some(false);
    }
    // White space is skipped through `spaces`: while the check waits, it reads the same text
    // again on every chunk, and a long run of white space only once.
    let at = spaces.skip(rest, 1, is_space);
    let mut chars = rest[at..].char_indices().map(|(i, c)| (at + i, c));
    if chars.next()?.1 != '"' {
        return Some(false);
    }
    let mut key = String::new();
    let after_key = loop {
        let (i, c) = chars.next()?;
        if c == '"' {
            break i + 1;
        }
        key.push(c);
        if !["name", "type"].iter().any(|k| k.starts_with(&key)) {
            return Some(false);
        }
    };
    if key != "name" && key != "type" {
        return Some(false);
    }
    let at = spaces.skip(rest, after_key, is_space);
    Some(rest[at..].chars().next()? == ':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Texts made of the join pattern's pieces, so that matches, near misses and cut matches
    /// are common.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "}",
            ";",
            "{",
            "\"",
            "\"name\"",
            "\"type\"",
            "\"nam",
            ":",
            " ",
            "\n",
            "\u{3000}",
            "x",
            "n",
            "t",
            "ype\"",
            "}; {\"name\":",
            "} ;\n{ \"type\" :",
        ]);
        prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        /// Read in any chunks, the byte-by-byte reading agrees with the regex: every match it
        /// completes is one the regex finds (the last one's end), and the last `}` is live
        /// exactly when the text after it is a proper prefix of the rest of a match (some
        /// continuation completes a match there).
        #[test]
        fn join_tail_reads_as_the_regex(text in text(), cuts in prop::collection::vec(0usize..64, 0..6)) {
            let regex = PyRegex::new(JOIN_PATTERN).unwrap();
            let mut tail = JoinTail::at(0);
            let mut limits: Vec<usize> = cuts
                .into_iter()
                .map(|c| c.min(text.len()))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            limits.sort_unstable();
            limits.push(text.len());
            for limit in limits {
                tail.read(&text, limit);
            }
            let ends: Vec<usize> = regex.find_iter(&text).map(|m| m.unwrap().end()).collect();
            prop_assert_eq!(tail.completed, ends.last().copied());
            let last_brace = text.rfind('}');
            prop_assert_eq!(tail.brace, last_brace);
            if let Some(b) = last_brace {
                let after = &text[b + 1..];
                let completes = ["; {\"name\":", ";{\"type\":", "\"name\":", "\"type\":", "name\":",
                    "ame\":", "me\":", "e\":", "\":", ":", "ype\":", "pe\":", "{\"name\":", "{\"type\":"]
                    .iter()
                    .any(|rest| {
                        let probe = format!("}}{after}{rest}");
                        regex.search(&probe).unwrap().is_some_and(|m| m.start() == 0 && m.end() == probe.len())
                    });
                let whole = regex.search(&text[b..]).unwrap().is_some_and(|m| m.start() == 0);
                prop_assert_eq!(tail.live_brace().is_some(), completes && !whole, "after {:?}", after);
            }
        }
    }
}

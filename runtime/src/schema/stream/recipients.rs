//! Calls addressed to a recipient (`functionary_v3_2`): `>>>NAME\n{arguments}`, one after
//! another, after content that `>>>all\n` opened or from the start of the output (which the
//! root substitution gives its `>>>`). The root regex takes the calls' text from the first
//! `>>>NAME\n` to the first *terminator* — `>>>all\n` (content after calls, dropped), `>>>` and a
//! name cut at the very end of the output, or `<|eot_id|>` — and the field's iterator
//! `(.+?)(?:>>>|$)` takes each call to the next `>>>`. [`RecipientScan`] decides for each `>>>`
//! whether it is a terminator or a separator as soon as the text tells, so a call can be sent
//! once it is decided instead of with the final message.
//!
//! Why a call sent is the final message's call: the profile is checked (when it loads) to hold
//! for a schema whose root substitution, root regex, iterator and call pattern are exactly these,
//! and the scan follows what they do:
//!
//! * A `>>>` is the terminator `>>>all[ \t]*\r?\n.*` once that has arrived; the terminator
//!   `>>>[^\s>]*$` only while the text after it is a name that runs to the end of the output (or
//!   to a last `\n`): it is ruled out once a `>` or a white space character other than `\n`
//!   follows the name, or any character follows a `\n` after it. A `>>>` that is neither is a
//!   separator: the calls' text runs past it (the root regex's lazy body ends at the first
//!   terminator), and the iterator ends the call there, white space included.
//! * The call before a `>>>all\n` terminator is the last one: its text ends at the last non-space
//!   character before it. Once `<|eot_id|>` has arrived, the one-shot parse of the output up to
//!   it decides the remaining calls (nothing after it can change them: no terminator before it
//!   depends on the end of the output).
//!
//! Each call's text is read by the field's own `items` schema, as the one-shot parse reads it;
//! a call that does not parse stops the scan (a strict one-shot parse fails on it too).
//!
//! While a call is open its text is sent as it arrives (strict streams), up to its last
//! non-space character before the next `>>>`: whether that `>>>` turns out to be a separator or
//! a terminator, the call's text ends there (less trailing white space before `>>>all\n`).

use super::decided::{CallStep, CallsText, DecidedCalls, RestOfCalls};
use crate::py::unicode::is_space;
use crate::schema::interp::{parse_node, Walk};
use crate::schema::{Items, Node, NodeType, Schema};
use crate::stream::spaces::SpaceRuns;
use crate::support::Content;
use crate::value::Value;

const ROOT_SUBSTITUTION: &str = r"^\s*(?:>>>)?";
const ROOT_PATTERN: &str = r"^(?:(?:>>>all[ \t]*\r?\n\s*(?:(?P<content>\S(?:.*?\S)??)\s*)??)?(?:(?P<tool_calls>>>>[^\s>]+[ \t]*\r?\n(?:.*?\S)??)\s*)?(?:>>>all[ \t]*\r?\n.*|>>>[^\s>]*$|<\|eot_id\|>|$))?";
const ITERATOR: &str = r"(.+?)(?:>>>|$)";
const MARK: &str = ">>>";

/// Whether text decides something yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Yes,
    No,
    Wait,
}

/// The incremental scan of calls addressed to recipients (see the module documentation).
#[derive(Debug)]
pub(crate) struct RecipientScan<'p> {
    /// The calls field.
    pub(crate) field: &'p str,
    schema: &'p Schema,
    items: &'p Node,
    /// The current call's raw start, and whether it was written without its `>>>` (at the
    /// start of the output, the root substitution adds it).
    call: Option<(usize, bool)>,
    /// Where the search for the next `>>>` resumes.
    search_from: usize,
    sent: usize,
    done: bool,
    /// Once `<|eot_id|>` has arrived: the calls the one-shot parse read, not sent yet (the
    /// output is parsed once, not once per call).
    ended_calls: RestOfCalls,
    /// How far the text was read for its last non-space character, and where that ends: an open
    /// call's known text then costs each chunk its own length, not the length of the white
    /// space before it.
    spaces_read: usize,
    non_space_end: usize,
}

impl<'p> RecipientScan<'p> {
    /// A scan of the calls of `schema`'s `field` (checked by [`RecipientScan::check`]).
    pub(crate) fn new(field: &'p str, schema: &'p Schema) -> Result<Self, String> {
        let node = schema.root().property(field).ok_or("no such field")?;
        Self::check(schema.root(), node)?;
        let Items::Each(items) = &node.items else {
            return Err("it has no `items` schema".into());
        };
        Ok(RecipientScan {
            field,
            schema,
            items,
            call: None,
            search_from: 0,
            sent: 0,
            done: true,
            ended_calls: RestOfCalls::default(),
            spaces_read: 0,
            non_space_end: 0,
        })
    }

    /// Whether the calls are written as this scan reads them, or why not: the root's one
    /// substitution and regex, the field's iterator (and nothing else on the field) exactly the
    /// patterns of the module documentation.
    pub(crate) fn check(root: &Node, node: &Node) -> Result<(), String> {
        let fits = matches!(root.substitutions.as_slice(),
                [s] if s.pattern.regex.python_pattern() == ROOT_SUBSTITUTION
                    && s.replacement_source == MARK)
            && root
                .regex
                .as_ref()
                .is_some_and(|r| r.regex.python_pattern() == ROOT_PATTERN)
            && node.node_type == NodeType::Array
            && node.substitutions.is_empty()
            && node.regex.is_none()
            && node.parser.is_none()
            && node.key_value.is_none()
            && matches!(node.items, Items::Each(_))
            && node
                .iterator
                .as_ref()
                .is_some_and(|i| i.regex.python_pattern() == ITERATOR);
        if fits {
            Ok(())
        } else {
            Err(format!(
                "only a root with the substitution `{ROOT_SUBSTITUTION}` → `{MARK}` and the \
                 regex `{ROOT_PATTERN}`, and a field with the iterator `{ITERATOR}`, streams \
                 calls to recipients"
            ))
        }
    }

    /// Whether a call's header `NAME[ \t]*\r?\n` starts `rest`, and its name: `None` while
    /// more text is needed.
    /// White space is skipped through `spaces` (the check reads the same text again on every
    /// chunk while it waits).
    pub(crate) fn header_at<'r>(rest: &'r str, spaces: &mut SpaceRuns) -> Option<Option<&'r str>> {
        match header(rest, spaces) {
            Known::Yes => Some(rest.split(|c: char| is_space(c) || c == '>').next()),
            Known::No => Some(None),
            Known::Wait => None,
        }
    }

    /// Starts reading the calls at a header: its `>>>` at `at` (or its name, when `bare`).
    pub(crate) fn start(&mut self, at: usize, bare: bool) {
        self.call = Some((at, bare));
        self.search_from = if bare { at } else { at + MARK.len() };
        self.sent = 0;
        self.done = false;
        self.ended_calls = RestOfCalls::default();
        self.spaces_read = at;
        self.non_space_end = at;
    }

    /// Reads `text[..limit]`; `stop`: where `<|eot_id|>` (of `eot_len` bytes) is, when it has
    /// arrived at `limit`.
    fn next_in(&mut self, text: &str, limit: usize, eot_len: Option<usize>) -> CallStep {
        if self.done {
            return CallStep::Done;
        }
        let Some((start, bare)) = self.call else {
            return self.stop();
        };
        if let Some(eot_len) = eot_len {
            return self.ended(text, limit + eot_len);
        }
        let bytes = text.as_bytes();
        let hay = bytes.get(self.search_from..limit).unwrap_or_default();
        let Some(found) = memchr::memmem::find(hay, MARK.as_bytes()) else {
            self.search_from = limit.saturating_sub(MARK.len() - 1).max(self.search_from);
            return self.open(text, start, limit);
        };
        let y = self.search_from + found;
        let after = &text[y + MARK.len()..limit];
        // A run of more than three `>`: the root pattern may end the calls' text inside the run,
        // before a `>>>all\n` that starts later in it (`{}>>>>>>all\n` ends the calls after the
        // first `>>>`, which then starts no call), and the iterator splits the run its own way.
        // This scan does not follow that: the calls not sent yet go out with the final message.
        if after.starts_with('>') {
            return self.stop();
        }
        let end = match (all_terminator(after), cut_name(after)) {
            (Known::Yes, _) => {
                // The calls end before it: the last call, less trailing white space.
                self.done = true;
                start + text[start..y].trim_end_matches(is_space).len()
            }
            (Known::Wait, _) | (_, Known::Wait) => {
                self.search_from = y;
                return self.open(text, start, y);
            }
            (Known::No, Known::Yes) => return self.stop(),
            (Known::No, Known::No) => {
                self.call = Some((y + MARK.len(), false));
                self.search_from = y + MARK.len() + 1;
                y
            }
        };
        let call_text = match bare {
            true => format!("{MARK}{}", &text[start..end]),
            false => text[start..end].to_owned(),
        };
        match parse_node(
            self.items,
            Content::borrowed(&call_text),
            &mut Walk::strict(),
        ) {
            Ok(value) => {
                // The raw text of a call after the first starts at its `>>>`.
                let raw_start = self.raw_start(start);
                self.sent += 1;
                CallStep::Call {
                    start: raw_start,
                    end,
                    value,
                }
            }
            Err(_) => self.stop(),
        }
    }

    /// The call open at `start` (its text runs at least to `end`, where the next `>>>` may be):
    /// known up to its last non-space character before `end` (white space before a `>>>all\n`
    /// is not the call's).
    fn open(&mut self, text: &str, start: usize, end: usize) -> CallStep {
        let raw_start = self.raw_start(start);
        let end = end.max(start);
        let known = if end >= self.spaces_read {
            let from = self.spaces_read.max(start);
            let new = text[from..end].trim_end_matches(is_space).len();
            if new > 0 || from == start {
                self.non_space_end = from + new;
            }
            self.spaces_read = end;
            self.non_space_end.max(start)
        } else {
            start + text[start..end].trim_end_matches(is_space).len()
        };
        CallStep::Open {
            start: raw_start,
            known,
        }
    }

    /// Where the raw text of the call whose text starts at `start` begins: a call after the
    /// first at its `>>>`.
    fn raw_start(&self, start: usize) -> usize {
        if self.sent == 0 {
            start
        } else {
            start - MARK.len()
        }
    }

    fn stop(&mut self) -> CallStep {
        self.done = true;
        CallStep::Done
    }

    /// `<|eot_id|>` has arrived, ending at `end`: the one-shot parse of the output up to it
    /// decides the calls not sent yet.
    fn ended(&mut self, text: &str, end: usize) -> CallStep {
        let (schema, field) = (self.schema, self.field);
        let next = self.ended_calls.next(self.sent, || {
            let mut message = schema.parse(&text[..end]).ok()?;
            match message.get_mut(field).map(std::mem::take) {
                Some(Value::Array(calls)) => Some(calls),
                _ => Some(Vec::new()),
            }
        });
        let Some(value) = next else {
            return self.stop();
        };
        let Some((text_start, _)) = self.call else {
            return self.stop();
        };
        let start = self.raw_start(text_start);
        // The rest of the calls' text, up to the next `>>>` or the end token. The iterator's
        // `(.+?)` takes at least one character of the call's own text, so that `>>>` starts
        // after the call's first character: a call after `>>>>>>` starts with `>`.
        let rest_end = end - "<|eot_id|>".len();
        let from = (text_start + 1).min(rest_end);
        let next = memchr::memmem::find(&text.as_bytes()[from..rest_end], MARK.as_bytes())
            .map_or(rest_end, |i| from + i);
        self.sent += 1;
        self.call = Some((next + MARK.len(), false));
        CallStep::Call {
            start,
            end: next.max(start),
            value,
        }
    }
}

impl DecidedCalls for RecipientScan<'_> {
    fn next(&mut self, calls: CallsText<'_>) -> CallStep {
        self.next_in(calls.text, calls.limit, calls.end_token)
    }
}

/// `NAME[ \t]*\r?\n` at the start of `rest` (`NAME` = `[^\s>]+`).
fn header(rest: &str, spaces: &mut SpaceRuns) -> Known {
    let name = rest
        .find(|c: char| is_space(c) || c == '>')
        .unwrap_or(rest.len());
    if name == 0 {
        return if rest.is_empty() {
            Known::Wait
        } else {
            Known::No
        };
    }
    let blank = spaces.skip(rest, name, |c| c == ' ' || c == '\t');
    let mut chars = rest[blank..].chars().peekable();
    chars.next_if_eq(&'\r');
    match chars.next() {
        Some('\n') => Known::Yes,
        Some(_) => Known::No,
        None => Known::Wait,
    }
}

/// Whether `after` (the text after a `>>>`) is the terminator `all[ \t]*\r?\n`.
fn all_terminator(after: &str) -> Known {
    let Some(rest) = after.strip_prefix("all") else {
        return if "all".starts_with(after) {
            Known::Wait
        } else {
            Known::No
        };
    };
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix('\r').unwrap_or(rest);
    match rest.chars().next() {
        Some('\n') => Known::Yes,
        Some(_) => Known::No,
        None => Known::Wait,
    }
}

/// Whether `after` (the text after a `>>>`) may still be the terminator `[^\s>]*$`: a name that
/// runs to the end of the output, or to a `\n` that ends it. `Yes` is never known before the
/// end; `No` once a character after the name rules it out.
fn cut_name(after: &str) -> Known {
    let run = after
        .char_indices()
        .find(|&(_, c)| is_space(c) || c == '>')
        .map(|(i, _)| i);
    match run {
        None => Known::Wait,
        Some(i) if after[i..].starts_with('\n') && after.len() == i + 1 => Known::Wait,
        Some(_) => Known::No,
    }
}

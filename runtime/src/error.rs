//! Error types: [`SchemaError`] for a schema that cannot be used, [`ParseError`] for model output
//! that the schema cannot turn into a message (wherever the reference parser raises).

use std::borrow::Cow;
use std::fmt;

use crate::py::json::JsonError;
use crate::pyre::MatchError;

/// One thing wrong with a schema: where (a JSON pointer into the schema), what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON pointer of the offending node or keyword, e.g. `/properties/tool_calls/x-regex-iterator`.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = crate::display_pointer(&self.pointer);
        write!(f, "{pointer}: {}", self.message)?;
        if !self.fix.is_empty() {
            write!(f, "\n  fix: {}", self.fix)?;
        }
        Ok(())
    }
}

/// A schema that cannot be used, with every problem found (validation does not stop at the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The schema's file name, or `<schema>` when it came from a string or value.
    pub source_name: String,
    /// Every problem, in document order.
    pub problems: Vec<SchemaProblem>,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "invalid response schema {}: {n} problem{}",
            self.source_name,
            if n == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n{}: {problem}", self.source_name)?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaError {}

/// Model output that the schema cannot turn into a message.
///
/// Every variant corresponds to a place where the reference parser raises (and
/// [`ParseErrorKind::NotUnderstood`] to a shipped family's completeness check). `pointer` is the
/// JSON pointer of the schema node that failed, so the message says which part of the schema gave
/// up; `position`, where it can be told, says where in the model output.
#[derive(Debug, Clone)]
pub struct ParseError {
    /// JSON pointer of the schema node being parsed when the error occurred (borrowed where it
    /// is known when the parser is built: a refused short message then costs no allocation for
    /// it).
    pub pointer: Cow<'static, str>,
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// Where in the whole model output the error is (not in the snippet a node was given): for
    /// JSON that does not parse, the character the JSON error names; for a part the family's
    /// completeness check does not understand, its first byte. `None` where it cannot be told
    /// (e.g. text a substitution rewrote). The message (`Display`) keeps the reference's wording,
    /// whose line and column count from the snippet.
    pub position: Option<Position>,
    /// Where the error is while it is inside a snippet of the output, until
    /// [`ParseError::located`] turns it into `position`.
    anchor: Option<Box<Anchor>>,
}

/// A place in the snippet a node was given: its address (exact when the snippet is a slice of
/// the output), and the snippet's text with the offset in it (for a snippet that is a copy: a
/// regex group, text after a substitution).
#[derive(Debug, Clone)]
struct Anchor {
    address: usize,
    snippet: String,
    at: usize,
    /// The text the error was found in, when that text was a copy (a regex group, as the
    /// reference's `groupdict()`): its length and the error's byte in it. Lets
    /// [`ParseError::placed_in`] move an error found in a part of the copy to the same byte of
    /// the group the copy was made from.
    within: Option<(usize, usize)>,
}

impl PartialEq for ParseError {
    fn eq(&self, other: &Self) -> bool {
        self.pointer == other.pointer && self.kind == other.kind && self.position == other.position
    }
}

/// A place in the model output: a byte offset, and the 1-based line and column (in characters)
/// it is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Byte offset from the start of the output.
    pub offset: usize,
    /// Line, from 1 (lines end at `\n`).
    pub line: usize,
    /// Column, from 1, in characters (Unicode scalar values), as Python counts `colno`.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` of `text` (clamped to the text and to a character
    /// boundary).
    ///
    /// ```
    /// use chatparse_runtime::Position;
    /// let p = Position::in_text("ab\ncé d", 6);
    /// assert_eq!((p.offset, p.line, p.column), (6, 2, 3));
    /// ```
    pub fn in_text(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        // Bytes, not chars: `memchr` counts the line breaks, and a char is a byte that is not a
        // UTF-8 continuation byte (the `str` searchers cost about 170 instructions even on an
        // empty prefix, most of a refused short message's error).
        let before = &text.as_bytes()[..offset];
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        Position {
            offset,
            line: memchr::memchr_iter(b'\n', before).count() + 1,
            column: before[line_start..]
                .iter()
                .filter(|&&b| b & 0xC0 != 0x80)
                .count()
                + 1,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "byte {} (line {}, column {})",
            self.offset, self.line, self.column
        )
    }
}

/// What went wrong in a [`ParseError`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A node with a regex or substitution received a value that is not a string.
    RegexInputNotString {
        /// The Python type name of what it received (`dict`, `list`, `int`, …).
        found: &'static str,
    },
    /// An `x-regex-key-value` match in which the `key` or `value` group did not take part.
    KeyValueGroupMissing,
    /// A node with `x-parser` received a value that is not a string.
    ParserInputNotString {
        /// The Python type name of what it received.
        found: &'static str,
    },
    /// `x-parser: json` on text that is not JSON (without `allow_non_json`), or JSON that Python
    /// accepts but JSON cannot represent (NaN, lone surrogates), or that nests too deeply.
    Json(JsonError),
    /// The JMESPath `transform` failed at run time (e.g. a function got the wrong type).
    Transform(String),
    /// A regex engine failed for a reason other than its step budget.
    Regex(String),
    /// The node's regex would take more steps on this input than its budget allows (see
    /// [`chatparse_pyre::Budget`](crate::pyre::Budget)): the pattern backtracks catastrophically
    /// here. The search stopped after `steps` steps on `input_len` bytes.
    RegexTooCostly {
        /// The budget the search exceeded.
        steps: u64,
        /// The searched text's length in bytes.
        input_len: usize,
    },
    /// The value has a type this node cannot take.
    UnexpectedType {
        /// What the node accepts, e.g. `"a dict or str"`.
        expected: &'static str,
        /// The Python type name of what it got.
        found: &'static str,
    },
    /// An object node received a string but has neither `properties` nor a regex/parser.
    ObjectWithoutProperties,
    /// An `integer` node's string is not valid for Python's `int()`.
    InvalidInteger(String),
    /// A `number` node's string is not valid for Python's `float()`.
    InvalidNumber(String),
    /// A `boolean` node's string is none of true/1/false/0 (any case).
    InvalidBoolean(String),
    /// The value exists in Python but has no JSON form: an infinite or NaN float, or an integer
    /// too large to convert to a float.
    NumberOutOfRange(String),
    /// Keys listed in `required` are missing from the parsed object.
    MissingRequired(Vec<String>),
    /// An array has a different number of items than `prefixItems`.
    PrefixItemsLength {
        /// How many `prefixItems` the schema defines.
        expected: usize,
        /// How many items the value has.
        found: usize,
    },
    /// A `response_template` field could not turn its region into a value where the reference
    /// raises: a content parser (`xml-inline` without a `key`, a `json` dialect sentinel), a
    /// transform placeholder, `join` or `repeats` on an incompatible value.
    StreamField(String),
    /// A streaming parser was used again after it returned an error (the reference's state is
    /// undefined at that point too).
    StreamPoisoned,
    /// The template's delimiters keep matching the empty string at one position: the reference
    /// loops forever there.
    StreamNoProgress,
    /// A tool call the request does not allow (checked by the OpenAI adapter's
    /// [`ToolChecks`](crate::openai::ToolChecks)): a name not among the tools offered, or a
    /// second call when parallel calls are off.
    ToolCallNotAllowed(String),
    /// The OpenAI adapter sent a tool call's start (and arguments) while the call was being
    /// written, and the call that closed differs from it: the call object wrote its `name`,
    /// `arguments` or `id` again after its arguments. The stream fails rather than contradict
    /// what it sent (see [`DeltaStream`](crate::openai::DeltaStream)).
    StreamedCallChanged(String),
    /// The OpenAI adapter sent a field's text as it arrived, and the final message's text does
    /// not begin with it: a response template's field written twice, whose last region's value
    /// replaces the first (as transformers does). The stream fails rather than contradict what
    /// it sent (see [`DeltaStream`](crate::openai::DeltaStream)).
    StreamedTextChanged(String),
    /// The `x-regex-iterator` stages of this parse would produce more than the output bound
    /// allows for this input (see [`crate::budget`]): iterators nested over the same text, or an
    /// iterator that matches the empty string, multiply the input. `pointer` is the iterator
    /// that went over.
    OutputTooLarge {
        /// `"bytes"` (the matches' total span) or `"matches"` (their number).
        unit: &'static str,
        /// The bound that was exceeded, in `unit`.
        limit: usize,
        /// The length of the parse's input in bytes.
        input_len: usize,
    },
    /// A part of the output that the schema would drop without a word, found by the shipped
    /// family's completeness check (see [`Check`](crate::schema::Check)): text the format does
    /// not put there, a second call block the format does not write, a call whose keys are not the
    /// format's. `span` is its byte range in the output.
    NotUnderstood {
        /// What the part is and why it is not understood (borrowed where the check's wording is
        /// fixed).
        what: Cow<'static, str>,
        /// Its byte range in the output.
        span: (usize, usize),
    },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RegexInputNotString { found } => {
                write!(f, "node has a regex but received a {found}, not a string")
            }
            Self::KeyValueGroupMissing => f.write_str(
                "x-regex-key-value matched, but its `key` or `value` group did not take part",
            ),
            Self::ParserInputNotString { found } => {
                write!(f, "node has a parser but received a {found}, not a string")
            }
            Self::Json(e) => write!(f, "content is not valid JSON: {e}"),
            Self::Transform(e) => write!(f, "transform failed: {e}"),
            Self::Regex(e) => write!(f, "regex engine failed: {e}"),
            Self::RegexTooCostly { steps, input_len } => write!(
                f,
                "the regex is too costly for this input: the search needed more than {steps} \
                 backtracking steps on {input_len} bytes (fix: make nested or adjacent repeats \
                 that can match the same text unambiguous, e.g. an optional (?:\\S(?:.*?\\S)??)?? \
                 instead of a repeated group of lazy loops)"
            ),
            Self::OutputTooLarge {
                unit,
                limit,
                input_len,
            } => write!(
                f,
                "the x-regex-iterator matches of this parse exceed the output bound: more than \
                 {limit} {unit} for {input_len} bytes of input (fix: nest fewer x-regex-iterator \
                 levels over the same text, make each inner iterator match a part of its item \
                 rather than all of it, and do not let an iterator match the empty string)"
            ),
            Self::UnexpectedType { expected, found } => {
                write!(f, "expected {expected}, got a {found}")
            }
            Self::ObjectWithoutProperties => f.write_str(
                "object node received a string but has no properties, regex or parser to handle it",
            ),
            Self::InvalidInteger(s) => write!(f, "not a valid integer: {s:?}"),
            Self::InvalidNumber(s) => write!(f, "not a valid number: {s:?}"),
            Self::InvalidBoolean(s) => write!(f, "not a valid boolean: {s:?}"),
            Self::NumberOutOfRange(s) => write!(f, "number has no JSON representation: {s}"),
            Self::MissingRequired(keys) => {
                write!(f, "required fields are missing: {}", keys.join(", "))
            }
            Self::PrefixItemsLength { expected, found } => write!(
                f,
                "array has {found} items but the schema defines {expected} prefixItems"
            ),
            Self::StreamField(e) => f.write_str(e),
            Self::StreamPoisoned => {
                f.write_str("the streaming parser already failed; start a new one")
            }
            Self::StreamNoProgress => f.write_str(
                "the template's delimiters match the empty string here over and over \
                 (the reference parser loops forever)",
            ),
            Self::ToolCallNotAllowed(why) => write!(f, "tool call not allowed: {why}"),
            Self::StreamedCallChanged(why) => {
                write!(f, "a streamed tool call changed after it was sent: {why}")
            }
            Self::StreamedTextChanged(why) => {
                write!(f, "streamed text changed after it was sent: {why}")
            }
            Self::NotUnderstood { what, span } => write!(
                f,
                "not understood (bytes {}..{} of the output): {what}",
                span.0, span.1
            ),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = crate::display_pointer(&self.pointer);
        write!(f, "at {pointer}: {}", self.kind)
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ParseErrorKind::Json(e) => Some(e),
            _ => None,
        }
    }
}

impl ParseError {
    pub(crate) fn new(pointer: &str, kind: ParseErrorKind) -> Self {
        Self {
            pointer: Cow::Owned(pointer.to_owned()),
            kind,
            position: None,
            anchor: None,
        }
    }

    /// Marks byte `at` of `snippet` as where the error is; [`ParseError::located`] turns it into
    /// a [`Position`] when `snippet` is a slice of the output.
    pub(crate) fn anchored(mut self, snippet: &str, at: usize) -> Self {
        let at = at.min(snippet.len());
        self.anchor = Some(Box::new(Anchor {
            address: snippet.as_ptr() as usize + at,
            snippet: snippet.to_owned(),
            at,
            within: None,
        }));
        self
    }

    /// Notes that the error was found in `text` (which is alive, so an address in its range is
    /// a byte of it): when `text` is a copy of a group, [`ParseError::placed_in`] can then place
    /// the error in that group even when it was found in a part of the copy.
    pub(crate) fn found_in(mut self, text: &str) -> Self {
        if let Some(anchor) = &mut self.anchor {
            let start = text.as_ptr() as usize;
            // An address outside `text` is in a copy made below it: the note of that copy says
            // nothing about `text`'s group, so it is dropped.
            anchor.within = anchor
                .address
                .checked_sub(start)
                .filter(|&at| at <= text.len())
                .map(|at| (text.len(), at));
        }
        self
    }

    /// Anchors the error in `value` (a slice of the output) when it was found in a copy of all
    /// of `value` ([`ParseError::found_in`] the copy, or in a snippet that is all of it): the
    /// same byte of the copy, now in the output. Else unchanged.
    pub(crate) fn placed_in(mut self, value: &str) -> Self {
        if let Some(anchor) = &mut self.anchor {
            if anchor.snippet == value {
                anchor.address = value.as_ptr() as usize + anchor.at;
            } else if let Some((len, at)) = anchor.within {
                // The copy had `value`'s length and the snippet at the same place: the byte
                // `at` of the copy is byte `at` of `value`.
                let same = len == value.len()
                    && at.checked_sub(anchor.at).is_some_and(|from| {
                        value.get(from..from + anchor.snippet.len()) == Some(&*anchor.snippet)
                    });
                if same {
                    anchor.address = value.as_ptr() as usize + at;
                }
            }
            anchor.within = None;
        }
        self
    }

    /// Resolves where the error is against the whole `output` the parse was given: an error
    /// found inside a slice of `output` gets its [`Position`] there. Entry points call it on
    /// their input; it is idempotent.
    #[doc(hidden)]
    pub fn located(mut self, output: &str) -> Self {
        if let Some(anchor) = self.anchor.take() {
            let start = output.as_ptr() as usize;
            // Both are addresses of live text: the snippet was inside `output` exactly when its
            // address is in `output`'s range. A copy (a regex group, substituted text) is found
            // by its text: where it first occurs in the output.
            let offset = anchor
                .address
                .checked_sub(start)
                .filter(|&offset| offset <= output.len())
                .or_else(|| {
                    (!anchor.snippet.is_empty())
                        .then(|| output.find(&anchor.snippet))
                        .flatten()
                        .map(|found| found + anchor.at)
                });
            if let Some(offset) = offset {
                self.position = Some(Position::in_text(output, offset));
            }
        }
        self
    }

    /// The same error found in a text that starts `shift` bytes into the output (a stream's
    /// buffer after a prompt's tail, …): its position is moved back to count from the output.
    #[doc(hidden)]
    pub fn shifted(mut self, text: &str, shift: usize) -> Self {
        self = self.located(text);
        if let Some(p) = self.position {
            self.position = p
                .offset
                .checked_sub(shift)
                .map(|offset| Position::in_text(text.get(shift..).unwrap_or_default(), offset));
        }
        self
    }

    /// A part of `output` the family's completeness check does not understand.
    pub(crate) fn not_understood(
        pointer: Cow<'static, str>,
        what: Cow<'static, str>,
        span: (usize, usize),
        output: &str,
    ) -> Self {
        Self {
            pointer,
            kind: ParseErrorKind::NotUnderstood { what, span },
            position: Some(Position::in_text(output, span.0)),
            anchor: None,
        }
    }

    pub(crate) fn regex(pointer: &str, e: MatchError) -> Self {
        let kind = match e.budget {
            Some(budget) => ParseErrorKind::RegexTooCostly {
                steps: budget.steps,
                input_len: budget.input_len,
            },
            None => ParseErrorKind::Regex(e.message),
        };
        Self::new(pointer, kind)
    }
}

#[cfg(test)]
mod tests {
    use super::Position;
    use proptest::prelude::*;

    proptest! {
        /// Counting bytes gives what counting chars does: the line is one more than the line
        /// breaks before the offset, the column one more than the chars since the last of them,
        /// and an offset inside a char moves back to its start.
        #[test]
        fn position_counts_lines_and_chars(
            text in "[a\\n\\ré€😀\\u{85}\\u{2028} ]{0,24}",
            frac in 0.0f64..=1.0,
        ) {
            let offset = (text.len() as f64 * frac) as usize;
            let p = Position::in_text(&text, offset);
            let start = (0..=offset).rev().find(|&i| text.is_char_boundary(i)).unwrap();
            let before = &text[..start];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            prop_assert_eq!(p.offset, start);
            prop_assert_eq!(p.line, before.matches('\n').count() + 1);
            prop_assert_eq!(p.column, before[line_start..].chars().count() + 1);
        }
    }
}

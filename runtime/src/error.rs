//! Error types: [`SchemaError`] for a schema that cannot be used, [`ParseError`] for model output
//! that the schema cannot turn into a message (wherever the reference parser raises).

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
/// Every variant corresponds to a place where the reference parser raises. `pointer` is the JSON
/// pointer of the schema node that failed, so the message says which part of the schema gave up.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// JSON pointer of the schema node being parsed when the error occurred.
    pub pointer: String,
    /// What went wrong.
    pub kind: ParseErrorKind,
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
            pointer: pointer.to_owned(),
            kind,
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

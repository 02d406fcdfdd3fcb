//! The output bound: what `x-regex-iterator` stages may produce in one parse, relative to the
//! model output's length.
//!
//! Everything else a schema does to the output is bounded by the input and the schema: regexes
//! capture slices of it, JSON makes at most one value per byte, constants and defaults are a
//! fixed amount per schema node. Iterators are the exception: nested over the same text, each
//! level wraps every match of the level above in a list again, so a 200-deep nesting of
//! `x-regex-iterator: "([^\n]+)"` over 93 MB of lines made 200 list nodes per line (24 GB; the
//! loader now refuses arrays nested deeper than 32, which still allows 32 nodes per line), and an
//! iterator that matches the empty string makes a list item per character. So in one parse:
//!
//! - the iterators' matches together span at most [`SPAN_FACTOR`] × the input's bytes +
//!   [`SPAN_CONSTANT`] bytes (each level over the same text spends the text's length), and
//! - they number at most the input's bytes + [`ITEMS_CONSTANT`].
//!
//! Beyond either, the parse fails with [`ParseErrorKind::OutputTooLarge`] at the iterator's
//! pointer. So whatever the schema, iterators add at most one list item per input byte (plus
//! 4,096), 80 bytes each in the message (160 while a list grows), and copy at most 8 × the input
//! (plus 1 MiB) of matched text. Shipped schemas nest at most two iterators (calls, then their
//! parameters): they spend at most 2 × the input's bytes and far fewer items than bytes.
//!
//! [`Schema::parse`](crate::Schema::parse), the lenient parse, the streams' parses and the
//! generated parsers each set the bound for their input; an [`OutputBudget`] set by the caller
//! around them takes precedence (a server can set a tighter one).
//!
//! ```
//! use chatparse_runtime::budget::{Limits, OutputBudget};
//! use chatparse_runtime::{ParseErrorKind, Schema};
//!
//! // Two iterators nested over the same text: each line is matched twice.
//! let schema = Schema::from_json_str(r#"{"type": "object", "properties": {"lines": {
//!     "type": "array", "x-regex-iterator": "([^\\n]+)",
//!     "items": {"type": "array", "x-regex-iterator": "([^\\n]+)", "items": {"type": "string"}}}}}"#)?;
//! let text = "a line\n".repeat(100);
//! assert_eq!(schema.parse(&text)?["lines"].as_array().map(Vec::len), Some(100));
//! // Within a tighter bound (1 × the input), the second level does not fit.
//! let _bound = OutputBudget::with_limits(text.len(), Limits { span_factor: 1, span_constant: 0, ..Limits::DEFAULT });
//! let e = schema.parse(&text).unwrap_err();
//! assert!(matches!(e.kind, ParseErrorKind::OutputTooLarge { .. }));
//! assert_eq!(e.pointer, "/properties/lines/items/x-regex-iterator");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::Cell;
use std::marker::PhantomData;

use crate::error::{ParseError, ParseErrorKind};

/// How many times the input's length iterator matches may span together.
pub const SPAN_FACTOR: usize = 8;
/// Bytes iterator matches may span on top of [`SPAN_FACTOR`] × the input.
pub const SPAN_CONSTANT: usize = 1 << 20;
/// Iterator matches allowed on top of one per input byte.
pub const ITEMS_CONSTANT: usize = 4096;

/// The bound's parameters (see the [module](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Multiple of the input's bytes that iterator matches may span.
    pub span_factor: usize,
    /// Bytes on top of that.
    pub span_constant: usize,
    /// Multiple of the input's bytes that iterator matches may number.
    pub items_factor: usize,
    /// Matches on top of that.
    pub items_constant: usize,
}

impl Limits {
    /// The bound every parse gets.
    pub const DEFAULT: Limits = Limits {
        span_factor: SPAN_FACTOR,
        span_constant: SPAN_CONSTANT,
        items_factor: 1,
        items_constant: ITEMS_CONSTANT,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

#[derive(Debug, Clone, Copy)]
struct Remaining {
    span: usize,
    items: usize,
    input_len: usize,
    limits: Limits,
}

thread_local! {
    static CURRENT: Cell<Option<Remaining>> = const { Cell::new(None) };
}

/// The output bound of the parse running on this thread, while this guard lives. Setting one
/// while another is in force does nothing (the outer parse's bound counts).
#[must_use = "the bound holds while the guard lives"]
#[derive(Debug)]
pub struct OutputBudget {
    installed: bool,
    /// Thread-bound: the bound is per thread.
    _thread: PhantomData<*const ()>,
}

impl OutputBudget {
    /// The default bound ([`Limits::DEFAULT`]) for an input of `input_len` bytes.
    pub fn enter(input_len: usize) -> OutputBudget {
        OutputBudget::with_limits(input_len, Limits::DEFAULT)
    }

    /// A bound with other parameters for an input of `input_len` bytes.
    pub fn with_limits(input_len: usize, limits: Limits) -> OutputBudget {
        let installed = CURRENT
            .try_with(|c| {
                if c.get().is_some() {
                    return false;
                }
                c.set(Some(Remaining {
                    span: limits
                        .span_factor
                        .saturating_mul(input_len)
                        .saturating_add(limits.span_constant),
                    items: limits
                        .items_factor
                        .saturating_mul(input_len)
                        .saturating_add(limits.items_constant),
                    input_len,
                    limits,
                }));
                true
            })
            .unwrap_or(false);
        OutputBudget {
            installed,
            _thread: PhantomData,
        }
    }
}

impl Drop for OutputBudget {
    fn drop(&mut self) {
        if self.installed {
            let _ = CURRENT.try_with(|c| c.set(None));
        }
    }
}

/// Spends one iterator match spanning `len` bytes; the error names `pointer`.
pub(crate) fn charge_match(len: usize, pointer: &str) -> Result<(), ParseError> {
    let over = CURRENT
        .try_with(|c| {
            let mut r = c.get()?;
            let over = if r.items == 0 {
                Some(("matches", r.limits.items_factor, r.limits.items_constant))
            } else if r.span < len {
                Some(("bytes", r.limits.span_factor, r.limits.span_constant))
            } else {
                r.items -= 1;
                r.span -= len;
                None
            };
            c.set(Some(r));
            over.map(|(unit, factor, constant)| (unit, factor, constant, r.input_len))
        })
        .ok()
        .flatten();
    match over {
        None => Ok(()),
        Some((unit, factor, constant, input_len)) => Err(ParseError::new(
            pointer,
            ParseErrorKind::OutputTooLarge {
                unit,
                limit: factor.saturating_mul(input_len).saturating_add(constant),
                input_len,
            },
        )),
    }
}

/// What a parse spent of the bound: its iterator matches and the bytes they spanned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Spent {
    pub(crate) matches: usize,
    pub(crate) bytes: usize,
}

/// What the bound in force on this thread has left (`Spent`'s units), if one is.
pub(crate) fn remaining() -> Option<Spent> {
    CURRENT
        .try_with(|c| {
            c.get().map(|r| Spent {
                matches: r.items,
                bytes: r.span,
            })
        })
        .ok()
        .flatten()
}

/// What the parse run by `parse` spent of the bound in force (the caller installs one), with
/// its result; `None` for the spending when no bound is in force.
pub(crate) fn spent_by<T>(parse: impl FnOnce() -> T) -> (T, Option<Spent>) {
    let before = remaining();
    let result = parse();
    let spent = before.zip(remaining()).map(|(b, a)| Spent {
        matches: b.matches.saturating_sub(a.matches),
        bytes: b.bytes.saturating_sub(a.bytes),
    });
    (result, spent)
}

/// Spends at once what a parse that succeeded spent, if the bound has it left: `true` (spent)
/// exactly when that parse, run again now, would get through every one of its charges. Why:
/// `charge_match` lets a match through while one match and its bytes are left, so `k` matches
/// spanning `n` bytes in all get through, one after another, exactly when `k` matches and `n`
/// bytes are left (each charge then finds enough; with less, the first charge beyond fails).
/// With no bound in force every charge gets through, as here.
pub(crate) fn spend(spent: Spent) -> bool {
    CURRENT
        .try_with(|c| {
            let Some(mut r) = c.get() else {
                return true;
            };
            if r.items < spent.matches || r.span < spent.bytes {
                return false;
            }
            r.items -= spent.matches;
            r.span -= spent.bytes;
            c.set(Some(r));
            true
        })
        .unwrap_or(true)
}

//! What a generated parse read, kept for its family's completeness check.
//!
//! The call-region check ([`Check::CallGaps`]) and gpt-oss's ([`Check::GptOss`]) read the output
//! with the schema's own patterns: the root pattern (after its substitutions) for the calls'
//! region and the calls' iterator in it, or each field's pattern and the calls' iterator. A
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

use std::cell::RefCell;

use super::check::{
    call_gaps_iterator, gaps_unread, offset_in, outside_read, region_gaps, RegionGap,
};
use super::{Check, Schema, Unread};

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
}

/// The pointer of the calls' iterator the call-region check reads.
const CALLS_ITERATOR: &str = "/properties/tool_calls/x-regex-iterator";

/// What the parse read so far.
#[derive(Debug)]
struct Recording {
    check: Check,
    /// The parsed output's address and length: a step's text is the output itself only when
    /// both are equal (gpt-oss's fields search the whole output).
    input: (usize, usize),
    /// [`Check::CallGaps`]: whether the root pattern was searched (with or without a match).
    root_searched: bool,
    /// [`Check::CallGaps`]: the gaps of the calls' region, once the calls' iterator ran over it.
    gaps: Option<Vec<RegionGap>>,
    /// [`Check::GptOss`]: the spans the fields' first matches and the calls' matches cover.
    read: Vec<(usize, usize)>,
}

/// The recording of one parse; restores the one it replaced (none, normally) when dropped.
struct Guard {
    previous: Option<Recording>,
}

impl Guard {
    fn start(check: Check, text: &str) -> Guard {
        let recording = Recording {
            check,
            input: (text.as_ptr() as usize, text.len()),
            root_searched: false,
            gaps: None,
            read: Vec::new(),
        };
        Guard {
            previous: RECORDING.with(|r| r.replace(Some(recording))),
        }
    }

    fn finish(mut self) -> Option<Recording> {
        let previous = self.previous.take();
        RECORDING.with(|r| r.replace(previous))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            RECORDING.with(|r| r.replace(Some(previous)));
        }
    }
}

fn is_input(recording: &Recording, text: &str) -> bool {
    recording.input == (text.as_ptr() as usize, text.len())
}

/// `/properties/NAME/x-regex` of a root property.
fn is_field_pattern(pointer: &str) -> bool {
    pointer
        .strip_prefix("/properties/")
        .and_then(|rest| rest.strip_suffix("/x-regex"))
        .is_some_and(|name| !name.contains('/'))
}

/// Whether the iterator at `pointer` running over `text` is one the recording keeps: the caller
/// then collects its matches' spans for [`iterated`].
pub(crate) fn wants_matches(pointer: &str, text: &str) -> bool {
    RECORDING.with(|r| match &*r.borrow() {
        None => false,
        Some(recording) => match recording.check {
            Check::CallGaps => pointer == CALLS_ITERATOR,
            Check::GptOss => {
                pointer
                    .strip_suffix("-iterator")
                    .is_some_and(is_field_pattern)
                    && is_input(recording, text)
            }
            _ => false,
        },
    })
}

/// The matches (spans in `text`) of the iterator at `pointer`, which [`wants_matches`] asked for.
pub(crate) fn iterated(pointer: &str, text: &str, spans: &[(usize, usize)]) {
    RECORDING.with(|r| {
        let mut slot = r.borrow_mut();
        let Some(recording) = slot.as_mut() else {
            return;
        };
        match recording.check {
            Check::CallGaps if pointer == CALLS_ITERATOR => {
                // The region is the text the calls' iterator ran over: the root group, as the
                // check cuts it.
                let region_at = offset_in(recording.input, text);
                recording.gaps = Some(region_gaps(region_at, text, spans));
            }
            Check::GptOss => recording.read.extend_from_slice(spans),
            _ => {}
        }
    });
}

/// A search of the pattern at `pointer` over `text` ran, and found `span` when `Some`.
pub(crate) fn searched(pointer: &str, text: &str, span: Option<(usize, usize)>) {
    RECORDING.with(|r| {
        let mut slot = r.borrow_mut();
        let Some(recording) = slot.as_mut() else {
            return;
        };
        match recording.check {
            Check::CallGaps if pointer == "/x-regex" => recording.root_searched = true,
            Check::GptOss if is_field_pattern(pointer) && is_input(recording, text) => {
                recording.read.extend(span);
            }
            _ => {}
        }
    });
}

impl Check {
    /// `parse()` (a generated parser's schema-only parse of `text`), then this check, deciding
    /// from what the parse read where it can instead of searching again: the same verdict as
    /// [`Check::verify`] after it (see the [module](self) notes of `recording.rs`).
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// let schema = chatparse_runtime::Schema::from_json_str(r#"{"type": "object"}"#)?;
    /// let message = Check::CallGaps.verify_parse(&schema, "Hi", || Ok::<_, chatparse_runtime::ParseError>(1))?;
    /// assert_eq!(message, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_parse<T>(
        &self,
        schema: &Schema,
        text: &str,
        parse: impl FnOnce() -> Result<T, crate::ParseError>,
    ) -> Result<T, crate::ParseError> {
        if !matches!(self, Check::CallGaps | Check::GptOss) {
            let message = parse()?;
            self.verify(schema, text)?;
            return Ok(message);
        }
        let guard = Guard::start(*self, text);
        let message = parse();
        let recording = guard.finish();
        let message = message?;
        let Some(recording) = recording else {
            // Not ours: a recording made inside `parse` replaced it (never in generated code).
            self.verify(schema, text)?;
            return Ok(message);
        };
        match recorded_unread(schema, text, recording).into_iter().next() {
            None => Ok(message),
            Some(u) => Err(crate::ParseError::not_understood(
                &format!("/properties/{}", u.field),
                u.what,
                u.span,
                text,
            )),
        }
    }
}

/// [`Check::unread`] from the recording.
fn recorded_unread(schema: &Schema, text: &str, mut recording: Recording) -> Vec<Unread> {
    let mut out = match recording.check {
        Check::CallGaps => {
            let gaps = match recording.gaps {
                Some(gaps) => gaps,
                // The root pattern ran and the calls' iterator did not: the root cut no
                // `tool_calls` region (or matched nothing), so no text is among calls.
                None if recording.root_searched => return Vec::new(),
                // Neither ran as the recording expects: the check searches for itself.
                None => return Check::CallGaps.unread(schema, text),
            };
            if gaps.is_empty() {
                return Vec::new();
            }
            // Only a schema of the check's shape has gaps to report, and only when a call is
            // somewhere in the output (`call_gaps` asks the same, in another order).
            let Some(iterator) = call_gaps_iterator(schema) else {
                return Vec::new();
            };
            if !matches!(iterator.regex.search(text), Ok(Some(_))) {
                return Vec::new();
            }
            gaps_unread(text, &gaps)
        }
        Check::GptOss => {
            if schema.root().properties.is_none() {
                return Vec::new();
            }
            outside_read(text, &mut recording.read)
        }
        _ => return Vec::new(),
    };
    out.sort_by_key(|u| u.span);
    out
}

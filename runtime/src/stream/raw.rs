//! What both streaming parsers share below the [`MessageStream`](super::MessageStream) trait:
//! events recorded before they can borrow ([`RawEvent`]), and the rule that a parser which
//! failed stays failed ([`Pending`]).

use std::borrow::Cow;

use crate::value::Value;

use super::{Event, TextRun};
use crate::error::{ParseError, ParseErrorKind};

/// An event recorded while the parser's buffer is still being written: the field by index and a
/// chunk's text as a byte range of the buffer. Lent out as an [`Event`] once the feed is done.
#[derive(Debug, Clone)]
pub(crate) enum RawEvent {
    Open {
        field: usize,
    },
    Chunk {
        field: usize,
        start: usize,
        end: usize,
    },
    Close {
        field: usize,
        value: Value,
    },
}

/// `buffer[start..end]`, a range the parser recorded in its own buffer: always in bounds and on
/// character boundaries. Debug builds (and so every test) check it; a release build that met a
/// broken range would give `""` rather than abort a server's worker.
pub(crate) fn span(buffer: &str, start: usize, end: usize) -> &str {
    debug_assert!(
        buffer.get(start..end).is_some(),
        "a recorded range {start}..{end} is not a slice of the {}-byte buffer",
        buffer.len()
    );
    buffer.get(start..end).unwrap_or("")
}

/// The event for a chunk of a field's text, `buffer[start..end]`, borrowed: `(field, dirty)` is
/// the field's name and whether it is dirty. What [`RawEvent::lend`] gives for a chunk, for the
/// feeds that hand a lone chunk out without recording it (one name lookup, not two).
pub(crate) fn chunk_event<'a>(
    buffer: &'a str,
    (field, dirty): (&'a str, bool),
    start: usize,
    end: usize,
) -> Event<'a> {
    Event::RegionChunk {
        field,
        text: Cow::Borrowed(span(buffer, start, end)),
        dirty,
    }
}

/// `buffer[start..end]`, text of the field at `index`, as a [`TextRun`] of the output (`buffer[output_from..]`):
/// `None` when the field is dirty (its chunks are raw text of a structured value) or the text is
/// not all output (a prompt's tail), so the feed goes out as events.
pub(crate) fn text_run<'a>(
    buffer: &'a str,
    output_from: usize,
    index: usize,
    (field, dirty): (&'a str, bool),
    start: usize,
    end: usize,
) -> Option<TextRun<'a>> {
    if dirty || start < output_from || start >= end {
        return None;
    }
    let output = buffer.get(output_from..)?;
    debug_assert!(output.get(start - output_from..end - output_from).is_some());
    Some(TextRun {
        field,
        index,
        output,
        start: start - output_from,
        end: end - output_from,
    })
}

/// What a parser knows of its fields, to name them in events.
pub(crate) trait FieldNames {
    /// The field's name in the message.
    fn name(&self, field: usize) -> &str;
    /// Whether its chunks are raw text of a structured value (see [`Event::RegionChunk`]).
    fn dirty(&self, field: usize) -> bool;
}

impl RawEvent {
    /// The event, its text borrowed from `buffer`.
    pub(crate) fn lend<'a>(self, buffer: &'a str, fields: &'a impl FieldNames) -> Event<'a> {
        self.into_event(fields, |start, end| Cow::Borrowed(span(buffer, start, end)))
    }

    /// The event with its text copied out of `buffer`, for events that outlive it.
    pub(crate) fn detach<'a>(self, buffer: &str, fields: &'a impl FieldNames) -> Event<'a> {
        self.into_event(fields, |start, end| {
            Cow::Owned(span(buffer, start, end).to_owned())
        })
    }

    fn into_event<'a>(
        self,
        fields: &'a impl FieldNames,
        text: impl FnOnce(usize, usize) -> Cow<'a, str>,
    ) -> Event<'a> {
        match self {
            RawEvent::Open { field } => Event::RegionOpen {
                field: fields.name(field),
            },
            RawEvent::Chunk { field, start, end } => Event::RegionChunk {
                field: fields.name(field),
                text: text(start, end),
                dirty: fields.dirty(field),
            },
            RawEvent::Close { field, value } => Event::RegionClose {
                field: fields.name(field),
                value,
            },
        }
    }
}

/// The raw events of the current feed, and whether the parser has failed: after an error every
/// call fails with [`ParseErrorKind::StreamPoisoned`] (a half-parsed buffer cannot be resumed
/// exactly).
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub(crate) events: Vec<RawEvent>,
    failed: bool,
}

impl Pending {
    /// Fails if an earlier call failed.
    pub(crate) fn check(&self) -> Result<(), ParseError> {
        if self.failed {
            Err(ParseError::new("", ParseErrorKind::StreamPoisoned))
        } else {
            Ok(())
        }
    }

    /// The one chunk of text this feed recorded, `(field, start, end)`, if that is all it
    /// recorded (most feeds).
    pub(crate) fn lone_chunk(&self) -> Option<(usize, usize, usize)> {
        match *self.events.as_slice() {
            [RawEvent::Chunk { field, start, end }] => Some((field, start, end)),
            _ => None,
        }
    }

    /// The one chunk of text this feed recorded, as a [`TextRun`] (see [`text_run`]), if that is
    /// all it recorded; `field` names a field and says whether it is dirty.
    pub(crate) fn text_run<'a>(
        &self,
        buffer: &'a str,
        output_from: usize,
        field: impl FnOnce(usize) -> (&'a str, bool),
    ) -> Option<TextRun<'a>> {
        let (at, start, end) = self.lone_chunk()?;
        text_run(buffer, output_from, at, field(at), start, end)
    }

    /// Hands this feed's records out: the one chunk of text as a [`TextRun`] when that is all it
    /// recorded ([`Pending::text_run`], `field` naming a field), else each event to `on_event`,
    /// lent from `buffer` (its fields named by `fields`) with the output so far,
    /// `buffer[output_from..]`.
    pub(crate) fn hand_out<'a>(
        &mut self,
        buffer: &'a str,
        output_from: usize,
        field: impl FnOnce(usize) -> (&'a str, bool),
        fields: &impl FieldNames,
        mut on_event: impl FnMut(Event<'_>, &str),
    ) -> Option<TextRun<'a>> {
        if let Some(run) = self.text_run(buffer, output_from, field) {
            return Some(run);
        }
        let output = buffer.get(output_from..).unwrap_or("");
        for raw in self.events.drain(..) {
            on_event(raw.lend(buffer, fields), output);
        }
        None
    }

    /// Records a failure: the parser is spent, and no half-made events are handed out.
    pub(crate) fn fail(&mut self, error: ParseError) -> ParseError {
        self.failed = true;
        self.events.clear();
        error
    }
}

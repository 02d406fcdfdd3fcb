//! The one streaming interface: a [`MessageStream`] takes a model's output as it arrives and
//! reports [`Event`]s, then ends with the whole message. Both formats implement it — the
//! response template's [`StreamParser`] and the x-regex schema's [`XRegexStreamParser`] — and
//! everything that drives a stream (the CLI, generated parsers, adapters such as OpenAI deltas)
//! drives this trait, so it works the same for either format. [`Spec::stream`](crate::Spec::stream)
//! makes one from any loaded spec.
//!
//! The events are transformers 5.23's (`region_open`, `region_chunk` with `dirty`,
//! `region_close` with the value), and for every chunking the final message equals the one-shot
//! parse of the whole text.
//!
//! ```
//! use chatparse_runtime::stream::MessageStream;
//! use chatparse_runtime::Spec;
//!
//! let spec = Spec::from_json_str(r#"{
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {
//!         "reasoning_content": {"open": "<think>", "close": "</think>"},
//!         "content": {}
//!     }
//! }"#)?;
//! let mut stream = spec.stream(None, None)?;
//! let mut content = String::new();
//! for chunk in ["<think>hm", "m</thi", "nk>Hello", "!"] {
//!     stream.feed_with(chunk, &mut |event| {
//!         if let chatparse_runtime::stream::Event::RegionChunk { field: "content", text, .. } = event {
//!             content.push_str(&text);
//!         }
//!     })?;
//! }
//! let message = stream.finish_with(&mut |_| {})?;
//! assert_eq!(content, "Hello!");
//! assert_eq!(message["reasoning_content"], "hmm");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod brackets;
mod events;
pub(crate) mod fast;
pub(crate) mod raw;
pub(crate) mod resume;
pub(crate) mod spaces;

use crate::value::Value;

use crate::error::ParseError;

pub use crate::schema::stream::{
    region_shape, Delim, Header, HeaderAlt, NotStreamable, ProfiledStreamParser, RegionShape,
    StreamProfile, XRegexPlan, XRegexStreamParser,
};
pub use crate::template::{is_response_template, ResponseTemplate, StreamParser};
pub use events::Event;

/// A feed whose only event is more text for a text region (a [`Event::RegionChunk`] that is not
/// `dirty`), handed out as a range of the stream's output instead of an event (see
/// [`MessageStream::feed_text_with`]): an adapter that keeps its own record of what it sent can
/// keep `start..end` instead of a copy, and hand out slices of `output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRun<'a> {
    /// The region's field.
    pub field: &'a str,
    /// The field's position among the stream's fields: the same field has the same index for
    /// the life of the stream (an adapter that matched `field` once compares this instead).
    pub index: usize,
    /// Everything fed so far ([`MessageStream::output`]).
    pub output: &'a str,
    /// The text is `output[start..end]` (character boundaries, `start < end`).
    pub start: usize,
    /// See `start`.
    pub end: usize,
}

impl<'a> TextRun<'a> {
    /// The text, `output[start..end]`.
    #[inline]
    pub fn text(&self) -> &'a str {
        self.output.get(self.start..self.end).unwrap_or("")
    }

    /// The event it stands for.
    pub fn event(&self) -> Event<'a> {
        Event::RegionChunk {
            field: self.field,
            text: std::borrow::Cow::Borrowed(self.text()),
            dirty: false,
        }
    }
}

/// A parser that takes a model's output chunk by chunk.
///
/// Events borrow from the parser (its buffer, its spec), so they are handed to a callback rather
/// than returned; `feed` methods on the concrete parsers collect them into a `Vec` when that is
/// more convenient. The trait is object safe: `Box<dyn MessageStream + '_>` is what
/// [`Spec::stream`](crate::Spec::stream) returns.
pub trait MessageStream {
    /// Feeds the next chunk of output; events decided by it go to `on_event`, in order.
    ///
    /// After an error the stream is spent: later calls return the same error.
    fn feed_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ParseError>;

    /// [`MessageStream::feed_with`] for adapters that keep ranges of the output rather than
    /// copies of it: when the chunk's only event is text for a text region, it is returned as a
    /// [`TextRun`] and `on_event` is not called; otherwise the events go to `on_event` with the
    /// output so far ([`MessageStream::output`], or `""` for a stream that does not keep it) and
    /// `None` is returned. The default never returns a run.
    ///
    /// ```
    /// use chatparse_runtime::stream::MessageStream;
    /// use chatparse_runtime::Spec;
    ///
    /// let spec = Spec::from_json_str(r#"{"start_anchor": "A:", "fields": {"content": {}}}"#)?;
    /// let mut stream = spec.stream(Some(""), None)?;
    /// let mut events = 0;
    /// // The first chunk opens the region: an event.
    /// assert!(stream.feed_text_with("Hel", &mut |_, _| events += 1)?.is_none());
    /// let run = stream.feed_text_with("lo!", &mut |_, _| events += 1)?.expect("text only");
    /// assert_eq!((run.field, run.text(), run.start, run.output), ("content", "lo!", 3, "Hello!"));
    /// assert_eq!(events, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn feed_text_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        self.feed_with(chunk, &mut |event| on_event(event, ""))?;
        Ok(None)
    }

    /// The events decided before any output arrived: a prompt prefix that opened a region (a
    /// prefilled `<think>`). None unless the spec reads a prefix.
    fn initial_events_with(&self, on_event: &mut dyn FnMut(Event<'_>)) {
        let _ = on_event;
    }

    /// Everything fed so far (the output, without the prompt prefix), where the parser keeps it:
    /// adapters read the model's own text there instead of keeping a copy of their own.
    fn output(&self) -> Option<&str> {
        None
    }

    /// Ends the output: the last events go to `on_event`, and the message is returned (equal to
    /// the one-shot parse of everything fed).
    fn finish_with(
        self: Box<Self>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<Value, ParseError>;
}

impl MessageStream for StreamParser<'_> {
    fn feed_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ParseError> {
        StreamParser::feed_with(self, chunk, on_event)
    }

    fn feed_text_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        StreamParser::feed_text_with(self, chunk, on_event)
    }

    fn initial_events_with(&self, on_event: &mut dyn FnMut(Event<'_>)) {
        self.initial_events().into_iter().for_each(on_event);
    }

    fn output(&self) -> Option<&str> {
        Some(StreamParser::output(self))
    }

    fn finish_with(
        self: Box<Self>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<Value, ParseError> {
        let (message, events) = (*self).finish()?;
        events.into_iter().for_each(on_event);
        Ok(message)
    }
}

impl MessageStream for XRegexStreamParser<'_> {
    fn output(&self) -> Option<&str> {
        Some(XRegexStreamParser::output(self))
    }

    fn feed_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ParseError> {
        XRegexStreamParser::feed_with(self, chunk, on_event)
    }

    fn feed_text_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        XRegexStreamParser::feed_text_with(self, chunk, on_event)
    }

    fn finish_with(
        self: Box<Self>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<Value, ParseError> {
        let (message, events) = (*self).finish()?;
        events.into_iter().for_each(on_event);
        Ok(message)
    }
}

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

use crate::value::Value;

use crate::error::ParseError;

pub use crate::schema::stream::{
    region_shape, Delim, Header, HeaderAlt, NotStreamable, ProfiledStreamParser, RegionShape,
    StreamProfile, XRegexPlan, XRegexStreamParser,
};
pub use crate::template::{is_response_template, ResponseTemplate, StreamParser};
pub use events::Event;

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

    fn finish_with(
        self: Box<Self>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<Value, ParseError> {
        let (message, events) = (*self).finish()?;
        events.into_iter().for_each(on_event);
        Ok(message)
    }
}

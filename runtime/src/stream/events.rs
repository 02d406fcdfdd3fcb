//! The events a [`StreamParser`](crate::template::StreamParser) emits, as the reference emits them.

use std::borrow::Cow;

use crate::json;
use crate::value::Value;

use crate::schema::Malformed;

/// One streaming event. The reference's dicts are `{"type": "region_open", "field"}`,
/// `{"type": "region_chunk", "field", "text", "dirty"}` and `{"type": "region_close", "field",
/// "value"}`; [`Event::to_json`] gives exactly those. A lenient stream (see
/// [`Spec::stream_lenient`](crate::Spec::stream_lenient)) adds `{"type": "malformed", …}`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A region (message field) starts: an explicit field's `open` delimiter matched, or the
    /// implicit field received its first text.
    RegionOpen {
        /// The field's name.
        field: &'a str,
    },
    /// Text written into the open region.
    RegionChunk {
        /// The field's name.
        field: &'a str,
        /// The text, borrowed from the parser's buffer where possible.
        text: Cow<'a, str>,
        /// `true` for structured parsers (`json`, `xml-inline`, `kv-lines`): the raw text only
        /// becomes the value when the region closes. `false` for `text`, `int`, `float`, `bool`.
        dirty: bool,
    },
    /// The region ended; `value` is what its content parser (and transform) made of it.
    RegionClose {
        /// The field's name.
        field: &'a str,
        /// The region's value (before `join`/`repeats` combine it into the message).
        value: Value,
    },
    /// (Lenient streams only.) A part of the output that did not parse: left out of the message
    /// and kept here with its text, where it is, and why.
    Malformed(Box<Malformed>),
}

impl Event<'_> {
    /// The field this event is about.
    pub fn field(&self) -> &str {
        match self {
            Event::RegionOpen { field }
            | Event::RegionChunk { field, .. }
            | Event::RegionClose { field, .. } => field,
            Event::Malformed(m) => m.field.as_deref().unwrap_or(""),
        }
    }

    /// The reference's dict form.
    ///
    /// ```
    /// use chatparse_runtime::stream::Event;
    /// let e = Event::RegionChunk { field: "content", text: "Hi".into(), dirty: false };
    /// assert_eq!(
    ///     e.to_json(),
    ///     chatparse_runtime::json!({"type": "region_chunk", "field": "content", "text": "Hi", "dirty": false})
    /// );
    /// ```
    pub fn to_json(&self) -> Value {
        match self {
            Event::RegionOpen { field } => json!({"type": "region_open", "field": field}),
            Event::RegionChunk { field, text, dirty } => json!({
                "type": "region_chunk", "field": field, "text": text, "dirty": dirty
            }),
            Event::RegionClose { field, value } => json!({
                "type": "region_close", "field": field, "value": value
            }),
            Event::Malformed(m) => {
                let mut out = json!({"type": "malformed"});
                if let (Some(out), Value::Object(fields)) = (out.as_object_mut(), m.to_json()) {
                    out.extend(fields);
                }
                out
            }
        }
    }
}

//! Streaming parses with the current Hugging Face format, the `response_template` (version 1).
//!
//! A response template names the message's *fields* (regions of the output), each opened and
//! closed by a literal or a Python pattern, with a content parser (`text`, `int`, `float`,
//! `bool`, `json` with dialect options, `xml-inline`, `kv-lines`) and options (`repeats`, `join`,
//! `optional`, `transform`, `transform_each`), plus `defaults` and a `start_anchor` that finds
//! where the assistant message begins in the prompt. The reference is
//! `transformers.utils.chat_parsing` in transformers 5.23.0 (`ResponseParser`, `parse_response`,
//! `load_response_template`); a [`StreamParser`] emits the same events (`region_open`,
//! `region_chunk` with `dirty`, `region_close` with the value) in the same order, and ends with the
//! same message.
//!
//! Feeding costs amortised O(chunk): the parser keeps a scan position and re-examines only the
//! text it holds back, which is at most a possible delimiter prefix at the end of the buffer (a
//! literal delimiter holds nothing back unless a prefix of it ends the buffer).
//!
//! ```
//! use chatparse_runtime::stream::{ResponseTemplate, StreamParser};
//!
//! let template = ResponseTemplate::from_json_str(r#"{
//!     "defaults": {"role": "assistant"},
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {
//!         "reasoning_content": {"open": "<think>", "close": "</think>"},
//!         "tool_calls": {
//!             "open_pattern": "\\s*<tool_call>", "close": "</tool_call>", "repeats": true,
//!             "content": "json", "transform": {"type": "function", "function": "{content}"}
//!         },
//!         "content": {"close_pattern": "\\s*<\\|im_end\\|>"}
//!     }
//! }"#)?;
//! let mut parser = StreamParser::new(&template, "<|im_start|>assistant\n")?;
//! let mut text = String::new();
//! for chunk in ["<think>Use the to", "ol.</think>Checking.\n<tool_", "call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"] {
//!     for event in parser.feed(chunk)? {
//!         if let chatparse_runtime::stream::Event::RegionChunk { field: "content", text: t, .. } = event {
//!             text.push_str(&t);
//!         }
//!     }
//! }
//! let (message, _) = parser.finish()?;
//! assert_eq!(text, "Checking.");
//! assert_eq!(message["tool_calls"][0]["function"]["name"], "f");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod content;
mod delim;
mod events;
mod fast;
mod parser;
mod template;
mod xregex;

pub use events::Event;
pub use parser::StreamParser;
pub use template::{is_response_template, ResponseTemplate};
pub use xregex::{
    region_shape, Delim, Header, HeaderAlt, NotStreamable, RegionShape, XRegexPlan,
    XRegexStreamParser,
};

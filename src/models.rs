//! A generated parser for every shipped schema: `chatparse::models::gpt_oss::parse(text)`.
//!
//! Behind the default `models` feature: an embedding crate that only needs its own
//! `response_parser!` (or the interpreter) turns it off with `default-features = false`.
//!
//! Each module is `response_parser!(pub mod NAME = "schemas/NAME.json")`; see the crate docs for
//! the generated API.
//!
//! ```
//! let message = chatparse::models::gpt_oss::parse(
//!     "<|channel|>final<|message|>Paris is the capital of France.<|return|>",
//! )?;
//! assert_eq!(message.content.as_deref(), Some("Paris is the capital of France."));
//! assert_eq!(chatparse::models::gpt_oss::Response::ROLE, "assistant");
//! # Ok::<(), chatparse::ParseError>(())
//! ```

include!(concat!(env!("OUT_DIR"), "/models.rs"));

/// A generated module's `parse_value`: one model output to the interpreter's JSON.
pub type ParseToJson = fn(&str) -> Result<chatparse::Value, crate::ParseError>;

/// A generated module's typed `parse`, with the message dropped (for benchmarks: the typed parse
/// without the conversion to JSON). Not API: behind the `unstable-bench-hooks` feature.
#[cfg(feature = "unstable-bench-hooks")]
#[doc(hidden)]
pub type ParseTyped = fn(&str) -> Result<(), crate::ParseError>;

/// Whether a generated module answers an output on its marker-free path (`parse_marker_free`).
/// Not API: behind the `unstable-bench-hooks` feature, for the tests.
#[cfg(feature = "unstable-bench-hooks")]
#[doc(hidden)]
pub type TakesMarkerFreePath = fn(&str) -> bool;

/// The generated parser of a shipped schema, returning JSON.
pub fn parse_value_fn(name: &str) -> Option<ParseToJson> {
    GENERATED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, parse)| *parse)
}

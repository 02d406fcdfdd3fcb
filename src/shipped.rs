//! The model schemas shipped in `schemas/`, embedded at build time.

use crate::runtime::Spec;
use crate::{Schema, SchemaError};

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// The names of the shipped schemas (file stems in `schemas/`), sorted.
///
/// ```
/// assert!(chatparse::shipped::names().any(|n| n == "gpt_oss"));
/// ```
pub fn names() -> impl Iterator<Item = &'static str> {
    SHIPPED.iter().map(|(name, _)| *name)
}

/// The JSON text of a shipped schema.
pub fn text(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Load a shipped schema for the interpreter. `None` if no schema has that name.
///
/// A family whose schema (pinned to the reference) would leave part of some outputs out of the
/// message without a word has its completeness check attached
/// ([`Schema::with_check`](crate::Schema::with_check)): `parse` fails there, `parse_lenient`
/// sets the part aside; `parse_schema_only` is the reference's behaviour.
///
/// # Panics
/// Never for the shipped schemas: a test checks that every one of them is valid.
pub fn schema(name: &str) -> Option<Schema> {
    text(name).map(|text| load(name, text).unwrap_or_else(|e| panic!("{e}")))
}

/// Load a shipped schema, returning the validation error instead of panicking.
pub fn try_schema(name: &str) -> Option<Result<Schema, SchemaError>> {
    text(name).map(|text| load(name, text))
}

/// The schema with the family's completeness check, where it has one (see
/// [`Check`](crate::runtime::schema::Check)).
fn load(name: &str, text: &str) -> Result<Schema, SchemaError> {
    let schema = Schema::from_json_str_named(text, &format!("schemas/{name}.json"))?;
    Ok(match crate::runtime::schema::Check::for_shipped(name) {
        Some(check) => schema.with_check(check),
        None => schema,
    })
}

/// The JSON text of a shipped schema's stream profile (`schemas/streaming/NAME.json`), for the
/// schemas whose root regex cuts the whole output (see
/// [`StreamProfile`](crate::runtime::stream::StreamProfile)).
pub fn stream_profile_text(name: &str) -> Option<&'static str> {
    STREAM_PROFILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// A shipped schema as a [`Spec`], with its stream profile attached when it has one: every
/// shipped name parses and streams through it. `None` if no schema has that name.
///
/// ```
/// let spec = chatparse::shipped::spec("qwen3").unwrap()?;
/// let mut stream = spec.stream(Some("<|im_start|>assistant\n<think>\n"), None)?;
/// let mut reasoning = String::new();
/// for chunk in ["Two plus", " two.</th", "ink>\n\n4"] {
///     stream.feed_with(chunk, &mut |event| {
///         if let chatparse::runtime::stream::Event::RegionChunk { field: "reasoning_content", text, .. } = event {
///             reasoning.push_str(&text);
///         }
///     })?;
/// }
/// let message = stream.finish_with(&mut |_| {})?;
/// assert_eq!(reasoning, "Two plus two.");
/// assert_eq!(message["content"], "4");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn spec(name: &str) -> Option<Result<Spec, SchemaError>> {
    let schema = try_schema(name)?;
    Some(schema.and_then(|schema| {
        let spec = Spec::from(schema);
        match stream_profile_text(name) {
            Some(profile) => {
                spec.with_stream_profile(profile, &format!("schemas/streaming/{name}.json"))
            }
            None => Ok(spec),
        }
    }))
}

//! The streaming `response_template` files shipped in `response_templates/`, embedded at build
//! time.
//!
//! ```
//! let template = chatparse::templates::template("qwen3").expect("shipped template");
//! let message = template.parse("<think>\nEasy.\n</think>\n\nParis.<|im_end|>", "")?;
//! assert_eq!(message["content"], "Paris.");
//! # Ok::<(), chatparse::ParseError>(())
//! ```
//!
//! Streaming (the README's example):
//!
//! ```
//! use chatparse::runtime::stream::{Event, StreamParser};
//!
//! let template = chatparse::templates::template("qwen3").unwrap();
//! let mut parser = StreamParser::new(&template, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")?;
//! # let mut answer = String::new();
//! for chunk in ["<think>\nGreet", "ing.\n</thi", "nk>\n\nHello!<|im_end|>"] {
//!     parser.feed_with(chunk, |event| {
//!         if let Event::RegionChunk { field: "content", text, .. } = event {
//!             print!("{text}");                        // the answer, as it arrives
//! #           answer.push_str(&text);
//!         }
//!     })?;
//! }
//! let (message, _last_events) = parser.finish()?;
//! assert_eq!(message["reasoning_content"], "Greeting.");
//! # assert_eq!(answer, "\n\nHello!");
//! # assert_eq!(message["content"], "Hello!");
//! # Ok::<(), chatparse::ParseError>(())
//! ```

use chatparse_runtime::stream::ResponseTemplate;

use crate::SchemaError;

/// `(name, JSON text)` of every shipped template, sorted by name.
const TEMPLATES: &[(&str, &str)] = &[
    ("gemma4", include_str!("../response_templates/gemma4.json")),
    ("qwen3", include_str!("../response_templates/qwen3.json")),
    (
        "qwen3_5",
        include_str!("../response_templates/qwen3_5.json"),
    ),
];

/// The names of the shipped templates (file stems in `response_templates/`), sorted.
///
/// ```
/// assert_eq!(chatparse::templates::names().collect::<Vec<_>>(), ["gemma4", "qwen3", "qwen3_5"]);
/// ```
pub fn names() -> impl Iterator<Item = &'static str> {
    TEMPLATES.iter().map(|(name, _)| *name)
}

/// The JSON text of a shipped template.
pub fn text(name: &str) -> Option<&'static str> {
    TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Load a shipped template. `None` if no template has that name.
///
/// # Panics
/// Never for the shipped templates: a test checks that every one of them is valid.
pub fn template(name: &str) -> Option<ResponseTemplate> {
    try_template(name).map(|loaded| loaded.unwrap_or_else(|e| panic!("{e}")))
}

/// Load a shipped template, returning the validation error instead of panicking.
pub fn try_template(name: &str) -> Option<Result<ResponseTemplate, SchemaError>> {
    text(name).map(|text| {
        ResponseTemplate::from_json_str_named(text, &format!("response_templates/{name}.json"))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_shipped_template_is_embedded_and_valid() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/response_templates");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(super::names().collect::<Vec<_>>(), on_disk);
        for name in super::names() {
            if let Some(Err(e)) = super::try_template(name) {
                panic!("{e}");
            }
        }
    }
}

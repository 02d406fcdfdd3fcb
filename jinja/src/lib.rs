#![warn(missing_docs)]
//! Chat templates (Jinja) for chatparse, re-exported by the `chatparse` crate as
//! `chatparse::render` and `chatparse::derive` (feature `render`), and used by the
//! `response_parser!(chat_template = "…")` macro at build time:
//!
//! - [`render`]: render a chat template as transformers' `apply_chat_template` does;
//! - [`derive`]: derive a response schema from a chat template by differential rendering.

pub mod derive;
pub mod render;

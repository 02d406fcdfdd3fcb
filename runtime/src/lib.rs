//! The runtime behind [`chatparse`](https://docs.rs/chatparse): the response-schema model and its
//! validator, the Python-regex dialect, Python's `json.loads`/`int()`/`float()` semantics, a JMESPath
//! evaluator, and the interpreter that runs a schema over a model's raw output.
//!
//! The reference semantics are those of `recursive_parse` in transformers 5.10.4: where it returns a
//! value, [`Schema::parse`] returns the identical JSON value; where it raises, it returns a
//! [`ParseError`]. Schema mistakes are caught when the schema is loaded ([`SchemaError`]), not when a
//! message happens to reach the broken node.
//!
//! ```
//! use chatparse_runtime::Schema;
//!
//! let schema = Schema::from_json_str(r#"{
//!     "type": "object",
//!     "properties": {
//!         "role": {"const": "assistant"},
//!         "thinking": {"type": "string", "x-regex": "<think>(.*?)</think>"},
//!         "content": {"type": "string", "x-regex": "</think>\\s*(.*)$"}
//!     }
//! }"#)?;
//! let message = schema.parse("<think>2+2?</think>\n4")?;
//! assert_eq!(message, serde_json::json!({"role": "assistant", "thinking": "2+2?", "content": "4"}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod diag;
mod error;
pub mod gemma4;
pub mod jmespath;
mod pointer;
pub mod py;
pub mod schema;
mod spec;
pub mod stream;
pub mod support;
pub mod template;

/// The Python-`re` engine (its own crate, `chatparse-pyre`).
pub use chatparse_pyre as pyre;

pub use error::{ParseError, ParseErrorKind, SchemaError, SchemaProblem};
pub use pointer::display_pointer;
pub use schema::Schema;
pub use spec::{Format, Spec, StreamSetupError};
pub use template::ResponseTemplate;

// Generated code names these through `chatparse::runtime::…`, so user crates need no direct
// dependency on them.
pub use once_cell;
pub use serde;
pub use serde_json;

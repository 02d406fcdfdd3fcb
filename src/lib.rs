//! # chatparse
//!
//! Turn a chat model's raw output — reasoning, tool calls and answer in one string — into a
//! structured message, driven by a Hugging Face *response schema* (a JSON Schema annotated with
//! `x-regex`, `x-regex-iterator`, `x-parser`, …).
//!
//! Results are identical to the reference implementation (`recursive_parse` in transformers
//! 5.10.4): the same JSON values, key order included, and an error wherever it raises.
//!
//! ```
//! let schema = chatparse::shipped::schema("qwen3").expect("shipped schema");
//! let message = schema.parse("<think>\nThe user greets me.\n</think>\n\nHello!")?;
//! assert_eq!(message["content"], "Hello!");
//! assert_eq!(message["reasoning_content"], "The user greets me.");
//! # Ok::<(), chatparse::ParseError>(())
//! ```
//!
//! Schemas only known at run time go through the interpreter:
//!
//! ```
//! let schema = chatparse::Schema::from_json_str(r#"{
//!     "type": "object",
//!     "properties": {"answer": {"type": "integer", "x-regex": "answer: (\\d+)"}}
//! }"#)?;
//! assert_eq!(schema.parse("so the answer: 42")?, chatparse::json!({"answer": 42}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! x-regex schemas whose fields are literal-delimited regions stream (the README's example):
//!
//! ```
//! use chatparse::runtime::stream::{XRegexPlan, XRegexStreamParser};
//!
//! let plan = XRegexPlan::new(chatparse::shipped::schema("gpt_oss").unwrap())?;
//! let mut parser = XRegexStreamParser::new(&plan);
//! for chunk in ["<|channel|>final<|message|>Hel", "lo!<|return|>"] {
//!     for event in parser.feed(chunk)? {
//!         println!("{}", event.to_json());
//!     }
//! }
//! let (message, _) = parser.finish()?;
//! assert_eq!(message["content"], "Hello!");
//! // The others say why not.
//! let refusal = XRegexPlan::new(chatparse::shipped::schema("hermes").unwrap()).unwrap_err();
//! assert_eq!(refusal.pointer, "/x-regex");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Cargo features: `models` (default) compiles a generated parser for every shipped schema
//! (`chatparse::models::NAME`); a crate that embeds only its own `response_parser!` or runs the
//! interpreter turns it off with `default-features = false` and compiles none of them.
//! `unstable-bench-hooks` exposes hooks for benchmarks and tests; it is not API.

/// The README's example of the one streaming interface (`Spec` + `MessageStream`), as a doctest:
///
/// ```
/// use chatparse::runtime::{stream::{Event, MessageStream}, Spec};
///
/// let spec = Spec::from_json_str(chatparse::templates::text("qwen3").unwrap())?;
/// let mut stream = spec.stream(Some("<|im_start|>assistant\n"), None)?;
/// let mut answer = String::new();
/// for chunk in ["<think>\nHm.\n</thi", "nk>\n\nHello!<|im_end|>"] {
///     stream.feed_with(chunk, &mut |event| {
///         if let Event::RegionChunk { field: "content", text, .. } = event {
///             answer.push_str(&text);
///         }
///     })?;
/// }
/// let message = stream.finish_with(&mut |_| {})?;
/// assert_eq!(message["reasoning_content"], "Hm.");
/// assert_eq!(answer.trim_start(), "Hello!"); // the chunks carry the text as written
/// assert_eq!(message["content"], "Hello!");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(doctest)]
pub struct ReadmeStreamingInterface;

/// The README's example of the OpenAI message conversion, as a doctest:
///
/// ```
/// use chatparse::runtime::openai::{to_message, CounterIds, Options};
///
/// let raw = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kimi_k2/tool_call.txt"))?;
/// let parsed = chatparse::shipped::schema("kimi_k2").unwrap().parse(&raw)?;
/// let message = to_message(&parsed, Some(&raw), &Options::default(), &mut CounterIds::default());
/// assert_eq!(message["tool_calls"][0]["id"], "functions.fetch_url:0");
/// assert_eq!(message["tool_calls"][0]["function"]["arguments"],
///            r#"{"url": "https://news.ycombinator.com/", "max_chars": 5000}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(doctest)]
pub struct ReadmeOpenAiMessage;

/// The README's example of rendering a chat template, as a doctest:
///
/// ```
/// use chatparse::render::ChatTemplate;
/// use chatparse::{json, Map};
///
/// let template = ChatTemplate::new(
///     "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
///      {% if add_generation_prompt %}<|assistant|>{% endif %}",
/// )?; // compiled once; apply is &self
/// let mut extra = Map::new();
/// extra.insert("bos_token".into(), json!("<s>"));
/// let messages = [json!({"role": "user", "content": "Hi"})];
/// let prompt = template.apply(&messages, None, true, &extra)?;
/// assert_eq!(prompt, "<s><|user|>Hi\n<|assistant|>");
/// # Ok::<(), chatparse::render::RenderError>(())
/// ```
#[cfg(all(doctest, feature = "render"))]
pub struct ReadmeRenderChatTemplate;

/// The README's example of grammars for constrained decoding, as a doctest:
///
/// ```
/// use chatparse::grammar::{GrammarSpec, Options, ToolChoice};
/// let tools = chatparse::json!([{"type": "function", "function": {"name": "get_weather",
///     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]);
/// let spec = GrammarSpec::new("qwen3", &tools, &Options { tool_choice: ToolChoice::Required, parallel: false })?;
/// let gbnf: String = spec.gbnf();
/// let lark: String = spec.lark();
/// let xgrammar: chatparse::Value = spec.structural_tag();
/// let llama_cpp: chatparse::Value = spec.llama_cpp(); // {grammar, grammar_lazy, grammar_triggers, preserved_tokens}
/// let prompt_text: String = spec.format_instruction();
/// assert!(gbnf.contains("get_weather") && lark.contains("get_weather"));
/// assert_eq!(xgrammar["format"]["type"], "grammar"); // the whole output: required, one call
/// assert_eq!(llama_cpp["grammar_lazy"], false);
/// assert!(prompt_text.contains("<tool_call>"));
/// # Ok::<(), chatparse::grammar::GrammarError>(())
/// ```
#[cfg(doctest)]
pub struct ReadmeGrammar;

// Generated code names the runtime as `::chatparse::runtime`, also inside this crate.
extern crate self as chatparse;

/// Not public API: tests and benches compile a file's JMESPath expressions with it.
#[doc(hidden)]
pub use chatparse_macros::__compiled_jmespath_table;
pub use chatparse_macros::response_parser;
pub use chatparse_runtime::{
    ParseError, ParseErrorKind, Position, Schema, SchemaError, SchemaProblem,
};

/// The runtime crate: schema model, Python-regex dialect, interpreter and support code.
pub use chatparse_runtime as runtime;
pub use chatparse_runtime::json;
/// chatparse's JSON value (ordered keys, exact big integers): see [`runtime::value`].
pub use chatparse_runtime::value;
pub use chatparse_runtime::value::{JsonObject, Map, Number, Value};

/// Derive a response schema from a chat template (crate `chatparse-jinja`).
#[cfg(feature = "render")]
pub use chatparse_jinja::derive;
pub mod grammar;
#[cfg(feature = "models")]
pub mod models;
pub mod parsers;
/// Render chat templates as transformers does (crate `chatparse-jinja`).
#[cfg(feature = "render")]
pub use chatparse_jinja::render;
pub mod shipped;
pub mod templates;

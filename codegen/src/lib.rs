//! Code generation for `chatparse`: from a validated response schema (the IR of
//! `chatparse-runtime`) to the Rust items of a typed, allocation-light parser; and, for a
//! streaming `response_template`, a module over the runtime's stream parser ([`generate_template`]).
//!
//! Generation is a plain function from IR to [`TokenStream`]: the `response_parser!` macro is a
//! thin shell over [`generate`], and tests snapshot its output without running the compiler.
//!
//! The generated code runs the same [`__private`](chatparse_runtime::__private) steps as the
//! interpreter, in the same order, with every regex compiled once in a `static`; what it adds is
//! static dispatch, typed output (structs named after the schema, string fields borrowed from the
//! input where analysis proves they are slices of it) and a `Serialize` impl that writes exactly
//! the interpreter's JSON.

mod generator;
pub mod jmespath;
mod names;
mod template;
mod types;

use chatparse_runtime::Schema;
use proc_macro2::{Ident, TokenStream};

/// How to emit one parser module.
#[derive(Debug, Clone)]
pub struct Options {
    /// The module's name (`gpt_oss`).
    pub module: Ident,
    /// Its visibility, e.g. `pub` or `pub(crate)`.
    pub visibility: TokenStream,
    /// The schema file as the expansion should `include_str!` it (absolute, so that editing the
    /// file rebuilds the crate); `None` embeds the text as a literal instead.
    pub include_path: Option<String>,
    /// The schema's name for documentation (`schemas/gpt_oss.json`).
    pub source_name: String,
    /// The path under which generated code reaches the runtime, normally `::chatparse::runtime`.
    pub runtime: TokenStream,
}

/// Generate the parser module for a validated schema whose JSON text is `schema_text`.
///
/// ```
/// let text = r#"{"type": "object", "properties": {"content": {"type": "string"}}}"#;
/// let schema = chatparse_runtime::Schema::from_json_str(text).unwrap();
/// let options = chatparse_codegen::Options {
///     module: proc_macro2::Ident::new("demo", proc_macro2::Span::call_site()),
///     visibility: quote::quote!(pub),
///     include_path: None,
///     source_name: "demo.json".into(),
///     runtime: quote::quote!(::chatparse::runtime),
/// };
/// let tokens = chatparse_codegen::generate(&schema, text, &options).to_string();
/// assert!(tokens.contains("pub struct Response"));
/// ```
pub fn generate(schema: &Schema, schema_text: &str, options: &Options) -> TokenStream {
    generator::Generator::new(options).module(schema, schema_text)
}

/// [`generate`], plus streaming for an x-regex schema that can stream (check it with
/// [`XRegexPlan::check`](chatparse_runtime::stream::XRegexPlan::check) first: the generated code
/// builds the plan with an `expect`). The module also has `pub type StreamParser`
/// (an [`XRegexStreamParser`](chatparse_runtime::stream::XRegexStreamParser) over the embedded
/// schema), `stream_plan()` and `stream()`.
///
/// ```
/// let text = r#"{"type": "object", "properties": {
///     "content": {"type": "string", "x-regex": "<a>(.*?)(?:</a>|$)"}}}"#;
/// let schema = chatparse_runtime::Schema::from_json_str(text).unwrap();
/// chatparse_runtime::stream::XRegexPlan::check(&schema).unwrap();
/// let options = chatparse_codegen::Options {
///     module: proc_macro2::Ident::new("demo", proc_macro2::Span::call_site()),
///     visibility: quote::quote!(pub),
///     include_path: None,
///     source_name: "demo.json".into(),
///     runtime: quote::quote!(::chatparse::runtime),
/// };
/// let tokens = chatparse_codegen::generate_streaming(&schema, text, &options).to_string();
/// assert!(tokens.contains("pub fn stream"));
/// ```
pub fn generate_streaming(schema: &Schema, schema_text: &str, options: &Options) -> TokenStream {
    let rt = &options.runtime;
    let source_name = &options.source_name;
    let stream_doc = format!(
        " Start streaming a model output through `{source_name}`: `feed` chunks as they arrive, \
         then `finish` (the message equals [`parse_value`] of the whole output)."
    );
    let extra = quote::quote! {
        /// The streaming parser of this schema (its fields are literal-delimited regions).
        pub type StreamParser = #rt::stream::XRegexStreamParser<'static>;

        static STREAM_PLAN: Lazy<#rt::stream::XRegexPlan> = Lazy::new(|| {
            let schema = #rt::Schema::from_json_str_named(SCHEMA, #source_name)
                .expect("schema validated when the parser was generated");
            #rt::stream::XRegexPlan::new(schema)
                .expect("streaming checked when the parser was generated")
        });

        /// The streaming plan (checked at build time, built on first use).
        pub fn stream_plan() -> &'static #rt::stream::XRegexPlan {
            &STREAM_PLAN
        }

        #[doc = #stream_doc]
        pub fn stream() -> StreamParser {
            #rt::stream::XRegexStreamParser::new(&STREAM_PLAN)
        }
    };
    generator::Generator::new(options).module_with(schema, schema_text, extra)
}

/// Generate the streaming module for a validated `response_template` whose JSON text is
/// `template_text` (check it with
/// [`ResponseTemplate::from_json_str_named`](chatparse_runtime::stream::ResponseTemplate::from_json_str_named)
/// first: the generated code loads it with an `expect`).
///
/// The module has `pub const TEMPLATE: &str`, `template()`, `parse(text, prefix)`,
/// `parse_with_tools`, `stream(prefix)` and `stream_with_tools`.
///
/// ```
/// let text = r#"{"start_anchor": "A:", "fields": {"content": {}}}"#;
/// chatparse_runtime::stream::ResponseTemplate::from_json_str(text).unwrap();
/// let options = chatparse_codegen::Options {
///     module: proc_macro2::Ident::new("demo", proc_macro2::Span::call_site()),
///     visibility: quote::quote!(pub),
///     include_path: None,
///     source_name: "demo.json".into(),
///     runtime: quote::quote!(::chatparse::runtime),
/// };
/// let tokens = chatparse_codegen::generate_template(text, &options).to_string();
/// assert!(tokens.contains("pub fn stream"));
/// ```
pub fn generate_template(template_text: &str, options: &Options) -> TokenStream {
    template::module(template_text, options)
}

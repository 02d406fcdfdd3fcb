//! Code generation for `chatparse`: from a validated response schema (the IR of
//! `chatparse-runtime`) to the Rust items of a typed, allocation-light parser; and, for a
//! streaming `response_template`, a module over the runtime's stream parser ([`generate_template`]).
//!
//! Generation is a plain function from IR to [`TokenStream`], in two steps: a plan of every schema
//! node (its Rust type, absent/null handling, borrowing, the content it can receive, the statics
//! and imports it needs), then emission from the plan alone. Tests snapshot the output without
//! running the compiler.
//!
//! The `response_parser!` macro is a thin shell over [`expand`]: reading the file, telling an
//! x-regex schema from a `response_template`, validating and generating (or reporting problems
//! as `compile_error!`s) all happen here.
//!
//! The generated code runs the same [`__private`](chatparse_runtime::__private) steps as the
//! interpreter, in the same order, with every regex compiled once in a `static`; what it adds is
//! static dispatch, typed output (structs named after the schema, string fields borrowed from the
//! input where analysis proves they are slices of it) and a `Serialize` impl that writes exactly
//! the interpreter's JSON.

mod generator;
pub mod jmespath;
mod marker_free;
mod names;
mod plan;
mod template;
mod types;

use std::path::Path;

use chatparse_runtime::Schema;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

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
    let plan = plan::ModulePlan::new(schema, false, &options.runtime);
    generator::module(&plan, options, schema_text, TokenStream::new())
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
    let plan = plan::ModulePlan::new(schema, true, &options.runtime);
    generator::module(&plan, options, schema_text, extra)
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

/// One `response_parser!` invocation, as the macro parsed it.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The schema's path as written, relative to the invoking crate's root.
    pub path: String,
    /// `… mod name = "…"`: the module's name; `None` names it after the file stem.
    pub module: Option<Ident>,
    /// The module's visibility (`pub` when not written).
    pub visibility: TokenStream,
    /// `, stream`: also generate streaming (x-regex schemas whose fields can stream).
    pub stream: bool,
    /// `chat_template = "…"`: the path is a chat template (Jinja); the parser is generated from
    /// the response schema derived from it (`chatparse_jinja::derive`), and a template from
    /// which no faithful parser can be derived is a compile error with the reason.
    pub chat_template: bool,
}

/// The whole of `response_parser!` after its input is parsed: read the file under
/// `manifest_dir`, tell a `response_template` from an x-regex schema, validate it with the
/// runtime's validator, and generate its module. Every problem becomes a `compile_error!` at
/// `span` naming the file, the JSON pointer, the problem and a fix.
///
/// ```
/// let invocation = chatparse_codegen::Invocation {
///     path: "schemas/gpt_oss.json".into(),
///     module: None,
///     visibility: quote::quote!(pub),
///     stream: false,
///     chat_template: false,
/// };
/// let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
/// let tokens = chatparse_codegen::expand(&invocation, &root, proc_macro2::Span::call_site());
/// assert!(tokens.to_string().contains("mod gpt_oss"));
/// ```
pub fn expand(invocation: &Invocation, manifest_dir: &Path, span: Span) -> TokenStream {
    match try_expand(invocation, manifest_dir) {
        Ok(tokens) => tokens,
        Err(messages) => messages
            .iter()
            .map(|m| quote_spanned!(span=> ::core::compile_error!(#m);))
            .collect(),
    }
}

/// The response schema derived from a chat template's text, as JSON text.
#[cfg(feature = "chat-template")]
fn derive_from_template(text: &str, relative: &str) -> Result<String, Vec<String>> {
    let derived = chatparse_jinja::derive::derive(text).map_err(|e| {
        vec![format!(
            "{relative}: cannot derive a response parser from this chat template: {e}\n  fix: \
             write a response schema for it and give its path instead (`chatparse derive` \
             shows what the derivation finds)"
        )]
    })?;
    Ok(derived.spec.to_string())
}

/// Without the `chat-template` feature, minijinja is not compiled into the macro: an embedding
/// crate that only uses schemas does not pay for it.
#[cfg(not(feature = "chat-template"))]
fn derive_from_template(_text: &str, relative: &str) -> Result<String, Vec<String>> {
    Err(vec![format!(
        "{relative}: `chat_template = …` derives the parser from a chat template, which needs \
         chatparse's `render` feature\n  fix: enable it (`chatparse = {{ features = [\"render\"] }}`; \
         it is a default feature), or give a response schema's path"
    )])
}

fn try_expand(invocation: &Invocation, manifest_dir: &Path) -> Result<TokenStream, Vec<String>> {
    let relative = &invocation.path;
    let path = manifest_dir.join(relative);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            _ => e.to_string(),
        };
        vec![format!(
            "{relative}: cannot read the schema file: {why}\n  fix: the path is relative to the \
             invoking crate's root (the directory of its Cargo.toml)"
        )]
    })?;
    let text = if invocation.chat_template {
        derive_from_template(&text, relative)?
    } else {
        text
    };
    let problems = |e: chatparse_runtime::SchemaError| {
        e.problems
            .iter()
            .map(|p| format!("{relative}: {p}"))
            .collect::<Vec<_>>()
    };
    // One load, as for the CLI and the library: `Spec` tells the formats apart and validates.
    let spec = chatparse_runtime::Spec::from_json_str_named(&text, relative).map_err(problems)?;
    let Some(schema) = spec.schema() else {
        let options = options(invocation, &path)?;
        return Ok(generate_template(&text, &options));
    };
    if invocation.stream {
        spec.streamable().map_err(|refusal| {
            let pointer = chatparse_runtime::display_pointer(&refusal.pointer);
            vec![format!(
                "{relative}: {pointer}: this schema cannot stream: {}\n  fix: drop the `stream` \
                 option, or use a schema (or response_template) whose fields are literal-delimited \
                 regions",
                refusal.reason
            )]
        })?;
        let options = options(invocation, &path)?;
        return Ok(generate_streaming(schema, &text, &options));
    }
    let options = options(invocation, &path)?;
    Ok(generate(schema, &text, &options))
}

/// The generation options of an invocation: the module named explicitly or after the file stem.
fn options(invocation: &Invocation, path: &Path) -> Result<Options, Vec<String>> {
    let relative = &invocation.path;
    let module = match &invocation.module {
        Some(module) => module.clone(),
        None => {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            syn::parse_str::<Ident>(&stem.replace('-', "_"))
                .map(|i| Ident::new(&i.to_string(), Span::call_site()))
                .map_err(|_| {
                    vec![format!(
                        "{relative}: the file stem `{stem}` is not a Rust identifier; name the \
                         module: response_parser!(pub mod my_name = \"{relative}\")"
                    )]
                })?
        }
    };
    Ok(Options {
        module,
        visibility: invocation.visibility.clone(),
        include_path: Some(path.display().to_string()),
        source_name: relative.clone(),
        runtime: quote!(::chatparse::runtime),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `expand` on `path` (relative to the workspace root), as text.
    fn expand_text(path: &str, module: Option<&str>, stream: bool) -> String {
        let invocation = Invocation {
            path: path.to_owned(),
            module: module.map(|m| Ident::new(m, Span::call_site())),
            visibility: quote!(pub(crate)),
            stream,
            chat_template: false,
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        expand(&invocation, &root, Span::call_site()).to_string()
    }

    #[test]
    fn one_entry_point_tells_the_formats_apart() {
        let schema = expand_text("schemas/qwen3.json", None, false);
        assert!(schema.contains("pub (crate) mod qwen3"), "{schema}");
        assert!(schema.contains("fn parse_value") && !schema.contains("fn stream"));
        let streaming = expand_text("schemas/gpt_oss.json", Some("g"), true);
        assert!(streaming.contains("mod g") && streaming.contains("fn stream_plan"));
        let template = expand_text("response_templates/qwen3.json", None, false);
        assert!(template.contains("pub const TEMPLATE"), "{template}");
    }

    #[test]
    fn problems_are_compile_errors_naming_the_file_and_a_fix() {
        let missing = expand_text("schemas/nope.json", None, false);
        assert!(missing.contains("compile_error"), "{missing}");
        assert!(
            missing.contains("schemas/nope.json: cannot read the schema file: no such file"),
            "{missing}"
        );
        let stem = expand_text("tests/compile_fail/schemas/2024-bot.json", None, false);
        assert!(
            stem.contains("the file stem `2024-bot` is not a Rust identifier"),
            "{stem}"
        );
        let named = expand_text(
            "tests/compile_fail/schemas/2024-bot.json",
            Some("bot"),
            false,
        );
        assert!(!named.contains("compile_error"), "{named}");
        let refused = expand_text("tests/compile_fail/schemas/not_streamable.json", None, true);
        assert!(
            refused.contains("/properties/content/x-regex: this schema cannot stream"),
            "{refused}"
        );
        let several = expand_text(
            "tests/compile_fail/schemas/several_problems.json",
            None,
            false,
        );
        assert!(several.matches("compile_error").count() > 1, "{several}");
    }
}

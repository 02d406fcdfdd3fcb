//! `response_parser!`: a thin shell over [`chatparse_codegen::expand`] (as pest_derive's body is
//! one call into pest_generator). This crate only parses the invocation; reading the file,
//! telling the formats apart, validating, generating and reporting problems are ordinary,
//! unit-tested code in the codegen and runtime crates.

use std::path::Path;

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token, Visibility};

/// `"path.json"` or `pub(crate) mod name = "path.json"`, then options (`, stream`).
struct Invocation {
    visibility: Visibility,
    module: Option<Ident>,
    path: LitStr,
    /// `stream`: also generate a streaming parser (x-regex schemas that can stream).
    stream: bool,
    /// `chat_template = "….jinja"`: derive the spec from a chat template.
    chat_template: bool,
}

/// `chat_template = "…"` or a plain path literal.
fn parse_path(input: ParseStream) -> syn::Result<(LitStr, bool)> {
    if input.peek(Ident) {
        let key: Ident = input.parse()?;
        if key != "chat_template" {
            return Err(syn::Error::new(
                key.span(),
                format!("unknown argument `{key}`: expected a path literal or `chat_template = \"….jinja\"`"),
            ));
        }
        input.parse::<Token![=]>()?;
        return Ok((input.parse()?, true));
    }
    Ok((input.parse()?, false))
}

/// `, stream` after the path (a trailing comma is allowed).
fn parse_options(input: ParseStream) -> syn::Result<bool> {
    let mut stream = false;
    while input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        let option: Ident = input.parse()?;
        if option == "stream" {
            stream = true;
        } else {
            return Err(syn::Error::new(
                option.span(),
                format!("unknown option `{option}`: the only option is `stream`"),
            ));
        }
    }
    Ok(stream)
}

impl Parse for Invocation {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) || (input.peek(Ident) && input.peek2(Token![=])) {
            let (path, chat_template) = parse_path(input)?;
            let stream = parse_options(input)?;
            return Ok(Self {
                visibility: syn::parse_quote!(pub),
                module: None,
                path,
                stream,
                chat_template,
            });
        }
        let forms = "expected `response_parser!(\"path.json\")` or \
                     `response_parser!(pub mod name = \"path.json\")`";
        let with_forms = |e: syn::Error| syn::Error::new(e.span(), format!("{e}: {forms}"));
        let visibility = input.parse().map_err(with_forms)?;
        input.parse::<Token![mod]>().map_err(with_forms)?;
        let module = input.parse().map_err(with_forms)?;
        input.parse::<Token![=]>().map_err(with_forms)?;
        let (path, chat_template) = parse_path(input).map_err(with_forms)?;
        let stream = parse_options(input)?;
        Ok(Self {
            visibility,
            module: Some(module),
            path,
            stream,
            chat_template,
        })
    }
}

/// The invoking crate's root: `response_parser!` paths are relative to it.
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned())
}

/// Generate a typed parser module from a Hugging Face response schema.
///
/// When the file is a `response_template` (the streaming format: `fields`, `start_anchor`, no
/// `type`/`properties`), the module embeds the template (`pub const TEMPLATE: &str`) and offers
/// `parse(text, prefix)`, `stream(prefix)` (a `StreamParser<'static>`) and their `_with_tools`
/// forms.
///
/// `response_parser!("schemas/gpt_oss.json", stream)` also generates streaming for an x-regex
/// schema whose fields are literal-delimited regions (`StreamParser`, `stream()`, `stream_plan()`:
/// the runtime's `XRegexStreamParser` over the embedded schema); for a schema that cannot stream,
/// `stream` is a compile error naming the JSON pointer and the reason. Templates always stream.
///
/// `response_parser!("schemas/gpt_oss.json")` expands to `pub mod gpt_oss { … }` (named after the
/// file stem); `response_parser!(pub(crate) mod my_name = "path.json")` names it explicitly.
/// Paths are relative to the invoking crate's `CARGO_MANIFEST_DIR`. A schema problem is a compile
/// error naming the file, the JSON pointer, the problem and a fix.
///
/// `response_parser!(chat_template = "templates/model.jinja")` (or `pub mod name = chat_template
/// = "…"`) derives the response schema from a chat template at build time (`chatparse derive`'s
/// differential rendering) and generates its parser; a template from which no faithful parser
/// can be derived is a compile error with the reason.
#[proc_macro]
pub fn response_parser(input: TokenStream) -> TokenStream {
    let Invocation {
        visibility,
        module,
        path,
        stream,
        chat_template,
    } = syn::parse_macro_input!(input as Invocation);
    let invocation = chatparse_codegen::Invocation {
        path: path.value(),
        module,
        visibility: quote!(#visibility),
        stream,
        chat_template,
    };
    chatparse_codegen::expand(&invocation, Path::new(&manifest_dir()), path.span()).into()
}

/// Test and bench support, not an API: `__compiled_jmespath_table!("path.json")` reads a JSON
/// file (relative to the invoking crate's root), collects every string under an `"expression"`
/// key anywhere in it, and expands to a `&'static [(&str, CompiledFn)]` with one entry per
/// distinct expression that `chatparse-codegen` compiles to Rust (the rest are left out).
#[doc(hidden)]
#[proc_macro]
pub fn __compiled_jmespath_table(input: TokenStream) -> TokenStream {
    let path = syn::parse_macro_input!(input as LitStr);
    let rt = quote!(::chatparse::runtime);
    match chatparse_codegen::jmespath::compiled_table(
        &path.value(),
        Path::new(&manifest_dir()),
        &rt,
    ) {
        Ok(tokens) => tokens.into(),
        Err(message) => {
            let span = path.span();
            quote::quote_spanned!(span=> ::core::compile_error!(#message)).into()
        }
    }
}

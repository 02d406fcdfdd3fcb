//! Grammars for constrained decoding: what a model family may write — free text and reasoning,
//! then tool calls in the family's own syntax, whose names are the given tools and whose
//! arguments follow each tool's JSON schema — and nothing else.
//!
//! A [`GrammarSpec`] is built from a shipped family name and the tools (the OpenAI/HF tool list);
//! it holds a format-neutral grammar (named rules over literals, character classes, sequences,
//! alternatives, repetitions and *text avoiding some strings*) and writes it out as
//! [GBNF](GrammarSpec::gbnf) (llama.cpp; with [lazy triggers](GrammarSpec::llama_cpp)),
//! [Lark](GrammarSpec::lark) (llguidance) or an xgrammar
//! [structural tag](GrammarSpec::structural_tag), and describes the expected shape in words
//! ([`format_instruction`](GrammarSpec::format_instruction)).
//!
//! The grammar covers the output from the first generated character up to, not including, the
//! end-of-turn token (`<|im_end|>`, `<|eot_id|>`, `</s>`, `<|call|>`, …), which the inference
//! server's stop handling owns.
//!
//! ```
//! use chatparse::grammar::{GrammarSpec, Options, ToolChoice};
//! let tools = chatparse::json!([{"type": "function", "function": {"name": "get_weather",
//!     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
//!                    "required": ["city"]}}}]);
//! let spec = GrammarSpec::new("hermes", &tools, &Options::default())?;
//! let gbnf = spec.gbnf();
//! assert!(gbnf.starts_with("root ::= "));
//! assert!(gbnf.contains(r#"{\"name\": \"get_weather\", \"arguments\": "#));
//! assert!(spec.lark().contains("%llguidance"));
//! let required = GrammarSpec::new("hermes", &tools, &Options {
//!     tool_choice: ToolChoice::Required, parallel: false })?;
//! assert!(required.format_instruction().contains("<tool_call>"));
//! # Ok::<(), chatparse::grammar::GrammarError>(())
//! ```
//!
//! ## The JSON-Schema subset
//!
//! `type` (one or a list of `string`, `integer`, `number`, `boolean`, `null`, `object`,
//! `array`), `enum`, `const`, `properties` (written in the schema's order, each optional unless
//! `required`), `required`, `additionalProperties` (`false` or absent with `properties`: no
//! other keys; `true` or a schema: more keys of that schema after the listed ones; absent without
//! `properties`: any object), `items`, `minItems`/`maxItems` of 0 or 1, `anyOf`/`oneOf` (any of
//! them), `nullable`, and `$ref` to `#/…` inside the tool's parameters. A schema without `type`
//! is any value. Other keywords (`pattern`, `format`, `minimum`, `minLength`, …) are not
//! enforced: the grammar accepts more than such a schema.

mod formats;
mod gbnf;
pub mod ir;
mod lark;
mod structural_tag;
mod text;
mod values;

use std::fmt;

use crate::Value;

pub use formats::{family_names, has_family};
pub use values::Dialect;
pub(crate) use values::ValueRules;

/// GBNF of IR rules (for the other shapes of this crate, e.g. [`crate::parsers`]).
pub(crate) fn emit_gbnf(rules: &ir::Rules, root: &str) -> String {
    gbnf::emit(rules, root)
}

/// Lark of IR rules.
pub(crate) fn emit_lark(rules: &ir::Rules, root: &str) -> String {
    lark::emit(rules, root)
}

/// Which calls the grammar allows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// Text, or calls, or both (the default).
    #[default]
    Auto,
    /// At least one call.
    Required,
    /// No call: text (and reasoning) only.
    None,
    /// Calls of this tool only, at least one.
    Named(String),
}

impl std::str::FromStr for ToolChoice {
    type Err = GrammarError;

    fn from_str(s: &str) -> Result<Self, GrammarError> {
        Ok(match s {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            "" => return Err(GrammarError("an empty tool choice".into())),
            name => ToolChoice::Named(name.to_owned()),
        })
    }
}

/// Options of a grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Which calls are allowed.
    pub tool_choice: ToolChoice,
    /// Whether more than one call may come (`--no-parallel` turns it off).
    pub parallel: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tool_choice: ToolChoice::Auto,
            parallel: true,
        }
    }
}

/// Why no grammar could be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarError(pub String);

impl fmt::Display for GrammarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GrammarError {}

/// One tool: its name and the JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// The function name.
    pub name: String,
    /// The `parameters` JSON schema (an object schema; `{}` when the tool gives none).
    pub parameters: Value,
}

/// Reads an OpenAI/HF tool list: `[{"type": "function", "function": {"name", "parameters"}}]`
/// (a bare `{"name", "parameters"}` is taken too).
pub fn read_tools(tools: &Value) -> Result<Vec<Tool>, GrammarError> {
    let Some(list) = tools.as_array() else {
        return Err(GrammarError("the tools must be a JSON array".into()));
    };
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let f = t.get("function").unwrap_or(t);
        let Some(name) = f.get("name").and_then(Value::as_str) else {
            return Err(GrammarError(format!("tools[{i}]: no function name")));
        };
        if out.iter().any(|x: &Tool| x.name == name) {
            return Err(GrammarError(format!("tools[{i}]: {name:?} is given twice")));
        }
        let parameters = f
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| crate::json!({"type": "object", "properties": {}}));
        out.push(Tool {
            name: name.to_owned(),
            parameters,
        });
    }
    Ok(out)
}

/// A family's grammar for a set of tools (see the module documentation).
#[derive(Debug, Clone)]
pub struct GrammarSpec {
    family: String,
    tools: Vec<Tool>,
    options: Options,
    built: formats::Built,
}

impl GrammarSpec {
    /// The grammar of shipped family `family` (a name of [`family_names`]) for `tools` (an
    /// OpenAI/HF tool list).
    pub fn new(family: &str, tools: &Value, options: &Options) -> Result<Self, GrammarError> {
        let tools = read_tools(tools)?;
        Self::with_tools(family, tools, options)
    }

    /// As [`new`](Self::new), with the tools already read.
    pub fn with_tools(
        family: &str,
        tools: Vec<Tool>,
        options: &Options,
    ) -> Result<Self, GrammarError> {
        if let ToolChoice::Named(name) = &options.tool_choice {
            if !tools.iter().any(|t| &t.name == name) {
                return Err(GrammarError(format!(
                    "tool choice {name:?} is not one of the tools"
                )));
            }
        }
        if tools.is_empty()
            && matches!(
                options.tool_choice,
                ToolChoice::Required | ToolChoice::Named(_)
            )
        {
            return Err(GrammarError(
                "a call is required, but no tools are given".into(),
            ));
        }
        let built = formats::build(family, &tools, options)?;
        Ok(GrammarSpec {
            family: family.to_owned(),
            tools,
            options: options.clone(),
            built,
        })
    }

    /// The family.
    pub fn family(&self) -> &str {
        &self.family
    }

    /// The tools.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The format-neutral rules (the start rule is `root`).
    pub fn rules(&self) -> &ir::Rules {
        &self.built.rules
    }

    /// The grammar in llama.cpp's GBNF (the whole output).
    pub fn gbnf(&self) -> String {
        gbnf::emit(&self.built.rules, "root")
    }

    /// The grammar in llguidance's Lark (the whole output).
    pub fn lark(&self) -> String {
        lark::emit(&self.built.rules, "root")
    }

    /// The grammar in llguidance's Lark for a tokenizer in which `special` (strings of the form
    /// `<…>`, e.g. [`special_tokens`](Self::special_tokens) that the model's tokenizer marks
    /// special) are special tokens: those are written as token references (`<|channel|>`), which
    /// match the token and not its text. Others are ignored.
    pub fn lark_with_special_tokens(&self, special: &[String]) -> String {
        lark::emit_with_special(&self.built.rules, "root", special)
    }

    /// The strings that start the calls part (a lazy grammar's triggers).
    pub fn triggers(&self) -> &[String] {
        &self.built.triggers
    }

    /// The end-of-turn tokens of the format: not part of the grammar (generation stops at them).
    pub fn end_tokens(&self) -> &[String] {
        &self.built.end_tokens
    }

    /// The special tokens of the format (markers a tokenizer keeps as one token; llama.cpp's
    /// `preserved_tokens`).
    pub fn special_tokens(&self) -> &[String] {
        &self.built.special
    }

    /// What llama.cpp's server takes for a lazy grammar: `grammar` (GBNF from the first trigger
    /// on; the whole output when a call is required), `grammar_lazy`, `grammar_triggers`
    /// (`{"type": "word", "value": …}`) and `preserved_tokens`.
    pub fn llama_cpp(&self) -> Value {
        let lazy = matches!(self.options.tool_choice, ToolChoice::Auto)
            && self.built.has_calls_root
            && !self.built.triggers.is_empty();
        let grammar = if lazy {
            gbnf::emit(&self.built.rules, "calls-root")
        } else {
            self.gbnf()
        };
        let triggers: Vec<Value> = if lazy {
            self.built
                .triggers
                .iter()
                .map(|t| crate::json!({"type": "word", "value": t}))
                .collect()
        } else {
            Vec::new()
        };
        crate::json!({
            "grammar": grammar,
            "grammar_lazy": lazy,
            "grammar_triggers": triggers,
            "preserved_tokens": self.built.special,
        })
    }

    /// xgrammar's structural tag (`{"type": "structural_tag", "format": …}`): under `auto` with
    /// parallel calls, for formats whose calls each start with the trigger, the calls as
    /// triggered tags over free text, each tag's content the arguments' JSON schema (or, for
    /// formats whose arguments are not JSON, a grammar); otherwise the whole-output GBNF as a
    /// `grammar` format (see `structural_tag.rs` for why not `at_least_one`/`stop_after_first`).
    pub fn structural_tag(&self) -> Value {
        structural_tag::emit(self)
    }

    /// A short prompt text describing the expected shape of the output.
    pub fn format_instruction(&self) -> String {
        formats::instruction(&self.family, &self.tools, &self.options)
    }

    pub(crate) fn built(&self) -> &formats::Built {
        &self.built
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tool names that differ only in punctuation get rules of their own.
    #[test]
    fn tools_with_similar_names_keep_their_own_arguments() {
        let tools = crate::json!([
            {"name": "a-b", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            {"name": "a_b", "parameters": {"type": "object", "properties": {"y": {"type": "boolean"}}}},
        ]);
        let spec = GrammarSpec::new("hermes", &tools, &Options::default()).unwrap();
        let gbnf = spec.gbnf();
        assert!(gbnf.contains(r#""\"x\"" ws ":" ws integer"#), "{gbnf}");
        assert!(
            gbnf.contains(r#""\"y\"" ws ":" ws ( "true" | "false" )"#),
            "{gbnf}"
        );
        assert!(gbnf.contains("args-a-b ::=") && gbnf.contains("args-a-b-2 ::="));
    }

    #[test]
    fn bad_tool_lists_and_choices_are_errors() {
        let tools = crate::json!([{"name": "f"}]);
        let named = Options {
            tool_choice: ToolChoice::Named("g".into()),
            parallel: true,
        };
        assert!(GrammarSpec::new("qwen3", &tools, &named).is_err());
        assert!(GrammarSpec::new("no_such_family", &tools, &Options::default()).is_err());
        assert!(GrammarSpec::new("qwen3", &crate::json!({}), &Options::default()).is_err());
        let required = Options {
            tool_choice: ToolChoice::Required,
            parallel: true,
        };
        assert!(GrammarSpec::new("qwen3", &crate::json!([]), &required).is_err());
        assert_eq!("none".parse::<ToolChoice>().unwrap(), ToolChoice::None);
    }
}

//! The current Hugging Face format, the `response_template` (version 1): its model (IR), loader,
//! streaming parser and content parsers.
//!
//! A response template names the message's *fields* (regions of the output), each opened and
//! closed by a literal or a Python pattern, with a content parser (`text`, `int`, `float`,
//! `bool`, `json` with dialect options, `xml-inline`, `kv-lines`) and options (`repeats`, `join`,
//! `optional`, `transform`, `transform_each`), plus `defaults` and a `start_anchor` that finds
//! where the assistant message begins in the prompt. The reference is
//! `transformers.utils.chat_parsing` in transformers 5.23.0 (`ResponseParser`, `parse_response`,
//! `load_response_template`); a [`StreamParser`] emits the same events (`region_open`,
//! `region_chunk` with `dirty`, `region_close` with the value) in the same order, and ends with the
//! same message. One difference: where the reference commits to a complete delimiter match while
//! a match starting earlier could still complete with more text, or to a `$` that matched before
//! the buffer's final newline (so that its result depends on the chunking), the [`StreamParser`]
//! holds the text until it is decided and ends with the one-shot result.
//!
//! Feeding costs amortised O(chunk): the parser keeps a scan position and re-examines only the
//! text it holds back, which is at most a possible delimiter prefix at the end of the buffer (a
//! literal delimiter holds nothing back unless a prefix of it ends the buffer).
//!
//! ```
//! use chatparse_runtime::template::{ResponseTemplate, StreamParser};
//!
//! let template = ResponseTemplate::from_json_str(r#"{
//!     "defaults": {"role": "assistant"},
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {
//!         "reasoning_content": {"open": "<think>", "close": "</think>"},
//!         "tool_calls": {
//!             "open_pattern": "\\s*<tool_call>", "close": "</tool_call>", "repeats": true,
//!             "content": "json", "transform": {"type": "function", "function": "{content}"}
//!         },
//!         "content": {"close_pattern": "\\s*<\\|im_end\\|>"}
//!     }
//! }"#)?;
//! let mut parser = StreamParser::new(&template, "<|im_start|>assistant\n")?;
//! let mut text = String::new();
//! for chunk in ["<think>Use the to", "ol.</think>Checking.\n<tool_", "call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"] {
//!     for event in parser.feed(chunk)? {
//!         if let chatparse_runtime::stream::Event::RegionChunk { field: "content", text: t, .. } = event {
//!             text.push_str(&t);
//!         }
//!     }
//! }
//! let (message, _) = parser.finish()?;
//! assert_eq!(text, "Checking.");
//! assert_eq!(message["tool_calls"][0]["function"]["name"], "f");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Loading
//!
//! The loader makes every check the reference (`load_response_template` in transformers 5.23.0)
//! makes when it loads a template, and more: unknown keys anywhere (with a "did you mean"),
//! `content_args` of every parser (the reference only fails on them when a region closes),
//! `repeats`/`optional` that are not booleans, transform placeholders that can never resolve,
//! and delimiter patterns that cannot be matched incrementally. Every problem is collected with
//! the JSON pointer of the offending node, as for x-regex schemas.

mod content;
pub(crate) mod delim;
mod parser;
mod resume;

pub use parser::StreamParser;

use crate::value::{Map, Value};

use self::delim::{Literals, Pattern};
use crate::diag::{closest, json_kind as kind, Diagnostics};
use crate::error::SchemaError;
use crate::pointer::child;
use crate::pyre::PyRegex;
use crate::stream::fast::{DelimFacts, StateFilter};

/// A validated `response_template` (version 1), ready to parse model output.
///
/// Load one with [`ResponseTemplate::from_json_str`] or [`ResponseTemplate::from_value`], then
/// parse a complete output with [`ResponseTemplate::parse`] or stream one through a
/// [`StreamParser`].
#[derive(Debug)]
pub struct ResponseTemplate {
    pub(crate) defaults: Map,
    pub(crate) fields: Vec<Field>,
    /// The field without `open`/`open_pattern` (the leftover sink), if any.
    pub(crate) implicit: Option<usize>,
    pub(crate) start_anchor: Anchor,
    /// The feed fast path's tests per parser state: index `i` inside explicit field `i`, index
    /// `fields.len()` in the implicit state (see [`crate::stream::fast`]).
    pub(crate) filters: Vec<Option<StateFilter>>,
    value: Value,
    source_name: String,
}

/// `start_anchor` (literals) or `start_anchor_pattern` (any Python pattern: it is only searched
/// in the complete prefix, never partially).
#[derive(Debug)]
pub(crate) enum Anchor {
    Literals(Literals),
    Pattern(Box<PyRegex>),
}

/// An `open`/`close` delimiter.
#[derive(Debug)]
pub(crate) enum Delim {
    Literals(Literals),
    Pattern(Box<Pattern>),
}

impl Delim {
    fn facts(&self) -> &DelimFacts {
        match self {
            Delim::Literals(l) => l.facts(),
            Delim::Pattern(p) => p.facts(),
        }
    }

    /// The leftmost start at or after `pos` where a match could still begin (or grow into an
    /// alternative the matcher prefers) once more text arrives.
    pub(crate) fn partial_start(&self, hay: &str, pos: usize) -> Option<usize> {
        match self {
            Delim::Literals(l) => l.partial_start(hay, pos),
            Delim::Pattern(p) => p.partial_start(hay, pos),
        }
    }
}

/// The fast-path filters of every parser state: each explicit field watches its close; the
/// implicit state watches every open and the implicit field's close.
fn state_filters(fields: &[Field], implicit: Option<usize>) -> Vec<Option<StateFilter>> {
    let mut filters: Vec<Option<StateFilter>> = fields
        .iter()
        .map(|f| StateFilter::new(f.close.as_ref().map(Delim::facts)))
        .collect();
    let implicit_close = implicit
        .and_then(|i| fields.get(i))
        .and_then(|f| f.close.as_ref());
    let watched = fields
        .iter()
        .filter_map(|f| f.open.as_ref())
        .chain(implicit_close)
        .map(Delim::facts);
    filters.push(StateFilter::new(watched));
    filters
}

/// One field (region) of the template.
#[derive(Debug)]
pub(crate) struct Field {
    pub name: String,
    /// `/fields/<name>`.
    pub pointer: String,
    pub open: Option<Delim>,
    pub close: Option<Delim>,
    pub content: ContentParser,
    pub repeats: bool,
    pub join: Option<String>,
    pub optional: bool,
    pub transform: Option<Transform>,
    pub transform_each: bool,
}

/// A content parser with its arguments.
#[derive(Debug)]
pub(crate) enum ContentParser {
    Text { strip: bool },
    Int { strip: bool },
    Float { strip: bool },
    Bool { strip: bool },
    Json(JsonArgs),
    XmlInline(Box<XmlArgs>),
    KvLines(KvArgs),
}

#[derive(Debug)]
pub(crate) struct JsonArgs {
    pub strip: bool,
    pub unquoted_keys: bool,
    /// `re.escape(open) + "(.*?)" + re.escape(close)` for each `string_delims` pair.
    pub string_delims: Vec<PyRegex>,
    pub allow_non_json: bool,
}

#[derive(Debug)]
pub(crate) struct XmlArgs {
    pub tag_pattern: PyRegex,
    pub key_group: usize,
    pub value_group: Option<usize>,
    pub value_parser: Option<Box<ContentParser>>,
    pub merge_duplicates: bool,
}

#[derive(Debug)]
pub(crate) struct KvArgs {
    pub strip: bool,
    pub line_sep: String,
    pub kv_sep: String,
    pub value_parser: Option<Box<ContentParser>>,
}

impl ContentParser {
    /// Whether chunks stream verbatim (`dirty: false`): the reference's `STREAMABLE_PARSERS`.
    pub(crate) fn streamable(&self) -> bool {
        matches!(
            self,
            ContentParser::Text { .. }
                | ContentParser::Int { .. }
                | ContentParser::Float { .. }
                | ContentParser::Bool { .. }
        )
    }
}

/// A compiled `transform` template.
#[derive(Debug, Clone)]
pub(crate) enum Transform {
    Map(Vec<(String, Transform)>),
    List(Vec<Transform>),
    /// Any value that is not a whole-string placeholder, kept as is.
    Literal(Value),
    /// `"{root.key1.key2}"`.
    Placeholder {
        root: String,
        keys: Vec<String>,
        /// `root.key1.key2`, for messages.
        path: String,
    },
}

const CONTENT_PARSERS: &[&str] = &[
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
];
const TOP_KEYS: &[&str] = &[
    "version",
    "defaults",
    "fields",
    "start_anchor",
    "start_anchor_pattern",
];
const FIELD_KEYS: &[&str] = &[
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

/// Whether `value` has the shape of a `response_template` rather than an x-regex response schema:
/// a JSON object with `fields`, `start_anchor` or `start_anchor_pattern`, and none of the JSON
/// Schema keywords `type`, `properties`, `x-regex`.
///
/// ```
/// use chatparse_runtime::stream::is_response_template;
/// use chatparse_runtime::json;
/// assert!(is_response_template(&json!({"start_anchor": "<|im_start|>assistant\n", "fields": {"content": {}}})));
/// assert!(!is_response_template(&json!({"type": "object", "properties": {}})));
/// ```
pub fn is_response_template(value: &Value) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    ["fields", "start_anchor", "start_anchor_pattern"]
        .iter()
        .any(|k| map.contains_key(*k))
        && !["type", "properties", "x-regex"]
            .iter()
            .any(|k| map.contains_key(*k))
}

impl ResponseTemplate {
    /// Load a template from JSON text (parsed like Python's `json.loads`).
    ///
    /// ```
    /// use chatparse_runtime::stream::ResponseTemplate;
    /// let t = ResponseTemplate::from_json_str(r#"{"start_anchor": "A:", "fields": {"answer": {}}}"#)?;
    /// assert_eq!(t.parse("42", "")?, chatparse_runtime::json!({"answer": "42"}));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<Self, SchemaError> {
        Self::from_json_str_named(text, "<template>")
    }

    /// Load a template from JSON text, naming its source (a file name) in error messages.
    pub fn from_json_str_named(text: &str, source_name: &str) -> Result<Self, SchemaError> {
        crate::schema::check_text_size(text, source_name)?;
        let value = crate::py::json::loads(text)
            .map_err(|e| crate::diag::invalid_json(source_name, e, "a response_template"))?;
        Self::from_value_named(value, source_name)
    }

    /// Load a template from a [`Value`], validating all of it.
    ///
    /// ```
    /// use chatparse_runtime::stream::ResponseTemplate;
    /// use chatparse_runtime::json;
    /// let err = ResponseTemplate::from_value(json!({
    ///     "start_anchor": "A:",
    ///     "fields": {"a": {"opne": "<a>"}, "b": {"content": "yaml"}}
    /// })).unwrap_err();
    /// let pointers: Vec<_> = err.problems.iter().map(|p| p.pointer.as_str()).collect();
    /// assert_eq!(pointers, ["/fields/a/opne", "/fields/b/content", "/fields/b"]);
    /// assert!(err.problems[0].fix.contains("open"));
    /// ```
    pub fn from_value(value: Value) -> Result<Self, SchemaError> {
        Self::from_value_named(value, "<template>")
    }

    /// Load a template from a [`Value`], naming its source in error messages.
    pub fn from_value_named(value: Value, source_name: &str) -> Result<Self, SchemaError> {
        let mut loader = Loader::default();
        let loaded = loader.template(&value);
        let Loaded {
            defaults,
            fields,
            implicit,
            start_anchor,
        } = loader.diag.check(loaded, source_name)?;
        Ok(ResponseTemplate {
            defaults,
            filters: state_filters(&fields, implicit),
            fields,
            implicit,
            start_anchor,
            value,
            source_name: source_name.to_owned(),
        })
    }

    /// The template as loaded.
    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// The name given when loading (a file name, or `<template>`).
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The field names, in template order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }

    /// `truncate_past_last_anchor`: the prefix after the last start-anchor match (all of it when
    /// there is none).
    pub(crate) fn truncate_past_last_anchor<'p>(&self, prefix: &'p str) -> &'p str {
        let last_end = match &self.start_anchor {
            Anchor::Literals(l) => l.last_match_end(prefix),
            // A matcher failure (a backtracking limit) counts as no match.
            Anchor::Pattern(p) => p
                .find_iter(prefix)
                .map_while(Result::ok)
                .last()
                .map(|m| m.end()),
        };
        match last_end {
            Some(end) => prefix.get(end..).unwrap_or(""),
            None => prefix,
        }
    }
}

/// What the loader builds, before the state filters are derived from it.
struct Loaded {
    defaults: Map,
    fields: Vec<Field>,
    implicit: Option<usize>,
    start_anchor: Anchor,
}

#[derive(Default)]
struct Loader {
    diag: Diagnostics,
}

/// What `_compile_anchor` accepted.
enum AnchorSpec {
    Literals(Literals),
    Pattern(Box<PyRegex>, String),
}

impl Loader {
    fn unknown_keys(&mut self, map: &Map, allowed: &[&str], base: &str, what: &str) {
        for key in map.keys() {
            if allowed.contains(&key.as_str()) {
                continue;
            }
            let fix = match closest(key, allowed) {
                Some(c) => format!("did you mean `{c}`?"),
                None => format!("remove it; {what} accepts {}", allowed.join(", ")),
            };
            self.diag.error(
                child(base, key),
                format!("unknown key `{key}` in {what}"),
                fix,
            );
        }
    }

    fn template(&mut self, value: &Value) -> Option<Loaded> {
        let Some(map) = value.as_object() else {
            self.diag.error(
                String::new(),
                format!(
                    "a response_template must be a JSON object, got {}",
                    kind(value)
                ),
                "write the template as {\"start_anchor\": …, \"fields\": {…}}",
            );
            return None;
        };
        if let Some(version) = map.get("version") {
            let is_one = version.as_f64() == Some(1.0) && version.is_number();
            if !is_one {
                self.diag.error(
                    "/version".to_owned(),
                    format!("unsupported response_template version {version}"),
                    "use \"version\": 1 (or leave it out)",
                );
            }
        }
        self.unknown_keys(map, TOP_KEYS, "", "a response_template");
        let defaults = match map.get("defaults") {
            None => Map::new(),
            Some(Value::Object(d)) => d.clone(),
            Some(other) => {
                self.diag.error(
                    "/defaults".to_owned(),
                    format!("`defaults` must be an object, got {}", kind(other)),
                    "give the message's constant keys as an object, e.g. {\"role\": \"assistant\"}",
                );
                Map::new()
            }
        };
        let mut fields = Vec::new();
        // (pointer, name) of every field without an open delimiter.
        let mut implicit: Vec<(String, String)> = Vec::new();
        match map.get("fields") {
            None => self.diag.error(
                String::new(),
                "the response_template has no `fields`",
                "add \"fields\": {\"content\": {}} with one entry per message field",
            ),
            Some(Value::Object(raw)) if !raw.is_empty() => {
                for (name, spec) in raw {
                    let pointer = child("/fields", name);
                    if let Some(obj) = spec.as_object() {
                        if !obj.contains_key("open") && !obj.contains_key("open_pattern") {
                            implicit.push((pointer.clone(), name.clone()));
                        }
                    }
                    if let Some(field) = self.field(name, spec, pointer) {
                        fields.push(field);
                    }
                }
            }
            Some(other) => self.diag.error(
                "/fields".to_owned(),
                format!(
                    "`fields` must be a non-empty object, got {}",
                    describe(other)
                ),
                "map each message field name to its spec, e.g. {\"content\": {}}",
            ),
        }
        if implicit.len() > 1 {
            let names: Vec<&str> = implicit.iter().map(|(_, n)| n.as_str()).collect();
            let list = names.join(", ");
            for (pointer, _) in implicit.iter().skip(1) {
                self.diag.error(
                    pointer.clone(),
                    format!(
                        "at most one field may omit `open`/`open_pattern` (that field collects \
                         the text outside every other field); found {list}"
                    ),
                    "give this field an `open` or `open_pattern`",
                );
            }
        }
        let start_anchor = match self.anchor_spec(
            map,
            "start_anchor",
            "start_anchor_pattern",
            "",
            "the response_template",
        ) {
            Some(Some(AnchorSpec::Literals(l))) => Some(Anchor::Literals(l)),
            Some(Some(AnchorSpec::Pattern(p, _))) => Some(Anchor::Pattern(p)),
            Some(None) => {
                self.diag.error(
                    String::new(),
                    "the response_template defines neither `start_anchor` nor `start_anchor_pattern`",
                    "add \"start_anchor\": the text the chat template writes where the assistant \
                     message begins, e.g. \"<|im_start|>assistant\\n\"",
                );
                None
            }
            None => None,
        };
        let implicit_index = fields.iter().position(|f| f.open.is_none());
        Some(Loaded {
            defaults,
            fields,
            implicit: implicit_index,
            start_anchor: start_anchor?,
        })
    }

    /// `_compile_anchor`: `Some(None)` when neither key is present, `None` after a problem.
    fn anchor_spec(
        &mut self,
        map: &Map,
        literal_key: &str,
        pattern_key: &str,
        base: &str,
        scope: &str,
    ) -> Option<Option<AnchorSpec>> {
        let literal_ptr = child(base, literal_key);
        let pattern_ptr = child(base, pattern_key);
        if map.contains_key(literal_key) && map.contains_key(pattern_key) {
            self.diag.error(
                pattern_ptr,
                format!("{scope} gives both `{literal_key}` and `{pattern_key}`"),
                format!("keep one: `{literal_key}` for literal text, `{pattern_key}` for a regex"),
            );
            return None;
        }
        if let Some(raw) = map.get(literal_key) {
            let literals: Vec<String> = match raw {
                Value::String(s) => {
                    if s.is_empty() {
                        self.diag.error(
                            literal_ptr,
                            format!("`{literal_key}` cannot be the empty string"),
                            "give the literal text of the delimiter",
                        );
                        return None;
                    }
                    vec![s.clone()]
                }
                Value::Array(items) => {
                    if items.is_empty() {
                        self.diag.error(
                            literal_ptr,
                            format!("`{literal_key}` list must contain at least one literal"),
                            "list the delimiter's spellings, or give one string",
                        );
                        return None;
                    }
                    let mut out = Vec::new();
                    let mut ok = true;
                    for (i, item) in items.iter().enumerate() {
                        match item {
                            Value::String(s) if !s.is_empty() => out.push(s.clone()),
                            Value::String(_) => {
                                ok = false;
                                self.diag.error(
                                    child(&literal_ptr, &i.to_string()),
                                    format!("`{literal_key}` literals cannot be empty strings"),
                                    "remove the empty string",
                                );
                            }
                            other => {
                                ok = false;
                                self.diag.error(
                                    child(&literal_ptr, &i.to_string()),
                                    format!(
                                        "`{literal_key}` list must contain only strings, got {}",
                                        kind(other)
                                    ),
                                    "write each delimiter as a string",
                                );
                            }
                        }
                    }
                    if !ok {
                        return None;
                    }
                    out
                }
                other => {
                    self.diag.error(
                        literal_ptr,
                        format!(
                            "`{literal_key}` must be a string or a list of strings, got {}",
                            kind(other)
                        ),
                        format!(
                            "write the delimiter as a string (or use `{pattern_key}` for a regex)"
                        ),
                    );
                    return None;
                }
            };
            return Some(Some(AnchorSpec::Literals(Literals::new(literals))));
        }
        if let Some(raw) = map.get(pattern_key) {
            let Some(pattern) = raw.as_str() else {
                self.diag.error(
                    pattern_ptr,
                    format!(
                        "`{pattern_key}` must be a string (a Python regex), got {}",
                        kind(raw)
                    ),
                    "write the pattern as a string",
                );
                return None;
            };
            return match PyRegex::new(pattern) {
                Ok(re) => Some(Some(AnchorSpec::Pattern(Box::new(re), pattern_ptr))),
                Err(e) => {
                    self.diag.error(
                        pattern_ptr,
                        format!("invalid {pattern_key} regex: {}", regex_message(&e)),
                        e.fix,
                    );
                    None
                }
            };
        }
        Some(None)
    }

    fn delim(&mut self, spec: Option<Option<AnchorSpec>>) -> Result<Option<Delim>, ()> {
        match spec {
            None => Err(()),
            Some(None) => Ok(None),
            Some(Some(AnchorSpec::Literals(l))) => Ok(Some(Delim::Literals(l))),
            Some(Some(AnchorSpec::Pattern(re, pointer))) => match Pattern::new(*re) {
                Ok(p) => Ok(Some(Delim::Pattern(Box::new(p)))),
                Err(refused) => {
                    self.diag.error(pointer, refused.message, refused.fix);
                    Err(())
                }
            },
        }
    }

    fn bool_key(&mut self, map: &Map, key: &str, base: &str, default: bool) -> bool {
        match map.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.diag.error(
                    child(base, key),
                    format!("`{key}` must be true or false, got {}", kind(other)),
                    format!("write \"{key}\": true or false"),
                );
                default
            }
        }
    }

    fn field(&mut self, name: &str, spec: &Value, pointer: String) -> Option<Field> {
        let Some(map) = spec.as_object() else {
            self.diag.error(
                pointer,
                format!("field `{name}` must be an object, got {}", kind(spec)),
                "describe the field as an object, e.g. {\"open\": \"<think>\", \"close\": \"</think>\"}",
            );
            return None;
        };
        let problems_before = self.diag.mark();
        self.unknown_keys(map, FIELD_KEYS, &pointer, "a field");
        let content_ptr = child(&pointer, "content");
        let content_name = match map.get("content") {
            None => Some("text"),
            Some(Value::String(s)) if CONTENT_PARSERS.contains(&s.as_str()) => Some(s.as_str()),
            Some(other) => {
                let fix = match other.as_str().and_then(|s| closest(s, CONTENT_PARSERS)) {
                    Some(c) => format!("did you mean \"{c}\"?"),
                    None => format!("use one of {}", CONTENT_PARSERS.join(", ")),
                };
                self.diag
                    .error(content_ptr, format!("unknown content parser {other}"), fix);
                None
            }
        };
        let args_ptr = child(&pointer, "content_args");
        let content = content_name.and_then(|c| {
            let args = map.get("content_args");
            self.content_parser(c, args, &args_ptr, &pointer)
        });
        let open_spec = self.anchor_spec(
            map,
            "open",
            "open_pattern",
            &pointer,
            &format!("field `{name}`"),
        );
        let open_names = pattern_names(&open_spec);
        let open = self.delim(open_spec);
        let close_spec = self.anchor_spec(
            map,
            "close",
            "close_pattern",
            &pointer,
            &format!("field `{name}`"),
        );
        let close_names = pattern_names(&close_spec);
        let close = self.delim(close_spec);
        let repeats = self.bool_key(map, "repeats", &pointer, false);
        let optional = self.bool_key(map, "optional", &pointer, true);
        let join = match map.get("join") {
            None => None,
            Some(Value::String(s)) => {
                if !repeats {
                    self.diag.error(
                        child(&pointer, "join"),
                        "`join` requires 'repeats': true",
                        "add \"repeats\": true, or remove `join`",
                    );
                }
                Some(s.clone())
            }
            Some(other) => {
                self.diag.error(
                    child(&pointer, "join"),
                    format!("`join` must be a string, got {}", kind(other)),
                    "give the separator as a string, e.g. \"\\n\"",
                );
                None
            }
        };
        let transform_each = match map.get("transform_each") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.diag.error(
                    child(&pointer, "transform_each"),
                    format!(
                        "`transform_each` must be true or false, got {}",
                        kind(other)
                    ),
                    "write \"transform_each\": true or false",
                );
                false
            }
        };
        let transform = match map.get("transform") {
            Some(t) => {
                let tptr = child(&pointer, "transform");
                let compiled = self.transform(t, &tptr);
                if !transform_each {
                    let mut scope = vec!["content".to_owned()];
                    scope.extend(open_names.iter().cloned());
                    check_roots(&compiled, &scope, &tptr, &mut self.diag);
                }
                Some(compiled)
            }
            None => {
                if transform_each {
                    self.diag.error(
                        child(&pointer, "transform_each"),
                        "`transform_each` is set but the field has no `transform`",
                        "add a `transform`, or remove `transform_each`",
                    );
                }
                for (names, key) in [
                    (&open_names, "open_pattern"),
                    (&close_names, "close_pattern"),
                ] {
                    if !names.is_empty() {
                        self.diag.error(
                            child(&pointer, key),
                            format!(
                                "{key} declares named group(s) {}, but the field has no `transform`; \
                                 named captures only reach the message through a transform",
                                names.join(", ")
                            ),
                            "add a `transform` that uses the captures (e.g. {\"name\": \"{name}\", \
                             \"arguments\": \"{content}\"}), or make the groups non-capturing (?:…)",
                        );
                    }
                }
                None
            }
        };
        if !self.diag.clean_since(problems_before) {
            return None;
        }
        Some(Field {
            name: name.to_owned(),
            pointer,
            open: open.ok()?,
            close: close.ok()?,
            content: content?,
            repeats,
            join,
            optional,
            transform,
            transform_each,
        })
    }

    fn content_parser(
        &mut self,
        name: &str,
        args: Option<&Value>,
        args_ptr: &str,
        field_ptr: &str,
    ) -> Option<ContentParser> {
        let empty = Map::new();
        let map = match args {
            None => &empty,
            Some(Value::Object(m)) => m,
            Some(other) => {
                self.diag.error(
                    args_ptr.to_owned(),
                    format!("`content_args` must be an object, got {}", kind(other)),
                    "give the parser's options as an object",
                );
                return None;
            }
        };
        let before = self.diag.mark();
        let allowed: &[&str] = match name {
            "json" => &["strip", "unquoted_keys", "string_delims", "allow_non_json"],
            "xml-inline" => &["tag_pattern", "value_parser", "merge_duplicates"],
            "kv-lines" => &["strip", "line_sep", "kv_sep", "value_parser"],
            _ => &["strip"],
        };
        self.unknown_keys(
            map,
            allowed,
            args_ptr,
            &format!("the `{name}` parser's content_args"),
        );
        let strip = self.bool_key(map, "strip", args_ptr, true);
        let parser = match name {
            "text" => ContentParser::Text { strip },
            "int" => ContentParser::Int { strip },
            "float" => ContentParser::Float { strip },
            "bool" => ContentParser::Bool { strip },
            "json" => {
                let unquoted_keys = self.bool_key(map, "unquoted_keys", args_ptr, false);
                let allow_non_json = self.bool_key(map, "allow_non_json", args_ptr, false);
                let string_delims = self.string_delims(map.get("string_delims"), args_ptr);
                ContentParser::Json(JsonArgs {
                    strip,
                    unquoted_keys,
                    string_delims,
                    allow_non_json,
                })
            }
            "xml-inline" => {
                let merge_duplicates = self.bool_key(map, "merge_duplicates", args_ptr, false);
                let value_parser = self.value_parser(map.get("value_parser"), args_ptr);
                let tag_ptr = child(args_ptr, "tag_pattern");
                let tag_pattern = match map.get("tag_pattern") {
                    None => {
                        let at = if args.is_some() { args_ptr } else { field_ptr };
                        self.diag.error(
                            at.to_owned(),
                            "the `xml-inline` parser needs content_args.tag_pattern",
                            "add \"content_args\": {\"tag_pattern\": \"<(?P<key>\\\\w+)>(?P<value>.*?)</(?P=key)>\"}",
                        );
                        None
                    }
                    Some(Value::String(p)) => match PyRegex::new(p) {
                        Ok(re) => Some(re),
                        Err(e) => {
                            self.diag.error(
                                tag_ptr.clone(),
                                format!("invalid tag_pattern regex: {}", regex_message(&e)),
                                e.fix,
                            );
                            None
                        }
                    },
                    Some(other) => {
                        self.diag.error(
                            tag_ptr.clone(),
                            format!(
                                "`tag_pattern` must be a string (a Python regex), got {}",
                                kind(other)
                            ),
                            "write the pattern as a string",
                        );
                        None
                    }
                };
                let tag_pattern = tag_pattern?;
                let Some(key_group) = tag_pattern.group_index("key") else {
                    self.diag.error(
                        tag_ptr,
                        "tag_pattern has no named group `key`",
                        "name the group holding the tag name (?P<key>…), and the one holding its \
                         value (?P<value>…)",
                    );
                    return None;
                };
                let value_group = tag_pattern.group_index("value");
                ContentParser::XmlInline(Box::new(XmlArgs {
                    tag_pattern,
                    key_group,
                    value_group,
                    value_parser: value_parser.ok()?,
                    merge_duplicates,
                }))
            }
            _ => {
                let line_sep = self.separator(map, "line_sep", "\n", args_ptr);
                let kv_sep = self.separator(map, "kv_sep", ":", args_ptr);
                let value_parser = self.value_parser(map.get("value_parser"), args_ptr);
                ContentParser::KvLines(KvArgs {
                    strip,
                    line_sep,
                    kv_sep,
                    value_parser: value_parser.ok()?,
                })
            }
        };
        self.diag.clean_since(before).then_some(parser)
    }

    fn separator(&mut self, map: &Map, key: &str, default: &str, base: &str) -> String {
        match map.get(key) {
            None => default.to_owned(),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(other) => {
                self.diag.error(
                    child(base, key),
                    format!(
                        "`{key}` must be a non-empty string, got {}",
                        describe(other)
                    ),
                    format!("give the separator as a string (default {default:?})"),
                );
                default.to_owned()
            }
        }
    }

    fn string_delims(&mut self, raw: Option<&Value>, base: &str) -> Vec<PyRegex> {
        let ptr = child(base, "string_delims");
        let Some(raw) = raw else {
            return Vec::new();
        };
        let Some(items) = raw.as_array() else {
            self.diag.error(
                ptr,
                format!(
                    "`string_delims` must be a list of [open, close] pairs, got {}",
                    kind(raw)
                ),
                "write e.g. [[\"<|\\\"|>\", \"<|\\\"|>\"]]",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let pair = item.as_array().and_then(|p| match p.as_slice() {
                [Value::String(a), Value::String(b)] => Some((a.as_str(), b.as_str())),
                _ => None,
            });
            let Some((open, close)) = pair else {
                self.diag.error(
                    child(&ptr, &i.to_string()),
                    "each `string_delims` entry must be a pair of strings [open, close]",
                    "write the pair as [\"open\", \"close\"]",
                );
                continue;
            };
            let pattern = format!("{}(.*?){}", py_escape(open), py_escape(close));
            match PyRegex::new(&pattern) {
                Ok(re) => out.push(re),
                Err(e) => self.diag.error(
                    child(&ptr, &i.to_string()),
                    format!(
                        "the string delimiters do not compile: {}",
                        regex_message(&e)
                    ),
                    e.fix,
                ),
            }
        }
        out
    }

    /// `value_parser`: `{"name": parser, "args": {...}}`; `Err` after a problem.
    fn value_parser(
        &mut self,
        raw: Option<&Value>,
        base: &str,
    ) -> Result<Option<Box<ContentParser>>, ()> {
        let Some(raw) = raw else {
            return Ok(None);
        };
        let ptr = child(base, "value_parser");
        let Some(map) = raw.as_object() else {
            self.diag.error(
                ptr,
                format!("`value_parser` must be an object, got {}", kind(raw)),
                "write {\"name\": \"json\", \"args\": {…}}",
            );
            return Err(());
        };
        let before = self.diag.mark();
        self.unknown_keys(map, &["name", "args"], &ptr, "a value_parser");
        let name = match map.get("name") {
            None => Some("text"),
            Some(Value::String(s)) if CONTENT_PARSERS.contains(&s.as_str()) => Some(s.as_str()),
            Some(other) => {
                let fix = match other.as_str().and_then(|s| closest(s, CONTENT_PARSERS)) {
                    Some(c) => format!("did you mean \"{c}\"?"),
                    None => format!("use one of {}", CONTENT_PARSERS.join(", ")),
                };
                self.diag.error(
                    child(&ptr, "name"),
                    format!("unknown content parser {other}"),
                    fix,
                );
                None
            }
        };
        let args_ptr = child(&ptr, "args");
        let parser = name.and_then(|n| self.content_parser(n, map.get("args"), &args_ptr, &ptr));
        match parser {
            Some(p) if self.diag.clean_since(before) => Ok(Some(Box::new(p))),
            _ => Err(()),
        }
    }

    fn transform(&mut self, t: &Value, pointer: &str) -> Transform {
        match t {
            Value::Object(map) => Transform::Map(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.transform(v, &child(pointer, k))))
                    .collect(),
            ),
            Value::Array(items) => Transform::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.transform(v, &child(pointer, &i.to_string())))
                    .collect(),
            ),
            Value::String(s) => {
                if let Some(path) = whole_placeholder(s) {
                    let mut parts = path.split('.').map(str::to_owned);
                    let root = parts.next().unwrap_or_default();
                    return Transform::Placeholder {
                        root,
                        keys: parts.collect(),
                        path: path.to_owned(),
                    };
                }
                if contains_placeholder(s) {
                    self.diag.error(
                        pointer.to_owned(),
                        format!(
                            "transform string {} mixes a {{placeholder}} with literal text",
                            crate::py::unicode::repr(s)
                        ),
                        "use a whole-string placeholder (e.g. \"{content}\") or a plain literal; \
                         string interpolation is not supported",
                    );
                }
                Transform::Literal(t.clone())
            }
            other => Transform::Literal(other.clone()),
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "an empty object".to_owned(),
        Value::String(s) if s.is_empty() => "the empty string".to_owned(),
        other => kind(other).to_owned(),
    }
}

fn pattern_names(spec: &Option<Option<AnchorSpec>>) -> Vec<String> {
    match spec {
        Some(Some(AnchorSpec::Pattern(re, _))) => {
            re.group_names().iter().flatten().cloned().collect()
        }
        _ => Vec::new(),
    }
}

/// Placeholders whose root is neither `content` nor a named group of `open_pattern` fail every
/// time the field closes (the reference raises `KeyError`).
fn check_roots(t: &Transform, scope: &[String], pointer: &str, problems: &mut Diagnostics) {
    match t {
        Transform::Map(entries) => {
            for (k, v) in entries {
                check_roots(v, scope, &child(pointer, k), problems);
            }
        }
        Transform::List(items) => {
            for (i, v) in items.iter().enumerate() {
                check_roots(v, scope, &child(pointer, &i.to_string()), problems);
            }
        }
        Transform::Placeholder { root, path, .. } if !scope.contains(root) => {
            problems.error(
                pointer,
                format!(
                    "transform placeholder {{{path}}} names `{root}`, which is neither `content` \
                     nor a named group of open_pattern"
                ),
                format!(
                    "use one of {}, or a literal",
                    scope
                        .iter()
                        .map(|s| format!("{{{s}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        _ => {}
    }
}

/// The regex message the way the reference words it (`… at position N`).
fn regex_message(e: &crate::pyre::RegexError) -> String {
    match e.offset {
        Some(pos) => format!("{} at position {pos}", e.message),
        None => e.message.clone(),
    }
}

/// Length of a `\w+` run at the start of `s` (Python's `\w`), in bytes.
fn word_run(s: &str) -> usize {
    s.char_indices()
        .find(|&(_, c)| !crate::py::unicode::is_word(c))
        .map_or(s.len(), |(i, _)| i)
}

/// Matches `\w+(?:\.\w+)*\}` at the start of `s`; returns the byte length of the dotted path.
fn placeholder_path(s: &str) -> Option<usize> {
    let mut i = word_run(s);
    if i == 0 {
        return None;
    }
    loop {
        let rest = s.get(i..)?;
        if let Some(after_dot) = rest.strip_prefix('.') {
            let run = word_run(after_dot);
            if run > 0 {
                i += 1 + run;
                continue;
            }
        }
        return rest.starts_with('}').then_some(i);
    }
}

/// `_PLACEHOLDER.fullmatch(s)`: the dotted path inside `{…}`.
pub(crate) fn whole_placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('{')?;
    let len = placeholder_path(inner)?;
    (inner.len() == len + 1).then(|| inner.get(..len)).flatten()
}

/// `_PLACEHOLDER.search(s)`.
fn contains_placeholder(s: &str) -> bool {
    s.match_indices('{')
        .any(|(i, _)| s.get(i + 1..).and_then(placeholder_path).is_some())
}

/// Python's `re.escape` (any escaping that makes every character literal will do).
fn py_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if c.is_ascii() && !c.is_ascii_alphanumeric() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn problems(v: Value) -> Vec<(String, String)> {
        match ResponseTemplate::from_value(v) {
            Ok(_) => Vec::new(),
            Err(e) => e
                .problems
                .into_iter()
                .map(|p| (p.pointer, p.message))
                .collect(),
        }
    }

    #[test]
    fn placeholders() {
        assert_eq!(whole_placeholder("{content}"), Some("content"));
        assert_eq!(whole_placeholder("{a.b.c}"), Some("a.b.c"));
        assert_eq!(whole_placeholder("{a.}"), None);
        assert_eq!(whole_placeholder("{a}b"), None);
        assert_eq!(whole_placeholder("{}"), None);
        assert_eq!(whole_placeholder("{é}"), Some("é"));
        assert!(contains_placeholder("x{a}"));
        assert!(contains_placeholder("{{a}}"));
        assert!(!contains_placeholder("{a b}"));
        assert!(!contains_placeholder("{a.}"));
    }

    #[test]
    fn extra_checks() {
        let base = |field: Value| json!({"start_anchor": "x", "fields": {"f": field}});
        assert_eq!(
            problems(base(
                json!({"content": "json", "content_args": {"unquoted": true}})
            ))[0]
                .0,
            "/fields/f/content_args/unquoted"
        );
        assert_eq!(
            problems(base(json!({"content": "xml-inline"})))[0].0,
            "/fields/f"
        );
        assert_eq!(
            problems(base(
                json!({"content": "xml-inline", "content_args": {"tag_pattern": "<(\\w+)>"}})
            ))[0]
                .0,
            "/fields/f/content_args/tag_pattern"
        );
        assert_eq!(
            problems(base(
                json!({"content": "kv-lines", "content_args": {"kv_sep": ""}})
            ))[0]
                .0,
            "/fields/f/content_args/kv_sep"
        );
        assert_eq!(
            problems(base(
                json!({"content": "kv-lines", "content_args": {"value_parser": {"name": "jsn"}}})
            ))[0]
                .0,
            "/fields/f/content_args/value_parser/name"
        );
        assert_eq!(
            problems(base(json!({"repeats": 1})))[0].0,
            "/fields/f/repeats"
        );
        assert_eq!(
            problems(base(json!({"transform": {"a": "{nme}"}})))[0].0,
            "/fields/f/transform/a"
        );
        assert_eq!(
            problems(base(
                json!({"open_pattern": "<(?P<n>\\w+)>", "transform": {"a": "{n}", "b": "{content.x}"}})
            )),
            Vec::<(String, String)>::new()
        );
        assert_eq!(
            problems(base(json!({"open_pattern": "(?<=a)b"})))[0].0,
            "/fields/f/open_pattern"
        );
        assert_eq!(
            problems(json!({"version": true, "start_anchor": "x", "fields": {"f": {}}}))[0].0,
            "/version"
        );
        assert!(
            problems(json!({"version": 1.0, "start_anchor": "x", "fields": {"f": {}}})).is_empty()
        );
    }
}

//! The OpenAI chat-completion shape: a parsed message (of either spec format, any shipped
//! family) as an OpenAI assistant `message`, and a [`MessageStream`](crate::stream::MessageStream)
//! as `choices[0]` chunk objects ([`DeltaStream`]).
//!
//! The families name their fields differently (`thinking`, `reasoning_content`, `reasoning`), and
//! their tool calls come as `{type, function: {name, arguments}}` (optionally with the model's own
//! `id`: Kimi's `functions.NAME:IDX`, Mistral's 9-character ids) or flat (`{id?, name,
//! arguments}`, `{tool_call_id?, tool_name, parameters}`). [`to_message`] maps all of them onto
//!
//! ```json
//! {"role": "assistant", "content": "…" | null, "reasoning_content": "…",
//!  "tool_calls": [{"id": "…", "type": "function", "function": {"name": "…", "arguments": "{…}"}}]}
//! ```
//!
//! `reasoning_content` is present only when the model reasoned ([`ReasoningKey`] chooses the key),
//! `tool_calls` only when it called. `arguments` is a JSON *text*: by default the model's own
//! JSON text, byte for byte, when the model wrote JSON (found in the raw output, see
//! [`to_message`]); otherwise (XML parameters, pythonic calls, Gemma's dialect, types converted
//! with the tools' schemas) compact JSON with non-ASCII kept as is.
//! [`Options::normalize_arguments`] makes every `arguments` compact JSON. Ids are the model's own
//! where the format carries one, else from an [`IdPolicy`] ([`RandomIds`] by default,
//! [`CounterIds`] for tests). "The model's own" includes an id the schema dropped but the model
//! wrote in the JSON call object around the arguments (Cohere's `tool_call_id`).
//!
//! ```
//! use chatparse_runtime::openai::{to_message, CounterIds, Options};
//! use chatparse_runtime::Schema;
//! use chatparse_runtime::json;
//!
//! let schema = Schema::from_json_str(r#"{
//!     "type": "object",
//!     "properties": {
//!         "role": {"const": "assistant"},
//!         "thinking": {"type": "string", "x-regex": "<think>(.*?)</think>"},
//!         "tool_calls": {"type": "array", "x-regex-iterator": "<tool_call>(.*?)</tool_call>",
//!             "items": {"type": "object", "x-parser": "json",
//!                       "x-parser-args": {"transform": "{type: 'function', function: @}"}}}
//!     }
//! }"#)?;
//! let raw = r#"<think>Weather.</think><tool_call>{"name": "get_weather", "arguments": {"city": "Zürich"}}</tool_call>"#;
//! let parsed = schema.parse(raw)?;
//! let message = to_message(&parsed, Some(raw), &Options::default(), &mut CounterIds::default());
//! assert_eq!(message, json!({
//!     "role": "assistant",
//!     "content": null,
//!     "reasoning_content": "Weather.",
//!     "tool_calls": [{"id": "call_0", "type": "function",
//!                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Zürich\"}"}}]
//! }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod built;
mod dialect;
mod ids;
mod open_value;
mod sketch;
mod stream;

use crate::value::{Map, Value};

use crate::error::ParseError;
use crate::py;
use crate::spec::{Spec, StreamSetupError};

pub use ids::{CounterIds, IdPolicy, RandomIds};
pub use stream::{Delta, DeltaStream};

/// Which key carries the reasoning in the OpenAI message and deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningKey {
    /// `reasoning_content` (vLLM, SGLang, DeepSeek's API).
    #[default]
    ReasoningContent,
    /// `reasoning` (OpenRouter, newer vLLM).
    Reasoning,
    /// Both keys, with the same text.
    Both,
}

impl ReasoningKey {
    fn keys(self) -> &'static [&'static str] {
        match self {
            ReasoningKey::ReasoningContent => &["reasoning_content"],
            ReasoningKey::Reasoning => &["reasoning"],
            ReasoningKey::Both => &["reasoning_content", "reasoning"],
        }
    }
}

/// How a parsed message becomes an OpenAI message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// The key(s) of the reasoning text.
    pub reasoning: ReasoningKey,
    /// Every `arguments` as compact JSON of the parsed value, even where the model wrote JSON
    /// text of its own (default `false`: the model's text).
    pub normalize_arguments: bool,
    /// Streams send a call's `arguments` only when the call closes; its start (id and name)
    /// still goes out as soon as the name is complete. Default `false`: the arguments stream as
    /// they arrive (the model's JSON text, or XML parameters one at a time). Either way the
    /// fragments concatenate to the final `arguments`, but a call that takes back what was sent
    /// (a parameter written twice: the final object keeps the last value; a JSON call object
    /// that writes `arguments` twice) fails an argument-streaming strict stream with
    /// [`ParseErrorKind::StreamedCallChanged`](crate::ParseErrorKind), where the one-shot parse
    /// follows the reference. No template writes such a call; with this option every output
    /// streams to exactly the one-shot message.
    pub arguments_at_close: bool,
}

/// What the request allows of tool calls (OpenAI's `tools` and `parallel_tool_calls`), checked by
/// [`DeltaStream::with_tool_checks`] on every call as it is sent.
///
/// ```
/// use chatparse_runtime::openai::ToolChecks;
/// let tools = chatparse_runtime::json!([{"type": "function", "function": {"name": "get_weather"}}]);
/// let checks = ToolChecks::offered(tools.as_array().unwrap());
/// assert_eq!(checks.violation("get_weather", 0), None);
/// assert!(checks.violation("rm_rf", 0).is_some());
/// let single = ToolChecks { single_call: true, ..checks };
/// assert!(single.violation("get_weather", 1).is_some());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolChecks {
    /// The names of the tools offered; `None` allows any name.
    pub names: Option<Vec<String>>,
    /// `parallel_tool_calls: false`: at most one call.
    pub single_call: bool,
    /// Set a call that breaks a check aside ([`DeltaStream::rejected`]) instead of failing the
    /// stream with [`ParseErrorKind::ToolCallNotAllowed`](crate::ParseErrorKind).
    pub lenient: bool,
}

impl ToolChecks {
    /// Checks names against the tools offered (`[{"type": "function", "function": {"name"}}]`, or
    /// flat `[{"name"}]`), any number of calls, strict.
    pub fn offered(tools: &[Value]) -> Self {
        let names = tools
            .iter()
            .filter_map(|t| {
                t.get("function")
                    .and_then(|f| f.get("name"))
                    .or_else(|| t.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect();
        ToolChecks {
            names: Some(names),
            ..ToolChecks::default()
        }
    }

    /// Why a call named `name`, with `sent` calls before it, is not allowed; `None` if it is.
    pub fn violation(&self, name: &str, sent: usize) -> Option<String> {
        if let Some(names) = &self.names {
            if !names.iter().any(|n| n == name) {
                return Some(format!(
                    "`{name}` is not one of the tools offered ({})",
                    names.join(", ")
                ));
            }
        }
        if self.single_call && sent > 0 {
            return Some(format!(
                "a second call (`{name}`) while parallel tool calls are off"
            ));
        }
        None
    }
}

/// A tool call a lenient [`ToolChecks`] set aside: not in the message, kept here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedCall {
    /// The function's name.
    pub name: String,
    /// Its `arguments` JSON text.
    pub arguments: String,
    /// Why it was set aside.
    pub reason: String,
}

/// What a message field is, for the OpenAI shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldKind {
    Content,
    Reasoning,
    ToolCalls,
    Other,
}

/// The field names the families use.
pub(crate) fn field_kind(name: &str) -> FieldKind {
    match name {
        "content" => FieldKind::Content,
        "reasoning_content" | "thinking" | "reasoning" => FieldKind::Reasoning,
        "tool_calls" => FieldKind::ToolCalls,
        _ => FieldKind::Other,
    }
}

/// One tool call, read from whichever shape the family gives.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallParts {
    pub id: Option<String>,
    pub name: String,
    /// The parsed arguments (`Null` when absent).
    pub arguments: Value,
}

/// Reads a call: `{id?, type, function: {name, arguments}}`, or flat `{id?, name, arguments}`,
/// `{tool_call_id?, tool_name, parameters}`. `None` for anything else.
pub(crate) fn call_parts(call: &Value) -> Option<CallParts> {
    let obj = call.as_object()?;
    let inner = match obj.get("function") {
        Some(Value::Object(f)) => f,
        _ => obj,
    };
    let name = ["name", "tool_name"]
        .iter()
        .find_map(|k| inner.get(*k))
        .map(|n| match n {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })?;
    let arguments = ["arguments", "parameters"]
        .iter()
        .find_map(|k| inner.get(*k))
        .cloned()
        .unwrap_or(Value::Null);
    // The call's id, or one passed through into the function object (Hermes' extra keys).
    let id = [obj, inner]
        .iter()
        .flat_map(|o| ["id", "tool_call_id"].map(|k| o.get(k)))
        .flatten()
        .find_map(|v| match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        });
    Some(CallParts {
        id,
        name,
        arguments,
    })
}

/// The calls of a `tool_calls` value: an array of calls, or one call.
pub(crate) fn calls_of(value: &Value) -> Vec<CallParts> {
    match value {
        Value::Array(items) => items.iter().filter_map(call_parts).collect(),
        Value::Object(_) => call_parts(value).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Compact JSON, non-ASCII kept as is.
fn compact(value: &Value) -> String {
    value.to_string()
}

/// The `arguments` text of a parsed arguments value, and the id the model wrote around it.
///
/// * `normalize`: compact JSON of the value (a string value that is itself JSON text is parsed
///   first, so `"{\"a\": 1}"` gives `{"a":1}`).
/// * Otherwise a string value that is JSON text is kept as written; an object or array is looked
///   for in `raw` from byte `*cursor` on: the first substring starting with `{`/`[` that Python's
///   `json` decodes to an identical value (same keys in the same order, same number text) is used
///   as written, and `*cursor` moves past it. Not found (the value was built from XML parameters,
///   a pythonic call, Gemma's dialect, or converted with the tools' schemas): compact JSON.
/// * Absent arguments (`Null`) give `{}`; a string that is not JSON is encoded as a JSON string.
///
/// The id: where the arguments were found in `raw`, the `"id"` or `"tool_call_id"` string of the
/// innermost JSON object enclosing them (Cohere's `{"tool_call_id": "0", "tool_name": …,
/// "parameters": {…}}`, whose schema drops the id).
pub(crate) fn arguments_and_id(
    arguments: &Value,
    raw: Option<&str>,
    cursor: &mut usize,
    normalize: bool,
) -> (String, Option<String>) {
    let from = *cursor;
    let (text, found) = match arguments {
        Value::Null => ("{}".to_owned(), None),
        Value::String(s) => match py::json::loads(s) {
            Ok(v) if normalize => (compact(&v), None),
            Ok(_) => (s.clone(), None),
            Err(_) => (compact(arguments), None),
        },
        Value::Object(_) | Value::Array(_) => {
            match raw.and_then(|raw| find_json(raw, cursor, arguments)) {
                Some(found) if !normalize => (found.clone(), Some(found)),
                Some(found) => (compact(arguments), Some(found)),
                None => (compact(arguments), None),
            }
        }
        _ => (compact(arguments), None),
    };
    let id = match (raw, found) {
        (Some(raw), Some(found)) => enclosing_id(raw, from, *cursor - found.len(), *cursor),
        _ => None,
    };
    (text, id)
}

/// The `id`/`tool_call_id` string of the innermost JSON object in `raw[from..]` that encloses
/// `raw[begin..end]`.
fn enclosing_id(raw: &str, from: usize, begin: usize, end: usize) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut at = begin;
    while at > from {
        at = memchr::memrchr(b'{', &bytes[from..at])? + from;
        if let Some((Value::Object(obj), len)) = py::json::raw_decode(&raw[at..]) {
            if at + len >= end {
                return ["id", "tool_call_id"]
                    .iter()
                    .find_map(|k| match obj.get(*k) {
                        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                        _ => None,
                    });
            }
        }
    }
    None
}

/// The first substring of `raw[*cursor..]` that decodes to `value`; moves the cursor past it.
fn find_json(raw: &str, cursor: &mut usize, value: &Value) -> Option<String> {
    let open = if value.is_object() { b'{' } else { b'[' };
    let start = (*cursor).min(raw.len());
    let bytes = raw.as_bytes();
    let mut at = start;
    while let Some(off) = memchr::memchr(open, &bytes[at..]) {
        let begin = at + off;
        if let Some((decoded, len)) = py::json::raw_decode(&raw[begin..]) {
            if py::identical(&decoded, value) {
                *cursor = begin + len;
                return Some(raw[begin..begin + len].to_owned());
            }
        }
        at = begin + 1;
    }
    None
}

/// One OpenAI tool call object.
pub(crate) fn call_json(id: &str, name: &str, arguments: &str) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), Value::String(name.to_owned()));
    function.insert("arguments".into(), Value::String(arguments.to_owned()));
    let mut call = Map::new();
    call.insert("id".into(), Value::String(id.to_owned()));
    call.insert("type".into(), Value::String("function".into()));
    call.insert("function".into(), Value::Object(function));
    Value::Object(call)
}

/// A text field's value as OpenAI text (a non-string value as compact JSON).
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(compact(other)),
    }
}

/// The parts of a parsed message the OpenAI shape uses.
#[derive(Debug, Default)]
pub(crate) struct MessageParts {
    pub content: Option<String>,
    pub reasoning: Option<String>,
    pub calls: Vec<CallParts>,
}

pub(crate) fn message_parts(message: &Value) -> MessageParts {
    let mut parts = MessageParts::default();
    let Some(obj) = message.as_object() else {
        // A spec whose root is not an object: its whole value is the content.
        parts.content = text_of(message);
        return parts;
    };
    for (key, value) in obj {
        match field_kind(key) {
            FieldKind::Content => parts.content = text_of(value),
            FieldKind::Reasoning if parts.reasoning.is_none() => parts.reasoning = text_of(value),
            FieldKind::ToolCalls => parts.calls = calls_of(value),
            _ => {}
        }
    }
    parts
}

/// Builds the OpenAI message from its pieces (calls already as OpenAI objects).
pub(crate) fn assemble(
    content: Option<&str>,
    reasoning: Option<&str>,
    tool_calls: Vec<Value>,
    options: &Options,
) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::String("assistant".into()));
    out.insert(
        "content".into(),
        content.map_or(Value::Null, |c| Value::String(c.to_owned())),
    );
    if let Some(r) = reasoning {
        for key in options.reasoning.keys() {
            out.insert((*key).into(), Value::String(r.to_owned()));
        }
    }
    if !tool_calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Value::Object(out)
}

/// A parsed message (from [`Schema::parse`](crate::Schema::parse), a template's parse, a
/// generated parser's `to_value`, or a stream's final message) as an OpenAI assistant message.
///
/// `raw` is the model output the message was parsed from: with it, arguments the model wrote as
/// JSON keep the model's text (searched in call order, see the module docs); without it, or with
/// [`Options::normalize_arguments`], they are compact JSON. Calls without an id of the model's
/// own get one from `ids`. Never fails: fields it does not know are left out, calls without a name
/// are skipped.
///
/// ```
/// use chatparse_runtime::openai::{to_message, CounterIds, Options, ReasoningKey};
/// use chatparse_runtime::json;
///
/// let parsed = json!({"role": "assistant", "thinking": "Hm.", "content": "Hi!"});
/// let options = Options { reasoning: ReasoningKey::Reasoning, ..Options::default() };
/// assert_eq!(
///     to_message(&parsed, None, &options, &mut CounterIds::default()),
///     json!({"role": "assistant", "content": "Hi!", "reasoning": "Hm."})
/// );
///
/// // Kimi's own ids are kept; arguments without the raw text are compact JSON.
/// let kimi = json!({"role": "assistant", "tool_calls": [{"id": "functions.f:0", "type": "function",
///     "function": {"name": "f", "arguments": {"q": "é"}}}]});
/// let message = to_message(&kimi, None, &Options::default(), &mut CounterIds::default());
/// assert_eq!(message["tool_calls"][0]["id"], "functions.f:0");
/// assert_eq!(message["tool_calls"][0]["function"]["arguments"], "{\"q\":\"é\"}");
/// ```
pub fn to_message(
    message: &Value,
    raw: Option<&str>,
    options: &Options,
    ids: &mut dyn IdPolicy,
) -> Value {
    let parts = message_parts(message);
    let mut cursor = 0;
    let calls = parts
        .calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let (arguments, raw_id) = arguments_and_id(
                &call.arguments,
                raw,
                &mut cursor,
                options.normalize_arguments,
            );
            let id = call
                .id
                .clone()
                .or(raw_id)
                .unwrap_or_else(|| ids.next_id(&call.name, index));
            call_json(&id, &call.name, &arguments)
        })
        .collect();
    assemble(
        parts.content.as_deref(),
        parts.reasoning.as_deref(),
        calls,
        options,
    )
}

/// Parses a complete output with `spec` and returns the OpenAI message. A spec that streams is
/// run through a [`DeltaStream`] fed the whole text at once, so that this message is exactly the
/// one the deltas of any chunking rebuild; any other spec is parsed and converted with
/// [`to_message`] (with the output as `raw`).
///
/// ```
/// use chatparse_runtime::openai::{parse, CounterIds, Options};
/// use chatparse_runtime::Spec;
///
/// let spec = Spec::from_json_str(r#"{"start_anchor": "<|im_start|>assistant\n", "fields": {
///     "reasoning_content": {"open": "<think>", "close": "</think>"},
///     "content": {}
/// }}"#)?;
/// let message = parse(&spec, "<think>\nHm.\n</think>\n\nHello!", None, None, Options::default(),
///                     Box::new(CounterIds::default()))?;
/// assert_eq!(message, chatparse_runtime::json!(
///     {"role": "assistant", "content": "Hello!", "reasoning_content": "Hm."}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse(
    spec: &Spec,
    text: &str,
    prefix: Option<&str>,
    tools: Option<&[Value]>,
    options: Options,
    mut ids: Box<dyn IdPolicy>,
) -> Result<Value, OpenAiError> {
    if spec.streamable().is_ok() {
        let mut stream = DeltaStream::from_spec(spec, prefix, tools, options, ids)?.deltas_unread();
        stream.feed(text)?;
        let (_, message) = stream.finish()?;
        return Ok(message);
    }
    if prefix.is_some() || tools.is_some() {
        return Err(OpenAiError::Setup(StreamSetupError::NotApplicable {
            source_name: spec.source_name().to_owned(),
        }));
    }
    let parsed = spec.parse(text)?;
    Ok(to_message(&parsed, Some(text), &options, ids.as_mut()))
}

/// [`parse`], with every tool call checked against what the request allows (see [`ToolChecks`];
/// a spec that does not stream has its calls checked in the converted message). Also returns
/// the calls a lenient check set aside.
///
/// ```
/// use chatparse_runtime::openai::{parse_with_checks, CounterIds, Options, ToolChecks};
/// use chatparse_runtime::{ParseErrorKind, Spec};
///
/// let spec = Spec::from_json_str(r#"{"start_anchor": "<a>", "fields": {"tool_calls": {"open": "<call>",
///     "close": "</call>", "repeats": true, "content": "json"}, "content": {}}}"#)?;
/// let tools = [chatparse_runtime::json!({"type": "function", "function": {"name": "f"}})];
/// let output = r#"<call>{"name": "g", "arguments": {}}</call>"#;
/// let strict = parse_with_checks(&spec, output, Some(""), None, Options::default(),
///     Box::new(CounterIds::default()), ToolChecks::offered(&tools));
/// assert!(strict.is_err());
/// let lenient = ToolChecks { lenient: true, ..ToolChecks::offered(&tools) };
/// let (message, rejected) = parse_with_checks(&spec, output, Some(""), None, Options::default(),
///     Box::new(CounterIds::default()), lenient)?;
/// assert!(message.get("tool_calls").is_none());
/// assert_eq!(rejected[0].name, "g");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_with_checks(
    spec: &Spec,
    text: &str,
    prefix: Option<&str>,
    tools: Option<&[Value]>,
    options: Options,
    ids: Box<dyn IdPolicy>,
    checks: ToolChecks,
) -> Result<(Value, Vec<RejectedCall>), OpenAiError> {
    let mut stream = DeltaStream::from_spec(spec, prefix, tools, options, ids)?
        .with_tool_checks(checks)
        .deltas_unread();
    stream.feed_with(text, &mut |_| {})?;
    Ok(stream.finish_parts(&mut |_| {})?)
}

/// Why [`parse`] or [`DeltaStream::from_spec`] failed.
#[derive(Debug, Clone, PartialEq)]
pub enum OpenAiError {
    /// The stream could not start (see [`Spec::stream`]).
    Setup(StreamSetupError),
    /// The output does not parse.
    Parse(ParseError),
}

impl std::fmt::Display for OpenAiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenAiError::Setup(e) => e.fmt(f),
            OpenAiError::Parse(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OpenAiError {}

impl From<StreamSetupError> for OpenAiError {
    fn from(e: StreamSetupError) -> Self {
        OpenAiError::Setup(e)
    }
}

impl From<ParseError> for OpenAiError {
    fn from(e: ParseError) -> Self {
        OpenAiError::Parse(e)
    }
}

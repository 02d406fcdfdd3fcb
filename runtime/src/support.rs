//! The parsing steps of the reference semantics, one function each. The interpreter is one driver
//! over them and the code that `response_parser!` generates is another: both back ends share each
//! step's implementation, so they cannot drift apart.
//!
//! This is the API generated code calls. It is public so that generated code in other crates can
//! reach it; it is documented, but meant for code generators rather than for hand-written parsers.

use std::borrow::Cow;

use crate::value::{Map, Number, Value};
use serde::ser::{Serialize, Serializer};

/// Generated `parse` functions set the output bound for their input.
pub use crate::budget::OutputBudget;
use crate::error::{ParseError, ParseErrorKind};
use crate::jmespath::compiled::CompiledFn;
use crate::jmespath::{Expression, JmesError};
use crate::py::coerce::{self, CoerceError};
use crate::py::json;
use crate::py::python_type;
use crate::pyre::{Captures, PyRegex, Replacement, Substituted};
use crate::schema::recording;
/// Generated code names it here (`support::ParserKind::Json`).
pub use crate::schema::ParserKind;

/// A value on its way through a schema: what the reference's `node_content` holds.
///
/// Strings stay borrowed from the model output where they can.
#[derive(Debug, Clone, PartialEq)]
pub enum Content<'a> {
    /// A string (Python `str`).
    Str(Cow<'a, str>),
    /// The matches of an `x-regex-iterator` (Python `list`).
    List(Vec<Content<'a>>),
    /// Anything else: JSON from a parser, a dict from named groups, null.
    Value(Value),
    /// A dict that is still the JSON object the model wrote (checked), its entries found in
    /// place: only generated code makes one (a call's JSON under the families'
    /// `{type: 'function', function: @}`), and every step that needs the dict parses it. A box
    /// (in [`JsonFields`]), so that a `Content` stays the size of a [`Value`].
    Object(JsonFields<'a>),
}

impl<'a> Content<'a> {
    /// Python's `None`.
    pub const NULL: Content<'static> = Content::Value(Value::Null);

    /// A borrowed string.
    pub fn borrowed(text: &'a str) -> Self {
        Content::Str(Cow::Borrowed(text))
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Content::Str(s) => Some(s),
            Content::Value(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether this is Python's `None`.
    pub fn is_null(&self) -> bool {
        matches!(self, Content::Value(Value::Null))
    }

    /// Python's type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Content::Str(_) => "str",
            Content::List(_) => "list",
            Content::Value(v) => python_type(v),
            Content::Object(_) => "dict",
        }
    }

    /// Python truthiness: `not node_content`.
    pub fn is_falsy(&self) -> bool {
        match self {
            Content::Str(s) => s.is_empty(),
            Content::List(l) => l.is_empty(),
            Content::Value(v) => match v {
                Value::Null => true,
                Value::Bool(b) => !b,
                Value::Number(n) => n.as_f64() == Some(0.0),
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
            },
            Content::Object(o) => o.remaining().next().is_none(),
        }
    }

    /// The content as a JSON value.
    pub fn into_value(self) -> Value {
        match self {
            Content::Str(s) => Value::String(s.into_owned()),
            Content::List(items) => {
                Value::Array(items.into_iter().map(Content::into_value).collect())
            }
            Content::Value(v) => v,
            Content::Object(o) => Value::Object(o.into_map()),
        }
    }

    /// The same content, owning its strings.
    pub fn into_owned(self) -> Content<'static> {
        match self {
            Content::Str(s) => Content::Str(Cow::Owned(s.into_owned())),
            Content::List(items) => {
                Content::List(items.into_iter().map(Content::into_owned).collect())
            }
            Content::Value(v) => Content::Value(v),
            Content::Object(o) => Content::Value(Value::Object(o.into_map())),
        }
    }
}

fn error(pointer: &str, kind: ParseErrorKind) -> ParseError {
    ParseError::new(pointer, kind)
}

/// The text a node with a regex keyword works on; anything but a string is the reference's
/// TypeError.
pub fn regex_input<'a>(content: Content<'a>, pointer: &str) -> Result<Cow<'a, str>, ParseError> {
    match content {
        Content::Str(s) => Ok(s),
        Content::Value(Value::String(s)) => Ok(Cow::Owned(s)),
        other => Err(error(
            pointer,
            ParseErrorKind::RegexInputNotString {
                found: other.type_name(),
            },
        )),
    }
}

/// One `x-regex-substitutions` step: `re.sub(pattern, replacement, text)`.
pub fn substitute<'t>(
    text: Cow<'t, str>,
    regex: &PyRegex,
    replacement: &Replacement,
    pointer: &str,
) -> Result<Cow<'t, str>, ParseError> {
    let range = match regex.sub_slice(replacement, &text) {
        Ok(Substituted::Slice(range)) => range,
        Ok(Substituted::Owned(out)) => return Ok(Cow::Owned(out)),
        Err(e) => return Err(ParseError::regex(pointer, e)),
    };
    // The result is a slice of the text: borrow it, or cut the owned text down in place.
    Ok(match text {
        Cow::Borrowed(text) => Cow::Borrowed(text.get(range).unwrap_or("")),
        Cow::Owned(mut text) => {
            text.truncate(range.end);
            text.drain(..range.start);
            Cow::Owned(text)
        }
    })
}

/// transformers' `_parse_re_match`: named groups make a dict of the groups that took part;
/// otherwise the one unnamed group (None when it did not take part).
pub fn match_content<'t>(regex: &PyRegex, caps: &Captures<'t>) -> Content<'t> {
    if regex.has_named_groups() {
        return Content::Value(Value::Object(group_dict(regex, caps)));
    }
    match caps.get(1) {
        Some(text) => Content::borrowed(text),
        None => Content::NULL,
    }
}

/// `x-regex`: the first match as [`match_content`]; `None` when nothing matches (the node is null).
pub fn search<'t>(
    regex: &PyRegex,
    text: &'t str,
    pointer: &str,
) -> Result<Option<Content<'t>>, ParseError> {
    let found = regex
        .search(text)
        .map_err(|e| ParseError::regex(pointer, e))?;
    recording::searched(pointer, text, regex, found.as_ref());
    Ok(found.map(|caps| match_content(regex, &caps)))
}

/// The text an iterator or key-value stage searches: the node's text, or the one group of its
/// `x-regex` (whose absence is the reference's TypeError).
pub fn stage_text<'t>(content: &Content<'t>, pointer: &str) -> Result<&'t str, ParseError> {
    match content {
        Content::Str(Cow::Borrowed(s)) => Ok(s),
        other => Err(error(
            pointer,
            ParseErrorKind::RegexInputNotString {
                found: other.type_name(),
            },
        )),
    }
}

/// `x-regex-iterator`: every match as [`match_content`]; `None` when there is none.
pub fn iterate<'t>(
    regex: &PyRegex,
    text: &'t str,
    pointer: &str,
) -> Result<Option<Content<'t>>, ParseError> {
    let mut items = Vec::new();
    // The spans, when a completeness check decides from them (see `schema::recording`).
    let wanted = recording::wants_matches(pointer, text);
    let mut spans = (wanted == recording::Wanted::Matches).then(Vec::new);
    let mut calls = (wanted == recording::Wanted::MatchesAndTheirText).then(Vec::new);
    for caps in regex.find_iter(text) {
        let caps = caps.map_err(|e| ParseError::regex(pointer, e))?;
        crate::budget::charge_match(caps.get(0).map_or(0, str::len), pointer)?;
        if let Some(spans) = &mut spans {
            spans.push((caps.start(), caps.end()));
        }
        if let Some(calls) = &mut calls {
            calls.push(recording::CallRead::of(&caps));
        }
        items.push(match_content(regex, &caps));
    }
    if let Some(spans) = &spans {
        recording::iterated(pointer, text, spans);
    }
    if let Some(calls) = calls {
        recording::iterated_calls(text, calls);
    }
    Ok((!items.is_empty()).then_some(Content::List(items)))
}

/// `x-regex-key-value`: every match's `key` and `value` groups, later keys overwriting earlier
/// ones in place; `None` when there is no match.
pub fn key_value<'t>(
    regex: &PyRegex,
    text: &'t str,
    pointer: &str,
) -> Result<Option<Content<'t>>, ParseError> {
    let missing = || error(pointer, ParseErrorKind::KeyValueGroupMissing);
    let key_group = regex.group_index("key").ok_or_else(missing)?;
    let value_group = regex.group_index("value").ok_or_else(missing)?;
    let mut map = Map::new();
    for caps in regex.find_iter(text) {
        let caps = caps.map_err(|e| ParseError::regex(pointer, e))?;
        let (Some(key), Some(value)) = (caps.get(key_group), caps.get(value_group)) else {
            return Err(missing());
        };
        map.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    Ok((!map.is_empty()).then_some(Content::Value(Value::Object(map))))
}

/// An `x-parser-args.transform`: the JMESPath interpreter on the parsed expression, or the same
/// expression compiled to Rust by the code generator (identical results; see
/// [`jmespath::compiled`](crate::jmespath::compiled)).
#[derive(Debug, Clone, Copy)]
pub enum Transform<'e> {
    /// Run by the interpreter.
    Interpreted(&'e Expression),
    /// Compiled to a function at build time.
    Compiled(CompiledFn),
    /// Compiled to a function that takes the value by value (it moves it into the result: the
    /// families' `{type: 'function', function: @}`).
    CompiledOwned(fn(Value) -> Result<Value, JmesError>),
}

impl Transform<'_> {
    /// `jmespath.search(expression, value)` on a value that is not needed afterwards: it is
    /// moved into the result where it can be ([`Expression::search_owned`], or a compiled
    /// function that takes it by value).
    pub fn apply(self, value: Value) -> Result<Value, JmesError> {
        match self {
            Transform::Interpreted(expression) => expression.search_owned(value),
            Transform::Compiled(f) => f(&value),
            Transform::CompiledOwned(f) => f(value),
        }
    }
}

/// `x-parser` with its `x-parser-args`: Python's `json.loads` (after Gemma 4's conversion for
/// `gemma4-tool-call`), the `allow_non_json` fallback, then the JMESPath `transform`.
pub fn parse_json<'a>(
    content: Content<'a>,
    kind: ParserKind,
    allow_non_json: bool,
    transform: Option<(Transform<'_>, &str)>,
    pointer: &str,
) -> Result<Content<'a>, ParseError> {
    let Some(text) = content.as_str() else {
        return Err(error(
            pointer,
            ParseErrorKind::ParserInputNotString {
                found: content.type_name(),
            },
        ));
    };
    let given = text;
    let converted;
    let text = match kind {
        ParserKind::Json => text,
        ParserKind::Gemma4ToolCall => {
            converted = crate::gemma4::gemma4_to_json(text);
            converted.as_str()
        }
    };
    let mut value = match json::loads(text) {
        Ok(value) => value,
        Err(e) if allow_non_json && e.is_decode_error() => Value::String(text.to_owned()),
        Err(e) => {
            // Where the error is, in the text this node was given (Gemma 4's converted text has
            // other offsets: its start then).
            let at = match kind {
                ParserKind::Json => json::error_byte(text, &e),
                ParserKind::Gemma4ToolCall => 0,
            };
            return Err(error(pointer, ParseErrorKind::Json(e)).anchored(given, at));
        }
    };
    if let Some((transform, transform_pointer)) = transform {
        value = transform.apply(value).map_err(|e| {
            ParseError::new(transform_pointer, ParseErrorKind::Transform(e.message))
        })?;
    }
    Ok(Content::Value(value))
}

fn unexpected(expected: &'static str, content: &Content<'_>, pointer: &str) -> ParseError {
    error(
        pointer,
        ParseErrorKind::UnexpectedType {
            expected,
            found: content.type_name(),
        },
    )
}

/// A `string` node's value.
pub fn to_string<'a>(content: Content<'a>, pointer: &str) -> Result<Cow<'a, str>, ParseError> {
    match content {
        Content::Str(s) => Ok(s),
        Content::Value(Value::String(s)) => Ok(Cow::Owned(s)),
        other => Err(unexpected("a string", &other, pointer)),
    }
}

/// A `string` node's value when analysis proved it is always a slice of the input.
pub fn to_borrowed_string<'a>(content: Content<'a>, pointer: &str) -> Result<&'a str, ParseError> {
    match content {
        Content::Str(Cow::Borrowed(s)) => Ok(s),
        other => Err(unexpected("a string slice of the input", &other, pointer)),
    }
}

/// An `integer` node's value: Python's `int()` of a string, an int unchanged — and, since Python's
/// `bool` is an `int`, a boolean unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Int {
    /// An integer that fits in `i64`.
    Small(i64),
    /// A larger integer, as canonical decimal digits (Python ints are unbounded).
    Big(Box<str>),
    /// A JSON boolean that reached an `integer` node (Python: `isinstance(True, int)`).
    Bool(bool),
}

impl Int {
    /// The value as `i64`, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Int::Small(n) => Some(*n),
            _ => None,
        }
    }

    fn from_number(n: Number) -> Int {
        match n.as_i64() {
            Some(small) => Int::Small(small),
            None => Int::Big(n.to_string().into_boxed_str()),
        }
    }

    /// The value as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Int::Small(n) => Value::from(*n),
            Int::Big(digits) => Number::from_integer_str(digits)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Int::Bool(b) => Value::Bool(*b),
        }
    }
}

impl Serialize for Int {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Int::Small(n) => serializer.serialize_i64(*n),
            Int::Bool(b) => serializer.serialize_bool(*b),
            Int::Big(_) => self.to_value().serialize(serializer),
        }
    }
}

/// An `integer` node's value.
pub fn to_integer(content: Content<'_>, pointer: &str) -> Result<Int, ParseError> {
    match content {
        Content::Value(Value::Bool(b)) => Ok(Int::Bool(b)),
        Content::Value(Value::Number(n)) if coerce::is_integer(&n) => Ok(Int::from_number(n)),
        other => match other.as_str() {
            Some(s) => coerce::int_from_str(s).map(Int::from_number).map_err(|e| {
                error(
                    pointer,
                    match e {
                        CoerceError::TooLarge => ParseErrorKind::NumberOutOfRange(format!(
                            "integer string longer than Python's 4300-digit limit ({} chars)",
                            s.len()
                        )),
                        _ => ParseErrorKind::InvalidInteger(s.to_owned()),
                    },
                )
            }),
            None => Err(unexpected("a string or int", &other, pointer)),
        },
    }
}

/// A `number` node's value: always a float, as Python's `float()`.
pub fn to_number(content: Content<'_>, pointer: &str) -> Result<f64, ParseError> {
    let float = match &content {
        Content::Value(Value::Bool(b)) => Ok(if *b { 1.0 } else { 0.0 }),
        Content::Value(Value::Number(n)) => coerce::float_from_number(n),
        other => match other.as_str() {
            Some(s) => coerce::float_from_str(s),
            None => return Err(unexpected("a string or number", other, pointer)),
        },
    };
    float
        .and_then(|f| coerce::float_value(f).map(|_| f))
        .map_err(|e| error(pointer, number_error(e, &content)))
}

fn number_error(e: CoerceError, content: &Content<'_>) -> ParseErrorKind {
    let shown = match content.as_str() {
        Some(s) => format!("{s:?}"),
        None => match content {
            Content::Value(v) => v.to_string(),
            other => other.type_name().to_owned(),
        },
    };
    match e {
        CoerceError::Invalid => {
            ParseErrorKind::InvalidNumber(content.as_str().unwrap_or_default().to_owned())
        }
        CoerceError::NonFinite => {
            ParseErrorKind::NumberOutOfRange(format!("{shown} is infinite or NaN as a float"))
        }
        CoerceError::TooLarge => {
            ParseErrorKind::NumberOutOfRange(format!("{shown} is too large to convert to a float"))
        }
    }
}

/// A float as JSON (always a float, as Python's `json.dumps` writes it).
pub fn float_to_value(f: f64) -> Value {
    coerce::float_value(f).unwrap_or(Value::Null)
}

/// A `boolean` node's value.
pub fn to_boolean(content: Content<'_>, pointer: &str) -> Result<bool, ParseError> {
    match content {
        Content::Value(Value::Bool(b)) => Ok(b),
        other => match other.as_str() {
            Some(s) => coerce::bool_from_str(s)
                .ok_or_else(|| error(pointer, ParseErrorKind::InvalidBoolean(s.to_owned()))),
            None => Err(unexpected("a string or bool", &other, pointer)),
        },
    }
}

/// The elements an `items` array parses: none for a falsy value (the reference returns `[]`),
/// otherwise the list (anything else is a TypeError).
pub fn array_items<'a>(
    content: Content<'a>,
    pointer: &str,
) -> Result<Vec<Content<'a>>, ParseError> {
    if content.is_falsy() {
        return Ok(Vec::new());
    }
    match content {
        Content::List(items) => Ok(items),
        Content::Value(Value::Array(items)) => Ok(items.into_iter().map(Content::Value).collect()),
        other => Err(unexpected("a list", &other, pointer)),
    }
}

/// The elements a `prefixItems` array parses: `None` for a falsy value (the result is `[]`);
/// a single prefix item wraps a non-list value; the count must match.
pub fn prefix_items<'a>(
    content: Content<'a>,
    count: usize,
    pointer: &str,
) -> Result<Option<Vec<Content<'a>>>, ParseError> {
    if content.is_falsy() {
        return Ok(None);
    }
    let items = match content {
        Content::List(items) => items,
        Content::Value(Value::Array(items)) => items.into_iter().map(Content::Value).collect(),
        single if count == 1 => vec![single],
        other => return Err(unexpected("a list", &other, pointer)),
    };
    if items.len() != count {
        return Err(error(
            pointer,
            ParseErrorKind::PrefixItemsLength {
                expected: count,
                found: items.len(),
            },
        ));
    }
    Ok(Some(items))
}

/// What an `object` node builds from: the whole text (every property parses it) or a dict.
#[derive(Debug)]
pub enum ObjectInput<'a> {
    /// String input: each property parses the whole text; null results are dropped.
    Text(Cow<'a, str>),
    /// Dict input: properties by key, then the remaining keys.
    Dict(DictInput<'a>),
}

/// The dict an `object` node receives: built, or a JSON object the model wrote, its entries
/// found in place. (Not [`Fields`] itself: its match-groups variant would make every object's
/// input three times the size, moved on every object of every message.)
#[derive(Debug)]
pub enum DictInput<'a> {
    /// A dict.
    Map(Map),
    /// A JSON object's entries, found in place.
    Json(JsonFields<'a>),
}

impl DictInput<'_> {
    /// The dict, the values parsed.
    pub fn into_map(self) -> Map {
        match self {
            DictInput::Map(map) => map,
            DictInput::Json(json) => json.into_map(),
        }
    }
}

impl<'a> From<DictInput<'a>> for Fields<'a> {
    fn from(input: DictInput<'a>) -> Self {
        match input {
            DictInput::Map(map) => Fields::Map(map),
            DictInput::Json(json) => Fields::Json(json),
        }
    }
}

/// Classify an `object` node's content.
pub fn object_input<'a>(
    content: Content<'a>,
    has_properties: bool,
    pointer: &str,
) -> Result<ObjectInput<'a>, ParseError> {
    match content {
        Content::Value(Value::Object(map)) => Ok(ObjectInput::Dict(DictInput::Map(map))),
        Content::Object(object) => Ok(ObjectInput::Dict(DictInput::Json(object))),
        Content::Str(text) if has_properties => Ok(ObjectInput::Text(text)),
        Content::Value(Value::String(text)) if has_properties => {
            Ok(ObjectInput::Text(Cow::Owned(text)))
        }
        Content::Str(_) | Content::Value(Value::String(_)) => {
            Err(error(pointer, ParseErrorKind::ObjectWithoutProperties))
        }
        other => Err(unexpected("a dict or str", &other, pointer)),
    }
}

/// [`object_input`] for an `object` node (with `properties`) that only ever receives a str: the
/// text every property parses.
pub fn object_text<'a>(content: Content<'a>, pointer: &str) -> Result<Cow<'a, str>, ParseError> {
    match content {
        Content::Str(text) => Ok(text),
        Content::Value(Value::String(text)) => Ok(Cow::Owned(text)),
        other => Err(unexpected("a dict or str", &other, pointer)),
    }
}

/// [`object_input`] for an `object` node that only ever receives a dict (a str is an error: the
/// node has no `properties`, or no str can reach it).
pub fn object_dict(content: Content<'_>, pointer: &str) -> Result<Map, ParseError> {
    match content {
        Content::Value(Value::Object(map)) => Ok(map),
        Content::Object(object) => Ok(object.into_map()),
        Content::Str(_) | Content::Value(Value::String(_)) => {
            Err(error(pointer, ParseErrorKind::ObjectWithoutProperties))
        }
        other => Err(unexpected("a dict or str", &other, pointer)),
    }
}

/// An object of free-form keys (tool arguments) for generated code.
pub use crate::value::JsonObject;

/// A free-form object node's content when it is the text of one JSON object that Python's
/// `json.loads` certainly parses into a dict: kept as that text, checked, not parsed
/// ([`JsonObject::from_text`]). Anything else is handed back for [`parse_json`], which then
/// parses it, or fails, exactly as before.
pub fn json_object_text(content: Content<'_>) -> Result<JsonObject<'_>, Content<'_>> {
    match content {
        Content::Str(text) => JsonObject::from_text(text).map_err(Content::Str),
        Content::Value(Value::String(text)) => JsonObject::from_text(Cow::Owned(text))
            .map_err(|text| Content::Value(Value::String(text.into_owned()))),
        // Not text (a parsed value): for `object_dict`, or `parse_json`, to take as always. The
        // values of a call read in place come as objects through `Fields::take_object`.
        other => Err(other),
    }
}

/// A call's content under the wrap `{type: 'function', function: @}` when it is the text of one
/// JSON object that parses, lent from the output, with at most eight keys, none escaped or
/// repeated: a dict kept as that text ([`Content::Object`]), its entries found in the same
/// checked pass. Anything else is handed back for [`parse_json`].
pub fn json_call(content: Content<'_>) -> Result<Content<'_>, Content<'_>> {
    match content {
        Content::Str(Cow::Borrowed(text)) => match JsonFields::read(text) {
            Some(fields) => Ok(Content::Object(fields)),
            None => Err(content),
        },
        // Text a substitution rebuilt cannot lend its fields: the call is parsed as a whole
        // (checking it first would only add a pass).
        other => Err(other),
    }
}

/// The same text again for the next property of a string-input object.
pub fn share<'a>(text: &Cow<'a, str>) -> Content<'a> {
    match text {
        Cow::Borrowed(s) => Content::borrowed(s),
        Cow::Owned(s) => Content::Str(Cow::Owned(s.clone())),
    }
}

/// `required`: the listed keys that are missing, as the reference's ValueError.
pub fn check_required(
    required: &[&str],
    present: impl Fn(&str) -> bool,
    pointer: &str,
) -> Result<(), ParseError> {
    let missing: Vec<String> = required
        .iter()
        .filter(|key| !present(key))
        .map(|key| (*key).to_owned())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(error(pointer, ParseErrorKind::MissingRequired(missing)))
    }
}

/// A property while a generated object is being built: absent (string input gave null, or the
/// dict lacked the key), present but null (dict input), or present with a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot<T> {
    /// Not in the output object.
    Absent,
    /// In the output object as `null`.
    Null,
    /// In the output object with this value.
    Value(T),
}

impl<T> Slot<T> {
    /// A child's result in string mode: null results are dropped.
    pub fn dropping_null(value: Option<T>) -> Self {
        value.map_or(Slot::Absent, Slot::Value)
    }

    /// A child's result in dict mode: null results are kept.
    pub fn keeping_null(value: Option<T>) -> Self {
        value.map_or(Slot::Null, Slot::Value)
    }

    /// Whether the key is in the output object.
    pub fn is_present(&self) -> bool {
        !matches!(self, Slot::Absent)
    }

    /// For a field that can be absent but never null.
    pub fn into_option(self) -> Option<T> {
        match self {
            Slot::Value(v) => Some(v),
            _ => None,
        }
    }

    /// For a field that can be absent (outer `None`) or null (inner `None`).
    pub fn into_option_option(self) -> Option<Option<T>> {
        match self {
            Slot::Absent => None,
            Slot::Null => Some(None),
            Slot::Value(v) => Some(Some(v)),
        }
    }

    /// For a required field that can be null (`None`); absence was already reported by
    /// [`check_required`], and is reported again rather than assumed away.
    pub fn into_required_nullable(self, key: &str, pointer: &str) -> Result<Option<T>, ParseError> {
        match self {
            Slot::Absent => Err(error(
                pointer,
                ParseErrorKind::MissingRequired(vec![key.to_owned()]),
            )),
            Slot::Null => Ok(None),
            Slot::Value(v) => Ok(Some(v)),
        }
    }

    /// For a required field that is never null.
    pub fn into_required(self, key: &str, pointer: &str) -> Result<T, ParseError> {
        match self {
            Slot::Value(v) => Ok(v),
            _ => Err(error(
                pointer,
                ParseErrorKind::MissingRequired(vec![key.to_owned()]),
            )),
        }
    }
}

impl Slot<Value> {
    /// For a JSON-valued field: null is `Some(Value::Null)`, absence is `None`.
    pub fn into_value_option(self) -> Option<Value> {
        match self {
            Slot::Absent => None,
            Slot::Null => Some(Value::Null),
            Slot::Value(v) => Some(v),
        }
    }

    /// For a required JSON-valued field.
    pub fn into_required_value(self, key: &str, pointer: &str) -> Result<Value, ParseError> {
        self.into_value_option().ok_or_else(|| {
            error(
                pointer,
                ParseErrorKind::MissingRequired(vec![key.to_owned()]),
            )
        })
    }
}

/// A JSON constant from the schema (`const`, `default`), as Python's `json.loads` reads it.
/// The macro validated the text when it ran, so the fallback is never taken.
pub fn json_constant(text: &str) -> Value {
    json::loads(text).unwrap_or(Value::Null)
}

/// Any generated value as JSON (identical to what the interpreter returns).
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    crate::value::to_value(value).unwrap_or(Value::Null)
}

/// A child that analysis proved is never null returned null anyway: report it as the type error
/// the reference would raise, rather than panic.
pub fn unexpected_null(pointer: &str) -> ParseError {
    error(
        pointer,
        ParseErrorKind::UnexpectedType {
            expected: "a value",
            found: "NoneType",
        },
    )
}

/// [`regex_input`] for a node whose input analysis proved is always a borrowed slice of the
/// model output: the stages then borrow from the input directly.
pub fn regex_input_slice<'a>(content: Content<'a>, pointer: &str) -> Result<&'a str, ParseError> {
    stage_text(&content, pointer)
}

/// The keys of an object node's dict input, for generated code: a dict (JSON from a parser, a
/// key-value stage) or — without building one — the named groups of the node's own `x-regex`
/// match, which is what [`match_content`] would turn into a dict. Why: building that dict copies
/// every group's name and text into a hashed map for every message, only for the generated code
/// to take each value out again; the groups are slices of the input, so the fields borrow them.
#[derive(Debug)]
pub enum Fields<'t> {
    /// A dict.
    Map(Map),
    /// A match's named groups (the non-participating ones are not keys, as in the dict).
    Groups {
        /// The regex, for its group names.
        regex: &'static PyRegex,
        /// The match.
        captures: Captures<'t>,
    },
    /// A JSON object the model wrote (checked), its entries found in place and each value
    /// parsed only when taken (see [`JsonFields`]).
    Json(JsonFields<'t>),
}

impl<'t> Fields<'t> {
    /// Takes a key's value out (a group's text, borrowed); `None` when it is not a key.
    pub fn take(&mut self, key: &str) -> Option<Content<'t>> {
        match self {
            Fields::Map(map) => map
                .get_mut(key)
                .map(|value| Content::Value(std::mem::take(value))),
            Fields::Groups { regex, captures } => {
                let i = regex
                    .group_names()
                    .iter()
                    .position(|name| name.as_deref() == Some(key))?;
                captures.get(i + 1).map(Content::borrowed)
            }
            Fields::Json(json) => json.take(key).map(JsonValueText::parsed),
        }
    }

    /// [`Fields::take`] for a property that is a plain `string` node (no pattern or parser of
    /// its own), which reads any str alike: a JSON string without escapes is lent from the
    /// model's text rather than copied.
    pub fn take_str(&mut self, key: &str) -> Option<Content<'t>> {
        match self {
            Fields::Json(json) => json.take(key).map(JsonValueText::string),
            _ => self.take(key),
        }
    }

    /// [`Fields::take`] for a property that is a plain object of free-form keys (tool
    /// arguments, no pattern or parser of its own): `Ok` with the object itself when the value
    /// is a JSON object the model wrote (what that property's node returns for it, kept as
    /// text), else `Err` with the content for the node to parse.
    pub fn take_object(&mut self, key: &str) -> Option<Result<JsonObject<'t>, Content<'t>>> {
        match self {
            Fields::Json(json) => json.take(key).map(JsonValueText::object),
            _ => self.take(key).map(Err),
        }
    }

    /// [`Fields::take`] for generated code, which knows the key's group number in the regex
    /// (`0`: no group has that name).
    pub fn take_group(&mut self, key: &str, group: usize) -> Option<Content<'t>> {
        match self {
            Fields::Map(_) | Fields::Json(_) => self.take(key),
            Fields::Groups { captures, .. } if group > 0 => {
                captures.get(group).map(Content::borrowed)
            }
            Fields::Groups { .. } => None,
        }
    }

    /// The dict, with owned values (for text that will not outlive this call).
    pub fn into_map(self) -> Map {
        match self {
            Fields::Map(map) => map,
            Fields::Groups { regex, captures } => group_dict(regex, &captures),
            Fields::Json(json) => json.into_map(),
        }
    }

    /// The same fields, not borrowing (the groups become a dict).
    pub fn into_owned(self) -> Fields<'static> {
        Fields::Map(self.into_map())
    }
}

impl<'t> Fields<'t> {
    /// The keys not in `known` with their values, in the dict's order: an object's
    /// `additionalProperties`. Groups named in `known` are skipped before anything is copied.
    pub fn beyond<'k>(self, known: &'k [&'k str]) -> Beyond<'t, 'k> {
        match self {
            Fields::Map(map) => Beyond::Map(map.into_iter(), known),
            Fields::Groups { regex, captures } => Beyond::Groups {
                regex,
                captures,
                next: 0,
                known,
            },
            Fields::Json(json) => Beyond::Json(json, 0, known),
        }
    }
}

/// What [`Fields::beyond`] iterates.
#[derive(Debug)]
pub enum Beyond<'t, 'k> {
    /// A dict's entries.
    #[doc(hidden)]
    Map(crate::value::IntoIter, &'k [&'k str]),
    /// A match's named groups, from group `next`.
    #[doc(hidden)]
    Groups {
        regex: &'static PyRegex,
        captures: Captures<'t>,
        next: usize,
        known: &'k [&'k str],
    },
    /// A JSON object's entries found in place, from the `usize`th.
    #[doc(hidden)]
    Json(JsonFields<'t>, usize, &'k [&'k str]),
}

impl Iterator for Beyond<'_, '_> {
    type Item = (String, Value);

    fn next(&mut self) -> Option<(String, Value)> {
        match self {
            Beyond::Map(entries, known) => entries.find(|(key, _)| !known.contains(&key.as_str())),
            Beyond::Groups {
                regex,
                captures,
                next,
                known,
            } => {
                let names = regex.group_names();
                while let Some(name) = names.get(*next) {
                    let i = *next;
                    *next += 1;
                    let Some(name) = name.as_deref() else {
                        continue;
                    };
                    if known.contains(&name) {
                        continue;
                    }
                    if let Some(text) = captures.get(i + 1) {
                        return Some((name.to_owned(), Value::String(text.to_owned())));
                    }
                }
                None
            }
            Beyond::Json(fields, next, known) => {
                let InPlace { entries, len, .. } = &*fields.0;
                while let Some(entry) = entries[..*len].get(*next) {
                    *next += 1;
                    match entry {
                        Some((key, value)) if !known.contains(key) => {
                            let value = JsonValueText(value).parsed().into_value();
                            return Some(((*key).to_owned(), value));
                        }
                        _ => {}
                    }
                }
                None
            }
        }
    }
}

/// The entries of a JSON object the model wrote, found in place by one checked pass over its
/// text (`py::json::object_entries`): each key (without escapes), and each value's text, parsed
/// only when a property takes it. Why: a call's JSON is read only to take two or three values
/// out of it again; building its dict — a `String` per key — and then the call's `{type,
/// function}` wrap around it was a fifth of a one-call parse.
///
/// Boxed, in one allocation: it rides in [`Content`], which every step of
/// every message moves, and must not make it larger (a `Content` is the size of a `Value`).
#[derive(Debug, Clone)]
pub struct JsonFields<'t>(Box<InPlace<'t>>);

/// How many entries a JSON object may have to be read in place (a call has two or three); one
/// with more is parsed as a whole.
const IN_PLACE_ENTRIES: usize = 8;

#[derive(Debug, Clone)]
struct InPlace<'t> {
    /// `(key, value's JSON text)` in input order, the first `len` of them; `None` once taken.
    /// Keys are unique.
    entries: [Option<(&'t str, &'t str)>; IN_PLACE_ENTRIES],
    len: usize,
}

impl<'t> JsonFields<'t> {
    /// The entries of `text` when it is one JSON object that Python's `json.loads` certainly
    /// parses into a dict (checked in the same pass, as [`JsonObject::from_text`] checks it);
    /// `None` otherwise, and when a key has an escape or repeats (the dict then keeps the key's
    /// first place and its last value: parsed as a whole instead).
    pub(crate) fn read(text: &'t str) -> Option<JsonFields<'t>> {
        let mut entries = [None; IN_PLACE_ENTRIES];
        let mut len = 0;
        crate::py::json::object_entries(text, |(key_start, key_end), (start, end)| {
            let (Some(key), Some(value)) =
                (text.get(key_start + 1..key_end - 1), text.get(start..end))
            else {
                return false;
            };
            if len == IN_PLACE_ENTRIES
                || key.contains('\\')
                || entries[..len].iter().flatten().any(|(k, _)| *k == key)
            {
                return false;
            }
            entries[len] = Some((key, value));
            len += 1;
            true
        })?;
        Some(JsonFields(Box::new(InPlace { entries, len })))
    }

    /// The entries not taken, in input order.
    fn remaining(&self) -> impl Iterator<Item = (&'t str, &'t str)> + '_ {
        self.0.entries[..self.0.len].iter().flatten().copied()
    }

    /// Takes `key`'s value out.
    fn take(&mut self, key: &str) -> Option<JsonValueText<'t>> {
        let entries = &mut self.0.entries[..self.0.len];
        let slot = entries
            .iter_mut()
            .find(|e| e.is_some_and(|(k, _)| k == key))?;
        slot.take().map(|(_, value)| JsonValueText(value))
    }

    /// The dict, the values parsed.
    pub(crate) fn into_map(self) -> Map {
        self.remaining()
            .map(|(key, value)| (key.to_owned(), JsonValueText(value).parsed().into_value()))
            .collect()
    }
}

impl PartialEq for JsonFields<'_> {
    /// The same dict (the values parsed to compare them).
    fn eq(&self, other: &Self) -> bool {
        self.clone().into_map() == other.clone().into_map()
    }
}

/// One value's JSON text, inside an object that was checked as a whole.
#[derive(Debug, Clone, Copy)]
struct JsonValueText<'t>(&'t str);

impl<'t> JsonValueText<'t> {
    /// The value, parsed: what the dict holds. It cannot fail (the whole object was checked);
    /// were it ever to, debug builds stop and release builds give `None` rather than abort.
    fn parsed(self) -> Content<'t> {
        match json::loads(self.0) {
            Ok(value) => Content::Value(value),
            Err(e) => {
                debug_assert!(false, "a checked JSON value did not parse: {e}");
                Content::NULL
            }
        }
    }

    /// A string without escapes as the model's text (a str like any other); else parsed.
    fn string(self) -> Content<'t> {
        match self.0.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            Some(inner) if !inner.contains('\\') => Content::borrowed(inner),
            _ => self.parsed(),
        }
    }

    /// An object as the model's text; anything else parsed.
    fn object(self) -> Result<JsonObject<'t>, Content<'t>> {
        if self.0.starts_with('{') {
            Ok(JsonObject::vouched(Cow::Borrowed(self.0)))
        } else {
            Err(self.parsed())
        }
    }
}

impl From<Map> for Fields<'_> {
    fn from(map: Map) -> Self {
        Fields::Map(map)
    }
}

/// A match's named groups as the reference's dict (groups that did not take part are left out).
fn group_dict(regex: &PyRegex, caps: &Captures<'_>) -> Map {
    let mut map = Map::new();
    for (i, name) in regex.group_names().iter().enumerate() {
        if let (Some(name), Some(text)) = (name, caps.get(i + 1)) {
            map.insert(name.clone(), Value::String(text.to_owned()));
        }
    }
    map
}

/// [`search`] for an object node whose `x-regex` has named groups: its fields, borrowed from the
/// match; `None` when nothing matches.
pub fn search_fields<'t>(
    regex: &'static PyRegex,
    text: &'t str,
    pointer: &str,
) -> Result<Option<Fields<'t>>, ParseError> {
    let found = regex
        .search(text)
        .map_err(|e| ParseError::regex(pointer, e))?;
    recording::searched(pointer, text, regex, found.as_ref());
    Ok(found.map(|captures| Fields::Groups { regex, captures }))
}

/// The markers of a generated parser's marker-free answer (`parse_marker_free`): the literals
/// whose absence from the output the code generator proved decides every pattern of the schema
/// (see `chatparse-codegen`'s `marker_free.rs`). Written out by the generator, first bytes
/// included, so that nothing is computed per call.
#[derive(Debug)]
pub struct Markers {
    /// The literals' distinct first bytes, sorted.
    pub first_bytes: &'static [u8],
    /// The literals.
    pub literals: &'static [&'static str],
}

impl Markers {
    /// Whether none of the literals occurs in `text`: one `memchr` pass for up to three first
    /// bytes (every shipped schema's markers have at most three), then a comparison at each hit.
    ///
    /// ```
    /// use chatparse_runtime::__private::Markers;
    /// const M: Markers = Markers { first_bytes: b"<", literals: &["<think>", "</think>"] };
    /// assert!(M.absent_in("a < b, <thin"));
    /// assert!(!M.absent_in("x</think>"));
    /// ```
    #[inline]
    pub fn absent_in(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        // A hit of a first byte is usually plain text ("Hello" for a marker starting with `H`):
        // the literal's first two bytes reject it before any full comparison.
        let hit = |i: usize| {
            let rest = &bytes[i..];
            self.literals.iter().any(|l| {
                let l = l.as_bytes();
                l.len() <= rest.len()
                    && l.first() == rest.first()
                    && (l.len() < 2 || l[1] == rest[1])
                    && rest.starts_with(l)
            })
        };
        match *self.first_bytes {
            [] => true,
            [a] => !memchr::memchr_iter(a, bytes).any(hit),
            [a, b] => !memchr::memchr2_iter(a, b, bytes).any(hit),
            [a, b, c] => !memchr::memchr3_iter(a, b, c, bytes).any(hit),
            _ => !(0..bytes.len()).any(|i| self.first_bytes.contains(&bytes[i]) && hit(i)),
        }
    }
}

/// `text` stripped of Python white space (`str.strip()`, what `\s` matches), `None` when nothing
/// is left: the text of a whole-message pattern's group when no marker is present.
///
/// ```
/// use chatparse_runtime::__private::stripped;
/// assert_eq!(stripped("Hi there"), Some("Hi there"));
/// assert_eq!(stripped("\u{3000} Hi\r\n"), Some("Hi"));
/// assert_eq!(stripped(" \u{85}\t"), None);
/// ```
#[inline]
pub fn stripped(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    // Printable ASCII at both ends (the usual message) is not white space: nothing to strip.
    if let (Some(first), Some(last)) = (bytes.first(), bytes.last()) {
        if first.is_ascii_graphic() && last.is_ascii_graphic() {
            return Some(text);
        }
    }
    let (start, end) = crate::pyre::stripped_span(text)?;
    text.get(start..end)
}

/// What follows `head` in `text` after its leading Python white space, when that is there and
/// starts with a character that is not white space; `None` otherwise. The text a marker-free
/// answer reads after a substitution `^\s*(?:L)?` → `L` and a root pattern's literal `L` and
/// head (functionary v3.2's plain answer `all\n…`).
///
/// ```
/// use chatparse_runtime::__private::after_head;
/// assert_eq!(after_head(" \nall\nHi there ", "all\n"), Some("Hi there "));
/// assert_eq!(after_head("all\n Hi", "all\n"), None);
/// assert_eq!(after_head("all Hi", "all\n"), None);
/// assert_eq!(after_head("all\n", "all\n"), None);
/// assert_eq!(after_head("\u{3000}Hi", ""), Some("Hi"));
/// ```
#[inline]
pub fn after_head<'a>(text: &'a str, head: &str) -> Option<&'a str> {
    let rest = text
        .trim_start_matches(crate::pyre::unicode::is_space)
        .strip_prefix(head)?;
    rest.chars()
        .next()
        .is_some_and(|c| !crate::pyre::unicode::is_space(c))
        .then_some(rest)
}

/// The first character of `text` that is not Python white space (what `^\s*(.)` would read).
///
/// ```
/// use chatparse_runtime::__private::first_non_space;
/// assert_eq!(first_non_space(" \u{3000}\nHi"), Some('H'));
/// assert_eq!(first_non_space(" \t"), None);
/// ```
#[inline]
pub fn first_non_space(text: &str) -> Option<char> {
    text.chars().find(|&c| !crate::pyre::unicode::is_space(c))
}

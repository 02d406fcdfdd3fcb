//! [`JsonObject`]: a free-form JSON object (a tool call's arguments) kept as the text the model
//! wrote until someone asks for its keys.

use std::borrow::Cow;
use std::fmt;

use serde::{Serialize, Serializer};

use super::{Map, Value};
use crate::py::json;

/// A JSON object whose keys the schema leaves free (`"additionalProperties": {}`, as tool-call
/// arguments are): in a generated parser, the object's JSON text as the model wrote it, checked,
/// and parsed into a [`Map`] only when asked — or the map itself, when the object reached its
/// node already parsed (inside a call's JSON that was parsed as a whole).
///
/// Why: a server usually only writes the arguments out again (OpenAI's `arguments` is a JSON
/// text), and building the map — a `String` per key and per string value — was most of what a
/// one-call parse cost. The text is checked when the message is parsed, so a message that
/// parses has arguments that parse: [`JsonObject::to_map`] gives exactly the dict Python's
/// `json.loads` gives (what `Schema::parse` and the reference return), and serializing, comparing
/// and [`JsonObject::to_value`] all go through it.
///
/// ```
/// use chatparse_runtime::value::JsonObject;
/// use chatparse_runtime::json;
///
/// let arguments = JsonObject::from_text(r#" {"city": "Zürich", "days": 3} "#.into()).unwrap();
/// assert_eq!(arguments.text(), Some(r#"{"city": "Zürich", "days": 3}"#));
/// assert_eq!(arguments.to_value(), json!({"city": "Zürich", "days": 3}));
/// assert_eq!(serde_json::to_string(&arguments).unwrap(), r#"{"city":"Zürich","days":3}"#);
/// assert_eq!(arguments, JsonObject::from(json!({"city": "Zürich", "days": 3}).as_object().unwrap().clone()));
///
/// // Anything it cannot vouch for is handed back, for the full parse to report on.
/// assert!(JsonObject::from_text("[1, 2]".into()).is_err());
/// assert!(JsonObject::from_text(r#"{"a": NaN}"#.into()).is_err());
/// ```
#[derive(Clone)]
pub struct JsonObject<'a>(Repr<'a>);

#[derive(Clone)]
enum Repr<'a> {
    /// A JSON object's text (no whitespace around it) that `json.loads` parses into a dict.
    Text(Cow<'a, str>),
    /// The dict.
    Map(Map),
}

impl<'a> JsonObject<'a> {
    /// `text` when it holds one JSON object (Python's whitespace around it allowed) that Python's
    /// `json.loads` certainly parses into a dict, checked without building anything; otherwise
    /// `text` back. The check is conservative: it hands back valid JSON it does not vouch for
    /// (`NaN`, surrogate escapes, floats that overflow, nesting deeper than 128), which a full
    /// parse then reads.
    pub fn from_text(text: Cow<'a, str>) -> Result<Self, Cow<'a, str>> {
        let Some((start, end)) = json::object_span(&text) else {
            return Err(text);
        };
        let text = match text {
            Cow::Borrowed(text) => Cow::Borrowed(&text[start..end]),
            Cow::Owned(mut text) if start == 0 => {
                text.truncate(end);
                Cow::Owned(text)
            }
            Cow::Owned(text) => Cow::Owned(text[start..end].to_owned()),
        };
        Ok(JsonObject(Repr::Text(text)))
    }

    /// Text that is known to be a JSON object `json.loads` parses into a dict: a value inside
    /// an object that was checked as a whole.
    pub(crate) fn vouched(text: Cow<'a, str>) -> Self {
        JsonObject(Repr::Text(text))
    }

    /// The object's JSON text exactly as the model wrote it (without the whitespace around it),
    /// when it was kept as text; `None` when it reached its node already parsed.
    pub fn text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(text) => Some(text),
            Repr::Map(_) => None,
        }
    }

    /// The object as a dict: parsed now when it was kept as text.
    pub fn to_map(&self) -> Cow<'_, Map> {
        match &self.0 {
            Repr::Text(text) => Cow::Owned(parse_vouched(text)),
            Repr::Map(map) => Cow::Borrowed(map),
        }
    }

    /// [`JsonObject::to_map`], taking the object.
    pub fn into_map(self) -> Map {
        match self.0 {
            Repr::Text(text) => parse_vouched(&text),
            Repr::Map(map) => map,
        }
    }

    /// The object as JSON: exactly what the interpreter returns for it.
    pub fn to_value(&self) -> Value {
        Value::Object(self.to_map().into_owned())
    }

    /// The same object, not borrowing from the model output.
    pub fn into_owned(self) -> JsonObject<'static> {
        JsonObject(match self.0 {
            Repr::Text(text) => Repr::Text(Cow::Owned(text.into_owned())),
            Repr::Map(map) => Repr::Map(map),
        })
    }
}

/// Parses text that [`json::object_span`] vouched for. It cannot fail; were it ever to, debug
/// builds (every test) stop, and release builds give the empty dict rather than abort a server.
fn parse_vouched(text: &str) -> Map {
    match json::loads(text) {
        Ok(Value::Object(map)) => map,
        other => {
            debug_assert!(false, "vouched-for JSON object did not parse: {other:?}");
            Map::new()
        }
    }
}

impl From<Map> for JsonObject<'_> {
    fn from(map: Map) -> Self {
        JsonObject(Repr::Map(map))
    }
}

impl PartialEq for JsonObject<'_> {
    /// Equal dicts (the same entries, in any order, as [`Map`] compares), however each is held.
    fn eq(&self, other: &Self) -> bool {
        match (self.text(), other.text()) {
            (Some(a), Some(b)) if a == b => true,
            _ => self.to_map() == other.to_map(),
        }
    }
}

impl fmt::Debug for JsonObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Text(text) => f.debug_tuple("JsonObject").field(text).finish(),
            Repr::Map(map) => f.debug_tuple("JsonObject").field(map).finish(),
        }
    }
}

impl Serialize for JsonObject<'_> {
    /// As the dict: what the interpreter's value serializes to.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_map().serialize(serializer)
    }
}

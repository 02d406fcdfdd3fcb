//! JSON text out of a [`Value`] (iterative), and `serde` in and out.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{Map, Number, Value};

/// Pretty JSON exactly as `serde_json::to_string_pretty` writes it (two-space indent).
///
/// ```
/// let v = chatparse_runtime::json!({"a": [], "b": {}});
/// assert_eq!(chatparse_runtime::value::to_string_pretty(&v), "{\n  \"a\": [],\n  \"b\": {}\n}");
/// ```
pub fn to_string_pretty(value: &Value) -> String {
    to_json_string(value, true)
}

/// Any `Serialize` value as a [`Value`], as `serde_json::to_value` builds a `serde_json::Value`:
/// keys in the order serialized, integers exact. Errors are `serde_json`'s (e.g. a map key that is
/// not a string, number or boolean).
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Call { name: &'static str, id: u128 }
/// let v = chatparse_runtime::value::to_value(&Call { name: "f", id: u128::MAX }).unwrap();
/// assert_eq!(v.to_string(), r#"{"name":"f","id":340282366920938463463374607431768211455}"#);
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, serde_json::Error> {
    value.serialize(super::to_value::ValueSerializer)
}

/// `serde_json`'s escaping: `"`, `\` and control characters; nothing else.
pub(crate) fn write_str(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0A => "\\n",
            0x0C => "\\f",
            0x0D => "\\r",
            0x00..=0x1F => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xF) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Compact or pretty JSON text, as `serde_json` writes it, with an explicit stack.
pub(crate) fn to_json_string(value: &Value, pretty: bool) -> String {
    let mut out = String::new();
    write_json(value, pretty, &mut out);
    out
}

/// Appends `value`'s JSON text to `out` (see [`to_json_string`]).
pub(crate) fn write_json(value: &Value, pretty: bool, out: &mut String) {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(super::Iter<'a>, bool),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Null => out.push_str("null"),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Number(n) => {
                    use fmt::Write;
                    let _ = write!(out, "{n}");
                }
                Value::String(s) => write_str(s, out),
                Value::Array(a) if a.is_empty() => out.push_str("[]"),
                Value::Array(a) => {
                    out.push('[');
                    stack.push(Frame::Array(a.iter(), true));
                }
                Value::Object(m) if m.is_empty() => out.push_str("{}"),
                Value::Object(m) => {
                    out.push('{');
                    stack.push(Frame::Object(m.iter(), true));
                }
            }
        }
        let depth = stack.len();
        match stack.last_mut() {
            None => return,
            Some(Frame::Array(items, first)) => match items.next() {
                Some(v) => {
                    if !std::mem::replace(first, false) {
                        out.push(',');
                    }
                    if pretty {
                        newline(out, depth);
                    }
                    next = Some(v);
                }
                None => {
                    stack.pop();
                    if pretty {
                        newline(out, depth - 1);
                    }
                    out.push(']');
                }
            },
            Some(Frame::Object(entries, first)) => match entries.next() {
                Some((k, v)) => {
                    if !std::mem::replace(first, false) {
                        out.push(',');
                    }
                    if pretty {
                        newline(out, depth);
                    }
                    write_str(k, out);
                    out.push_str(if pretty { ": " } else { ":" });
                    next = Some(v);
                }
                None => {
                    stack.pop();
                    if pretty {
                        newline(out, depth - 1);
                    }
                    out.push('}');
                }
            },
        }
    }
}

/// How deep [`Value`]'s `Serialize` recurses through `serde`; deeper containers go out as one
/// `serde_json` `RawValue` of their compact text, written by the iterative writer above.
///
/// `serde`'s data model is recursive: each level costs a chain of serializer frames, about 150
/// bytes optimised and up to 1 KB unoptimised (the serializer is monomorphised in the caller's
/// crate). 128 levels (also `serde_json`'s own reading limit) therefore need at most ~128 KB of
/// stack, whatever the value's depth.
pub const SERDE_DEPTH: usize = 128;

/// A value `depth` levels down from the one being serialized.
struct Nested<'a>(&'a Value, usize);

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Nested(value, depth) = *self;
        match value {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => n.serialize(serializer),
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(a) if a.is_empty() => serializer.collect_seq(a),
            Value::Object(m) if m.is_empty() => serializer.collect_map(m),
            _ if depth >= SERDE_DEPTH => {
                let raw = serde_json::value::RawValue::from_string(to_json_string(value, false))
                    .map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
            Value::Array(a) => serializer.collect_seq(a.iter().map(|v| Nested(v, depth + 1))),
            Value::Object(m) => {
                let mut map = serializer.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, &Nested(v, depth + 1))?;
                }
                map.end()
            }
        }
    }
}

impl Serialize for Value {
    /// As `serde_json::Value` does, keys in order and integers exact (see [`Number`]'s impl).
    ///
    /// Containers nested deeper than [`SERDE_DEPTH`] go out as a `serde_json` `RawValue`: with
    /// `serde_json`'s compact writer the text is the same, and the stack stays bounded; its pretty
    /// writer prints them compact, and serializers other than `serde_json`'s see a one-field
    /// struct there.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Nested(self, 0).serialize(serializer)
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, &Nested(v, 1))?;
        }
        map.end()
    }
}

/// The one key of the map `serde_json` deserializes a number as under `arbitrary_precision`.
const ARBITRARY_PRECISION_TOKEN: &str = "$serde_json::private::Number";

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_i128<E>(self, n: i128) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u128<E>(self, n: u128) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::from(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.is_empty() && k == ARBITRARY_PRECISION_TOKEN {
                // A number from a serde_json built with `arbitrary_precision` (in another crate
                // of the build): its text.
                let text: String = map.next_value()?;
                let n = Number::from_integer_str(&text)
                    .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64))
                    .ok_or_else(|| de::Error::custom(format!("invalid number {text}")))?;
                return Ok(Value::Number(n));
            }
            let v = map.next_value::<Value>()?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

impl<'de> Deserialize<'de> for Value {
    /// Any self-describing format; objects keep the order the deserializer gives their entries.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(m) => Ok(m),
            other => Err(de::Error::invalid_type(
                de::Unexpected::Other(crate::py::python_type(&other)),
                &"a JSON object",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => Ok(n),
            _ => Err(de::Error::custom("expected a JSON number")),
        }
    }
}

//! A tool call read while the model is still writing it: its name as soon as the name is
//! complete, then its arguments' JSON text as it arrives, so the OpenAI adapter can send
//! `function.name` and `function.arguments` fragments before the call closes.
//!
//! Two call shapes are read this way, recognised from the schema of the calls' items:
//!
//! * **JSON object** (`hermes`, `qwen3`, `smollm3`, `ernie4_5`): the call is
//!   `{"name": "…", "arguments": {…}}`, items with `x-parser: json`.
//! * **Header, then JSON** (`kimi_k2`, `functionary_v3_1`, `deepseek_v3_1`, `deepseek_r1`): a header
//!   names the function (`<function=NAME>`, `functions.NAME:0<|tool_call_argument_begin|>`), the
//!   arguments are the JSON object after it, items whose `function` has an `x-regex` and whose
//!   `arguments` have `x-parser: json`.
//!
//! Why this cannot disagree with the final message: the sketch only ever reads text that is
//! already final (the raw text of the open call), and it gives up (the call is then sent whole
//! when it closes) whenever the text is not in the simple form whose final value it can
//! predict: a JSON object whose first key is `name` (a string without brackets) and whose second
//! is `arguments` (an object); a header without brackets before the first `{`, that the items'
//! schema reads as a call when `{}` follows it. The adapter still compares what it sent with the
//! closed call and fails the stream if they differ ([`ParseErrorKind::StreamedCallChanged`]
//! (crate::ParseErrorKind)): a call object that writes `name`, `arguments` or `id` again after its
//! arguments.

use crate::py;
use crate::schema::interp::{parse_node, Walk};
use crate::schema::{Items, Node, ParserKind, Schema};
use crate::stream::region_shape;
use crate::support::Content;
use crate::value::Value;

use super::{call_parts, field_kind, FieldKind};

/// How the calls of a spec are written, as far as a sketch needs to know.
#[derive(Debug, Clone)]
pub(crate) struct CallShape {
    schema: Schema,
    field: String,
    /// The iterator's opener; the item's text starts after it unless `capture_from_opener`.
    opener_len: usize,
    header: bool,
}

impl CallShape {
    /// The shape of `schema`'s tool calls, if they are one of the two the sketch reads.
    pub(crate) fn of(schema: &Schema) -> Option<Self> {
        let root = schema.root();
        let property = root
            .properties
            .iter()
            .flatten()
            .find(|p| field_kind(&p.name) == FieldKind::ToolCalls)?;
        let node = &property.node;
        let iterator = node.iterator.as_ref()?;
        let region = region_shape(&iterator.regex).ok()?;
        let Items::Each(items) = &node.items else {
            return None;
        };
        let header = if is_json_object_call(items) {
            false
        } else if is_header_call(items) {
            true
        } else {
            return None;
        };
        Some(CallShape {
            schema: schema.clone(),
            field: property.name.clone(),
            opener_len: if region.capture_from_opener {
                0
            } else {
                region.opener.len()
            },
            header,
        })
    }

    /// Whether calls are `{"name": …, "arguments": …}` JSON objects (not a header then JSON).
    pub(crate) fn is_json_object(&self) -> bool {
        !self.header
    }

    fn items(&self) -> Option<&Node> {
        match &self.schema.root().property(&self.field)?.items {
            Items::Each(items) => Some(items),
            _ => None,
        }
    }
}

/// Items that parse `{"name": N, "arguments": A}` JSON into a call named N with arguments A.
fn is_json_object_call(items: &Node) -> bool {
    if items.has_regex() || !matches!(&items.parser, Some(p) if p.kind == ParserKind::Json) {
        return false;
    }
    let probe = r#"{"name": "probe_name", "arguments": {"probe": [1]}}"#;
    let Ok(value) = parse_node(items, Content::borrowed(probe), &mut Walk::strict()) else {
        return false;
    };
    call_parts(&value).is_some_and(|call| {
        call.name == "probe_name"
            && call.id.is_none()
            && py::identical(&call.arguments, &crate::json!({"probe": [1]}))
    })
}

/// Items whose `function` reads a header and JSON arguments with a regex.
fn is_header_call(items: &Node) -> bool {
    if items.has_regex() || items.parser.is_some() {
        return false;
    }
    let Some(function) = items.property("function") else {
        return false;
    };
    let Some(arguments) = function.property("arguments") else {
        return false;
    };
    function.regex.is_some()
        && function.parser.is_none()
        && arguments.substitutions.is_empty()
        && arguments.regex.is_none()
        && matches!(&arguments.parser, Some(p) if p.kind == ParserKind::Json && p.transform.is_none())
}

/// Where the sketch of one call stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Reading the JSON object's keys (JSON shape) or waiting for the arguments' `{` (header
    /// shape); `at` is where reading resumes in the call's raw text.
    Head { at: usize },
    /// In the arguments: they start at `start`, and `at` is how far they were scanned.
    Arguments { start: usize, at: usize },
    /// The arguments ended at `end` (exclusive).
    Done { start: usize, end: usize },
    /// The call is not in a form the sketch can predict: it is sent when it closes.
    GaveUp,
}

/// One call being read (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Sketch {
    stage: Stage,
    /// The JSON shape: the name, once its string is complete.
    name: Option<String>,
    /// The header shape: the name and the model's id, once the header is complete.
    header: Option<(String, Option<String>)>,
    /// The JSON scan of the arguments: nesting depth, inside a string, after a backslash.
    depth: usize,
    in_string: bool,
    escaped: bool,
}

/// What a sketch knows of its call so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Known<'a> {
    /// The function's name (complete).
    pub name: &'a str,
    /// The model's own id, if its header carries one.
    pub id: Option<&'a str>,
    /// Where the arguments start in the call's raw text.
    pub start: usize,
    /// The arguments' text known so far.
    pub arguments: &'a str,
}

impl Sketch {
    /// A sketch of a call whose raw text starts with the iterator's opener.
    pub(crate) fn new(shape: &CallShape) -> Self {
        Sketch {
            stage: Stage::Head {
                at: shape.opener_len,
            },
            name: None,
            header: None,
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }

    /// Reads `raw` (the call's raw text so far, which only grows) and returns what is known.
    pub(crate) fn read<'a>(&'a mut self, shape: &CallShape, raw: &'a str) -> Option<Known<'a>> {
        if let Stage::Head { at } = self.stage {
            self.stage = if shape.header {
                self.header(shape, raw, at)
            } else {
                self.json_head(raw, at)
            };
        }
        if let Stage::Arguments { start, at } = self.stage {
            self.stage = self.scan_arguments(raw, start, at);
        }
        let (start, end) = match self.stage {
            Stage::Arguments { start, at } => (start, at),
            Stage::Done { start, end } => (start, end),
            Stage::Head { .. } | Stage::GaveUp => return None,
        };
        let (name, id) = match (&self.name, &self.header) {
            (Some(name), _) => (name.as_str(), None),
            (None, Some((name, id))) => (name.as_str(), id.as_deref()),
            (None, None) => return None,
        };
        Some(Known {
            name,
            id,
            start,
            arguments: raw.get(start..end)?,
        })
    }

    /// The header shape: the arguments start at the first `{`; the header before it must read
    /// as a call (the items' schema on the header followed by `{}`).
    fn header(&mut self, shape: &CallShape, raw: &str, at: usize) -> Stage {
        let Some(body) = raw.get(at..) else {
            return Stage::GaveUp;
        };
        let Some(brace) = body.find(['{', '[']) else {
            return Stage::Head { at };
        };
        if body.as_bytes()[brace] == b'[' {
            return Stage::GaveUp;
        }
        let probe = format!("{}{{}}", &body[..brace]);
        let Some(items) = shape.items() else {
            return Stage::GaveUp;
        };
        let parsed = parse_node(items, Content::borrowed(&probe), &mut Walk::strict());
        match parsed.ok().as_ref().and_then(call_parts) {
            Some(call) if matches!(&call.arguments, Value::Object(o) if o.is_empty()) => {
                self.header = Some((call.name, call.id));
                Stage::Arguments {
                    start: at + brace,
                    at: at + brace,
                }
            }
            _ => Stage::GaveUp,
        }
    }

    /// The JSON shape: `{`, `"name"`, `:`, a string, `,`, `"arguments"`, `:`, then the
    /// arguments' `{`. Anything else gives up.
    fn json_head(&mut self, raw: &str, at: usize) -> Stage {
        let bytes = raw.as_bytes();
        let mut i = skip_space(bytes, at);
        let expect = |i: &mut usize, lit: &[u8]| -> Option<bool> {
            let have = bytes.get(*i..).unwrap_or_default();
            if have.len() < lit.len() {
                return lit.starts_with(have).then_some(false);
            }
            if !have.starts_with(lit) {
                return None;
            }
            *i = skip_space(bytes, *i + lit.len());
            Some(true)
        };
        for lit in [&b"{"[..], b"\"name\"", b":"] {
            match expect(&mut i, lit) {
                Some(true) => {}
                Some(false) => return Stage::Head { at },
                None => return Stage::GaveUp,
            }
        }
        // The name: a complete JSON string without brackets or escapes.
        if bytes.get(i).is_none() {
            return Stage::Head { at };
        }
        if bytes[i] != b'"' {
            return Stage::GaveUp;
        }
        let Some(len) = bytes[i + 1..].iter().position(|&b| b == b'"') else {
            if bytes[i + 1..]
                .iter()
                .any(|b| matches!(b, b'\\' | b'{' | b'[' | b'}' | b']'))
            {
                return Stage::GaveUp;
            }
            return Stage::Head { at };
        };
        let name = &raw[i + 1..i + 1 + len];
        if name.contains(['\\', '{', '[', '}', ']']) || name.chars().any(char::is_control) {
            return Stage::GaveUp;
        }
        i = skip_space(bytes, i + len + 2);
        for lit in [&b","[..], b"\"arguments\"", b":"] {
            match expect(&mut i, lit) {
                Some(true) => {}
                Some(false) => return Stage::Head { at },
                None => return Stage::GaveUp,
            }
        }
        match bytes.get(i) {
            None => Stage::Head { at },
            Some(b'{') => {
                self.name = Some(name.to_owned());
                Stage::Arguments { start: i, at: i }
            }
            Some(_) => Stage::GaveUp,
        }
    }

    /// Scans the arguments' JSON from `at`: brackets outside strings until the object closes.
    fn scan_arguments(&mut self, raw: &str, start: usize, at: usize) -> Stage {
        let bytes = raw.as_bytes();
        let mut i = at;
        while let Some(&b) = bytes.get(i) {
            i += 1;
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Stage::Done { start, end: i };
                    }
                }
                _ => {}
            }
        }
        // `raw` is whole characters (chunks are `str`s), so its end is a character boundary.
        Stage::Arguments { start, at: i }
    }
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

//! Content parsers, transforms and tool-argument coercion: what happens to a region's text when
//! it closes (`process_field` and `_coerce_tool_calls` of the reference).
//!
//! Transforms and coercion work on [`Obj`], a small model of Python objects with shared
//! identity: a placeholder puts the *same* object into the result (as Python does), so when
//! coercion rewrites a tool call's `arguments` dict in place, every other place of the value that
//! holds that dict sees the change too, exactly as in the reference.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::value::{Map, Number, Value};
use once_cell::sync::Lazy;

use super::{ContentParser, Field, JsonArgs, KvArgs, Transform, XmlArgs};
use crate::error::{ParseError, ParseErrorKind};
use crate::py::coerce::{self, CoerceError};
use crate::py::json::{self, JsonError};
use crate::py::python_type;
use crate::py::strip as py_strip;
use crate::pyre::{PyRegex, Replacement};

fn err(pointer: &str, message: impl Into<String>) -> ParseError {
    ParseError::new(pointer, ParseErrorKind::StreamField(message.into()))
}

fn text_arg(text: &str, strip: bool) -> &str {
    if strip {
        py_strip(text)
    } else {
        text
    }
}

/// `parse_content(text, name, args)`.
pub(crate) fn parse_content(
    text: &str,
    parser: &ContentParser,
    pointer: &str,
) -> Result<Value, ParseError> {
    match parser {
        ContentParser::Text { strip } => Ok(Value::String(text_arg(text, *strip).to_owned())),
        ContentParser::Int { strip } => {
            let t = text_arg(text, *strip);
            coerce::int_from_str(t)
                .map(Value::Number)
                .map_err(|_| ParseError::new(pointer, ParseErrorKind::InvalidInteger(t.to_owned())))
        }
        ContentParser::Float { strip } => {
            let t = text_arg(text, *strip);
            match coerce::float_from_str(t) {
                Ok(f) => coerce::float_value(f).map_err(|_| {
                    ParseError::new(pointer, ParseErrorKind::NumberOutOfRange(t.to_owned()))
                }),
                Err(CoerceError::NonFinite) => Err(ParseError::new(
                    pointer,
                    ParseErrorKind::NumberOutOfRange(format!("float({t:?}) is not finite")),
                )),
                Err(_) => Err(ParseError::new(
                    pointer,
                    ParseErrorKind::InvalidNumber(t.to_owned()),
                )),
            }
        }
        ContentParser::Bool { strip } => Ok(Value::Bool(
            coerce::bool_from_str(text_arg(text, *strip)) == Some(true),
        )),
        ContentParser::Json(args) => json(text, args, pointer),
        ContentParser::XmlInline(args) => xml_inline(text, args, pointer),
        ContentParser::KvLines(args) => kv_lines(text, args, pointer),
    }
}

const LAX_OPEN: char = '\u{1}';
const LAX_CLOSE: char = '\u{2}';

static UNQUOTED_KEY: Lazy<Option<(PyRegex, Replacement)>> = Lazy::new(|| {
    let re = PyRegex::new(r"(?<=[{,])(\w+):").ok()?;
    let rep = Replacement::parse(r#""\1":"#, &re).ok()?;
    Some((re, rep))
});

fn json(text: &str, args: &JsonArgs, pointer: &str) -> Result<Value, ParseError> {
    if !args.string_delims.is_empty() && text.contains([LAX_OPEN, LAX_CLOSE]) {
        return Err(err(
            pointer,
            "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse safely",
        ));
    }
    let mut working = text.to_owned();
    let mut captured: Vec<String> = Vec::new();
    for re in &args.string_delims {
        // re.sub with a function: each match becomes a sentinel, its group 1 is kept.
        let mut out = String::with_capacity(working.len());
        let mut last = 0;
        for caps in re.find_iter(&working) {
            let caps = caps.map_err(|e| ParseError::regex(pointer, e))?;
            out.push_str(working.get(last..caps.start()).unwrap_or(""));
            captured.push(caps.get(1).unwrap_or("").to_owned());
            out.push(LAX_OPEN);
            out.push_str(&(captured.len() - 1).to_string());
            out.push(LAX_CLOSE);
            last = caps.end();
        }
        out.push_str(working.get(last..).unwrap_or(""));
        working = out;
    }
    if args.unquoted_keys {
        let Some((re, rep)) = UNQUOTED_KEY.as_ref() else {
            return Err(err(
                pointer,
                "json: the unquoted-key pattern does not compile",
            ));
        };
        working = re
            .sub(rep, &working)
            .map_err(|e| ParseError::regex(pointer, e))?;
    }
    if !captured.is_empty() {
        working = restore_strings(&working, &captured);
    }
    match json::loads(&working) {
        Ok(v) => Ok(v),
        Err(e) if e.is_decode_error() && args.allow_non_json => {
            Ok(Value::String(text_arg(text, args.strip).to_owned()))
        }
        Err(e) => Err(ParseError::new(pointer, ParseErrorKind::Json(e))),
    }
}

/// `working.replace(f"\x01{i}\x02", json.dumps(s))` for every captured string, in one pass (the
/// text has no other sentinels, and a `json.dumps` result contains none).
fn restore_strings(working: &str, captured: &[String]) -> String {
    let mut out = String::with_capacity(working.len());
    let mut rest = working;
    while let Some(open) = rest.find(LAX_OPEN) {
        out.push_str(rest.get(..open).unwrap_or(""));
        let after = rest.get(open + 1..).unwrap_or("");
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let index = after.get(..digits).and_then(|d| d.parse::<usize>().ok());
        let closes = after
            .get(digits..)
            .is_some_and(|r| r.starts_with(LAX_CLOSE));
        match (index.and_then(|i| captured.get(i)), closes) {
            (Some(s), true) => {
                json::write_ascii_string(s, &mut out);
                rest = after.get(digits + 1..).unwrap_or("");
            }
            _ => {
                out.push(LAX_OPEN);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `_sub_parse(raw, value_parser)`; `raw` is `None` when the `value` group did not take part.
fn sub_parse(
    raw: Option<&str>,
    parser: Option<&ContentParser>,
    pointer: &str,
) -> Result<Value, ParseError> {
    match (raw, parser) {
        (Some(raw), None) => Ok(Value::String(raw.to_owned())),
        (Some(raw), Some(p)) => parse_content(raw, p, pointer),
        (None, None) | (None, Some(ContentParser::Text { strip: false })) => Ok(Value::Null),
        (None, Some(_)) => Err(err(
            pointer,
            "xml-inline: the `value` group did not take part in a match, and the value parser \
             cannot take None",
        )),
    }
}

fn xml_inline(text: &str, args: &XmlArgs, pointer: &str) -> Result<Value, ParseError> {
    let mut out = Map::new();
    for caps in args.tag_pattern.find_iter(text) {
        let caps = caps.map_err(|e| ParseError::regex(pointer, e))?;
        let Some(key) = caps.get(args.key_group) else {
            return Err(err(
                pointer,
                "xml-inline: the `key` group of tag_pattern did not take part in a match",
            ));
        };
        let raw = match args.value_group {
            None => Some(""),
            Some(g) => caps.get(g),
        };
        let value = sub_parse(raw, args.value_parser.as_deref(), pointer)?;
        match out.get_mut(key) {
            Some(existing) if args.merge_duplicates => {
                if let Value::Array(list) = existing {
                    list.push(value);
                } else {
                    let first = std::mem::take(existing);
                    *existing = Value::Array(vec![first, value]);
                }
            }
            _ => {
                out.insert(key.to_owned(), value);
            }
        }
    }
    Ok(Value::Object(out))
}

fn kv_lines(text: &str, args: &KvArgs, pointer: &str) -> Result<Value, ParseError> {
    let mut out = Map::new();
    for line in text.split(args.line_sep.as_str()) {
        let line = text_arg(line, args.strip);
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once(args.kv_sep.as_str()) else {
            continue;
        };
        let (k, v) = (text_arg(k, args.strip), text_arg(v, args.strip));
        let value = sub_parse(Some(v), args.value_parser.as_deref(), pointer)?;
        out.insert(k.to_owned(), value);
    }
    Ok(Value::Object(out))
}

/// A Python object as far as transforms and coercion can tell: containers have identity.
#[derive(Debug, Clone)]
pub(crate) enum Obj {
    Leaf(Value),
    List(Rc<RefCell<Vec<Obj>>>),
    Dict(Rc<RefCell<Vec<(String, Obj)>>>),
}

impl Drop for Obj {
    /// Iterative: the children of containers this is the last owner of are taken out onto a heap
    /// stack first, so deep trees cost no thread stack.
    fn drop(&mut self) {
        fn take_children(obj: &mut Obj, out: &mut Vec<Obj>) {
            match obj {
                Obj::List(items) if Rc::strong_count(items) == 1 => {
                    out.append(&mut items.borrow_mut());
                }
                Obj::Dict(entries) if Rc::strong_count(entries) == 1 => {
                    out.extend(entries.borrow_mut().drain(..).map(|(_, v)| v));
                }
                _ => {}
            }
        }
        let mut pending = Vec::new();
        take_children(self, &mut pending);
        while let Some(mut obj) = pending.pop() {
            take_children(&mut obj, &mut pending);
        }
    }
}

impl Obj {
    /// A fresh object tree (no sharing), like the result of `json.loads`.
    ///
    /// Iterative (an explicit stack of open containers): deep arguments cost no thread stack.
    pub(crate) fn from_value(v: Value) -> Obj {
        enum Open {
            List(std::vec::IntoIter<Value>, Vec<Obj>),
            Dict(crate::value::IntoIter, Vec<(String, Obj)>, String),
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut next = Some(v);
        loop {
            let mut done = match next.take() {
                Some(Value::Array(items)) => {
                    let len = items.len();
                    stack.push(Open::List(items.into_iter(), Vec::with_capacity(len)));
                    None
                }
                Some(Value::Object(map)) => {
                    let len = map.len();
                    stack.push(Open::Dict(
                        map.into_iter(),
                        Vec::with_capacity(len),
                        String::new(),
                    ));
                    None
                }
                Some(leaf) => Some(Obj::Leaf(leaf)),
                None => None,
            };
            loop {
                let Some(top) = stack.last_mut() else {
                    return done.unwrap_or(Obj::Leaf(Value::Null));
                };
                match top {
                    Open::List(items, out) => {
                        out.extend(done.take());
                        if let Some(item) = items.next() {
                            next = Some(item);
                            break;
                        }
                    }
                    Open::Dict(entries, out, key) => {
                        if let Some(obj) = done.take() {
                            out.push((std::mem::take(key), obj));
                        }
                        if let Some((k, v)) = entries.next() {
                            *key = k;
                            next = Some(v);
                            break;
                        }
                    }
                }
                done = Some(match stack.pop() {
                    Some(Open::List(_, out)) => Obj::List(Rc::new(RefCell::new(out))),
                    Some(Open::Dict(_, out, _)) => Obj::Dict(Rc::new(RefCell::new(out))),
                    None => unreachable!("the stack had a top"),
                });
            }
        }
    }

    /// The object as JSON. Iterative, like [`Obj::from_value`].
    pub(crate) fn to_value(&self) -> Value {
        enum Open {
            List(Rc<RefCell<Vec<Obj>>>, usize, Vec<Value>),
            Dict(Rc<RefCell<Vec<(String, Obj)>>>, usize, Map, String),
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut next = Some(self.clone());
        loop {
            let mut done = match &next.take() {
                Some(Obj::Leaf(v)) => Some(v.clone()),
                Some(Obj::List(items)) => {
                    let len = items.borrow().len();
                    stack.push(Open::List(items.clone(), 0, Vec::with_capacity(len)));
                    None
                }
                Some(Obj::Dict(entries)) => {
                    let len = entries.borrow().len();
                    stack.push(Open::Dict(
                        entries.clone(),
                        0,
                        Map::with_capacity(len),
                        String::new(),
                    ));
                    None
                }
                None => None,
            };
            loop {
                let Some(top) = stack.last_mut() else {
                    return done.unwrap_or(Value::Null);
                };
                match top {
                    Open::List(items, at, out) => {
                        out.extend(done.take());
                        if let Some(item) = items.borrow().get(*at) {
                            *at += 1;
                            next = Some(item.clone());
                        }
                    }
                    Open::Dict(entries, at, out, key) => {
                        if let Some(v) = done.take() {
                            out.insert(std::mem::take(key), v);
                        }
                        if let Some((k, v)) = entries.borrow().get(*at) {
                            *at += 1;
                            *key = k.clone();
                            next = Some(v.clone());
                        }
                    }
                }
                if next.is_some() {
                    break;
                }
                done = Some(match stack.pop() {
                    Some(Open::List(_, _, out)) => Value::Array(out),
                    Some(Open::Dict(_, _, out, _)) => Value::Object(out),
                    None => unreachable!("the stack had a top"),
                });
            }
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Obj::Leaf(v) => python_type(v),
            Obj::List(_) => "list",
            Obj::Dict(_) => "dict",
        }
    }

    fn get(&self, key: &str) -> Option<Obj> {
        match self {
            Obj::Dict(entries) => entries
                .borrow()
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone()),
            _ => None,
        }
    }
}

/// `process_field(body, field, captures)`, then `_coerce_tool_calls` when tools are known.
pub(crate) fn process_field(
    body: &str,
    field: &Field,
    captures: &[(String, String)],
    tools: &ToolParams,
) -> Result<Value, ParseError> {
    let content_ptr = format!("{}/content", field.pointer);
    let value = parse_content(body, &field.content, &content_ptr)?;
    if field.transform.is_none() && tools.is_empty() {
        return Ok(value);
    }
    let obj = Obj::from_value(value);
    let obj = match &field.transform {
        None => obj,
        Some(t) => {
            let tptr = format!("{}/transform", field.pointer);
            let mut scope: Vec<(String, Obj)> = captures
                .iter()
                .map(|(k, v)| (k.clone(), Obj::Leaf(Value::String(v.clone()))))
                .collect();
            if field.transform_each {
                let Obj::List(items) = &obj else {
                    return Err(ParseError::new(
                        &tptr,
                        ParseErrorKind::StreamField(format!(
                            "field `{}`: transform_each requires the parsed content to be a list, got {}",
                            field.name,
                            obj.type_name()
                        )),
                    ));
                };
                let items: Vec<Obj> = items.borrow().clone();
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let Obj::Dict(entries) = &item else {
                        return Err(err(
                            &tptr,
                            format!(
                                "field `{}`: transform_each requires each list element to be a dict, got {}",
                                field.name,
                                item.type_name()
                            ),
                        ));
                    };
                    let mut item_scope = scope.clone();
                    item_scope.extend(entries.borrow().iter().cloned());
                    out.push(apply_transform(t, &item_scope, &tptr)?);
                }
                Obj::List(Rc::new(RefCell::new(out)))
            } else {
                scope.push(("content".to_owned(), obj));
                apply_transform(t, &scope, &tptr)?
            }
        }
    };
    let obj = if tools.is_empty() {
        obj
    } else {
        tools.coerce_calls(&obj, &field.pointer)?
    };
    Ok(obj.to_value())
}

/// `_apply_transform(transform, scope)`; later scope entries win (`{**captures, **item}`).
fn apply_transform(
    t: &Transform,
    scope: &[(String, Obj)],
    pointer: &str,
) -> Result<Obj, ParseError> {
    Ok(match t {
        Transform::Map(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let value = apply_transform(v, scope, pointer)?;
                // A JSON object has unique keys, so no duplicate can arise here.
                out.push((k.clone(), value));
            }
            Obj::Dict(Rc::new(RefCell::new(out)))
        }
        Transform::List(items) => Obj::List(Rc::new(RefCell::new(
            items
                .iter()
                .map(|v| apply_transform(v, scope, pointer))
                .collect::<Result<_, _>>()?,
        ))),
        Transform::Literal(v) => Obj::from_value(v.clone()),
        Transform::Placeholder { root, keys, path } => {
            let Some((_, mut value)) = scope.iter().rev().find(|(k, _)| k == root).cloned() else {
                let mut names: Vec<&str> = scope.iter().map(|(k, _)| k.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                return Err(ParseError::new(
                    pointer,
                    ParseErrorKind::Transform(format!(
                        "transform placeholder '{{{path}}}' is not defined. Available: {names:?}"
                    )),
                ));
            };
            for key in keys {
                if !matches!(value, Obj::Dict(_)) {
                    return Err(ParseError::new(
                        pointer,
                        ParseErrorKind::Transform(format!(
                            "transform placeholder '{{{path}}}' cannot index into {} at '{key}'",
                            value.type_name()
                        )),
                    ));
                }
                let Some(next) = value.get(key) else {
                    return Err(ParseError::new(
                        pointer,
                        ParseErrorKind::Transform(format!(
                            "transform placeholder '{{{path}}}' is missing key '{key}'"
                        )),
                    ));
                };
                value = next;
            }
            value
        }
    })
}

/// The tools' parameter schemas by tool name (`ResponseParser._tool_params`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolParams {
    by_name: HashMap<String, Map>,
}

impl ToolParams {
    /// Reads tools as `apply_chat_template` takes them: `{"type": "function", "function": {...}}`
    /// or a bare function dict; anything else is skipped.
    pub(crate) fn new(tools: &[Value]) -> Self {
        let mut by_name = HashMap::new();
        for tool in tools {
            let Some(obj) = tool.as_object() else {
                continue;
            };
            let Some(func) = obj.get("function").unwrap_or(tool).as_object() else {
                continue;
            };
            let Some(name) = func.get("name").and_then(Value::as_str) else {
                continue;
            };
            let properties = func
                .get("parameters")
                .and_then(Value::as_object)
                .and_then(|p| p.get("properties"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            by_name.insert(name.to_owned(), properties);
        }
        ToolParams { by_name }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// `_coerce_tool_calls(value)`.
    fn coerce_calls(&self, value: &Obj, pointer: &str) -> Result<Obj, ParseError> {
        if let Obj::List(items) = value {
            let items: Vec<Obj> = items.borrow().clone();
            let out = items
                .iter()
                .map(|item| self.coerce_calls(item, pointer))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Obj::List(Rc::new(RefCell::new(out))));
        }
        let Some(func @ Obj::Dict(_)) = value.get("function") else {
            return Ok(value.clone());
        };
        let name = match &func.get("name") {
            Some(Obj::Leaf(Value::String(s))) => s.clone(),
            _ => return Ok(value.clone()),
        };
        let arguments = match &func.get("arguments") {
            Some(Obj::Dict(arguments)) => arguments.clone(),
            _ => return Ok(value.clone()),
        };
        let Some(properties) = self.by_name.get(&name).filter(|p| !p.is_empty()) else {
            return Ok(value.clone());
        };
        let len = arguments.borrow().len();
        for i in 0..len {
            let Some((key, argument)) = arguments.borrow().get(i).cloned() else {
                break;
            };
            let Some(schema) = properties.get(&key) else {
                continue;
            };
            let types = schema_types(schema).map_err(|m| err(pointer, m))?;
            if types.is_empty() {
                continue;
            }
            let replacement = match &argument {
                Obj::Leaf(Value::String(raw)) => Some(coerce(raw, &types, pointer)?),
                Obj::List(items) if !types.iter().any(|t| t == "array") => {
                    let items: Vec<Obj> = items.borrow().clone();
                    let mut out = Vec::with_capacity(items.len());
                    for item in items {
                        out.push(match &item {
                            Obj::Leaf(Value::String(raw)) => coerce(raw, &types, pointer)?,
                            _ => item,
                        });
                    }
                    Some(Obj::List(Rc::new(RefCell::new(out))))
                }
                _ => None,
            };
            if let Some(new) = replacement {
                if let Ok(mut args) = arguments.try_borrow_mut() {
                    if let Some(slot) = args.get_mut(i) {
                        slot.1 = new;
                    }
                }
            }
        }
        Ok(value.clone())
    }
}

/// Python truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// `_schema_types(schema)`; `Err` where Python raises (a truthy `anyOf`/`oneOf` that is not
/// iterable).
fn schema_types(schema: &Value) -> Result<Vec<String>, String> {
    let Some(map) = schema.as_object() else {
        return Ok(Vec::new());
    };
    let mut types = Vec::new();
    match map.get("type") {
        Some(Value::String(s)) => types.push(s.clone()),
        Some(Value::Array(list)) => {
            types.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        _ => {}
    }
    for union in ["anyOf", "oneOf"] {
        match map.get(union) {
            Some(Value::Array(choices)) => {
                for choice in choices {
                    types.extend(schema_types(choice)?);
                }
            }
            // Iterating a dict or a str yields strings, which have no types.
            Some(Value::Object(_) | Value::String(_)) | None => {}
            Some(v) if !truthy(v) => {}
            Some(v) => {
                return Err(format!(
                    "TypeError: '{}' object is not iterable (the tool schema's {union})",
                    python_type(v)
                ))
            }
        }
    }
    if map.get("nullable").is_some_and(truthy) && !types.iter().any(|t| t == "null") {
        types.push("null".to_owned());
    }
    Ok(types)
}

/// `_coerce(raw, types)`.
fn coerce(raw: &str, types: &[String], pointer: &str) -> Result<Obj, ParseError> {
    for t in types {
        match t.as_str() {
            "integer" => {
                if let Ok(n) = coerce::int_from_str(raw) {
                    return Ok(Obj::Leaf(Value::Number(n)));
                }
                // Whole numbers written as floats ("3.0"); inf/nan are not whole.
                if let Ok(f) = coerce::float_from_str(raw) {
                    if f.fract() == 0.0 {
                        return Ok(Obj::Leaf(Value::Number(int_of_float(f))));
                    }
                }
            }
            "number" => {
                if let Ok(f) = coerce::float_from_str(raw) {
                    if f.fract() == 0.0 && !raw.contains('.') {
                        return Ok(Obj::Leaf(Value::Number(int_of_float(f))));
                    }
                    if let Ok(v) = coerce::float_value(f) {
                        return Ok(Obj::Leaf(v));
                    }
                }
            }
            "boolean" => {
                if let Some(b) = coerce::bool_from_str(py_strip(raw)) {
                    return Ok(Obj::Leaf(Value::Bool(b)));
                }
            }
            "null" => {
                if matches!(py_strip(raw), "null" | "None") {
                    return Ok(Obj::Leaf(Value::Null));
                }
            }
            "object" | "array" => {
                let want_object = t == "object";
                match json::loads(raw) {
                    Ok(v) => {
                        if (want_object && v.is_object()) || (!want_object && v.is_array()) {
                            return Ok(Obj::from_value(v));
                        }
                    }
                    Err(e @ (JsonError::NonFinite { .. } | JsonError::LoneSurrogate { .. })) => {
                        // Python returned a value JSON cannot carry; it is only kept when it is
                        // the container asked for.
                        let first = raw
                            .trim_start_matches([' ', '\t', '\n', '\r'])
                            .chars()
                            .next();
                        if first == Some(if want_object { '{' } else { '[' }) {
                            return Err(ParseError::new(pointer, ParseErrorKind::Json(e)));
                        }
                    }
                    Err(e @ JsonError::TooDeep { .. }) => {
                        return Err(ParseError::new(pointer, ParseErrorKind::Json(e)));
                    }
                    Err(_) => {}
                }
            }
            _ => {}
        }
    }
    Ok(Obj::Leaf(Value::String(raw.to_owned())))
}

/// Python's `int(f)` for a finite whole float, exactly.
pub(crate) fn int_of_float(f: f64) -> Number {
    if f.abs() < 9.0e18 {
        // Whole and below 2^63: the cast is exact.
        return Number::from(f as i64);
    }
    let bits = f.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    // |f| = mantissa * 2^exponent with exponent > 0 here (|f| ≥ 2^63).
    // Base 1e9 little-endian digits.
    let mut digits: Vec<u64> = vec![mantissa % 1_000_000_000, mantissa / 1_000_000_000];
    for _ in 0..exponent.max(0) {
        let mut carry = 0u64;
        for d in digits.iter_mut() {
            let v = *d * 2 + carry;
            *d = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            digits.push(carry);
        }
    }
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    let mut text = String::new();
    if f < 0.0 {
        text.push('-');
    }
    let mut iter = digits.iter().rev();
    if let Some(first) = iter.next() {
        text.push_str(&first.to_string());
    }
    for d in iter {
        text.push_str(&format!("{d:09}"));
    }
    Number::from_integer_str(&text).unwrap_or_else(|| Number::from(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_of_float_is_exact() {
        assert_eq!(int_of_float(3.0).to_string(), "3");
        assert_eq!(int_of_float(-0.0).to_string(), "0");
        assert_eq!(int_of_float(1e22).to_string(), "10000000000000000000000");
        assert_eq!(
            int_of_float(1e300).to_string(),
            "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"
        );
        assert_eq!(
            int_of_float(-9007199254740993.0).to_string(),
            "-9007199254740992"
        );
    }

    #[test]
    fn restore() {
        let caps = vec!["a\"b".to_owned(), "é".to_owned()];
        assert_eq!(
            restore_strings("{x:\u{1}0\u{2},y:\u{1}1\u{2}}", &caps),
            "{x:\"a\\\"b\",y:\"\\u00e9\"}"
        );
    }
}

//! Tool calls: find a way to hand calls to the template, classify how it writes them, and
//! isolate the markers around each call, its name and its arguments by comparing one call with
//! two, one argument with two, and values of every JSON type.

use std::fmt;

use chatparse_runtime::{json, Map, Value};

use super::probe::{Call, Msg, Prober};
use super::text::{exact_soft, first_marker, lit, marker_prefix, marker_suffix, trim};
use super::{fail, push_end, strip_empty_reasoning, Analysis, DeriveError};

/// How a template writes tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFormat {
    /// The template renders no tool calls.
    None,
    /// Bare JSON objects (`{"name": …, "arguments": …}`), each in its own wrapper or none.
    JsonObjects,
    /// One JSON array of call objects (`[TOOL_CALLS][{…}, …]`).
    JsonArray,
    /// A tag with the name, then JSON arguments (`<function=N>{…}</function>`).
    TagJson,
    /// A name prefix, then JSON arguments (`[TOOL_CALLS]N[ARGS]{…}`).
    NamePrefix,
    /// A channel header naming the recipient (`to=functions.N<|channel|>…{…}`, harmony).
    Channel,
    /// Special-token sections whose call id carries the name (Kimi's `functions.N:0`).
    SpecialTokenIds,
    /// Tags with tagged parameters (`<parameter=k>v</parameter>`, `<arg_key>`, DSML, `<invoke>`).
    TaggedParameters,
    /// Python calls (`[f(a=1, b='x')]`).
    Pythonic,
    /// Gemma 4's dialect: bare keys, `<|"|>` string delimiters.
    GemmaDialect,
}

impl fmt::Display for CallFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CallFormat::None => "none",
            CallFormat::JsonObjects => "json-objects",
            CallFormat::JsonArray => "json-array",
            CallFormat::TagJson => "tag-json",
            CallFormat::NamePrefix => "name-prefix",
            CallFormat::Channel => "channel",
            CallFormat::SpecialTokenIds => "special-token-ids",
            CallFormat::TaggedParameters => "tagged-parameters",
            CallFormat::Pythonic => "pythonic",
            CallFormat::GemmaDialect => "gemma-dialect",
        })
    }
}

/// The calls part of a derived schema.
#[derive(Debug)]
pub(crate) struct Calls {
    pub format: CallFormat,
    /// Optional texts before the calls section (outside the `tool_calls` capture).
    pub sec_open: Vec<String>,
    /// The regex where the `tool_calls` capture starts.
    pub start: String,
    /// The regex the capture must end with when content follows the calls ("" otherwise).
    pub each: String,
    /// The content comes after the calls.
    pub calls_first: bool,
    /// The `tool_calls` schema node.
    pub node: Value,
}

const NAME_RE: &str = r#"[^\s<>\[\]{}()"',=:|]+"#;
const A1: &str = "fnalpha";
const A2: &str = "fnbeta";

fn args2() -> Value {
    json!({"argkey": "strvalue", "argtwo": "valtwo"})
}

fn args_b() -> Value {
    json!({"argkey": "valthree"})
}

fn rich() -> Value {
    json!({"argkey": "say \"hi\"\nnext line ü 🙂 it's", "argtwo": {"n": 7, "f": 2.5, "t": true, "z": null, "l": [1, "x"]}})
}

/// The JSON value starting at byte `i` of `s`, with its end.
fn json_at(s: &str, i: usize) -> Option<(Value, usize)> {
    // serde_json finds where the value ends; our parser reads it, keeping its key order.
    let mut it = serde_json::Deserializer::from_str(&s[i..]).into_iter::<serde::de::IgnoredAny>();
    match it.next() {
        Some(Ok(_)) => {
            let end = i + it.byte_offset();
            let v = chatparse_runtime::value::from_str(&s[i..end]).ok()?;
            Some((v, end))
        }
        _ => None,
    }
}

/// The outermost JSON value in `s` that starts before `at` and ends after it.
fn json_around(s: &str, at: usize) -> Option<(usize, Value, usize)> {
    for (i, c) in s[..at].char_indices() {
        if c == '{' || c == '[' {
            if let Some((v, end)) = json_at(s, i) {
                if end > at {
                    return Some((i, v, end));
                }
            }
        }
    }
    None
}

/// The first JSON object at or after `from` whose value is `want`.
fn json_equal_after(s: &str, from: usize, want: &Value) -> Option<(usize, usize)> {
    for (i, c) in s[from..].char_indices() {
        if c == '{' {
            let i = from + i;
            if let Some((v, end)) = json_at(s, i) {
                if same(&v, want) {
                    return Some((i, end));
                }
            }
            return None;
        }
    }
    None
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Where a JSON call object keeps name, arguments and id.
#[derive(Debug, Clone)]
struct JsonFields {
    name: Vec<String>,
    args: Vec<String>,
    id: Option<Vec<String>>,
    first_key: String,
}

fn find_key(obj: &Value, want: &Value) -> Option<Vec<String>> {
    let m = obj.as_object()?;
    for (k, v) in m {
        if same(v, want) {
            return Some(vec![k.clone()]);
        }
    }
    for (k, v) in m {
        if let Some(inner) = v.as_object() {
            for (k2, v2) in inner {
                if same(v2, want) {
                    return Some(vec![k.clone(), k2.clone()]);
                }
            }
        }
    }
    None
}

fn jmes_path(p: &[String]) -> String {
    p.iter()
        .map(|k| format!("\"{}\"", k.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(".")
}

fn json_fields(obj: &Value, args: &Value, id: &str) -> Option<JsonFields> {
    let name = find_key(obj, &json!(A1))?;
    let args = find_key(obj, args)?;
    let id = find_key(obj, &json!(id));
    let first_key = obj.as_object()?.keys().next()?.clone();
    Some(JsonFields {
        name,
        args,
        id,
        first_key,
    })
}

/// One call's place in a rendered turn: where its name (or the JSON object) starts and where its
/// last payload ends.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

/// Finds how to hand calls to the template and analyses the format. `None` (with a note) when
/// the template renders no tool calls.
pub(crate) fn analyze(p: &mut Prober, a: &mut Analysis) -> Result<Option<Calls>, DeriveError> {
    let one = Msg {
        calls: vec![Call::new(A1, args2())],
        ..Msg::default()
    };
    let mut last_err = None;
    let mut rendered_without_name = false;
    let mut chosen = None;
    'setup: for functions_ids in [false, true] {
        for args_string in [false, true] {
            for empty in [None, Some(json!("")), Some(Value::Null)] {
                p.functions_ids = functions_ids;
                p.args_string = args_string;
                p.empty_content = empty;
                match p.turn(&one) {
                    Ok(t) => {
                        let has_name = t.tail.contains(A1);
                        let python = t.tail.contains("'argkey'");
                        let has_args = t.tail.contains("strvalue");
                        if has_name && has_args && !python {
                            chosen = Some(t);
                            break 'setup;
                        }
                        if !has_name {
                            rendered_without_name = true;
                        }
                    }
                    Err(e) => last_err = Some(e),
                }
            }
        }
    }
    let Some(t1) = chosen else {
        let why = if rendered_without_name {
            "the template renders no tool calls (tool_calls are dropped from assistant turns); the parser reads none".to_owned()
        } else {
            format!(
                "the template cannot render a tool call ({}); the parser reads none",
                last_err.unwrap_or_default()
            )
        };
        a.notes.push(why);
        p.functions_ids = false;
        p.args_string = false;
        p.empty_content = None;
        return Ok(None);
    };
    if p.functions_ids {
        a.notes.push("the template writes the call id in place of the function name; the name is read from ids of the form functions.NAME:N (Kimi's convention), and ids are not returned".into());
    }
    if p.args_string {
        a.notes.push(
            "the template takes arguments as JSON text (an object is written as a Python dict)"
                .into(),
        );
    }
    let reasoning = a.reasoning.clone();
    let strip = |s: &str| strip_empty_reasoning(s, reasoning.as_ref());
    let two = Msg {
        calls: vec![Call::new(A1, args2()), Call::new(A2, args_b())],
        ..Msg::default()
    };
    let t2 = match p.turn(&two) {
        Ok(t) if t.tail.contains(A2) => Some(t.tail),
        Ok(_) => {
            a.notes.push(
                "the template renders only the first tool call of a turn: later calls are dropped"
                    .into(),
            );
            None
        }
        Err(e) => {
            a.notes.push(format!(
                "the template renders one tool call per turn (two raise: {e})"
            ));
            None
        }
    };
    let t1 = t1.tail;
    let name_at = t1.find(A1).unwrap_or(0);
    let id0 = super::probe::call_id(p.functions_ids, A1, 0);

    // Content next to calls: before or after them, or dropped.
    let with_content = Msg {
        content: Some(super::CONTENT.into()),
        calls: vec![Call::new(A1, args2())],
        ..Msg::default()
    };
    let mut calls_first = false;
    match p.turn(&with_content) {
        Ok(t) => match (t.tail.find(super::CONTENT), t.tail.find(A1)) {
            (Some(c), Some(n)) => calls_first = n < c,
            (None, Some(_)) => a
                .notes
                .push("the template drops the content of a turn with tool calls".into()),
            _ => {}
        },
        Err(_) => a
            .notes
            .push("the template cannot render content next to tool calls".into()),
    }

    // Bare JSON: the name is a JSON string inside a JSON value.
    let in_json = t1[..name_at].ends_with('"')
        && json_around(&t1, name_at).is_some_and(|(_, v, _)| {
            let obj = if v.is_array() { v[0].clone() } else { v };
            json_fields(&obj, &args2(), &id0).is_some()
        });
    if in_json {
        return json_native(&t1, t2.as_deref(), p, a, &strip, calls_first).map(Some);
    }
    let name_end = name_at + A1.len();
    // Tag + JSON arguments.
    if let Some((js, je)) = json_equal_after(&t1, name_end, &args2()) {
        return tag_json(
            &t1,
            t2.as_deref(),
            name_at,
            js,
            je,
            p,
            a,
            &strip,
            calls_first,
        )
        .map(Some);
    }
    let after = &t1[name_end..];
    let order: Vec<Option<usize>> = ["argkey", "strvalue", "argtwo", "valtwo"]
        .iter()
        .map(|w| after.find(w))
        .collect();
    let Some(pos) = order
        .iter()
        .copied()
        .collect::<Option<Vec<usize>>>()
        .filter(|v| v.windows(2).all(|w| w[0] < w[1]))
    else {
        return fail(format!(
            "tool-call arguments cannot be isolated in the rendering {t1:?}: neither JSON nor tagged parameters"
        ));
    };
    let s0 = &after[..pos[0]];
    let s1 = &after[pos[0] + 6..pos[1]];
    if s0.trim_end().ends_with('(') && (s1 == "='" || s1 == "=\"") {
        return pythonic(&t1, t2.as_deref(), name_at, a, &strip, calls_first).map(Some);
    }
    if s0.trim().starts_with('{') && s1.starts_with(':') {
        let delim = &s1[1..];
        if delim == "<|\"|>" {
            return gemma(&t1, t2.as_deref(), name_at, p, a, &strip, calls_first).map(Some);
        }
        return fail(format!(
            "tool-call arguments are written in an unknown JSON dialect (bare keys, strings in {delim:?}): {t1:?}"
        ));
    }
    tagged(&t1, t2.as_deref(), name_at, p, a, &strip, calls_first).map(Some)
}

/// The call frame from one- and two-call renderings: (section openers, call opener, call
/// closer); pushes the turn ends.
fn frame(
    t1: &str,
    first: Span,
    t2: Option<(&str, Span, Span)>,
    a: &mut Analysis,
    strip: &dyn Fn(&str) -> String,
) -> (Vec<String>, String, String) {
    let h = strip(&t1[..first.start]);
    match t2 {
        Some((t2, c1, c2)) => {
            let h2 = strip(&t2[..c1.start]);
            let b = &t2[c1.end..c2.start];
            let t = &t2[c2.end..];
            let pre = trim(marker_suffix(&h2, b)).to_owned();
            let post = trim(marker_prefix(b, t)).to_owned();
            let open = trim(&h2[..h2.len() - marker_suffix(&h2, b).len()]).to_owned();
            let rest = &t[marker_prefix(b, t).len()..];
            push_end(&mut a.ends, rest);
            let t1_rest = &t1[first.end..];
            let after = t1_rest
                .trim_start()
                .strip_prefix(post.as_str())
                .unwrap_or(t1_rest);
            push_end(&mut a.ends, after);
            (
                vec![
                    open,
                    trim(h.trim_end().strip_suffix(pre.as_str()).unwrap_or(&h)).to_owned(),
                ],
                pre,
                post,
            )
        }
        None => {
            let t = &t1[first.end..];
            let post = trim(first_marker(t)).to_owned();
            let rest = &t[t.find(&post).map_or(0, |i| i + post.len())..];
            push_end(&mut a.ends, rest);
            (Vec::new(), h.trim().to_owned(), post)
        }
    }
}

fn json_native(
    t1: &str,
    t2: Option<&str>,
    p: &Prober,
    a: &mut Analysis,
    strip: &dyn Fn(&str) -> String,
    calls_first: bool,
) -> Result<Calls, DeriveError> {
    let name_at = t1.find(A1).unwrap_or(0);
    let id0 = super::probe::call_id(p.functions_ids, A1, 0);
    let Some((start, v, end)) = json_around(t1, name_at) else {
        return fail("internal: JSON call lost");
    };
    let array = v.is_array();
    let obj = if array { v[0].clone() } else { v.clone() };
    let Some(fields) = json_fields(&obj, &args2(), &id0) else {
        return fail("the JSON call object holds no recognisable name and arguments");
    };
    // Rich arguments must come back as written.
    let rich_msg = Msg {
        calls: vec![Call::new(A1, rich())],
        ..Msg::default()
    };
    if let Ok(t) = p.turn(&rich_msg) {
        if let Some(at) = t.tail.find(A1) {
            let ok = json_around(&t.tail, at).is_some_and(|(_, v, _)| {
                let o = if v.is_array() { v[0].clone() } else { v };
                find_key(&o, &rich()).is_some()
            });
            if !ok {
                return fail("arguments with quotes, newlines, non-ASCII text or nested values are not written as JSON that reads back");
            }
        }
    }
    let mut transform = format!(
        "{{type: 'function', function: {{name: {}, arguments: {}}}}}",
        jmes_path(&fields.name),
        jmes_path(&fields.args)
    );
    if let Some(id) = &fields.id {
        transform = format!("{{id: {}, {}", jmes_path(id), &transform[1..]);
    }
    let item_props = item_properties(
        fields.id.is_some(),
        json!({"type": "object", "additionalProperties": {}}),
    );
    if array {
        // The section: an opener, then one array.
        let open = trim(&strip(&t1[..start])).to_owned();
        if let Some(t2) = t2 {
            let at2 = t2.find(A2).unwrap_or(0);
            if json_around(t2, at2).is_none_or(|(_, v, _)| v.as_array().map_or(0, Vec::len) != 2) {
                return fail("two tool calls are not written as one JSON array");
            }
        }
        push_end(&mut a.ends, &t1[end..]);
        let start_re = if open.is_empty() {
            format!(r#"\[\s*\{{\s*"{}""#, regex_text(&fields.first_key))
        } else {
            format!(r"{}\s*\[", lit(&open))
        };
        let node = json!({
            "type": "array",
            "x-regex": format!(r"^(?:{})?\s*(\[.*\])", lit(&open)),
            "x-parser": "json",
            "x-parser-args": {"transform": format!("[*].{transform}")},
            "items": {"type": "object", "properties": item_props, "required": ["function"]}
        });
        return Ok(Calls {
            format: CallFormat::JsonArray,
            sec_open: Vec::new(),
            start: start_re,
            each: String::new(),
            calls_first,
            node,
        });
    }
    let span2 = t2.and_then(|t2| {
        let a1 = t2.find(A1)?;
        let a2 = t2.find(A2)?;
        let (s1, _, e1) = json_around(t2, a1)?;
        let (s2, _, e2) = json_around(t2, a2)?;
        Some((t2, Span { start: s1, end: e1 }, Span { start: s2, end: e2 }))
    });
    let (sec_open, pre, post) = frame(t1, Span { start, end }, span2, a, strip);
    let sep = span2.map(|(t2, c1, c2)| {
        let b = &t2[c1.end..c2.start];
        let b = b.trim_start().strip_prefix(post.as_str()).unwrap_or(b);
        let b = b.trim_end().strip_suffix(pre.as_str()).unwrap_or(b);
        trim(b).to_owned()
    });
    let key_re = format!(r#"\{{\s*"{}"\s*:"#, regex_text(&fields.first_key));
    let start_re = if pre.is_empty() {
        key_re.clone()
    } else {
        lit(&pre)
    };
    let pre_opt = if pre.is_empty() {
        String::new()
    } else {
        format!(r"(?:{}\s*)?", lit(&pre))
    };
    let iter = if !post.is_empty() {
        format!(r"{pre_opt}(\{{.*?\}})\s*(?:{}|$)", lit(&post))
    } else if let Some(sep) = sep.filter(|s| !s.is_empty()) {
        format!(r"{pre_opt}(\{{.*?\}})\s*(?={}|$)", lit(&sep))
    } else {
        format!(r"{pre_opt}(\{{.*\}})")
    };
    let each = format!(r"(?:{pre_opt}\{{.*?\}}\s*{}\s*)+", lit(&post));
    let node = json!({
        "type": "array",
        "x-regex-iterator": iter,
        "items": {
            "type": "object",
            "x-parser": "json",
            "x-parser-args": {"transform": transform},
            "properties": item_props,
            "required": ["function"]
        }
    });
    Ok(Calls {
        format: CallFormat::JsonObjects,
        sec_open,
        start: start_re,
        each,
        calls_first,
        node,
    })
}

/// A JSON object key as regex text.
fn regex_text(k: &str) -> String {
    super::text::exact(k)
}

fn item_properties(id: bool, arguments: Value) -> Value {
    let mut props = Map::new();
    if id {
        props.insert("id".into(), json!({"type": "string"}));
    }
    props.insert("type".into(), json!({"const": "function"}));
    props.insert(
        "function".into(),
        json!({"type": "object", "properties": {"name": {"type": "string"}, "arguments": arguments},
            "required": ["name", "arguments"]}),
    );
    Value::Object(props)
}

/// A MID text as a regex: literal, with digit runs generalised when two calls' MIDs differ only
/// there (call indexes).
fn mid_re(m1: &str, m2: Option<&str>) -> Result<String, DeriveError> {
    match m2 {
        Some(m2) if m2 != m1 => {
            let strip = |s: &str| {
                s.chars()
                    .filter(|c| !c.is_ascii_digit())
                    .collect::<String>()
            };
            if strip(m1) != strip(m2) {
                return fail(format!(
                    "the text between name and arguments differs between calls ({m1:?} vs {m2:?}): the marker cannot be isolated"
                ));
            }
            let mut out = String::new();
            let mut last_digit = false;
            for c in m1.chars() {
                if c.is_ascii_digit() {
                    if !last_digit {
                        out.push_str(r"\d+");
                    }
                    last_digit = true;
                } else {
                    last_digit = false;
                    out.push_str(&lit(&c.to_string()));
                }
            }
            Ok(out.replace(r"\s*\s*", r"\s*"))
        }
        _ => Ok(lit(m1)),
    }
}

#[allow(clippy::too_many_arguments)]
fn tag_json(
    t1: &str,
    t2: Option<&str>,
    name_at: usize,
    js: usize,
    je: usize,
    p: &Prober,
    a: &mut Analysis,
    strip: &dyn Fn(&str) -> String,
    calls_first: bool,
) -> Result<Calls, DeriveError> {
    let mid = &t1[name_at + A1.len()..js];
    let id0 = super::probe::call_id(p.functions_ids, A1, 0);
    let span2 = t2.and_then(|t2| {
        let n1 = t2.find(A1)?;
        let (s1, e1) = json_equal_after(t2, n1 + A1.len(), &args2())?;
        let n2 = n1 + t2[n1..].find(A2)?;
        let (s2, e2) = json_equal_after(t2, n2 + A2.len(), &args_b())?;
        Some((
            t2,
            Span { start: n1, end: e1 },
            Span { start: n2, end: e2 },
            &t2[n2 + A2.len()..s2],
            s1,
        ))
    });
    if t2.is_some() && span2.is_none() {
        return fail("the second tool call is not written like the first");
    }
    let mid2 = span2.map(|(_, _, _, m, _)| m);
    // An id between name and arguments (`[CALL_ID]id[ARGS]`).
    let (mid_rx, id_rx) = if !p.functions_ids && mid.contains(&id0) {
        let at = mid.find(&id0).unwrap_or(0);
        let (ma, mb) = (&mid[..at], &mid[at + id0.len()..]);
        (
            format!(r"{}\S*?{}", lit(ma), lit(mb)),
            Some(format!(r"{}(\S+?){}", lit(ma), lit(mb))),
        )
    } else {
        let m2 = mid2.map(|m| {
            if p.functions_ids {
                m.to_owned()
            } else {
                m.replace(&super::probe::call_id(false, A2, 1), &id0)
            }
        });
        (mid_re(mid, m2.as_deref())?, None)
    };
    let (sec_open, pre, post) = frame(
        t1,
        Span {
            start: name_at,
            end: je,
        },
        span2.map(|(t, a, b, _, _)| (t, a, b)),
        a,
        strip,
    );
    let mut pre = if p.functions_ids {
        // The id's `functions.` belongs to the name part.
        pre.strip_suffix("functions.").unwrap_or(&pre).to_owned()
    } else {
        pre
    };
    // The first call's opener may be the generation prompt's end (`>>>`): later calls show it.
    let mut prompt_opened = false;
    if pre.is_empty() {
        if let Some((t2, c1, c2, _, _)) = span2 {
            let b = t2[c1.end..c2.start].trim();
            let b = trim(b.strip_prefix(post.as_str()).unwrap_or(b));
            let prompt = p.prompt_with(&Map::new()).unwrap_or_default();
            if !b.is_empty() && prompt.trim_end().ends_with(b) {
                a.notes.push(format!(
                    "the generation prompt ends with the call opener {b:?}: the first call starts without it"
                ));
                pre = b.to_owned();
                prompt_opened = true;
            }
        }
    }
    if pre.is_empty() {
        return fail(format!(
            "no marker opens a tool call (the name stands bare in {t1:?}): the call cannot be told from content"
        ));
    }
    let format = if p.functions_ids {
        CallFormat::SpecialTokenIds
    } else if pre.contains("to=") {
        CallFormat::Channel
    } else if pre.starts_with('[') && pre.ends_with(']') && mid.trim().starts_with('[') {
        CallFormat::NamePrefix
    } else {
        CallFormat::TagJson
    };
    let name_part = if p.functions_ids {
        format!(r"(?:functions\.)?(?P<name>{NAME_RE})")
    } else {
        format!("(?P<name>{NAME_RE})")
    };
    let post_alt = if post.is_empty() {
        String::new()
    } else {
        format!("{}|", lit(&post))
    };
    let first = if prompt_opened {
        format!("(?:^|{})", lit(&pre))
    } else {
        lit(&pre)
    };
    let iter = format!(r"{first}(.*?)(?:{post_alt}(?={})|$)", lit(&pre));
    let start = if prompt_opened {
        // Only at the start of the output or after the opener, and with the exact separator:
        // a bare name is otherwise too easily a word of the content.
        format!(
            r"(?:^|{}){NAME_RE}{}\{{",
            lit(&pre),
            super::text::exact(mid)
        )
    } else {
        lit(&pre)
    };
    let mut item = Map::new();
    item.insert("type".into(), json!("object"));
    let mut props = item_properties(
        id_rx.is_some(),
        json!({"type": "object", "x-parser": "json", "additionalProperties": {}}),
    );
    if let Some(id_rx) = &id_rx {
        props["id"]["x-regex"] = json!(id_rx);
    }
    props["function"]["x-regex"] =
        json!(format!(r"^\s*{name_part}{mid_rx}(?P<arguments>\{{.*\}})"));
    item.insert("properties".into(), props);
    item.insert("required".into(), json!(["function"]));
    let each = format!(r"(?:{}.*?{}\s*)+", lit(&pre), lit(&post));
    Ok(Calls {
        format,
        sec_open,
        start,
        each,
        calls_first,
        node: json!({"type": "array", "x-regex-iterator": iter, "items": Value::Object(item)}),
    })
}

/// The typed-value probe of a tagged format: how each JSON type is written between the key's
/// delimiters. Returns the alternatives of the key-value delimiter and whether Python literals
/// appear.
fn value_writing(
    p: &Prober,
    kpost: &str,
    a: &mut Analysis,
) -> Result<(Vec<String>, bool), DeriveError> {
    let mut kmids = Vec::new();
    let mut python = false;
    let values = [
        json!(7),
        json!(2.5),
        json!(true),
        json!(null),
        json!([1, "x"]),
        json!({"k": "v"}),
        json!("strvalue"),
    ];
    for v in values {
        let m = Msg {
            calls: vec![Call::new(A1, json!({ "argkey": v.clone() }))],
            ..Msg::default()
        };
        let Ok(t) = p.turn(&m) else {
            a.notes.push(format!("a {v} argument cannot be rendered"));
            continue;
        };
        let tail = &t.tail;
        let Some(k) = tail.find("argkey") else {
            return fail(format!(
                "the argument name is missing when its value is {v}"
            ));
        };
        let after = &tail[k + 6..];
        let json_text = crate::render::json_dumps(&v);
        let py_text = crate::render::python_str(&v);
        let raw = v.as_str().map(str::to_owned);
        let mut found = None;
        for (text, kind) in [
            (raw.clone(), "raw"),
            (Some(json_text.clone()), "json"),
            (Some(py_text.clone()), "python"),
        ] {
            let Some(text) = text else { continue };
            if let Some(at) = after.find(&text) {
                let delim = &after[..at];
                if after[at + text.len()..]
                    .trim_start()
                    .starts_with(kpost.trim_start())
                    || kpost.is_empty()
                {
                    found = Some((delim.to_owned(), kind, text.clone()));
                    break;
                }
            }
        }
        let Some((delim, kind, text)) = found else {
            return fail(format!(
                "the value {v} is written in no form that reads back ({:?})",
                super::text::head(after, 80)
            ));
        };
        if kind == "python" && text != json_text {
            python = true;
            if v.is_object() || v.is_array() {
                a.notes.push(format!(
                    "nested argument values are written as Python literals ({text}): they come back as text, not as JSON"
                ));
            }
        }
        if !kmids.contains(&delim) {
            kmids.push(delim);
        }
    }
    Ok((kmids, python))
}

fn tagged(
    t1: &str,
    t2: Option<&str>,
    name_at: usize,
    p: &Prober,
    a: &mut Analysis,
    strip: &dyn Fn(&str) -> String,
    calls_first: bool,
) -> Result<Calls, DeriveError> {
    let name_end = name_at + A1.len();
    let after = &t1[name_end..];
    let pos: Vec<usize> = ["argkey", "strvalue", "argtwo", "valtwo"]
        .iter()
        .map(|w| after.find(w).unwrap_or(0))
        .collect();
    let s0 = &after[..pos[0]];
    let s2 = &after[pos[1] + 8..pos[2]];
    let kpre_raw = marker_suffix(s0, s2);
    let kpre = kpre_raw.trim_start().to_owned();
    if kpre.trim().is_empty() {
        return fail(format!(
            "no marker opens a tagged parameter (between parameters: {s2:?}): the parameters cannot be isolated"
        ));
    }
    let mid = &s0[..s0.len() - kpre_raw.len()];
    let kpost = s2[..s2.len() - kpre_raw.len()].to_owned();
    let (kmids, python) = value_writing(p, &kpost, a)?;
    let last_value_end = name_end + pos[3] + 6;
    let span2 = t2.and_then(|t2| {
        let n1 = t2.find(A1)?;
        let e1 = n1 + t2[n1..].find("valtwo")? + 6;
        let n2 = n1 + t2[n1..].find(A2)?;
        let e2 = n2 + t2[n2..].find("valthree")? + 8;
        Some((t2, Span { start: n1, end: e1 }, Span { start: n2, end: e2 }))
    });
    let (sec_open, pre, post) = frame(
        t1,
        Span {
            start: name_at,
            end: last_value_end,
        },
        span2,
        a,
        strip,
    );
    if pre.is_empty() {
        return fail(format!(
            "no marker opens a tool call in {t1:?}: the call cannot be told from content"
        ));
    }
    if kmids.len() > 1 {
        a.notes.push(format!(
            "the parameter delimiter tells strings from other values ({}); both are read, string values that read as JSON come back typed",
            kmids.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(" vs ")
        ));
    } else {
        a.notes.push("string and non-string argument values are written alike (strings raw, others as JSON): a string value that reads as JSON comes back typed unless the tools' parameter types are given (--tools)".into());
    }
    let kmid_re = super::text::alt(&kmids.iter().map(|k| exact_soft(k)).collect::<Vec<_>>());
    let kv = format!(
        r"{}(?P<key>.+?){}(?P<value>.*?)(?:{}|$)",
        lit(&kpre),
        kmid_re,
        exact_soft(&kpost)
    );
    let mut value = Map::new();
    if python {
        value.insert(
            "x-regex-substitutions".into(),
            json!([["^True$", "true"], ["^False$", "false"], ["^None$", "null"]]),
        );
    }
    value.insert("x-parser".into(), json!("json"));
    value.insert("x-parser-args".into(), json!({"allow_non_json": true}));
    let arguments = json!({"type": "object", "x-regex-key-value": kv, "default": {},
        "additionalProperties": Value::Object(value)});
    let mut props = item_properties(false, arguments);
    props["function"]["x-regex"] = json!(format!(
        r"^\s*(?P<name>{NAME_RE}){}\s*(?P<arguments>{}.*)?",
        lit(mid),
        lit(&kpre)
    ));
    props["function"]["required"] = json!(["name"]);
    let post_alt = if post.is_empty() {
        String::new()
    } else {
        format!("{}|", lit(&post))
    };
    Ok(Calls {
        format: CallFormat::TaggedParameters,
        sec_open,
        start: lit(&pre),
        each: format!(r"(?:{}.*?{}\s*)+", lit(&pre), lit(&post)),
        calls_first,
        node: json!({"type": "array",
            "x-regex-iterator": format!(r"{}(.*?)(?:{post_alt}(?={})|$)", lit(&pre), lit(&pre)),
            "items": {"type": "object", "properties": props, "required": ["function"]}}),
    })
}

fn pythonic(
    t1: &str,
    t2: Option<&str>,
    name_at: usize,
    a: &mut Analysis,
    strip: &dyn Fn(&str) -> String,
    calls_first: bool,
) -> Result<Calls, DeriveError> {
    // The section: opener, `[`, calls, `]`, closer.
    let h = strip(&t1[..name_at]);
    let open = trim(h.trim_end().strip_suffix('[').unwrap_or(&h)).to_owned();
    let close_at = t1[name_at..].find(")]").map(|i| name_at + i + 2);
    let Some(close_at) = close_at else {
        return fail("a pythonic call list is not closed by `)]`");
    };
    let rest = &t1[close_at..];
    let close = trim(first_marker(rest)).to_owned();
    push_end(
        &mut a.ends,
        &rest[rest.find(&close).map_or(0, |i| i + close.len())..],
    );
    if let Some(t2) = t2 {
        if !t2.contains(&format!("), {A2}(")) {
            return fail("two pythonic calls are not written as one list `[f(…), g(…)]`");
        }
    }
    if open.is_empty() {
        return fail("no marker opens the pythonic call list: it cannot be told from content");
    }
    a.notes.push("argument values are Python literals: strings, numbers, True/False/None and flat JSON-like lists and dicts read back".into());
    let (o, c) = (lit(&open), lit(&close));
    let node = json!({
        "type": "array",
        "x-regex-substitutions": [[format!(r"\]\s*{c}\s*{o}\s*\["), ", "]],
        "x-regex": format!(r"^{o}\s*\[?\s*(.*?)\s*\]?\s*(?:{c}.*)?$"),
        "x-regex-iterator": r"([A-Za-z_][\w.-]*\(.*?(?:\)(?=\s*(?:,\s*[A-Za-z_][\w.-]*\(|$))|$)|[^\s,].*|^$)",
        "items": {"type": "object", "properties": {
            "type": {"const": "function"},
            "function": {"type": "object",
                "x-regex": r"^(?P<name>[A-Za-z_][\w.-]*)\((?:\s*(?P<arguments>\S.*?))??\s*\)$",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object",
                    "x-regex-key-value": r#"(?P<key>[A-Za-z_]\w*)\s*=\s*(?P<value>.*?)\s*(?=,\s*[A-Za-z_]\w*\s*=|$)|(?P<positional>[^\s,].*)"#,
                    "default": {},
                    "additionalProperties": {
                        "x-regex-substitutions": [
                            [r#"^'([^'"\\\x00-\x1f]*)'$"#, r#""\1""#],
                            ["^'(.*)'$", r"\1"],
                            ["^True$", "true"], ["^False$", "false"], ["^None$", "null"]],
                        "x-parser": "json", "x-parser-args": {"allow_non_json": true}}}},
                "required": ["name", "arguments"]}},
            "required": ["function"]}
    });
    Ok(Calls {
        format: CallFormat::Pythonic,
        sec_open: Vec::new(),
        start: o.clone(),
        each: format!(r"{o}.*?{c}\s*"),
        calls_first,
        node,
    })
}

fn gemma(
    t1: &str,
    t2: Option<&str>,
    name_at: usize,
    p: &Prober,
    a: &mut Analysis,
    strip: &dyn Fn(&str) -> String,
    calls_first: bool,
) -> Result<Calls, DeriveError> {
    let name_end = name_at + A1.len();
    let Some(end) = t1[name_end..].find("<|\"|>}").map(|i| name_end + i + 6) else {
        return fail("Gemma-dialect arguments are not closed");
    };
    let span2 = t2.and_then(|t2| {
        let n1 = t2.find(A1)?;
        let e1 = n1 + t2[n1..].find("<|\"|>}")? + 6;
        let n2 = n1 + t2[n1..].find(A2)?;
        let e2 = n2 + t2[n2..].find("<|\"|>}")? + 6;
        Some((t2, Span { start: n1, end: e1 }, Span { start: n2, end: e2 }))
    });
    let (sec_open, pre, post) = frame(
        t1,
        Span {
            start: name_at,
            end,
        },
        span2,
        a,
        strip,
    );
    if pre.is_empty() {
        return fail("no marker opens a tool call: the call cannot be told from content");
    }
    let post_alt = if post.is_empty() {
        String::new()
    } else {
        format!("{}|", lit(&post))
    };
    let mut arguments =
        json!({"type": "object", "x-parser": "gemma4-tool-call", "additionalProperties": {}});
    // How null is written: the dialect has JSON's null; a template may print Python's None.
    let null_msg = Msg {
        calls: vec![Call::new(A1, json!({"argkey": null, "argtwo": [null]}))],
        ..Msg::default()
    };
    if p.turn(&null_msg).is_ok_and(|t| t.tail.contains(":None")) {
        a.notes
            .push("null argument values are written as Python's None: read back as null".into());
        arguments["x-regex-substitutions"] = json!([
            [r"([:\[,])None([,}\]])", r"\1null\2"],
            [r"([:\[,])None([,}\]])", r"\1null\2"]
        ]);
    }
    let mut props = item_properties(false, arguments);
    props["function"]["x-regex"] = json!(format!(
        r"^\s*(?P<name>{NAME_RE})\s*(?P<arguments>\{{.*\}})\s*$"
    ));
    Ok(Calls {
        format: CallFormat::GemmaDialect,
        sec_open,
        start: lit(&pre),
        each: format!(r"(?:{}.*?{}\s*)+", lit(&pre), lit(&post)),
        calls_first,
        node: json!({"type": "array",
            "x-regex-iterator": format!(r"{}(.*?)(?:{post_alt}(?={})|$)", lit(&pre), lit(&pre)),
            "items": {"type": "object", "properties": props, "required": ["function"]}}),
    })
}

//! The derived x-regex response schema, built in one place from an [`Analysis`].

use chatparse_runtime::{json, Map, Value};

use super::text::{alt, lit};
use super::{Analysis, DeriveError};

/// A trimmed capture that is absent when empty.
const TEXT: &str = r"\S(?:.*?\S)??";

/// The schema of an analysis.
pub(crate) fn spec(a: &Analysis) -> Result<Value, DeriveError> {
    let mut re = String::from(r"^\s*");
    let mut subs: Vec<Value> = Vec::new();
    let eos = alt(&super::EOS_TOKENS.iter().map(|s| lit(s)).collect::<Vec<_>>());
    let ends = alt(&a
        .ends
        .iter()
        .map(|s| prefixes(s).replace(&lit(super::EOS_PROBE), &eos))
        .collect::<Vec<_>>());
    let end_ahead = if ends.is_empty() {
        "$".to_owned()
    } else {
        format!(r"(?=(?:\s*{ends})*\s*$)")
    };
    let mut props = Map::new();
    props.insert("role".into(), json!({"const": "assistant"}));
    props.insert("content".into(), json!({"type": "string"}));
    if let Some(r) = &a.reasoning {
        if r.open.is_empty() {
            re.push_str(&format!(
                r"(?:(?:(?P<{key}>{TEXT})\s*)??{close}\s*)?",
                key = r.key,
                close = lit(&r.close)
            ));
        } else {
            // An output that starts inside a block the prompt opened gets the opener back, so
            // that an opened block reads as reasoning up to its closer or the end.
            if r.open_optional {
                subs.push(json!([
                    format!(
                        r"^(?!\s*{open})(.*?{close})",
                        open = lit(&r.open),
                        close = lit(&r.close)
                    ),
                    format!(r"{}\1", r.open.replace('\\', r"\\"))
                ]));
            }
            re.push_str(&format!(
                r"(?:{open}\s*(?:(?P<{key}>{TEXT})\s*)??(?:{close}|{end_ahead})\s*)?",
                open = lit(&r.open),
                key = r.key,
                close = lit(&r.close)
            ));
        }
        props.insert(r.key.clone(), json!({"type": "string"}));
    }
    let content_open = alt(&a.content_open.iter().map(|s| lit(s)).collect::<Vec<_>>());
    let content = format!(
        r"{}(?:(?P<content>{TEXT})\s*)??",
        if content_open.is_empty() {
            String::new()
        } else {
            format!(r"(?:{content_open}\s*)?")
        }
    );
    let calls = a.calls.as_ref().map(|c| {
        let sec = alt(&c.sec_open.iter().map(|s| lit(s)).collect::<Vec<_>>());
        let sec = if sec.is_empty() {
            String::new()
        } else {
            format!(r"(?:{sec}\s*)?")
        };
        if c.calls_first {
            format!(r"{sec}(?P<tool_calls>{})?\s*", c.each)
        } else {
            format!(r"{sec}(?P<tool_calls>{}(?:.*?\S)??)?\s*", c.start)
        }
    });
    match (&calls, a.calls.as_ref().is_some_and(|c| c.calls_first)) {
        (Some(calls), true) => {
            re.push_str(calls);
            re.push_str(&content);
        }
        (Some(calls), false) => {
            re.push_str(&content);
            re.push_str(calls);
        }
        (None, _) => re.push_str(&content),
    }
    if !ends.is_empty() {
        re.push_str(&format!(r"(?:{ends}\s*)*"));
    }
    re.push('$');
    if let Some(c) = &a.calls {
        props.insert("tool_calls".into(), c.node.clone());
    }
    let mut doc = Map::new();
    doc.insert("type".into(), json!("object"));
    if !subs.is_empty() {
        doc.insert("x-regex-substitutions".into(), Value::Array(subs));
    }
    doc.insert("x-regex".into(), json!(re));
    doc.insert("properties".into(), Value::Object(props));
    Ok(Value::Object(doc))
}

/// An end sequence of markers as a regex that also accepts each of its prefixes (a model stops
/// at its first end token): `<a><b>` → `<a>(?:\s*<b>)?`.
fn prefixes(s: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let end = match rest.chars().next() {
            Some('<') => rest.find('>').map(|i| i + 1),
            Some('[') => rest.find(']').map(|i| i + 1),
            _ => rest.find(['<', '[']).filter(|&i| i > 0),
        }
        .unwrap_or(rest.len());
        parts.push(lit(rest[..end].trim()));
        rest = rest[end..].trim_start();
    }
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate().rev() {
        out = if i == 0 {
            format!("{p}{out}")
        } else {
            format!(r"(?:\s*{p}{out})?")
        };
    }
    out
}

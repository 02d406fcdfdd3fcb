//! The derived x-regex response schema, built in one place from an [`Analysis`].

use serde_json::{json, Map, Value};

use super::text::{alt, lit};
use super::{Analysis, DeriveError};

/// A trimmed capture that is absent when empty.
const TEXT: &str = r"\S(?:.*?\S)??";

/// The schema of an analysis.
pub(crate) fn spec(a: &Analysis) -> Result<Value, DeriveError> {
    let mut re = String::from(r"^\s*");
    let mut props = Map::new();
    props.insert("role".into(), json!({"const": "assistant"}));
    props.insert("content".into(), json!({"type": "string"}));
    if let Some(r) = &a.reasoning {
        let open = if r.open.is_empty() {
            String::new()
        } else if r.open_optional {
            format!(r"(?:{})?\s*", lit(&r.open))
        } else {
            format!(r"{}\s*", lit(&r.open))
        };
        re.push_str(&format!(
            r"(?:{open}(?:(?P<{key}>{TEXT})\s*)??{close}\s*)?",
            key = r.key,
            close = lit(&r.close)
        ));
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
    let eos = alt(&super::EOS_TOKENS.iter().map(|s| lit(s)).collect::<Vec<_>>());
    let ends = alt(&a
        .ends
        .iter()
        .map(|s| lit(s).replace(&lit(super::EOS_PROBE), &format!("{eos}?")))
        .collect::<Vec<_>>());
    if !ends.is_empty() {
        re.push_str(&format!(r"(?:{ends}\s*)*"));
    }
    re.push('$');
    if let Some(c) = &a.calls {
        props.insert("tool_calls".into(), c.node.clone());
    }
    let mut doc = Map::new();
    doc.insert("type".into(), json!("object"));
    doc.insert("x-regex".into(), json!(re));
    doc.insert("properties".into(), Value::Object(props));
    Ok(Value::Object(doc))
}

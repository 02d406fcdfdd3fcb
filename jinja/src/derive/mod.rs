//! Derive a response spec from a chat template by differential rendering (as llama.cpp's
//! template auto-parser does): render controlled assistant messages with the real template —
//! with and without reasoning and content, one and two tool calls, arguments of every JSON type —
//! and locate the markers around each known payload by comparing the renderings. The result is
//! an x-regex response schema ([`chatparse_runtime::Schema`], loadable by [`chatparse_runtime::Spec`]) that
//! parses what the model emits, or a [`DeriveError`] that says why no faithful parser exists.
//!
//! ```
//! let template = "{% for m in messages %}<|{{ m.role }}|>\
//!     {% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}\
//!     {{ m.content or '' }}{% for c in m.tool_calls or [] %}<tool_call>{{ c.function | tojson }}</tool_call>{% endfor %}\
//!     <|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
//! let derived = chatparse_jinja::derive::derive(template)?;
//! let spec = chatparse_runtime::Spec::from_json_str(&derived.spec.to_string())?;
//! let message = spec.parse("<think>Hm.</think>Hi<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call><|end|>")?;
//! assert_eq!(message["reasoning_content"], "Hm.");
//! assert_eq!(message["tool_calls"][0]["function"]["arguments"]["a"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod calls;
mod emit;
mod probe;
mod text;

use std::fmt;

use chatparse_runtime::{json, Map, Value};

use crate::render::ChatTemplate;
use probe::{Msg, Prober, CONTENT, REASONING};
use text::{first_marker, marker_prefix, trim};

pub use calls::CallFormat;

/// A derived response spec.
#[derive(Debug, Clone)]
pub struct Derived {
    /// The x-regex response schema (JSON).
    pub spec: Value,
    /// The tool-call format class found (see [`CallFormat`]).
    pub class: CallFormat,
    /// The reasoning class: `none`, `tags`, `prompt-opened tags`.
    pub reasoning: String,
    /// What the template drops or writes ambiguously, and the assumptions made, for the reader.
    pub notes: Vec<String>,
}

/// Why no parser was derived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeriveError {
    /// The reason, for a person.
    pub reason: String,
}

impl fmt::Display for DeriveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for DeriveError {}

pub(crate) fn fail<T>(reason: impl Into<String>) -> Result<T, DeriveError> {
    Err(DeriveError {
        reason: reason.into(),
    })
}

/// Reasoning markers found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reasoning {
    /// The key the template reads reasoning from (and the parser writes).
    pub key: String,
    pub open: String,
    pub close: String,
    /// The generation prompt may open the block itself (the output then starts inside it).
    pub open_optional: bool,
}

/// Everything the analysis found, handed to [`emit`].
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub reasoning: Option<Reasoning>,
    /// Texts that may stand before the content (each optional).
    pub content_open: Vec<String>,
    /// Texts that end the turn (after the content or the calls).
    pub ends: Vec<String>,
    pub calls: Option<calls::Calls>,
    pub notes: Vec<String>,
}

/// The `eos_token` the probes hand the template; a turn that ends with it is read as ending with
/// any of [`EOS_TOKENS`] (the token is the tokenizer's, not the template's).
const EOS_PROBE: &str = "<EOS_TOKEN_PROBE>";

/// End-of-sequence tokens accepted where the template writes `eos_token`.
pub const EOS_TOKENS: &[&str] = &[
    "</s>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<｜end▁of▁sentence｜>",
    "<|eot_id|>",
    "<|im_end|>",
    "<eos>",
    "<|end|>",
    "[EOS]",
];

/// Derives a response spec from a chat template's source (Jinja).
pub fn derive(source: &str) -> Result<Derived, DeriveError> {
    derive_with(source, &Map::new())
}

/// [`derive`] with template variables the template needs (e.g. `{"functions": "[]"}`); they are
/// given to every probe rendering.
pub fn derive_with(source: &str, variables: &Map) -> Result<Derived, DeriveError> {
    derive_opts(
        source,
        &Options {
            variables: variables.clone(),
            ..Options::default()
        },
    )
}

/// What a derivation may be told besides the template.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Template variables given to every probe rendering.
    pub variables: Map,
    /// The key reasoning is written to when the template reads no reasoning field (its
    /// generation prompt opens a block the model writes into); default `reasoning_content`. A
    /// template that reads a reasoning field names the key itself.
    pub reasoning_key: Option<String>,
}

/// [`derive`] with [`Options`].
pub fn derive_opts(source: &str, options: &Options) -> Result<Derived, DeriveError> {
    let variables = &options.variables;
    // A template variable the template needs and nobody gave (Firefunction's `functions`): the
    // probes are rendered again with it set to an empty string, and the derivation says so.
    let mut vars = variables.clone();
    let mut added = Vec::new();
    loop {
        match derive_once(source, &vars, options.reasoning_key.as_deref()) {
            Err(e) if added.len() < 4 => {
                let Some(name) = undefined_variable(&e.reason) else {
                    return Err(e);
                };
                if vars.contains_key(&name)
                    || ["messages", "tools", "message"].contains(&name.as_str())
                {
                    return Err(e);
                }
                vars.insert(name.clone(), json!(""));
                added.push(name);
            }
            Ok(mut derived) => {
                for name in added {
                    derived.notes.push(format!(
                        "the template needs the variable `{name}`, which was not given: derived with {name} = \"\" (give it with --var)"
                    ));
                }
                return Ok(derived);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The variable a render error says is undefined (minijinja: ``(`name` is undefined)``).
fn undefined_variable(reason: &str) -> Option<String> {
    let end = reason.find("` is undefined")?;
    let start = reason[..end].rfind('`')? + 1;
    let name = &reason[start..end];
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| name.to_owned())
}

fn derive_once(
    source: &str,
    variables: &Map,
    free_key: Option<&str>,
) -> Result<Derived, DeriveError> {
    let template = ChatTemplate::new(source)
        .and_then(|t| t.with_fixed_date(2026, 1, 1))
        .map_err(|e| DeriveError {
            reason: format!("the template does not compile: {e}"),
        })?;
    let mut base = variables.clone();
    base.entry("bos_token").or_insert(json!(""));
    base.entry("eos_token").or_insert(json!(EOS_PROBE));
    let mut prober = Prober::new(template, base.clone());
    let mut a = Analysis::default();

    // Content: the turn around a plain answer.
    let content_msg = Msg {
        content: Some(CONTENT.into()),
        ..Msg::default()
    };
    let c_turn = prober.turn(&content_msg).map_err(|e| DeriveError {
        reason: format!("the template cannot render a plain assistant answer: {e}"),
    })?;
    let Some(c_at) = c_turn.tail.find(CONTENT) else {
        return fail(format!(
            "the plain answer is not in the rendered turn {:?}: the template drops the content of the final turn",
            c_turn.tail
        ));
    };
    let pre_c = c_turn.tail[..c_at].to_owned();
    let post_c = c_turn.tail[c_at + CONTENT.len()..].to_owned();
    push_end(&mut a.ends, &post_c);

    // Reasoning: which key, which variables, which markers.
    let mut found = None;
    let mut found_with_calls = None;
    'search: for vars in [
        json!({}),
        json!({"enable_thinking": true}),
        json!({"thinking": true}),
    ] {
        for key in ["reasoning_content", "thinking"] {
            prober.vars = base.clone();
            prober
                .vars
                .extend(vars.as_object().cloned().unwrap_or_default());
            prober.reasoning_key = key.into();
            let m = Msg {
                content: Some(CONTENT.into()),
                reasoning: Some(REASONING.into()),
                ..Msg::default()
            };
            if let Ok(t) = prober.turn(&m) {
                if let (Some(r), Some(c)) = (t.tail.find(REASONING), t.tail.find(CONTENT)) {
                    if r < c {
                        found = Some((t, key, false));
                        break 'search;
                    }
                }
            }
            // Reasoning rendered only before tool calls.
            let m = Msg {
                reasoning: Some(REASONING.into()),
                calls: vec![probe::Call::new("fnalpha", json!({"argkey": "strvalue"}))],
                ..Msg::default()
            };
            if let Ok(t) = prober.turn(&m) {
                let call = t.tail.find("fnalpha").or_else(|| t.tail.find("call00000"));
                if let (Some(r), Some(c)) = (t.tail.find(REASONING), call) {
                    if r < c {
                        found_with_calls.get_or_insert((t, key, prober.vars.clone()));
                    }
                }
            }
        }
    }
    let opener = prompt_opener(&prober, source);
    if found.is_none() {
        if let Some((t, key, vars)) = found_with_calls {
            prober.vars = vars;
            prober.reasoning_key = key.into();
            a.notes.push(
                "reasoning is rendered only on turns with tool calls: a plain answer's reasoning is dropped"
                    .into(),
            );
            found = Some((t, key, true));
        }
    }
    match found {
        Some((t, key, only_calls)) => {
            let r = t.tail.find(REASONING).unwrap_or(0);
            let c = if only_calls {
                t.tail
                    .find("fnalpha")
                    .or_else(|| t.tail.find("call00000"))
                    .unwrap_or(0)
            } else {
                t.tail.find(CONTENT).unwrap_or(0)
            };
            let pre_r = trim(&t.tail[..r]).to_owned();
            let mid = t.tail[r + REASONING.len()..c].to_owned();
            if !only_calls {
                push_end(&mut a.ends, &t.tail[c + CONTENT.len()..]);
            }
            // The closer: what the reasoning's end has in common with the reasoning before a
            // tool call, else the first marker after the reasoning.
            let mut close = trim(first_marker(&mid)).to_owned();
            let with_call = Msg {
                reasoning: Some(REASONING.into()),
                calls: vec![probe::Call::new("fnalpha", json!({"argkey": "strvalue"}))],
                ..Msg::default()
            };
            if only_calls {
                // The closer is the first marker after the reasoning.
            } else if let Ok(t2) = prober.turn(&with_call) {
                if let Some(r2) = t2.tail.find(REASONING) {
                    let mid2 = &t2.tail[r2 + REASONING.len()..];
                    let common = trim(marker_prefix(&mid, mid2));
                    if !common.is_empty() {
                        close = common.to_owned();
                    }
                }
            }
            if close.is_empty() {
                return fail(format!(
                    "reasoning is rendered but no marker closes it before the content ({:?})",
                    t.tail
                ));
            }
            if !only_calls {
                let rest = trim(&mid[mid.find(&close).unwrap_or(0) + close.len()..]).to_owned();
                a.content_open.push(rest);
            }
            let (open, open_optional) = if pre_r.is_empty() {
                match &opener {
                    Some(o) => (o.clone(), true),
                    None => (String::new(), false),
                }
            } else {
                let optional = opener.as_deref() == Some(pre_r.as_str());
                (pre_r, optional)
            };
            if open.is_empty() {
                a.notes.push(format!(
                    "reasoning has no opening marker: everything before {close:?} is reasoning"
                ));
            }
            if prober.vars != base {
                a.notes.push(format!(
                    "reasoning is rendered only with the template variables {}",
                    Value::Object(prober.vars.clone())
                ));
            }
            a.reasoning = Some(Reasoning {
                key: key.into(),
                open,
                close,
                open_optional,
            });
        }
        None => {
            prober.vars = base.clone();
            prober.reasoning_key = "reasoning_content".into();
            if let Some(o) = &opener {
                // The model writes its reasoning into a block the prompt opened.
                let close = close_of(o);
                a.notes.push(format!(
                    "the template renders no reasoning field; the generation prompt opens {o:?}, so the output starts with reasoning closed by {close:?} (read as {})",
                    free_key.unwrap_or("reasoning_content")
                ));
                a.reasoning = Some(Reasoning {
                    key: free_key.unwrap_or("reasoning_content").into(),
                    open: o.clone(),
                    close,
                    open_optional: true,
                });
            } else {
                a.notes.push(
                    "the template renders no reasoning field (reasoning written into the content stays there)"
                        .into(),
                );
            }
        }
    }
    a.content_open
        .push(strip_empty_reasoning(&pre_c, a.reasoning.as_ref()));

    a.calls = calls::analyze(&mut prober, &mut a)?;
    let class = a
        .calls
        .as_ref()
        .map_or(CallFormat::None, |c| c.format.clone());
    let reasoning = match &a.reasoning {
        None => "none",
        Some(r) if r.open_optional => "prompt-opened tags",
        Some(r) if r.open.is_empty() => "delimiter",
        Some(_) => "tags",
    }
    .to_owned();
    if a.ends.iter().any(|e| e.contains(EOS_PROBE)) {
        a.notes.push(format!(
            "the turn ends with the tokenizer's eos_token, which the template does not name: any of {} is read as the end",
            EOS_TOKENS.join(" ")
        ));
    }
    let spec = emit::spec(&a)?;
    // The spec must load: a derivation that builds an invalid schema is a bug, said as such.
    let schema = match chatparse_runtime::Schema::from_value(spec.clone()) {
        Ok(schema) => schema,
        Err(e) => {
            return fail(format!(
                "internal error: the derived schema is invalid: {e}"
            ))
        }
    };
    verify(&prober, &schema, &a)?;
    Ok(Derived {
        spec,
        class,
        reasoning,
        notes: a.notes,
    })
}

/// Records the trimmed end of a turn (what follows its last payload), if any.
pub(crate) fn push_end(ends: &mut Vec<String>, s: &str) {
    let s = trim(s);
    if !s.is_empty() && !ends.iter().any(|e| e == s) {
        ends.push(s.to_owned());
    }
}

/// `</x>` for `<x>`, `[/X]` for `[X]`.
fn close_of(open: &str) -> String {
    if let Some(inner) = open.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        format!("</{inner}>")
    } else if let Some(inner) = open.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        format!("[/{inner}]")
    } else {
        String::new()
    }
}

/// The reasoning opener a generation prompt ends with (in any thinking mode), when the template
/// also writes its closer: `<think>` for a prompt ending `<think>\n`.
fn prompt_opener(prober: &Prober, source: &str) -> Option<String> {
    for vars in [
        json!({}),
        json!({"enable_thinking": true}),
        json!({"thinking": true}),
    ] {
        let Ok(prompt) = prober.prompt_with(vars.as_object().unwrap_or(&Map::new())) else {
            continue;
        };
        let p = prompt.trim_end();
        let Some(start) = p.rfind(['<', '[']) else {
            continue;
        };
        let tag = &p[start..];
        let close = close_of(tag);
        if close.is_empty() || tag.contains(char::is_whitespace) || tag.starts_with("</") {
            continue;
        }
        if source.contains(&close) {
            return Some(tag.to_owned());
        }
    }
    None
}

/// The text before a plain answer without an empty reasoning block (`<think>\n\n</think>`).
pub(crate) fn strip_empty_reasoning(pre: &str, r: Option<&Reasoning>) -> String {
    let t = trim(pre);
    if let Some(r) = r {
        if let Some(at) = t.find(&r.close) {
            let before = trim(&t[..at]);
            if before.is_empty() || before == r.open {
                return trim(&t[at + r.close.len()..]).to_owned();
            }
        }
    }
    t.to_owned()
}

/// The derived parser must read the template's own renderings of the probes back: the plain
/// answer, reasoning, one and two calls, empty and rich arguments, a name with a dot and a dash
/// (what the template drops aside). Otherwise two readings fit the renderings, or a marker was
/// not isolated: refuse rather than emit a parser that loses data.
fn verify(
    prober: &Prober,
    schema: &chatparse_runtime::Schema,
    a: &Analysis,
) -> Result<(), DeriveError> {
    use probe::Call;
    let mut probes: Vec<(&str, Msg)> = vec![(
        "a plain answer",
        Msg {
            content: Some(CONTENT.into()),
            ..Msg::default()
        },
    )];
    if a.reasoning.is_some() {
        probes.push((
            "reasoning and an answer",
            Msg {
                content: Some(CONTENT.into()),
                reasoning: Some(REASONING.into()),
                ..Msg::default()
            },
        ));
    }
    if a.calls.is_some() {
        let args = json!({"argkey": "strvalue", "argtwo": "valtwo"});
        let rich = json!({"argkey": "say \"hi\"\nnext line ü 🙂", "argtwo": {"n": 7, "f": 2.5, "t": true, "z": null, "l": [1, "x"]}});
        for (what, calls) in [
            ("one call", vec![Call::new("fnalpha", args.clone())]),
            (
                "two calls",
                vec![
                    Call::new("fnalpha", args.clone()),
                    Call::new("fnbeta", json!({"argkey": "valthree"})),
                ],
            ),
            ("empty arguments", vec![Call::new("fnalpha", json!({}))]),
            (
                "a name with a dot and a dash",
                vec![Call::new("ns.fn-gamma", args.clone())],
            ),
            ("rich arguments", vec![Call::new("fnalpha", rich)]),
        ] {
            probes.push((
                what,
                Msg {
                    calls,
                    ..Msg::default()
                },
            ));
        }
    }
    for (what, m) in probes {
        let Ok(turn) = prober.turn(&m) else { continue };
        // What the template wrote of the message is what must come back.
        let mut want = Map::new();
        if let Some(c) = &m.content {
            if turn.tail.contains(c.as_str()) {
                want.insert("content".into(), json!(c));
            }
        }
        if let (Some(r), Some(ra)) = (&m.reasoning, &a.reasoning) {
            if turn.tail.contains(r.as_str()) {
                want.insert(ra.key.clone(), json!(r));
            }
        }
        let rendered: Vec<&probe::Call> = m
            .calls
            .iter()
            .filter(|c| turn.tail.contains(&c.name))
            .collect();
        if !rendered.is_empty() {
            let calls = rendered
                .iter()
                .map(|c| json!({"type": "function", "function": {"name": c.name, "arguments": c.args}}))
                .collect();
            want.insert("tool_calls".into(), Value::Array(calls));
        }
        let python_nested = turn.tail.contains("'x'");
        let want = Value::Object(want);
        // The probes' eos_token stands for the tokenizer's: read with a real one.
        let tail = turn.tail.replace(EOS_PROBE, EOS_TOKENS[0]);
        let got = schema.parse(&tail).map_err(|e| DeriveError {
            reason: format!(
                "the derived parser cannot read the template's own rendering of {what} ({:?}): {e}",
                turn.tail
            ),
        })?;
        if !agrees(&got, &want, python_nested) {
            return fail(format!(
                "the derived parser does not read back the template's own rendering of {what}: {:?} gives {got}, not {want}; the markers cannot be isolated",
                turn.tail
            ));
        }
    }
    Ok(())
}

/// `got` has what `want` has (role aside; call ids ignored; numbers by value; with
/// `python_nested`, only the string argument is compared: nested values written as Python
/// literals are a stated loss).
fn agrees(got: &Value, want: &Value, python_nested: bool) -> bool {
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
    let (Some(g), Some(w)) = (got.as_object(), want.as_object()) else {
        return false;
    };
    for key in ["content", "reasoning_content", "thinking"] {
        if g.get(key) != w.get(key) {
            return false;
        }
    }
    let calls = |v: &Map| v.get("tool_calls").and_then(Value::as_array).cloned();
    match (calls(g), calls(w)) {
        (None, None) => true,
        (Some(gc), Some(wc)) if gc.len() == wc.len() => gc.iter().zip(&wc).all(|(g, w)| {
            let (gf, wf) = (&g["function"], &w["function"]);
            let (ga, wa) = (&gf["arguments"], &wf["arguments"]);
            gf["name"] == wf["name"]
                && if python_nested {
                    ga.get("argkey") == wa.get("argkey")
                } else {
                    same(ga, wa)
                }
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(template: &str, output: &str) -> (Derived, Value) {
        let derived = derive(template).unwrap_or_else(|e| panic!("{e}"));
        let schema = chatparse_runtime::Schema::from_value(derived.spec.clone()).unwrap();
        let message = schema.parse(output).unwrap();
        (derived, message)
    }

    /// Calls as the message's own `tool_calls` list (nested `function`, ids), `[THINK]` tags.
    #[test]
    fn nested_json_array_with_ids() {
        let template = r#"{%- for m in messages %}<|{{ m.role }}|>{% if m.reasoning_content %}[THINK]{{ m.reasoning_content }}[/THINK]{% endif %}{{ m.content or '' }}{% if m.tool_calls %}<calls>{{ m.tool_calls | tojson }}</calls>{% endif %}</s>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"#;
        let (d, m) = parse(
            template,
            r#"[THINK]hm[/THINK]ok<calls>[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]</calls></s>"#,
        );
        assert_eq!(d.class, CallFormat::JsonArray);
        assert_eq!(m["reasoning_content"], "hm");
        assert_eq!(m["content"], "ok");
        assert_eq!(m["tool_calls"][0]["id"], "c1");
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], json!({"a": 1}));
    }

    /// `<call name=…><param name=…>` with raw strings and JSON for the rest; dotted names.
    #[test]
    fn tagged_parameters_with_attributes() {
        let template = r#"{%- for m in messages %}<|{{ m.role }}|>{{ m.content or '' }}{% for c in m.tool_calls or [] %}<call name="{{ c.function.name }}">{% for k, v in c.function.arguments.items() %}<param name="{{ k }}">{{ v if v is string else v | tojson }}</param>{% endfor %}</call>{% endfor %}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"#;
        let (d, m) = parse(
            template,
            r#"Sure.<call name="get.x-y"><param name="a">hello world</param><param name="n">3</param></call><|end|>"#,
        );
        assert_eq!(d.class, CallFormat::TaggedParameters);
        assert_eq!(m["content"], "Sure.");
        assert_eq!(m["tool_calls"][0]["function"]["name"], "get.x-y");
        assert_eq!(
            m["tool_calls"][0]["function"]["arguments"],
            json!({"a": "hello world", "n": 3})
        );
    }

    /// `[TOOL_CALLS]name[ARGS]{…}` repeated, `[THINK]…[/THINK]`.
    #[test]
    fn name_prefix_calls() {
        let template = r#"{%- for m in messages %}[{{ m.role | upper }}]{% if m.role == 'assistant' %}{% if m.reasoning_content %}[THINK]{{ m.reasoning_content }}[/THINK]{% endif %}{{ m.content or '' }}{% for c in m.tool_calls or [] %}[TOOL_CALLS]{{ c.function.name }}[ARGS]{{ c.function.arguments | tojson }}{% endfor %}</s>{% else %}{{ m.content }}{% endif %}{% endfor %}{% if add_generation_prompt %}[ASSISTANT]{% endif %}"#;
        let (d, m) = parse(
            template,
            r#"[THINK]hm[/THINK][TOOL_CALLS]f[ARGS]{"a": [1]}[TOOL_CALLS]g[ARGS]{}</s>"#,
        );
        assert_eq!(d.class, CallFormat::NamePrefix);
        assert_eq!(d.reasoning, "tags");
        assert_eq!(m["reasoning_content"], "hm");
        assert_eq!(m["tool_calls"][1]["function"]["name"], "g");
        assert_eq!(m["tool_calls"][1]["function"]["arguments"], json!({}));
    }

    /// A call that nothing tells from content is refused, with the reason.
    #[test]
    fn bare_calls_are_refused() {
        let template = "{%- for m in messages %}{{ m.role }}: {{ m.content or '' }}{% for c in m.tool_calls or [] %}{{ c.function.name }} {{ c.function.arguments | tojson }}{% endfor %}\n{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}";
        let e = derive(template).unwrap_err();
        assert!(e.reason.contains("cannot be told from content"), "{e}");
    }
}

//! xgrammar's structural tag from a grammar spec.
//!
//! The format (xgrammar's `StructuralTag` with a `format`): the calls as `triggered_tags` over
//! free text — each tag `{"begin", "content", "end"}` where `content` is the arguments' JSON
//! schema (`json_schema`) or, for formats whose arguments are not one JSON object, the
//! arguments' grammar in GBNF (`grammar`). That fits the formats whose calls follow one
//! another, each starting with the trigger (Hermes, Qwen3, Qwen3-Coder, Qwen3.5, Seed-OSS,
//! GLM-4.5, Phi-4-mini, Functionary v3.1, SmolLM3, ERNIE 4.5), under `auto` with parallel calls;
//! every other format (calls in a section or list, ids between name and arguments, channels, no
//! trigger at all) and every other tool choice is written as one `grammar` (GBNF) of the whole
//! output.
//!
//! Why not `at_least_one` / `stop_after_first` for `required` and `--no-parallel`: xgrammar
//! (0.2.8, checked by scripts/check_grammars_xgrammar.py) compiles `at_least_one` as "the output
//! *starts* with a tag" (no reasoning, not even a newline before the first call) and
//! `stop_after_first` as "nothing after the first tag's end" (not even whitespace), so those
//! flags refuse outputs the real templates render (`<think>…</think>` before the call, Hermes
//! 2 Pro's `</tool_call> `).

use crate::{json, Value};

use super::{gbnf, GrammarSpec, ToolChoice};

/// The structural tag of `spec`.
pub fn emit(spec: &GrammarSpec) -> Value {
    let built = spec.built();
    let opts = spec.options();
    let triggered = built.tagged && built.has_calls_root && !built.triggers.is_empty();
    if !triggered || opts.tool_choice != ToolChoice::Auto || !opts.parallel {
        return json!({
            "type": "structural_tag",
            "format": {"type": "grammar", "grammar": spec.gbnf()},
        });
    }
    let tags: Vec<Value> = built
        .calls
        .iter()
        .map(|c| {
            let content = if c.json_args {
                let tool = spec.tools().iter().find(|t| t.name == c.name);
                let schema = tool.map(|t| strict(&t.parameters)).unwrap_or(json!({}));
                json!({"type": "json_schema", "json_schema": schema})
            } else {
                json!({"type": "grammar", "grammar": gbnf::emit(&built.rules, &c.args_rule)})
            };
            json!({"type": "tag", "begin": c.begin, "content": content, "end": c.end})
        })
        .collect();
    json!({
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": built.triggers,
            "tags": tags,
            "at_least_one": false,
            "stop_after_first": false,
        },
    })
}

/// The schema with `"additionalProperties": false` on every object schema that lists
/// `properties` and says nothing of others: the grammars' reading of such a schema (see the
/// JSON-Schema subset), made explicit for engines that default to allowing other keys.
fn strict(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = crate::Map::new();
            for (k, v) in m {
                let v = match k.as_str() {
                    "properties" | "$defs" | "definitions" => match v {
                        Value::Object(p) => {
                            Value::Object(p.iter().map(|(k, s)| (k.clone(), strict(s))).collect())
                        }
                        other => other.clone(),
                    },
                    "items" | "additionalProperties" => strict(v),
                    "anyOf" | "oneOf" | "allOf" | "prefixItems" => match v {
                        Value::Array(a) => Value::Array(a.iter().map(strict).collect()),
                        other => other.clone(),
                    },
                    _ => v.clone(),
                };
                out.insert(k.clone(), v);
            }
            if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

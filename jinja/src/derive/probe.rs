//! Probe conversations: a system and a user message, then one controlled assistant message,
//! rendered with the real template; the assistant's turn is what follows the generation prompt.

use chatparse_runtime::{json, Map, Value};

use crate::render::{json_dumps, ChatTemplate};

/// The reasoning text of the probes.
pub const REASONING: &str = "reasonqz";
/// The content text of the probes.
pub const CONTENT: &str = "answerqz";

/// One tool call of a probe.
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub args: Value,
}

impl Call {
    pub fn new(name: &str, args: Value) -> Call {
        Call {
            name: name.to_owned(),
            args,
        }
    }
}

/// An assistant message of a probe.
#[derive(Debug, Clone, Default)]
pub struct Msg {
    pub content: Option<String>,
    pub reasoning: Option<String>,
    pub calls: Vec<Call>,
}

/// A rendered final turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The text after the generation prompt (or after the common prefix with it).
    pub tail: String,
}

/// How the messages are handed to the template (found by trying, see `super::setup`).
#[derive(Debug)]
pub struct Prober {
    template: ChatTemplate,
    pub vars: Map,
    /// The key the template reads reasoning from.
    pub reasoning_key: String,
    /// What a message without content carries as `content` (None: no key).
    pub empty_content: Option<Value>,
    /// Arguments handed as JSON text instead of an object.
    pub args_string: bool,
    /// Call ids: `call{index:05}`, or Kimi-style `functions.{name}:{index}`.
    pub functions_ids: bool,
}

/// The id of the `i`-th call of a probe.
pub fn call_id(functions_ids: bool, name: &str, i: usize) -> String {
    if functions_ids {
        format!("functions.{name}:{i}")
    } else {
        format!("call{i:05}")
    }
}

impl Prober {
    pub fn new(template: ChatTemplate, vars: Map) -> Prober {
        Prober {
            template,
            vars,
            reasoning_key: "reasoning_content".into(),
            empty_content: None,
            args_string: false,
            functions_ids: false,
        }
    }

    fn tools(names: &[&str]) -> Vec<Value> {
        names
            .iter()
            .map(|n| {
                json!({"type": "function", "function": {"name": n, "description": "A probe tool.",
                    "parameters": {"type": "object", "properties": {
                        "argkey": {"type": "string"}, "argtwo": {"type": "string"}
                    }, "required": []}}})
            })
            .collect()
    }

    fn assistant(&self, m: &Msg) -> Value {
        let mut out = Map::new();
        out.insert("role".into(), json!("assistant"));
        match (&m.content, &self.empty_content) {
            (Some(c), _) => {
                out.insert("content".into(), json!(c));
            }
            (None, Some(e)) => {
                out.insert("content".into(), e.clone());
            }
            (None, None) => {}
        }
        if let Some(r) = &m.reasoning {
            out.insert(self.reasoning_key.clone(), json!(r));
        }
        if !m.calls.is_empty() {
            let calls: Vec<Value> = m
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let args = if self.args_string {
                        Value::String(json_dumps(&c.args))
                    } else {
                        c.args.clone()
                    };
                    json!({"id": call_id(self.functions_ids, &c.name, i), "type": "function",
                        "function": {"name": c.name, "arguments": args}})
                })
                .collect();
            out.insert("tool_calls".into(), Value::Array(calls));
        }
        Value::Object(out)
    }

    /// Renders `[system, user, m]` and cuts out `m`'s turn.
    pub fn turn(&self, m: &Msg) -> Result<Turn, String> {
        let mut names: Vec<&str> = vec!["fnalpha", "fnbeta"];
        for c in &m.calls {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
        let tools = Self::tools(&names);
        let messages = vec![
            json!({"role": "system", "content": "You are a probe."}),
            json!({"role": "user", "content": "Probe question?"}),
            self.assistant(m),
        ];
        let full = self
            .template
            .apply(&messages, Some(&tools), false, &self.vars)
            .map_err(|e| e.to_string())?;
        let prompt = self
            .template
            .apply(&messages[..2], Some(&tools), true, &self.vars)
            .map_err(|e| e.to_string())?;
        let mut n = super::text::marker_prefix(&full, &prompt).len();
        // A prompt that is no prefix of the full rendering (e.g. a system prompt moved into the
        // last user turn): cut after what follows the last user message in both.
        let question = "Probe question?";
        if let (Some(qf), Some(qp)) = (full.rfind(question), prompt.rfind(question)) {
            if n <= qf {
                let at = qf + question.len();
                n = at
                    + super::text::marker_prefix(&full[at..], &prompt[qp + question.len()..]).len();
            }
        }
        Ok(Turn {
            tail: full[n..].to_owned(),
        })
    }

    /// Renders the generation prompt alone with extra variables.
    pub fn prompt_with(&self, vars: &Map) -> Result<String, String> {
        let mut all = self.vars.clone();
        all.extend(vars.clone());
        let messages = vec![
            json!({"role": "system", "content": "You are a probe."}),
            json!({"role": "user", "content": "Probe question?"}),
        ];
        self.template
            .apply(&messages, Some(&Self::tools(&["fnalpha"])), true, &all)
            .map_err(|e| e.to_string())
    }
}

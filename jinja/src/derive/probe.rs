//! Probe conversations: a system and a user message, then one controlled assistant message,
//! rendered with the real template; the assistant's turn is what follows the generation prompt.

use std::cell::RefCell;

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
    /// Every rendering made so far, by what it was given.
    renderings: RefCell<Vec<Rendering>>,
}

/// One rendering of the template and what it was given.
///
/// Why keep them: a derivation renders a few dozen probes, and most of their generation
/// prompts (and some whole conversations, when a variable or key tried makes no difference)
/// are renderings already made. A rendering is a function of its inputs (the clock is fixed, and
/// minijinja has no randomness), so the kept answer, an error included, is the answer. Renderings
/// are most of a derivation's time; comparing a probe's few small values is not.
#[derive(Debug)]
struct Rendering {
    messages: Vec<Value>,
    tools: Vec<String>,
    add_generation_prompt: bool,
    vars: Map,
    text: Result<String, String>,
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
            renderings: RefCell::default(),
        }
    }

    /// The template's rendering of `messages` with the probe tools `names` and `vars`: the
    /// kept one if this was rendered before (see [`Rendering`]).
    fn render(
        &self,
        messages: &[Value],
        names: &[&str],
        add_generation_prompt: bool,
        vars: &Map,
    ) -> Result<String, String> {
        // The probes' messages differ in the last one (the assistant's), so it is compared
        // first.
        let same = |r: &&Rendering| {
            r.add_generation_prompt == add_generation_prompt
                && r.tools.iter().map(String::as_str).eq(names.iter().copied())
                && r.messages.len() == messages.len()
                && r.messages.iter().rev().eq(messages.iter().rev())
                && r.vars == *vars
        };
        if let Some(r) = self.renderings.borrow().iter().find(same) {
            return r.text.clone();
        }
        let text = self
            .template
            .apply(
                messages,
                Some(&Self::tools(names)),
                add_generation_prompt,
                vars,
            )
            .map_err(|e| e.to_string());
        self.renderings.borrow_mut().push(Rendering {
            messages: messages.to_vec(),
            tools: names.iter().map(|&n| n.to_owned()).collect(),
            add_generation_prompt,
            vars: vars.clone(),
            text: text.clone(),
        });
        text
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
        let messages = vec![
            json!({"role": "system", "content": "You are a probe."}),
            json!({"role": "user", "content": "Probe question?"}),
            self.assistant(m),
        ];
        let full = self.render(&messages, &names, false, &self.vars)?;
        let prompt = self.render(&messages[..2], &names, true, &self.vars)?;
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
        self.render(&messages, &["fnalpha"], true, &all)
    }
}

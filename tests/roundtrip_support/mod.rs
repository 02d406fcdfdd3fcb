//! The template round trips (see `tests/roundtrip/README.md`): render each standard conversation
//! with a family's real chat template, cut the rendering where the final assistant turn starts,
//! parse the rest with the family's schema and require the final message back.

pub mod streamed;
pub mod tokens;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chatparse::render::ChatTemplate;
use chatparse::{json, Map, Value};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the chat templates directory is looked for: `$CHATPARSE_TEMPLATES` (a relative path is
/// taken from the repository root), else `../shared/chat_templates`.
pub fn templates_dir_wanted() -> PathBuf {
    match std::env::var_os("CHATPARSE_TEMPLATES") {
        Some(dir) if !dir.is_empty() => repo_root().join(dir),
        _ => repo_root().join("../shared/chat_templates"),
    }
}

/// The chat templates directory ([`templates_dir_wanted`]), `None` when it does not exist.
pub fn templates_dir() -> Option<PathBuf> {
    let dir = templates_dir_wanted();
    dir.is_dir().then(|| dir.canonicalize().unwrap_or(dir))
}

pub fn families_dir() -> PathBuf {
    repo_root().join("tests/roundtrip")
}

/// The ids of the standard conversations, in report order.
pub const CONVERSATIONS: [&str; 7] = [
    "content_only",
    "reasoning_content",
    "one_tool_call",
    "two_tool_calls",
    "reasoning_tool_call",
    "rich_arguments",
    "empty_arguments",
];

const FIELDS: [&str; 12] = [
    "schema",
    "template",
    "variables",
    "reasoning_key",
    "arguments",
    "cut",
    "bos_token",
    "eos_token",
    "tool_call_id",
    "empty_content",
    "conversations",
    "notes",
];

/// What a family states about one standard conversation.
#[derive(Debug, Clone, Default)]
pub struct Stated {
    /// The template cannot express the conversation (why).
    pub skip: Option<String>,
    /// Where this conversation's final turn starts, when the family's `cut` does not fit it.
    pub cut: Option<Cut>,
    /// The template drops or changes something: the schema must give this message instead.
    pub expect: Option<Value>,
    /// Why the template loses what `expect` lacks (required with `expect`), or why the `cut`.
    pub why: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Cut {
    GenerationPrompt,
    AfterLast(String),
}

/// One `tests/roundtrip/<name>.json` file.
#[derive(Debug, Clone)]
pub struct Family {
    pub name: String,
    pub schema: String,
    pub template: String,
    pub variables: Map,
    pub reasoning_key: Option<String>,
    pub arguments_as_string: bool,
    pub cut: Cut,
    pub bos_token: String,
    pub eos_token: String,
    pub tool_call_id: Option<String>,
    /// What an assistant message without content (a tool-call turn) hands the template as
    /// `content`: nothing (the key is absent), `""` or `null`.
    pub empty_content: Option<Value>,
    pub conversations: BTreeMap<String, Stated>,
}

/// Every family file name (stem) in `tests/roundtrip/`, sorted.
pub fn family_names() -> Vec<String> {
    family_names_in(&families_dir())
}

/// Every `*.json` file stem in `dir`, sorted.
pub fn family_names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let path = e.ok()?.path();
            if path.extension()? != "json" {
                return None;
            }
            Some(path.file_stem()?.to_str()?.to_owned())
        })
        .collect();
    names.sort();
    names
}

impl Family {
    /// Load and check `tests/roundtrip/<name>.json`; every problem of the file at once.
    pub fn load(name: &str) -> Result<Family, Vec<String>> {
        Family::load_from(&families_dir().join(format!("{name}.json")))
    }

    /// Load and check a family file anywhere (its name is the file stem).
    pub fn load_from(path: &Path) -> Result<Family, Vec<String>> {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).map_err(|e| vec![format!("cannot read: {e}")])?;
        let doc: Value =
            chatparse::value::from_str(&text).map_err(|e| vec![format!("invalid JSON: {e}")])?;
        Family::from_value(name, &doc)
    }

    pub fn from_value(name: &str, doc: &Value) -> Result<Family, Vec<String>> {
        let mut errors = Vec::new();
        let Some(obj) = doc.as_object() else {
            return Err(vec!["the file must hold a JSON object".into()]);
        };
        for key in obj.keys() {
            if !FIELDS.contains(&key.as_str()) {
                errors.push(format!(
                    "unknown field {key:?} (fields: {})",
                    FIELDS.join(", ")
                ));
            }
        }
        let string = |key: &str, errors: &mut Vec<String>| -> Option<String> {
            match obj.get(key) {
                None => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    errors.push(format!("{key} must be a string, not {other}"));
                    None
                }
            }
        };
        let schema = string("schema", &mut errors).unwrap_or_default();
        if schema.is_empty() {
            errors.push("schema (a file stem in schemas/) is required".into());
        } else if !repo_root()
            .join("schemas")
            .join(format!("{schema}.json"))
            .is_file()
        {
            errors.push(format!("schema {schema:?}: no schemas/{schema}.json"));
        }
        let template = string("template", &mut errors).unwrap_or_default();
        if template.is_empty() {
            errors.push("template (a file name in the templates directory) is required".into());
        } else if template.contains(['/', '\\']) {
            errors.push(format!(
                "template {template:?}: a file name, not a path, in the templates directory"
            ));
        }
        let variables = match obj.get("variables") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(other) => {
                errors.push(format!("variables must be an object, not {other}"));
                Map::new()
            }
        };
        let reasoning_key = string("reasoning_key", &mut errors);
        let arguments_as_string = match string("arguments", &mut errors).as_deref() {
            None | Some("object") => false,
            Some("string") => true,
            Some(other) => {
                errors.push(format!(
                    "arguments must be \"object\" or \"string\", not {other:?}"
                ));
                false
            }
        };
        let cut = match obj.get("cut").map(parse_cut) {
            None => Cut::GenerationPrompt,
            Some(Ok(cut)) => cut,
            Some(Err(e)) => {
                errors.push(e);
                Cut::GenerationPrompt
            }
        };
        let bos_token = string("bos_token", &mut errors).unwrap_or_default();
        let eos_token = string("eos_token", &mut errors).unwrap_or_default();
        let tool_call_id = string("tool_call_id", &mut errors);
        let empty_content = match string("empty_content", &mut errors).as_deref() {
            None | Some("omit") => None,
            Some("empty_string") => Some(json!("")),
            Some("null") => Some(Value::Null),
            Some(other) => {
                errors.push(format!(
                    "empty_content must be \"omit\", \"empty_string\" or \"null\", not {other:?}"
                ));
                None
            }
        };
        let mut conversations = BTreeMap::new();
        match obj.get("conversations") {
            None => {}
            Some(Value::Object(m)) => {
                for (id, stated) in m {
                    if !CONVERSATIONS.contains(&id.as_str()) {
                        errors.push(format!(
                            "conversations.{id}: not a standard conversation ({})",
                            CONVERSATIONS.join(", ")
                        ));
                        continue;
                    }
                    match parse_stated(stated) {
                        Ok(s) => {
                            conversations.insert(id.clone(), s);
                        }
                        Err(e) => errors.push(format!("conversations.{id}: {e}")),
                    }
                }
            }
            Some(other) => errors.push(format!("conversations must be an object, not {other}")),
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Family {
            name: name.to_owned(),
            schema,
            template,
            variables,
            reasoning_key,
            arguments_as_string,
            cut,
            bos_token,
            eos_token,
            tool_call_id,
            empty_content,
            conversations,
        })
    }
}

fn parse_cut(v: &Value) -> Result<Cut, String> {
    match v {
        Value::String(s) if s == "generation_prompt" => Ok(Cut::GenerationPrompt),
        Value::Object(m) if m.len() == 1 && m.get("after_last").is_some_and(Value::is_string) => {
            match m["after_last"].as_str().unwrap_or_default() {
                "" => Err("cut.after_last must not be empty".into()),
                literal => Ok(Cut::AfterLast(literal.to_owned())),
            }
        }
        other => Err(format!(
            "cut must be \"generation_prompt\" or {{\"after_last\": \"<literal>\"}}, not {other}"
        )),
    }
}

fn parse_stated(v: &Value) -> Result<Stated, String> {
    let Some(m) = v.as_object() else {
        return Err(format!(
            "must be {{\"skip\": \"why\"}}, or {{\"expect\": {{…}}, \"why\": \"…\"}} and/or {{\"cut\": …}}, not {v}"
        ));
    };
    let text = |key: &str| match m.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(format!("{key} must be a non-empty string saying why")),
    };
    if m.contains_key("skip") {
        if m.len() != 1 {
            return Err("skip stands alone: {\"skip\": \"why\"}".into());
        }
        return Ok(Stated {
            skip: Some(text("skip")?),
            ..Stated::default()
        });
    }
    if let Some(extra) = m
        .keys()
        .find(|k| !["expect", "why", "cut"].contains(&k.as_str()))
    {
        return Err(format!("unknown key {extra:?} (skip, or expect, why, cut)"));
    }
    let mut stated = Stated::default();
    if let Some(cut) = m.get("cut") {
        stated.cut = Some(parse_cut(cut)?);
    }
    if let Some(expect) = m.get("expect") {
        if !expect.is_object() {
            return Err("expect must be the message (an object)".into());
        }
        stated.expect = Some(expect.clone());
        stated.why = Some(text("why")?);
    } else if m.contains_key("why") {
        stated.why = Some(text("why")?);
    }
    if stated.cut.is_none() && stated.expect.is_none() {
        return Err("needs skip, expect (with why) or cut".into());
    }
    Ok(stated)
}

/// `tests/roundtrip_support/conversations.json`.
pub struct Standard {
    pub system: String,
    pub tools: Value,
    pub conversations: Map,
}

pub fn standard() -> Standard {
    let path = repo_root().join("tests/roundtrip_support/conversations.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = chatparse::value::from_str(&text).unwrap();
    let conversations = doc["conversations"].as_object().unwrap().clone();
    let ids: Vec<&str> = conversations.keys().map(String::as_str).collect();
    assert_eq!(
        ids, CONVERSATIONS,
        "conversations.json and CONVERSATIONS disagree"
    );
    Standard {
        system: doc["system"].as_str().unwrap().to_owned(),
        tools: doc["tools"].clone(),
        conversations,
    }
}

/// Python's `json.dumps(value, ensure_ascii=False)`: the JSON text handed to templates that take
/// arguments as a string.
pub fn json_text(value: &Value) -> String {
    chatparse::render::json_dumps(value)
}

/// A standard conversation in the HF message format of `family`: the messages handed to the
/// template (system first) and the final message the schema must give back (arguments as
/// objects). `None` when the final message has reasoning and the family has no `reasoning_key`.
pub fn build(family: &Family, std: &Standard, id: &str) -> Option<(Vec<Value>, Value)> {
    let neutral = std.conversations[id].as_array().unwrap();
    let mut messages = vec![json!({"role": "system", "content": std.system})];
    let mut want = Value::Null;
    let mut call_ids: Vec<String> = Vec::new();
    let mut answered = 0;
    let mut counter = 0;
    for (i, m) in neutral.iter().enumerate() {
        let last = i + 1 == neutral.len();
        let role = m["role"].as_str().unwrap();
        let mut out = Map::new();
        out.insert("role".into(), json!(role));
        match role {
            "assistant" => {
                let mut original = out.clone();
                match (m.get("content"), &family.empty_content) {
                    (Some(content), _) => {
                        out.insert("content".into(), content.clone());
                        original.insert("content".into(), content.clone());
                    }
                    (None, Some(empty)) => {
                        out.insert("content".into(), empty.clone());
                    }
                    (None, None) => {}
                }
                if let Some(reasoning) = m.get("reasoning") {
                    match &family.reasoning_key {
                        Some(key) => {
                            out.insert(key.clone(), reasoning.clone());
                            original.insert(key.clone(), reasoning.clone());
                        }
                        None if last => return None,
                        None => {}
                    }
                }
                if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                    call_ids.clear();
                    answered = 0;
                    let mut given = Vec::new();
                    let mut wanted = Vec::new();
                    for call in calls {
                        let name = call["name"].as_str().unwrap();
                        let call_id = match &family.tool_call_id {
                            Some(pattern) => pattern
                                .replace("{name}", name)
                                .replace("{index}", &counter.to_string()),
                            None => format!("call{counter:05}"),
                        };
                        counter += 1;
                        call_ids.push(call_id.clone());
                        let arguments = &call["arguments"];
                        let handed = if family.arguments_as_string {
                            Value::String(json_text(arguments))
                        } else {
                            arguments.clone()
                        };
                        given.push(json!({"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": handed}}));
                        wanted.push(json!({"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": arguments}}));
                    }
                    out.insert("tool_calls".into(), Value::Array(given));
                    original.insert("tool_calls".into(), Value::Array(wanted));
                }
                if last {
                    want = Value::Object(original);
                }
            }
            "tool" => {
                out.insert(
                    "tool_call_id".into(),
                    json!(call_ids.get(answered).cloned().unwrap_or_default()),
                );
                answered += 1;
                out.insert("name".into(), m["name"].clone());
                out.insert("content".into(), m["content"].clone());
            }
            _ => {
                out.insert("content".into(), m["content"].clone());
            }
        }
        messages.push(Value::Object(out));
    }
    Some((messages, want))
}

/// Equality of messages as Python dicts, except that ints and floats are different kinds; a tool
/// call's `id` is compared only when both sides have one (templates need ids, few formats carry
/// them back).
pub fn same_message(got: &Value, want: &Value) -> bool {
    let (mut got, mut want) = (got.clone(), want.clone());
    if let (Some(g), Some(w)) = (
        got.get_mut("tool_calls").and_then(Value::as_array_mut),
        want.get_mut("tool_calls").and_then(Value::as_array_mut),
    ) {
        for (g, w) in g.iter_mut().zip(w.iter_mut()) {
            if let (Some(go), Some(wo)) = (g.as_object_mut(), w.as_object_mut()) {
                if !go.contains_key("id") || !wo.contains_key("id") {
                    go.remove("id");
                    wo.remove("id");
                }
            }
        }
    }
    same_value(&got, &want)
}

fn is_int(n: &chatparse::Number) -> bool {
    !n.to_string().contains(['.', 'e', 'E'])
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if is_int(x) != is_int(y) {
                return false;
            }
            if is_int(x) {
                return x.to_string() == y.to_string();
            }
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// What became of one conversation.
pub enum Outcome {
    Passed,
    /// The stated loss happened: the schema gave the family's `expect` (why).
    StatedLoss(String),
    Skipped(String),
    Failed(Failure),
}

pub struct Failure {
    pub conversation: String,
    pub problem: String,
    pub tail: Option<String>,
    pub got: Option<String>,
    pub want: Option<String>,
}

impl Failure {
    fn new(conversation: &str, problem: impl Into<String>) -> Failure {
        Failure {
            conversation: conversation.to_owned(),
            problem: problem.into(),
            tail: None,
            got: None,
            want: None,
        }
    }
}

/// One rendering, kept for `CHATPARSE_ROUNDTRIP_DUMP` (checked against Python by
/// `tests/roundtrip_support/check_rendering.py`).
struct Rendered {
    conversation: String,
    add_generation_prompt: bool,
    context: Value,
    result: Result<String, String>,
}

/// Renders a family's template.
pub struct Renderer {
    template: ChatTemplate,
    family: Family,
    tools: Value,
    log: Vec<Rendered>,
}

impl Renderer {
    pub fn new(family: &Family, std: &Standard, source: &str) -> Result<Renderer, String> {
        // strftime_now fixed to the date check_rendering.py gives Python, for reproducibility.
        let template = ChatTemplate::new(source)
            .and_then(|t| t.with_fixed_date(2026, 1, 1))
            .map_err(|e| e.to_string())?;
        Ok(Renderer {
            template,
            family: family.clone(),
            tools: std.tools.clone(),
            log: Vec::new(),
        })
    }

    /// The variables the template gets besides messages, tools and add_generation_prompt.
    fn extra(&self) -> Map {
        let mut ctx = Map::new();
        ctx.insert("bos_token".into(), json!(self.family.bos_token));
        ctx.insert("eos_token".into(), json!(self.family.eos_token));
        for (k, v) in &self.family.variables {
            ctx.insert(k.clone(), v.clone());
        }
        ctx
    }

    pub fn render(
        &mut self,
        conversation: &str,
        messages: &[Value],
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        let extra = self.extra();
        let tools = self.tools.as_array().map(Vec::as_slice);
        let result = self
            .template
            .apply(messages, tools, add_generation_prompt, &extra)
            .map_err(|e| e.to_string());
        // The context as transformers' apply_chat_template would build it, for the dump.
        let mut context = Map::new();
        context.insert("messages".into(), Value::Array(messages.to_vec()));
        context.insert("tools".into(), self.tools.clone());
        context.insert("documents".into(), Value::Null);
        context.insert("add_generation_prompt".into(), json!(add_generation_prompt));
        context.extend(extra);
        let context = Value::Object(context);
        self.log.push(Rendered {
            conversation: conversation.to_owned(),
            add_generation_prompt,
            context,
            result: result.clone(),
        });
        result
    }

    fn dump(&self, dir: &Path, template_path: &Path) {
        let renders: Vec<Value> = self
            .log
            .iter()
            .map(|r| {
                json!({
                    "conversation": r.conversation,
                    "add_generation_prompt": r.add_generation_prompt,
                    "context": r.context,
                    "output": r.result.as_ref().ok(),
                    "error": r.result.as_ref().err(),
                })
            })
            .collect();
        let doc = json!({
            "family": self.family.name,
            "template": template_path.display().to_string(),
            "renders": renders,
        });
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(format!("{}.json", self.family.name));
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// A rendered final assistant turn: what the model would have written after its prompt.
pub struct Turn {
    /// The text the schema parses: the rendering from where the final assistant turn starts.
    pub tail: String,
    /// Everything rendered before `tail` (the prompt the model continues).
    pub prompt: String,
    /// The final message handed to the template (arguments as objects).
    pub original: Value,
    /// What the schema must give: `original`, or the family's stated `expect`.
    pub want: Value,
    /// Why `want` is not `original` (the stated loss), if it is not.
    pub why: Option<String>,
}

/// Render one conversation of a family and cut out its final assistant turn; the outcome instead
/// when the family skips it or the rendering fails.
pub fn render_turn(
    family: &Family,
    std: &Standard,
    renderer: &mut Renderer,
    id: &str,
) -> Result<Turn, Outcome> {
    let stated = family.conversations.get(id);
    if let Some(why) = stated.and_then(|s| s.skip.as_ref()) {
        return Err(Outcome::Skipped(why.clone()));
    }
    let Some((messages, original)) = build(family, std, id) else {
        return Err(Outcome::Skipped("the family has no reasoning_key".into()));
    };
    let full = match renderer.render(id, &messages, false) {
        Ok(text) => text,
        Err(e) => {
            return Err(Outcome::Failed(Failure::new(
                id,
                format!("rendering failed: {e}"),
            )))
        }
    };
    let cut = stated.and_then(|s| s.cut.as_ref()).unwrap_or(&family.cut);
    let tail = match cut {
        Cut::GenerationPrompt => {
            let prompt = match renderer.render(id, &messages[..messages.len() - 1], true) {
                Ok(text) => text,
                Err(e) => {
                    return Err(Outcome::Failed(Failure::new(
                        id,
                        format!("rendering the prompt (without the final message, with the generation prompt) failed: {e}"),
                    )))
                }
            };
            match full.strip_prefix(prompt.as_str()) {
                Some(tail) => tail.to_owned(),
                None => {
                    let common = full
                        .char_indices()
                        .zip(prompt.chars())
                        .find(|((_, a), b)| a != b)
                        .map(|((i, _), _)| i)
                        .unwrap_or(full.len().min(prompt.len()));
                    let from = common.saturating_sub(60);
                    let from = (0..=from)
                        .rev()
                        .find(|i| full.is_char_boundary(*i) && prompt.is_char_boundary(*i))
                        .unwrap_or(0);
                    let mut f = Failure::new(
                        id,
                        format!(
                            "the prompt (without the final message, with the generation prompt) is not a prefix of the full rendering; they differ at byte {common}: prompt {:?}… vs full {:?}…",
                            clip(&prompt[from..], 160),
                            clip(&full[from..], 160)
                        ),
                    );
                    f.tail = None;
                    return Err(Outcome::Failed(f));
                }
            }
        }
        Cut::AfterLast(literal) => match full.rfind(literal.as_str()) {
            Some(at) => full[at + literal.len()..].to_owned(),
            None => {
                return Err(Outcome::Failed(Failure::new(
                    id,
                    format!("cut: {literal:?} does not occur in the rendering"),
                )))
            }
        },
    };
    let prompt = full[..full.len() - tail.len()].to_owned();
    let (want, why) = match stated.and_then(|s| Some((s.expect.as_ref()?, s.why.as_ref()?))) {
        Some((expect, why)) => (expect.clone(), Some(why.clone())),
        None => (original.clone(), None),
    };
    Ok(Turn {
        tail,
        prompt,
        original,
        want,
        why,
    })
}

/// Run one conversation of a family.
fn run_conversation(
    family: &Family,
    std: &Standard,
    parse: &dyn Fn(&str) -> Result<Value, String>,
    renderer: &mut Renderer,
    id: &str,
    original_may_return: bool,
) -> Outcome {
    let Turn {
        tail,
        original,
        want,
        why,
        ..
    } = match render_turn(family, std, renderer, id) {
        Ok(turn) => turn,
        Err(outcome) => return outcome,
    };
    let loss = why.is_some();
    if loss && same_message(&want, &original) {
        return Outcome::Failed(Failure::new(
            id,
            "the stated `expect` is the original message: remove the conversations entry",
        ));
    }
    let got = parse(&tail);
    let failure = |problem: String, got: Option<String>| {
        Outcome::Failed(Failure {
            conversation: id.to_owned(),
            problem,
            tail: Some(tail.clone()),
            got,
            want: Some(want.to_string()),
        })
    };
    match got {
        Err(e) => failure(format!("the schema failed to parse: {e}"), None),
        Ok(got) if same_message(&got, &want) => {
            match why {
                Some(why) => Outcome::StatedLoss(why),
                None => Outcome::Passed,
            }
        }
        Ok(got) if loss && original_may_return && same_message(&got, &original) => Outcome::Passed,
        Ok(got) if loss && original_may_return && no_new_loss(&got, &want, &original) => {
            Outcome::StatedLoss(format!(
                "{} — this parser loses no more than that",
                why.unwrap_or_default()
            ))
        }
        Ok(got) if loss && same_message(&got, &original) => failure(
            "the stated loss did not happen: the original message came back; remove the conversations entry".into(),
            Some(got.to_string()),
        ),
        Ok(got) => failure(
            if loss {
                "not the stated `expect`".into()
            } else {
                "not the original message".into()
            },
            Some(got.to_string()),
        ),
    }
}

fn clip(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// The report of one family: every conversation, every failure.
pub struct Report {
    pub family: String,
    pub outcomes: Vec<(String, Outcome)>,
}

impl Report {
    pub fn failures(&self) -> impl Iterator<Item = &Failure> {
        self.outcomes.iter().filter_map(|(_, o)| match o {
            Outcome::Failed(f) => Some(f),
            _ => None,
        })
    }

    pub fn summary(&self) -> String {
        let mut s = format!("{}:", self.family);
        for (id, o) in &self.outcomes {
            let what = match o {
                Outcome::Passed => "ok".to_owned(),
                Outcome::StatedLoss(why) => format!("ok, stated loss ({why})"),
                Outcome::Skipped(why) => format!("skipped ({why})"),
                Outcome::Failed(_) => "FAILED".to_owned(),
            };
            let _ = write!(s, "\n  {id}: {what}");
        }
        s
    }

    pub fn failure_text(&self) -> String {
        let mut s = String::new();
        for f in self.failures() {
            let _ = writeln!(s, "[{}] {}: {}", self.family, f.conversation, f.problem);
            if let Some(tail) = &f.tail {
                let _ = writeln!(s, "    rendered tail: {}", clip_debug(tail));
            }
            if let Some(got) = &f.got {
                let _ = writeln!(s, "    got:  {got}");
            }
            if let Some(want) = &f.want {
                let _ = writeln!(s, "    want: {want}");
            }
        }
        s
    }
}

fn clip_debug(s: &str) -> String {
    let d = format!("{s:?}");
    if d.chars().count() > 3000 {
        format!("{}…", d.chars().take(3000).collect::<String>())
    } else {
        d
    }
}

/// The renderer of a family's template, read from the templates directory.
pub fn load_renderer(
    family: &Family,
    std: &Standard,
    templates: &Path,
) -> Result<Renderer, String> {
    let template_path = templates.join(&family.template);
    let source = std::fs::read_to_string(&template_path)
        .map_err(|e| format!("template {}: {e}", template_path.display()))?;
    Renderer::new(family, std, &source)
}

/// Run every conversation of one family.
pub fn run_family(family: &Family, templates: &Path) -> Report {
    let std = standard();
    let mut report = Report {
        family: family.name.clone(),
        outcomes: Vec::new(),
    };
    let fail_all = |report: &mut Report, problem: String| {
        report.outcomes.push((
            "(family)".into(),
            Outcome::Failed(Failure::new("(family)", problem)),
        ));
    };
    let schema_path = repo_root()
        .join("schemas")
        .join(format!("{}.json", family.schema));
    let schema = match chatparse::Schema::from_path(&schema_path) {
        Ok(s) => s,
        Err(e) => {
            fail_all(&mut report, format!("schema: {e}"));
            return report;
        }
    };
    let template_path = templates.join(&family.template);
    let mut renderer = match load_renderer(family, &std, templates) {
        Ok(r) => r,
        Err(e) => {
            fail_all(&mut report, e);
            return report;
        }
    };
    let parse = |tail: &str| schema.parse(tail).map_err(|e| e.to_string());
    for id in CONVERSATIONS {
        let outcome = run_conversation(family, &std, &parse, &mut renderer, id, false);
        report.outcomes.push((id.to_owned(), outcome));
    }
    if let Some(dir) = std::env::var_os("CHATPARSE_ROUNDTRIP_DUMP") {
        renderer.dump(Path::new(&dir), &template_path);
    }
    report
}

/// The body of each family's test: run the family; its summary, or every failure at once.
pub fn family_test(name: &str) -> Result<String, String> {
    let templates = templates_dir().ok_or_else(|| {
        format!(
            "chat templates directory not found at {}: set CHATPARSE_TEMPLATES or provide ../shared/chat_templates",
            templates_dir_wanted().display()
        )
    })?;
    let family = Family::load(name)
        .map_err(|errors| format!("tests/roundtrip/{name}.json:\n  {}", errors.join("\n  ")))?;
    let report = run_family(&family, &templates);
    let summary = report.summary();
    let failures = report.failure_text();
    if failures.is_empty() {
        Ok(summary)
    } else {
        Err(format!(
            "template round trip of family {name} ({} with {}) failed:\n{failures}\n{summary}",
            family.schema, family.template
        ))
    }
}

/// Run every conversation of one family with another parser (e.g. one derived from the
/// template): the original message must come back, or the family's stated loss (a parser that
/// loses less than the shipped one passes).
#[allow(dead_code)] // used by tests/derive.rs
pub fn run_family_with(
    family: &Family,
    templates: &Path,
    parse: &dyn Fn(&str) -> Result<Value, String>,
) -> Report {
    let std = standard();
    let mut report = Report {
        family: family.name.clone(),
        outcomes: Vec::new(),
    };
    let mut renderer = match load_renderer(family, &std, templates) {
        Ok(r) => r,
        Err(e) => {
            report.outcomes.push((
                "(family)".into(),
                Outcome::Failed(Failure::new("(family)", e)),
            ));
            return report;
        }
    };
    for id in CONVERSATIONS {
        let outcome = run_conversation(family, &std, parse, &mut renderer, id, true);
        report.outcomes.push((id.to_owned(), outcome));
    }
    report
}

/// Whether `got` differs from `original` only where the stated `expect` differs from it too (a
/// parser that loses no more than the shipped one): compared key by key and call by call, ids
/// of tool calls only when `got` has them.
pub fn no_new_loss(got: &Value, expect: &Value, original: &Value) -> bool {
    fn strip_ids(v: &Value) -> Value {
        let mut v = v.clone();
        if let Some(calls) = v.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for c in calls {
                if let Some(o) = c.as_object_mut() {
                    o.remove("id");
                }
            }
        }
        v
    }
    let got_ids = got["tool_calls"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c.get("id").is_some()));
    let (o, e) = if got_ids {
        (original.clone(), expect.clone())
    } else {
        (strip_ids(original), strip_ids(expect))
    };
    within(got, &e, &o)
}

fn within(g: &Value, e: &Value, o: &Value) -> bool {
    if same_value(g, o) {
        return true;
    }
    if same_value(e, o) {
        return false;
    }
    match (g, e, o) {
        (Value::Object(gm), Value::Object(em), Value::Object(om)) => {
            let keys: std::collections::BTreeSet<&String> =
                gm.keys().chain(om.keys()).chain(em.keys()).collect();
            keys.into_iter().all(|k| {
                let n = Value::Null;
                within(
                    gm.get(k).unwrap_or(&n),
                    em.get(k).unwrap_or(&n),
                    om.get(k).unwrap_or(&n),
                )
            })
        }
        (Value::Array(ga), Value::Array(ea), Value::Array(oa))
            if ga.len() == oa.len() && ea.len() == oa.len() =>
        {
            ga.iter().zip(ea).zip(oa).all(|((g, e), o)| within(g, e, o))
        }
        _ => true,
    }
}

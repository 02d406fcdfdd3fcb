//! AgentScope-style parsers: ask a model for output in a fixed shape (a fenced code block, a JSON
//! object in a `json` block, content between tags, `<name>…</name>` tags found by a regex), then
//! read it back. Each parser gives the prompt text
//! ([`format_instruction`](MultiTaggedContentParser::format_instruction), AgentScope's wording),
//! the parse, and — but the regex parser — a grammar of the shape for constrained decoding (GBNF
//! and Lark, from the same IR as [`crate::grammar`]). The dict parsers route the parsed keys to a
//! message's content, memory and metadata ([`KeyRouting`], AgentScope's `DictFilterMixin`).
//!
//! As AgentScope 0.1.6 (`agentscope.parsers`, the last release that has them) reads them: a block
//! or tag is found by the **first** occurrence of its opening marker and the first closing marker
//! after it; text around is free; a `json` block with a marker missing is read as if the marker
//! were there; JSON contents are read as `json.loads` reads them
//! ([`chatparse::runtime::py::json::loads`](crate::runtime::py::json::loads)). The grammars ask
//! for the full shape: free text, the blocks (tags in the order given), free text.
//! `scripts/check_agentscope.py` compares all of it with the `agentscope` package itself
//! (`tests/agentscope.rs`).
//!
//! ```
//! use chatparse::parsers::{Keys, MultiTaggedContentParser, TaggedContent};
//! let parser = MultiTaggedContentParser::new(vec![
//!     TaggedContent::new("thought", "[THOUGHT]", "what you thought", "[/THOUGHT]"),
//!     TaggedContent::new("finish", "[FINISH]", "true/false", "[/FINISH]").parse_json(),
//! ])
//! .keys_to_content(Keys::key("thought"))
//! .keys_to_metadata(Keys::list(&["finish"]));
//! assert_eq!(parser.format_instruction(),
//!     "Respond with specific tags as outlined below, and the content between [FINISH] and \
//!      [/FINISH] MUST be a JSON object:\n[THOUGHT]what you thought[/THOUGHT]\n[FINISH]true/false[/FINISH]");
//! let parsed = parser.parse("Hm.\n[THOUGHT]Done.[/THOUGHT]\n[FINISH]true[/FINISH]")?;
//! assert_eq!(parsed["thought"], "Done.");
//! assert_eq!(parsed["finish"], true);
//! assert_eq!(parser.routing().to_content(&parsed, false)?, Some("Done.".into()));
//! assert_eq!(parser.routing().to_metadata(&parsed, false)?, Some(chatparse::json!({"finish": true})));
//! assert!(parser.gbnf().starts_with("root ::= "));
//! # Ok::<(), chatparse::parsers::ParserError>(())
//! ```

use std::fmt;
use std::sync::Arc;

use crate::runtime::pyre::PyRegex;
use crate::{Map, Value};

use crate::grammar::ir::{Node, Rules};

/// Why a text does not have the parser's shape, or a key cannot be routed. Each is one of
/// AgentScope's exceptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParserError {
    /// Markers are missing (`TagNotFoundError`): the missing tags — the opening one, the closing
    /// one, or both — or, for [`RegexTaggedContentParser`], the required keys not found.
    TagNotFound(Vec<String>),
    /// The content is not JSON (`JsonParsingError`): `json.loads`'s message.
    Json(String),
    /// The JSON is not an object where a dict is asked for (`JsonTypeError`).
    NotAnObject,
    /// Required keys are missing from the JSON object (`RequiredFieldNotFoundError`).
    MissingKeys(Vec<String>),
    /// A key routed to content, memory or metadata is not in the parsed object (`KeyError` for
    /// a single key, `ValueError` for a key of a list).
    KeyNotFound(String),
    /// The regex of a [`RegexTaggedContentParser`] ran out of its backtracking budget (Python's
    /// `re` has none).
    Regex(String),
}

impl fmt::Display for ParserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParserError::TagNotFound(t) => write!(f, "missing tags: {}", t.join(", ")),
            ParserError::Json(e) => write!(f, "invalid JSON: {e}"),
            ParserError::NotAnObject => write!(f, "a JSON dictionary object is wanted"),
            ParserError::MissingKeys(k) => write!(f, "missing required keys: {}", k.join(", ")),
            ParserError::KeyNotFound(k) => write!(f, "key {k} not found in the response"),
            ParserError::Regex(e) => write!(f, "regex: {e}"),
        }
    }
}

impl std::error::Error for ParserError {}

/// AgentScope's `_extract_first_content_by_tag`: the text between the first `begin` and the
/// first `end` after it. Missing: the opening tag, and the closing one when it is nowhere after
/// the opening tag (or, without one, nowhere at all).
fn between<'t>(text: &'t str, begin: &str, end: &str) -> Result<&'t str, ParserError> {
    let at = text.find(begin);
    let end_at = match at {
        Some(a) => text[a + begin.len()..]
            .find(end)
            .map(|e| a + begin.len() + e),
        None => text.find(end),
    };
    match (at, end_at) {
        (Some(a), Some(e)) => Ok(&text[a + begin.len()..e]),
        _ => {
            let mut missing = Vec::new();
            if at.is_none() {
                missing.push(begin.to_owned());
            }
            if end_at.is_none() {
                missing.push(end.to_owned());
            }
            Err(ParserError::TagNotFound(missing))
        }
    }
}

/// `json.loads(text)`.
fn json(text: &str) -> Result<Value, ParserError> {
    crate::runtime::py::json::loads(text).map_err(|e| ParserError::Json(e.to_string()))
}

/// Python's `json.dumps(value, ensure_ascii=False)` (default separators).
fn dumps(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => crate::runtime::py::json::write_string(s, false, out),
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps(v, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                crate::runtime::py::json::write_string(k, false, out);
                out.push_str(": ");
                dumps(v, out);
            }
            out.push('}');
        }
        Value::Number(n) => {
            // Floats print as Python's `repr` but for the exponent, which Python writes with a
            // sign and at least two digits (`1e-07`, `1e+20`).
            let text = n.to_string();
            match text.split_once('e') {
                Some((mantissa, exp)) => {
                    let (sign, digits) = match exp.strip_prefix('-') {
                        Some(d) => ('-', d),
                        None => ('+', exp.trim_start_matches('+')),
                    };
                    out.push_str(&format!("{mantissa}e{sign}{digits:0>2}"));
                }
                None => out.push_str(&text),
            }
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Which keys of a parsed object go somewhere (AgentScope's `keys_to_content`,
/// `keys_to_memory`, `keys_to_metadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keys {
    /// `True`: the whole object.
    All,
    /// `False`: nothing (`None`).
    Nothing,
    /// A key (`str`): its value, not an object.
    Key(String),
    /// A list of keys: the object of those keys.
    List(Vec<String>),
}

impl Keys {
    /// One key: its value.
    pub fn key(k: &str) -> Self {
        Keys::Key(k.to_owned())
    }

    /// A list of keys: the sub-object.
    pub fn list(keys: &[&str]) -> Self {
        Keys::List(keys.iter().map(|k| k.to_string()).collect())
    }

    /// AgentScope's `_filter_content_by_names`. `allow_missing` skips the missing keys of a
    /// list (a single key missing is an error all the same, as Python's `KeyError`).
    pub fn filter(&self, parsed: &Map, allow_missing: bool) -> Result<Option<Value>, ParserError> {
        match self {
            Keys::All => Ok(Some(Value::Object(parsed.clone()))),
            Keys::Nothing => Ok(None),
            Keys::Key(k) => parsed
                .get(k.as_str())
                .cloned()
                .map(Some)
                .ok_or_else(|| ParserError::KeyNotFound(k.clone())),
            Keys::List(keys) => {
                if !allow_missing {
                    if let Some(k) = keys.iter().find(|k| !parsed.contains_key(k.as_str())) {
                        return Err(ParserError::KeyNotFound(k.clone()));
                    }
                }
                let mut out = Map::new();
                for k in keys {
                    if let Some(v) = parsed.get(k.as_str()) {
                        out.insert(k.clone(), v.clone());
                    }
                }
                Ok(Some(Value::Object(out)))
            }
        }
    }
}

impl From<bool> for Keys {
    fn from(b: bool) -> Self {
        if b {
            Keys::All
        } else {
            Keys::Nothing
        }
    }
}

/// Where a dict parser's keys go: AgentScope's defaults are the whole object to content and
/// memory, nothing to metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRouting {
    /// `keys_to_content`: what the message shows other agents.
    pub content: Keys,
    /// `keys_to_memory`: what the agent remembers.
    pub memory: Keys,
    /// `keys_to_metadata`: what the application reads.
    pub metadata: Keys,
}

impl Default for KeyRouting {
    fn default() -> Self {
        KeyRouting {
            content: Keys::All,
            memory: Keys::All,
            metadata: Keys::Nothing,
        }
    }
}

impl KeyRouting {
    /// `to_content(parsed, allow_missing)`.
    pub fn to_content(
        &self,
        parsed: &Map,
        allow_missing: bool,
    ) -> Result<Option<Value>, ParserError> {
        self.content.filter(parsed, allow_missing)
    }

    /// `to_memory(parsed, allow_missing)`.
    pub fn to_memory(
        &self,
        parsed: &Map,
        allow_missing: bool,
    ) -> Result<Option<Value>, ParserError> {
        self.memory.filter(parsed, allow_missing)
    }

    /// `to_metadata(parsed, allow_missing)`.
    pub fn to_metadata(
        &self,
        parsed: &Map,
        allow_missing: bool,
    ) -> Result<Option<Value>, ParserError> {
        self.metadata.filter(parsed, allow_missing)
    }
}

/// The routing builders of a dict parser.
macro_rules! routing_methods {
    () => {
        /// Where the parsed keys go ([`KeyRouting`]).
        pub fn routing(&self) -> &KeyRouting {
            &self.routing
        }

        /// `keys_to_content` (default: the whole object).
        pub fn keys_to_content(mut self, keys: Keys) -> Self {
            self.routing.content = keys;
            self
        }

        /// `keys_to_memory` (default: the whole object).
        pub fn keys_to_memory(mut self, keys: Keys) -> Self {
            self.routing.memory = keys;
            self
        }

        /// `keys_to_metadata` (default: nothing).
        pub fn keys_to_metadata(mut self, keys: Keys) -> Self {
            self.routing.metadata = keys;
            self
        }
    };
}

/// A grammar of a parser's shape (the whole output).
#[derive(Debug, Clone)]
pub struct ShapeGrammar {
    rules: Rules,
}

impl ShapeGrammar {
    fn new(body: Node, rules: Rules) -> Self {
        let mut all = Rules::default();
        all.define("root", body);
        for (n, b) in rules.iter() {
            all.define(n, b.clone());
        }
        ShapeGrammar { rules: all }
    }

    /// GBNF (llama.cpp).
    pub fn gbnf(&self) -> String {
        crate::grammar::emit_gbnf(&self.rules, "root")
    }

    /// Lark (llguidance).
    pub fn lark(&self) -> String {
        crate::grammar::emit_lark(&self.rules, "root")
    }
}

fn text_then(end: &str) -> Node {
    Node::TextThen {
        stop: vec![end.to_owned()],
        end: end.to_owned(),
    }
}

fn ws(rules: &mut Rules) -> Node {
    rules.define(
        "ws",
        Node::star(Node::class(&[
            (' ', ' '),
            ('\t', '\t'),
            ('\n', '\n'),
            ('\r', '\r'),
        ])),
    );
    Node::rule("ws")
}

/// A JSON value of `schema` (any value for `true`), between whitespace.
fn json_value(rules: &mut Rules, schema: &Value) -> Node {
    let ws = ws(rules);
    let mut v = crate::grammar::ValueRules::new(rules, crate::grammar::Dialect::Json, schema);
    let value = v.value(schema, "content");
    Node::seq([ws.clone(), value, ws])
}

/// A fenced code block in a language (`MarkdownCodeBlockParser`).
#[derive(Debug, Clone)]
pub struct MarkdownCodeBlockParser {
    language: String,
    content_hint: String,
}

impl MarkdownCodeBlockParser {
    /// A parser of a `language` block; `content_hint` goes in the instruction (AgentScope's
    /// default, `${your_<language>_code}`: [`with_default_hint`](Self::with_default_hint)).
    pub fn new(language: &str, content_hint: &str) -> Self {
        MarkdownCodeBlockParser {
            language: language.to_owned(),
            content_hint: content_hint.to_owned(),
        }
    }

    /// A parser with AgentScope's default hint, `${your_<language>_code}`.
    pub fn with_default_hint(language: &str) -> Self {
        Self::new(language, &format!("${{your_{language}_code}}"))
    }

    fn begin(&self) -> String {
        format!("```{}", self.language)
    }

    /// AgentScope's instruction (the package's: a space before the line break, which its
    /// documentation does not show; the whole text stripped).
    pub fn format_instruction(&self) -> String {
        let l = &self.language;
        format!(
            "You should generate {l} code in a {l} fenced code block as follows: \n```{l}\n{}\n```",
            self.content_hint
        )
        .trim()
        .to_owned()
    }

    /// The block's text (between the first ```` ```language ```` and the next ```` ``` ````).
    pub fn parse<'t>(&self, text: &'t str) -> Result<&'t str, ParserError> {
        between(text, &self.begin(), "```")
    }

    /// The grammar: text, the block, text.
    pub fn grammar(&self) -> ShapeGrammar {
        let body = Node::seq([
            text_then(&self.begin()),
            text_then("```"),
            Node::Text { stop: vec![] },
        ]);
        ShapeGrammar::new(body, Rules::default())
    }
}

/// A JSON value in a `json` block (`MarkdownJsonObjectParser`), or a JSON object with required
/// keys (`MarkdownJsonDictParser`, [`dict`](Self::dict)).
#[derive(Debug, Clone)]
pub struct MarkdownJsonParser {
    content_hint: String,
    required_keys: Vec<String>,
    dict: bool,
    schema: Value,
    routing: KeyRouting,
}

impl MarkdownJsonParser {
    /// Any JSON value (`MarkdownJsonObjectParser`); `content_hint` goes in the instruction.
    pub fn object(content_hint: &str) -> Self {
        MarkdownJsonParser {
            content_hint: content_hint.to_owned(),
            required_keys: Vec::new(),
            dict: false,
            schema: Value::Bool(true),
            routing: KeyRouting::default(),
        }
    }

    /// A JSON object (`MarkdownJsonDictParser`) with these keys required. The hint is text (a
    /// string), an example written as `json.dumps(hint, ensure_ascii=False)` (any other
    /// value), or AgentScope's default `{your_json_dictionary}` (`null`).
    pub fn dict(content_hint: &Value, required_keys: &[&str]) -> Self {
        let hint = match content_hint {
            Value::Null => "{your_json_dictionary}".to_owned(),
            Value::String(s) => s.clone(),
            v => {
                let mut out = String::new();
                dumps(v, &mut out);
                out
            }
        };
        let props: Map = required_keys
            .iter()
            .map(|k| (k.to_string(), Value::Bool(true)))
            .collect();
        MarkdownJsonParser {
            content_hint: hint,
            required_keys: required_keys.iter().map(|s| s.to_string()).collect(),
            dict: true,
            schema: crate::json!({"type": "object", "properties": props,
                "required": required_keys, "additionalProperties": true}),
            routing: KeyRouting::default(),
        }
    }

    routing_methods!();

    /// AgentScope's instruction (`MarkdownJsonObjectParser`'s or `MarkdownJsonDictParser`'s).
    pub fn format_instruction(&self) -> String {
        if self.dict {
            format!(
                "Respond a JSON dictionary in a markdown's fenced code block as follows:\n```json\n{}\n```",
                self.content_hint
            )
        } else {
            format!(
                "You should respond a json object in a json fenced code block as follows:\n```json\n{}\n```",
                self.content_hint
            )
        }
    }

    /// The parsed JSON (an object with the required keys, for a dict parser). As AgentScope: a
    /// missing ```` ```json ```` is read as if the text started with it and a line break, a
    /// missing closing ```` ``` ```` as if the text ended with it.
    pub fn parse(&self, text: &str) -> Result<Value, ParserError> {
        let content = match between(text, "```json", "```") {
            Ok(c) => json(c)?,
            Err(ParserError::TagNotFound(missing)) => {
                let mut fixed = text.to_owned();
                if missing.iter().any(|t| t == "```json") {
                    fixed = format!("```json\n{fixed}");
                }
                if missing.iter().any(|t| t == "```") {
                    fixed.push_str("```");
                }
                match between(&fixed, "```json", "```") {
                    Ok(c) => json(c)?,
                    Err(_) => return Err(ParserError::TagNotFound(missing)),
                }
            }
            Err(e) => return Err(e),
        };
        if self.dict {
            let Some(obj) = content.as_object() else {
                return Err(ParserError::NotAnObject);
            };
            let missing: Vec<String> = self
                .required_keys
                .iter()
                .filter(|k| !obj.contains_key(k.as_str()))
                .cloned()
                .collect();
            if !missing.is_empty() {
                return Err(ParserError::MissingKeys(missing));
            }
        }
        Ok(content)
    }

    /// The grammar: text, the block with the JSON (an object whose required keys come first, in
    /// order, for a dict parser), text.
    pub fn grammar(&self) -> ShapeGrammar {
        let mut rules = Rules::default();
        let value = json_value(&mut rules, &self.schema);
        let body = Node::seq([
            text_then("```json"),
            value,
            Node::lit("```"),
            Node::Text { stop: vec![] },
        ]);
        ShapeGrammar::new(body, rules)
    }
}

/// One tag of a [`MultiTaggedContentParser`].
#[derive(Debug, Clone)]
pub struct TaggedContent {
    /// The key in the parsed object.
    pub name: String,
    /// The opening tag.
    pub tag_begin: String,
    /// What to write between the tags (in the instruction).
    pub content_hint: String,
    /// The closing tag.
    pub tag_end: String,
    /// Whether the content is JSON.
    pub json: bool,
}

impl TaggedContent {
    /// A tag of text.
    pub fn new(name: &str, tag_begin: &str, content_hint: &str, tag_end: &str) -> Self {
        TaggedContent {
            name: name.to_owned(),
            tag_begin: tag_begin.to_owned(),
            content_hint: content_hint.to_owned(),
            tag_end: tag_end.to_owned(),
            json: false,
        }
    }

    /// The content is JSON (AgentScope's `parse_json=True`).
    pub fn parse_json(mut self) -> Self {
        self.json = true;
        self
    }
}

/// Content between several tags, read into one object (`MultiTaggedContentParser`).
#[derive(Debug, Clone)]
pub struct MultiTaggedContentParser {
    tags: Vec<TaggedContent>,
    allow_missing: Option<Vec<String>>,
    routing: KeyRouting,
}

impl MultiTaggedContentParser {
    /// A parser of these tags.
    pub fn new(tags: Vec<TaggedContent>) -> Self {
        MultiTaggedContentParser {
            tags,
            allow_missing: None,
            routing: KeyRouting::default(),
        }
    }

    /// `keys_allow_missing`: the tags (by name) that may be absent; the parse leaves them out.
    pub fn allow_missing(mut self, names: &[&str]) -> Self {
        self.allow_missing = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }

    routing_methods!();

    /// AgentScope's instruction.
    pub fn format_instruction(&self) -> String {
        let json: Vec<String> = self
            .tags
            .iter()
            .filter(|t| t.json)
            .map(|t| format!("{} and {}", t.tag_begin, t.tag_end))
            .collect();
        let hint = if json.is_empty() {
            ": ".to_owned()
        } else {
            format!(
                ", and the content between {} MUST be a JSON object:",
                json.join(", ")
            )
        };
        let lines: Vec<String> = self
            .tags
            .iter()
            .map(|t| format!("{}{}{}", t.tag_begin, t.content_hint, t.tag_end))
            .collect();
        format!(
            "Respond with specific tags as outlined below{hint}\n{}",
            lines.join("\n")
        )
    }

    /// Each tag's content (the first occurrence), by name; JSON contents parsed.
    pub fn parse(&self, text: &str) -> Result<Map, ParserError> {
        let mut out = Map::new();
        for t in &self.tags {
            let content = match between(text, &t.tag_begin, &t.tag_end) {
                Ok(c) => c,
                Err(_)
                    if self
                        .allow_missing
                        .as_ref()
                        .is_some_and(|a| a.contains(&t.name)) =>
                {
                    continue
                }
                Err(e) => return Err(e),
            };
            let value = if t.json {
                json(content)?
            } else {
                Value::String(content.to_owned())
            };
            out.insert(t.name.clone(), value);
        }
        Ok(out)
    }

    /// The grammar: the tags in order, text before, between and after them; JSON contents any
    /// JSON value.
    pub fn grammar(&self) -> ShapeGrammar {
        let mut rules = Rules::default();
        let mut items = Vec::new();
        for t in &self.tags {
            items.push(text_then(&t.tag_begin));
            if t.json {
                items.push(json_value(&mut rules, &Value::Bool(true)));
                items.push(Node::lit(t.tag_end.clone()));
            } else {
                items.push(text_then(&t.tag_end));
            }
        }
        items.push(Node::Text { stop: vec![] });
        ShapeGrammar::new(Node::seq(items), rules)
    }

    /// The grammar in GBNF.
    pub fn gbnf(&self) -> String {
        self.grammar().gbnf()
    }
}

/// AgentScope's default pattern of [`RegexTaggedContentParser`]: `<name>content</name>` (or
/// `</>`), the content as short as possible.
pub const DEFAULT_TAG_PATTERN: &str = r"<(?P<name>[^>]+)>(?P<content>.*?)</\1?>";

/// Tags found by a Python regex with groups `name` and `content`, read into one object
/// (`RegexTaggedContentParser`): every match, in order (a later tag of a name replaces the
/// earlier one's value); each value JSON when it reads as JSON (`try_parse_json`, on by
/// default), else the text. The pattern runs as `re.finditer(pattern, text, re.DOTALL)`.
#[derive(Debug, Clone)]
pub struct RegexTaggedContentParser {
    pattern: Arc<PyRegex>,
    name_group: usize,
    content_group: usize,
    instruction: Option<String>,
    try_parse_json: bool,
    required_keys: Vec<String>,
    routing: KeyRouting,
}

impl Default for RegexTaggedContentParser {
    fn default() -> Self {
        Self::with_pattern(DEFAULT_TAG_PATTERN).expect("the default pattern compiles")
    }
}

impl RegexTaggedContentParser {
    /// The parser with AgentScope's default pattern ([`DEFAULT_TAG_PATTERN`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser with another Python pattern; it must have the named groups `name` and `content`.
    pub fn with_pattern(pattern: &str) -> Result<Self, String> {
        let regex = PyRegex::new(pattern).map_err(|e| e.to_string())?;
        let group = |n: &str| {
            regex.group_index(n).ok_or_else(|| {
                format!("the tagged content pattern should contain a named group '{n}'")
            })
        };
        let (name_group, content_group) = (group("name")?, group("content")?);
        Ok(RegexTaggedContentParser {
            pattern: Arc::new(regex),
            name_group,
            content_group,
            instruction: None,
            try_parse_json: true,
            required_keys: Vec::new(),
            routing: KeyRouting::default(),
        })
    }

    /// The instruction to give the model (AgentScope asks the user for it).
    pub fn with_format_instruction(mut self, instruction: &str) -> Self {
        self.instruction = Some(instruction.to_owned());
        self
    }

    /// Whether values that read as JSON become JSON (default: yes).
    pub fn try_parse_json(mut self, on: bool) -> Self {
        self.try_parse_json = on;
        self
    }

    /// Keys that must be found ([`ParserError::TagNotFound`] names the missing ones).
    pub fn required_keys(mut self, keys: &[&str]) -> Self {
        self.required_keys = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    routing_methods!();

    /// The instruction given with [`with_format_instruction`](Self::with_format_instruction)
    /// (AgentScope raises without one).
    pub fn format_instruction(&self) -> Option<&str> {
        self.instruction.as_deref()
    }

    /// Every tag, by name.
    pub fn parse(&self, text: &str) -> Result<Map, ParserError> {
        let mut out = Map::new();
        for m in self.pattern.find_iter(text) {
            let m = m.map_err(|e| ParserError::Regex(e.to_string()))?;
            let name = m.get(self.name_group).unwrap_or_default();
            let content = m.get(self.content_group).unwrap_or_default();
            out.insert(name.to_owned(), Value::String(content.to_owned()));
        }
        let missing: Vec<String> = self
            .required_keys
            .iter()
            .filter(|k| !out.contains_key(k.as_str()))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(ParserError::TagNotFound(missing));
        }
        if self.try_parse_json {
            for (_, v) in out.iter_mut() {
                if let Value::String(s) = v {
                    if let Ok(j) = json(s) {
                        *v = j;
                    }
                }
            }
        }
        Ok(out)
    }
}

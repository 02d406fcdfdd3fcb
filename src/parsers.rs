//! AgentScope-style parsers: ask a model for output in a fixed shape (a fenced code block, a JSON
//! object in a `json` block, content between tags), then read it back. Each parser gives the
//! prompt text ([`format_instruction`](MultiTaggedContentParser::format_instruction), AgentScope's
//! wording), the parse, and a grammar of the shape for constrained decoding (GBNF and Lark, from
//! the same IR as [`crate::grammar`]).
//!
//! As AgentScope reads them: a block or tag is found by the **first** occurrence of its opening
//! marker and the first closing marker after it; text around is free. JSON contents are parsed
//! as JSON (`json.loads`). The grammars ask for exactly that shape: free text, the blocks (tags
//! in the order given), free text.
//!
//! ```
//! use chatparse::parsers::{MultiTaggedContentParser, TaggedContent};
//! let parser = MultiTaggedContentParser::new(vec![
//!     TaggedContent::new("thought", "[THOUGHT]", "what you thought", "[/THOUGHT]"),
//!     TaggedContent::new("finish", "[FINISH]", "true/false", "[/FINISH]").parse_json(),
//! ]);
//! assert_eq!(parser.format_instruction(),
//!     "Respond with specific tags as outlined below, and the content between [FINISH] and \
//!      [/FINISH] MUST be a JSON object:\n[THOUGHT]what you thought[/THOUGHT]\n[FINISH]true/false[/FINISH]");
//! let parsed = parser.parse("Hm.\n[THOUGHT]Done.[/THOUGHT]\n[FINISH]true[/FINISH]")?;
//! assert_eq!(parsed["thought"], "Done.");
//! assert_eq!(parsed["finish"], true);
//! assert!(parser.gbnf().starts_with("root ::= "));
//! # Ok::<(), chatparse::parsers::ParserError>(())
//! ```

use std::fmt;

use crate::{Map, Value};

use crate::grammar::ir::{Node, Rules};

/// Why a text does not have the parser's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParserError {
    /// A marker is missing (AgentScope's `TagNotFoundError`).
    TagNotFound(String),
    /// The content is not JSON, or not the JSON asked for.
    Json(String),
    /// Required keys are missing from the JSON object.
    MissingKeys(Vec<String>),
}

impl fmt::Display for ParserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParserError::TagNotFound(t) => write!(f, "{t} not found in the response"),
            ParserError::Json(e) => write!(f, "invalid JSON: {e}"),
            ParserError::MissingKeys(k) => write!(f, "missing required keys: {}", k.join(", ")),
        }
    }
}

impl std::error::Error for ParserError {}

/// AgentScope's `_extract_first_content_by_tag`: the text between the first `begin` and the
/// first `end` after it.
fn between<'t>(text: &'t str, begin: &str, end: &str) -> Result<&'t str, ParserError> {
    let Some(at) = text.find(begin) else {
        return Err(ParserError::TagNotFound(begin.to_owned()));
    };
    let from = at + begin.len();
    let Some(len) = text[from..].find(end) else {
        return Err(ParserError::TagNotFound(end.to_owned()));
    };
    Ok(&text[from..from + len])
}

fn json(text: &str) -> Result<Value, ParserError> {
    crate::value::from_str(text.trim()).map_err(|e| ParserError::Json(e.to_string()))
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
    /// A parser of a `language` block; `content_hint` goes in the instruction.
    pub fn new(language: &str, content_hint: &str) -> Self {
        MarkdownCodeBlockParser {
            language: language.to_owned(),
            content_hint: content_hint.to_owned(),
        }
    }

    fn begin(&self) -> String {
        format!("```{}", self.language)
    }

    /// AgentScope's instruction.
    pub fn format_instruction(&self) -> String {
        let l = &self.language;
        format!(
            "You should generate {l} code in a {l} fenced code block as follows:\n```{l}\n{}\n```",
            self.content_hint
        )
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
}

impl MarkdownJsonParser {
    /// Any JSON value (`MarkdownJsonObjectParser`); `content_hint` goes in the instruction.
    pub fn object(content_hint: &str) -> Self {
        MarkdownJsonParser {
            content_hint: content_hint.to_owned(),
            required_keys: Vec::new(),
            dict: false,
            schema: Value::Bool(true),
        }
    }

    /// A JSON object (`MarkdownJsonDictParser`) with these keys required; the hint is an
    /// example object (written as indented JSON) or text.
    pub fn dict(content_hint: &Value, required_keys: &[&str]) -> Self {
        let hint = match content_hint {
            Value::String(s) => s.clone(),
            v => crate::value::to_string_pretty(v),
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
        }
    }

    /// AgentScope's instruction.
    pub fn format_instruction(&self) -> String {
        format!(
            "You should respond a json object in a json fenced code block as follows:\n```json\n{}\n```",
            self.content_hint
        )
    }

    /// The parsed JSON (an object with the required keys, for a dict parser).
    pub fn parse(&self, text: &str) -> Result<Value, ParserError> {
        let value = json(between(text, "```json", "```")?)?;
        if self.dict {
            let Some(obj) = value.as_object() else {
                return Err(ParserError::Json("not a JSON object".into()));
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
        Ok(value)
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
}

impl MultiTaggedContentParser {
    /// A parser of these tags.
    pub fn new(tags: Vec<TaggedContent>) -> Self {
        MultiTaggedContentParser { tags }
    }

    /// AgentScope's instruction.
    pub fn format_instruction(&self) -> String {
        let json: Vec<String> = self
            .tags
            .iter()
            .filter(|t| t.json)
            .map(|t| format!("{} and {}", t.tag_begin, t.tag_end))
            .collect();
        let hint = if json.is_empty() {
            ":".to_owned()
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
            let content = between(text, &t.tag_begin, &t.tag_end)?;
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

//! Values of a JSON schema as grammar rules, in the dialect the format writes them: JSON, Python
//! literals (pythonic calls, `str()` of a value) or Gemma 4's bare-key dialect.
//!
//! The JSON-Schema subset (anything else is ignored, so the grammar accepts more than the schema):
//! `type` (one or a list of `string`, `integer`, `number`, `boolean`, `null`, `object`,
//! `array`), `enum`, `const`, `properties` (in the schema's order), `required`,
//! `additionalProperties` (`false`, absent: only the listed properties when there are some;
//! `true` or a schema: extra keys of that schema after them), `items`, `minItems`/`maxItems`
//! (0 or 1), `anyOf`/`oneOf` (one of them), `nullable`, and `$ref` to `#/$defs/…` or
//! `#/definitions/…` of the same parameters schema. A schema without `type` is any value.

use crate::runtime::py::unicode::repr;
use crate::{Map, Value};

use super::ir::{Node, Rules};

/// How values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// JSON.
    Json,
    /// Python literals (`'text'`, `True`, `None`, `{'k': 1}`).
    Python,
    /// Gemma 4: `{key:value}` with bare keys, strings between `<|"|>` delimiters.
    Gemma,
}

/// Builds the rules of values; shared rules (whitespace, strings, numbers) once per dialect.
pub struct ValueRules<'a> {
    pub rules: &'a mut Rules,
    dialect: Dialect,
    root: &'a Value,
    counter: usize,
}

const WS: &str = "ws";

impl<'a> ValueRules<'a> {
    /// Rules for values of `dialect`; `root` is the schema `$ref`s resolve against.
    pub fn new(rules: &'a mut Rules, dialect: Dialect, root: &'a Value) -> Self {
        ValueRules {
            rules,
            dialect,
            root,
            counter: 0,
        }
    }

    fn p(&self) -> &'static str {
        match self.dialect {
            Dialect::Json => "json",
            Dialect::Python => "py",
            Dialect::Gemma => "gm",
        }
    }

    fn ws(&mut self) -> Node {
        if !self.rules.has(WS) {
            self.rules.define(
                WS,
                Node::star(Node::class(&[(' ', ' '), ('\t', '\t'), ('\n', '\n')])),
            );
        }
        Node::rule(WS)
    }

    /// The rule of a string value (any string).
    pub fn string(&mut self) -> Node {
        let name = format!("{}-string", self.p());
        if !self.rules.has(&name) {
            let body = match self.dialect {
                Dialect::Json => {
                    let hex = Node::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
                    let ch = Node::alt([
                        Node::not_class(&[('"', '"'), ('\\', '\\'), ('\0', '\x1f')]),
                        Node::seq([
                            Node::lit("\\"),
                            Node::alt([
                                Node::class(&[
                                    ('"', '"'),
                                    ('\\', '\\'),
                                    ('/', '/'),
                                    ('b', 'b'),
                                    ('f', 'f'),
                                    ('n', 'n'),
                                    ('r', 'r'),
                                    ('t', 't'),
                                ]),
                                Node::seq([
                                    Node::lit("u"),
                                    hex.clone(),
                                    hex.clone(),
                                    hex.clone(),
                                    hex,
                                ]),
                            ]),
                        ]),
                    ]);
                    Node::seq([Node::lit("\""), Node::star(ch), Node::lit("\"")])
                }
                Dialect::Python => {
                    // Templates write strings with `'…'` around the raw text (newlines and all).
                    let esc = Node::seq([Node::lit("\\"), Node::not_class(&[('\0', '\0')])]);
                    let single = Node::seq([
                        Node::lit("'"),
                        Node::star(Node::alt([
                            Node::not_class(&[('\'', '\''), ('\\', '\\')]),
                            esc.clone(),
                        ])),
                        Node::lit("'"),
                    ]);
                    let double = Node::seq([
                        Node::lit("\""),
                        Node::star(Node::alt([
                            Node::not_class(&[('"', '"'), ('\\', '\\')]),
                            esc,
                        ])),
                        Node::lit("\""),
                    ]);
                    Node::alt([single, double])
                }
                Dialect::Gemma => Node::seq([Node::TextThen {
                    stop: vec!["<|\"|>".into()],
                    end: "<|\"|>".into(),
                }]),
            };
            let body = if self.dialect == Dialect::Gemma {
                Node::seq([Node::lit("<|\"|>"), body])
            } else {
                body
            };
            self.rules.define(name.clone(), body);
        }
        Node::rule(name)
    }

    fn integer(&mut self) -> Node {
        let name = "integer".to_owned();
        if !self.rules.has(&name) {
            let body = Node::seq([
                Node::opt(Node::lit("-")),
                Node::alt([
                    Node::lit("0"),
                    Node::seq([
                        Node::class(&[('1', '9')]),
                        Node::star(Node::class(&[('0', '9')])),
                    ]),
                ]),
            ]);
            self.rules.define(name.clone(), body);
        }
        Node::rule(name)
    }

    fn number(&mut self) -> Node {
        let name = "number".to_owned();
        if !self.rules.has(&name) {
            let int = self.integer();
            let digits = Node::seq([
                Node::class(&[('0', '9')]),
                Node::star(Node::class(&[('0', '9')])),
            ]);
            let body = Node::seq([
                int,
                Node::opt(Node::seq([Node::lit("."), digits.clone()])),
                Node::opt(Node::seq([
                    Node::class(&[('e', 'e'), ('E', 'E')]),
                    Node::opt(Node::class(&[('+', '+'), ('-', '-')])),
                    digits,
                ])),
            ]);
            self.rules.define(name.clone(), body);
        }
        Node::rule(name)
    }

    fn boolean(&self) -> Node {
        match self.dialect {
            Dialect::Python => Node::alt([Node::lit("True"), Node::lit("False")]),
            _ => Node::alt([Node::lit("true"), Node::lit("false")]),
        }
    }

    fn null(&self) -> Node {
        match self.dialect {
            Dialect::Python => Node::lit("None"),
            // Gemma 4's template writes Python's None.
            Dialect::Gemma => Node::alt([Node::lit("null"), Node::lit("None")]),
            _ => Node::lit("null"),
        }
    }

    /// A literal value (`enum`, `const`) in the dialect.
    pub fn literal(&self, v: &Value) -> Node {
        Node::lit(self.text_of(v))
    }

    fn text_of(&self, v: &Value) -> String {
        match (self.dialect, v) {
            (Dialect::Json, v) => v.to_string(),
            (_, Value::Null) => self.text_null().into(),
            (_, Value::Bool(b)) => match (self.dialect, b) {
                (Dialect::Python, true) => "True".into(),
                (Dialect::Python, false) => "False".into(),
                (_, b) => b.to_string(),
            },
            (_, Value::Number(n)) => n.to_string(),
            (Dialect::Python, Value::String(s)) => repr(s),
            (_, Value::String(s)) => format!("<|\"|>{s}<|\"|>"),
            (_, Value::Array(a)) => {
                let sep = if self.dialect == Dialect::Python {
                    ", "
                } else {
                    ","
                };
                let items: Vec<String> = a.iter().map(|x| self.text_of(x)).collect();
                format!("[{}]", items.join(sep))
            }
            (_, Value::Object(m)) => {
                let items: Vec<String> = m
                    .iter()
                    .map(|(k, x)| match self.dialect {
                        Dialect::Python => format!("{}: {}", repr(k), self.text_of(x)),
                        _ => format!("{k}:{}", self.text_of(x)),
                    })
                    .collect();
                let sep = if self.dialect == Dialect::Python {
                    ", "
                } else {
                    ","
                };
                format!("{{{}}}", items.join(sep))
            }
        }
    }

    fn text_null(&self) -> &'static str {
        match self.dialect {
            Dialect::Python => "None",
            _ => "null",
        }
    }

    /// Any value.
    pub fn any(&mut self) -> Node {
        let name = format!("{}-value", self.p());
        if !self.rules.has(&name) {
            // Placeholder first: the body refers to the rule itself.
            self.rules.define(name.clone(), Node::lit(""));
            let ws = self.ws();
            let item = Node::rule(name.clone());
            let key = self.key_any();
            let member = Node::seq([key, ws.clone(), Node::lit(":"), ws.clone(), item.clone()]);
            let object = Node::seq([
                Node::lit("{"),
                ws.clone(),
                Node::opt(Node::seq([
                    member.clone(),
                    Node::star(Node::seq([ws.clone(), Node::lit(","), ws.clone(), member])),
                ])),
                ws.clone(),
                Node::lit("}"),
            ]);
            let array = Node::seq([
                Node::lit("["),
                ws.clone(),
                Node::opt(Node::seq([
                    item.clone(),
                    Node::star(Node::seq([ws.clone(), Node::lit(","), ws.clone(), item])),
                ])),
                ws,
                Node::lit("]"),
            ]);
            let body = Node::alt([
                self.string(),
                self.number(),
                self.boolean(),
                self.null(),
                object,
                array,
            ]);
            self.rules.define(name.clone(), body);
        }
        Node::rule(name)
    }

    fn key_any(&mut self) -> Node {
        match self.dialect {
            Dialect::Gemma => {
                let name = "gm-key".to_owned();
                if !self.rules.has(&name) {
                    let first = Node::class(&[('a', 'z'), ('A', 'Z'), ('_', '_')]);
                    let rest = Node::star(Node::class(&[
                        ('a', 'z'),
                        ('A', 'Z'),
                        ('0', '9'),
                        ('_', '_'),
                        ('-', '-'),
                        ('.', '.'),
                    ]));
                    self.rules.define(name.clone(), Node::seq([first, rest]));
                }
                Node::rule(name)
            }
            _ => self.string(),
        }
    }

    fn key(&self, k: &str) -> Node {
        match self.dialect {
            Dialect::Json => Node::lit(serde_json::to_string(k).unwrap_or_default()),
            Dialect::Python => Node::lit(repr(k)),
            Dialect::Gemma => Node::lit(k),
        }
    }

    /// A new rule name from `hint`, reserved at once (no other rule gets it).
    fn fresh(&mut self, hint: &str) -> String {
        let hint: String = hint
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        loop {
            self.counter += 1;
            let name = format!("{}-{hint}-{}", self.p(), self.counter);
            if !self.rules.has(&name) {
                self.rules.define(name.clone(), Node::lit(""));
                return name;
            }
        }
    }

    fn resolve<'s>(&self, schema: &'s Value) -> Option<&'s Value>
    where
        'a: 's,
    {
        let r = schema.get("$ref")?.as_str()?;
        let path = r.strip_prefix("#/")?;
        let mut at = self.root;
        for part in path.split('/') {
            at = at.get(part)?;
        }
        Some(at)
    }

    /// The value of `schema`, as a rule named after `hint`.
    pub fn value(&mut self, schema: &Value, hint: &str) -> Node {
        let root = self.root;
        let schema = match schema.get("$ref") {
            Some(_) => match self.resolve(schema) {
                Some(s) => s,
                None => return self.any(),
            },
            None => schema,
        };
        let _ = root;
        let Some(obj) = schema.as_object() else {
            // `true` or a non-object schema: any value.
            return self.any();
        };
        if let Some(c) = obj.get("const") {
            return self.literal(c);
        }
        if let Some(Value::Array(options)) = obj.get("enum") {
            return Node::alt(options.iter().map(|v| self.literal(v)));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = obj.get(key) {
                let alts: Vec<Node> = options.iter().map(|s| self.value(s, hint)).collect();
                return Node::alt(alts);
            }
        }
        let types: Vec<&str> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return self.any(),
        };
        let mut alts = Vec::new();
        for t in &types {
            alts.push(match *t {
                "string" => self.string(),
                "integer" => self.integer(),
                "number" => self.number(),
                "boolean" => self.boolean(),
                "null" => self.null(),
                "object" => self.object(obj, hint),
                "array" => self.array(obj, hint),
                _ => self.any(),
            });
        }
        if obj.get("nullable") == Some(&Value::Bool(true)) {
            alts.push(self.null());
        }
        Node::alt(alts)
    }

    fn array(&mut self, obj: &Map, hint: &str) -> Node {
        let ws = self.ws();
        let item_schema = obj.get("items").cloned().unwrap_or(Value::Bool(true));
        let name = self.fresh(hint);
        let item = self.value(&item_schema, &format!("{hint}-item"));
        let sep = Node::seq([ws.clone(), Node::lit(","), ws.clone()]);
        let max = obj.get("maxItems").and_then(Value::as_u64);
        let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let items = match (min, max) {
            (_, Some(0)) => Node::lit(""),
            (0, Some(1)) => Node::opt(item),
            (1, Some(1)) => item,
            (0, _) => Node::opt(Node::seq([
                item.clone(),
                Node::star(Node::seq([sep, item])),
            ])),
            _ => Node::seq([item.clone(), Node::star(Node::seq([sep, item]))]),
        };
        let body = Node::seq([Node::lit("["), ws.clone(), items, ws, Node::lit("]")]);
        self.rules.define(name.clone(), body);
        Node::rule(name)
    }

    fn object(&mut self, obj: &Map, hint: &str) -> Node {
        let props: Vec<(String, Value)> = match obj.get("properties") {
            Some(Value::Object(p)) => p.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => Vec::new(),
        };
        let additional = obj.get("additionalProperties");
        if props.is_empty() && additional != Some(&Value::Bool(false)) {
            // Properties unknown: any object.
            let value = match additional {
                Some(s) if s.is_object() => self.value(s, &format!("{hint}-extra")),
                _ => self.any(),
            };
            return self.free_object(value);
        }
        let required: Vec<&str> = match obj.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let ws = self.ws();
        let base = self.fresh(hint);
        let mut members = Vec::new();
        for (k, s) in &props {
            let value = self.value(s, &format!("{hint}-{k}"));
            let member = Node::seq([self.key(k), ws.clone(), Node::lit(":"), ws.clone(), value]);
            members.push((member, required.contains(&k.as_str())));
        }
        // tail(i, first): the members from i on, `first` when none came before.
        let tail_name =
            |i: usize, first: bool| format!("{base}-{i}{}", if first { "f" } else { "n" });
        let sep = Node::seq([ws.clone(), Node::lit(","), ws.clone()]);
        let extra = match additional {
            Some(s) if s.is_object() || s == &Value::Bool(true) => {
                let value = self.value(s, &format!("{hint}-extra"));
                let key = self.key_any();
                Some(Node::seq([
                    key,
                    ws.clone(),
                    Node::lit(":"),
                    ws.clone(),
                    value,
                ]))
            }
            _ => None,
        };
        let n = members.len();
        for i in (0..=n).rev() {
            for first in [true, false] {
                let body = if i == n {
                    match &extra {
                        None => Node::lit(""),
                        Some(e) => {
                            let more = Node::star(Node::seq([sep.clone(), e.clone()]));
                            if first {
                                Node::opt(Node::seq([e.clone(), more]))
                            } else {
                                more
                            }
                        }
                    }
                } else {
                    let (member, req) = &members[i];
                    let lead = if first { Node::lit("") } else { sep.clone() };
                    let present =
                        Node::seq([lead, member.clone(), Node::rule(tail_name(i + 1, false))]);
                    if *req {
                        present
                    } else {
                        Node::alt([present, Node::rule(tail_name(i + 1, first))])
                    }
                };
                let body = if body.is_empty() {
                    // An empty rule is written as an empty literal.
                    Node::lit("")
                } else {
                    body
                };
                self.rules.define(tail_name(i, first), body);
            }
        }
        let body = Node::seq([
            Node::lit("{"),
            ws.clone(),
            Node::rule(tail_name(0, true)),
            ws,
            Node::lit("}"),
        ]);
        self.rules.define(base.clone(), body);
        Node::rule(base)
    }

    fn free_object(&mut self, value: Node) -> Node {
        let ws = self.ws();
        let key = self.key_any();
        let member = Node::seq([key, ws.clone(), Node::lit(":"), ws.clone(), value]);
        let name = self.fresh("object");
        let body = Node::seq([
            Node::lit("{"),
            ws.clone(),
            Node::opt(Node::seq([
                member.clone(),
                Node::star(Node::seq([ws.clone(), Node::lit(","), ws.clone(), member])),
            ])),
            ws,
            Node::lit("}"),
        ]);
        self.rules.define(name.clone(), body);
        Node::rule(name)
    }

    /// The members of an object schema's properties written as `member(key, value)` items
    /// separated by `sep`, for the formats that write arguments outside JSON (XML parameters,
    /// pythonic keyword arguments): the properties in schema order, each optional unless
    /// required; a value is `raw` (its own rule, e.g. raw text for strings) when given.
    pub fn members<F>(&mut self, params: &Value, base: &str, sep: Node, mut member: F) -> Node
    where
        F: FnMut(&mut Self, &str, &Value) -> Node,
    {
        let props: Vec<(String, Value)> = match params.get("properties") {
            Some(Value::Object(p)) => p.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => Vec::new(),
        };
        let required: Vec<&str> = match params.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let items: Vec<(Node, bool)> = props
            .iter()
            .map(|(k, s)| (member(self, k, s), required.contains(&k.as_str())))
            .collect();
        let tail_name =
            |i: usize, first: bool| format!("{base}-{i}{}", if first { "f" } else { "n" });
        let n = items.len();
        for i in (0..=n).rev() {
            for first in [true, false] {
                let body = if i == n {
                    Node::lit("")
                } else {
                    let (m, req) = &items[i];
                    let lead = if first { Node::lit("") } else { sep.clone() };
                    let present = Node::seq([lead, m.clone(), Node::rule(tail_name(i + 1, false))]);
                    if *req {
                        present
                    } else {
                        Node::alt([present, Node::rule(tail_name(i + 1, first))])
                    }
                };
                self.rules.define(tail_name(i, first), body);
            }
        }
        Node::rule(tail_name(0, true))
    }
}

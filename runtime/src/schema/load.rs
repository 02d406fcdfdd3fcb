//! Schema validation: JSON → [`Node`] tree, collecting every problem instead of stopping at the
//! first, so that `chatparse check` and the macro can report them all at once.

use crate::value::{Map, Value};

use super::{
    Additional, Items, Node, NodeType, Parser, ParserKind, Pattern, Property, Substitution,
    Transform,
};
use crate::diag::{closest, python_kind as kind, Diagnostics};
use crate::error::SchemaError;
use crate::jmespath::Expression;
use crate::pointer::child;
use crate::pyre::{PyRegex, Replacement};

/// The `x-` keywords the reference parser understands.
const X_KEYWORDS: &[&str] = &[
    "x-regex",
    "x-regex-iterator",
    "x-regex-key-value",
    "x-regex-substitutions",
    "x-parser",
    "x-parser-args",
];

/// Keywords with a meaning for parsing.
const STRUCTURAL_KEYWORDS: &[&str] = &[
    "type",
    "const",
    "default",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "prefixItems",
];

/// JSON Schema keywords that describe or validate but do not change parsing; the reference ignores
/// them, and so do we.
const ANNOTATION_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "examples",
    "enum",
    "format",
    "deprecated",
    "readOnly",
    "writeOnly",
    "nullable",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contentMediaType",
    "contentEncoding",
];

/// JSON Schema keywords that would change what a value may be, which the reference parser silently
/// ignores. Accepting them would let a schema promise something nothing enforces.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "$ref",
    "$dynamicRef",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "dependentSchemas",
    "dependentRequired",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
];

const TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "any",
];

const PARSERS: &[&str] = &["json", "gemma4-tool-call"];

const PARSER_ARGS: &[&str] = &["transform", "allow_non_json"];

/// The deepest run of arrays directly inside arrays a schema may have.
///
/// Why a limit: a generated parser gives each array level a Rust type (`Option<Vec<…>>`), and
/// rustc stops evaluating trait requirements on such a type at its recursion limit (128): 60
/// levels compiled, 64 did not (E0275). So that `check` and `response_parser!` agree, the loader
/// refuses what could not be built, with margin; an object between arrays starts a new run (it
/// becomes a named struct). No model output format nests arrays like this.
pub const MAX_ARRAY_NESTING: usize = 32;

/// The most schema nodes (the root, every property, `items`, `prefixItems` entry and
/// `additionalProperties` schema) a schema may have.
///
/// Why a limit: each node costs about 0.5 KB loaded (plus about 1 KB per compiled pattern), and
/// a schema is loaded whole before anything parses; a 100,000-property schema took 1.6 GB. A
/// response schema describes one message: the largest shipped one has under 100 nodes. Tool
/// arguments of any shape are `{"type": "object", "additionalProperties": {}}`, one node.
pub const MAX_SCHEMA_NODES: usize = 10_000;

/// The longest schema text [`Schema::from_json_str`](super::Schema::from_json_str) reads: 8 MiB
/// (the JSON document is held as a value tree, about 20 × its text, while it loads).
pub const MAX_SCHEMA_BYTES: usize = 8 << 20;

/// Build the node tree, or return every problem found.
pub(super) fn load(value: &Value, source_name: &str) -> Result<Node, SchemaError> {
    let mut loader = Loader {
        diag: Diagnostics::default(),
        nodes: 0,
    };
    let node = loader.node(value, String::new());
    if let Some(node) = &node {
        check_array_nesting(node, 0, &mut loader.diag);
    }
    loader.diag.check(node, source_name)
}

/// Reports the first array of every run deeper than [`MAX_ARRAY_NESTING`] (`run`: the arrays
/// directly around `node`).
fn check_array_nesting(node: &Node, run: usize, diag: &mut Diagnostics) {
    let run = if node.node_type == NodeType::Array {
        run + 1
    } else {
        0
    };
    if run > MAX_ARRAY_NESTING {
        diag.error(
            node.pointer.clone(),
            format!(
                "arrays nested more than {MAX_ARRAY_NESTING} deep directly inside each other; \
                 a generated parser could not be compiled (rustc's recursion limit)"
            ),
            "flatten the nesting, or put an object between array levels",
        );
        return;
    }
    match &node.items {
        Items::Each(item) => check_array_nesting(item, run, diag),
        Items::Prefix(items) => items
            .iter()
            .for_each(|item| check_array_nesting(item, run, diag)),
        Items::None => {}
    }
    for property in node.properties.iter().flatten() {
        check_array_nesting(&property.node, 0, diag);
    }
    if let Additional::Schema(extra) = &node.additional {
        check_array_nesting(extra, 0, diag);
    }
}

struct Loader {
    diag: Diagnostics,
    /// Nodes visited so far (see [`MAX_SCHEMA_NODES`]).
    nodes: usize,
}

impl Loader {
    fn node(&mut self, value: &Value, pointer: String) -> Option<Node> {
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            // Reported once, at the first node past the limit; the rest is not loaded.
            if self.nodes == MAX_SCHEMA_NODES + 1 {
                self.diag.error(
                    pointer,
                    format!(
                        "the schema has more than {MAX_SCHEMA_NODES} nodes (properties, items \
                         and additionalProperties schemas); this is the first one past the limit"
                    ),
                    "describe the message, not every possible key: parse tool arguments with \
                     {\"type\": \"object\", \"additionalProperties\": {}} instead of listing \
                     their properties, and split unrelated formats into separate schemas",
                );
            }
            return None;
        }
        let Value::Object(map) = value else {
            self.diag.error(
                pointer,
                format!("a schema node must be a JSON object, found {}", kind(value)),
                "write the node as an object, e.g. {\"type\": \"string\"}",
            );
            return None;
        };
        self.check_keywords(map, &pointer);

        let node_type = self.node_type(map, &pointer);
        let substitutions = self.substitutions(map, &pointer);
        let regex = self.pattern(map, "x-regex", &pointer);
        let iterator = self.pattern(map, "x-regex-iterator", &pointer);
        let key_value = self.pattern(map, "x-regex-key-value", &pointer);
        let parser = self.parser(map, &pointer);
        let properties = self.properties(map, &pointer);
        let additional = self.additional(map, &pointer);
        let required = self.required(map, &pointer);
        let items = self.items(map, &pointer);

        let node = Node {
            pointer,
            node_type: node_type.unwrap_or(NodeType::Untyped),
            constant: map.get("const").cloned(),
            default: map.get("default").cloned(),
            substitutions,
            regex,
            iterator,
            key_value,
            parser,
            properties,
            additional,
            required,
            items,
        };
        if node_type.is_some() || !map.contains_key("type") {
            self.check_shapes(&node);
        }
        Some(node)
    }

    fn check_keywords(&mut self, map: &Map, pointer: &str) {
        for key in map.keys() {
            let k = key.as_str();
            if X_KEYWORDS.contains(&k)
                || STRUCTURAL_KEYWORDS.contains(&k)
                || ANNOTATION_KEYWORDS.contains(&k)
            {
                continue;
            }
            let at = child(pointer, k);
            if UNSUPPORTED_KEYWORDS.contains(&k) {
                self.diag.error(
                    at,
                    format!("`{k}` is not supported by response schemas (the reference parser ignores it)"),
                    "remove it; describe the exact shape with type/properties/items instead",
                );
            } else if k.starts_with("x-") {
                let fix = match closest(k, X_KEYWORDS) {
                    Some(s) => format!(
                        "did you mean `{s}`? The x- keywords are: {}",
                        X_KEYWORDS.join(", ")
                    ),
                    None => format!("use one of: {}", X_KEYWORDS.join(", ")),
                };
                self.diag.error(at, format!("unknown keyword `{k}`"), fix);
            } else {
                let known: Vec<&str> = STRUCTURAL_KEYWORDS
                    .iter()
                    .chain(ANNOTATION_KEYWORDS)
                    .copied()
                    .collect();
                let fix = match closest(k, &known) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => {
                        "remove it, or prefix it with `x-` only if it is one of the x- keywords"
                            .to_owned()
                    }
                };
                self.diag.error(at, format!("unknown keyword `{k}`"), fix);
            }
        }
    }

    fn node_type(&mut self, map: &Map, pointer: &str) -> Option<NodeType> {
        let value = map.get("type")?;
        let parsed = match value.as_str() {
            Some("object") => Some(NodeType::Object),
            Some("array") => Some(NodeType::Array),
            Some("string") => Some(NodeType::String),
            Some("integer") => Some(NodeType::Integer),
            Some("number") => Some(NodeType::Number),
            Some("boolean") => Some(NodeType::Boolean),
            Some("any") => Some(NodeType::Any),
            _ => None,
        };
        if parsed.is_none() {
            let fix = match value {
                Value::Array(_) => "use a single type name; the reference parser does not accept a list of types (use \"any\" for mixed values)".to_owned(),
                Value::String(s) => match closest(s, TYPES) {
                    Some(t) => format!("did you mean \"{t}\"? Types: {}", TYPES.join(", ")),
                    None => format!("use one of: {}", TYPES.join(", ")),
                },
                _ => format!("use one of: {}", TYPES.join(", ")),
            };
            self.diag
                .error(child(pointer, "type"), format!("unknown type {value}"), fix);
        }
        parsed
    }

    fn compile(&mut self, source: &Value, pointer: String) -> Option<Pattern> {
        let Some(text) = source.as_str() else {
            self.diag.error(
                pointer,
                format!("a regex must be a string, found {}", kind(source)),
                "write the pattern as a JSON string (Python `re` syntax)",
            );
            return None;
        };
        match PyRegex::new(text) {
            Ok(regex) => Some(Pattern { pointer, regex }),
            Err(e) => {
                let at = e
                    .offset
                    .map(|o| format!(" at position {o}"))
                    .unwrap_or_default();
                self.diag.error(
                    pointer,
                    format!("invalid regex {text:?}: {}{at}", e.message),
                    e.fix,
                );
                None
            }
        }
    }

    /// Boxed: a compiled pattern is about 1 KB, and most nodes have none (a `Node` with three
    /// inline patterns took 3.4 KB per property).
    fn pattern(&mut self, map: &Map, key: &str, pointer: &str) -> Option<Box<Pattern>> {
        let source = map.get(key)?;
        self.compile(source, child(pointer, key)).map(Box::new)
    }

    fn substitutions(&mut self, map: &Map, pointer: &str) -> Vec<Substitution> {
        let Some(value) = map.get("x-regex-substitutions") else {
            return Vec::new();
        };
        let at = child(pointer, "x-regex-substitutions");
        let Value::Array(pairs) = value else {
            self.diag.error(
                at,
                format!(
                    "x-regex-substitutions must be a list, found {}",
                    kind(value)
                ),
                "write a list of [pattern, replacement] pairs, e.g. [[\"\\\\s+\", \" \"]]",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, pair) in pairs.iter().enumerate() {
            let pair_at = child(&at, &i.to_string());
            let (Some(pattern), Some(Value::String(replacement)), 2) = (
                pair.get(0),
                pair.get(1),
                pair.as_array().map_or(0, Vec::len),
            ) else {
                self.diag.error(
                    pair_at,
                    "each substitution must be a [pattern, replacement] pair of strings",
                    "write it as [\"pattern\", \"replacement\"]",
                );
                continue;
            };
            let Some(pattern) = self.compile(pattern, child(&pair_at, "0")) else {
                continue;
            };
            match Replacement::parse(replacement, &pattern.regex) {
                Ok(parsed) => out.push(Substitution {
                    pattern,
                    replacement_source: replacement.clone(),
                    replacement: parsed,
                }),
                Err(e) => self.diag.error(
                    child(&pair_at, "1"),
                    format!("invalid replacement {replacement:?}: {}", e.message),
                    e.fix,
                ),
            }
        }
        out
    }

    fn parser(&mut self, map: &Map, pointer: &str) -> Option<Parser> {
        let args = map.get("x-parser-args");
        let Some(value) = map.get("x-parser") else {
            if args.is_some() {
                self.diag.error(
                    child(pointer, "x-parser-args"),
                    "x-parser-args without x-parser (the arguments would be ignored)",
                    "add \"x-parser\": \"json\", or remove x-parser-args",
                );
            }
            return None;
        };
        let kind_ = match value.as_str() {
            Some("json") => ParserKind::Json,
            Some("gemma4-tool-call") => ParserKind::Gemma4ToolCall,
            _ => {
                self.diag.error(
                    child(pointer, "x-parser"),
                    format!("unknown parser {value}"),
                    format!("use one of: {}", PARSERS.join(", ")),
                );
                return None;
            }
        };
        let mut parser = Parser {
            kind: kind_,
            transform: None,
            allow_non_json: false,
        };
        let Some(args) = args else {
            return Some(parser);
        };
        let args_at = child(pointer, "x-parser-args");
        let Value::Object(args) = args else {
            self.diag.error(
                args_at,
                format!("x-parser-args must be an object, found {}", kind(args)),
                "write e.g. {\"transform\": \"{name: name, arguments: parameters}\"}",
            );
            return Some(parser);
        };
        for (key, value) in args {
            let at = child(&args_at, key);
            match key.as_str() {
                "transform" => match value.as_str() {
                    Some(expr) => match Expression::compile(expr) {
                        Ok(expression) => {
                            parser.transform = Some(Transform {
                                pointer: at,
                                expression,
                            })
                        }
                        Err(e) => {
                            let pos = e
                                .offset
                                .map(|o| format!(" at position {o}"))
                                .unwrap_or_default();
                            self.diag.error(
                                at,
                                format!("invalid JMESPath expression {expr:?}: {}{pos}", e.message),
                                "fix the expression (see https://jmespath.org/specification.html)",
                            )
                        }
                    },
                    None => self.diag.error(
                        at,
                        format!("transform must be a string, found {}", kind(value)),
                        "write the JMESPath expression as a string",
                    ),
                },
                "allow_non_json" => match value {
                    Value::Bool(b) => parser.allow_non_json = *b,
                    _ => self.diag.error(
                        at,
                        format!("allow_non_json must be true or false, found {value}"),
                        "write true or false",
                    ),
                },
                _ => {
                    let fix = match closest(key, PARSER_ARGS) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("use one of: {}", PARSER_ARGS.join(", ")),
                    };
                    self.diag
                        .error(at, format!("unknown parser argument `{key}`"), fix)
                }
            }
        }
        Some(parser)
    }

    fn properties(&mut self, map: &Map, pointer: &str) -> Option<Vec<Property>> {
        let value = map.get("properties")?;
        let at = child(pointer, "properties");
        let Value::Object(props) = value else {
            self.diag.error(
                at,
                format!("properties must be an object, found {}", kind(value)),
                "map each output key to its schema, e.g. {\"content\": {\"type\": \"string\"}}",
            );
            return None;
        };
        let mut out = Vec::with_capacity(props.len());
        for (name, schema) in props {
            if let Some(node) = self.node(schema, child(&at, name)) {
                out.push(Property {
                    name: name.clone(),
                    node,
                });
            }
        }
        Some(out)
    }

    fn additional(&mut self, map: &Map, pointer: &str) -> Additional {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::PassThrough,
            Some(Value::Bool(false)) => Additional::Deny,
            Some(schema @ Value::Object(_)) => {
                match self.node(schema, child(pointer, "additionalProperties")) {
                    Some(node) => Additional::Schema(Box::new(node)),
                    None => Additional::PassThrough,
                }
            }
            Some(other) => {
                self.diag.error(
                    child(pointer, "additionalProperties"),
                    format!(
                        "additionalProperties must be true, false or a schema, found {}",
                        kind(other)
                    ),
                    "use true (pass extra keys through), false (drop them) or a schema object",
                );
                Additional::PassThrough
            }
        }
    }

    fn required(&mut self, map: &Map, pointer: &str) -> Vec<String> {
        let Some(value) = map.get("required") else {
            return Vec::new();
        };
        match value.as_array().and_then(|a| {
            a.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        }) {
            Some(keys) => keys,
            None => {
                self.diag.error(
                    child(pointer, "required"),
                    "required must be a list of property names",
                    "write e.g. [\"name\", \"arguments\"]",
                );
                Vec::new()
            }
        }
    }

    fn items(&mut self, map: &Map, pointer: &str) -> Items {
        let items = map
            .get("items")
            .map(|v| self.node(v, child(pointer, "items")));
        let prefix = map.get("prefixItems").map(|v| {
            let at = child(pointer, "prefixItems");
            match v {
                Value::Array(list) => {
                    let nodes: Vec<Option<Node>> = list
                        .iter()
                        .enumerate()
                        .map(|(i, s)| self.node(s, child(&at, &i.to_string())))
                        .collect();
                    nodes.into_iter().collect::<Option<Vec<Node>>>()
                }
                other => {
                    self.diag.error(
                        at,
                        format!(
                            "prefixItems must be a list of schemas, found {}",
                            kind(other)
                        ),
                        "write e.g. [{\"type\": \"string\"}, {\"type\": \"integer\"}]",
                    );
                    None
                }
            }
        });
        match (items, prefix) {
            (Some(Some(node)), _) => Items::Each(Box::new(node)),
            (None, Some(Some(nodes))) => Items::Prefix(nodes),
            _ => Items::None,
        }
    }

    /// Checks that need the whole node: keyword combinations and capture-group shapes.
    fn check_shapes(&mut self, node: &Node) {
        let ty = node.node_type;
        let type_name = ty.as_str().unwrap_or("untyped");
        if let Some(p) = &node.regex {
            self.check_groups(p, "x-regex", ty.accepts_dict(), type_name);
        }
        if let Some(p) = &node.iterator {
            if ty != NodeType::Array {
                self.diag.error(
                    p.pointer.clone(),
                    format!("x-regex-iterator on a node of type {type_name} (it makes a list)"),
                    "set \"type\": \"array\" with an `items` schema, or use x-regex for a single match",
                );
            }
            let items_take_dicts = match &node.items {
                Items::Each(item) => item.node_type.accepts_dict() || item.constant.is_some(),
                Items::Prefix(nodes) => nodes
                    .iter()
                    .all(|n| n.node_type.accepts_dict() || n.constant.is_some()),
                Items::None => true,
            };
            self.check_groups(p, "x-regex-iterator", items_take_dicts, "the items' type");
        }
        if let Some(p) = &node.key_value {
            if ty != NodeType::Object {
                self.diag.error(
                    p.pointer.clone(),
                    format!("x-regex-key-value on a node of type {type_name} (it makes a dict)"),
                    "set \"type\": \"object\"",
                );
            }
            let names = p.regex.group_names();
            let has = |n: &str| names.iter().any(|g| g.as_deref() == Some(n));
            if !has("key") || !has("value") {
                self.diag.error(
                    p.pointer.clone(),
                    "x-regex-key-value needs named groups `key` and `value`",
                    "write the pattern with (?P<key>…) and (?P<value>…)",
                );
            }
        }
        if let Some(parser) = &node.parser {
            let at = child(&node.pointer, "x-parser");
            let name = match parser.kind {
                ParserKind::Json => "json",
                ParserKind::Gemma4ToolCall => "gemma4-tool-call",
            };
            if node.iterator.is_some() || node.key_value.is_some() {
                self.diag.error(
                    at.clone(),
                    format!("x-parser {name} on a node whose regex makes a list or dict (the parser needs a string)"),
                    "move x-parser to the `items` schema (for x-regex-iterator) or to the value schema",
                );
            } else if node
                .regex
                .as_ref()
                .is_some_and(|p| p.regex.has_named_groups())
            {
                self.diag.error(
                    at,
                    format!("x-parser {name} after an x-regex with named groups (the parser needs a string)"),
                    "use one unnamed group in x-regex, or move x-parser into the properties",
                );
            }
        }
        if ty == NodeType::Array && matches!(node.items, Items::None) {
            self.diag.error(
                node.pointer.clone(),
                "array node without `items` or `prefixItems`",
                "add \"items\": {…} describing one element (use {\"type\": \"any\"} to keep elements as they are)",
            );
        }
    }

    fn check_groups(&mut self, p: &Pattern, keyword: &str, dict_ok: bool, type_name: &str) {
        let names = p.regex.group_names();
        let named = names.iter().filter(|n| n.is_some()).count();
        if names.is_empty() {
            self.diag.error(
                p.pointer.clone(),
                format!("{keyword} has no capture group, so a match has no value"),
                "wrap the part to extract in ( ), or use named groups (?P<name>…) for several values",
            );
        } else if named > 0 {
            if !dict_ok {
                self.diag.error(
                    p.pointer.clone(),
                    format!("{keyword} has named groups, which make a dict, but {type_name} cannot take a dict"),
                    "use one unnamed group for a single value, or make the node an object",
                );
            }
        } else if names.len() > 1 {
            self.diag.error(
                p.pointer.clone(),
                format!(
                    "{keyword} has {} unnamed capture groups; exactly one is allowed",
                    names.len()
                ),
                "make the other groups non-capturing with (?:…), or name them (?P<name>…)",
            );
        }
    }
}

//! The response-schema model (IR): one typed tree that the validator builds and both back ends
//! (the interpreter here and the code generator in `chatparse-macros`) consume.
//!
//! Every node remembers its JSON pointer so that errors and generated code can name where in the
//! schema they come from.

mod check;
pub use check::{Check, ReadAs, Unread};
pub(crate) mod interp;
pub(crate) mod recording;
pub(crate) mod reuse;
pub use interp::{Lenient, Malformed};
mod load;

pub mod stream;

use std::path::Path;
use std::sync::Arc;

use crate::value::Value;

use crate::diag;
use crate::error::SchemaError;
use crate::jmespath::Expression;

use crate::pyre::{PyRegex, Replacement};

pub use crate::pointer::escape_pointer_token;
pub use load::{MAX_ARRAY_NESTING, MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES};

/// A validated response schema, ready to parse model output.
///
/// Loading validates the whole schema and reports every problem at once (see [`SchemaError`]).
///
/// Cloning is cheap: the compiled model (regexes included) is shared, so one loaded schema can
/// serve a one-shot parser, a streaming plan (`XRegexPlan::new(&schema)`) and other threads.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Arc<Node>,
    source_name: String,
    value: Value,
    /// The family's completeness check, run after the schema's parse (see [`Check`]).
    check: Option<Check>,
}

/// Refuses spec text longer than [`MAX_SCHEMA_BYTES`] before it is parsed.
pub(crate) fn check_text_size(text: &str, source_name: &str) -> Result<(), SchemaError> {
    if text.len() <= MAX_SCHEMA_BYTES {
        return Ok(());
    }
    Err(SchemaError {
        source_name: source_name.to_owned(),
        problems: vec![crate::error::SchemaProblem {
            pointer: String::new(),
            message: format!(
                "the schema is {} bytes long, more than the {MAX_SCHEMA_BYTES} a response \
                 schema may have",
                text.len()
            ),
            fix: "describe the message, not every possible key: parse tool arguments with \
                  {\"type\": \"object\", \"additionalProperties\": {}}, and split unrelated \
                  formats into separate schemas"
                .to_owned(),
        }],
    })
}

impl Schema {
    /// Load a schema from JSON text.
    ///
    /// ```
    /// let schema = chatparse_runtime::Schema::from_json_str(r#"{"type": "string", "x-regex": "<a>(.*)</a>"}"#)?;
    /// assert_eq!(schema.parse("<a>hi</a>")?, chatparse_runtime::json!("hi"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<Self, SchemaError> {
        Self::from_json_str_named(text, "<schema>")
    }

    /// Load a schema from JSON text, naming its source (a file name) in error messages.
    pub fn from_json_str_named(text: &str, source_name: &str) -> Result<Self, SchemaError> {
        check_text_size(text, source_name)?;
        // The reference loads schemas with Python's json module; so do we (number kinds, duplicate
        // keys), and its error messages carry the line and column.
        let value = crate::py::json::loads(text)
            .map_err(|e| diag::invalid_json(source_name, e, "a response schema"))?;
        Self::from_value_named(value, source_name)
    }

    /// Load a schema from a [`Value`] (see [`crate::value`]).
    ///
    /// ```
    /// use chatparse_runtime::json;
    /// let err = chatparse_runtime::Schema::from_value(json!({"type": "array", "x-regex-kv": "x"})).unwrap_err();
    /// assert_eq!(err.problems.len(), 2); // an unknown x- key, and an array without items
    /// ```
    pub fn from_value(value: Value) -> Result<Self, SchemaError> {
        Self::from_value_named(value, "<schema>")
    }

    /// Load a schema from a [`Value`], naming its source in error messages.
    pub fn from_value_named(value: Value, source_name: &str) -> Result<Self, SchemaError> {
        let root = load::load(&value, source_name)?;
        Ok(Self {
            root: Arc::new(root),
            source_name: source_name.to_owned(),
            value,
            check: None,
        })
    }

    /// The same schema with a family's completeness [`Check`] above it: [`Schema::parse`] fails
    /// where the check finds a part of the output the message would not carry, and
    /// [`Schema::parse_lenient`] sets it aside. (`chatparse::shipped` attaches each shipped
    /// family's check.) The schema's own parse stays as it is:
    /// [`Schema::parse_schema_only`].
    pub fn with_check(mut self, check: Check) -> Self {
        self.check = Some(check);
        self
    }

    /// The completeness check attached with [`Schema::with_check`], if any.
    pub fn check(&self) -> Option<Check> {
        self.check
    }

    /// Load a schema file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, SchemaError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| diag::unreadable(&name, &e, "schema"))?;
        Self::from_json_str_named(&text, &name)
    }

    /// The root node of the schema model.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The name of the schema's source (file name or `<schema>`).
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The schema as JSON.
    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// Turns off the substring-search fast paths of every pattern, so that all of them run on
    /// the regex engines with captures: the "naive port" the benchmarks compare against, and a
    /// cross-check that the fast paths change nothing. Not API: a hook for benchmarks and tests,
    /// behind the `unstable-bench-hooks` feature.
    #[cfg(feature = "unstable-bench-hooks")]
    #[doc(hidden)]
    pub fn disable_fast_paths(&mut self) {
        fn walk(node: &mut Node) {
            for sub in &mut node.substitutions {
                sub.pattern.regex.disable_fast_paths();
            }
            for pattern in [&mut node.regex, &mut node.iterator, &mut node.key_value]
                .into_iter()
                .flatten()
            {
                pattern.regex.disable_fast_paths();
            }
            for property in node.properties.iter_mut().flatten() {
                walk(&mut property.node);
            }
            if let Additional::Schema(node) = &mut node.additional {
                walk(node);
            }
            match &mut node.items {
                Items::None => {}
                Items::Each(node) => walk(node),
                Items::Prefix(nodes) => nodes.iter_mut().for_each(walk),
            }
        }
        walk(Arc::get_mut(&mut self.root).expect("disable_fast_paths before cloning the schema"));
    }
}

impl From<&Schema> for Schema {
    /// A clone (cheap: the compiled model is shared), so that APIs taking a `Schema` by value,
    /// such as `XRegexPlan::new`, also take `&Schema`.
    fn from(schema: &Schema) -> Self {
        schema.clone()
    }
}

/// Which `x-parser`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParserKind {
    /// `json`
    Json,
    /// `gemma4-tool-call`
    Gemma4ToolCall,
}

/// The `type` of a schema node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeType {
    /// `"object"`
    Object,
    /// `"array"`
    Array,
    /// `"string"`
    String,
    /// `"integer"`: Python `int()` coercion from strings.
    Integer,
    /// `"number"`: Python `float()` coercion; always yields a float.
    Number,
    /// `"boolean"`: true/1/false/0 from strings, any case.
    Boolean,
    /// `"any"`: the value passes through unchanged.
    Any,
    /// No `type`: like `any`.
    Untyped,
}

impl NodeType {
    /// The schema spelling of the type (`None` for an untyped node).
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self {
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Any => "any",
            Self::Untyped => return None,
        })
    }

    /// Whether a dict (from named groups or JSON) is an acceptable value for this type.
    pub fn accepts_dict(self) -> bool {
        matches!(self, Self::Object | Self::Any | Self::Untyped)
    }
}

/// A regex from the schema, compiled once, with the pointer of the keyword it came from.
#[derive(Debug)]
pub struct Pattern {
    /// JSON pointer of the keyword (e.g. `/properties/content/x-regex`).
    pub pointer: String,
    /// The compiled Python pattern.
    pub regex: PyRegex,
}

/// One `[pattern, replacement]` pair of `x-regex-substitutions`.
#[derive(Debug)]
pub struct Substitution {
    /// The pattern.
    pub pattern: Pattern,
    /// The replacement as written in the schema (Python `re.sub` syntax).
    pub replacement_source: String,
    /// The parsed replacement.
    pub replacement: Replacement,
}

/// A JMESPath `transform` from `x-parser-args`.
#[derive(Debug)]
pub struct Transform {
    /// JSON pointer of the `transform` keyword.
    pub pointer: String,
    /// The compiled expression.
    pub expression: Expression,
}

/// `x-parser` with its `x-parser-args`.
#[derive(Debug)]
pub struct Parser {
    /// Which parser.
    pub kind: ParserKind,
    /// `transform`: applied to the parsed value.
    pub transform: Option<Transform>,
    /// `allow_non_json`: keep the string when it is not JSON.
    pub allow_non_json: bool,
}

/// How an object node treats input keys that are not among its `properties`.
#[derive(Debug)]
pub enum Additional {
    /// `additionalProperties` absent or `true` (or any non-object value other than `false`):
    /// extra keys pass through unchanged.
    PassThrough,
    /// `additionalProperties: false`: extra keys are dropped.
    Deny,
    /// `additionalProperties: {…}`: extra keys are parsed with this schema.
    Schema(Box<Node>),
}

/// How an array node's items are parsed.
#[derive(Debug)]
pub enum Items {
    /// Neither `items` nor `prefixItems` (only valid on non-array nodes).
    None,
    /// `items`: every element parsed with one schema.
    Each(Box<Node>),
    /// `prefixItems`: element i parsed with schema i; lengths must match.
    Prefix(Vec<Node>),
}

/// A named property of an object node.
#[derive(Debug)]
pub struct Property {
    /// The key in the output object.
    pub name: String,
    /// The property's schema.
    pub node: Node,
}

/// One node of a response schema.
#[derive(Debug)]
pub struct Node {
    /// JSON pointer of this node in the schema document ("" for the root).
    pub pointer: String,
    /// `type`.
    pub node_type: NodeType,
    /// `const`: returned whatever the input.
    pub constant: Option<Value>,
    /// `default`: used by a parent object when its dict input lacks this key.
    pub default: Option<Value>,
    /// `x-regex-substitutions`, applied in order.
    pub substitutions: Vec<Substitution>,
    /// `x-regex`: first match; named groups make a dict, else the one unnamed group.
    pub regex: Option<Box<Pattern>>,
    /// `x-regex-iterator`: every match (array nodes).
    pub iterator: Option<Box<Pattern>>,
    /// `x-regex-key-value`: every match's `key`/`value` groups as a dict (object nodes).
    pub key_value: Option<Box<Pattern>>,
    /// `x-parser` and its args.
    pub parser: Option<Parser>,
    /// `properties`, in schema order; `None` when the keyword is absent (not the same as empty).
    pub properties: Option<Vec<Property>>,
    /// `additionalProperties`.
    pub additional: Additional,
    /// `required`.
    pub required: Vec<String>,
    /// `items` / `prefixItems` (`items` wins when both are present, as in the reference).
    pub items: Items,
}

impl Node {
    /// Whether the node has any regex keyword (and so needs string input).
    pub fn has_regex(&self) -> bool {
        self.regex.is_some()
            || self.iterator.is_some()
            || self.key_value.is_some()
            || !self.substitutions.is_empty()
    }

    /// Whether the node returns its input unchanged (`{}`, `{"type": "any"}`: no `const`, regex
    /// or parser), so a parent can move values through without visiting them.
    pub fn passes_through(&self) -> bool {
        matches!(self.node_type, NodeType::Any | NodeType::Untyped)
            && self.constant.is_none()
            && !self.has_regex()
            && self.parser.is_none()
    }

    /// The property with this name, if any.
    pub fn property(&self, name: &str) -> Option<&Node> {
        self.properties
            .as_deref()?
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.node)
    }
}

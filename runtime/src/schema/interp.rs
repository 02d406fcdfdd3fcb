//! The interpreter: walks a [`Node`] tree and runs the [`support`](crate::support) step for each
//! keyword, in the reference's order (`recursive_parse` in transformers 5.10.4).

use serde_json::{Map, Value};

use super::{Additional, Items, Node, NodeType, Schema};
use crate::error::ParseError;
use crate::support::{self, Content, ObjectInput};

impl Schema {
    /// Parse one complete model output into a message, exactly as the reference parser would.
    pub fn parse(&self, text: &str) -> Result<Value, ParseError> {
        parse_node(self.root(), Content::borrowed(text))
    }
}

pub(crate) fn parse_node(node: &Node, content: Content<'_>) -> Result<Value, ParseError> {
    if let Some(constant) = &node.constant {
        return Ok(constant.clone());
    }
    if content.is_null() {
        return Ok(Value::Null);
    }
    if !node.has_regex() {
        return after_regex(node, content);
    }
    let mut text = support::regex_input(content, &node.pointer)?;
    for sub in &node.substitutions {
        text = support::substitute(
            text,
            &sub.pattern.regex,
            &sub.replacement,
            &sub.pattern.pointer,
        )?;
    }
    match regex_stages(node, &text)? {
        Some(content) => after_regex(node, content),
        None => Ok(Value::Null),
    }
}

/// `x-regex`, then `x-regex-iterator`, then `x-regex-key-value`. `None` means the node is null.
fn regex_stages<'t>(node: &Node, text: &'t str) -> Result<Option<Content<'t>>, ParseError> {
    let mut content = Content::borrowed(text);
    if let Some(p) = &node.regex {
        match support::search(&p.regex, text, &p.pointer)? {
            Some(found) => content = found,
            None => return Ok(None),
        }
    }
    if let Some(p) = &node.iterator {
        let text = support::stage_text(&content, &p.pointer)?;
        match support::iterate(&p.regex, text, &p.pointer)? {
            Some(found) => content = found,
            None => return Ok(None),
        }
    }
    if let Some(p) = &node.key_value {
        let text = support::stage_text(&content, &p.pointer)?;
        match support::key_value(&p.regex, text, &p.pointer)? {
            Some(found) => content = found,
            None => return Ok(None),
        }
    }
    Ok(Some(content))
}

pub(crate) fn after_regex(node: &Node, content: Content<'_>) -> Result<Value, ParseError> {
    let content = match &node.parser {
        Some(parser) => support::parse_json(
            content,
            parser.kind,
            parser.allow_non_json,
            parser.transform.as_ref().map(|t| {
                (
                    support::Transform::Interpreted(&t.expression),
                    t.pointer.as_str(),
                )
            }),
            &node.pointer,
        )?,
        None => content,
    };
    let pointer = &node.pointer;
    Ok(match node.node_type {
        NodeType::Object => parse_object(node, content)?,
        NodeType::Array => parse_array(node, content)?,
        NodeType::String => Value::String(support::to_string(content, pointer)?.into_owned()),
        NodeType::Integer => support::to_integer(content, pointer)?.to_value(),
        NodeType::Number => support::float_to_value(support::to_number(content, pointer)?),
        NodeType::Boolean => Value::Bool(support::to_boolean(content, pointer)?),
        NodeType::Any | NodeType::Untyped => content.into_value(),
    })
}

fn parse_object(node: &Node, content: Content<'_>) -> Result<Value, ParseError> {
    let mut out = Map::new();
    let properties = node.properties.as_deref().unwrap_or_default();
    match support::object_input(content, node.properties.is_some(), &node.pointer)? {
        ObjectInput::Text(text) => {
            for prop in properties {
                let value = parse_node(&prop.node, support::share(&text))?;
                if !value.is_null() {
                    out.insert(prop.name.clone(), value);
                }
            }
        }
        ObjectInput::Dict(mut input) => {
            for prop in properties {
                if let Some(constant) = &prop.node.constant {
                    out.insert(prop.name.clone(), constant.clone());
                } else if let Some(value) = input.get_mut(&prop.name) {
                    let value = Content::Value(std::mem::take(value));
                    out.insert(prop.name.clone(), parse_node(&prop.node, value)?);
                } else if let Some(default) = &prop.node.default {
                    out.insert(prop.name.clone(), default.clone());
                }
            }
            if !matches!(node.additional, Additional::Deny) {
                for (key, value) in input {
                    if node.property(&key).is_some() {
                        continue;
                    }
                    let value = match &node.additional {
                        Additional::Schema(schema) => parse_node(schema, Content::Value(value))?,
                        _ => value,
                    };
                    out.insert(key, value);
                }
            }
        }
    }
    let required: Vec<&str> = node.required.iter().map(String::as_str).collect();
    support::check_required(&required, |key| out.contains_key(key), &node.pointer)?;
    Ok(Value::Object(out))
}

fn parse_array(node: &Node, content: Content<'_>) -> Result<Value, ParseError> {
    let items = match &node.items {
        Items::Each(item) => support::array_items(content, &node.pointer)?
            .into_iter()
            .map(|c| parse_node(item, c))
            .collect::<Result<Vec<_>, _>>()?,
        Items::Prefix(schemas) => {
            match support::prefix_items(content, schemas.len(), &node.pointer)? {
                Some(items) => items
                    .into_iter()
                    .zip(schemas)
                    .map(|(c, schema)| parse_node(schema, c))
                    .collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            }
        }
        // The validator rejects arrays without items; such a node still gets the reference's error.
        Items::None => {
            if !support::array_items(content, &node.pointer)?.is_empty() {
                return Err(support::unexpected_null(&node.pointer));
            }
            Vec::new()
        }
    };
    Ok(Value::Array(items))
}

//! The plan: every decision about the generated module, made before any token is written.
//!
//! [`ModulePlan::new`] walks the validated schema once (as serde_derive builds its AST and `Ctxt`
//! before generating, as typify builds its type space before `to_stream()`) and records, per schema
//! node ([`NodePlan`]): its function and Rust type, whether it can return `None`, the kinds of
//! content that can reach it (so that an object whose input is only ever a dict gets no text arm),
//! whether strings are borrowed (`&'a str`) or built (`Cow`), the regex/replacement/constant/
//! transform statics it defines (a pattern used by several nodes is compiled once), and for object
//! properties their absent/null handling ([`FieldShape`]) and defaults. [`Uses`] is derived from
//! the finished plan: the module imports exactly what it uses.
//!
//! Emission (`generator.rs`) reads only the plan.

use chatparse_runtime::schema::{
    Additional, Items, Node, NodeType, Parser, Pattern, Substitution, Transform,
};
use chatparse_runtime::value::Value;
use chatparse_runtime::Schema;
use proc_macro2::{Ident, Span, TokenStream};

use crate::names::{camel, singular, snake, Namer};
use crate::types::{Kinds, Ty};

/// The plan of one generated parser module.
#[derive(Debug)]
pub struct ModulePlan<'s> {
    /// The root node (`parse_response`).
    pub root: NodePlan<'s>,
    /// The imports the module needs.
    pub uses: Uses,
}

/// Items the generated module imports beyond those every module uses (`support`, `Content`,
/// `Value`, `ParseError`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses {
    /// `::std::borrow::Cow` (rebuilt text after substitutions, `Cow` defaults).
    pub cow: bool,
    /// `support::ObjectInput` (an object that can receive both text and a dict).
    pub object_input: bool,
    /// `support::Slot` (an object with stored properties).
    pub slot: bool,
    /// `serde::ser::{Serialize, SerializeMap, Serializer}` (any generated struct).
    pub serialize: bool,
    /// [`Map`](chatparse_runtime::value::Map) (`additionalProperties`).
    pub map: bool,
    /// `once_cell::sync::Lazy` (any static).
    pub lazy: bool,
    /// `pyre::PyRegex`.
    pub py_regex: bool,
    /// `pyre::Replacement` (`x-regex-substitutions`).
    pub replacement: bool,
    /// `jmespath::Expression` (a transform left to the interpreter).
    pub expression: bool,
    /// [`JsonObject`](chatparse_runtime::value::JsonObject) (an object of free-form keys).
    pub json_object: bool,
}

/// A `static` (or compiled function) a node defines, emitted before the node's function.
#[derive(Debug)]
pub enum Static<'s> {
    /// `static NAME: Lazy<PyRegex>` for a pattern no earlier node compiled.
    Regex { name: String, pattern: &'s Pattern },
    /// `static NAME: Lazy<Replacement>` for substitution `regex` (the static of its pattern).
    Replacement {
        name: String,
        regex: String,
        substitution: &'s Substitution,
    },
    /// `static NAME: Lazy<Value>` holding a `const`.
    Constant {
        name: String,
        value: &'s Value,
        pointer: &'s str,
    },
    /// A JMESPath transform compiled to a Rust function (`fn transform_x`).
    CompiledTransform { function: TokenStream },
    /// `static NAME: Lazy<Expression>`: a transform the compiler leaves to the interpreter.
    InterpretedTransform {
        name: String,
        transform: &'s Transform,
    },
}

/// One schema node: a `fn parse_x<'a>(content: Content<'a>) -> Result<Option<T>, ParseError>`.
#[derive(Debug)]
pub struct NodePlan<'s> {
    /// The schema node.
    pub node: &'s Node,
    /// `parse_x`.
    pub func: String,
    /// `T`.
    pub ty: Ty,
    /// Whether the function can return `Ok(None)` (the reference's `None`).
    pub nullable: bool,
    /// Statics the node defines, in emission order.
    pub statics: Vec<Static<'s>>,
    /// What the function does.
    pub body: Body<'s>,
}

/// What a node's function does.
#[derive(Debug)]
pub enum Body<'s> {
    /// `const`: the static holding it, `None` for `const: null`.
    Constant(Option<String>),
    /// Everything else.
    Parse(Box<ParsePlan<'s>>),
}

/// The steps of a non-constant node, in order.
#[derive(Debug)]
pub struct ParsePlan<'s> {
    /// `if content.is_null() { return Ok(None); }` (null can arrive).
    pub null_check: bool,
    /// Substitutions and regex keywords.
    pub stages: Option<Stages<'s>>,
    /// `x-parser`.
    pub parser: Option<ParserStep<'s>>,
    /// The conversion to the node's type.
    pub value: ValuePlan<'s>,
    /// The node is a call under the families' wrap (`x-parser: json` with the transform
    /// `{type: 'function', function: @}`, properties `type: {const: "function"}` and
    /// `function`): when its text is one JSON object that parses, the call is built from its
    /// fields read in place (`support::Content::Object`) — no dict, no wrap around it.
    pub wrapped_call: bool,
}

/// Substitutions, then `x-regex`, `x-regex-iterator`, `x-regex-key-value`.
#[derive(Debug)]
pub struct Stages<'s> {
    /// `(regex static, replacement static, pattern pointer)` per substitution.
    pub substitutions: Vec<(String, String, &'s str)>,
    /// The text is always an unmodified slice of the input: the stages borrow from it directly
    /// (otherwise a substitution or an owned input makes it a `Cow`).
    pub slice: bool,
    /// `x-regex`.
    pub regex: Option<PatternStep<'s>>,
    /// `x-regex-iterator`.
    pub iterator: Option<PatternStep<'s>>,
    /// `x-regex-key-value`.
    pub key_value: Option<PatternStep<'s>>,
}

/// One regex keyword: the static compiling it and the keyword's pointer.
#[derive(Debug)]
pub struct PatternStep<'s> {
    pub regex: String,
    pub pointer: &'s str,
    /// The pattern has named groups (its match is a dict).
    pub named_groups: bool,
}

/// `x-parser` and its transform.
#[derive(Debug)]
pub struct ParserStep<'s> {
    pub parser: &'s Parser,
    /// The transform's function or static, and whether it is compiled to Rust.
    pub transform: Option<TransformStep<'s>>,
}

/// A transform: compiled (`Transform::Compiled(fn)`) or interpreted (`Transform::Interpreted(&STATIC)`).
#[derive(Debug)]
pub struct TransformStep<'s> {
    pub name: String,
    pub compiled: bool,
    /// The compiled function takes the parsed value by value (see
    /// `jmespath::compile_owned_function`).
    pub owned: bool,
    pub pointer: &'s str,
}

/// The conversion of a node's content to its type.
#[derive(Debug)]
pub enum ValuePlan<'s> {
    /// `&'a str` (`borrowed`) or `Cow<'a, str>`.
    Str {
        borrowed: bool,
    },
    Integer,
    Number,
    Boolean,
    /// Untyped and `any`: the content as JSON.
    Json,
    Array(ArrayPlan<'s>),
    Object(Box<ObjectPlan<'s>>),
    /// An object of free-form keys (no `properties`, every other key kept as it is: tool
    /// arguments): `support::JsonObject`. When its content is the text of `x-parser: json` (no
    /// transform), text that is one JSON object is kept as it is, checked, not parsed
    /// (`support::json_object_text`); so is an object value of a call read in place
    /// (`Fields::take_object`); a dict that arrives (a value of parsed JSON) is moved in.
    JsonObject,
}

/// How an array's items are parsed.
#[derive(Debug)]
pub enum ArrayPlan<'s> {
    /// `items`: `Vec<T>`, or `Vec<Option<T>>` when the item can be null.
    Each(Box<NodePlan<'s>>),
    /// `prefixItems`: `Vec<Value>`.
    Prefix(Vec<NodePlan<'s>>),
    /// Neither: only an empty array parses.
    Empty,
}

/// Which content an object node can receive (`support::object_input`'s two outcomes); only the
/// reachable ones are emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectArms {
    /// Only a str (and the object has properties): every property parses the whole text.
    Text,
    /// Only a dict (or nothing that parses: an object without properties rejects text).
    Dict,
    /// Either.
    Both,
}

/// An object node: a struct and the code that fills it.
#[derive(Debug)]
pub struct ObjectPlan<'s> {
    /// The struct's name (`ToolCallFunction`).
    pub struct_name: String,
    /// Whether the struct borrows from the input (`<'a>`).
    pub lifetime: bool,
    pub arms: ObjectArms,
    /// In schema order.
    pub properties: Vec<PropertyPlan<'s>>,
    /// Keys beyond `properties`, when kept.
    pub extras: Option<ExtrasPlan<'s>>,
    /// A private `dict_input` field: a `const: null` property is output only for dict input.
    pub dict_flag: bool,
    /// `required`.
    pub required: &'s [String],
}

impl ObjectPlan<'_> {
    /// The stored properties.
    pub fn fields(&self) -> impl Iterator<Item = &FieldPlan<'_>> {
        self.properties.iter().filter_map(|p| match p {
            PropertyPlan::Field(f) => Some(&**f),
            PropertyPlan::Constant { .. } => None,
        })
    }

    /// Whether the text arm binds the text (a stored property parses it).
    pub fn text_used(&self) -> bool {
        self.fields().next().is_some()
    }

    /// Whether the dict arm binds the map, and mutably (properties are taken out of it).
    pub fn map_binding(&self) -> (bool, bool) {
        let fields = self.fields().next().is_some();
        (fields || self.extras.is_some(), fields)
    }
}

/// One property of an object.
#[derive(Debug)]
pub enum PropertyPlan<'s> {
    /// A `const` property: an associated constant and a static, not stored.
    Constant {
        key: &'s str,
        /// The `Lazy<Value>` static holding it (`ROLE_CONST`).
        name: String,
        /// The associated constant's name (`ROLE`; `ROLE_JSON` for JSON text).
        associated: String,
        /// The constant.
        value: &'s Value,
        /// The property's pointer.
        pointer: &'s str,
        /// `const: null`: output only for dict input (null results are dropped for text input).
        dict_only: bool,
    },
    /// A stored property.
    Field(Box<FieldPlan<'s>>),
}

/// A stored property: a struct field filled from a `Slot`.
#[derive(Debug)]
pub struct FieldPlan<'s> {
    pub key: &'s str,
    /// The struct field (`r#type` for `type`).
    pub field: String,
    /// The local that holds it while the object is built (`slot_type`).
    pub slot: String,
    pub child: NodePlan<'s>,
    /// The slot holds JSON (the node's type is JSON, or a default it cannot hold).
    pub as_value: bool,
    /// When the key is missing from dict input.
    pub absent: Absent,
    /// The field's type and how the slot becomes it.
    pub shape: FieldShape,
}

impl FieldPlan<'_> {
    /// The slot's element type.
    pub fn slot_ty(&self) -> Option<&Ty> {
        (!self.as_value).then_some(&self.child.ty)
    }

    /// The child's typed result is converted to JSON before it is stored.
    pub fn to_json(&self) -> bool {
        self.as_value && !self.child.ty.is_value()
    }
}

/// The value of a property missing from dict input.
#[derive(Debug, Clone, PartialEq)]
pub enum Absent {
    /// `Slot::Absent`.
    Missing,
    /// The `default`, typed.
    Typed(TypedDefault),
    /// The `default` as JSON text (the field is JSON).
    Json(String),
}

/// A `default` as a value of the field's type.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedDefault {
    Str(String),
    Cow(String),
    Bool(bool),
    F64(f64),
    Int(i64),
    IntBool(bool),
}

/// A field's type and its conversion from the slot (`T` the slot's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldShape {
    /// `Value`, required: `into_required_value`.
    RequiredValue,
    /// `Option<Value>`: `into_value_option`.
    OptionalValue,
    /// `T`, required and never null: `into_required`.
    Required,
    /// `Option<T>`, required, `None` when null: `into_required_nullable`.
    RequiredNullable,
    /// `Option<T>`, `None` when absent: `into_option`.
    Optional,
    /// `Option<Option<T>>`: outer `None` when absent, inner `None` when null: `into_option_option`.
    OptionalNullable,
}

impl FieldShape {
    pub fn required(self) -> bool {
        matches!(
            self,
            FieldShape::RequiredValue | FieldShape::Required | FieldShape::RequiredNullable
        )
    }
}

/// Keys of an object beyond its `properties`.
#[derive(Debug)]
pub struct ExtrasPlan<'s> {
    /// The struct field (`additional_properties`).
    pub field: String,
    /// The node parsing each value, `None` when values pass through.
    pub value: Option<Box<NodePlan<'s>>>,
    /// No properties and values pass through: the whole input map is the field.
    pub moves_whole_map: bool,
}

impl<'s> ModulePlan<'s> {
    /// Plan the module for `schema` (`streaming`: with `generate_streaming`'s items); `rt` is
    /// the path of the runtime crate in the generated code (compiled transforms name it).
    pub fn new(schema: &'s Schema, streaming: bool, rt: &TokenStream) -> Self {
        let mut planner = Planner {
            rt: rt.clone(),
            bases: Namer::default(),
            regexes: Default::default(),
        };
        let root = planner.node(schema.root(), "response", Kinds::ROOT);
        let mut uses = Uses {
            lazy: streaming,
            ..Uses::default()
        };
        root.collect_uses(&mut uses);
        ModulePlan { root, uses }
    }
}

impl NodePlan<'_> {
    /// Calls `f` on this node and every node below it.
    #[cfg(test)]
    fn visit(&self, f: &mut impl FnMut(&NodePlan<'_>)) {
        f(self);
        let Body::Parse(parse) = &self.body else {
            return;
        };
        match &parse.value {
            ValuePlan::Array(ArrayPlan::Each(item)) => item.visit(f),
            ValuePlan::Array(ArrayPlan::Prefix(items)) => items.iter().for_each(|n| n.visit(f)),
            ValuePlan::Object(object) => {
                for p in &object.properties {
                    if let PropertyPlan::Field(field) = p {
                        field.child.visit(f);
                    }
                }
                if let Some(value) = object.extras.as_ref().and_then(|e| e.value.as_ref()) {
                    value.visit(f);
                }
            }
            _ => {}
        }
    }

    fn collect_uses(&self, uses: &mut Uses) {
        for s in &self.statics {
            s.collect_uses(uses);
        }
        let Body::Parse(parse) = &self.body else {
            return;
        };
        if parse.stages.as_ref().is_some_and(|s| !s.slice) {
            uses.cow = true;
        }
        match &parse.value {
            ValuePlan::JsonObject => uses.json_object = true,
            ValuePlan::Array(ArrayPlan::Each(item)) => item.collect_uses(uses),
            ValuePlan::Array(ArrayPlan::Prefix(items)) => {
                items.iter().for_each(|n| n.collect_uses(uses))
            }
            ValuePlan::Object(object) => {
                uses.serialize = true;
                uses.object_input |= object.arms == ObjectArms::Both;
                for p in &object.properties {
                    match p {
                        PropertyPlan::Constant { .. } => uses.lazy = true,
                        PropertyPlan::Field(f) => {
                            uses.slot = true;
                            uses.cow |= matches!(f.absent, Absent::Typed(TypedDefault::Cow(_)));
                            f.child.collect_uses(uses);
                        }
                    }
                }
                if let Some(extras) = &object.extras {
                    uses.map = true;
                    if let Some(value) = &extras.value {
                        value.collect_uses(uses);
                    }
                }
            }
            _ => {}
        }
    }
}

impl Static<'_> {
    fn collect_uses(&self, uses: &mut Uses) {
        match self {
            Static::Regex { .. } => {
                uses.lazy = true;
                uses.py_regex = true;
            }
            Static::Replacement { .. } => {
                uses.lazy = true;
                uses.replacement = true;
            }
            Static::Constant { .. } => uses.lazy = true,
            Static::InterpretedTransform { .. } => {
                uses.lazy = true;
                uses.expression = true;
            }
            // Self-contained: its own imports, full paths in its signature.
            Static::CompiledTransform { .. } => {}
        }
    }
}

fn upper(base: &str) -> String {
    base.to_uppercase()
}

/// Builds the plan; holds what is shared across nodes (names, regex statics).
struct Planner {
    rt: TokenStream,
    bases: Namer,
    /// The static compiling each Python pattern already planned.
    regexes: std::collections::HashMap<String, String>,
}

impl Planner {
    /// The static for `pattern`, defining it in `statics` when no earlier node did.
    fn regex<'s>(
        &mut self,
        name: String,
        pattern: &'s Pattern,
        statics: &mut Vec<Static<'s>>,
    ) -> String {
        let source = pattern.regex.python_pattern();
        if let Some(existing) = self.regexes.get(source) {
            return existing.clone();
        }
        self.regexes.insert(source.to_owned(), name.clone());
        statics.push(Static::Regex {
            name: name.clone(),
            pattern,
        });
        name
    }

    /// Plan `node`, which receives content of `input` kinds; `base` names it.
    fn node<'s>(&mut self, node: &'s Node, base: &str, input: Kinds) -> NodePlan<'s> {
        let base = self.bases.unique(base);
        let func = format!("parse_{base}");
        let mut statics = Vec::new();

        if let Some(constant) = &node.constant {
            let name = (!constant.is_null()).then(|| {
                let name = format!("{}_CONST", upper(&base));
                statics.push(Static::Constant {
                    name: name.clone(),
                    value: constant,
                    pointer: &node.pointer,
                });
                name
            });
            return NodePlan {
                node,
                func,
                ty: Ty::Value,
                nullable: constant.is_null(),
                statics,
                body: Body::Constant(name),
            };
        }

        let mut kinds = input;
        let mut list_items = Kinds::default();
        let stages = node
            .has_regex()
            .then(|| self.stages(node, &base, &mut kinds, &mut list_items, &mut statics));
        let parser = node.parser.as_ref().map(|parser| {
            let transform = parser.transform.as_ref().map(|t| {
                let compiled_name = format!("transform_{base}");
                let doc = format!(
                    " `{}` compiled to Rust: `{}`",
                    t.pointer,
                    t.expression.source()
                );
                let ident = Ident::new(&compiled_name, Span::call_site());
                if let Some(function) =
                    crate::jmespath::compile_owned_function(&t.expression, &ident, &doc, &self.rt)
                {
                    statics.push(Static::CompiledTransform { function });
                    return TransformStep {
                        name: compiled_name,
                        compiled: true,
                        owned: true,
                        pointer: &t.pointer,
                    };
                }
                // Other transforms that move the parsed value into their result (`[].{…}`) go
                // through the interpreter's owned path; compiled code takes the value by
                // reference and would copy it.
                let compiled = (!t.expression.moves_data())
                    .then(|| {
                        crate::jmespath::compile_function(&t.expression, &ident, &doc, &self.rt)
                    })
                    .flatten();
                match compiled {
                    Some(function) => {
                        statics.push(Static::CompiledTransform { function });
                        TransformStep {
                            name: compiled_name,
                            compiled: true,
                            owned: false,
                            pointer: &t.pointer,
                        }
                    }
                    None => {
                        let name = format!("{}_TRANSFORM", upper(&base));
                        statics.push(Static::InterpretedTransform {
                            name: name.clone(),
                            transform: t,
                        });
                        TransformStep {
                            name,
                            compiled: false,
                            owned: false,
                            pointer: &t.pointer,
                        }
                    }
                }
            });
            kinds = Kinds::JSON;
            ParserStep { parser, transform }
        });

        let (ty, value) = match node.node_type {
            NodeType::String => {
                let borrowed = kinds.borrowed_text();
                let ty = if borrowed { Ty::Str } else { Ty::Cow };
                (ty, ValuePlan::Str { borrowed })
            }
            NodeType::Integer => (Ty::Int, ValuePlan::Integer),
            NodeType::Number => (Ty::F64, ValuePlan::Number),
            NodeType::Boolean => (Ty::Bool, ValuePlan::Boolean),
            NodeType::Any | NodeType::Untyped => (Ty::Value, ValuePlan::Json),
            NodeType::Array => self.array(node, &base, kinds, list_items),
            NodeType::Object => self.object(node, &base, kinds),
        };
        let nullable = input.null
            || node.regex.is_some()
            || node.iterator.is_some()
            || node.key_value.is_some()
            || (ty.is_value() && kinds.null);
        let wrapped_call = parser
            .as_ref()
            .is_some_and(|p| reads_wrapped_call(p.parser, &value));
        NodePlan {
            node,
            func,
            ty,
            nullable,
            statics,
            body: Body::Parse(Box::new(ParsePlan {
                null_check: input.null,
                stages,
                parser,
                value,
                wrapped_call,
            })),
        }
    }

    /// Substitutions, then `x-regex`, `x-regex-iterator`, `x-regex-key-value`; updates `kinds`
    /// to what the stages leave, and `list_items` to the kinds of iterator matches.
    fn stages<'s>(
        &mut self,
        node: &'s Node,
        base: &str,
        kinds: &mut Kinds,
        list_items: &mut Kinds,
        statics: &mut Vec<Static<'s>>,
    ) -> Stages<'s> {
        let up = upper(base);
        let mut substitutions = Vec::new();
        for (i, sub) in node.substitutions.iter().enumerate() {
            let regex = self.regex(format!("{up}_SUBSTITUTION_{i}"), &sub.pattern, statics);
            let replacement = format!("{up}_SUBSTITUTION_{i}_REPLACEMENT");
            statics.push(Static::Replacement {
                name: replacement.clone(),
                regex: regex.clone(),
                substitution: sub,
            });
            substitutions.push((regex, replacement, sub.pattern.pointer.as_str()));
        }
        // A str the stages see is a slice of the input only if it arrived as one and no
        // substitution rebuilt it.
        let slice = kinds.borrowed_text() && node.substitutions.is_empty();
        let mut after = Kinds {
            text: true,
            slice,
            ..Kinds::default()
        };
        let regex = node.regex.as_ref().map(|p| {
            after = match_kinds(&p.regex, slice);
            PatternStep {
                regex: self.regex(format!("{up}_REGEX"), p, statics),
                pointer: &p.pointer,
                named_groups: p.regex.has_named_groups(),
            }
        });
        let iterator = node.iterator.as_ref().map(|p| {
            *list_items = match_kinds(&p.regex, slice);
            after = Kinds {
                list: true,
                ..Kinds::default()
            };
            PatternStep {
                regex: self.regex(format!("{up}_ITERATOR"), p, statics),
                pointer: &p.pointer,
                named_groups: false,
            }
        });
        let key_value = node.key_value.as_ref().map(|p| {
            after = Kinds {
                group_dict: true,
                ..Kinds::default()
            };
            PatternStep {
                regex: self.regex(format!("{up}_KEY_VALUE"), p, statics),
                pointer: &p.pointer,
                named_groups: false,
            }
        });
        *kinds = after;
        Stages {
            substitutions,
            slice,
            regex,
            iterator,
            key_value,
        }
    }

    fn array<'s>(
        &mut self,
        node: &'s Node,
        base: &str,
        kinds: Kinds,
        list_items: Kinds,
    ) -> (Ty, ValuePlan<'s>) {
        let mut item_input = Kinds::default();
        if kinds.list {
            item_input = item_input.union(list_items);
        }
        if kinds.json || !kinds.list {
            item_input = item_input.union(Kinds::JSON);
        }
        let item_base = if base == "response" {
            "response_item".to_owned()
        } else {
            singular(base)
        };
        match &node.items {
            Items::Each(item) => {
                let item = self.node(item, &item_base, item_input);
                let ty = Ty::Vec(Box::new(item.ty.clone()), item.nullable);
                (ty, ValuePlan::Array(ArrayPlan::Each(Box::new(item))))
            }
            Items::Prefix(nodes) => {
                let items = nodes
                    .iter()
                    .enumerate()
                    .map(|(i, n)| self.node(n, &format!("{item_base}_{i}"), item_input))
                    .collect();
                (
                    Ty::Vec(Box::new(Ty::Value), false),
                    ValuePlan::Array(ArrayPlan::Prefix(items)),
                )
            }
            Items::None => (
                Ty::Vec(Box::new(Ty::Value), false),
                ValuePlan::Array(ArrayPlan::Empty),
            ),
        }
    }

    fn object<'s>(&mut self, node: &'s Node, base: &str, kinds: Kinds) -> (Ty, ValuePlan<'s>) {
        let string_mode = kinds.text || kinds.json;
        let dict_mode = kinds.json || kinds.group_dict;
        let has_properties = node.properties.is_some();
        let arms = match (string_mode && has_properties, dict_mode) {
            (true, true) => ObjectArms::Both,
            (true, false) => ObjectArms::Text,
            // Text input without properties is an error, as is anything but a dict.
            (false, _) => ObjectArms::Dict,
        };
        let mut child_input = Kinds::default();
        if string_mode {
            child_input = child_input.union(Kinds {
                text: true,
                slice: kinds.borrowed_text(),
                ..Kinds::default()
            });
        }
        if kinds.json {
            child_input = child_input.union(Kinds::JSON);
        }
        if kinds.group_dict {
            child_input = child_input.union(Kinds {
                text: true,
                ..Kinds::default()
            });
        }
        let child_base = |name: &str| {
            if base == "response" {
                snake(name)
            } else {
                format!("{base}_{}", snake(name))
            }
        };

        let mut field_names = Namer::default();
        let mut properties = Vec::new();
        let mut dict_flag = false;
        for prop in node.properties.as_deref().unwrap_or_default() {
            if let Some(constant) = &prop.node.constant {
                let name = format!("{}_{}_CONST", upper(base), upper(&snake(&prop.name)));
                dict_flag |= constant.is_null();
                properties.push(PropertyPlan::Constant {
                    key: &prop.name,
                    name,
                    associated: upper(&snake(&prop.name)),
                    value: constant,
                    pointer: &prop.node.pointer,
                    dict_only: constant.is_null(),
                });
                continue;
            }
            let child = self.node(&prop.node, &child_base(&prop.name), child_input);
            let field = field_names.unique(&snake(&prop.name));
            let slot = format!("slot_{field}");
            let required = node.required.contains(&prop.name);
            let default = prop.node.default.as_ref().filter(|_| dict_mode);
            let typed = default.and_then(|d| typed_default(d, &child.ty));
            // A default the typed field cannot hold turns the field into JSON.
            let as_value = child.ty.is_value() || (default.is_some() && typed.is_none());
            let absent = match (default, typed) {
                (Some(_), Some(typed)) => Absent::Typed(typed),
                (Some(d), None) => Absent::Json(d.to_string()),
                _ => Absent::Missing,
            };
            let null_possible = dict_mode && child.nullable;
            let shape = match (as_value, required, null_possible) {
                (true, true, _) => FieldShape::RequiredValue,
                (true, false, _) => FieldShape::OptionalValue,
                (false, false, false) => FieldShape::Optional,
                (false, false, true) => FieldShape::OptionalNullable,
                (false, true, false) => FieldShape::Required,
                (false, true, true) => FieldShape::RequiredNullable,
            };
            properties.push(PropertyPlan::Field(Box::new(FieldPlan {
                key: &prop.name,
                field,
                slot,
                child,
                as_value,
                absent,
                shape,
            })));
        }

        // Keys beyond `properties`: passed through, parsed with a schema, or dropped.
        let keeps_extras = dict_mode && !matches!(node.additional, Additional::Deny);
        let extras = keeps_extras.then(|| {
            let field = field_names.unique("additional_properties");
            let value = match &node.additional {
                Additional::Schema(schema) if !schema.passes_through() => {
                    Some(Box::new(self.node(
                        schema,
                        &format!("{base}_value"),
                        Kinds::JSON.union(child_input),
                    )))
                }
                // `{}` or pass-through: the values are already what the reference returns.
                _ => None,
            };
            ExtrasPlan {
                field,
                moves_whole_map: properties.is_empty() && value.is_none(),
                value,
            }
        });

        let lifetime = properties.iter().any(|p| match p {
            PropertyPlan::Field(f) => !f.as_value && f.child.ty.has_lifetime(),
            PropertyPlan::Constant { .. } => false,
        });
        let struct_name = camel(base);
        let ty = Ty::Struct(Ident::new(&struct_name, Span::call_site()), lifetime);
        let plan = ObjectPlan {
            struct_name,
            lifetime,
            arms,
            properties,
            extras,
            dict_flag,
            required: &node.required,
        };
        // Free-form keys only (tool arguments): the object is a `JsonObject`, its text kept as
        // the model wrote it when it arrives as text (see `ValuePlan::JsonObject`).
        if plan.properties.is_empty()
            && plan.arms == ObjectArms::Dict
            && plan.extras.as_ref().is_some_and(|e| e.moves_whole_map)
        {
            return (Ty::JsonObject, ValuePlan::JsonObject);
        }
        (ty, ValuePlan::Object(Box::new(plan)))
    }
}

/// Whether a node with `parser` and `value` is a call under the wrap `{type: 'function',
/// function: @}` that can be read in place (see [`ParsePlan::wrapped_call`]): JSON, that exact
/// transform, and an object of exactly its two keys — `type` the constant `"function"` and a
/// stored `function` object (its own node with no pattern or parser, so the parsed call goes
/// straight to it), nothing required, nothing output only for dict input. Then the slow path
/// (parse, wrap, take `function` out of the wrap, nothing beyond it) is the function node on the
/// call's dict, which is what the fast path gives it.
fn reads_wrapped_call(parser: &Parser, value: &ValuePlan<'_>) -> bool {
    use chatparse_runtime::jmespath::Ast;
    let wraps = parser.transform.as_ref().is_some_and(|t| {
        matches!(t.expression.ast(), Ast::MultiSelectHash(pairs) if matches!(pairs.as_slice(),
            [a, b] if a.key == "type"
                && a.value == Ast::Literal(Value::String("function".into()))
                && b.key == "function"
                && b.value == Ast::Current))
    });
    let ValuePlan::Object(object) = value else {
        return false;
    };
    let shape = match object.properties.as_slice() {
        [PropertyPlan::Constant {
            key: "type",
            value,
            dict_only: false,
            ..
        }, PropertyPlan::Field(function)]
            if value.as_str() == Some("function") && function.key == "function" =>
        {
            Some(function)
        }
        _ => None,
    };
    let function = shape
        .filter(|f| !f.as_value)
        .is_some_and(|f| match &f.child.body {
            Body::Parse(p) => {
                p.stages.is_none()
                    && p.parser.is_none()
                    && matches!(&p.value, ValuePlan::Object(o) if o.arms != ObjectArms::Text)
            }
            Body::Constant(_) => false,
        });
    wraps
        && parser.kind == chatparse_runtime::schema::ParserKind::Json
        && function
        && object.required.is_empty()
        && !object.dict_flag
}

/// What one match of `regex` yields (`_parse_re_match`): a dict of strings for named groups,
/// otherwise the one group's text (null when the group need not take part).
fn match_kinds(regex: &chatparse_runtime::pyre::PyRegex, text_slice: bool) -> Kinds {
    if regex.has_named_groups() {
        Kinds {
            group_dict: true,
            ..Kinds::default()
        }
    } else {
        Kinds {
            text: true,
            slice: text_slice,
            null: !regex.group_always_participates(1),
            ..Kinds::default()
        }
    }
}

/// A `default` as a value of the field's type, when that type can hold it exactly.
fn typed_default(default: &Value, ty: &Ty) -> Option<TypedDefault> {
    let float_text = |n: &chatparse_runtime::value::Number| n.is_f64();
    match (ty, default) {
        (Ty::Str, Value::String(s)) => Some(TypedDefault::Str(s.clone())),
        (Ty::Cow, Value::String(s)) => Some(TypedDefault::Cow(s.clone())),
        (Ty::Bool, Value::Bool(b)) => Some(TypedDefault::Bool(*b)),
        (Ty::F64, Value::Number(n)) if float_text(n) => n.as_f64().map(TypedDefault::F64),
        (Ty::Int, Value::Number(n)) if !float_text(n) => n.as_i64().map(TypedDefault::Int),
        (Ty::Int, Value::Bool(b)) => Some(TypedDefault::IntBool(*b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(text: &str) -> Schema {
        Schema::from_json_str(text).unwrap()
    }

    fn shipped(name: &str) -> Schema {
        let path = format!("{}/../schemas/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        Schema::from_json_str(&text).unwrap()
    }

    fn object<'p>(plan: &'p NodePlan<'_>) -> &'p ObjectPlan<'p> {
        match &plan.body {
            Body::Parse(p) => match &p.value {
                ValuePlan::Object(o) => o,
                other => panic!("not an object: {other:?}"),
            },
            Body::Constant(_) => panic!("a constant"),
        }
    }

    fn parse<'p>(plan: &'p NodePlan<'_>) -> &'p ParsePlan<'p> {
        match &plan.body {
            Body::Parse(p) => p,
            Body::Constant(_) => panic!("a constant"),
        }
    }

    fn field<'p>(object: &'p ObjectPlan<'_>, key: &str) -> &'p FieldPlan<'p> {
        object.fields().find(|f| f.key == key).unwrap()
    }

    #[test]
    fn a_regex_field_of_the_root_borrows_and_the_root_has_only_a_text_arm() {
        let s = schema(
            r#"{"type": "object", "properties": {
                "content": {"type": "string", "x-regex": "<a>(.*?)</a>"}}}"#,
        );
        let plan = ModulePlan::new(&s, false, &quote::quote!(::rt));
        assert_eq!(plan.root.func, "parse_response");
        assert!(!plan.root.nullable);
        let root = object(&plan.root);
        assert_eq!(root.struct_name, "Response");
        assert_eq!(root.arms, ObjectArms::Text);
        assert!(root.extras.is_none(), "text input keeps no extra keys");
        assert!(root.lifetime);
        let content = field(root, "content");
        assert!(matches!(content.child.ty, Ty::Str));
        assert!(
            content.child.nullable,
            "an x-regex that does not match is None"
        );
        assert_eq!(content.shape, FieldShape::Optional);
        assert_eq!(content.absent, Absent::Missing);
        let stages = parse(&content.child).stages.as_ref().unwrap();
        assert!(stages.slice);
        assert_eq!(stages.regex.as_ref().unwrap().regex, "CONTENT_REGEX");
        assert_eq!(
            plan.uses,
            Uses {
                slot: true,
                serialize: true,
                lazy: true,
                py_regex: true,
                ..Uses::default()
            }
        );
    }

    #[test]
    fn parsed_json_gives_dict_arms_option_shapes_and_owned_strings() {
        let s = schema(
            r#"{"type": "object", "x-parser": "json", "required": ["a", "b"],
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "integer"},
                    "c": {"type": "boolean", "default": true},
                    "d": {"type": "string", "default": 3},
                    "e": {"const": null}},
                "additionalProperties": false}"#,
        );
        let plan = ModulePlan::new(&s, false, &quote::quote!(::rt));
        let root = object(&plan.root);
        // A JSON string with properties reaches the text arm too.
        assert_eq!(root.arms, ObjectArms::Both);
        assert!(
            root.lifetime,
            "a `Cow<'a, str>` field borrows when the text arm is taken"
        );
        let a = field(root, "a");
        assert!(matches!(a.child.ty, Ty::Cow));
        assert_eq!(a.shape, FieldShape::RequiredNullable);
        assert_eq!(field(root, "b").shape, FieldShape::RequiredNullable);
        let c = field(root, "c");
        assert_eq!(c.absent, Absent::Typed(TypedDefault::Bool(true)));
        assert_eq!(c.shape, FieldShape::OptionalNullable);
        let d = field(root, "d");
        assert!(
            d.as_value && d.to_json(),
            "a default the type cannot hold makes JSON"
        );
        assert_eq!(d.absent, Absent::Json("3".into()));
        assert_eq!(d.shape, FieldShape::OptionalValue);
        assert!(root.dict_flag, "const null is output for dict input only");
        assert!(root.extras.is_none());
        assert!(plan.uses.object_input && !plan.uses.map && !plan.uses.cow);
    }

    #[test]
    fn an_object_without_properties_after_a_parser_has_only_a_dict_arm() {
        let s = schema(
            r#"{"type": "object", "properties": {
                "args": {"type": "object", "x-regex": "A(.*)", "x-parser": "json"}}}"#,
        );
        let plan = ModulePlan::new(&s, false, &quote::quote!(::rt));
        let args = &field(object(&plan.root), "args").child;
        assert!(
            matches!(args.ty, Ty::JsonObject),
            "free-form keys: a JsonObject"
        );
        assert!(matches!(parse(args).value, ValuePlan::JsonObject));
        assert!(parse(args).parser.is_some());
        assert!(plan.uses.json_object && !plan.uses.map && !plan.uses.object_input);
    }

    #[test]
    fn only_objects_of_free_form_keys_are_json_objects() {
        for (args, json_object) in [
            (r#"{"type": "object", "x-parser": "json"}"#, true),
            (
                r#"{"type": "object", "x-parser": "json", "additionalProperties": {}}"#,
                true,
            ),
            (
                r#"{"type": "object", "x-parser": "json", "additionalProperties": true}"#,
                true,
            ),
            // Keys that are checked or parsed, named properties, no keys kept: a struct.
            (
                r#"{"type": "object", "x-parser": "json", "additionalProperties": {"type": "string"}}"#,
                false,
            ),
            (
                r#"{"type": "object", "x-parser": "json", "additionalProperties": false}"#,
                false,
            ),
            (
                r#"{"type": "object", "x-parser": "json", "properties": {"a": {}}}"#,
                false,
            ),
            (
                r#"{"type": "object", "x-parser": "json", "properties": {}}"#,
                false,
            ),
        ] {
            let s = schema(&format!(
                r#"{{"type": "object", "properties": {{"args": {args}}}}}"#
            ));
            let plan = ModulePlan::new(&s, false, &quote::quote!(::rt));
            let child = &field(object(&plan.root), "args").child;
            assert_eq!(matches!(child.ty, Ty::JsonObject), json_object, "{args}");
        }
    }

    #[test]
    fn a_pattern_used_twice_is_one_static_and_substitutions_make_cows() {
        let s = schema(
            r#"{"type": "object", "properties": {
                "a": {"type": "string", "x-regex": "<a>(.*)"},
                "b": {"type": "string", "x-regex": "<a>(.*)",
                      "x-regex-substitutions": [["x", "y"]]}}}"#,
        );
        let plan = ModulePlan::new(&s, false, &quote::quote!(::rt));
        let root = object(&plan.root);
        let a = &field(root, "a").child;
        let b = &field(root, "b").child;
        assert!(matches!(&a.statics[..], [Static::Regex { name, .. }] if name == "A_REGEX"));
        let names: Vec<&str> = b
            .statics
            .iter()
            .map(|s| match s {
                Static::Regex { name, .. } | Static::Replacement { name, .. } => name.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(names, ["B_SUBSTITUTION_0", "B_SUBSTITUTION_0_REPLACEMENT"]);
        let stages = parse(b).stages.as_ref().unwrap();
        assert!(!stages.slice);
        assert_eq!(stages.regex.as_ref().unwrap().regex, "A_REGEX");
        assert!(matches!(b.ty, Ty::Cow));
        assert!(plan.uses.cow && plan.uses.replacement);
    }

    #[test]
    fn gpt_oss() {
        let s = shipped("gpt_oss");
        let plan = ModulePlan::new(&s, false, &quote::quote!(::rt));
        let root = object(&plan.root);
        assert_eq!(root.arms, ObjectArms::Text);
        assert!(matches!(
            &root.properties[0],
            PropertyPlan::Constant {
                key: "role",
                dict_only: false,
                ..
            }
        ));
        assert!(matches!(field(root, "content").child.ty, Ty::Str));
        let calls = &field(root, "tool_calls").child;
        let Body::Parse(p) = &calls.body else {
            panic!()
        };
        let ValuePlan::Array(ArrayPlan::Each(call)) = &p.value else {
            panic!()
        };
        let call = object(call);
        assert_eq!(call.struct_name, "ToolCall");
        let function = object(&field(call, "function").child);
        assert_eq!(function.struct_name, "ToolCallFunction");
        assert_eq!(function.arms, ObjectArms::Text);
        let arguments = &field(function, "arguments").child;
        assert!(
            matches!(arguments.ty, Ty::JsonObject),
            "JSON without properties"
        );
        assert!(!plan.uses.cow && !plan.uses.replacement && !plan.uses.expression);
        assert!(
            !plan.uses.object_input,
            "no object of gpt_oss takes both text and a dict"
        );
    }

    #[test]
    fn every_shipped_schema_plans() {
        let dir = format!("{}/../schemas", env!("CARGO_MANIFEST_DIR"));
        let mut count = 0;
        let mut wrapped = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let s = Schema::from_json_str(&text).unwrap();
            let plan = ModulePlan::new(&s, true, &quote::quote!(::rt));
            assert!(plan.uses.lazy, "{}", path.display());
            assert_eq!(plan.root.func, "parse_response");
            count += 1;
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let mut wraps = false;
            plan.root.visit(&mut |n| {
                wraps |= matches!(&n.body, Body::Parse(p) if p.wrapped_call);
            });
            if wraps {
                wrapped.push(name);
            }
        }
        assert_eq!(count, 28);
        wrapped.sort();
        // The four families whose calls are `{type: 'function', function: @}` around a JSON
        // object with `name` and `arguments` (the list-wrapping `[@][].{…}` families and
        // Llama 3's `merge` are not that shape).
        assert_eq!(wrapped, ["ernie4_5", "hermes", "qwen3", "smollm3"]);
    }
}

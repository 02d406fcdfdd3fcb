//! A tool call read while the model is still writing it: its name as soon as the name is
//! complete, then its arguments' JSON text as it arrives, so the OpenAI adapter can send
//! `function.name` and `function.arguments` fragments before the call closes.
//!
//! Three call shapes are read this way, recognised from the schema of the calls' items:
//!
//! * **JSON object** (`hermes`, `qwen3`, `smollm3`, `ernie4_5`): the call is
//!   `{"name": "…", "arguments": {…}}`, items with `x-parser: json`; `llama3_json`'s
//!   `{"name": "…", "parameters": {…}}` too, the key being the one the items read the arguments
//!   from whatever other arguments key follows it. The name is the call's once its string has
//!   closed, so the start goes out then; where an empty object under the key gives way to
//!   another key (Llama 3's `parameters || arguments`), nothing of the arguments goes out until
//!   a key is written in them. The items of a JSON list
//!   of calls (`firefunction_v2`, `granite3_3`, `nemotron_nano_v2`), which the stream profile
//!   sends one region per item, are read the same way, unless the template writes each call's
//!   id after its arguments (`apriel`, `mistral_nemo`, `mistral_small_3_1`: those calls go out
//!   whole when their object closes, with the model's id); where substitutions join the list's
//!   blocks (`phi4_mini`), only the name is read early.
//! * **Header, then JSON** (`kimi_k2`, `functionary_v3_1`, `deepseek_v3_1`, `deepseek_r1`,
//!   `gpt_oss`, `functionary_v3_2`'s `>>>NAME\n{…}`, and `mistral_small`'s separated calls): a
//!   header
//!   names the function (`<function=NAME>`, `functions.NAME:0<|tool_call_argument_begin|>`), the
//!   arguments are the JSON object after it, items whose `function` has an `x-regex` (or whose
//!   `name` and `arguments` each have one: gpt_oss) and whose `arguments` have `x-parser: json`.
//! * **XML parameters** (`qwen3_coder`, `qwen3_5`, `seed_oss`, `glm4_5`, `minimax_m2`,
//!   `deepseek_v3_2`, whose one substitution rewrites each parameter on its own): a tag
//!   names the function, each parameter is a key-value match (`<parameter=city>Paris</parameter>`),
//!   items whose `function` has an `x-regex` with `name` and `arguments` groups and whose
//!   `arguments` are read by `x-regex-key-value`. The arguments' JSON text is not written by the
//!   model: it is built (compact JSON, as the final message has it), one parameter at a time as
//!   each closes, by the schema's own conversion of the parameters that closed since the last
//!   ones (entry by entry: [`Sketch::append_parameters`] says why that is the conversion of them
//!   all, and why it keeps a long call linear).
//!
//! A pythonic call list's calls (`lfm2`), which the stream profile sends while open up to a `)`
//! that may end the call, are read like the XML parameters: the start goes out once `NAME(` is
//! written, then the arguments' compact JSON grows one parameter at a time, as the `, KEY=`
//! after each arrives ([`Sketch::scan_pythonic`]; the shape comes from the profile's
//! `"pythonic": true`).
//!
//! Gemma's dialect after a header (`call:NAME{location:<|"|>Paris<|"|>,days:3}`) is read like the
//! XML parameters: the arguments' compact JSON is built one top-level parameter at a time, as the
//! `,` after each arrives ([`super::dialect`]). Where the arguments are none of these
//! (parameters that other substitutions rewrite before they are read), the name is read the
//! same way and only the call's start goes out early; its arguments go out when it closes.
//!
//! Why this cannot disagree with the final message: the sketch only ever reads text that is
//! already final (the raw text of the open call), and it gives up (the call is then sent whole
//! when it closes) whenever the text is not in the simple form whose final value it can
//! predict: a JSON object whose first key is `name` (a string without brackets) and whose second
//! is `arguments` (an object; otherwise only the start goes out early); a header before the first `{` that the items' schema reads as a
//! call when `{}` follows it (brackets included: Mistral's `f[CALL_ID]a1b2c3d4e[ARGS]`, whose id
//! becomes the call's); a tag header that the items' schema reads as a call
//! with no parameters once its open tags are closed, and parameters whose conversion adds one key
//! each. The adapter still compares what it sent with the
//! closed call and fails the stream if they differ ([`ParseErrorKind::StreamedCallChanged`]
//! (crate::ParseErrorKind)): a call object that writes `name`, `arguments` or `id` again after its
//! arguments.

use crate::py;
use crate::schema::interp::{after_regex, parse_node, Walk};
use crate::schema::stream::separated_shape;
use crate::schema::{Items, Node, ParserKind, Schema};
use crate::stream::brackets::Brackets;
use crate::stream::region_shape;
use crate::stream::spaces::SpaceRuns;
use crate::support::Content;
use crate::value::Value;

use super::built::BuiltArguments;
use super::dialect::{is_dialect_arguments, DialectArguments};
use super::open_value::{OpenValue, StringValues, ValueReader};
use super::{call_parts, field_kind, FieldKind};

/// How the calls of a spec are written, as far as a sketch needs to know.
#[derive(Debug, Clone)]
pub(crate) struct CallShape {
    schema: Schema,
    field: String,
    /// The iterator's opener; the item's text starts after it unless `capture_from_opener`.
    opener_len: usize,
    /// Separated calls (Mistral's `(?:\[TOOL_CALLS\])?(.+?)(?:\[TOOL_CALLS\]|$)`): the optional
    /// literal a call's raw text starts with, before its item's text.
    separator: Option<String>,
    kind: ShapeKind,
    /// Whether the arguments can be read before the call closes: JSON the model wrote, or XML
    /// parameters or Gemma's dialect converted one by one. Otherwise (parameters rewritten by
    /// substitutions first) only the call's start goes out early.
    streams_arguments: bool,
    /// XML shape: the literal every parameter match ends with (`</parameter>`), when the
    /// key-value pattern has one; a parameter can only complete where it arrives.
    parameter_end: String,
    /// XML shape: how to read a string value while it is written, when the parameters'
    /// conversion allows it ([`super::open_value`]).
    string_values: Option<StringValues>,
    /// Header shape: the arguments are Gemma's dialect, built one parameter at a time
    /// ([`super::dialect`]).
    dialect: bool,
    /// JSON shape: the key the arguments are written under, and whether an empty object there
    /// waits for the call to close (see [`JsonArguments`]).
    json_arguments: JsonArguments,
    /// JSON list shape: the keys of a call object.
    list_keys: ListKeys,
}

/// JSON shape: how the items read the arguments of `{"name": …, KEY: {…}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct JsonArguments {
    /// `arguments` (Hermes, Qwen, the JSON lists), or `parameters` (Llama 3, whose transform
    /// reads `parameters || arguments || {}`).
    key: &'static str,
    /// Whether an empty object under `key` lets a later key give the arguments (JMESPath's `||`
    /// takes `{}` for false): the arguments' text then waits for a key inside the object, and
    /// an empty object waits for the call to close.
    empty_waits: bool,
}

impl Default for JsonArguments {
    fn default() -> Self {
        JsonArguments {
            key: "arguments",
            empty_waits: false,
        }
    }
}

/// The three shapes (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShapeKind {
    JsonObject,
    HeaderJson,
    XmlParameters,
    /// A pythonic call list's calls (`lfm2`), which the stream profile sends from the end of
    /// the last call (`, `, or the list's opener) up to a `)` that may end the call: the name,
    /// then the parameters one at a time.
    Pythonic,
    /// A JSON list of call objects that is one region (`cohere_command_r7b`'s action list,
    /// `[{"tool_call_id": "0", "tool_name": "f", "parameters": {…}}, …]`): the calls are read one
    /// after another, each like a JSON object call whose keys are [`ListKeys`].
    JsonList,
}

/// The keys of a [`ShapeKind::JsonList`] call object, in the order the template writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ListKeys {
    /// A key for the call's id before its name (`tool_call_id`), if the template writes one.
    id: Option<&'static str>,
    name: &'static str,
    arguments: &'static str,
}

impl Default for ListKeys {
    fn default() -> Self {
        ListKeys {
            id: None,
            name: "name",
            arguments: "arguments",
        }
    }
}

impl CallShape {
    /// The shape of `schema`'s tool calls, if they are one of the two the sketch reads.
    pub(crate) fn of(schema: &Schema) -> Option<Self> {
        let root = schema.root();
        let property = root
            .properties
            .iter()
            .flatten()
            .find(|p| field_kind(&p.name) == FieldKind::ToolCalls)?;
        let node = &property.node;
        let Some(iterator) = node.iterator.as_ref() else {
            let list_keys = json_list_call(node)?;
            return Some(CallShape {
                schema: schema.clone(),
                field: property.name.clone(),
                opener_len: 0,
                separator: None,
                kind: ShapeKind::JsonList,
                streams_arguments: true,
                parameter_end: String::new(),
                string_values: None,
                dialect: false,
                json_arguments: JsonArguments::default(),
                list_keys,
            });
        };
        let Items::Each(items) = &node.items else {
            return None;
        };
        let dialect = items
            .property("function")
            .and_then(|f| f.property("arguments"))
            .is_some_and(is_dialect_arguments);
        let mut json_arguments = JsonArguments::default();
        let (kind, streams_arguments) = if let Some(json) = json_object_call(items) {
            json_arguments = json;
            (ShapeKind::JsonObject, true)
        } else if let Some(streams) = is_header_call(items) {
            (ShapeKind::HeaderJson, streams || dialect)
        } else if let Some(streams) = is_xml_parameters_call(items) {
            (ShapeKind::XmlParameters, streams)
        } else {
            return None;
        };
        // Where an item starts in its region's raw text. XML calls are captured from their opener
        // in every shipped spec; an iterator whose shape the stream cannot read (several openers)
        // has its calls sent whole anyway, so `0` is only ever used where it is right.
        let mut separator = None;
        let opener_len = match region_shape(&iterator.regex) {
            Ok(region) if !region.capture_from_opener => region.opener.len(),
            Ok(_) => 0,
            Err(_) if kind == ShapeKind::XmlParameters => 0,
            Err(_) => {
                separator = separated_shape(&iterator.regex).ok()?.separator;
                0
            }
        };
        let parameters = items
            .property("function")
            .and_then(|f| f.property("arguments"));
        let parameter_end = parameters
            .and_then(|a| a.key_value.as_ref())
            .and_then(|p| chatparse_pyre::required_suffix(&p.regex.syntax_tree().root))
            .unwrap_or_default();
        let string_values = parameters
            .filter(|_| kind == ShapeKind::XmlParameters && streams_arguments)
            .and_then(|a| StringValues::of(a, &parameter_end));
        Some(CallShape {
            schema: schema.clone(),
            field: property.name.clone(),
            opener_len,
            separator,
            kind,
            streams_arguments,
            parameter_end,
            string_values,
            dialect: dialect && kind == ShapeKind::HeaderJson,
            json_arguments,
            list_keys: ListKeys::default(),
        })
    }

    /// The shape of `spec`'s calls: for an x-regex schema whose stream profile sends a JSON
    /// list's items one by one ([`ListProfile`](crate::schema::stream::ListProfile)), the JSON
    /// object shape when the items carry no id of their own; otherwise [`CallShape::of`] its
    /// schema.
    pub(crate) fn of_spec(spec: &crate::Spec) -> Option<Self> {
        let schema = spec.schema()?;
        let calls = spec.stream_profile().and_then(|p| p.tool_calls.as_ref());
        if let Some(calls) = calls.filter(|c| c.pythonic) {
            return Some(CallShape {
                schema: schema.clone(),
                field: calls.field.clone(),
                opener_len: 0,
                separator: None,
                kind: ShapeKind::Pythonic,
                streams_arguments: pythonic_parameters(schema, &calls.field),
                parameter_end: String::new(),
                string_values: None,
                dialect: false,
                json_arguments: JsonArguments::default(),
                list_keys: ListKeys::default(),
            });
        }
        let Some((field, list)) = calls.and_then(|c| Some((&c.field, c.list.as_ref()?))) else {
            return Self::of(schema);
        };
        let node = schema.root().property(field)?;
        // Where substitutions join the list's blocks (phi4_mini), an item's raw text may not be
        // what they make of it: a string holding the blocks' closer and opener becomes `,`. The
        // stream sends an open item's text only up to a closer, so its name, a string closed
        // before any, is the call's; its arguments go out when it closes. Other substitutions:
        // the calls go out whole.
        let joined = !node.substitutions.is_empty();
        if list.ids_after_arguments || (joined && list.blocks.is_none()) {
            return None;
        }
        // The list's items read as calls, and an `id` the model writes does not become the
        // call's id (where the schema makes it one, Mistral's, the start must wait for it; an
        // `id` passed through into the function object is an extra key, as in Hermes' calls).
        let probe = r#"[{"name": "probe_name", "arguments": {"probe": [1]}, "id": "probe_id"}]"#;
        let parsed = after_regex(node, Content::borrowed(probe), &mut Walk::strict()).ok()?;
        let first = parsed.as_array()?.first()?;
        let call = call_parts(first)?;
        let reads = call.name == "probe_name"
            && first.get("id").is_none()
            && py::identical(&call.arguments, &crate::json!({"probe": [1]}));
        reads.then(|| CallShape {
            schema: schema.clone(),
            field: field.clone(),
            opener_len: 0,
            separator: None,
            kind: ShapeKind::JsonObject,
            streams_arguments: !joined,
            parameter_end: String::new(),
            string_values: None,
            dialect: false,
            json_arguments: JsonArguments::default(),
            list_keys: ListKeys::default(),
        })
    }

    /// Whether calls are `{"name": …, "arguments": …}` JSON objects (not a header then JSON).
    pub(crate) fn is_json_object(&self) -> bool {
        self.kind == ShapeKind::JsonObject
    }

    /// Whether calls are objects of one JSON list in one region (Command R7B's action list),
    /// whose id the header writes and a call without `parameters` does not carry to the message.
    pub(crate) fn is_json_list(&self) -> bool {
        self.kind == ShapeKind::JsonList
    }

    /// Whether the arguments' text is built (XML parameters) rather than the model's own JSON:
    /// it is then the same with or without normalized arguments.
    pub(crate) fn builds_arguments(&self) -> bool {
        (matches!(self.kind, ShapeKind::XmlParameters | ShapeKind::Pythonic)
            && self.streams_arguments)
            || self.dialect
    }

    fn items(&self) -> Option<&Node> {
        match &self.schema.root().property(&self.field)?.items {
            Items::Each(items) => Some(items),
            _ => None,
        }
    }

    /// The XML shape's arguments node (the one with `x-regex-key-value`).
    fn parameters(&self) -> Option<&Node> {
        self.items()?.property("function")?.property("arguments")
    }
}

/// Items that parse `{"name": N, KEY: A}` JSON into a call named N with arguments A, whatever
/// another arguments key after it says (as far as A is not empty): the key, `arguments` if
/// that is one, else `parameters`.
fn json_object_call(items: &Node) -> Option<JsonArguments> {
    if items.has_regex() || !matches!(&items.parser, Some(p) if p.kind == ParserKind::Json) {
        return None;
    }
    // The call the items read from `probe`, as (name, id, arguments); `None` if it is no call.
    let read = |probe: &str| {
        let value = parse_node(items, Content::borrowed(probe), &mut Walk::strict()).ok()?;
        let call = call_parts(&value)?;
        Some((call.name, call.id, call.arguments))
    };
    let keys = ["arguments", "parameters"];
    keys.iter().enumerate().find_map(|(i, &key)| {
        let other = keys[1 - i];
        let alone = format!(r#"{{"name": "probe_name", "{key}": {{"probe": [1]}}}}"#);
        let (name, id, arguments) = read(&alone)?;
        let reads = name == "probe_name"
            && id.is_none()
            && py::identical(&arguments, &crate::json!({"probe": [1]}));
        // Another arguments key after this one must not take its place (a call that does not
        // read at all fails, which contradicts nothing).
        let then = format!(
            r#"{{"name": "probe_name", "{key}": {{"probe": [1]}}, "{other}": {{"other": [2]}}}}"#
        );
        let kept =
            read(&then).is_none_or(|(_, _, a)| py::identical(&a, &crate::json!({"probe": [1]})));
        let empty =
            format!(r#"{{"name": "probe_name", "{key}": {{}}, "{other}": {{"other": [2]}}}}"#);
        let empty_waits =
            read(&empty).is_some_and(|(_, _, a)| !py::identical(&a, &crate::json!({})));
        (reads && kept).then_some(JsonArguments { key, empty_waits })
    })
}

/// Whether a pythonic call's parameters convert one at a time: the calls' `function` reads its
/// arguments with an `x-regex-key-value` and nothing else (each value is then converted on its
/// own, see [`Sketch::scan_pythonic`]).
fn pythonic_parameters(schema: &Schema, field: &str) -> bool {
    let arguments = match &schema.root().property(field).map(|n| &n.items) {
        Some(Items::Each(items)) => items
            .property("function")
            .and_then(|f| f.property("arguments")),
        _ => None,
    };
    arguments.is_some_and(|a| {
        a.key_value.is_some()
            && converts_by_entry(a)
            && a.regex.is_none()
            && a.iterator.is_none()
            && a.parser.is_none()
            && a.substitutions.is_empty()
    })
}

/// A calls field whose text is one JSON list of call objects, read by the field's own
/// `x-parser: json` and transform (`cohere_command_r7b`): the keys its calls are written with,
/// found by probing the field with two calls in each layout the templates use. The probe must
/// read as exactly those two calls (names, arguments, and no id other than the one written), and
/// another arguments key after the arguments, or an empty object under them, must not change
/// what the call's arguments are.
fn json_list_call(node: &Node) -> Option<ListKeys> {
    let plain = node.substitutions.is_empty()
        && node.key_value.is_none()
        && matches!(&node.parser, Some(p) if p.kind == ParserKind::Json && !p.allow_non_json)
        && matches!(node.items, Items::Each(_));
    if !plain {
        return None;
    }
    let read = |probe: &str| -> Option<Vec<super::CallParts>> {
        let value = after_regex(node, Content::borrowed(probe), &mut Walk::strict()).ok()?;
        value.as_array()?.iter().map(call_parts).collect()
    };
    let layouts = [
        (Some("tool_call_id"), "tool_name", "parameters"),
        (None, "tool_name", "parameters"),
        (None, "name", "arguments"),
    ];
    layouts.into_iter().find_map(|(id, name, arguments)| {
        let call = |n: &str, a: &str, rest: &str| match id {
            Some(id) => {
                format!(r#"{{"{id}": "{n}_id", "{name}": "{n}", "{arguments}": {a}{rest}}}"#)
            }
            None => format!(r#"{{"{name}": "{n}", "{arguments}": {a}{rest}}}"#),
        };
        let other = if arguments == "arguments" {
            "parameters"
        } else {
            "arguments"
        };
        let two = format!(
            "[{}, {}]",
            call("probe_one", r#"{"probe": [1]}"#, ""),
            call("probe_two", r#"{"two": 2}"#, "")
        );
        let calls = read(&two)?;
        let reads = calls.len() == 2
            && calls.iter().zip(["probe_one", "probe_two"]).all(|(c, n)| {
                c.name == n
                    && c.id
                        .as_deref()
                        .is_none_or(|i| id.is_some() && i == format!("{n}_id"))
            })
            && py::identical(&calls[0].arguments, &crate::json!({"probe": [1]}))
            && py::identical(&calls[1].arguments, &crate::json!({"two": 2}));
        let then = format!(
            "[{}]",
            call(
                "probe_one",
                r#"{"probe": [1]}"#,
                &format!(r#", "{other}": {{"other": [2]}}"#)
            )
        );
        let kept = read(&then).is_none_or(|c| {
            c.len() == 1 && py::identical(&c[0].arguments, &crate::json!({"probe": [1]}))
        });
        let empty = format!(
            "[{}]",
            call(
                "probe_one",
                "{}",
                &format!(r#", "{other}": {{"other": [2]}}"#)
            )
        );
        let empty_kept = read(&empty)
            .is_none_or(|c| c.len() == 1 && py::identical(&c[0].arguments, &crate::json!({})));
        (reads && kept && empty_kept).then_some(ListKeys {
            id,
            name,
            arguments,
        })
    })
}

/// Items whose `function` reads a header and `{…}` arguments with a regex: `Some(true)` when the
/// arguments are the model's JSON, `Some(false)` when something else reads them (Gemma's
/// dialect).
fn is_header_call(items: &Node) -> Option<bool> {
    if items.has_regex() || items.parser.is_some() {
        return None;
    }
    let function = items.property("function")?;
    let arguments = function.property("arguments")?;
    // The function's regex splits the call into name and arguments (kimi_k2's header), or the
    // name and the arguments each find their own part of the call (gpt_oss's `to=functions.NAME`
    // and `<|message|>{…}`).
    let split = match (&function.regex, function.property("name")) {
        (Some(_), _) => arguments.regex.is_none(),
        (None, Some(name)) => name.regex.is_some() && arguments.regex.is_some(),
        (None, None) => false,
    };
    let read = split
        && function.parser.is_none()
        && function.substitutions.is_empty()
        && arguments.iterator.is_none()
        && arguments.key_value.is_none();
    read.then(|| {
        arguments.substitutions.is_empty()
            && matches!(&arguments.parser, Some(p) if p.kind == ParserKind::Json && p.transform.is_none())
    })
}

/// Items whose `function` reads a name and `x-regex-key-value` parameters with its `x-regex`:
/// `Some(true)` when each parameter converts on its own (also after deepseek_v3_2's rewrite of
/// string values, [`DSML_STRING_PARAMETER`]), `Some(false)` when other substitutions rewrite the
/// parameters' text first, so only the name is read early.
fn is_xml_parameters_call(items: &Node) -> Option<bool> {
    if items.has_regex() || items.parser.is_some() {
        return None;
    }
    let function = items.property("function")?;
    let arguments = function.property("arguments")?;
    let regex = &function.regex.as_ref()?.regex;
    let read = regex.group_index("name").is_some()
        && regex.group_index("arguments").is_some()
        && function.parser.is_none()
        && function.iterator.is_none()
        && function.key_value.is_none()
        && function.substitutions.is_empty()
        && arguments.key_value.is_some()
        && converts_by_entry(arguments)
        && arguments.regex.is_none()
        && arguments.iterator.is_none()
        && arguments.parser.is_none();
    let local = arguments.substitutions.iter().all(|s| {
        s.pattern.regex.python_pattern() == DSML_STRING_PARAMETER
            && s.replacement_source == DSML_STRING_REPLACEMENT
    });
    read.then_some(local)
}

/// Whether an object node converts each entry of its input on its own, so that the parameters
/// can be converted a few at a time ([`Sketch::append_parameters`]): no `properties` (which
/// reorder, add constants and defaults) and no `required`.
fn converts_by_entry(arguments: &Node) -> bool {
    arguments.properties.as_deref().is_none_or(<[_]>::is_empty) && arguments.required.is_empty()
}

/// deepseek_v3_2's one rewrite of its parameters: a `string="true"` value without quotes,
/// backslashes or control characters is quoted, so the JSON-or-text conversion reads it as a
/// string. Why it rewrites each parameter on its own, so that the parameters so far convert to a
/// prefix of the final arguments: a match starts at a parameter's tag and runs to the first
/// `"` after `name="`, then (`string="true"` holds no `>`) to the tag's first `>`, which is where
/// the key-value pattern's `"[^>]*>` ends the tag too; its value then ends at the first
/// `</｜DSML｜parameter>` (nothing follows the lazy `*?` but that literal), as the key-value
/// pattern's `.*?` does. So every match is one whole key-value match, of text the parameter's
/// closing tag has already ended — or, when a broken closing tag (`</｜DSML｜ parameter>`) let a
/// value swallow the next parameter's tag, a match starting at that tag inside the value and
/// ending at the value's own closing tag: still text that tag has ended, but the open value's
/// characters from that tag on are not final (`open_value`: they wait for the closing tag).
const DSML_STRING_PARAMETER: &str = r#"(<｜DSML｜parameter\s+name="[^"]*")\s+string="true"\s*>([^"\\\x00-\x1f]*?)</｜DSML｜parameter>"#;
const DSML_STRING_REPLACEMENT: &str = r#"\1>"\2"</｜DSML｜parameter>"#;

/// Where the sketch of one call stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Reading the JSON object's keys (JSON shape), waiting for the arguments' `{` (header shape)
    /// or for the end of the function's tag (XML shape); `at` is where reading resumes in the
    /// call's raw text.
    Head { at: usize },
    /// In the arguments: they start at `start`, and `at` is how far they were scanned.
    Arguments { start: usize, at: usize },
    /// The arguments ended at `end` (exclusive).
    Done { start: usize, end: usize },
    /// JSON shape: the name is known, the arguments are not written as the sketch reads them
    /// (another key next, arguments that are no object): they go out when the call closes.
    Named,
    /// The call is not in a form the sketch can predict: it is sent when it closes.
    GaveUp,
}

/// What earlier reads of a call's head found that stays true as its raw text grows, so that a
/// head the model fills with white space (or a long open name) costs each chunk its own text:
/// the head is read again from its start on every chunk until it is decided, and without this
/// each read went over all of that white space again (time quadratic in its length).
#[derive(Debug, Clone, Default)]
struct HeadMemo {
    /// Long runs of white space found, `(start, end)`: JSON white space (`json`) and Python's
    /// (`py`, the pythonic head). A run that ended where the text did is extended next time.
    json: SpaceRuns,
    py: SpaceRuns,
    /// An open string whose `"` is at `.0`, read up to `.1` without a `"` and plain.
    string: Option<(usize, usize)>,
    /// Header and pythonic shapes: where the search for the arguments' `{` (the call's `(`)
    /// resumes.
    search_from: usize,
}

/// JSON's white space.
fn json_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// One call being read (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Sketch {
    stage: Stage,
    /// What the reads of the head found (see [`HeadMemo`]).
    head: HeadMemo,
    /// The function's name, once complete, and the model's id if the header carries one.
    name: Option<(String, Option<String>)>,
    /// The JSON scan of the arguments.
    brackets: Brackets,
    /// XML and pythonic shapes: the arguments' JSON text known so far: the whole parameters',
    /// then, for XML, as much of the open parameter's string value as is final; XML: the open
    /// parameter's value.
    built: BuiltArguments,
    value: OpenValue,
    /// XML shape: how much of the raw text the last parameter search saw, and whether it found
    /// a match that ends where the text did (complete once anything follows it). Pythonic
    /// shape: where the scan for the next `, KEY=` boundary resumes.
    searched: usize,
    match_at_end: bool,
    /// Dialect arguments: their scan and the JSON text built.
    dialect: DialectArguments,
    /// JSON list shape: the call is not the list's first, its text starts after the `,`.
    in_list: bool,
}

/// JSON list shape: what follows a call whose arguments have closed ([`Sketch::next_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NextCall {
    /// The next call's text starts here (after the call's `}` and the list's `,`).
    At(usize),
    /// The text does not tell yet.
    Wait,
    /// No call follows that a sketch reads: the list ended, or something else came (the rest
    /// goes out when the region closes).
    None,
}

/// What [`Sketch::append_parameters`] made of the parameters newly whole.
enum Appended {
    /// They are in the arguments' text.
    Whole,
    /// A key repeats one before it (or the next parameter's): the final object keeps one
    /// entry for both, so the text so far would not last.
    KeyRepeated,
    /// They do not convert to the entries the shape predicts.
    Unreadable,
}

/// What a sketch knows of its call so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Known<'a> {
    /// The function's name (complete).
    pub name: &'a str,
    /// The model's own id, if its header carries one.
    pub id: Option<&'a str>,
    /// The arguments' text known so far: a prefix of the final message's `arguments`.
    pub arguments: &'a str,
}

impl Sketch {
    /// A sketch of a call whose raw text starts with the iterator's opener.
    pub(crate) fn new(shape: &CallShape) -> Self {
        Sketch::new_at(shape.opener_len)
    }

    /// JSON list shape: a sketch of the call whose text starts at `at` in the region's raw
    /// text, after the list's `,`.
    pub(crate) fn next_in_list(at: usize) -> Self {
        Sketch {
            in_list: true,
            ..Sketch::new_at(at)
        }
    }

    fn new_at(at: usize) -> Self {
        Sketch {
            stage: Stage::Head { at },
            head: HeadMemo::default(),
            name: None,
            brackets: Brackets::default(),
            built: BuiltArguments::default(),
            value: OpenValue::default(),
            searched: 0,
            match_at_end: false,
            dialect: DialectArguments::default(),
            in_list: false,
        }
    }

    /// JSON list shape: once this call's arguments have closed, where the next call starts.
    pub(crate) fn next_call(&mut self, shape: &CallShape, raw: &str) -> NextCall {
        if shape.kind != ShapeKind::JsonList {
            return NextCall::None;
        }
        let end = match self.stage {
            Stage::Done { end, .. } => end,
            Stage::Head { .. } | Stage::Arguments { .. } => return NextCall::Wait,
            Stage::Named | Stage::GaveUp => return NextCall::None,
        };
        let bytes = raw.as_bytes();
        let i = self.head.json.skip(raw, end, json_space);
        match bytes.get(i) {
            None => return NextCall::Wait,
            Some(b'}') => {}
            Some(_) => return NextCall::None,
        }
        let i = self.head.json.skip(raw, i + 1, json_space);
        match bytes.get(i) {
            None => NextCall::Wait,
            Some(b',') => NextCall::At(i + 1),
            Some(_) => NextCall::None,
        }
    }

    /// Reads `raw` (the call's raw text so far, which only grows) and returns what is known.
    pub(crate) fn read<'a>(&'a mut self, shape: &CallShape, raw: &'a str) -> Option<Known<'a>> {
        if let (Some(separator), Stage::Head { at: 0 }) = (&shape.separator, &self.stage) {
            // A separated call's raw text starts with the separator when the model wrote one.
            if raw.len() < separator.len() && separator.starts_with(raw) {
                return None;
            }
            if raw.starts_with(separator.as_str()) {
                self.stage = Stage::Head {
                    at: separator.len(),
                };
            }
        }
        if let Stage::Head { at } = self.stage {
            self.stage = match shape.kind {
                ShapeKind::JsonObject => self.json_head(shape.json_arguments.key, raw, at),
                ShapeKind::HeaderJson => self.header(shape, raw, at),
                ShapeKind::XmlParameters => self.tag_head(shape, raw, at),
                ShapeKind::Pythonic => self.pythonic_head(shape, raw, at),
                ShapeKind::JsonList => self.list_head(shape.list_keys, raw, at),
            };
        }
        let named_first = matches!(
            shape.kind,
            ShapeKind::JsonObject | ShapeKind::Pythonic | ShapeKind::JsonList
        );
        if matches!(self.stage, Stage::Head { .. } | Stage::Named) && named_first {
            // The name has closed before the arguments (JSON shape), or is all that is read
            // (pythonic calls): the start goes out.
            let (name, id) = self.name.as_ref()?;
            return Some(Known {
                name,
                id: id.as_deref(),
                arguments: "",
            });
        }
        if !shape.streams_arguments {
            // Only the start goes out early; the arguments when the call closes.
            if matches!(
                self.stage,
                Stage::Head { .. } | Stage::GaveUp | Stage::Named
            ) {
                return None;
            }
            let (name, id) = self.name.as_ref()?;
            return Some(Known {
                name,
                id: id.as_deref(),
                arguments: "",
            });
        }
        if let Stage::Arguments { start, at } = self.stage {
            self.stage = match shape.kind {
                ShapeKind::XmlParameters => self.scan_parameters(shape, raw, start, at),
                ShapeKind::HeaderJson if shape.dialect => self.scan_dialect(shape, raw, start),
                ShapeKind::Pythonic => self.scan_pythonic(shape, raw, start, at),
                _ => self.scan_arguments(raw, start, at),
            };
        }
        let (start, end) = match self.stage {
            Stage::Arguments { start, at } => (start, at),
            Stage::Done { start, end } => (start, end),
            Stage::Head { .. } | Stage::GaveUp | Stage::Named => return None,
        };
        let (name, id) = self.name.as_ref()?;
        let arguments = match shape.kind {
            ShapeKind::XmlParameters | ShapeKind::Pythonic => self.built.text(),
            ShapeKind::HeaderJson if shape.dialect => self.dialect.known(),
            _ => raw.get(start..end)?,
        };
        // An empty object may yet give way to another key: nothing of it is known.
        let empty = |a: &str| {
            let inside = a.strip_prefix('{').unwrap_or(a);
            matches!(inside.trim_start_matches([' ', '\t', '\n', '\r']), "" | "}")
        };
        let arguments = match shape.kind {
            ShapeKind::JsonObject if shape.json_arguments.empty_waits && empty(arguments) => "",
            _ => arguments,
        };
        Some(Known {
            name,
            id: id.as_deref(),
            arguments,
        })
    }

    /// The XML shape's header: the shortest text before a tag (up to a `>`, or before a `<`)
    /// that the items' schema reads as a call without parameters once the tags left open in it
    /// are closed (`<tool_call>\n<function=f>` + `</function>`). Its name is the call's name.
    fn tag_head(&mut self, shape: &CallShape, raw: &str, at: usize) -> Stage {
        let Some(items) = shape.items() else {
            return Stage::GaveUp;
        };
        let item_start = shape.opener_len;
        let bytes = raw.as_bytes();
        let mut cut_from = at;
        while let Some(off) = bytes
            .get(cut_from..)
            .and_then(|rest| memchr::memchr2(b'<', b'>', rest))
        {
            let pos = cut_from + off;
            // A cut before a `<`, or after a `>`.
            let cut = if bytes[pos] == b'<' { pos } else { pos + 1 };
            cut_from = pos + 1;
            if cut <= item_start {
                continue;
            }
            let head = &raw[item_start..cut];
            let open = open_tags(head);
            let mut probe = head.to_owned();
            for tag in open.iter().rev() {
                probe.push_str("</");
                probe.push_str(tag);
                probe.push('>');
                let parsed = parse_node(items, Content::borrowed(&probe), &mut Walk::strict());
                let Some(call) = parsed.ok().as_ref().and_then(call_parts) else {
                    continue;
                };
                let empty = match &call.arguments {
                    Value::Object(o) => o.is_empty(),
                    Value::Null => true,
                    _ => false,
                };
                if !empty || call.name.is_empty() || call.name.contains(['<', '>']) {
                    return Stage::GaveUp;
                }
                self.name = Some((call.name, call.id));
                return Stage::Arguments {
                    start: cut,
                    at: cut,
                };
            }
        }
        // No `<` or `>` after the last one read: the search resumes at the end, not after that
        // one (a tag the model fills with white space was searched again on every chunk).
        Stage::Head {
            at: raw.len().max(cut_from),
        }
    }

    /// The XML shape's parameters: each key-value match that has text after it is complete (its
    /// closing tag has arrived); the parameters up to the last complete one are converted by the
    /// arguments' schema, and their compact JSON (less the closing `}`) is the text known.
    fn scan_parameters(&mut self, shape: &CallShape, raw: &str, start: usize, at: usize) -> Stage {
        let Some(arguments) = shape.parameters() else {
            return Stage::GaveUp;
        };
        let Some(key_value) = &arguments.key_value else {
            return Stage::GaveUp;
        };
        let Some(rest) = raw.get(at..) else {
            return Stage::GaveUp;
        };
        // Searching from the open parameter's start on every chunk would be quadratic in a long
        // value (a file's text): a new parameter can only be complete if its pattern's final
        // literal arrived since the last search, or a match ended where the text then did.
        let end_literal = shape.parameter_end.as_str();
        if !end_literal.is_empty() && !self.match_at_end && self.searched > 0 {
            let from = self.searched.saturating_sub(end_literal.len() - 1).max(at);
            let from = (from..=raw.len())
                .find(|&i| raw.is_char_boundary(i))
                .unwrap_or(raw.len());
            if !raw[from..].contains(end_literal) {
                self.searched = raw.len();
                self.read_open_value(shape, raw, at);
                return Stage::Arguments { start, at };
            }
        }
        self.searched = raw.len();
        self.match_at_end = false;
        let mut end = at;
        let mut found = 0;
        for caps in key_value.regex.find_iter(rest) {
            let Ok(caps) = caps else {
                return Stage::GaveUp;
            };
            if caps.end() >= rest.len() || caps.end() == caps.start() {
                self.match_at_end = caps.end() >= rest.len();
                break;
            }
            end = at + caps.end();
            found += 1;
        }
        if found == 0 {
            self.read_open_value(shape, raw, at);
            return Stage::Arguments { start, at };
        }
        match self.append_parameters(arguments, &raw[at..end], found, None) {
            Appended::Whole => {}
            // A parameter written twice: the final object keeps one key for both.
            Appended::KeyRepeated | Appended::Unreadable => return Stage::GaveUp,
        }
        self.value = OpenValue::Undecided;
        self.read_open_value(shape, raw, end);
        Stage::Arguments { start, at: end }
    }

    /// Converts the parameters newly whole — `piece`, the text from the end of the last whole
    /// one to the end of the `found` key-value matches after it — and appends their compact
    /// JSON to the arguments' text, in place of what of the open value had gone out.
    ///
    /// Why the parameters can be converted piece by piece rather than from the call's start
    /// (which costs time quadratic in the number of parameters): the arguments node is read by
    /// its `x-regex-key-value` alone, with no `properties` or `required` (checked with the
    /// shape), so the conversion is one match after another, each entry converted on its own
    /// by `additionalProperties`; the matches in `piece` are the ones the whole text has there,
    /// since the pattern looks at no text before a match's start (the search resumes at the last
    /// match's end either way); and compact JSON writes an object's entries one after another.
    /// So the conversion of all whole parameters is the old text, `,`, then the piece's entries
    /// — unless a key repeats, which the set of keys finds.
    /// `next` is the key of a parameter after the piece, which must not repeat one either.
    fn append_parameters(
        &mut self,
        arguments: &Node,
        piece: &str,
        found: usize,
        next: Option<&str>,
    ) -> Appended {
        let parsed = parse_node(arguments, Content::borrowed(piece), &mut Walk::strict());
        let Ok(Value::Object(object)) = parsed else {
            return Appended::Unreadable;
        };
        let repeats = |k: &str| self.built.has_key(k) || object.contains_key(k);
        if object.len() != found
            || object.keys().any(|k| self.built.has_key(k))
            || next.is_some_and(repeats)
        {
            return Appended::KeyRepeated;
        }
        let keys: Vec<String> = object.keys().cloned().collect();
        let json = Value::Object(object).to_string();
        let Some(entries) = json.strip_prefix('{').and_then(|j| j.strip_suffix('}')) else {
            return Appended::Unreadable;
        };
        // What of the open value went out must begin the parameter it was read from.
        if self.built.append(entries, keys) {
            Appended::Whole
        } else {
            Appended::Unreadable
        }
    }

    /// Reads the value of the parameter that starts at `at` (after the last whole one), when the
    /// shape streams string values ([`super::open_value`]).
    fn read_open_value(&mut self, shape: &CallShape, raw: &str, at: usize) {
        let (Some(facts), Some(arguments)) = (&shape.string_values, shape.parameters()) else {
            return;
        };
        let reader = ValueReader {
            facts,
            arguments,
            raw,
            at,
        };
        self.value = match self.value {
            OpenValue::Undecided => reader.decide(&mut self.built),
            OpenValue::NotString => OpenValue::NotString,
            OpenValue::Streaming {
                sent_to,
                read,
                breaks_to,
            } => reader.extend(&mut self.built, sent_to, read, breaks_to),
        };
    }

    /// The header shape: the arguments start at the first `{`; the header before it must read
    /// as a call (the items' schema on the header followed by `{}`).
    fn header(&mut self, shape: &CallShape, raw: &str, at: usize) -> Stage {
        let Some(body) = raw.get(at..) else {
            return Stage::GaveUp;
        };
        // Brackets before the `{` are header text (Mistral's `f[CALL_ID]a1b2c3d4e[ARGS]{…}`) only
        // if the probe below reads them so; arguments that are a list never read as `{}`.
        // The search resumes where the last one ended: the header may be long white space.
        let from = self.head.search_from.saturating_sub(at).min(body.len());
        let Some(brace) = memchr::memchr(b'{', &body.as_bytes()[from..]).map(|b| from + b) else {
            self.head.search_from = raw.len();
            return Stage::Head { at };
        };
        let probe = format!("{}{{}}", &body[..brace]);
        let Some(items) = shape.items() else {
            return Stage::GaveUp;
        };
        let parsed = parse_node(items, Content::borrowed(&probe), &mut Walk::strict());
        match parsed.ok().as_ref().and_then(call_parts) {
            Some(call) if matches!(&call.arguments, Value::Object(o) if o.is_empty()) => {
                self.name = Some((call.name, call.id));
                Stage::Arguments {
                    start: at + brace,
                    at: at + brace,
                }
            }
            _ => Stage::GaveUp,
        }
    }

    /// The JSON shape: `{`, `"name"`, `:`, a string, `,`, `"arguments"` (or the shape's other
    /// key), `:`, then the arguments' `{`. Anything else gives up.
    fn json_head(&mut self, key: &str, raw: &str, at: usize) -> Stage {
        let mut i = at;
        let head: [&[u8]; 3] = [b"{", b"\"name\"", b":"];
        let memo = &mut self.head;
        if let Some(stop) = expect_all(raw, memo, &mut i, &head, at, Stage::GaveUp) {
            return stop;
        }
        // The name: a complete JSON string without brackets or escapes.
        let name = match plain_string(raw, memo, &mut i) {
            Some(Some(name)) => name,
            Some(None) => return Stage::Head { at },
            None => return Stage::GaveUp,
        };
        // The name is the call's once its string has closed (a second `name` key would change
        // it: the adapter then fails the stream, see the module documentation).
        if self.name.is_none() {
            self.name = Some((name.to_owned(), None));
        }
        arguments_after_name(raw, &mut self.head, i, key, at)
    }

    /// The JSON list shape's call head: the list's `[` (before its first call), `{`, the id key
    /// and its string if the call writes one, the name key and its string, the arguments key,
    /// then the arguments' `{`, with white space between. The name (and id) are the call's once
    /// their strings have closed; keys in another order give up (the call goes out when the
    /// region closes) or, after the name, leave the arguments to the close.
    fn list_head(&mut self, keys: ListKeys, raw: &str, at: usize) -> Stage {
        let bytes = raw.as_bytes();
        let mut i = at;
        let opening: &[&[u8]] = if self.in_list { &[b"{"] } else { &[b"[", b"{"] };
        let memo = &mut self.head;
        if let Some(stop) = expect_all(raw, memo, &mut i, opening, at, Stage::GaveUp) {
            return stop;
        }
        let mut id = None;
        if let Some(id_key) = keys.id {
            let key = format!("\"{id_key}\"");
            let have = bytes.get(i..).unwrap_or_default();
            if have.len() < key.len() && key.as_bytes().starts_with(have) {
                return Stage::Head { at };
            }
            if have.starts_with(key.as_bytes()) {
                i += key.len();
                if let Some(stop) = expect_all(raw, memo, &mut i, &[b":"], at, Stage::GaveUp) {
                    return stop;
                }
                match plain_string(raw, memo, &mut i) {
                    Some(Some(value)) => id = Some(value),
                    Some(None) => return Stage::Head { at },
                    None => return Stage::GaveUp,
                }
                if let Some(stop) = expect_all(raw, memo, &mut i, &[b","], at, Stage::GaveUp) {
                    return stop;
                }
            }
        }
        let name_key = format!("\"{}\"", keys.name);
        let named: [&[u8]; 2] = [name_key.as_bytes(), b":"];
        if let Some(stop) = expect_all(raw, memo, &mut i, &named, at, Stage::GaveUp) {
            return stop;
        }
        let name = match plain_string(raw, memo, &mut i) {
            Some(Some(name)) => name,
            Some(None) => return Stage::Head { at },
            None => return Stage::GaveUp,
        };
        // An empty id is no id (the adapter reads ids that are non-empty strings).
        let id = id.filter(|id| !id.is_empty()).map(str::to_owned);
        self.name = Some((name.to_owned(), id));
        arguments_after_name(raw, &mut self.head, i, keys.arguments, at)
    }

    /// A pythonic call's name. The stream sends a call's raw text from the end of the last one,
    /// so its name follows exactly what the list writes before a call: the opener and `[`
    /// (the first call), `,` (the next one), or `]`, the closer and the next block's opener and
    /// `[` (a call of the next block), with white space between. The name then runs to the `(`,
    /// and the items' schema must read `NAME()` as a call of that name with no arguments.
    /// Anything else (a final region holding other text) gives up.
    fn pythonic_head(&mut self, shape: &CallShape, raw: &str, at: usize) -> Stage {
        const BEFORE: [&str; 6] = [
            "]",
            "<|tool_call_end|>",
            "<|tool_call_start|>",
            "[",
            ",",
            "",
        ];
        // The search resumes where the last one ended, and the white space read before is
        // not read again: the list's start may be long white space.
        let searched = self.head.search_from.min(raw.len());
        let Some(paren) = memchr::memchr(b'(', &raw.as_bytes()[searched..]).map(|p| searched + p)
        else {
            self.head.search_from = raw.len();
            // Give up early on text that cannot lead to a name.
            return match pythonic_prefix(raw, &BEFORE, &mut self.head.py) {
                Some(_) => Stage::Head { at },
                None => Stage::GaveUp,
            };
        };
        let Some(from) = pythonic_prefix(&raw[..paren], &BEFORE, &mut self.head.py) else {
            return Stage::GaveUp;
        };
        let name = &raw[from..paren];
        let name_char = |c: char| crate::py::unicode::is_word(c) || c == '.' || c == '-';
        if name.is_empty() || !name.chars().all(name_char) {
            return Stage::GaveUp;
        }
        let Some(items) = shape.items() else {
            return Stage::GaveUp;
        };
        let probe = format!("{name}()");
        let parsed = parse_node(items, Content::borrowed(&probe), &mut Walk::strict());
        match parsed.ok().as_ref().and_then(call_parts) {
            Some(call)
                if call.name == name
                    && matches!(&call.arguments, Value::Object(o) if o.is_empty()) =>
            {
                self.name = Some((call.name, call.id));
                if shape.streams_arguments {
                    let start = paren + 1;
                    self.searched = start;
                    Stage::Arguments { start, at: start }
                } else {
                    Stage::Named
                }
            }
            _ => Stage::GaveUp,
        }
    }

    /// A pythonic call's parameters from `start` (after its `(`): those before the last
    /// `,\s*KEY\s*=` that has arrived are whole, since the key-value pattern ends a value at the
    /// first such look-ahead (a `,` inside a quoted string included, as the reference reads it):
    /// they are converted by the arguments' schema, every match a key's (no positional
    /// argument) and no key twice, and their compact JSON (less the closing `}`) is the text
    /// known. The stream profile sends the call's text only up to a `)` that may end it, so none
    /// of this is past the call's end.
    fn scan_pythonic(&mut self, shape: &CallShape, raw: &str, start: usize, at: usize) -> Stage {
        let Some(arguments) = shape.parameters() else {
            return Stage::GaveUp;
        };
        let Some(key_value) = &arguments.key_value else {
            return Stage::GaveUp;
        };
        // The last boundary that has arrived, looking only at the `,`s not decided before, and
        // never past a `)` that may end the call: the stream sends an open call's text only up
        // to such a `)`, but a call decided by the end token comes with the text of the calls
        // after it.
        let bytes = raw.as_bytes();
        let mut cut = None;
        let mut from = self.searched.max(start);
        let mut ended = false;
        while let Some(off) = bytes
            .get(from..)
            .and_then(|rest| memchr::memchr2(b',', b')', rest))
        {
            let at = from + off;
            // The white space after the `,` or `)` is read once (`head.py`): a decision that
            // waits is taken again from here on the next chunk.
            let spaces = &mut self.head.py;
            let decided = if bytes[at] == b',' {
                key_follows(raw, at + 1, spaces).map(|key| {
                    if key {
                        cut = Some(at);
                    }
                })
            } else {
                may_end_call(raw, at + 1, spaces).map(|ends| ended = ends)
            };
            if decided.is_none() {
                self.searched = at;
                break;
            }
            from = at + 1;
            self.searched = from;
            if ended {
                break;
            }
        }
        let stay = |at| match ended {
            true => Stage::Done { start, end: at },
            false => Stage::Arguments { start, at },
        };
        let Some(cut) = cut.filter(|&c| c > at) else {
            return stay(at);
        };
        let piece = &raw[at..cut];
        let Some(key) = key_value.regex.group_index("key") else {
            return Stage::GaveUp;
        };
        let mut found = 0;
        for caps in key_value.regex.find_iter(piece) {
            match caps {
                Ok(caps) if caps.span(key).is_some() => found += 1,
                _ => return Stage::GaveUp,
            }
        }
        if found == 0 {
            return stay(at);
        }
        // A key written twice: the final object keeps one key for both, with the last value.
        // When the parameter after the cut repeats one of these, their text would not last:
        // nothing more is sent (a parameter sent before is then taken back too, and the strict
        // stream fails, as for XML parameters written twice).
        let next_key = key_after(&raw[cut + 1..]);
        match self.append_parameters(arguments, piece, found, next_key) {
            Appended::Whole => stay(cut),
            Appended::KeyRepeated => Stage::Done { start, end: at },
            Appended::Unreadable => Stage::GaveUp,
        }
    }

    /// Gemma's dialect arguments from `start`: the parameters before the last top-level `,`,
    /// converted ([`super::dialect`]).
    fn scan_dialect(&mut self, shape: &CallShape, raw: &str, start: usize) -> Stage {
        let arguments = shape
            .items()
            .and_then(|i| i.property("function")?.property("arguments"));
        let read = match (arguments, raw.get(start..)) {
            (Some(arguments), Some(text)) => self.dialect.read(arguments, text).is_some(),
            _ => false,
        };
        if read {
            Stage::Arguments {
                start,
                at: raw.len(),
            }
        } else {
            Stage::GaveUp
        }
    }

    /// Scans the arguments' JSON from `at`: brackets outside strings until the object closes.
    fn scan_arguments(&mut self, raw: &str, start: usize, at: usize) -> Stage {
        let bytes = raw.as_bytes();
        let mut i = at;
        while let Some(&b) = bytes.get(i) {
            i += 1;
            if self.brackets.byte(b) {
                return Stage::Done { start, end: i };
            }
        }
        // `raw` is whole characters (chunks are `str`s), so its end is a character boundary.
        Stage::Arguments { start, at: i }
    }
}

/// The names of the tags `head` leaves open, outermost first: `<tool_call>\n<function=f>` leaves
/// `tool_call` and `function` open. A name runs from the `<` to a space, `>`, `=`, `/` or `"`.
fn open_tags(head: &str) -> Vec<&str> {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = head;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let closing = rest.starts_with('/');
        let name_from = usize::from(closing);
        let len = rest[name_from..]
            .find(|c: char| c.is_whitespace() || matches!(c, '>' | '=' | '/' | '"' | '<'))
            .unwrap_or(rest.len() - name_from);
        let name = &rest[name_from..name_from + len];
        if name.is_empty() {
            continue;
        }
        if closing {
            if let Some(i) = open.iter().rposition(|t| *t == name) {
                open.truncate(i);
            }
        } else if !rest[name_from + len..].trim_start().starts_with("/>") {
            open.push(name);
        }
    }
    open
}

/// Where the text after `literals` (each optional, in order, white space around them) ends in
/// `head`; `None` when something else comes first. A literal cut by the end of `head` counts
/// as written (more text decides).
fn pythonic_prefix(head: &str, literals: &[&str], spaces: &mut SpaceRuns) -> Option<usize> {
    let is_space = crate::py::unicode::is_space;
    let mut rest = head;
    for literal in literals {
        rest = &head[spaces.skip(head, head.len() - rest.len(), is_space)..];
        if rest.len() < literal.len() && literal.starts_with(rest) && !rest.is_empty() {
            return Some(head.len());
        }
        rest = rest.strip_prefix(literal).unwrap_or(rest);
    }
    let rest = &head[spaces.skip(head, head.len() - rest.len(), is_space)..];
    let name_char = |c: char| crate::py::unicode::is_word(c) || c == '.' || c == '-';
    rest.chars()
        .all(name_char)
        .then_some(head.len() - rest.len())
}

/// The key of the pythonic parameter after a boundary `,` (`rest` follows the `,`).
fn key_after(rest: &str) -> Option<&str> {
    let rest = rest.trim_start_matches(crate::py::unicode::is_space);
    let len = rest
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_alphabetic() || c == '_' || (i > 0 && crate::py::unicode::is_word(c)))
        })
        .map_or(rest.len(), |(i, _)| i);
    (len > 0).then(|| &rest[..len])
}

/// Whether `raw[at..]` (the text after a `,`) starts with `\s*[A-Za-z_]\w*\s*=`, the look-ahead
/// that ends a pythonic parameter's value: `None` while the text ends before it is decided. The
/// white space is read through `spaces` (this is asked again on every chunk while it waits).
fn key_follows(raw: &str, at: usize, spaces: &mut SpaceRuns) -> Option<bool> {
    let rest = &raw[spaces.skip(raw, at, crate::py::unicode::is_space)..];
    let mut chars = rest.chars();
    match chars.next() {
        None => return None,
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        Some(_) => return Some(false),
    }
    let rest = chars
        .as_str()
        .trim_start_matches(crate::py::unicode::is_word);
    let rest = &raw[spaces.skip(raw, raw.len() - rest.len(), crate::py::unicode::is_space)..];
    rest.chars().next().map(|c| c == '=')
}

/// Whether a `)` followed by `raw[at..]` (its white space read through `spaces`) may end a
/// pythonic call (the iterator's look-ahead
/// `\s*(?:,\s*NAME\(|$)`, with the end of the list's text before a `]`): `Some(true)` when it may
/// (the sketch then reads no further), `Some(false)` when the text rules it out, `None` while
/// the text ends before it is decided.
fn may_end_call(raw: &str, at: usize, spaces: &mut SpaceRuns) -> Option<bool> {
    let is_space = crate::py::unicode::is_space;
    let rest = &raw[spaces.skip(raw, at, is_space)..];
    match rest.chars().next() {
        None => return None,
        Some(']') => return Some(true),
        Some(',') => {}
        Some(_) => return Some(false),
    }
    let rest = &raw[spaces.skip(raw, raw.len() - rest.len() + 1, is_space)..];
    let mut chars = rest.chars();
    match chars.next() {
        None => return None,
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        Some(_) => return Some(false),
    }
    let name_char = |c: char| crate::py::unicode::is_word(c) || c == '.' || c == '-';
    chars
        .as_str()
        .trim_start_matches(name_char)
        .chars()
        .next()
        .map(|c| c == '(')
}

/// A call object's head after its name (at `i`, the head read from `at`): `,`, the arguments
/// `key`, `:`, then the arguments' `{`. Another key or value there leaves the arguments to the
/// call's close ([`Stage::Named`]).
fn arguments_after_name(
    raw: &str,
    memo: &mut HeadMemo,
    mut i: usize,
    key: &str,
    at: usize,
) -> Stage {
    let key = format!("\"{key}\"");
    let before: [&[u8]; 3] = [b",", key.as_bytes(), b":"];
    if let Some(stop) = expect_all(raw, memo, &mut i, &before, at, Stage::Named) {
        return stop;
    }
    match raw.as_bytes().get(i) {
        None => Stage::Head { at },
        Some(b'{') => Stage::Arguments { start: i, at: i },
        Some(_) => Stage::Named,
    }
}

/// Reads `lits` in order at `*i` ([`expect_literal`]): `None` once all are read, else the stage
/// a head read from `at` stops at — still the head while the text ends inside one, `otherwise`
/// when something else is written.
fn expect_all(
    raw: &str,
    memo: &mut HeadMemo,
    i: &mut usize,
    lits: &[&[u8]],
    at: usize,
    otherwise: Stage,
) -> Option<Stage> {
    for lit in lits {
        match expect_literal(raw, memo, i, lit) {
            Some(true) => {}
            Some(false) => return Some(Stage::Head { at }),
            None => return Some(otherwise),
        }
    }
    None
}

/// `lit` at `*i` after white space: `Some(true)` (and `*i` past it and the white space after),
/// `Some(false)` while the text ends inside it, `None` when something else is written there.
fn expect_literal(raw: &str, memo: &mut HeadMemo, i: &mut usize, lit: &[u8]) -> Option<bool> {
    let bytes = raw.as_bytes();
    let at = memo.json.skip(raw, *i, json_space);
    let have = bytes.get(at..).unwrap_or_default();
    if have.len() < lit.len() {
        return lit.starts_with(have).then_some(false);
    }
    if !have.starts_with(lit) {
        return None;
    }
    *i = memo.json.skip(raw, at + lit.len(), json_space);
    Some(true)
}

/// A JSON string at `*i` without escapes, brackets or control characters (whose text is then
/// its value): `Some(Some(value))` (and `*i` past it), `Some(None)` while it is not closed yet,
/// `None` when it is something else.
fn plain_string<'r>(raw: &'r str, memo: &mut HeadMemo, i: &mut usize) -> Option<Option<&'r str>> {
    let bytes = raw.as_bytes();
    let at = memo.json.skip(raw, *i, json_space);
    match bytes.get(at) {
        None => return Some(None),
        Some(b'"') => {}
        Some(_) => return None,
    }
    let inside = &raw[at + 1..];
    // The string's text read before (no `"` in it, plain) is not read again.
    let read = match memo.string {
        Some((quote, to)) if quote == at => to.saturating_sub(at + 1).min(inside.len()),
        _ => 0,
    };
    let plain =
        |s: &str| !s.contains(['\\', '{', '[', '}', ']']) && !s.chars().any(char::is_control);
    match inside[read..].find('"').map(|len| read + len) {
        Some(len) if plain(&inside[read..len]) => {
            *i = at + 1 + len + 1;
            Some(Some(&inside[..len]))
        }
        Some(_) => None,
        None if plain(&inside[read..]) => {
            memo.string = Some((at, raw.len()));
            Some(None)
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    //! The XML shape against the final message: for every conformance output of the XML
    //! families (expectations from transformers), the first call's raw text is fed to a sketch a
    //! character at a time. What the sketch knows must always be a prefix of the final message's
    //! `arguments` (`openai::parse` of the whole output), its name the final name, and once the
    //! call's text is whole it must know every parameter.

    use super::*;
    use crate::openai::{self, CounterIds, Options};
    use crate::Spec;
    use std::path::PathBuf;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn read(path: PathBuf) -> Value {
        let text = std::fs::read_to_string(&path).unwrap();
        crate::value::from_str(&text).unwrap()
    }

    /// The first call's raw text in `input`: the first iterator match in the `tool_calls` group.
    fn first_call<'i>(schema: &Schema, input: &'i str) -> Option<&'i str> {
        let root = schema.root();
        let caps = root.regex.as_ref()?.regex.search(input).ok()??;
        let group = caps.get(root.regex.as_ref()?.regex.group_index("tool_calls")?)?;
        let iterator = root.property("tool_calls")?.iterator.as_ref()?;
        let item = iterator.regex.search(group).ok()??;
        item.get(1)
    }

    #[test]
    fn xml_parameters_are_known_as_each_closes() {
        let mut checked = 0;
        for family in [
            "qwen3_coder",
            "qwen3_5",
            "seed_oss",
            "glm4_5",
            "minimax_m2",
            "deepseek_v3_2",
        ] {
            let text =
                std::fs::read_to_string(root().join(format!("schemas/{family}.json"))).unwrap();
            let spec = Spec::from_json_str(&text).unwrap();
            let schema = spec.schema().unwrap();
            let shape = CallShape::of(schema).unwrap_or_else(|| panic!("{family}: no shape"));
            assert!(shape.builds_arguments(), "{family}");
            let suite = read(root().join(format!("tests/conformance/suites/{family}.json")));
            for case in suite["cases"].as_array().unwrap() {
                let input = match (&case["input"], &case["input_file"]) {
                    (Value::String(s), _) => s.clone(),
                    (_, Value::String(f)) => std::fs::read_to_string(root().join(f)).unwrap(),
                    _ => continue,
                };
                let Ok(message) = openai::parse(
                    &spec,
                    &input,
                    None,
                    None,
                    Options::default(),
                    Box::new(CounterIds::default()),
                ) else {
                    continue;
                };
                let Some(Value::Array(calls)) = message.get("tool_calls") else {
                    continue;
                };
                let Some(raw) = first_call(schema, &input) else {
                    continue;
                };
                let name = calls[0]["function"]["name"].as_str().unwrap();
                let arguments = calls[0]["function"]["arguments"].as_str().unwrap();
                let what = format!("{family}/{}", case["name"]);
                let mut sketch = Sketch::new(&shape);
                if case["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("duplicate_"))
                {
                    // No template writes a parameter twice; the sketch gives up at the repeat
                    // (what it sent before then no longer holds: see the module documentation).
                    assert!(sketch.read(&shape, raw).is_none(), "{what}");
                    continue;
                }
                let mut named_at = None;
                let mut last = String::new();
                let first_close = ["</parameter>", "</arg_value>", "</｜DSML｜parameter>"]
                    .iter()
                    .filter_map(|t| raw.find(t))
                    .min();
                let mut before_close = None;
                for (i, c) in raw.char_indices() {
                    let prefix = &raw[..i + c.len_utf8()];
                    let known = sketch.read(&shape, prefix);
                    if Some(prefix.len()) == first_close {
                        before_close = Some(known.map_or(String::new(), |k| k.arguments.into()));
                    }
                    if let Some(known) = known {
                        assert_eq!(known.name, name, "{what}");
                        assert!(
                            arguments.starts_with(known.arguments),
                            "{what}: {:?} is not a prefix of {arguments:?}",
                            known.arguments
                        );
                        assert!(known.arguments.starts_with(&last), "{what}: only grows");
                        last = known.arguments.to_owned();
                        named_at.get_or_insert(prefix.len());
                    }
                }
                // Named before its first parameter is whole; every parameter known at the end
                // (all of the arguments but the closing `}`).
                let named_at = named_at.unwrap_or_else(|| panic!("{what}: never named"));
                if let Some(before_close) = before_close {
                    let want = open_string_value(family, arguments);
                    assert_eq!(
                        before_close, want,
                        "{what}: the first value before it closes"
                    );
                }
                if let Some(first_close) = first_close {
                    assert!(named_at <= first_close, "{what}: named at {named_at}");
                    assert_eq!(
                        format!("{last}}}"),
                        arguments,
                        "{what}: parameters known at the end"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 40, "{checked} calls checked");
    }

    /// What the arguments' text must be just before the first parameter's closing tag: its
    /// string value so far (all of it, less line breaks at its end, which may still belong to
    /// the closing tag), when the value cannot be anything but a string: the families convert a
    /// value by `json.loads`, keeping the text when it is not JSON (and the Qwen and Seed ones
    /// first map a whole `True`, `False` or `None` to JSON), so a value whose first character
    /// after JSON whitespace cannot start JSON stays text. Otherwise nothing of it is known.
    fn open_string_value(family: &str, arguments: &str) -> String {
        let Ok(Value::Object(object)) = crate::value::from_str(arguments) else {
            return String::new();
        };
        let Some((key, Value::String(value))) = object.iter().next() else {
            return String::new();
        };
        let mut may_be_json = String::from("{[\"-0123456789tfnNI");
        if ["qwen3_coder", "qwen3_5", "seed_oss"].contains(&family) {
            may_be_json.push_str("TF");
        }
        let first = value.chars().find(|c| !" \t\n\r".contains(*c));
        if first.is_none_or(|c| may_be_json.contains(c)) {
            return String::new();
        }
        let mut text = format!(
            "{{{}:{}",
            Value::String(key.clone()),
            Value::String(value.trim_end_matches(['\r', '\n']).to_owned())
        );
        text.pop();
        text
    }

    #[test]
    fn parameter_patterns_end_with_their_closing_tag() {
        let suffix = |p: &str| {
            chatparse_pyre::required_suffix(
                &chatparse_pyre::PyRegex::new(p).unwrap().syntax_tree().root,
            )
            .unwrap_or_default()
        };
        assert_eq!(
            suffix(r"<parameter=(?P<key>[^>\n]+)>(?:\r?\n)?(?P<value>.*?)(?:\r?\n)?</parameter>"),
            "</parameter>"
        );
        assert_eq!(suffix(r"a(?:b|c)"), "");
        assert_eq!(suffix(r"x(?:</a>)"), "x</a>");
    }

    #[test]
    fn open_tags_are_the_unclosed_ones() {
        assert_eq!(
            open_tags("<tool_call>\n<function=f>\n"),
            ["tool_call", "function"]
        );
        assert_eq!(open_tags("<invoke name=\"f\">"), ["invoke"]);
        assert_eq!(open_tags("<a><b></b><c/>"), ["a"]);
        assert_eq!(open_tags("<tool_call>get_weather\n"), ["tool_call"]);
    }
}

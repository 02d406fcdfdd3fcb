//! A *stream profile*: what a streaming parser needs to know about an x-regex schema whose root
//! regex cuts the whole output (reasoning, then content, then tool calls), which no forward scan
//! of the regex itself can stream (see [`XRegexPlan`](super::XRegexPlan) for the schemas that
//! can). The profile names the literal markers of the format and what the output may open with;
//! [`ProfiledStreamParser`](super::ProfiledStreamParser) streams the reasoning and content text
//! that no later text can change, and takes the final message from the one-shot parse, so the
//! profile can only make a stream hold text back longer, never make it differ from
//! [`Schema::parse`](crate::Schema::parse).
//!
//! ```json
//! {
//!   "reasoning": {"field": "reasoning_content", "open": "<think>", "open_after_space": true,
//!                 "close": ["</think>"], "untagged": "ambiguous"},
//!   "content": {"field": "content"},
//!   "markers": ["<tool_call>", "<|im_end|>", "<|endoftext|>"]
//! }
//! ```

use crate::value::{Map, Value};

use crate::diag::{self, Diagnostics};
use crate::error::SchemaError;
use crate::schema::Schema;

/// What untagged text at the start of the output is (text that does not begin with the
/// reasoning opener).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untagged {
    /// Content (`hermes`: the reasoning block is optional and only opens with `<think>`).
    Content,
    /// Reasoning until a closer (`apriel`: the reasoning has no opener).
    Reasoning,
    /// Reasoning unless it begins with `<` (`deepseek_r1`: a substitution prepends `<think>` to
    /// text that starts with anything else; text starting with other markup is ambiguous).
    ReasoningUnlessMarkup,
    /// Undecided until the first marker: reasoning if it is a closer (a substitution turns
    /// everything before the first `</think>` into reasoning, as in `qwen3`), held otherwise.
    Ambiguous,
}

impl Untagged {
    const NAMES: [&'static str; 4] = [
        "content",
        "reasoning",
        "reasoning_unless_markup",
        "ambiguous",
    ];

    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "content" => Untagged::Content,
            "reasoning" => Untagged::Reasoning,
            "reasoning_unless_markup" => Untagged::ReasoningUnlessMarkup,
            "ambiguous" => Untagged::Ambiguous,
            _ => return None,
        })
    }
}

/// The reasoning field of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasoningProfile {
    /// The message field the reasoning goes to.
    pub field: String,
    /// The literal that opens reasoning at the start of the output, if there is one.
    pub open: Option<String>,
    /// Whether whitespace may come before `open` (the root regex reads `^\s*<think>`) rather than
    /// only at byte 0 (`^<think>`).
    pub open_after_space: bool,
    /// An optional literal header before untagged reasoning (`apriel`'s
    /// `Here are my reasoning steps:`).
    pub header: Option<String>,
    /// Literals that end reasoning and start content.
    pub close: Vec<String>,
    /// What untagged text is.
    pub untagged: Untagged,
}

/// The content field of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentProfile {
    /// The message field the content goes to.
    pub field: String,
    /// Literals the content may begin with that are not part of it (`<response>`).
    pub open: Vec<String>,
    /// Whether content exists only after one of `open` (`functionary_v3_2`'s `all\n`).
    pub open_required: bool,
    /// Prefixes that make the start of content ambiguous (`llama3_json`: a `{` may be a call).
    pub held_if_starts: Vec<String>,
}

/// The tool-call field of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallsProfile {
    /// The message field the calls go to (an `x-regex-iterator` array).
    pub field: String,
    /// The literals that open the calls' part of the output (`<tool_call>`): after content that
    /// ends at one of them, each call whose iterator match is closed by a literal closer is
    /// final and streams as it closes.
    pub open: Vec<String>,
    /// Content closers after which, with only white space between, an opener still opens the
    /// calls (`[END FINAL RESPONSE]`: Apriel's root pattern reads
    /// `…(?:\[END FINAL RESPONSE\]\s*)?(?:(?P<tool_calls><tool_calls>…`).
    pub after: Vec<String>,
    /// Set when the calls are one JSON list (or a lone object) read whole by the field's
    /// `x-parser: json`, rather than `x-regex-iterator` matches: each item streams as its object
    /// closes.
    pub list: Option<ListProfile>,
    /// Set when the calls are JSON objects one after another, cut at the opener (`<|python_tag|>`)
    /// and at `;` by the field's substitution and iterator (`llama3_json`): each call streams
    /// once what follows it decides it (see `"objects": true`).
    pub objects: bool,
    /// Set when the calls are a pythonic call list (`lfm2`'s `[f(a=1), g(b="x")]`), read by the
    /// field's substitution, `x-regex` and iterator: each call streams once what follows its `)`
    /// decides it (see `"pythonic": true`).
    pub pythonic: bool,
    /// Set when the calls are addressed to recipients (`functionary_v3_2`'s `>>>NAME\n{…}`), cut
    /// by the root regex's terminators and the field's iterator: each call streams once the next
    /// `>>>` is known to be a separator or the terminator `>>>all\n` (see `"recipients": true`).
    pub recipients: bool,
    /// Set when calls that open the output can still be read as something else, depending on
    /// the text after them (see [`LeadingCalls`]).
    pub leading: Option<LeadingCalls>,
}

/// Calls at the very start of the output (only white space before the first opener) whose
/// fate the text after them decides: `"leading": {"close": "…", "held_by": […]}`.
///
/// Gemma 4's root substitution (`^(\s*(?:<\|channel>.*?(?:<channel\|>|$)\s*)?)((?:<\|tool_call>.*?<tool_call\|>\s*)+)(.*?)…`
/// → `\1\3\2\4`) moves the text written after a run of leading calls in front of them. If that
/// text begins with the reasoning opener `<|channel>thought`, the root pattern then reads the
/// calls as part of the reasoning (transformers: `<|tool_call>call:f{a:1}<tool_call|><|channel>thought hi`
/// is `{"reasoning_content": "hi<|tool_call>call:f{a:1}<tool_call|>"}`). So such calls are
/// held, start included, until the first text after the run (past white space and further
/// blocks from a calls opener to `close`) shows it begins with none of `held_by`; if it begins
/// with one, they come with the final message. A prompt whose tail is a closed reasoning block
/// (Gemma's `<|channel>thought\n<channel|>` with thinking off) puts that block before the calls,
/// and they stream at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeadingCalls {
    /// The literal a block of the run ends at (its first occurrence after the opener, as the
    /// substitution's lazy `.*?` finds it).
    pub close: String,
    /// The literals that, beginning the text after the run, make the calls something else.
    pub held_by: Vec<String>,
}

/// The JSON list of a [`CallsProfile`]: `"list": {"cut": […], "ids_after_arguments": true}`.
///
/// The list's JSON text starts right after the opener; an opener that ends in `[`
/// (`functools[`) has opened the list itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListProfile {
    /// Literals where the field's own `x-regex` cuts the list's text wherever they stand, even
    /// inside a JSON string (`</tool_calls>` for `^<tool_calls>(.*?)(?:</tool_calls>.*)?$`): an
    /// item counts only if it closes before the first of them.
    pub cut: Vec<String>,
    /// The chat template writes a call's `id` after its `arguments` (Mistral's
    /// `{"name", "arguments", "id"}`): a call can only be sent once its object has closed, so
    /// adapters do not start it early.
    pub ids_after_arguments: bool,
    /// Set when the list is written as blocks, each a JSON value between `open` and `close`
    /// literals, that the field's substitutions join into one list (Phi-4-mini's
    /// `<|tool_call|>{…}<|/tool_call|><|tool_call|>[…]<|/tool_call|>`, read as `[{…},[…]]` and
    /// flattened by the transform's `[]`).
    pub blocks: Option<ListBlocks>,
}

/// The blocks of a [`ListProfile`]: `"blocks": {"open": […], "close": "…"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListBlocks {
    /// The literals a block opens with (the first one is the calls' opener).
    pub open: Vec<String>,
    /// The literal a block closes with; the substitutions turn it, with white space and the
    /// next block's opener, into the list's `,`. Anywhere else it is not JSON, or would be
    /// rewritten inside a string, so an item holding it is left to the final message.
    pub close: String,
}

/// A stream profile (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamProfile {
    /// The reasoning field, if the format has one.
    pub reasoning: Option<ReasoningProfile>,
    /// The content field, if the format has one.
    pub content: Option<ContentProfile>,
    /// The tool-call field, if its calls can stream one by one.
    pub tool_calls: Option<CallsProfile>,
    /// Every other literal that can end reasoning or content (tool-call openers, end tokens,
    /// content closers): streaming of a text field stops at the first of them.
    pub markers: Vec<String>,
}

impl StreamProfile {
    /// Loads a profile for `schema` from JSON text, checking that its fields are properties of
    /// the schema's root and its markers non-empty.
    pub fn from_json_str_named(
        text: &str,
        source_name: &str,
        schema: &Schema,
    ) -> Result<Self, SchemaError> {
        let value = crate::py::json::loads(text)
            .map_err(|e| diag::invalid_json(source_name, e, "a stream profile"))?;
        let mut diags = Diagnostics::default();
        let profile = load(&value, schema, &mut diags);
        diags.check(profile, source_name)
    }

    /// Every literal the stream looks for: reasoning openers and closers, content openers and
    /// the markers.
    pub(crate) fn all_markers(&self) -> Vec<&str> {
        let mut all: Vec<&str> = Vec::new();
        if let Some(r) = &self.reasoning {
            all.extend(r.open.as_deref());
            all.extend(r.close.iter().map(String::as_str));
        }
        if let Some(c) = &self.content {
            all.extend(c.open.iter().map(String::as_str));
        }
        if let Some(c) = &self.tool_calls {
            all.extend(c.open.iter().map(String::as_str));
        }
        all.extend(self.markers.iter().map(String::as_str));
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The part of a prompt prefix that belongs to the output's parse: the reasoning block the
    /// generation prompt opened (`<think>\n`, or with prefilled reasoning text) or opened and
    /// closed (`<think>\n\n</think>\n\n`), from the last reasoning opener on; or nothing.
    ///
    /// A block of an earlier turn is not one: after the last opener there may be no marker but
    /// one closer, and after a closer only whitespace (an earlier turn goes on with content, a
    /// call or an end token).
    ///
    /// ```
    /// use chatparse_runtime::{Schema, schema::stream::StreamProfile};
    /// let schema = Schema::from_json_str(r#"{"type": "object", "properties": {
    ///     "reasoning_content": {"type": "string"}, "content": {"type": "string"}}}"#)?;
    /// let profile = StreamProfile::from_json_str_named(r#"{
    ///     "reasoning": {"field": "reasoning_content", "open": "<think>", "close": ["</think>"]},
    ///     "content": {"field": "content"}, "markers": ["<|im_end|>"]}"#, "<p>", &schema)?;
    /// let turn = "<|im_start|>assistant\n";
    /// assert_eq!(profile.prefix_tail(&format!("{turn}<think>\n")), "<think>\n");
    /// assert_eq!(profile.prefix_tail(&format!("{turn}<think>\n\n</think>\n\n")), "<think>\n\n</think>\n\n");
    /// let earlier = format!("{turn}<think>\nhm\n</think>\n\nHi<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n{turn}");
    /// assert_eq!(profile.prefix_tail(&earlier), "");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prefix_tail<'p>(&self, prefix: &'p str) -> &'p str {
        let Some(reasoning) = &self.reasoning else {
            return "";
        };
        let Some(open) = reasoning.open.as_deref() else {
            return "";
        };
        let Some(at) = prefix.rfind(open) else {
            return "";
        };
        let tail = &prefix[at..];
        let body = &tail[open.len()..];
        let first = self
            .all_markers()
            .into_iter()
            .filter_map(|m| body.find(m).map(|i| (i, m)))
            .min_by_key(|&(i, m)| (i, usize::MAX - m.len()));
        match first {
            None => tail,
            Some((i, marker)) if reasoning.close.iter().any(|c| c == marker) => {
                let after = &body[i + marker.len()..];
                if after.chars().all(crate::py::unicode::is_space) {
                    tail
                } else {
                    ""
                }
            }
            Some(_) => "",
        }
    }
}

fn load(value: &Value, schema: &Schema, diags: &mut Diagnostics) -> Option<StreamProfile> {
    let Some(object) = value.as_object() else {
        diags.error(
            "",
            format!(
                "a stream profile is an object, not {}",
                diag::json_kind(value)
            ),
            "write {\"reasoning\": {…}, \"content\": {…}, \"markers\": […]}",
        );
        return None;
    };
    for key in object.keys() {
        if !TOP_KEYS.contains(&key.as_str()) {
            let fix = match diag::closest(key, &TOP_KEYS) {
                Some(near) => format!("did you mean \"{near}\"?"),
                None => format!("keys: {}", TOP_KEYS.join(", ")),
            };
            diags.error(format!("/{key}"), format!("unknown key \"{key}\""), fix);
        }
    }
    let fields: Vec<&str> = schema
        .root()
        .properties
        .iter()
        .flatten()
        .map(|p| p.name.as_str())
        .collect();
    let reasoning = object
        .get("reasoning")
        .and_then(|v| load_reasoning(v, &fields, diags));
    let content = object
        .get("content")
        .and_then(|v| load_content(v, &fields, diags));
    let tool_calls = object
        .get("tool_calls")
        .and_then(|v| load_calls(v, schema, &fields, diags));
    let markers = object
        .get("markers")
        .map_or_else(Vec::new, |v| literals(v, "/markers", diags));
    Some(StreamProfile {
        reasoning,
        content,
        tool_calls,
        markers,
    })
}

const TOP_KEYS: [&str; 4] = ["reasoning", "content", "tool_calls", "markers"];
const CALLS_KEYS: [&str; 8] = [
    "field",
    "open",
    "after",
    "list",
    "objects",
    "pythonic",
    "recipients",
    "leading",
];
const LEADING_KEYS: [&str; 2] = ["close", "held_by"];
const LIST_KEYS: [&str; 3] = ["cut", "ids_after_arguments", "blocks"];
const BLOCKS_KEYS: [&str; 2] = ["open", "close"];

fn load_calls(
    value: &Value,
    schema: &Schema,
    fields: &[&str],
    diags: &mut Diagnostics,
) -> Option<CallsProfile> {
    let object = object_with_keys(value, "/tool_calls", &CALLS_KEYS, diags)?;
    let field = field_name(object.get("field"), "/tool_calls/field", fields, diags)?;
    let list = match object.get("list") {
        None => None,
        Some(value) => {
            let list = object_with_keys(value, "/tool_calls/list", &LIST_KEYS, diags)?;
            Some(ListProfile {
                cut: list
                    .get("cut")
                    .map_or_else(Vec::new, |v| literals(v, "/tool_calls/list/cut", diags)),
                ids_after_arguments: flag(
                    list.get("ids_after_arguments"),
                    "/tool_calls/list/ids_after_arguments",
                    diags,
                ),
                blocks: match list.get("blocks") {
                    None => None,
                    Some(v) => {
                        let at = "/tool_calls/list/blocks";
                        let blocks = object_with_keys(v, at, &BLOCKS_KEYS, diags)?;
                        let open = blocks
                            .get("open")
                            .map_or_else(Vec::new, |v| literals(v, &format!("{at}/open"), diags));
                        let close = match blocks.get("close") {
                            Some(v) => literal(v, &format!("{at}/close"), diags)?,
                            None => {
                                diags.error(
                                    format!("{at}/close"),
                                    "missing",
                                    "the literal each block closes with",
                                );
                                return None;
                            }
                        };
                        Some(ListBlocks { open, close })
                    }
                },
            })
        }
    };
    let objects = flag(object.get("objects"), "/tool_calls/objects", diags);
    let open = object
        .get("open")
        .map_or_else(Vec::new, |v| literals(v, "/tool_calls/open", diags));
    let pythonic = flag(object.get("pythonic"), "/tool_calls/pythonic", diags);
    let recipients = flag(object.get("recipients"), "/tool_calls/recipients", diags);
    if recipients {
        let node = schema.root().property(&field);
        let why = match (list.is_some() || objects || pythonic, node) {
            (true, _) => Some(
                "a field is read one way: a list, objects, pythonic calls or calls to recipients"
                    .into(),
            ),
            (false, Some(node)) => {
                super::recipients::RecipientScan::check(schema.root(), node).err()
            }
            (false, None) => None,
        };
        if let Some(why) = why {
            diags.error(
                "/tool_calls/recipients",
                format!("the calls of \"{field}\" cannot stream as calls to recipients: {why}"),
                "leave out /tool_calls (the calls then arrive with the final message)",
            );
        }
    } else if pythonic {
        let node = schema.root().property(&field);
        let why = match (list.is_some() || objects, node) {
            (true, _) => Some("a field is read one way: a list, objects or pythonic calls".into()),
            (false, Some(node)) => super::pythonic::PythonicScan::check(node).err(),
            (false, None) => None,
        };
        if let Some(why) = why {
            diags.error(
                "/tool_calls/pythonic",
                format!("the calls of \"{field}\" cannot stream as pythonic calls: {why}"),
                "leave out /tool_calls (the calls then arrive with the final message)",
            );
        }
    } else if objects {
        let node = schema.root().property(&field);
        let why = match (list.is_some(), open.as_slice(), node) {
            (true, _, _) => Some("a field is read either as a list or as objects".to_owned()),
            (false, [tag], Some(node)) => super::objects::ObjectScan::check(node, tag).err(),
            (false, _, _) => Some("objects are cut at one opener: list exactly one".to_owned()),
        };
        if let Some(why) = why {
            diags.error(
                "/tool_calls/objects",
                format!("the calls of \"{field}\" cannot stream as JSON objects: {why}"),
                "leave out /tool_calls (the calls then arrive with the final message)",
            );
        }
    } else if let (Some(node), Some(list)) = (schema.root().property(&field), &list) {
        if let Err(why) = super::list::ListScan::check(node, list.blocks.is_some()) {
            diags.error(
                "/tool_calls/list",
                format!("the calls of \"{field}\" cannot stream as a JSON list: {why}"),
                "leave out /tool_calls (the calls then arrive with the final message)",
            );
        }
    } else if let Some(node) = schema.root().property(&field) {
        if let Err(why) = super::profiled::CallScan::check(node) {
            diags.error(
                "/tool_calls/field",
                format!("the calls of \"{field}\" cannot stream one by one: {why}"),
                "leave out /tool_calls (the calls then arrive with the final message)",
            );
        }
    }
    if open.is_empty() {
        diags.error(
            "/tool_calls/open",
            "no literal opens the calls",
            "list the literals the calls' part of the output starts with, e.g. [\"<tool_call>\"]",
        );
    }
    let after = object
        .get("after")
        .map_or_else(Vec::new, |v| literals(v, "/tool_calls/after", diags));
    let leading = match object.get("leading") {
        None => None,
        Some(value) => load_leading(value, diags),
    };
    check_leading_against_root(schema, object.contains_key("leading"), diags);
    Some(CallsProfile {
        field,
        open,
        after,
        list,
        objects,
        pythonic,
        recipients,
        leading,
    })
}

/// `leading` is declared exactly when the root's substitutions reorder the output.
///
/// Why: a substitution that writes its groups out of order (Gemma 4's `\1\3\2\4`) moves text
/// written after the calls in front of them, so that text can change what the calls are, and a
/// stream that sent them at once could contradict the final message. Without such a
/// substitution the section would hold calls for nothing. This is the part of the profile's
/// claim the schema itself can show; which literals hold the calls (`held_by`) is the profile's
/// to state, and the streaming suites check it against transformers.
fn check_leading_against_root(schema: &Schema, declared: bool, diags: &mut Diagnostics) {
    let reordering = schema.root().substitutions.iter().position(|sub| {
        let groups: Vec<usize> = sub.replacement.groups().collect();
        groups.windows(2).any(|w| w[1] < w[0])
    });
    match (reordering, declared) {
        (Some(i), false) => diags.error(
            "/tool_calls/leading",
            format!(
                "missing: the schema's root substitution {i} (replacement {:?}) writes its groups \
                 out of order, so text after calls that open the output can be moved before them \
                 and change what they are",
                schema.root().substitutions[i].replacement_source
            ),
            "add \"leading\": {\"close\": …, \"held_by\": […]} naming the literal each call \
             ends at and the literals that, written after the calls, make them something else",
        ),
        (None, true) => diags.error(
            "/tool_calls/leading",
            "no root substitution of the schema moves text before the calls, so nothing written \
             after them can change them",
            "remove \"leading\"",
        ),
        _ => {}
    }
}

fn load_leading(value: &Value, diags: &mut Diagnostics) -> Option<LeadingCalls> {
    let at = "/tool_calls/leading";
    let object = object_with_keys(value, at, &LEADING_KEYS, diags)?;
    let Some(close) = object.get("close") else {
        diags.error(
            format!("{at}/close"),
            "missing",
            "the literal each leading call's block ends at, e.g. \"<tool_call|>\"",
        );
        return None;
    };
    let close = literal(close, &format!("{at}/close"), diags)?;
    let held_by = object
        .get("held_by")
        .map_or_else(Vec::new, |v| literals(v, &format!("{at}/held_by"), diags));
    if held_by.is_empty() {
        diags.error(
            format!("{at}/held_by"),
            "no literal holds the leading calls",
            "list the literals that, written after the calls, change them, e.g. [\"<|channel>thought\"]",
        );
    }
    Some(LeadingCalls { close, held_by })
}

const REASONING_KEYS: [&str; 6] = [
    "field",
    "open",
    "open_after_space",
    "header",
    "close",
    "untagged",
];
const CONTENT_KEYS: [&str; 4] = ["field", "open", "open_required", "held_if_starts"];

fn load_reasoning(
    value: &Value,
    fields: &[&str],
    diags: &mut Diagnostics,
) -> Option<ReasoningProfile> {
    let object = object_with_keys(value, "/reasoning", &REASONING_KEYS, diags)?;
    let field = field_name(object.get("field"), "/reasoning/field", fields, diags)?;
    let open = object
        .get("open")
        .and_then(|v| literal(v, "/reasoning/open", diags));
    let header = object
        .get("header")
        .and_then(|v| literal(v, "/reasoning/header", diags));
    let open_after_space = flag(
        object.get("open_after_space"),
        "/reasoning/open_after_space",
        diags,
    );
    let close = object
        .get("close")
        .map_or_else(Vec::new, |v| literals(v, "/reasoning/close", diags));
    let untagged = match object.get("untagged") {
        None => Untagged::Content,
        Some(Value::String(name)) => match Untagged::from_name(name) {
            Some(u) => u,
            None => {
                diags.error(
                    "/reasoning/untagged",
                    format!("unknown value \"{name}\""),
                    format!("one of: {}", Untagged::NAMES.join(", ")),
                );
                Untagged::Content
            }
        },
        Some(other) => {
            diags.error(
                "/reasoning/untagged",
                format!("expected a string, found {}", diag::json_kind(other)),
                format!("one of: {}", Untagged::NAMES.join(", ")),
            );
            Untagged::Content
        }
    };
    if close.is_empty() && untagged != Untagged::Content {
        diags.error(
            "/reasoning/close",
            "reasoning that untagged text opens needs a closer",
            "list the literals that end reasoning, e.g. [\"</think>\"]",
        );
    }
    Some(ReasoningProfile {
        field,
        open,
        open_after_space,
        header,
        close,
        untagged,
    })
}

fn load_content(value: &Value, fields: &[&str], diags: &mut Diagnostics) -> Option<ContentProfile> {
    let object = object_with_keys(value, "/content", &CONTENT_KEYS, diags)?;
    let field = field_name(object.get("field"), "/content/field", fields, diags)?;
    let open = object
        .get("open")
        .map_or_else(Vec::new, |v| literals(v, "/content/open", diags));
    let open_required = flag(object.get("open_required"), "/content/open_required", diags);
    if open_required && open.is_empty() {
        diags.error(
            "/content/open_required",
            "content that needs an opener has none listed",
            "list the openers in /content/open",
        );
    }
    let held_if_starts = object
        .get("held_if_starts")
        .map_or_else(Vec::new, |v| literals(v, "/content/held_if_starts", diags));
    Some(ContentProfile {
        field,
        open,
        open_required,
        held_if_starts,
    })
}

fn object_with_keys<'v>(
    value: &'v Value,
    pointer: &str,
    keys: &[&str],
    diags: &mut Diagnostics,
) -> Option<&'v Map> {
    let Some(object) = value.as_object() else {
        diags.error(
            pointer,
            format!("expected an object, found {}", diag::json_kind(value)),
            format!("an object with keys: {}", keys.join(", ")),
        );
        return None;
    };
    for key in object.keys() {
        if !keys.contains(&key.as_str()) {
            let fix = match diag::closest(key, keys) {
                Some(near) => format!("did you mean \"{near}\"?"),
                None => format!("keys: {}", keys.join(", ")),
            };
            diags.error(
                format!("{pointer}/{}", crate::schema::escape_pointer_token(key)),
                format!("unknown key \"{key}\""),
                fix,
            );
        }
    }
    Some(object)
}

fn field_name(
    value: Option<&Value>,
    pointer: &str,
    fields: &[&str],
    diags: &mut Diagnostics,
) -> Option<String> {
    match value {
        Some(Value::String(name)) if fields.contains(&name.as_str()) => Some(name.clone()),
        Some(Value::String(name)) => {
            let fix = match diag::closest(name, fields) {
                Some(near) => format!("did you mean \"{near}\"?"),
                None => format!("the schema's root properties: {}", fields.join(", ")),
            };
            diags.error(
                pointer,
                format!("\"{name}\" is not a property of the schema's root"),
                fix,
            );
            None
        }
        Some(other) => {
            diags.error(
                pointer,
                format!("expected a string, found {}", diag::json_kind(other)),
                "the name of a root property",
            );
            None
        }
        None => {
            diags.error(pointer, "missing", "the name of a root property");
            None
        }
    }
}

fn flag(value: Option<&Value>, pointer: &str, diags: &mut Diagnostics) -> bool {
    match value {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            diags.error(
                pointer,
                format!("expected true or false, found {}", diag::json_kind(other)),
                "true or false",
            );
            false
        }
    }
}

fn literal(value: &Value, pointer: &str, diags: &mut Diagnostics) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::String(_) => {
            diags.error(
                pointer,
                "an empty marker matches everywhere",
                "a non-empty literal",
            );
            None
        }
        other => {
            diags.error(
                pointer,
                format!("expected a string, found {}", diag::json_kind(other)),
                "a literal string",
            );
            None
        }
    }
}

fn literals(value: &Value, pointer: &str, diags: &mut Diagnostics) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| literal(item, &format!("{pointer}/{i}"), diags))
            .collect(),
        other => {
            diags.error(
                pointer,
                format!(
                    "expected a list of strings, found {}",
                    diag::json_kind(other)
                ),
                "a list of literal strings",
            );
            Vec::new()
        }
    }
}

//! Completeness checks of shipped families: what a family's schema would drop without a word.
//!
//! The shipped x-regex schemas are pinned to the reference (`recursive_parse` in transformers
//! 5.10.4: the conformance suite checks them case by case), and some of them succeed while leaving
//! out text the model wrote: Command R7B's schema reads the first of several action blocks, gives
//! no call for a lone action object, and `"name": null` for an action written with
//! `name`/`arguments`; Apriel's and Nemotron's read the first call list and swallow what follows
//! it; the Mistral and Llama schemas drop keys a call item should not have; the schemas whose
//! calls are iterated in a region (Hermes, Qwen, DeepSeek, …) drop text between or after the
//! calls; LFM2's drops text after its call lists, gpt-oss's text outside the messages it reads.
//! A [`Check`] sits above
//! such a schema (attached by [`Schema::with_check`]; `chatparse::shipped` attaches each family's):
//! it reads the output as the family's chat template writes it and names every part the message
//! would not carry. Strict parsing then fails with [`ParseErrorKind::NotUnderstood`] (what, and
//! where); lenient parsing sets the part aside as a [`Malformed`](super::Malformed) with its text
//! and span and keeps the rest.
//!
//! A check reads the output text (and, for the call region and gpt-oss, the schema's own
//! patterns), so the interpreter, the streams and the generated parsers run the same one; the
//! generated parsers take the call region's, gpt-oss's and functionary v3.2's matches from their
//! own parse instead of searching again ([`Check::verify_parse`], same verdict). It looks at output whose schema
//! parse succeeded: what the schema itself refuses is reported by the schema.
//!
//! [`ParseErrorKind::NotUnderstood`]: crate::ParseErrorKind::NotUnderstood

use std::borrow::Cow;

use crate::error::ParseError;
use crate::py::json;
use crate::value::Value;

use super::Schema;

pub(super) mod recipients;

/// A shipped family's completeness check (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// `cohere_command_r7b`: thinking, one action block of `{"tool_call_id", "tool_name",
    /// "parameters"}` items in a JSON list, and a response block; nothing outside them.
    CohereCommandR7b,
    /// `apriel`: one `<tool_calls>[…]</tool_calls>` list of `{"name", "arguments", "id"}` items,
    /// nothing after it but the end token.
    Apriel,
    /// `nemotron_nano_v2`: one `<TOOLCALL>[…]</TOOLCALL>` list of `{"name", "arguments"}` items,
    /// nothing after it but the end token.
    NemotronNanoV2,
    /// `mistral_nemo`, `mistral_small_3_1`: the `[TOOL_CALLS]` list's items have the keys
    /// `name`, `arguments`, `id` only.
    MistralJsonList,
    /// `llama3_json`: each call object has the keys `name`, `parameters` (or `arguments`) and
    /// `type` only, not both `parameters` and `arguments`.
    Llama3Json,
    /// The families whose root pattern cuts a `tool_calls` region and whose calls are the
    /// matches of an `x-regex-iterator` in it (Hermes, Qwen, DeepSeek, Kimi, GLM, MiniMax, …):
    /// text in the region outside every call (between two calls, after the last) other than
    /// markup tags (`</tool_call>`, `<|tool_calls_section_end|>`, …) and white space. The
    /// templates write none; the schemas drop it.
    CallGaps,
    /// `lfm2`: nothing after the call lists (`<|tool_call_start|>[…]<|tool_call_end|>`, several
    /// joined by white space) but the end token.
    Lfm2,
    /// `gpt_oss`: nothing outside the harmony messages the schema reads (analysis, final, and
    /// calls to `functions.*`) but their headers.
    GptOss,
    /// `functionary_v3_2`: what [`Check::CallGaps`] names, and every part of the output outside
    /// the content and the calls the root pattern reads, up to `<|eot_id|>`, other than the
    /// format's markup (`>>>`, the `all` recipient and its newline) and white space: text
    /// written without a recipient (`Hello`, `all Hello`), text after a `>>>all\n` that follows
    /// the calls, and a recipient cut at the end of the output (`>>>get_wea`); and a second
    /// `>>>all\n` block after the text, which the schema reads as a call named `all`. The template
    /// writes `>>>all\n` and the text, then `>>>NAME\n` and the arguments of each call; the
    /// schema drops the rest.
    FunctionaryV3_2,
}

/// A part of the output the schema's message would not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    /// The message field it belongs to (`tool_calls`, `content`, …).
    pub field: &'static str,
    /// Its byte range in the output.
    pub span: (usize, usize),
    /// What it is and why it is not understood (borrowed where the wording is fixed).
    pub what: Cow<'static, str>,
    /// What the schema made of it, when anything: the index of the call it gave among the
    /// field's items, or the whole field.
    pub read_as: ReadAs,
}

/// What the schema made of an [`Unread`] part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAs {
    /// Nothing: the part is not in the message at all.
    Nothing,
    /// The item with this index (in output order, counting every item the schema read) of the
    /// field's array: a call with parts left out.
    Item(usize),
    /// The whole field's value.
    Field,
}

use crate::support::Markers;

static APRIEL_OPENERS: Markers = Markers {
    first_bytes: b"<",
    literals: &["<tool_calls>"],
};
static NEMOTRON_OPENERS: Markers = Markers {
    first_bytes: b"<",
    literals: &["<TOOLCALL>"],
};
static MISTRAL_OPENERS: Markers = Markers {
    first_bytes: b"[",
    literals: &["[TOOL_CALLS]"],
};
static LLAMA3_OPENERS: Markers = Markers {
    first_bytes: b"<{",
    literals: &["<|python_tag|>", "{"],
};
static LFM2_OPENERS: Markers = Markers {
    first_bytes: b"<",
    literals: &["<|tool_call_start|>"],
};

impl Check {
    /// The check of a shipped schema, by its name.
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// assert_eq!(Check::for_shipped("cohere_command_r7b"), Some(Check::CohereCommandR7b));
    /// assert_eq!(Check::for_shipped("qwen3"), Some(Check::CallGaps));
    /// assert_eq!(Check::for_shipped("granite3_3"), None);
    /// ```
    pub fn for_shipped(name: &str) -> Option<Check> {
        Some(match name {
            "cohere_command_r7b" => Check::CohereCommandR7b,
            "apriel" => Check::Apriel,
            "nemotron_nano_v2" => Check::NemotronNanoV2,
            "mistral_nemo" | "mistral_small_3_1" => Check::MistralJsonList,
            "llama3_json" => Check::Llama3Json,
            "deepseek_r1" | "deepseek_v3_1" | "deepseek_v3_2" | "ernie4_5" | "functionary_v3_1"
            | "gemma4" | "glm4_5" | "hermes" | "kimi_k2" | "minimax_m2" | "mistral_small"
            | "qwen3" | "qwen3_5" | "qwen3_coder" | "seed_oss" | "smollm3" => Check::CallGaps,
            "functionary_v3_2" => Check::FunctionaryV3_2,
            "lfm2" => Check::Lfm2,
            "gpt_oss" => Check::GptOss,
            _ => return None,
        })
    }

    /// Every part of `text` the family's schema (`schema`, which the call-region check reads
    /// its patterns from) would leave out of the message, in output order (empty when the
    /// message carries all of it).
    ///
    /// ```
    /// use chatparse_runtime::schema::Check;
    /// let schema = chatparse_runtime::Schema::from_json_str(r#"{"type": "object"}"#)?;
    /// let text = r#"<|START_ACTION|>[{"name": "f", "arguments": {}}]<|END_ACTION|>"#;
    /// let unread = Check::CohereCommandR7b.unread(&schema, text);
    /// assert_eq!(unread.len(), 1);
    /// assert_eq!(&text[unread[0].span.0..unread[0].span.1], r#"{"name": "f", "arguments": {}}"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unread(&self, schema: &Schema, text: &str) -> Vec<Unread> {
        let mut out = match self {
            Check::CohereCommandR7b => cohere(text),
            Check::Apriel => list_block(
                text,
                ListBlock {
                    open: "<tool_calls>",
                    close: "</tool_calls>",
                    ends: &["<|end|>"],
                    markers: &["[END FINAL RESPONSE]"],
                    keys: &["name", "arguments", "id"],
                    what: "Apriel",
                },
            ),
            Check::NemotronNanoV2 => list_block(
                text,
                ListBlock {
                    open: "<TOOLCALL>",
                    close: "</TOOLCALL>",
                    ends: &["<SPECIAL_12>"],
                    markers: &[],
                    keys: &["name", "arguments"],
                    what: "Nemotron Nano v2",
                },
            ),
            Check::MistralJsonList => mistral(text),
            Check::Llama3Json => llama3(text),
            Check::CallGaps => call_gaps(schema, text),
            Check::Lfm2 => lfm2(text),
            Check::GptOss => gpt_oss(schema, text),
            Check::FunctionaryV3_2 => recipients::unread(schema, text),
        };
        out.sort_by_key(|u| u.span);
        out
    }

    /// Literals without which the check reports nothing: each of these checks starts from its
    /// format's call opener and returns empty when it is absent (`list_block`, `mistral`, `lfm2`;
    /// `llama3` also reads a call object that opens the output, which needs a `{`). `None` for
    /// the checks that report text outside what the schema read (Command R7B, gpt-oss) or read
    /// the schema's own region (the call gaps).
    pub(crate) const fn openers(&self) -> Option<&'static crate::support::Markers> {
        Some(match self {
            Check::Apriel => &APRIEL_OPENERS,
            Check::NemotronNanoV2 => &NEMOTRON_OPENERS,
            Check::MistralJsonList => &MISTRAL_OPENERS,
            Check::Llama3Json => &LLAMA3_OPENERS,
            Check::Lfm2 => &LFM2_OPENERS,
            Check::CohereCommandR7b | Check::CallGaps | Check::GptOss | Check::FunctionaryV3_2 => {
                return None
            }
        })
    }

    /// `Ok` when the message carries all of `text`; else the first part it does not, as a
    /// [`ParseErrorKind::NotUnderstood`](crate::ParseErrorKind::NotUnderstood) error.
    pub fn verify(&self, schema: &Schema, text: &str) -> Result<(), ParseError> {
        match self.unread(schema, text).into_iter().next() {
            None => Ok(()),
            Some(u) => Err(u.into_error(text)),
        }
    }
}

impl Unread {
    /// The [`ParseErrorKind::NotUnderstood`](crate::ParseErrorKind::NotUnderstood) error a
    /// strict parse of `text` fails with.
    pub(crate) fn into_error(self, text: &str) -> ParseError {
        // Borrowed for the fields the checks name, and not `format!` for others: on a short
        // refused message the formatting machinery was a sixth of the parse, and each
        // allocation a tenth.
        let pointer = match self.field {
            "content" => Cow::Borrowed("/properties/content"),
            "tool_calls" => Cow::Borrowed("/properties/tool_calls"),
            field => {
                let mut pointer = String::with_capacity("/properties/".len() + field.len());
                pointer.push_str("/properties/");
                pointer.push_str(field);
                Cow::Owned(pointer)
            }
        };
        ParseError::not_understood(pointer, self.what, self.span, text)
    }
}

/// The first occurrence of `needle` (one of the formats' markers, a few bytes) at or after
/// `from`.
///
/// Why not `str::find`: it sets up a two-way searcher on every call (about 250 instructions),
/// which was most of a check's cost on a short message (Command R7B's check searched its seven
/// markers: 9,300 instructions on a 32-byte message). A `memchr` for the first byte and a
/// comparison at each hit cost a few instructions on text without it; at most `needle.len()`
/// bytes are compared per hit, so a marker-length constant bounds the work per byte.
pub(crate) fn find_from(text: &str, needle: &str, from: usize) -> Option<usize> {
    let hay = text.get(from..)?.as_bytes();
    let Some((&first, _)) = needle.as_bytes().split_first() else {
        return Some(from);
    };
    memchr::memchr_iter(first, hay)
        .find(|&i| hay[i..].starts_with(needle.as_bytes()))
        .map(|i| from + i)
}

/// [`find_from`] for a needle of any length (text the check found, not a marker): linear in the
/// text whatever the needle.
fn find_text_from(text: &str, needle: &str, from: usize) -> Option<usize> {
    memchr::memmem::find(text.get(from..)?.as_bytes(), needle.as_bytes()).map(|i| from + i)
}

/// Where Python's `$` (no MULTILINE) first matches at or after `from`: before a final `\n`, or
/// at the end.
fn dollar_from(text: &str, from: usize) -> usize {
    if text.ends_with('\n') && from < text.len() {
        text.len() - 1
    } else {
        text.len()
    }
}

/// The earliest of `ends` at or after `from`: (start, end) of the match, or `$`'s position.
fn first_end(text: &str, from: usize, ends: &[&str], dollar: bool) -> (usize, usize) {
    let mut best = if dollar {
        let d = dollar_from(text, from);
        (d, d)
    } else {
        (text.len(), text.len())
    };
    if let Some((at, end)) = find_first_of(text, from, ends) {
        if at < best.0 {
            best = (at, at + end.len());
        }
    }
    best
}

/// The earliest of `needles` at or after `from`, and which (the first in the list when two
/// start at the same place). Needles that share their first byte (every format's end tokens
/// start with `<`) take one `memchr` pass, where a search per needle passed over the whole
/// text once for each: four passes over a 4 KB Llama 3 message without any.
fn find_first_of<'n>(text: &str, from: usize, needles: &[&'n str]) -> Option<(usize, &'n str)> {
    let hay = text.get(from..)?.as_bytes();
    let first = needles.first().and_then(|n| n.as_bytes().first().copied());
    if let Some(first) = first.filter(|&b| needles.iter().all(|n| n.as_bytes().first() == Some(&b)))
    {
        return memchr::memchr_iter(first, hay).find_map(|i| {
            let rest = &hay[i..];
            needles
                .iter()
                .find(|n| rest.starts_with(n.as_bytes()))
                .map(|n| (from + i, *n))
        });
    }
    needles
        .iter()
        .filter_map(|n| find_from(text, n, from).map(|i| (i, *n)))
        .min_by_key(|(i, _)| *i)
}

/// The byte range of `s` with surrounding whitespace (Python's `\s`, as far as it matters
/// here: Unicode white space) removed, offset by `at`.
fn trimmed(s: &str, at: usize) -> Option<(usize, usize)> {
    let start = s.len() - s.trim_start().len();
    let end = s.trim_end().len();
    (start < end).then_some((at + start, at + end))
}

/// A JSON value read without building it (the schema's parse has decoded it already): where it
/// is, its kind, and for an object its keys (decoded) with where each value starts.
struct Shallow<'t> {
    span: (usize, usize),
    kind: &'static str,
    keys: Vec<(Cow<'t, str>, usize)>,
}

impl Shallow<'_> {
    fn key(&self, name: &str) -> Option<usize> {
        self.keys.iter().find(|(k, _)| k == name).map(|(_, at)| *at)
    }
}

fn ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b" \t\n\r".contains(b)) {
        i += 1;
    }
    i
}

/// Where the JSON string at `i` (a `"`) ends, past its closing quote. (`memchr2` jumps to the
/// next quote or backslash: strings are most of a call's text, and a byte loop cost about eight
/// instructions a byte there.)
fn skip_string(bytes: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', bytes.get(j..)?)?;
        match bytes.get(j)? {
            b'\\' => j += 2,
            _ => return Some(j + 1),
        }
    }
}

/// Where the JSON value at `i` ends.
fn skip_value(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match bytes.get(j)? {
                    b'"' => {
                        j = skip_string(bytes, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while bytes.get(j).is_some_and(|b| !b",]} \t\n\r".contains(b)) {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The JSON value at `at`, shallowly.
fn shallow(text: &str, at: usize) -> Option<Shallow<'_>> {
    let bytes = text.as_bytes();
    let kind = match bytes.get(at)? {
        b'{' => "object",
        b'[' => "array",
        b'"' => "string",
        b't' | b'f' => "boolean",
        b'n' => "null",
        _ => "number",
    };
    let mut keys = Vec::new();
    if kind == "object" {
        // Whether a bare value (a number, a literal) held a bracket or a quote, which the
        // bracket count would have read as such (text that is not JSON).
        let mut bracket_in_bare_value = false;
        let mut i = ws(bytes, at + 1);
        while bytes.get(i) == Some(&b'"') {
            let key_end = skip_string(bytes, i)?;
            let raw = text.get(i + 1..key_end - 1)?;
            let key = if raw.contains('\\') {
                match json::loads(text.get(i..key_end)?) {
                    Ok(Value::String(k)) => Cow::Owned(k),
                    _ => return None,
                }
            } else {
                Cow::Borrowed(raw)
            };
            i = ws(bytes, key_end);
            if bytes.get(i) != Some(&b':') {
                return None;
            }
            let value = ws(bytes, i + 1);
            keys.push((key, value));
            let value_end = skip_value(bytes, value)?;
            if !matches!(bytes.get(value), Some(b'"' | b'{' | b'[')) {
                bracket_in_bare_value |= bytes
                    .get(value..value_end)
                    .unwrap_or_default()
                    .iter()
                    .any(|b| matches!(b, b'{' | b'[' | b'"'));
            }
            i = ws(bytes, value_end);
            if bytes.get(i) == Some(&b',') {
                i = ws(bytes, i + 1);
            }
        }
        // Where the keys end at a `}`, that is the object's end as the bracket count finds it
        // (every value between was skipped by that count, and no bare value held a bracket or
        // a quote): no second pass over the object.
        if bytes.get(i) == Some(&b'}') && !bracket_in_bare_value {
            return Some(Shallow {
                span: (at, i + 1),
                kind,
                keys,
            });
        }
    }
    let end = skip_value(bytes, at)?;
    Some(Shallow {
        span: (at, end),
        kind,
        keys,
    })
}

/// The items of the JSON array that starts at `at` (a `[`), shallowly; `None` when the text
/// there is not one.
fn array_items(text: &str, at: usize) -> Option<Vec<Shallow<'_>>> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let mut items = Vec::new();
    let mut i = ws(bytes, at + 1);
    if bytes.get(i) == Some(&b']') {
        return Some(items);
    }
    loop {
        let item = shallow(text, i)?;
        i = ws(bytes, item.span.1);
        items.push(item);
        match bytes.get(i) {
            Some(b',') => i = ws(bytes, i + 1),
            Some(b']') => return Some(items),
            _ => return None,
        }
    }
}

/// [`array_items`] where [`shallow`] also reads an array: `None` as well when the bracket count
/// finds no end to it. Why: one pass over the list where Command R7B's check read it twice (the
/// count for the kind, then the items). Where the walk reaches the `]` the count reaches it too
/// (items are skipped by the same count, strings alike), except when a bare item (a number or
/// a literal) holds a bracket or a quote, which the count reads as such: then the count decides.
fn counted_array_items(text: &str, at: usize) -> Option<Vec<Shallow<'_>>> {
    let items = array_items(text, at)?;
    let bracket_in_bare_item = items.iter().any(|item| {
        !matches!(item.kind, "object" | "array" | "string")
            && text
                .as_bytes()
                .get(item.span.0..item.span.1)
                .unwrap_or_default()
                .iter()
                .any(|b| matches!(b, b'{' | b'[' | b'"'))
    });
    if bracket_in_bare_item {
        skip_value(text.as_bytes(), at)?;
    }
    Some(items)
}

/// Checks the keys of one call object: `None` when they are the format's.
fn item_keys(item: &Shallow<'_>, allowed: &[&str], required: &str, format: &str) -> Option<String> {
    if item.kind != "object" {
        return Some(format!(
            "a {} where {format} writes a call object",
            item.kind
        ));
    }
    let unknown: Vec<&str> = item
        .keys
        .iter()
        .map(|(k, _)| k.as_ref())
        .filter(|k| !allowed.contains(k))
        .collect();
    // The format's keys, written out only for a message that names them (not for every call).
    let wanted = || allowed.join(", ");
    if !unknown.is_empty() {
        let wanted = wanted();
        return Some(format!(
            "a call with the key{} {} that {format} does not write (its keys: {wanted}); the \
             schema would drop {}",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            if unknown.len() == 1 { "it" } else { "them" },
        ));
    }
    if item.key(required).is_none() {
        let wanted = wanted();
        return Some(format!(
            "a call without \"{required}\" (the keys {format} writes: {wanted})"
        ));
    }
    None
}

// --- Command R7B -------------------------------------------------------------------------------

const START_THINKING: &str = "<|START_THINKING|>";
const END_THINKING: &str = "<|END_THINKING|>";
const START_ACTION: &str = "<|START_ACTION|>";
const END_ACTION: &str = "<|END_ACTION|>";
const START_RESPONSE: &str = "<|START_RESPONSE|>";
const END_RESPONSE: &str = "<|END_RESPONSE|>";
const END_OF_TURN: &str = "<|END_OF_TURN_TOKEN|>";
const COHERE_MARKERS: [&str; 7] = [
    START_THINKING,
    END_THINKING,
    START_ACTION,
    END_ACTION,
    START_RESPONSE,
    END_RESPONSE,
    END_OF_TURN,
];
const COHERE_KEYS: [&str; 3] = ["tool_call_id", "tool_name", "parameters"];

/// The body the schema's pattern `OPEN(.*?)(?:ENDS|$)` reads: the first `open` (for thinking,
/// the first whose body does not start with an end: the pattern's look-ahead), as (block start,
/// body start, body end, block end).
fn cohere_block(
    text: &str,
    open: &str,
    ends: &[&str],
    skip_empty: bool,
) -> Option<(usize, usize, usize, usize)> {
    let mut from = 0;
    while let Some(at) = find_from(text, open, from) {
        let body = at + open.len();
        let (end, block_end) = first_end(text, body, ends, true);
        if !(skip_empty && end == body) {
            return Some((at, body, end, block_end));
        }
        from = at + 1;
    }
    None
}

fn cohere(text: &str) -> Vec<Unread> {
    let thinking = cohere_block(
        text,
        START_THINKING,
        &[END_THINKING, START_ACTION, START_RESPONSE, END_OF_TURN],
        true,
    );
    let action = cohere_block(text, START_ACTION, &[END_ACTION, END_OF_TURN], false);
    let response = cohere_block(text, START_RESPONSE, &[END_RESPONSE, END_OF_TURN], false);
    let read: Vec<(usize, usize)> = [thinking, action, response]
        .into_iter()
        .flatten()
        .map(|(_, body, end, _)| (body, end))
        .collect();
    let mut out = Vec::new();
    // The turn ends at its end token: what follows it is dropped, as every family drops text
    // after an end token.
    let cut = find_from(text, END_OF_TURN, 0).unwrap_or(text.len());
    // The text between markers, each piece with the marker before it.
    let mut at = 0;
    let mut before: Option<&str> = None;
    while at < cut {
        // Every marker starts with `<|`: one pass, where a search per marker passed over every
        // other marker's `<` seven times.
        let next = find_first_of(text, at, &COHERE_MARKERS).filter(|(i, _)| *i < cut);
        let piece_end = next.map_or(cut, |(i, _)| i);
        let piece = text.get(at..piece_end).unwrap_or_default();
        if let Some((start, end)) = trimmed(piece, at) {
            let is_read = read.iter().any(|&(a, b)| a <= start && end <= b);
            if !is_read {
                out.push(cohere_unread(before, at, (start, end), next));
            }
        }
        match next {
            Some((i, m)) => {
                at = i + m.len();
                before = Some(m);
            }
            None => break,
        }
    }
    // The action block the schema read: a JSON list of the template's actions.
    if let Some((block, body, end, block_end)) = action {
        let text_body = text.get(body..end).unwrap_or_default();
        let start = body + (text_body.len() - text_body.trim_start().len());
        match text.as_bytes().get(start) {
            Some(b'[') => {
                for (index, item) in counted_array_items(text, start)
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                {
                    let name_kind = item
                        .key("tool_name")
                        .and_then(|at| shallow(text, at))
                        .map(|v| v.kind);
                    let problem = match name_kind {
                        Some(kind) if kind != "string" => Some(format!(
                            "a call whose \"tool_name\" is a {kind}, not a string"
                        )),
                        _ => item_keys(&item, &COHERE_KEYS, "tool_name", "Command R7B"),
                    };
                    if let Some(problem) = problem {
                        out.push(Unread {
                            field: "tool_calls",
                            span: item.span,
                            what: format!("action {index}: {problem}").into(),
                            read_as: ReadAs::Item(index),
                        });
                    }
                }
            }
            Some(_) => out.extend(shallow(text, start).map(|other| {
                Unread {
                    field: "tool_calls",
                    span: (block, block_end.max(end)),
                    what: format!(
                        "the action block holds a JSON {}, not the list of actions Command R7B \
                     writes ([{{\"tool_call_id\", \"tool_name\", \"parameters\"}}, …]); the \
                     schema would read no call from it",
                        other.kind
                    )
                    .into(),
                    read_as: ReadAs::Field,
                }
            })),
            None => {}
        }
    }
    out
}

/// A piece of Command R7B output outside what the schema reads.
/// The part of a text holding no `<|` (so no marker of Command R7B's) that the check reports:
/// the whole text, trimmed, when anything is left.
pub(crate) fn cohere_text_outside(text: &str) -> Option<Unread> {
    trimmed(text, 0).map(|span| cohere_unread(None, 0, span, None))
}

fn cohere_unread(
    before: Option<&str>,
    piece_start: usize,
    span: (usize, usize),
    next: Option<(usize, &str)>,
) -> Unread {
    let (field, block, closer) = match before {
        Some(START_ACTION) => ("tool_calls", "action", END_ACTION),
        Some(START_THINKING) => ("reasoning_content", "thinking", END_THINKING),
        Some(START_RESPONSE) => ("content", "response", END_RESPONSE),
        _ => {
            return Unread {
                field: "content",
                span,
                what: "text outside Command R7B's blocks: the model writes its answer in \
                       <|START_RESPONSE|>…<|END_RESPONSE|>, its reasoning in \
                       <|START_THINKING|>…<|END_THINKING|> and its calls in \
                       <|START_ACTION|>…<|END_ACTION|>"
                    .into(),
                read_as: ReadAs::Nothing,
            }
        }
    };
    let opener = before.unwrap_or_default();
    // The whole block, from its opener to its closer when one follows.
    let start = piece_start - opener.len();
    let end = match next {
        Some((i, m)) if m == closer => i + m.len(),
        _ => span.1,
    };
    Unread {
        field,
        span: (start, end),
        what: if block == "action" {
            "a second action block: Command R7B writes one per turn (its chat template renders \
             all of a turn's calls in one <|START_ACTION|> list), and the schema reads the first"
                .into()
        } else {
            format!(
                "a second {block} block: Command R7B writes one per turn, and the schema reads \
                 the first"
            )
            .into()
        },
        read_as: ReadAs::Nothing,
    }
}

// --- one call list after a marker --------------------------------------------------------------

struct ListBlock {
    open: &'static str,
    close: &'static str,
    /// End tokens: the turn ends there.
    ends: &'static [&'static str],
    /// Markers that may follow the list (not text).
    markers: &'static [&'static str],
    keys: &'static [&'static str],
    what: &'static str,
}

/// Apriel's and Nemotron's calls: the schema reads the first list after `open` and swallows
/// what follows its `close`.
fn list_block(text: &str, f: ListBlock) -> Vec<Unread> {
    let mut out = Vec::new();
    // The schema reads nothing after the first end token.
    let (turn_end, _) = first_end(text, 0, f.ends, false);
    let Some(open) = find_from(&text[..turn_end], f.open, 0) else {
        return out;
    };
    let body = open + f.open.len();
    let list_at = body + (text[body..].len() - text[body..].trim_start().len());
    if let Some(items) = array_items(text, list_at) {
        for (index, item) in items.into_iter().enumerate() {
            if let Some(problem) = item_keys(&item, f.keys, "name", f.what) {
                out.push(Unread {
                    field: "tool_calls",
                    span: item.span,
                    what: format!("call {index}: {problem}").into(),
                    read_as: ReadAs::Item(index),
                });
            }
        }
    }
    let Some(close) = find_from(text, f.close, body).filter(|&c| c < turn_end) else {
        return out;
    };
    // After the list: only markers and white space until the end token.
    let mut at = close + f.close.len();
    while at < turn_end {
        let next = f
            .markers
            .iter()
            .filter_map(|m| find_from(text, m, at).map(|i| (i, m.len())))
            .filter(|&(i, _)| i < turn_end)
            .min();
        let piece_end = next.map_or(turn_end, |(i, _)| i);
        if let Some((start, _)) = trimmed(text.get(at..piece_end).unwrap_or_default(), at) {
            let end = text[..turn_end].trim_end().len();
            let second = text[start..].starts_with(f.open);
            out.push(Unread {
                field: "tool_calls",
                span: (start, end),
                what: if second {
                    format!(
                        "a second {} list: {} writes all of a turn's calls in one list, and \
                         the schema reads the first",
                        f.open, f.what
                    )
                    .into()
                } else {
                    format!(
                        "text after the call list ({}…{}): {} writes nothing there, and the \
                         schema would drop it",
                        f.open, f.close, f.what
                    )
                    .into()
                },
                read_as: ReadAs::Nothing,
            });
            break;
        }
        match next {
            Some((i, len)) => at = i + len,
            None => break,
        }
    }
    out
}

// --- Mistral JSON list -------------------------------------------------------------------------

fn mistral(text: &str) -> Vec<Unread> {
    let mut out = Vec::new();
    let Some(marker) = find_from(text, "[TOOL_CALLS]", 0) else {
        return out;
    };
    let body = marker + "[TOOL_CALLS]".len();
    let at = body + (text[body..].len() - text[body..].trim_start().len());
    let items = match text.as_bytes().get(at) {
        Some(b'[') => array_items(text, at).unwrap_or_default(),
        Some(b'{') => shallow(text, at).into_iter().collect(),
        _ => Vec::new(),
    };
    for (index, item) in items.into_iter().enumerate() {
        if let Some(problem) = item_keys(&item, &["name", "arguments", "id"], "name", "Mistral") {
            out.push(Unread {
                field: "tool_calls",
                span: item.span,
                what: format!("call {index}: {problem}").into(),
                read_as: ReadAs::Item(index),
            });
        }
    }
    out
}

// --- Llama 3 JSON ------------------------------------------------------------------------------

fn llama3(text: &str) -> Vec<Unread> {
    const TAG: &str = "<|python_tag|>";
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let ws = |mut i: usize| {
        while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        i
    };
    // The turn ends at the first end token: the schema reads nothing after it.
    let (turn_end, _) = first_end(
        text,
        0,
        &["<|eom_id|>", "<|eot_id|>", "<|end_of_text|>"],
        false,
    );
    let text = &text[..turn_end];
    // Where the calls start: a call object that opens the output, or the first python tag
    // followed by one (as the schema's substitution and pattern read it).
    let lead = ws(0);
    let mut at = if bytes.get(lead) == Some(&b'{') && opens_call(&text[lead..]) {
        lead
    } else {
        let mut from = 0;
        loop {
            let Some(tag) = find_from(text, TAG, from) else {
                return out;
            };
            let i = ws(tag + TAG.len());
            if bytes.get(i) == Some(&b'{') {
                break i;
            }
            from = tag + 1;
        }
    };
    let mut index = 0;
    while let Some(item) = shallow(text, at) {
        let span = item.span;
        let problem = match &item {
            item if item.key("parameters").is_some() && item.key("arguments").is_some() => Some(
                "a call with both \"parameters\" and \"arguments\": the schema would keep one"
                    .to_owned(),
            ),
            _ => item_keys(
                &item,
                &["name", "parameters", "arguments", "type"],
                "name",
                "Llama 3",
            ),
        };
        if let Some(problem) = problem {
            out.push(Unread {
                field: "tool_calls",
                span,
                what: format!("call {index}: {problem}").into(),
                read_as: ReadAs::Item(index),
            });
        }
        index += 1;
        let mut i = ws(span.1);
        if bytes.get(i) == Some(&b';') {
            i = ws(i + 1);
        } else if text[i..].starts_with(TAG) {
            i = ws(i + TAG.len());
        } else {
            break;
        }
        if bytes.get(i) != Some(&b'{') {
            break;
        }
        at = i;
    }
    out
}

/// Whether `s` starts like a call object: `{` then `"name"` or `"type"` and a colon.
fn opens_call(s: &str) -> bool {
    let rest = s[1..].trim_start();
    ["\"name\"", "\"type\""].iter().any(|k| {
        rest.strip_prefix(k)
            .is_some_and(|r| r.trim_start().starts_with(':'))
    })
}

// --- text between and after iterated calls -----------------------------------------------------

/// The calls' iterator of a schema whose root pattern cuts a `tool_calls` region that the
/// iterator reads as it is (no pattern or substitution of its own); `None` for other shapes,
/// where the call-region check has nothing to say.
pub(crate) fn call_gaps_iterator(schema: &Schema) -> Option<&super::Pattern> {
    let root = schema.root();
    let pattern = root.regex.as_deref()?;
    let calls = root.property("tool_calls")?;
    let iterator = calls.iterator.as_deref()?;
    if calls.regex.is_some() || !calls.substitutions.is_empty() {
        return None;
    }
    pattern.regex.group_index("tool_calls")?;
    Some(iterator)
}

/// The parts of the `tool_calls` region (the root pattern's group, after the root's
/// substitutions) outside every match of the calls' iterator that are more than markup and white
/// space.
fn call_gaps(schema: &Schema, text: &str) -> Vec<Unread> {
    let mut out = Vec::new();
    let Some(iterator) = call_gaps_iterator(schema) else {
        return out;
    };
    let root = schema.root();
    let Some(pattern) = &root.regex else {
        return out;
    };
    // No call anywhere in the output: no text among calls. When the calls' pattern is found by
    // a literal search this answers a message without calls in a few instructions, before the
    // root pattern runs. A pattern that any text matches (functionary's `(.+?)(?:>>>|$)`,
    // Mistral's `(?:\[TOOL_CALLS\])?(.+?)(?:\[TOOL_CALLS\]|$)`) would run its engine over the
    // whole output for nothing (9,000 instructions on a 32-byte message), so it is asked last,
    // only when a gap is to be reported: the verdict is the same either way.
    let no_call = || !matches!(iterator.regex.search(text), Ok(Some(_)));
    let literal_first = iterator.regex.uses_substring_search()
        || iterator
            .regex
            .marker_shortcut()
            .is_some_and(|(_, strip)| !strip);
    if literal_first && no_call() {
        return out;
    }
    let Some(rewritten) = root_rewritten(schema, text) else {
        return out;
    };
    let Some(group) = pattern.regex.group_index("tool_calls") else {
        return out;
    };
    let region = match pattern.regex.search(&rewritten) {
        Ok(Some(caps)) => match caps.get(group) {
            Some(region) => region,
            None => return out,
        },
        _ => return out,
    };
    let mut calls = Vec::new();
    for found in iterator.regex.find_iter(region) {
        let Ok(found) = found else {
            return out;
        };
        calls.push((found.start(), found.end()));
    }
    out = gaps_unread(
        text,
        &region_gaps(slice_offset(text, region), region, &calls),
    );
    if !literal_first && !out.is_empty() && no_call() {
        out.clear();
    }
    out
}

/// `text` after the root's substitutions, as the root pattern reads it; `None` when one fails.
fn root_rewritten<'t>(schema: &Schema, text: &'t str) -> Option<Cow<'t, str>> {
    let mut rewritten = Cow::Borrowed(text);
    for sub in &schema.root().substitutions {
        rewritten = crate::support::substitute(
            rewritten,
            &sub.pattern.regex,
            &sub.replacement,
            &sub.pattern.pointer,
        )
        .ok()?;
    }
    Some(rewritten)
}

/// A part of the calls' region outside every call that is more than markup and white space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RegionGap {
    /// Where the region starts in the output, when it is a slice of it (no substitution rewrote
    /// the text before it).
    region_at: Option<usize>,
    /// The part's byte range in the region, white space trimmed.
    range: (usize, usize),
    /// The part's text, by which it is found in the output when `region_at` is `None` (owned: the
    /// region may be a rewritten copy that is gone when the check reports).
    piece: String,
}

impl RegionGap {
    /// The same part, its region at `region_at` in the output.
    pub(crate) fn place(&mut self, region_at: usize) {
        self.region_at = Some(region_at);
    }
}

/// The parts of `region` (the root pattern's `tool_calls` group, at `region_at` in the output
/// when it is a slice of it) outside `calls` (the spans of the calls' iterator matches in it, in
/// order) that are more than markup and white space.
pub(crate) fn region_gaps(
    region_at: Option<usize>,
    region: &str,
    calls: &[(usize, usize)],
) -> Vec<RegionGap> {
    let mut at = 0;
    let mut out = Vec::new();
    for call in calls.iter().copied().map(Some).chain([None]) {
        let (a, b) = match call {
            Some((start, end)) => {
                let gap = (at, start);
                at = end.max(at);
                gap
            }
            None => (at, region.len()),
        };
        let gap = region.get(a..b).unwrap_or_default();
        if markup_only(gap) {
            continue;
        }
        let Some(range) = trimmed(gap, a) else {
            continue;
        };
        out.push(RegionGap {
            region_at,
            range,
            piece: region[range.0..range.1].to_owned(),
        });
    }
    out
}

/// What a part of the calls' region outside every call is.
const AMONG_CALLS: &str = "text among the tool calls (between two calls or after the last): the \
                           family's chat template writes the message's text before its calls, \
                           and the schema would drop this";

/// The gaps as [`Unread`] parts of the output.
pub(crate) fn gaps_unread(text: &str, gaps: &[RegionGap]) -> Vec<Unread> {
    let mut out = Vec::new();
    let mut from = 0;
    for gap in gaps {
        let (start, end) = gap.range;
        let piece = gap.piece.as_str();
        let span = match gap.region_at {
            Some(offset) => Some((offset + start, offset + end)),
            None => find_text_from(text, piece, from)
                .or_else(|| find_text_from(text, piece, 0))
                .map(|i| (i, i + piece.len())),
        };
        let Some(span) = span else { continue };
        from = span.1;
        out.push(Unread {
            field: "tool_calls",
            span,
            what: AMONG_CALLS.into(),
            read_as: ReadAs::Nothing,
        });
    }
    out
}

/// Where `slice` starts in `text`, when it is a slice of it.
fn slice_offset(text: &str, slice: &str) -> Option<usize> {
    offset_in((text.as_ptr() as usize, text.len()), slice)
}

/// Where `slice` starts in the text at `(address, length)`, when it is a slice of it.
pub(crate) fn offset_in((address, len): (usize, usize), slice: &str) -> Option<usize> {
    (slice.as_ptr() as usize)
        .checked_sub(address)
        .filter(|&offset| offset + slice.len() <= len)
}

/// Whether `s` is nothing but markup tags (`<…>` without white space inside) and white space.
fn markup_only(s: &str) -> bool {
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let Some(tag) = rest.strip_prefix('<') else {
            return false;
        };
        let Some(close) = tag.find('>') else {
            return false;
        };
        if tag[..close].chars().any(|c| c.is_whitespace() || c == '<') {
            return false;
        }
        rest = tag[close + 1..].trim_start();
    }
    true
}

// --- LFM2 --------------------------------------------------------------------------------------

fn lfm2(text: &str) -> Vec<Unread> {
    const START: &str = "<|tool_call_start|>";
    const END: &str = "<|tool_call_end|>";
    let mut out = Vec::new();
    let (turn_end, _) = first_end(text, 0, &["<|im_end|>", "<|endoftext|>"], false);
    let Some(first) = find_from(&text[..turn_end], START, 0) else {
        return out;
    };
    // The lists the schema joins: `]` <|tool_call_end|> `<|tool_call_start|>` `[`, white space
    // around each.
    let mut at = first;
    loop {
        let Some(end) = find_from(text, END, at).filter(|&e| e < turn_end) else {
            return out;
        };
        let after = end + END.len();
        let rest = &text[after..turn_end];
        let next = rest.trim_start();
        let joined = text[..end].trim_end().ends_with(']')
            && next
                .strip_prefix(START)
                .is_some_and(|r| r.trim_start().starts_with('['));
        if joined {
            at = after + (rest.len() - next.len()) + START.len();
            continue;
        }
        if let Some(span) = trimmed(rest, after) {
            let second = next.starts_with(START);
            out.push(Unread {
                field: "tool_calls",
                span,
                what: if second {
                    "a call list the schema does not join to the ones before it (only white \
                     space may stand between two lists): the schema would drop it"
                        .into()
                } else {
                    "text after the call lists (<|tool_call_start|>[…]<|tool_call_end|>): LFM2 \
                     writes nothing there, and the schema would drop it"
                        .into()
                },
                read_as: ReadAs::Nothing,
            });
        }
        return out;
    }
}

// --- gpt-oss (harmony) -------------------------------------------------------------------------

/// What the harmony format writes around messages: special tokens, the role, the channels, the
/// constraint and a recipient.
///
/// ASCII text (what the format writes) is read in one pass over its bytes; other text word by
/// word ([`harmony_scaffold_words`], which splits on Unicode white space). Why: split into
/// words, a one-call message's two gaps cost about 1,100 instructions, a twentieth of its parse.
fn harmony_scaffold(piece: &str) -> bool {
    if !piece.is_ascii() {
        return harmony_scaffold_words(piece);
    }
    let bytes = piece.as_bytes();
    // `char::is_whitespace` on ASCII.
    let space = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
    let mut i = 0;
    while i < bytes.len() {
        if space(bytes[i]) {
            i += 1;
        } else if bytes[i..].starts_with(b"<|") {
            // A special token: its `|>` within the same word.
            let mut j = i + 2;
            loop {
                match bytes.get(j) {
                    Some(b'|') if bytes.get(j + 1) == Some(&b'>') => break,
                    Some(&b) if !space(b) => j += 1,
                    _ => return false,
                }
            }
            i = j + 2;
        } else {
            // A word of the scaffold: up to white space or the next `<|`.
            let start = i;
            while i < bytes.len() && !space(bytes[i]) && !bytes[i..].starts_with(b"<|") {
                i += 1;
            }
            if !harmony_word(&piece[start..i]) {
                return false;
            }
        }
    }
    true
}

/// A word the harmony scaffold writes outside its special tokens.
fn harmony_word(token: &str) -> bool {
    matches!(
        token,
        "assistant" | "analysis" | "commentary" | "final" | "json"
    ) || token.starts_with("to=functions.")
}

/// [`harmony_scaffold`] word by word, words split on Unicode white space.
fn harmony_scaffold_words(piece: &str) -> bool {
    piece.split_whitespace().all(|word| {
        let mut rest = word;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix("<|") {
                let Some(close) = find_from(r, "|>", 0) else {
                    return false;
                };
                rest = &r[close + 2..];
                continue;
            }
            // A word is a few bytes: a byte loop, not `memchr`'s set-up per word.
            let end = rest
                .as_bytes()
                .windows(2)
                .position(|w| w == b"<|")
                .unwrap_or(rest.len());
            if !harmony_word(&rest[..end]) {
                return false;
            }
            rest = &rest[end..];
        }
        true
    })
}

fn gpt_oss(schema: &Schema, text: &str) -> Vec<Unread> {
    let out = Vec::new();
    let root = schema.root();
    let Some(properties) = root.properties.as_deref() else {
        return out;
    };
    // What the schema reads: each field's first match, every call's match (on the stack for a
    // usual message: the check allocates nothing when all is read).
    let mut inline = [(0usize, 0usize); 16];
    let mut count = 0;
    let mut spilled: Vec<(usize, usize)> = Vec::new();
    let mut add = |span: (usize, usize)| {
        if count < inline.len() {
            inline[count] = span;
            count += 1;
        } else {
            if spilled.is_empty() {
                spilled.extend_from_slice(&inline);
            }
            spilled.push(span);
        }
    };
    for property in properties {
        let node = &property.node;
        if let Some(p) = &node.regex {
            if let Ok(Some(caps)) = p.regex.search(text) {
                add((caps.start(), caps.end()));
            }
        } else if let Some(p) = &node.iterator {
            for found in p.regex.find_iter(text) {
                let Ok(found) = found else {
                    return out;
                };
                add((found.start(), found.end()));
            }
        }
    }
    let read: &mut [(usize, usize)] = if spilled.is_empty() {
        &mut inline[..count]
    } else {
        &mut spilled
    };
    outside_read(text, read)
}

/// The parts of `text` outside the spans `read` (in any order) that are more than the harmony
/// format's scaffold.
pub(crate) fn outside_read(text: &str, read: &mut [(usize, usize)]) -> Vec<Unread> {
    read.sort_unstable();
    let mut at = 0;
    let gaps = read
        .iter()
        .map(Some)
        .chain([None])
        .filter_map(|span| match span {
            Some(&(a, b)) => {
                let gap = (a > at).then_some((at, a));
                at = at.max(b);
                gap
            }
            None => Some((at, text.len())),
        });
    gaps.filter_map(|(a, b)| outside_piece(text, a, b))
        .collect()
}

/// What gpt-oss's check reports of the text from `a` to `b`, outside every harmony message the
/// schema read: nothing when it is white space or the format's scaffolding, else the piece
/// trimmed.
pub(crate) fn outside_piece(text: &str, a: usize, b: usize) -> Option<Unread> {
    let piece = text.get(a..b).unwrap_or_default();
    if harmony_scaffold(piece) {
        return None;
    }
    trimmed(piece, a).map(|span| Unread {
        field: "content",
        span,
        what: "text outside the harmony messages the schema reads (analysis, final, \
               calls to functions.*): the schema would drop it"
            .into(),
        read_as: ReadAs::Nothing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Where a JSON string ends, by the JSON grammar: past the first quote no backslash escapes.
    #[test]
    fn strings_end_past_their_closing_quote() {
        assert_eq!(skip_string(br#""abc" x"#, 0), Some(5));
        assert_eq!(skip_string(br#""a\"b" x"#, 0), Some(6));
        assert_eq!(skip_string(br#""a\\" x"#, 0), Some(5));
        assert_eq!(skip_string(br#"x "" y"#, 2), Some(4));
        assert_eq!(skip_string(br#""\u00e9\n""#, 0), Some(10));
        assert_eq!(skip_string(br#""open"#, 0), None);
        assert_eq!(skip_string(br#""ends in \"#, 0), None);
        assert_eq!(skip_string(br#""ends in \""#, 0), None);
        assert_eq!(skip_string(b"\"", 0), None);
    }

    /// A call's keys are checked against the format's, and the format's keys are named in the
    /// message only when there is one.
    #[test]
    fn a_calls_message_names_the_formats_keys() {
        let allowed = ["name", "arguments"];
        let extra = shallow(r#"{"name": "a", "zqxj": 1}"#, 0).unwrap();
        let message = item_keys(&extra, &allowed, "name", "F").unwrap();
        assert!(
            message.contains("the key zqxj that F does not write (its keys: name, arguments)"),
            "{message}"
        );
        let nameless = shallow(r#"{"arguments": {}}"#, 0).unwrap();
        let message = item_keys(&nameless, &allowed, "name", "F").unwrap();
        assert_eq!(
            message,
            r#"a call without "name" (the keys F writes: name, arguments)"#
        );
        let fine = shallow(r#"{"name": "a", "arguments": {}}"#, 0).unwrap();
        assert_eq!(item_keys(&fine, &allowed, "name", "F"), None);
    }

    proptest! {
        /// An object read shallowly ends where the bracket count ends it (as it did when the
        /// count ran first), on JSON-like text of every shape: balanced or not, keys escaped,
        /// values missing.
        #[test]
        fn a_shallow_object_ends_where_the_bracket_count_ends_it(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just("\"a\""), Just("\"b\\\"c\""),
                    Just(":"), Just(","), Just(" "), Just("1"), Just("x"), Just("\""),
                    Just("\"k\": "), Just("\"v\""), Just("\\"), Just("\n"),
                ],
                0..14,
            ),
        ) {
            let text = format!("{{{}", pieces.concat());
            let bracket_end = skip_value(text.as_bytes(), 0);
            if let Some(read) = shallow(&text, 0) {
                prop_assert_eq!(Some(read.span.1), bracket_end, "{:?}", text);
            }
            if bracket_end.is_none() {
                prop_assert!(shallow(&text, 0).is_none(), "{:?}", text);
            }
        }

        /// The items of a list read in one pass are those read after the bracket count found
        /// an array there (Command R7B's action list), on JSON-like text of every shape: bare
        /// items holding brackets or quotes, unbalanced, nested.
        #[test]
        fn counted_items_are_the_items_of_a_counted_array(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just("\"a\""), Just(":"),
                    Just(","), Just(" "), Just("1"), Just("tru{e"), Just("x"), Just("\""),
                    Just("\"k\": "), Just("n["), Just("\\"), Just("{\"tool_name\": \"f\"}"),
                ],
                0..14,
            ),
        ) {
            let text = format!("[{}", pieces.concat());
            let spans = |items: Option<Vec<Shallow<'_>>>| {
                items.map(|items| items.iter().map(|i| (i.span, i.kind)).collect::<Vec<_>>())
            };
            let two_passes = shallow(&text, 0)
                .filter(|v| v.kind == "array")
                .and_then(|_| array_items(&text, 0));
            prop_assert_eq!(
                spans(counted_array_items(&text, 0)),
                spans(two_passes),
                "{:?}",
                text
            );
        }

        /// The one pass over an ASCII gap decides as reading it word by word (split on white
        /// space, tokens up to `<|`) does, on gaps made of the scaffold's pieces, their near
        /// misses and every kind of ASCII white space.
        #[test]
        fn the_byte_pass_reads_the_scaffold_as_the_word_reading_does(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("<|end|>"), Just("<|start|>"), Just("<|channel|>"), Just("<|message|>"),
                    Just("<|constrain|>"), Just("<|call|>"), Just("<|"), Just("|>"), Just("<"),
                    Just(">"), Just("|"), Just("<||>"), Just("<|>"), Just("assistant"),
                    Just("analysis"), Just("commentary"), Just("final"), Just("json"),
                    Just("to=functions."), Just("to=functions.get_weather"), Just("to=fun"),
                    Just("assistan"), Just("x"), Just(" "), Just("\t"), Just("\n"), Just("\r"),
                    Just("\u{b}"), Just("\u{c}"), Just("\u{1c}"),
                ],
                0..10,
            ),
        ) {
            let piece = pieces.concat();
            prop_assert_eq!(harmony_scaffold(&piece), harmony_scaffold_words(&piece), "{:?}", piece);
        }

        /// The single pass finds what a search per needle found: the earliest occurrence at or
        /// after `from`, the first needle in the list on a tie.
        #[test]
        fn find_first_of_is_the_earliest_of_the_needles(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("<|START_THINKING|>"), Just("<|END_THINKING|>"),
                    Just("<|START_ACTION|>"), Just("<|END_ACTION|>"),
                    Just("<|START_RESPONSE|>"), Just("<|END_RESPONSE|>"),
                    Just("<|END_OF_TURN_TOKEN|>"), Just("<|"), Just("<"), Just("|>"),
                    Just("<|START_"), Just("x"), Just(" "), Just("é"),
                ],
                0..12,
            ),
            from_frac in 0.0f64..=1.0,
        ) {
            let text: String = pieces.concat();
            let from = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .nth(((text.len() as f64) * from_frac) as usize)
                .unwrap_or(text.len());
            let lists: [&[&str]; 5] = [
                &COHERE_MARKERS,
                &["<|eom_id|>", "<|eot_id|>", "<|end_of_text|>"],
                // One needle the prefix of another: the first listed wins a tie.
                &["<|START_", "<|START_ACTION|>", "<"],
                // Different first bytes: a search per needle.
                &["x", "<|END_ACTION|>", "|>"],
                &[],
            ];
            for needles in lists {
                let per_needle = needles
                    .iter()
                    .filter_map(|m| find_from(&text, m, from).map(|i| (i, *m)))
                    .min_by_key(|(i, _)| *i);
                prop_assert_eq!(find_first_of(&text, from, needles), per_needle);
            }
        }
    }
}

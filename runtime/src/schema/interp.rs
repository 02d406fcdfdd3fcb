//! The interpreter: walks a [`Node`] tree and runs the [`support`](crate::support) step for each
//! keyword, in the reference's order (`recursive_parse` in transformers 5.10.4).
//!
//! The same walk parses strictly (the reference's behaviour: the first error fails the message)
//! or leniently ([`Schema::parse_lenient`]): then each root field and each item of a root array
//! (a tool call) is whole or set aside, and what is set aside keeps its text in a
//! [`Malformed`] entry.

use crate::value::{Map, Value};

use super::reuse::ParsedCalls;
use super::{Additional, Items, Node, NodeType, Schema};
use crate::error::ParseError;
use crate::support::{self, Content, ObjectInput};

impl Schema {
    /// Parse one complete model output into a message, exactly as the reference parser would;
    /// then, when the schema has a completeness [`Check`](super::Check), fail where the message
    /// would leave out a part of the output ([`ParseErrorKind::NotUnderstood`]).
    ///
    /// What `x-regex-iterator` stages produce is bounded relative to `text` (see
    /// [`crate::budget`]); beyond it the parse fails with
    /// [`ParseErrorKind::OutputTooLarge`](crate::ParseErrorKind::OutputTooLarge).
    ///
    /// [`ParseErrorKind::NotUnderstood`]: crate::ParseErrorKind::NotUnderstood
    pub fn parse(&self, text: &str) -> Result<Value, ParseError> {
        let message = self.parse_schema_only(text)?;
        if let Some(check) = self.check() {
            check.verify(self, text)?;
        }
        Ok(message)
    }

    /// The schema's own parse, exactly the reference's, without the completeness check.
    pub fn parse_schema_only(&self, text: &str) -> Result<Value, ParseError> {
        let _bound = crate::budget::OutputBudget::enter(text.len());
        parse_node(self.root(), Content::borrowed(text), &mut Walk::strict())
            .map_err(|e| e.located(text))
    }

    /// [`Schema::parse`] for a stream's final message: the values of the calls in `reuse` (the
    /// stream's, parsed from the same output) are taken where the parse meets them instead of
    /// parsing them again (see [`ParsedCalls`] for why that changes nothing), and the call-region
    /// check and functionary v3.2's decide from what the parse read
    /// ([`Check::verify_parse`](super::Check)) instead of running the root substitution, the root
    /// pattern and the calls' iterator again (the same verdict: the
    /// generated parsers' check is that one, and `tests/check_recorded.rs` compares both with
    /// the searching check's, through the streams too).
    pub(crate) fn parse_streamed(
        &self,
        text: &str,
        reuse: Option<ParsedCalls<'_>>,
    ) -> Result<Value, ParseError> {
        let parse = || {
            let _bound = crate::budget::OutputBudget::enter(text.len());
            let mut reuse = reuse;
            let mut walk = match reuse.as_mut() {
                Some(reuse) => Walk::strict_reusing(reuse),
                None => Walk::strict(),
            };
            parse_node(self.root(), Content::borrowed(text), &mut walk).map_err(|e| e.located(text))
        };
        match self.check() {
            Some(check @ (super::Check::CallGaps | super::Check::FunctionaryV3_2)) => {
                check.verify_parse(self, text, parse)
            }
            Some(check) => {
                let message = parse()?;
                check.verify(self, text)?;
                Ok(message)
            }
            None => parse(),
        }
    }

    /// Parses like [`Schema::parse`], but never fails: a root field or a tool call (an item of a
    /// root array) that does not parse is left out of the message and set aside with its text,
    /// where it is, and why; when the output as a whole does not parse, the message is empty and
    /// the whole output is set aside. When [`Schema::parse`] succeeds, the message is the same
    /// and nothing is set aside.
    ///
    /// ```
    /// let schema = chatparse_runtime::Schema::from_json_str(r#"{"type": "object", "properties": {
    ///     "content": {"type": "string", "x-regex": "^(.*?)(?:<call>|$)"},
    ///     "calls": {"type": "array", "x-regex-iterator": "<call>(.*?)</call>",
    ///               "items": {"type": "object", "x-parser": "json", "additionalProperties": {}}}
    /// }}"#)?;
    /// let out = schema.parse_lenient(r#"Hi<call>{"a": 1}</call><call>{"b": </call>"#);
    /// assert_eq!(out.message, chatparse_runtime::json!({"content": "Hi", "calls": [{"a": 1}]}));
    /// assert_eq!(out.malformed.len(), 1);
    /// assert_eq!(out.malformed[0].text, r#"{"b": "#);
    /// assert_eq!(out.malformed[0].field.as_deref(), Some("calls"));
    /// assert_eq!(out.malformed[0].span, Some((29, 35)));
    /// assert!(schema.parse(r#"Hi<call>{"b": </call>"#).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse_lenient(&self, text: &str) -> Lenient {
        let _bound = crate::budget::OutputBudget::enter(text.len());
        let mut malformed = Vec::new();
        let mut walk = Walk::lenient_over(&mut malformed, text);
        let parsed = parse_node(self.root(), Content::borrowed(text), &mut walk);
        let kept = std::mem::take(&mut walk.kept);
        let mut message = match parsed {
            // A schema whose root is not an object (`{}` returns the text itself) gives what the
            // strict parse gives: only the reference's `None` (nothing matched) is no message.
            Ok(Value::Null) => {
                malformed.push(Malformed::new(
                    "",
                    text.to_owned(),
                    "the output gave None instead of a message (the root pattern does not match)"
                        .to_owned(),
                ));
                Value::Object(Map::new())
            }
            Ok(message) => message,
            Err(e) => {
                malformed.push(Malformed::new(&e.pointer, text.to_owned(), e.to_string()));
                Value::Object(Map::new())
            }
        };
        locate(text, &mut malformed);
        if let Some(check) = self.check() {
            // When the output as a whole was set aside, so was everything a check could name.
            if !malformed
                .iter()
                .any(|m| m.pointer.is_empty() && m.text == text)
            {
                set_aside_unread(self, check, text, &mut message, &mut malformed, kept);
            }
        }
        Lenient { message, malformed }
    }
}

/// A lenient walk of one part of a stream (a call, or a field's region) outside a whole-output
/// parse, as [`Schema::parse_lenient`] parses it: its value with the parts salvaged inside it
/// (and, for a root array, the items set aside left out), or `None` when it is set aside whole.
/// `region` runs `after_regex` only (the region is the text after the node's regex stages).
/// With `check`, the parts of the region it names (calls, or the whole field) are left out too.
pub(crate) fn parse_part_lenient(
    schema: &Schema,
    node: &Node,
    text: &str,
    region: bool,
    check_output: Option<&str>,
) -> Option<Value> {
    let mut malformed = Vec::new();
    let mut walk = Walk::lenient_over(&mut malformed, text);
    let parsed = if region {
        after_regex(node, Content::borrowed(text), &mut walk)
    } else {
        parse_node(node, Content::borrowed(text), &mut walk)
    };
    let mut value = parsed.ok()?;
    let (Some(check), Some(output)) = (schema.check(), check_output) else {
        return Some(value);
    };
    let field = field_of(&node.pointer)?;
    let mut indices = walk
        .kept
        .iter()
        .find(|(p, _)| *p == node.pointer)
        .map(|(_, i)| i.clone());
    for unread in check.unread(schema, output) {
        if unread.field != field {
            continue;
        }
        match unread.read_as {
            super::ReadAs::Field => return None,
            super::ReadAs::Item(index) => {
                if let (Some(indices), Value::Array(items)) = (indices.as_mut(), &mut value) {
                    leave_out_item(items, indices, index);
                }
            }
            super::ReadAs::Nothing => {}
        }
    }
    Some(value)
}

/// Sets aside what a completeness check finds: out of the message (the call or field the schema
/// made of it), into `malformed` with its text and span, in output order. `kept` says which items
/// of each root array the lenient walk kept (their indices among the items the schema read).
fn set_aside_unread(
    schema: &Schema,
    check: super::Check,
    text: &str,
    message: &mut Value,
    malformed: &mut Vec<Malformed>,
    mut kept: Vec<(String, Vec<usize>)>,
) {
    use super::ReadAs;
    let Value::Object(fields) = message else {
        return;
    };
    for unread in check.unread(schema, text) {
        let pointer = format!("/properties/{}", unread.field);
        // What the schema set aside in the field already says the part.
        let reported = malformed
            .iter()
            .any(|m| m.field.as_deref() == Some(unread.field));
        match unread.read_as {
            ReadAs::Nothing => {}
            ReadAs::Field => {
                if fields.shift_remove(unread.field).is_none() && reported {
                    continue;
                }
            }
            ReadAs::Item(index) => {
                let indices = kept.iter_mut().find(|(p, _)| *p == pointer);
                let left_out = match (indices, fields.get_mut(unread.field)) {
                    (Some((_, indices)), Some(Value::Array(items))) => {
                        leave_out_item(items, indices, index)
                    }
                    _ => false,
                };
                if !left_out && reported {
                    continue;
                }
            }
        }
        let (start, end) = unread.span;
        let reason =
            ParseError::not_understood(pointer.clone().into(), unread.what, unread.span, text);
        let entry = Malformed {
            field: Some(unread.field.to_owned()),
            pointer,
            text: text.get(start..end).unwrap_or_default().to_owned(),
            span: Some(unread.span),
            reason: reason.to_string(),
        };
        let at = malformed
            .iter()
            .position(|m| m.span.is_some_and(|(s, _)| s > start))
            .unwrap_or(malformed.len());
        malformed.insert(at, entry);
    }
}

/// Leaves out of a root array's `items` the one the schema read as its item `index`, where the
/// lenient walk kept it (`indices`: the schema's index of each kept item, in order); whether it
/// was there.
fn leave_out_item(items: &mut Vec<Value>, indices: &mut Vec<usize>, index: usize) -> bool {
    match indices.iter().position(|&i| i == index) {
        Some(at) if at < items.len() => {
            items.remove(at);
            indices.remove(at);
            true
        }
        _ => false,
    }
}

/// The result of [`Schema::parse_lenient`].
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient {
    /// The message, without what did not parse.
    pub message: Value,
    /// What did not parse, in output order.
    pub malformed: Vec<Malformed>,
}

/// A part of the output a lenient parse set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    /// The message field it would have gone to (a root property), if it is inside one.
    pub field: Option<String>,
    /// JSON pointer of the schema node that failed.
    pub pointer: String,
    /// The text that node was given, kept so that nothing the model wrote is lost (a value that
    /// is not text, e.g. a JSON item, as JSON).
    pub text: String,
    /// Where `text` is in the output (byte offsets), when it is there verbatim (substitutions
    /// may have rewritten it).
    pub span: Option<(usize, usize)>,
    /// Why it did not parse.
    pub reason: String,
}

impl Malformed {
    fn new(pointer: &str, text: String, reason: String) -> Self {
        Malformed {
            field: field_of(pointer),
            pointer: pointer.to_owned(),
            text,
            span: None,
            reason,
        }
    }

    /// The JSON form the CLI prints: `{"field", "pointer", "text", "span": [start, end] | null,
    /// "reason"}`.
    pub fn to_json(&self) -> Value {
        crate::json!({
            "field": self.field,
            "pointer": self.pointer,
            "text": self.text,
            "span": self.span.map(|(a, b)| vec![a, b]),
            "reason": self.reason,
        })
    }
}

/// The root property a pointer is inside: `/properties/tool_calls/items` → `tool_calls`.
fn field_of(pointer: &str) -> Option<String> {
    let token = pointer.strip_prefix("/properties/")?.split('/').next()?;
    Some(token.replace("~1", "/").replace("~0", "~"))
}

/// Finds each set-aside text in the output, in order (a later one after an earlier one).
fn locate(text: &str, malformed: &mut [Malformed]) {
    let mut from = 0;
    for m in malformed {
        if let Some((_, end)) = m.span {
            // Exact already (a part salvaged inside a slice of the output).
            from = end;
            continue;
        }
        if m.text.is_empty() {
            continue;
        }
        let found = text
            .get(from..)
            .and_then(|rest| rest.find(&m.text))
            .map(|i| from + i)
            .or_else(|| text.find(&m.text));
        if let Some(at) = found {
            m.span = Some((at, at + m.text.len()));
            from = at + m.text.len();
        }
    }
}

/// How a walk treats errors: strict (the first fails the parse) or lenient (root fields and
/// root-array items are set aside).
pub(crate) struct Walk<'m> {
    malformed: Option<&'m mut Vec<Malformed>>,
    /// Set by a caller right before parsing a unit that may be set aside: the node records the
    /// text it reaches after its regex stages, the most precise text to keep.
    catch_here: bool,
    /// That text, when the unit failed after its regex stages.
    stage_text: Option<String>,
    /// For each root array a lenient walk went through (its pointer): the indices of the items
    /// it kept.
    kept: Vec<(String, Vec<usize>)>,
    /// The output a lenient walk parses (address, length): the spans of parts set aside inside
    /// slices of it are exact.
    output: (usize, usize),
    /// Calls a stream parsed already, which a strict walk takes instead of parsing them again
    /// (see [`ParsedCalls`]).
    reuse: Option<&'m mut ParsedCalls<'m>>,
}

impl Walk<'_> {
    pub(crate) fn strict() -> Self {
        Walk {
            malformed: None,
            catch_here: false,
            stage_text: None,
            kept: Vec::new(),
            output: (0, 0),
            reuse: None,
        }
    }

    /// A strict walk that takes the calls in `reuse` where it meets them.
    fn strict_reusing<'m>(reuse: &'m mut ParsedCalls<'m>) -> Walk<'m> {
        Walk {
            reuse: Some(reuse),
            ..Walk::strict()
        }
    }

    /// A lenient walk of `output` (the whole output, or the part of a stream it parses): what it
    /// sets aside goes to `malformed`.
    fn lenient_over<'m>(malformed: &'m mut Vec<Malformed>, output: &str) -> Walk<'m> {
        Walk {
            malformed: Some(malformed),
            catch_here: false,
            stage_text: None,
            kept: Vec::new(),
            output: (output.as_ptr() as usize, output.len()),
            reuse: None,
        }
    }

    /// An item's value taken from the calls a stream parsed, if one is `item` parsed from this
    /// content's text (see [`ParsedCalls`]; a strict walk's only).
    fn reused(&mut self, item: &Node, content: &Content<'_>) -> Option<Value> {
        let reuse = self.reuse.as_deref_mut()?;
        match content {
            Content::Str(text) => reuse.take(item, text),
            _ => None,
        }
    }

    fn lenient(&self) -> bool {
        self.malformed.is_some()
    }

    /// Parses a unit that a lenient walk may set aside: `Ok(None)` when it was.
    fn unit(&mut self, node: &Node, content: Content<'_>) -> Result<Option<Value>, ParseError> {
        if !self.lenient() {
            return parse_node(node, content, self).map(Some);
        }
        let input = shown(&content);
        self.catch_here = true;
        self.stage_text = None;
        let before = self.malformed.as_deref().map_or(0, Vec::len);
        match parse_node(node, content, self) {
            Ok(value) => Ok(Some(value)),
            Err(e) => {
                let text = self.stage_text.take().unwrap_or(input);
                if let Some(list) = self.malformed.as_deref_mut() {
                    // The whole unit is set aside: so are the parts salvaged inside it.
                    list.truncate(before);
                    list.push(Malformed::new(&e.pointer, text, e.to_string()));
                }
                Ok(None)
            }
        }
    }
}

/// Lenient parsing of JSON that does not parse as a whole (`x-parser: json`), keeping what the
/// model wrote whole: a value followed by other text (JSON's "Extra data") is the value, the text
/// after it set aside; a list with an item that is not JSON, or that is cut off, is the list of
/// its good items, each bad item set aside with its exact text (and so is text after the list).
/// `None` when there is nothing to salvage (the whole unit is set aside then).
fn salvage_json(text: &str, e: &ParseError, node: &Node, walk: &mut Walk<'_>) -> Option<Value> {
    use crate::py::json;
    let crate::ParseErrorKind::Json(error) = &e.kind else {
        return None;
    };
    let mut set_aside: Vec<(usize, usize, String)> = Vec::new();
    let value = match error {
        json::JsonError::Decode { message, .. } if message == "Extra data" => {
            let at = json::error_byte(text, error);
            let head = text.get(..at)?;
            let value = json::loads(head).ok()?;
            let (start, end) = trimmed_range(text, at, text.len())?;
            set_aside.push((start, end, e.to_string()));
            value
        }
        _ => {
            let start = text.len() - text.trim_start().len();
            if !text[start..].starts_with('[') {
                return None;
            }
            let (items, after) = salvage_list(text, start, &node.pointer, &mut set_aside);
            if let Some(after) = after {
                if let Some((a, b)) = trimmed_range(text, after, text.len()) {
                    set_aside.push((
                        a,
                        b,
                        format!(
                            "{}: text after the JSON list",
                            crate::display_pointer(&node.pointer)
                        ),
                    ));
                }
            }
            Value::Array(items)
        }
    };
    if set_aside.is_empty() {
        return None;
    }
    let base = text.as_ptr() as usize;
    let (output, output_len) = walk.output;
    let list = walk.malformed.as_deref_mut()?;
    for (a, b, reason) in set_aside {
        let mut m = Malformed::new(&node.pointer, text[a..b].to_owned(), reason);
        // Exact when the text is a slice of the output (not rewritten by a substitution).
        if let Some(offset) = (base + a)
            .checked_sub(output)
            .filter(|&o| o + (b - a) <= output_len)
        {
            m.span = Some((offset, offset + (b - a)));
        }
        list.push(m);
    }
    Some(value)
}

/// The items of the JSON list at `start` (a `[`) that parse, each that does not (or is cut off)
/// pushed to `set_aside` with its range and error; and where the list ends (`None` when it is
/// cut off).
fn salvage_list(
    text: &str,
    start: usize,
    pointer: &str,
    set_aside: &mut Vec<(usize, usize, String)>,
) -> (Vec<Value>, Option<usize>) {
    use crate::py::json;
    let bytes = text.as_bytes();
    let ws = |mut i: usize| {
        while bytes.get(i).is_some_and(|b| b" \t\n\r".contains(b)) {
            i += 1;
        }
        i
    };
    let mut items = Vec::new();
    let mut i = ws(start + 1);
    if bytes.get(i) == Some(&b']') {
        return (items, Some(i + 1));
    }
    loop {
        let item_end = match text.get(i..).and_then(json::raw_decode) {
            Some((value, len)) => {
                let next = ws(i + len);
                match bytes.get(next) {
                    Some(b',' | b']') => {
                        items.push(value);
                        Some(i + len)
                    }
                    // The list is cut off after a whole item: the item is kept.
                    None => {
                        items.push(value);
                        set_aside.push((
                            next,
                            next,
                            format!(
                                "at {}: the JSON list is cut off after item {}",
                                crate::display_pointer(pointer),
                                items.len() - 1
                            ),
                        ));
                        return (items, None);
                    }
                    Some(_) => None,
                }
            }
            None => None,
        };
        let end = match item_end {
            Some(end) => end,
            None => {
                // A bad item: up to the next `,` or `]` outside strings and brackets.
                let end = item_extent(text, i);
                if let Some((a, b)) = trimmed_range(text, i, end) {
                    let why = match json::loads(&text[a..b]) {
                        Err(e) => format!("content is not valid JSON: {e}"),
                        Ok(_) => "content is not valid JSON".to_owned(),
                    };
                    set_aside.push((
                        a,
                        b,
                        format!("at {}: {why}", crate::display_pointer(pointer)),
                    ));
                }
                end
            }
        };
        i = ws(end);
        match bytes.get(i) {
            Some(b',') => i = ws(i + 1),
            Some(b']') => return (items, Some(i + 1)),
            _ => return (items, None),
        }
    }
}

/// Where the list item starting at `from` ends: the first `,` or `]` outside strings and
/// brackets, or the end of the text.
fn item_extent(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &b) in bytes.get(from..).unwrap_or_default().iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth > 0 => depth -= 1,
            b',' | b']' if depth == 0 => return from + offset,
            _ => {}
        }
    }
    text.len()
}

/// `text[from..to]` without surrounding white space; `None` when nothing is left.
fn trimmed_range(text: &str, from: usize, to: usize) -> Option<(usize, usize)> {
    let s = text.get(from..to)?;
    let a = from + (s.len() - s.trim_start().len());
    let b = from + s.trim_end().len();
    (a < b).then_some((a, b))
}

/// A unit's content as kept text.
fn shown(content: &Content<'_>) -> String {
    match content.as_str() {
        Some(s) => s.to_owned(),
        None => content.clone().into_value().to_string(),
    }
}

/// Whether `node` is a root property (its fields and items are the units of a lenient parse).
fn is_root_property(node: &Node) -> bool {
    node.pointer
        .strip_prefix("/properties/")
        .is_some_and(|rest| !rest.contains('/'))
}

pub(crate) fn parse_node(
    node: &Node,
    content: Content<'_>,
    walk: &mut Walk<'_>,
) -> Result<Value, ParseError> {
    // The output bound for callers that parse a region directly (the streams); a no-op under
    // the bound of a parse already running.
    let _bound = text_bound(&content);
    let catch = std::mem::take(&mut walk.catch_here);
    if let Some(constant) = &node.constant {
        return Ok(constant.clone());
    }
    if content.is_null() {
        return Ok(Value::Null);
    }
    if !node.has_regex() {
        return after_regex_caught(node, content, walk, catch);
    }
    let mut text = support::regex_input(content, &node.pointer)?;
    // Whether every substitution left the text as it was given (no match, or nothing rewritten).
    // Why the address: a substitution that rewrites makes its new text while the old is alive,
    // so the same address and length after a step means that step kept the text itself.
    let mut unchanged = true;
    for sub in &node.substitutions {
        let before = (text.as_ptr(), text.len());
        text = support::substitute(
            text,
            &sub.pattern.regex,
            &sub.replacement,
            &sub.pattern.pointer,
        )?;
        unchanged &= (text.as_ptr(), text.len()) == before;
    }
    match regex_stages(node, &text)? {
        Some(content) => after_regex_caught(node, content, walk, catch).map_err(|e| {
            let e = placed_in_group(node, &text, e);
            // Substituted text is not the text this node was given; text no substitution
            // changed is (llama3_json's calls: an error in the second call's JSON is placed in
            // the calls' group, not where the same text first occurs in the output).
            if unchanged {
                e.found_in(&text)
            } else {
                e
            }
        }),
        None => Ok(Value::Null),
    }
}

/// An error from a property whose value was a named group of `node`'s `x-regex`, placed in that
/// group. Why: the groups become a dict of copies (as the reference's `groupdict()`), so an error
/// found in a property's value was anchored in its copy, and would be placed where that text
/// first occurs in the output (`x[TOOL_CALLS]x`: at the `x` of the content, not the calls'), or
/// nowhere for an empty value. The match is found again (the error path only; the same pattern
/// on the same text finds the same groups) and an error whose text is the property's whole group
/// is anchored there, as the generated parser, which borrows the groups, anchors it. So is an
/// error found in a part of the value (by the property's own pattern: apriel's `<tool_calls>`
/// group, then its JSON), which the property's node noted with [`ParseError::found_in`].
fn placed_in_group(node: &Node, text: &str, error: ParseError) -> ParseError {
    let (Some(p), None, None) = (&node.regex, &node.iterator, &node.key_value) else {
        return error;
    };
    if !p.regex.has_named_groups() {
        return error;
    }
    let Some(rest) = error
        .pointer
        .strip_prefix(node.pointer.as_str())
        .and_then(|rest| rest.strip_prefix("/properties/"))
    else {
        return error;
    };
    let key = rest.split('/').next().unwrap_or_default();
    let key = key.replace("~1", "/").replace("~0", "~");
    let Ok(Some(caps)) = p.regex.search(text) else {
        return error;
    };
    let Some(group) = p
        .regex
        .group_names()
        .iter()
        .position(|name| name.as_deref() == Some(key.as_str()))
        .and_then(|i| caps.get(i + 1))
    else {
        return error;
    };
    error.placed_in(group)
}

/// [`after_regex`], remembering the text it was given when a lenient unit fails in it.
fn after_regex_caught(
    node: &Node,
    content: Content<'_>,
    walk: &mut Walk<'_>,
    catch: bool,
) -> Result<Value, ParseError> {
    if !(catch && walk.lenient()) {
        return after_regex(node, content, walk);
    }
    let text = shown(&content);
    let result = after_regex(node, content, walk);
    if result.is_err() {
        walk.stage_text = Some(text);
    }
    result
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

/// The default output bound for a text input (see [`crate::budget`]).
fn text_bound(content: &Content<'_>) -> Option<crate::budget::OutputBudget> {
    match content {
        Content::Str(text) => Some(crate::budget::OutputBudget::enter(text.len())),
        _ => None,
    }
}

pub(crate) fn after_regex(
    node: &Node,
    content: Content<'_>,
    walk: &mut Walk<'_>,
) -> Result<Value, ParseError> {
    let _bound = text_bound(&content);
    let content = match &node.parser {
        Some(parser) => {
            let transform = parser.transform.as_ref().map(|t| {
                (
                    support::Transform::Interpreted(&t.expression),
                    t.pointer.as_str(),
                )
            });
            let salvageable = walk.lenient()
                && parser.kind == super::ParserKind::Json
                && !parser.allow_non_json
                && content.as_str().is_some();
            let kept = salvageable.then(|| content.clone());
            match support::parse_json(
                content,
                parser.kind,
                parser.allow_non_json,
                transform,
                &node.pointer,
            ) {
                Ok(content) => content,
                Err(e) => match kept.as_ref().and_then(Content::as_str) {
                    Some(text) if matches!(e.kind, crate::ParseErrorKind::Json(_)) => {
                        let value = salvage_json(text, &e, node, walk).ok_or(e)?;
                        match transform {
                            Some((transform, pointer)) => {
                                Content::Value(transform.apply(value).map_err(|e| {
                                    ParseError::new(
                                        pointer,
                                        crate::ParseErrorKind::Transform(e.message),
                                    )
                                })?)
                            }
                            None => Content::Value(value),
                        }
                    }
                    _ => return Err(e),
                },
            }
        }
        None => content,
    };
    let pointer = &node.pointer;
    Ok(match node.node_type {
        NodeType::Object => parse_object(node, content, walk)?,
        NodeType::Array => parse_array(node, content, walk)?,
        NodeType::String => Value::String(support::to_string(content, pointer)?.into_owned()),
        NodeType::Integer => support::to_integer(content, pointer)?.to_value(),
        NodeType::Number => support::float_to_value(support::to_number(content, pointer)?),
        NodeType::Boolean => Value::Bool(support::to_boolean(content, pointer)?),
        NodeType::Any | NodeType::Untyped => content.into_value(),
    })
}

fn parse_object(
    node: &Node,
    content: Content<'_>,
    walk: &mut Walk<'_>,
) -> Result<Value, ParseError> {
    let properties = node.properties.as_deref().unwrap_or_default();
    let root = node.pointer.is_empty();
    let out = match support::object_input(content, node.properties.is_some(), &node.pointer)? {
        ObjectInput::Text(text) => {
            let mut out = Map::with_capacity(properties.len());
            for prop in properties {
                let value = if root {
                    walk.unit(&prop.node, support::share(&text))?
                } else {
                    Some(parse_node(&prop.node, support::share(&text), walk)?)
                };
                if let Some(value) = value.filter(|v| !v.is_null()) {
                    out.insert(prop.name.clone(), value);
                }
            }
            out
        }
        ObjectInput::Dict(input) => reshape_dict(node, properties, input.into_map(), root, walk)?,
    };
    let required: Vec<&str> = node.required.iter().map(String::as_str).collect();
    let checked = support::check_required(&required, |key| out.contains_key(key), &node.pointer);
    match (checked, walk.malformed.as_deref_mut()) {
        // A lenient message lacks what was set aside; that is said, not failed.
        (Err(e), Some(list)) if root => {
            list.push(Malformed::new(&node.pointer, String::new(), e.to_string()))
        }
        (checked, _) => checked?,
    }
    Ok(Value::Object(out))
}

/// An object node on a dict: its properties in schema order (`const`, the input's value parsed
/// with the property's schema, or `default`), then the other input keys in input order (parsed
/// with `additionalProperties`, or dropped when it is `false`).
///
/// Done in place: the input's entries are reordered and their keys and the map itself reused,
/// rather than copied into a new map (a tool call's objects cost no allocation here).
fn reshape_dict(
    node: &Node,
    properties: &[super::Property],
    mut out: Map,
    root: bool,
    walk: &mut Walk<'_>,
) -> Result<Map, ParseError> {
    // Entries before `placed` are the properties done so far, in schema order; the input's other
    // entries follow in input order.
    let mut placed = 0;
    for prop in properties {
        let at = out.index_of(&prop.name);
        if let Some(constant) = &prop.node.constant {
            match at {
                Some(i) => {
                    out.move_index(i, placed);
                    if let Some(v) = out.value_at_mut(placed) {
                        let same = matches!((&*v, constant),
                            (Value::String(a), Value::String(b)) if a == b);
                        if !same {
                            *v = constant.clone();
                        }
                    }
                }
                None => out.insert_new_at(placed, prop.name.clone(), constant.clone()),
            }
            placed += 1;
        } else if let Some(i) = at {
            out.move_index(i, placed);
            let value = out
                .value_at_mut(placed)
                .map(std::mem::take)
                .unwrap_or_default();
            let value = Content::Value(value);
            let value = if root {
                walk.unit(&prop.node, value)?
            } else {
                Some(parse_node(&prop.node, value, walk)?)
            };
            match value {
                Some(value) => {
                    if let Some(slot) = out.value_at_mut(placed) {
                        *slot = value;
                    }
                    placed += 1;
                }
                None => out.shift_remove_index(placed),
            }
        } else if let Some(default) = &prop.node.default {
            out.insert_new_at(placed, prop.name.clone(), default.clone());
            placed += 1;
        }
    }
    match &node.additional {
        Additional::Deny => out.truncate(placed),
        Additional::Schema(schema) => {
            for i in placed..out.len() {
                let value = out.value_at_mut(i).map(std::mem::take).unwrap_or_default();
                let value = parse_node(schema, Content::Value(value), walk)?;
                if let Some(slot) = out.value_at_mut(i) {
                    *slot = value;
                }
            }
        }
        Additional::PassThrough => {}
    }
    Ok(out)
}

fn parse_array(
    node: &Node,
    content: Content<'_>,
    walk: &mut Walk<'_>,
) -> Result<Value, ParseError> {
    let items = match &node.items {
        Items::Each(item) if walk.lenient() && is_root_property(node) => {
            let mut kept = Vec::new();
            let mut indices = Vec::new();
            for (index, c) in support::array_items(content, &node.pointer)?
                .into_iter()
                .enumerate()
            {
                if let Some(value) = walk.unit(item, c)? {
                    kept.push(value);
                    indices.push(index);
                }
            }
            walk.kept.push((node.pointer.clone(), indices));
            kept
        }
        Items::Each(item) => support::array_items(content, &node.pointer)?
            .into_iter()
            .map(|c| match walk.reused(item, &c) {
                Some(value) => Ok(value),
                None => parse_node(item, c, walk),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Items::Prefix(schemas) => {
            match support::prefix_items(content, schemas.len(), &node.pointer)? {
                Some(items) => items
                    .into_iter()
                    .zip(schemas)
                    .map(|(c, schema)| parse_node(schema, c, walk))
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

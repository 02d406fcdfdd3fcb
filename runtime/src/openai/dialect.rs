//! Gemma 4's dialect arguments (`{location:<|"|>Paris<|"|>,days:3}`) read while the model
//! writes them: each top-level parameter goes out as compact JSON once the `,` after it arrives.
//!
//! The arguments' text is the final message's compact JSON of the converted object (the dialect
//! is not JSON, so the adapter has no model text to keep). Why the text up to a top-level `,` is
//! final: the conversion ([`crate::gemma4`]) is local to that prefix —
//!
//! * the `<|"|>…<|"|>` strings are taken shortest first, left to right, so the strings that
//!   closed before the `,` are the same whatever follows, and the `,` is outside every string
//!   (the scan below follows the delimiters exactly as they are taken);
//! * the bare-key quoting `(?<=[{,])(\w+):` and the substitution `([:\[,])None([,}\]])` →
//!   `\1null\2` each read one character around a word, and `,` and `}` both end a `None`: the
//!   probe (the prefix closed by `}`) is rewritten as the whole text is, up to the `,`;
//! * `json.loads` of the whole object then starts with the same keys and values, unless a later
//!   parameter repeats a key (the object keeps one key for both). The adapter compares what it
//!   sent with the closed call and fails the stream in that case
//!   ([`ParseErrorKind::StreamedCallChanged`](crate::ParseErrorKind)), as for XML parameters.
//!
//! A top-level string value (`key:<|"|>text…`) goes out character by character while it is
//! written, JSON-escaped (escaping is per character), less what may still change: a partial
//! `<|"|>` at the end (maybe the closer) and a partial `None` after `:`, `[` or `,` (the
//! substitution rewrites it inside strings too, when `,`, `}` or `]` follows). Whether the value
//! is that string is decided once, by converting the parameter so far closed by `<|"|>}`: its key
//! must be the key and its value the text as written. A `None` that the substitution would
//! rewrite stops the value's streaming (the rest goes out with the next parameter or the close).
//!
//! Each parameter is converted on its own, `{` + its text + `}`, by the arguments' own schema node
//! (its substitutions and parser; [`DialectArguments::convert`] says why that is its part of the
//! whole object), and must give one key not read before: anything else gives up, and the call's
//! arguments go out when it closes. Arguments whose first key is a JSON string (`{"a": 1}`) also
//! give up: the model may have written plain JSON, whose own text the final message keeps.

use memchr::memmem;

use super::built::BuiltArguments;

use crate::py::unicode::is_word;
use crate::schema::interp::{parse_node, Walk};
use crate::schema::{Node, ParserKind};
use crate::support::Content;
use crate::value::Value;

/// Gemma 4's string delimiter.
const QUOTE: &[u8] = b"<|\"|>";

/// The only substitution the locality argument covers (Gemma 4's schema writes it twice).
const NONE_PATTERN: &str = r"([:\[,])None([,}\]])";
const NONE_REPLACEMENT: &str = r"\1null\2";

/// Whether `arguments` are Gemma's dialect read as the module documentation assumes: the
/// `gemma4-tool-call` parser without a transform, after no substitution but `None` → `null`.
pub(crate) fn is_dialect_arguments(arguments: &Node) -> bool {
    let parser = matches!(
        &arguments.parser,
        Some(p) if p.kind == ParserKind::Gemma4ToolCall && p.transform.is_none()
    );
    parser
        && arguments.regex.is_none()
        && arguments.iterator.is_none()
        && arguments.key_value.is_none()
        && arguments.properties.as_deref().is_none_or(<[_]>::is_empty)
        && arguments.required.is_empty()
        && arguments.substitutions.iter().all(|s| {
            s.pattern.regex.python_pattern() == NONE_PATTERN
                && s.replacement_source == NONE_REPLACEMENT
        })
}

/// Where the string value of the open parameter stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum OpenString {
    /// Not decided (or no string value open).
    #[default]
    Undecided,
    /// Sent up to byte `sent_to` of the text.
    Streaming { sent_to: usize },
    /// Not a string that streams: it goes out with its parameter.
    No,
}

/// The scan of one call's dialect arguments.
#[derive(Debug, Clone, Default)]
pub(crate) struct DialectArguments {
    /// How far the text has been scanned.
    at: usize,
    /// Open `{`/`[` outside strings (the arguments' own `{` included).
    depth: usize,
    /// Inside a `<|"|>` string; inside a JSON `"` string (and after its `\`).
    quoted: bool,
    string: bool,
    escaped: bool,
    /// The arguments' JSON text known: the converted top-level parameters', then as much of the
    /// open parameter's string value as is final.
    built: BuiltArguments,
    /// The object closed: nothing more goes out before the call closes.
    closed: bool,
    /// Where the open parameter starts (after the last top-level `,`, or the `{`), and where the
    /// last `<|"|>` string opened.
    pair_start: usize,
    quote_open: usize,
    /// The open parameter's string value.
    value: OpenString,
}

impl DialectArguments {
    /// Reads `text` (the arguments so far, from their `{`; it only grows) with `arguments` (the
    /// schema node that converts them): the arguments' JSON text known so far, or `None` once
    /// they are not in a form whose final text can be predicted.
    pub(crate) fn read(&mut self, arguments: &Node, text: &str) -> Option<&str> {
        let bytes = text.as_bytes();
        if self.at == 0 {
            if bytes.first() != Some(&b'{') {
                return None;
            }
            self.at = 1;
            self.depth = 1;
            self.pair_start = 1;
        }
        while !self.closed && self.at < bytes.len() {
            let i = self.at;
            if self.quoted {
                match memmem::find(&bytes[i..], QUOTE) {
                    Some(off) => {
                        self.at = i + off + QUOTE.len();
                        self.quoted = false;
                        continue;
                    }
                    None => {
                        // A delimiter cut by the end of the text is found next time.
                        self.at = bytes.len().saturating_sub(QUOTE.len() - 1).max(i);
                        break;
                    }
                }
            }
            let b = bytes[i];
            // The conversion takes the delimiters wherever they stand, inside `"…"` too.
            if b == b'<' {
                let rest = &bytes[i..];
                if rest.starts_with(QUOTE) {
                    self.quoted = true;
                    self.quote_open = i;
                    self.at += QUOTE.len();
                    continue;
                }
                if QUOTE.starts_with(rest) {
                    // Maybe a delimiter: wait for the rest of it.
                    break;
                }
            }
            if self.string {
                self.at += 1;
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.string = false,
                    _ => {}
                }
                continue;
            }
            if self.built.text().is_empty() && self.depth == 1 && b == b'"' {
                let first = bytes[1..i].iter().all(u8::is_ascii_whitespace);
                if first {
                    // The first key is a JSON string: maybe plain JSON, kept as written.
                    return None;
                }
            }
            self.at += 1;
            match b {
                b'"' => self.string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.checked_sub(1)?;
                    self.closed = self.depth == 0;
                }
                b',' if self.depth == 1 => {
                    self.convert(arguments, &text[self.pair_start..i])?;
                    self.pair_start = i + 1;
                    self.value = OpenString::Undecided;
                }
                _ => {}
            }
        }
        if !self.closed && self.quoted && self.depth == 1 {
            self.read_open_string(arguments, text);
        }
        Some(self.known())
    }

    /// The arguments' JSON text known so far (without the closing `}`, or the open string's
    /// closing `"`): only ever grows.
    pub(crate) fn known(&self) -> &str {
        self.built.text()
    }

    /// The open parameter's string value (see the module documentation).
    fn read_open_string(&mut self, arguments: &Node, text: &str) {
        let content = self.quote_open + QUOTE.len();
        let end = final_end(text, content);
        match self.value {
            OpenString::No => {}
            OpenString::Undecided => {
                self.value = self.decide(arguments, text, content, end);
            }
            OpenString::Streaming { sent_to } if end > sent_to => {
                if rewrites_none(text, sent_to, end) {
                    self.value = OpenString::No;
                    return;
                }
                self.built.push_value(&text[sent_to..end]);
                self.value = OpenString::Streaming { sent_to: end };
            }
            OpenString::Streaming { .. } => {}
        }
    }

    /// Whether the open parameter is `KEY:<|"|>text` whose value is the text as written: then
    /// the text so far is added to `built`.
    fn decide(&mut self, arguments: &Node, text: &str, content: usize, end: usize) -> OpenString {
        let Some(key) = text[self.pair_start..self.quote_open].strip_suffix(':') else {
            return OpenString::No;
        };
        if key.is_empty() || !key.chars().all(is_word) || rewrites_none(text, content, end) {
            return OpenString::No;
        }
        // The parameter on its own (see `convert` for why that is its part of the whole).
        let probe = format!("{{{}<|\"|>}}", &text[self.pair_start..end]);
        let parsed = parse_node(arguments, Content::borrowed(&probe), &mut Walk::strict());
        let Ok(Value::Object(object)) = parsed else {
            return OpenString::No;
        };
        let last = object.iter().next_back();
        let same = object.len() == 1
            && !self.built.has_key(key)
            && matches!(last, Some((k, Value::String(v))) if k == key && v == &text[content..end]);
        if !same {
            return OpenString::No;
        }
        let json = Value::Object(object).to_string();
        let Some(open) = json.strip_prefix('{').and_then(|j| j.strip_suffix("\"}")) else {
            return OpenString::No;
        };
        self.built.open_value(open);
        OpenString::Streaming { sent_to: end }
    }

    /// Converts the parameter before a top-level `,` (`pair`, after the `{` or the last
    /// top-level `,`): its compact JSON must add one new key to what was known, and begin with
    /// what of its string value went out.
    ///
    /// Why the parameter converts on its own, as `{pair}`, to its part of the whole object (and
    /// so the arguments' text stays linear in a long call, rather than converting everything
    /// from the `{` at each `,`): the strings inside it are taken as in the whole text (the scan
    /// cut it outside every string); the bare-key quoting reads the `{` or `,` before a key, and
    /// `{` stands where the `,` stood; the `None` rewrite reads one character around a word, and
    /// `}` ends a `None` as the `,` did; `json.loads` reads an object's entries one after
    /// another; and the arguments' schema converts each entry on its own (`additionalProperties`
    /// only, which `is_dialect_arguments` requires of a dialect call).
    fn convert(&mut self, arguments: &Node, pair: &str) -> Option<()> {
        let probe = format!("{{{pair}}}");
        let parsed = parse_node(arguments, Content::borrowed(&probe), &mut Walk::strict()).ok()?;
        let Value::Object(object) = parsed else {
            return None;
        };
        let key = match object.keys().next() {
            Some(key) if object.len() == 1 && !self.built.has_key(key) => key.clone(),
            _ => return None,
        };
        let json = Value::Object(object).to_string();
        let entry = json.strip_prefix('{')?.strip_suffix('}')?;
        self.built.append(entry, [key]).then_some(())
    }
}

/// Where the final part of an open string's text ends: before a partial `<|"|>` at the end of
/// `text` (maybe the closer), and before a partial `None` after `:`, `[` or `,` (the substitution
/// rewrites a whole one when `,`, `}` or `]` follows).
fn final_end(text: &str, content: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = bytes.len();
    if let Some(cut) = (1..QUOTE.len())
        .rev()
        .find(|&n| n <= end - content && bytes[..end].ends_with(&QUOTE[..n]))
    {
        end -= cut;
    }
    for n in (1..=4).rev() {
        let none = &b"None"[..n];
        if end > content + n
            && bytes[..end].ends_with(none)
            && matches!(bytes[end - n - 1], b':' | b'[' | b',')
        {
            return end - n;
        }
    }
    end
}

/// Whether the string text `text[from..end]` holds a `None` the substitution may rewrite: one
/// after `:`, `[` or `,` (the character before `from` counts).
fn rewrites_none(text: &str, from: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let start = from.saturating_sub(4);
    memmem::find_iter(&bytes[start..end], b"None").any(|i| {
        let at = start + i;
        at + 4 > from && at > 0 && matches!(bytes[at - 1], b':' | b'[' | b',')
    })
}

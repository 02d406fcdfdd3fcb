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
//! The probe is converted by the arguments' own schema node (its substitutions and parser), and
//! its key count must be the number of parameters read: anything else gives up, and the call's
//! arguments go out when it closes. Arguments whose first key is a JSON string (`{"a": 1}`) also
//! give up: the model may have written plain JSON, whose own text the final message keeps.

use memchr::memmem;

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
        && arguments.substitutions.iter().all(|s| {
            s.pattern.regex.python_pattern() == NONE_PATTERN
                && s.replacement_source == NONE_REPLACEMENT
        })
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
    /// The top-level parameters converted so far.
    parameters: usize,
    /// Their compact JSON, without the closing `}`.
    built: String,
    /// The object closed: nothing more goes out before the call closes.
    closed: bool,
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
            if self.parameters == 0 && self.depth == 1 && b == b'"' && self.built.is_empty() {
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
                b',' if self.depth == 1 => self.convert(arguments, &text[..i])?,
                _ => {}
            }
        }
        Some(&self.built)
    }

    /// The arguments' JSON text known so far (without the closing `}`).
    pub(crate) fn built(&self) -> &str {
        &self.built
    }

    /// Converts the parameters before a top-level `,` (`head`): their compact JSON must extend
    /// what was known, with one more key.
    fn convert(&mut self, arguments: &Node, head: &str) -> Option<()> {
        let probe = format!("{head}}}");
        let parsed = parse_node(arguments, Content::borrowed(&probe), &mut Walk::strict()).ok()?;
        let Value::Object(object) = parsed else {
            return None;
        };
        if object.len() != self.parameters + 1 {
            return None;
        }
        let mut json = Value::Object(object).to_string();
        json.pop();
        if !json.starts_with(self.built.as_str()) {
            return None;
        }
        self.built = json;
        self.parameters += 1;
        Some(())
    }
}

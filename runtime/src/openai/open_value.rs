//! A parameter's string value read while the model writes it, so that an XML-parameter call's
//! arguments stream character by character instead of one parameter at a time.
//!
//! The XML families convert each parameter value with `x-parser: json` and `allow_non_json`
//! (after optional `^True$`-style substitutions): a value that is JSON becomes that JSON, any
//! other stays the text as written. Whether a value is JSON can depend on text not written yet
//! (`1` may become `12` or `1 apple`), but not when its first character after JSON whitespace
//! cannot start a JSON text (Python's `json.loads` also reads `NaN` and `Infinity`) nor a
//! substitution's whole-value pattern: such a value is a string, whatever follows, and its JSON
//! text is the value's characters escaped one by one. So once a value starts with such a
//! character, its escaped characters can go out as they arrive, except a tail that may still
//! turn out to close it: a prefix of the closing literal (`</par` of `</parameter>`) and the
//! line breaks before it (the pattern may drop a `\r?\n` there).
//!
//! Where the value starts, and its key, come from the key-value pattern itself, run on the
//! parameter's text so far followed by the closing literal, and the schema's conversion of that
//! probe must give the key and the string: the sketch never predicts what the schema would not
//! say.
//!
//! A substitution of the parameters' text (deepseek_v3_2's quoting of `string="true"` values)
//! may also rewrite inside a value: when the model breaks a closing tag (`</｜DSML｜ parameter>`),
//! the value runs on to the next closing tag and swallows the next parameter's tag, where the
//! rewrite then applies (`name="to" string="true">CNY` becomes `name="to">"CNY"` in the final
//! value). Every match starts with its pattern's literal prefix (`<｜DSML｜parameter`), so the value
//! streams only up to the first such prefix in it (or a part of one at the text's end); from a
//! whole one on, the rest of the value goes out when the parameter closes.

use super::built::BuiltArguments;
use crate::schema::interp::{parse_node, Walk};
use crate::schema::Node;
use crate::support::Content;
use crate::value::Value;

/// A value still undecided after this much text is left to its closing tag: probing it on every
/// chunk would cost quadratic time in a long value.
const UNDECIDED_LIMIT: usize = 4096;

/// What a call shape needs to stream string values: known when the parameters' conversion is
/// the JSON-or-text one described in the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct StringValues {
    /// First characters after which a value may still become something other than its text.
    not_string_starts: String,
    /// The key-value pattern's first character (`<`): a parameter cannot start in text without it.
    opener: char,
    /// The literal every parameter ends with (`</parameter>`).
    closer: String,
    /// The literal text every match of a substitution of the parameters' text starts with: a
    /// value streams only up to the first one in it (see the module documentation).
    rewrites: Vec<String>,
}

impl StringValues {
    /// The facts for `arguments` (the node with `x-regex-key-value`), if its values convert as
    /// JSON-or-text, its pattern starts with a literal character and ends with `closer`.
    pub(crate) fn of(arguments: &Node, closer: &str) -> Option<Self> {
        let key_value = arguments.key_value.as_ref()?;
        let crate::schema::Additional::Schema(value) = &arguments.additional else {
            return None;
        };
        let json_or_text = matches!(&value.parser,
            Some(p) if p.kind == crate::schema::ParserKind::Json && p.allow_non_json && p.transform.is_none());
        let plain = value.regex.is_none()
            && value.iterator.is_none()
            && value.key_value.is_none()
            && value.constant.is_none()
            && value.properties.is_none()
            && matches!(
                value.node_type,
                crate::schema::NodeType::Any | crate::schema::NodeType::Untyped
            );
        if !json_or_text || !plain || closer.is_empty() {
            return None;
        }
        // JSON's first characters (Python also reads `NaN`, `Infinity`, `-Infinity`).
        let mut not_string_starts = String::from("{[\"-0123456789tfnNI");
        for substitution in &value.substitutions {
            // `^True$`: a whole-value rewrite, which only a value starting with `T` can meet.
            let word = substitution
                .pattern
                .regex
                .python_pattern()
                .strip_prefix('^')
                .and_then(|p| p.strip_suffix('$'))
                .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphabetic()))?;
            not_string_starts.extend(word.chars().next());
        }
        let opener = first_literal_char(&key_value.regex.syntax_tree().root)?;
        // A rewrite that may start anywhere (no literal prefix) could change any character
        // already sent: such values wait for their closing tags.
        let rewrites = arguments
            .substitutions
            .iter()
            .map(|s| chatparse_pyre::required_prefix(&s.pattern.regex.syntax_tree().root))
            .collect::<Option<Vec<_>>>()?;
        Some(StringValues {
            not_string_starts,
            opener,
            closer: closer.to_owned(),
            rewrites,
        })
    }
}

/// The first character every match of a pattern starts with, when it is a literal.
fn first_literal_char(node: &chatparse_pyre::syntax::ast::Node) -> Option<char> {
    use chatparse_pyre::syntax::ast::{Fold, Node as AstNode};
    match node {
        AstNode::Char {
            cp,
            fold: Fold::None,
        } => char::from_u32(*cp),
        AstNode::Concat(nodes) => first_literal_char(nodes.first()?),
        AstNode::Group { node, .. } => first_literal_char(node),
        _ => None,
    }
}

/// Where the open parameter's value stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum OpenValue {
    /// No parameter is open, or its value has not shown what it is yet.
    #[default]
    Undecided,
    /// The value may become JSON: it goes out when the parameter closes.
    NotString,
    /// A string: its characters up to `sent_to` (an offset in the call's raw text) are in the
    /// arguments' text. What the last read saw, so that the next reads only the new text (a
    /// flood of line breaks, held back before a closer that may follow, was read again on every
    /// chunk): `read`, the raw text's length then (no closer ends before it), and `breaks_to`,
    /// where the line breaks that run from `sent_to` ended (`sent_to` when none do).
    Streaming {
        sent_to: usize,
        read: usize,
        breaks_to: usize,
    },
}

/// The parameter opened at `at` in `raw` (after the parameters known so far, whose arguments'
/// text is `known`): extends `text` (the arguments' text known, which starts with `known`) with
/// its value's characters, and says where the value stands.
pub(crate) struct ValueReader<'a> {
    pub facts: &'a StringValues,
    /// The arguments' node (with `x-regex-key-value`).
    pub arguments: &'a Node,
    /// The call's raw text so far.
    pub raw: &'a str,
    /// Where the open parameter's text starts in `raw`.
    pub at: usize,
}

impl ValueReader<'_> {
    /// Where the value's text read from `from` may be final, as far as its closer tells:
    /// `None` once a closer has arrived (then the parameter is whole, and is read with the
    /// others), else the text's end less a tail that may still become the closer. No closer
    /// ends before `read`, where the last read stopped.
    fn closer_end(&self, from: usize, read: usize) -> Option<usize> {
        let (raw, closer) = (self.raw, self.facts.closer.as_str());
        // A closer ending after `from` (the parameter's own: the one before it ends at `at`).
        let window = from.max(read).saturating_sub(closer.len() - 1).max(self.at);
        let window = (window..=raw.len()).find(|&i| raw.is_char_boundary(i))?;
        if raw.get(window..)?.contains(closer) {
            return None;
        }
        Some(raw.len() - held_start(raw.as_bytes(), closer))
    }

    /// `end` less the line breaks before it that run back to `from` or beyond (the pattern
    /// may drop a `\r?\n` before the closer): `breaks_to` is where the line breaks that run
    /// from `from` end, read before, so a flood of them is not walked again.
    fn trim_breaks(&self, from: usize, mut end: usize, breaks_to: usize) -> usize {
        while end > from && matches!(self.raw.as_bytes()[end - 1], b'\r' | b'\n') {
            if end == breaks_to {
                // Line breaks from `from` on, read before.
                return from;
            }
            end -= 1;
        }
        end
    }

    /// Where a rewrite of the parameters' text may start in the value's text from `from` on
    /// (the text's end when none may), and whether one surely can (a whole literal prefix: the
    /// rest waits for the closer). Whole prefixes ending before `read` were looked for before.
    fn rewrite_cut(&self, from: usize, read: usize) -> (usize, bool) {
        let raw = self.raw;
        let (mut cut, mut whole) = (raw.len(), false);
        for prefix in &self.facts.rewrites {
            let search = from.max(read.saturating_sub(prefix.len() - 1));
            let search = (search..=raw.len())
                .find(|&i| raw.is_char_boundary(i))
                .unwrap_or(raw.len());
            if let Some(i) = raw[search..].find(prefix.as_str()) {
                cut = cut.min(search + i);
                whole = true;
                continue;
            }
            // A part of one at the end (from `from` on), which the next text may complete.
            let held = held_start(raw.as_bytes().get(from..).unwrap_or_default(), prefix);
            if held > 0 {
                cut = cut.min(raw.len() - held);
            }
        }
        (cut, whole)
    }

    /// Decides an undecided value: `built` holds the arguments' text of the parameters before
    /// it (`{"a":1` or empty) and their keys.
    pub(crate) fn decide(&self, built: &mut BuiltArguments) -> OpenValue {
        let Some(tail) = self.raw.get(self.at..) else {
            return OpenValue::NotString;
        };
        if tail.len() > UNDECIDED_LIMIT {
            return OpenValue::NotString;
        }
        let Some(end) = self.closer_end(self.at, 0) else {
            return OpenValue::Undecided;
        };
        let end = self.trim_breaks(self.at, end, self.at);
        let Some(written) = self.raw.get(self.at..end) else {
            return OpenValue::NotString;
        };
        let probe = format!("{written}{}", self.facts.closer);
        let Some(key_value) = &self.arguments.key_value else {
            return OpenValue::NotString;
        };
        let regex = &key_value.regex;
        let Ok(Some(found)) = regex.search(&probe) else {
            return OpenValue::Undecided;
        };
        let (Some(key_group), Some(value_group)) =
            (regex.group_index("key"), regex.group_index("value"))
        else {
            return OpenValue::NotString;
        };
        let (Some((_, key_end)), Some((value_start, value_end))) =
            (found.span(key_group), found.span(value_group))
        else {
            return OpenValue::Undecided;
        };
        // The match must be this parameter's (nothing before it could start one), reach the
        // probe's closer, and have the value run to the end of the written text.
        if found.end() != probe.len()
            || written[..found.start()].contains(self.facts.opener)
            || value_end != written.len()
            || key_end > value_start
        {
            return OpenValue::Undecided;
        }
        let value = &written[value_start..];
        let Some(first) = value
            .chars()
            .find(|c| !matches!(c, ' ' | '\t' | '\n' | '\r'))
        else {
            return OpenValue::Undecided;
        };
        if self.facts.not_string_starts.contains(first) {
            return OpenValue::NotString;
        }
        // The schema's own reading of this parameter closed now. On its own: the parameters
        // convert one entry at a time (see `Sketch::append_parameters` for why).
        let parsed = parse_node(
            self.arguments,
            Content::borrowed(&probe),
            &mut Walk::strict(),
        );
        let Ok(Value::Object(object)) = parsed else {
            return OpenValue::NotString;
        };
        let Some((key, Value::String(converted))) = object.iter().next_back() else {
            return OpenValue::NotString;
        };
        if object.len() != 1 || built.has_key(key) || converted.as_str() != value {
            return OpenValue::NotString;
        }
        // The value's own tag starts with a rewrite's prefix: look in the value only.
        let value_at = self.at + value_start;
        let (cut, rewrites) = self.rewrite_cut(value_at, 0);
        let end = if cut < end {
            self.trim_breaks(value_at, cut, value_at)
        } else {
            end
        };
        built.open_value(&format!("{}:\"", Value::String(key.clone())));
        built.push_value(&self.raw[value_at..end]);
        if rewrites {
            return OpenValue::NotString;
        }
        self.streaming(end, end)
    }

    /// A streaming value: appends what arrived since `sent_to` and is surely final (`read`
    /// and `breaks_to`: what the last read saw, see [`OpenValue::Streaming`]).
    pub(crate) fn extend(
        &self,
        built: &mut BuiltArguments,
        sent_to: usize,
        read: usize,
        breaks_to: usize,
    ) -> OpenValue {
        let unchanged = OpenValue::Streaming {
            sent_to,
            read,
            breaks_to,
        };
        let Some(end) = self.closer_end(sent_to, read) else {
            return unchanged;
        };
        let (cut, rewrites) = self.rewrite_cut(sent_to, read);
        let end = self.trim_breaks(sent_to, end.min(cut), breaks_to);
        if end > sent_to {
            let Some(more) = self.raw.get(sent_to..end) else {
                return unchanged;
            };
            built.push_value(more);
        }
        if rewrites {
            // What follows may be rewritten: the rest goes out with the closed parameter.
            return OpenValue::NotString;
        }
        if end <= sent_to {
            return self.streaming(sent_to, breaks_to);
        }
        self.streaming(end, end)
    }

    /// Streaming, sent up to `sent_to`, having read the text so far: the line breaks that run
    /// from `sent_to` are read on from `breaks_from` (the ones before it were read before).
    fn streaming(&self, sent_to: usize, breaks_from: usize) -> OpenValue {
        let from = breaks_from.clamp(sent_to, self.raw.len());
        let breaks = self.raw.as_bytes()[from..]
            .iter()
            .take_while(|b| matches!(b, b'\r' | b'\n'))
            .count();
        OpenValue::Streaming {
            sent_to,
            read: self.raw.len(),
            breaks_to: from + breaks,
        }
    }
}

/// Appends `lead` and `s` as a JSON string's inside (escaped as the message's compact JSON
/// writes it: escaping is per character, so pieces escape to pieces of the whole).
pub(super) fn push_escaped(text: &mut String, lead: &str, s: &str) {
    let quoted = Value::String(s.to_owned()).to_string();
    text.push_str(lead);
    text.push_str(&quoted[1..quoted.len() - 1]);
}

/// The length of the longest proper start of `literal` that `text` ends with (0 for none): text
/// the next chunk may complete into `literal`, so it waits. (Bytes, not characters: `text` is
/// whole characters, so a start that `text` ends with never splits one of `literal`'s.)
fn held_start(text: &[u8], literal: &str) -> usize {
    let literal = literal.as_bytes();
    (1..literal.len())
        .rev()
        .find(|&k| text.ends_with(&literal[..k]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::held_start;

    #[test]
    fn held_start_is_the_longest_proper_start_at_the_end() {
        assert_eq!(held_start(b"value</par", "</parameter>"), 5);
        assert_eq!(held_start(b"value<", "</parameter>"), 1);
        assert_eq!(held_start(b"value", "</parameter>"), 0);
        // The whole literal is not a start that waits: it is there.
        assert_eq!(held_start(b"x</p>", "</p>"), 0);
        // The longest of several: `<<` ends `a<<`, and so does `<`.
        assert_eq!(held_start(b"a<<", "<<<x"), 2);
        assert_eq!(
            held_start("v</｜DSML".as_bytes(), "</｜DSML｜parameter>"),
            9
        );
        assert_eq!(held_start(b"", "</p>"), 0);
    }
}

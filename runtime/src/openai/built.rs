//! The arguments' JSON text an adapter builds while the model writes parameters that are not
//! JSON (XML parameters, pythonic calls, Gemma 4's dialect): the compact JSON of the parameters
//! converted so far, then as much of the open parameter's string value as is final.

use std::collections::HashSet;

use super::open_value::push_escaped;

/// The arguments' JSON text known (without the closing `}`), and the keys in it.
#[derive(Debug, Clone, Default)]
pub(crate) struct BuiltArguments {
    /// The converted parameters' compact JSON (its first `whole` bytes), then what of the open
    /// parameter's value went out.
    built: String,
    whole: usize,
    /// The converted parameters' keys (a set: a key written twice is found without a scan of
    /// them all).
    keys: HashSet<String>,
}

impl BuiltArguments {
    /// The text known: only ever grows while the call is open.
    pub(crate) fn text(&self) -> &str {
        &self.built
    }

    /// Whether a converted parameter has the key `key`.
    pub(crate) fn has_key(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// Whether no parameter was converted yet.
    pub(crate) fn has_no_entries(&self) -> bool {
        self.whole == 0
    }

    /// What goes before the next entry: `{` before the first, `,` after.
    fn separator(&self) -> &'static str {
        if self.has_no_entries() {
            "{"
        } else {
            ","
        }
    }

    /// Appends `entries` (the compact JSON of newly converted parameters, without braces) with
    /// their `keys`, in place of what of the open value went out, which must be how the entries
    /// begin: `false`, with nothing changed, when it is not.
    pub(crate) fn append(&mut self, entries: &str, keys: impl IntoIterator<Item = String>) -> bool {
        let separator = self.separator();
        let sent = &self.built[self.whole..];
        let fits = sent
            .strip_prefix(separator)
            .map_or(sent.is_empty(), |rest| entries.starts_with(rest));
        if !fits {
            return false;
        }
        self.built.truncate(self.whole);
        self.built.push_str(separator);
        self.built.push_str(entries);
        self.whole = self.built.len();
        self.keys.extend(keys);
        true
    }

    /// Opens the next parameter's string value: its separator, then `head` (its key's JSON,
    /// `:` and the value's opening quote, as compact JSON writes them).
    pub(crate) fn open_value(&mut self, head: &str) {
        self.built.push_str(self.separator());
        self.built.push_str(head);
    }

    /// More of the open value's text, JSON-escaped.
    pub(crate) fn push_value(&mut self, text: &str) {
        push_escaped(&mut self.built, "", text);
    }
}

//! Tool calls written as one JSON list (`functools[…]`, `[TOOL_CALLS][…]`,
//! `<tool_calls>[…]</tool_calls>`, `<|tool_call|>[…]`, `<TOOLCALL>[…]</TOOLCALL>`): the calls
//! field's text is a JSON list (or a lone object) that the field's `x-parser: json` reads whole,
//! and a transform that projects over the list's items makes each item a call. [`ListScan`]
//! finds the items one by one as the list is written, so each call can be sent when its object
//! closes instead of with the final message.
//!
//! Why an item that has closed is final: the one-shot parse either fails (strict: the stream
//! fails with the same error, so nothing sent is ever contradicted by a message) or decodes the
//! field's text as JSON; valid JSON's top-level items are exactly what a scan of brackets outside
//! strings finds, and a JSON value decodes the same wherever it stands. The transform is checked
//! to map a list to the concatenation of what it maps each item to (a projection over the items,
//! as every shipped list schema's `[@][].{…}` is), and the item is run through the field's own
//! parser, transform and `items` schema, so the call sent is the final message's call. Where the
//! field's text may be cut before the list ends (`</tool_calls>`: the field's `x-regex` stops at
//! it, even inside a string), an item counts only if it closes before the first such literal.
//! Anything else — an item that is not an object, text where the list expects `,` or `]`, an
//! item the field's schema refuses on its own — stops the scan: the rest arrives with the final
//! message, which the one-shot parse decides.
//!
//! Blocks (`phi4_mini`): the field's substitutions turn `<|tool_call|>V1<|/tool_call|>` +
//! white space + `<|tool_call|>V2…` into `[V1,V2…]`, and the transform's `[]` flattens a block
//! whose value is a list. The scan follows the blocks as the substitutions join them (a closer,
//! white space, the next opener) and reads each block's value, an object or a list of them. The
//! substitutions rewrite a closer followed by an opener even inside a JSON string, so an item
//! holding a closer is left to the final message, and the text of an open item is known only up
//! to where a closer may begin.

use memchr::memmem;

use super::decided::{CallStep, CallsText, DecidedCalls};
use super::profile::{ListBlocks, ListProfile};
use crate::schema::interp::{after_regex, Walk};
use crate::schema::{Items, Node, NodeType, ParserKind};
use crate::stream::brackets::Brackets;
use crate::support::Content;
use crate::value::Value;

/// Where the scan of the list stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Blocks: before a block's opener.
    Opener,
    /// Before a JSON value: the list, a lone call object, or a block's value.
    BeforeValue,
    /// Inside the list, before an item.
    BeforeItem,
    /// Inside an item that starts at `start`; `in_list`: an item of a list (else a lone object,
    /// or a block's object).
    InItem { start: usize, in_list: bool },
    /// After a list's item, before its `,` or the list's `]`.
    AfterItem,
    /// Blocks: after a block's value, before its closer.
    AfterBlock,
    /// Blocks: after a block's closer, before white space and the next block's opener.
    BetweenBlocks,
    /// Nothing more is read: the final message brings the rest.
    Done,
}

/// The incremental scan of a JSON list of calls (see the module documentation).
#[derive(Debug)]
pub(crate) struct ListScan<'p> {
    /// The calls field.
    pub(crate) field: &'p str,
    node: &'p Node,
    /// Literals where the field's text may be cut (see the module documentation).
    cut: &'p [String],
    blocks: Option<&'p ListBlocks>,
    stage: Stage,
    /// How far the text has been scanned.
    at: usize,
    brackets: Brackets,
    /// Where the first cut literal is, once found, and where the search for one resumes.
    cut_at: Option<usize>,
    cut_searched: usize,
}

/// Whether `text[at..limit]` starts with `literal` (`Some(true)`), may once more text arrives
/// (`None`), or does not.
fn literal_at(text: &[u8], at: usize, limit: usize, literal: &str) -> Option<bool> {
    let have = &text[at..limit];
    if have.starts_with(literal.as_bytes()) {
        Some(true)
    } else if literal.as_bytes().starts_with(have) {
        None
    } else {
        Some(false)
    }
}

impl<'p> ListScan<'p> {
    /// A scan of `node`'s calls (checked by [`ListScan::check`]).
    pub(crate) fn new(
        field: &'p str,
        node: &'p Node,
        list: &'p ListProfile,
    ) -> Result<Self, String> {
        Self::check(node, list.blocks.is_some())?;
        Ok(Self::checked(field, node, list))
    }

    /// A scan of `node`'s calls that [`ListScan::check`] has passed already: the profile was
    /// loaded for this schema ([`StreamProfile`](super::StreamProfile) runs the check). Why not
    /// check again: the check parses three probe lists, more than the rest of a short
    /// message's stream costs.
    pub(crate) fn checked(field: &'p str, node: &'p Node, list: &'p ListProfile) -> Self {
        ListScan {
            field,
            node,
            cut: &list.cut,
            blocks: list.blocks.as_ref(),
            stage: Stage::Done,
            at: 0,
            brackets: Brackets::default(),
            cut_at: None,
            cut_searched: 0,
        }
    }

    /// Whether `node`'s calls can be read item by item, or why not: an array whose text is read
    /// by `x-parser: json` (no iterator; substitutions only where the list is written as
    /// `blocks` they join) and whose transform maps a list of two calls to what it maps each
    /// to, concatenated.
    pub(crate) fn check(node: &Node, blocks: bool) -> Result<(), String> {
        let read_as_list = node.node_type == NodeType::Array
            && node.iterator.is_none()
            && node.key_value.is_none()
            && (blocks || node.substitutions.is_empty())
            && matches!(node.items, Items::Each(_))
            && matches!(&node.parser, Some(p) if p.kind == ParserKind::Json && !p.allow_non_json);
        if !read_as_list {
            return Err(
                "only an array read whole by `x-parser: json` (no iterator, key-value \
                        pattern, or substitutions but those joining blocks) streams as a JSON \
                        list"
                    .into(),
            );
        }
        let a = r#"{"name": "probe_a", "arguments": {}, "id": "probeid01"}"#;
        let b = r#"{"name": "probe_b", "arguments": {"x": [1]}}"#;
        let each = |text: &str| match parse_items(node, text) {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        };
        let (Some(both), Some(first), Some(second)) = (
            each(&format!("[{a}, {b}]")),
            each(&format!("[{a}]")),
            each(&format!("[{b}]")),
        ) else {
            return Err("its parser does not read a list of calls".into());
        };
        let joined: Vec<Value> = first.into_iter().chain(second).collect();
        let same = both.len() == 2
            && joined.len() == 2
            && both
                .iter()
                .zip(&joined)
                .all(|(x, y)| crate::py::identical(x, y));
        if !same {
            return Err("its transform does not map each item of the list to one call".into());
        }
        Ok(())
    }

    /// Starts reading the calls at their opener, `opener_at..opener_end`.
    pub(crate) fn start(&mut self, opener_at: usize, opener_end: usize, opener: &str) {
        self.at = match self.blocks {
            Some(_) => {
                self.stage = Stage::Opener;
                opener_at
            }
            None => {
                self.stage = Stage::BeforeValue;
                // An opener that ends in `[` (`functools[`) has opened the list itself.
                opener_end - usize::from(opener.ends_with('['))
            }
        };
        self.cut_searched = self.at;
    }

    /// Reads `text[..limit]` on from where the last read stopped.
    fn next_in(&mut self, text: &str, limit: usize) -> CallStep {
        let limit = limit.min(self.cut_limit(text));
        let bytes = text.as_bytes();
        let json_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        while self.at < limit {
            let i = self.at;
            let b = bytes[i];
            match self.stage {
                Stage::Done => return CallStep::Done,
                Stage::Opener | Stage::BetweenBlocks => {
                    if self.stage == Stage::BetweenBlocks {
                        let c = text[i..].chars().next().unwrap_or_default();
                        if crate::py::unicode::is_space(c) {
                            self.at += c.len_utf8();
                            continue;
                        }
                    }
                    let openers = self.blocks.map_or(&[][..], |b| b.open.as_slice());
                    let mut waiting = false;
                    let mut found = None;
                    for opener in openers {
                        match literal_at(bytes, i, limit, opener) {
                            Some(true) => {
                                found = Some(opener.len());
                                break;
                            }
                            None => waiting = true,
                            Some(false) => {}
                        }
                    }
                    match (found, waiting) {
                        (Some(len), _) => {
                            self.at += len;
                            self.stage = Stage::BeforeValue;
                        }
                        (None, true) => break,
                        (None, false) => self.stage = Stage::Done,
                    }
                }
                Stage::BeforeValue => {
                    self.at += 1;
                    match b {
                        _ if json_space(b) => {}
                        b'[' => self.stage = Stage::BeforeItem,
                        b'{' => self.open_item(i, false),
                        _ => self.stage = Stage::Done,
                    }
                }
                Stage::BeforeItem => {
                    self.at += 1;
                    match b {
                        _ if json_space(b) => {}
                        b'{' => self.open_item(i, true),
                        // `[]`, or what this scan does not read as a call (`null`, a nested
                        // list): the final message says what it is.
                        _ => self.stage = Stage::Done,
                    }
                }
                Stage::AfterItem => {
                    self.at += 1;
                    match b {
                        _ if json_space(b) => {}
                        b',' => self.stage = Stage::BeforeItem,
                        b']' if self.blocks.is_some() => self.stage = Stage::AfterBlock,
                        _ => self.stage = Stage::Done,
                    }
                }
                Stage::AfterBlock => {
                    if json_space(b) {
                        self.at += 1;
                        continue;
                    }
                    let close = self.blocks.map_or("", |b| b.close.as_str());
                    match literal_at(bytes, i, limit, close) {
                        Some(true) => {
                            self.at += close.len();
                            self.stage = Stage::BetweenBlocks;
                        }
                        None => break,
                        Some(false) => self.stage = Stage::Done,
                    }
                }
                Stage::InItem { start, in_list } => {
                    let closer = self
                        .blocks
                        .filter(|bl| bl.close.as_bytes().first() == Some(&b));
                    if let Some(blocks) = closer {
                        // A block closer inside an item is rewritten by the substitutions
                        // (or breaks the JSON): the item is not read.
                        match literal_at(bytes, i, limit, &blocks.close) {
                            Some(true) => self.stage = Stage::Done,
                            None => break,
                            Some(false) => {}
                        }
                        if self.stage == Stage::Done {
                            return CallStep::Done;
                        }
                    }
                    self.at += 1;
                    if !self.brackets.byte(b) {
                        continue;
                    }
                    let end = i + 1;
                    self.stage = match (in_list, self.blocks) {
                        (true, _) => Stage::AfterItem,
                        (false, Some(_)) => Stage::AfterBlock,
                        (false, None) => Stage::Done,
                    };
                    let value = parse_items(self.node, &format!("[{}]", &text[start..end]));
                    return match value {
                        Some(Value::Array(mut items)) if items.len() == 1 => CallStep::Call {
                            start,
                            end,
                            value: items.remove(0),
                        },
                        _ => {
                            self.stage = Stage::Done;
                            CallStep::Done
                        }
                    };
                }
            }
        }
        match self.stage {
            Stage::Done => CallStep::Done,
            Stage::InItem { start, .. } => CallStep::Open {
                start,
                known: self.at.max(start),
            },
            _ => CallStep::Wait,
        }
    }

    /// An item opens with the `{` at `start`.
    fn open_item(&mut self, start: usize, in_list: bool) {
        self.stage = Stage::InItem { start, in_list };
        self.brackets = Brackets::default();
        self.brackets.byte(b'{');
    }

    /// How far the field's text is known not to be cut: before the first cut literal, and before
    /// a possible start of one at the end of the text.
    fn cut_limit(&mut self, text: &str) -> usize {
        if let Some(at) = self.cut_at {
            return at;
        }
        let longest = self.cut.iter().map(String::len).max().unwrap_or(0);
        if longest == 0 {
            return text.len();
        }
        let bytes = text.as_bytes();
        let from = self.cut_searched.min(bytes.len());
        let found = self
            .cut
            .iter()
            .filter_map(|c| memmem::find(&bytes[from..], c.as_bytes()).map(|i| from + i))
            .min();
        if let Some(at) = found {
            self.cut_at = Some(at);
            return at;
        }
        self.cut_searched = bytes.len().saturating_sub(longest - 1).max(from);
        let partial = (self.cut_searched..bytes.len())
            .find(|&p| {
                self.cut
                    .iter()
                    .any(|c| c.len() > bytes.len() - p && c.as_bytes().starts_with(&bytes[p..]))
            })
            .unwrap_or(bytes.len());
        partial
    }
}

impl DecidedCalls for ListScan<'_> {
    fn next(&mut self, calls: CallsText<'_>) -> CallStep {
        self.next_in(calls.text, calls.limit)
    }
}

/// The calls `node`'s parser, transform and `items` make of the JSON list `text` (its regex
/// stages skipped: `text` is what they would give).
fn parse_items(node: &Node, text: &str) -> Option<Value> {
    after_regex(node, Content::borrowed(text), &mut Walk::strict()).ok()
}

//! Streaming for x-regex response schemas whose fields are *literal-delimited regions*.
//!
//! An x-regex schema streams when its root is an object whose properties are each a `const`, an
//! `x-regex` or an `x-regex-iterator` (array with `items`) whose pattern has the region shape of
//! [`RegionShape`]: a literal opener, optionally a `\b` after it, a negative look-ahead of
//! literals/`$` and a deterministic header loop, a lazy DOTALL `.*?` body in the one capture group
//! (which may run on through the closer), and closers that are literals or `$` (with `$` among
//! them); a choice of openers is scanned only by a profile's tool calls
//! ([`ProfiledStreamParser`]). For such a pattern, the first match (or the
//! successive matches of `re.finditer`) can be found by a forward scan that never needs text it
//! has not seen, so the fields can be streamed; every other schema is refused by
//! [`XRegexPlan::new`] with a [`NotStreamable`] naming the JSON pointer and the reason.
//!
//! [`XRegexStreamParser`] has the API and the events of the `response_template`
//! [`StreamParser`](crate::template::StreamParser): `feed(chunk) -> events`, `finish() -> (message,
//! events)`, with `region_open`, `region_chunk` (with `dirty`) and `region_close` (with the
//! field's value, or an iterator item's value). The final message equals
//! [`Schema::parse`](crate::Schema::parse) on the whole output, for every chunking. Text is held
//! back only while a prefix of a closer (or a `\n` that `$` may claim) ends the buffer; each feed
//! costs O(chunk + longest delimiter), except that a candidate opener that fails its look-ahead
//! or header makes the search resume one byte after it (as `re.search` does), re-reading that
//! candidate's header.
//!
//! ```
//! use chatparse_runtime::{Schema, stream::{Event, XRegexPlan, XRegexStreamParser}};
//!
//! let schema = Schema::from_json_str(r#"{"type": "object", "properties": {
//!     "role": {"const": "assistant"},
//!     "thinking": {"type": "string", "x-regex": "<think>(.*?)(?:</think>|$)"},
//!     "content": {"type": "string", "x-regex": "<answer>(.*?)(?:</answer>|$)"}
//! }}"#)?;
//! // The same loaded schema streams and parses whole outputs.
//! let plan = XRegexPlan::new(&schema).map_err(|e| e.to_string())?;
//! let mut parser = XRegexStreamParser::new(&plan);
//! let mut thinking = String::new();
//! for chunk in ["<think>Let me", " see.</th", "ink><answer>4"] {
//!     for event in parser.feed(chunk)? {
//!         if let Event::RegionChunk { field: "thinking", text, .. } = event {
//!             thinking.push_str(&text);
//!         }
//!     }
//! }
//! let (message, _) = parser.finish()?;
//! assert_eq!(thinking, "Let me see.");
//! assert_eq!(message, chatparse_runtime::json!({"role": "assistant", "thinking": "Let me see.", "content": "4"}));
//! assert_eq!(schema.parse("<think>Let me see.</think><answer>4")?, message);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decided;
mod list;
mod objects;
mod profile;
mod profiled;
mod pythonic;
mod recipients;
mod region;

use std::fmt;

use crate::value::{Map, Value};
use memchr::memmem::Finder;

use crate::error::ParseError;
use crate::schema::interp::Walk;
use crate::schema::{Items, Node, NodeType, Schema};
use crate::stream::fast::{ByteSet, Scan as ByteScan};
use crate::stream::raw::{chunk_event, span, FieldNames, Pending, RawEvent};
use crate::stream::{Event, TextRun};
use crate::support::{self, Content};
pub use profile::{
    CallsProfile, ContentProfile, LeadingCalls, ListBlocks, ListProfile, ReasoningProfile,
    StreamProfile, Untagged,
};
pub(crate) use profiled::Prepared;
pub use profiled::ProfiledStreamParser;
pub(crate) use region::separated_shape;
pub use region::{region_shape, Delim, Header, HeaderAlt, RegionShape};

/// Why a schema cannot stream: the JSON pointer of the node or keyword, and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotStreamable {
    /// The schema's source name.
    pub source_name: String,
    /// JSON pointer of the offending node or keyword (`""` is the root).
    pub pointer: String,
    /// Why it cannot stream.
    pub reason: String,
}

impl fmt::Display for NotStreamable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = crate::display_pointer(&self.pointer);
        write!(
            f,
            "response schema {} cannot stream: {pointer}: {}",
            self.source_name, self.reason
        )
    }
}

impl std::error::Error for NotStreamable {}

/// A schema that cannot stream, with the reason.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) schema: Schema,
    pub(crate) why: Box<NotStreamable>,
}

/// How one root property is produced.
#[derive(Debug)]
enum FieldKind {
    /// `const`: the constant.
    Const,
    /// `x-regex`: the first match's group.
    Search(Region),
    /// `x-regex-iterator`: every match, each parsed with `items`.
    Iterate(Region),
}

/// A region pattern ready to scan.
#[derive(Debug)]
struct Region {
    shape: RegionShape,
    opener: Finder<'static>,
    /// Finders for the literal closers, in pattern order (`None` for `$`).
    closers: Vec<Option<Finder<'static>>>,
    /// The opener's first byte: text without it holds no opener, nor a prefix of one.
    opener_first: Option<ByteScan>,
    /// The bytes a closer can start with (`\n` for `$`): text without any of them holds no
    /// closer and nothing to hold back.
    closer_starts: ByteScan,
}

impl Region {
    fn new(shape: RegionShape) -> Self {
        let opener = Finder::new(shape.opener.as_bytes()).into_owned();
        let closers = shape
            .closers
            .iter()
            .map(|c| match c {
                Delim::Lit(l) => Some(Finder::new(l.as_bytes()).into_owned()),
                Delim::Dollar | Delim::Word { .. } => None,
            })
            .collect();
        let mut starts = ByteSet::default();
        for closer in &shape.closers {
            match closer {
                Delim::Lit(l) => l.as_bytes().iter().take(1).for_each(|&b| starts.insert(b)),
                Delim::Dollar => starts.insert(b'\n'),
                // Never a closer (see `RegionShape::closers`).
                Delim::Word { .. } => {}
            }
        }
        let opener_first = shape.opener.as_bytes().first().map(|&b| {
            let mut set = ByteSet::default();
            set.insert(b);
            ByteScan::new(set)
        });
        Region {
            shape,
            opener,
            closers,
            opener_first,
            closer_starts: ByteScan::new(starts),
        }
    }
}

#[derive(Debug)]
struct Field {
    /// Index into the root's properties.
    property: usize,
    kind: FieldKind,
    dirty: bool,
}

/// A schema checked to stream, with its region scanners (see the module documentation).
#[derive(Debug)]
pub struct XRegexPlan {
    schema: Schema,
    fields: Vec<Field>,
}

impl XRegexPlan {
    /// Checks that `schema` can stream and prepares its scanners; otherwise says where and why
    /// it cannot. Takes a [`Schema`] or a `&Schema` (a cheap clone that shares the compiled
    /// model), so the schema that parses whole outputs also streams without loading it twice.
    pub fn new(schema: impl Into<Schema>) -> Result<Self, Box<NotStreamable>> {
        Self::try_new(schema.into()).map_err(|refused| refused.why)
    }

    /// Like [`XRegexPlan::new`], giving the schema back when it cannot stream.
    pub(crate) fn try_new(schema: Schema) -> Result<Self, Box<Refused>> {
        match analyse(schema.root()) {
            Ok(fields) => Ok(XRegexPlan { schema, fields }),
            Err(Refusal { pointer, reason }) => {
                let why = Box::new(NotStreamable {
                    source_name: schema.source_name().to_owned(),
                    pointer,
                    reason,
                });
                Err(Box::new(Refused { schema, why }))
            }
        }
    }

    /// Whether `schema` can stream, or the pointer and reason why not.
    pub fn check(schema: &Schema) -> Result<(), Box<NotStreamable>> {
        analyse(schema.root())
            .map(|_| ())
            .map_err(|Refusal { pointer, reason }| {
                Box::new(NotStreamable {
                    source_name: schema.source_name().to_owned(),
                    pointer,
                    reason,
                })
            })
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    fn property(&self, field: &Field) -> Option<(&str, &Node)> {
        let p = self
            .schema
            .root()
            .properties
            .as_ref()?
            .get(field.property)?;
        Some((p.name.as_str(), &p.node))
    }
}

/// Where and why a schema cannot stream, as found by [`analyse`].
struct Refusal {
    pointer: String,
    reason: String,
}

impl Refusal {
    fn new(pointer: String, reason: String) -> Self {
        Refusal { pointer, reason }
    }
}

fn analyse(root: &Node) -> Result<Vec<Field>, Refusal> {
    let at = |p: &str, key: &str| format!("{p}/{key}");
    if root.constant.is_some() {
        return Err(Refusal::new(
            at(&root.pointer, "const"),
            "the whole message is a constant".into(),
        ));
    }
    if !root.substitutions.is_empty() {
        return Err(Refusal::new(
            at(&root.pointer, "x-regex-substitutions"),
            "substitutions rewrite the whole output before any field is read, so a later chunk \
             can change an earlier field"
                .into(),
        ));
    }
    if let Some(p) = root.regex.as_ref().or(root.iterator.as_ref()) {
        return Err(Refusal::new(
            p.pointer.clone(),
            "a regex on the root cuts the message out of the whole output as one match; its \
             fields depend on text that has not arrived"
                .into(),
        ));
    }
    if let Some(p) = &root.key_value {
        return Err(Refusal::new(
            p.pointer.clone(),
            "key-value matches on the root are not regions".into(),
        ));
    }
    if root.parser.is_some() {
        return Err(Refusal::new(
            at(&root.pointer, "x-parser"),
            "a parser on the root needs the whole output".into(),
        ));
    }
    let Some(properties) = root
        .properties
        .as_ref()
        // The output is a string: only an `object` root reads fields from it (an untyped or
        // `any` root returns the text unchanged, as the reference does).
        .filter(|_| root.node_type == crate::schema::NodeType::Object)
    else {
        return Err(Refusal::new(
            root.pointer.clone(),
            "the root is not an object with properties".into(),
        ));
    };
    let mut fields = Vec::new();
    for (i, prop) in properties.iter().enumerate() {
        let node = &prop.node;
        let kind = if node.constant.is_some() {
            FieldKind::Const
        } else if !node.substitutions.is_empty() {
            return Err(Refusal::new(
                at(&node.pointer, "x-regex-substitutions"),
                "substitutions rewrite the whole output for this field".into(),
            ));
        } else if let Some(kv) = &node.key_value {
            return Err(Refusal::new(
                kv.pointer.clone(),
                "x-regex-key-value matches are not literal-delimited regions".into(),
            ));
        } else if let (Some(regex), None) = (&node.regex, &node.iterator) {
            let shape = scanned_shape(&regex.regex).map_err(|why| {
                Refusal::new(regex.pointer.clone(), region_reason(&regex.regex, &why))
            })?;
            FieldKind::Search(Region::new(shape))
        } else if let (None, Some(iter)) = (&node.regex, &node.iterator) {
            let shape = scanned_shape(&iter.regex).map_err(|why| {
                Refusal::new(iter.pointer.clone(), region_reason(&iter.regex, &why))
            })?;
            if node.node_type != NodeType::Array
                || node.parser.is_some()
                || !matches!(node.items, Items::Each(_))
            {
                return Err(Refusal::new(
                    node.pointer.clone(),
                    "an iterator field streams only as an array with one `items` schema and no \
                     parser"
                        .into(),
                ));
            }
            FieldKind::Iterate(Region::new(shape))
        } else if node.regex.is_some() {
            return Err(Refusal::new(
                node.pointer.clone(),
                "x-regex followed by x-regex-iterator reads the iterator over one match's group, \
                 not over the output"
                    .into(),
            ));
        } else {
            return Err(Refusal::new(
                node.pointer.clone(),
                "the field has no x-regex, so it is the whole output, known only at the end".into(),
            ));
        };
        let dirty = !(node.node_type == NodeType::String && node.parser.is_none())
            || matches!(kind, FieldKind::Iterate(_));
        fields.push(Field {
            property: i,
            kind,
            dirty,
        });
    }
    Ok(fields)
}

/// The region shape of a field's pattern, if this module's scanners read it: they look for one
/// opener (a choice of openers streams only as a profile's tool calls).
fn scanned_shape(regex: &crate::pyre::PyRegex) -> Result<RegionShape, String> {
    let shape = region_shape(regex)?;
    if !shape.other_openers.is_empty() {
        return Err(
            "it starts with a choice of openers (only a stream profile's tool calls \
                    stream such a pattern)"
                .into(),
        );
    }
    Ok(shape)
}

fn region_reason(regex: &crate::pyre::PyRegex, why: &str) -> String {
    format!(
        "`{}` is not a literal-delimited region (literal opener, lazy DOTALL `(.*?)` body, \
         literal closers or `$`): {why}",
        regex.python_pattern()
    )
}

/// Where one field's scan is.
#[derive(Debug, Clone, Copy)]
enum Scan {
    /// Looking for the opener at or after `from`.
    Seek {
        from: usize,
    },
    /// The opener matched at `start`; the look-ahead is checked at `at`.
    Look {
        start: usize,
        at: usize,
    },
    /// The opener matched at `start`; the header loop is at `at`.
    Header {
        start: usize,
        at: usize,
    },
    /// In the body: the capture starts at `cap`, the body at `body`; text before `emitted` has
    /// been sent; no closer starts in `body..scan`.
    Body {
        cap: usize,
        body: usize,
        emitted: usize,
        scan: usize,
    },
    Done,
}

/// Outcome of a decision that may need more text.
enum Decision<T> {
    Yes(T),
    No,
    Wait,
}

/// Streams an x-regex schema checked by [`XRegexPlan`] (see the module documentation).
#[derive(Debug)]
pub struct XRegexStreamParser<'p> {
    plan: &'p XRegexPlan,
    buffer: String,
    scans: Vec<Scan>,
    /// Closed values: for a search field, its value; for an iterator, its items.
    values: Vec<Vec<Value>>,
    /// The raw events of the current feed, and whether a call failed.
    pending: Pending,
    /// Whether a region that does not parse is set aside (see [`Schema::parse_lenient`]) rather
    /// than failing the stream.
    lenient: bool,
}

impl<'p> XRegexStreamParser<'p> {
    /// The same parser, lenient: a region that does not parse sends no `region_close` and is
    /// left out, and `finish` gives [`Schema::parse_lenient`]'s message, with an
    /// [`Event::Malformed`] for each part set aside.
    pub fn with_lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// Everything fed so far.
    pub fn output(&self) -> &str {
        &self.buffer
    }

    /// A parser at the start of the output (x-regex schemas read the output alone, so there is
    /// no prompt prefix).
    pub fn new(plan: &'p XRegexPlan) -> Self {
        XRegexStreamParser {
            plan,
            buffer: String::new(),
            scans: plan
                .fields
                .iter()
                .map(|f| match f.kind {
                    FieldKind::Const => Scan::Done,
                    _ => Scan::Seek { from: 0 },
                })
                .collect(),
            values: plan.fields.iter().map(|_| Vec::new()).collect(),
            pending: Pending::default(),
            lenient: false,
        }
    }

    /// Feeds the next chunk; returns the events it completes. After an error the parser is
    /// spent: every later call fails.
    pub fn feed(&mut self, chunk: &str) -> Result<Vec<Event<'_>>, ParseError> {
        self.advance(chunk, false)?;
        let (buffer, plan) = (&self.buffer, self.plan);
        Ok(self
            .pending
            .events
            .drain(..)
            .map(|r| r.lend(buffer, plan))
            .collect())
    }

    /// [`XRegexStreamParser::feed`] handing each event to `on_event` instead of a `Vec`.
    pub fn feed_with(
        &mut self,
        chunk: &str,
        mut on_event: impl FnMut(Event<'_>),
    ) -> Result<(), ParseError> {
        self.advance(chunk, false)?;
        let (buffer, plan) = (&self.buffer, self.plan);
        if let Some((field, start, end)) = self.pending.lone_chunk() {
            // Most feeds: one chunk of one region's text, lent as it stands (the next feed's
            // `advance` clears the record), not drained.
            on_event(chunk_event(
                buffer,
                (plan.name(field), plan.dirty(field)),
                start,
                end,
            ));
            return Ok(());
        }
        for r in self.pending.events.drain(..) {
            on_event(r.lend(buffer, plan));
        }
        Ok(())
    }

    /// [`XRegexStreamParser::feed_with`] for adapters that keep ranges of the output (see
    /// [`MessageStream::feed_text_with`](crate::stream::MessageStream::feed_text_with)): a feed
    /// whose only event is text for a text region returns it as a [`TextRun`]; any other feed's
    /// events go to `on_event`, with the output so far.
    pub fn feed_text_with(
        &mut self,
        chunk: &str,
        on_event: impl FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        self.advance(chunk, false)?;
        let plan = self.plan;
        Ok(self.pending.hand_out(
            &self.buffer,
            0,
            |at| (plan.name(at), plan.dirty(at)),
            plan,
            on_event,
        ))
    }

    /// Ends the stream: closes open regions (`$` matches at the end) and returns the message,
    /// equal to [`Schema::parse`] of everything fed, with the last events.
    pub fn finish(mut self) -> Result<(Value, Vec<Event<'p>>), ParseError> {
        self.advance("", true)?;
        if self.lenient {
            // The regions closed so far are the lenient parse's (each set aside or whole).
            let lenient = self.plan.schema.parse_lenient(&self.buffer);
            let buffer = &self.buffer;
            let plan = self.plan;
            let mut events: Vec<Event<'p>> = std::mem::take(&mut self.pending.events)
                .into_iter()
                .map(|r| r.detach(buffer, plan))
                .collect();
            events.extend(
                lenient
                    .malformed
                    .into_iter()
                    .map(|m| Event::Malformed(Box::new(m))),
            );
            return Ok((lenient.message, events));
        }
        let plan = self.plan;
        let root = plan.schema.root();
        let mut out = Map::new();
        for (field, values) in plan.fields.iter().zip(std::mem::take(&mut self.values)) {
            let Some((name, node)) = plan.property(field) else {
                continue;
            };
            let value = match field.kind {
                FieldKind::Const => node.constant.clone().unwrap_or(Value::Null),
                FieldKind::Search(_) => values.into_iter().next().unwrap_or(Value::Null),
                FieldKind::Iterate(_) if values.is_empty() => Value::Null,
                FieldKind::Iterate(_) => Value::Array(values),
            };
            if !value.is_null() {
                out.insert(name.to_owned(), value);
            }
        }
        let required: Vec<&str> = root.required.iter().map(String::as_str).collect();
        support::check_required(&required, |k| out.contains_key(k), &root.pointer)?;
        if let Some(check) = plan.schema.check() {
            check.verify(&plan.schema, &self.buffer)?;
        }
        let buffer = &self.buffer;
        let events = std::mem::take(&mut self.pending.events)
            .into_iter()
            .map(|r| r.detach(buffer, plan))
            .collect();
        Ok((Value::Object(out), events))
    }

    fn advance(&mut self, chunk: &str, eof: bool) -> Result<(), ParseError> {
        self.pending.check()?;
        self.buffer.push_str(chunk);
        self.pending.events.clear();
        if !eof && self.route_quietly(chunk.len()) {
            return Ok(());
        }
        for i in 0..self.scans.len() {
            if let Err(e) = self.run(i, eof) {
                return Err(self.pending.fail(e));
            }
        }
        Ok(())
    }

    /// The feed fast path: when every scanner had reached the end of the buffer before this
    /// chunk and waits for a byte the chunk does not hold (an opener's first byte, a closer's),
    /// each one moves to the new end as [`Self::run`] would, without its searches: openers are
    /// still unseen, bodies grow by the chunk. `false`: run the scanners.
    fn route_quietly(&mut self, added: usize) -> bool {
        // Larger chunks are searched as a whole: the checks below are per byte.
        const MAX_CHUNK: usize = 16;
        let len = self.buffer.len();
        let start = len - added;
        if added > MAX_CHUNK {
            return false;
        }
        let plan = self.plan;
        let bytes = self.buffer.as_bytes();
        let chunk = &bytes[start..];
        for (scan, field) in self.scans.iter().zip(&plan.fields) {
            let region = match &field.kind {
                FieldKind::Search(r) | FieldKind::Iterate(r) => r,
                FieldKind::Const => continue,
            };
            match *scan {
                Scan::Done => {}
                Scan::Seek { from } if from == start => {
                    // No opener, whole or begun, may start in the chunk.
                    let opener = region.shape.opener.as_bytes();
                    let Some(&first) = opener.first() else {
                        return false;
                    };
                    // A chunk here is at most `MAX_CHUNK` bytes: a look at each is cheaper than
                    // setting up `memchr`'s vector loop (one per scanner per feed).
                    let begun =
                        (0..chunk.len()).any(|p| chunk[p] == first && begins(opener, &chunk[p..]));
                    if begun {
                        return false;
                    }
                }
                Scan::Body { body, scan, .. } if scan.max(body) == start => {
                    if region.closer_starts.any_in(chunk) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        for (i, scan) in self.scans.iter_mut().enumerate() {
            match scan {
                Scan::Seek { from } => *from = len,
                Scan::Body { emitted, scan, .. } => {
                    if len > *emitted {
                        self.pending.events.push(RawEvent::Chunk {
                            field: i,
                            start: *emitted,
                            end: len,
                        });
                    }
                    *emitted = len;
                    *scan = len;
                }
                _ => {}
            }
        }
        true
    }

    /// Advances field `i` as far as the buffer allows.
    fn run(&mut self, i: usize, eof: bool) -> Result<(), ParseError> {
        let plan = self.plan;
        let Some(field) = plan.fields.get(i) else {
            return Ok(());
        };
        let region = match &field.kind {
            FieldKind::Search(r) | FieldKind::Iterate(r) => r,
            FieldKind::Const => return Ok(()),
        };
        let bytes = self.buffer.as_bytes();
        let len = bytes.len();
        loop {
            let Some(scan) = self.scans.get(i).copied() else {
                return Ok(());
            };
            let next = match scan {
                Scan::Done => return Ok(()),
                Scan::Seek { from } => {
                    // Text without the opener's first byte holds no opener, nor a prefix of one.
                    let rest = bytes.get(from..).unwrap_or_default();
                    if let (Some(first), false) = (&region.opener_first, eof) {
                        if !first.any_in(rest) {
                            set(
                                &mut self.scans,
                                i,
                                Scan::Seek {
                                    from: len.max(from),
                                },
                            );
                            return Ok(());
                        }
                    }
                    let found = bytes
                        .get(from..)
                        .and_then(|rest| region.opener.find(rest))
                        .map(|at| from + at);
                    match found {
                        Some(start) => after_opener(region, start),
                        None if eof => Scan::Done,
                        None => {
                            let from = opener_may_start(region, bytes, from);
                            set(&mut self.scans, i, Scan::Seek { from });
                            return Ok(());
                        }
                    }
                }
                Scan::Look { start, at } => {
                    match look(&region.shape.not_followed_by, &self.buffer, at, eof) {
                        Decision::Wait => return Ok(()),
                        // The look-ahead matched: `(?!…)` fails this start.
                        Decision::Yes(()) => Scan::Seek { from: start + 1 },
                        Decision::No => match &region.shape.header {
                            Some(_) => Scan::Header { start, at },
                            None => body_at(region, start, at),
                        },
                    }
                }
                Scan::Header { start, at } => match header_step(region, &self.buffer, at, eof) {
                    Decision::Wait => {
                        set(&mut self.scans, i, Scan::Header { start, at });
                        return Ok(());
                    }
                    Decision::No => Scan::Seek { from: start + 1 },
                    Decision::Yes((pos, true)) => body_at(region, start, pos),
                    Decision::Yes((pos, false)) => Scan::Header { start, at: pos },
                },
                Scan::Body {
                    cap,
                    body,
                    emitted,
                    scan,
                } => match body_end(region, bytes, body, scan, eof) {
                    BodyEnd::Wait { safe } => {
                        if safe > emitted {
                            self.pending.events.push(RawEvent::Chunk {
                                field: i,
                                start: emitted,
                                end: safe,
                            });
                        }
                        set(
                            &mut self.scans,
                            i,
                            Scan::Body {
                                cap,
                                body,
                                emitted: emitted.max(safe),
                                scan: safe.max(scan),
                            },
                        );
                        return Ok(());
                    }
                    BodyEnd::Close { end, match_end } => {
                        let end = if region.shape.capture_with_closer {
                            match_end
                        } else {
                            end
                        };
                        if end > emitted {
                            self.pending.events.push(RawEvent::Chunk {
                                field: i,
                                start: emitted,
                                end,
                            });
                        }
                        let text = span(&self.buffer, cap, end);
                        // Lenient: `None` is a region set aside (`finish` reports it with the
                        // lenient parse).
                        let closed = if self.lenient {
                            close_value_lenient(plan, field, text, &self.buffer).map(Ok)
                        } else {
                            Some(
                                close_value(plan, field, text).map_err(|e| e.located(&self.buffer)),
                            )
                        };
                        match closed {
                            Some(Ok(value)) => {
                                if let Some(values) = self.values.get_mut(i) {
                                    values.push(value.clone());
                                }
                                self.pending
                                    .events
                                    .push(RawEvent::Close { field: i, value });
                            }
                            None => {}
                            Some(Err(e)) => return Err(e),
                        }
                        match field.kind {
                            FieldKind::Iterate(_) => Scan::Seek { from: match_end },
                            _ => Scan::Done,
                        }
                    }
                },
            };
            if let (Scan::Body { .. }, false) = (next, matches!(scan, Scan::Body { .. })) {
                self.pending.events.push(RawEvent::Open { field: i });
            }
            set(&mut self.scans, i, next);
        }
    }
}

/// Where the opener of `region` may still start in `bytes`, no complete occurrence starting at
/// or after `from`: the first position whose rest is a proper prefix of the opener (text that a
/// later chunk may complete), else the end.
fn opener_may_start(region: &Region, bytes: &[u8], from: usize) -> usize {
    let opener = region.shape.opener.as_bytes();
    let len = bytes.len();
    let lowest = from.max(len.saturating_sub(opener.len().saturating_sub(1)));
    (lowest..len)
        .find(|&p| begins(opener, &bytes[p..]))
        .unwrap_or(len)
}

/// Whether an occurrence of `opener` may start at the beginning of `rest`: they agree as far as
/// both go (the occurrence is whole, or `rest` ends inside it).
fn begins(opener: &[u8], rest: &[u8]) -> bool {
    let n = rest.len().min(opener.len());
    // The first byte alone settles most positions, without a `memcmp` call.
    n > 0 && rest[0] == opener[0] && rest[..n] == opener[..n]
}

fn set(scans: &mut [Scan], i: usize, scan: Scan) {
    if let Some(s) = scans.get_mut(i) {
        *s = scan;
    }
}

fn after_opener(region: &Region, start: usize) -> Scan {
    let at = start + region.shape.opener.len();
    if !region.shape.not_followed_by.is_empty() {
        Scan::Look { start, at }
    } else if region.shape.header.is_some() {
        Scan::Header { start, at }
    } else {
        body_at(region, start, at)
    }
}

fn body_at(region: &Region, start: usize, body: usize) -> Scan {
    let cap = if region.shape.capture_from_opener {
        start
    } else {
        body
    };
    Scan::Body {
        cap,
        body,
        emitted: cap,
        scan: body,
    }
}

/// Whether `$` matches at `at`: `Yes`/`No`, or `Wait` while more text could decide it.
fn dollar_at(bytes: &[u8], at: usize, eof: bool) -> Decision<()> {
    let rest = bytes.get(at..).unwrap_or_default();
    let possible = rest.is_empty() || rest == b"\n";
    match (possible, eof) {
        (false, _) => Decision::No,
        (true, true) => Decision::Yes(()),
        (true, false) => Decision::Wait,
    }
}

/// Whether literal `lit` matches at `at`.
fn lit_at(lit: &[u8], bytes: &[u8], at: usize, eof: bool) -> Decision<()> {
    let rest = bytes.get(at..).unwrap_or_default();
    if rest.starts_with(lit) {
        Decision::Yes(())
    } else if !eof && lit.starts_with(rest) {
        Decision::Wait
    } else {
        Decision::No
    }
}

/// Whether a word character (`alt`, a [`Delim::Word`]) follows `at`.
fn word_at(alt: &Delim, text: &str, at: usize, eof: bool) -> Decision<()> {
    match text.get(at..).and_then(|rest| rest.chars().next()) {
        Some(c) if alt.is_word_char(c) => Decision::Yes(()),
        Some(_) => Decision::No,
        None if eof => Decision::No,
        None => Decision::Wait,
    }
}

/// Whether any alternative of a look-ahead matches at `at`.
fn look(alts: &[Delim], text: &str, at: usize, eof: bool) -> Decision<()> {
    let bytes = text.as_bytes();
    let mut wait = false;
    for alt in alts {
        let d = match alt {
            Delim::Lit(l) => lit_at(l.as_bytes(), bytes, at, eof),
            Delim::Dollar => dollar_at(bytes, at, eof),
            Delim::Word { .. } => word_at(alt, text, at, eof),
        };
        match d {
            Decision::Yes(()) => return Decision::Yes(()),
            Decision::Wait => wait = true,
            Decision::No => {}
        }
    }
    if wait {
        Decision::Wait
    } else {
        Decision::No
    }
}

/// One step of the header loop at `at`: `Yes((pos, true))` when the terminator matched (the body
/// starts at `pos`), `Yes((pos, false))` when an alternative took the loop to `pos`, `No` when
/// this start fails.
fn header_step(region: &Region, text: &str, at: usize, eof: bool) -> Decision<(usize, bool)> {
    let Some(header) = &region.shape.header else {
        return Decision::No;
    };
    let bytes = text.as_bytes();
    match lit_at(header.terminator.as_bytes(), bytes, at, eof) {
        Decision::Yes(()) => return Decision::Yes((at + header.terminator.len(), true)),
        Decision::Wait => return Decision::Wait,
        Decision::No => {}
    }
    let mut wait = false;
    for alt in &header.alternatives {
        match alt {
            HeaderAlt::Lit(l) => match lit_at(l.as_bytes(), bytes, at, eof) {
                Decision::Yes(()) => return Decision::Yes((at + l.len(), false)),
                Decision::Wait => wait = true,
                Decision::No => {}
            },
            HeaderAlt::Class { .. } => match text.get(at..).and_then(|r| r.chars().next()) {
                Some(c) if alt.class_matches(c) => {
                    return Decision::Yes((at + c.len_utf8(), false))
                }
                Some(_) => {}
                None if eof => {}
                None => wait = true,
            },
        }
    }
    if wait {
        Decision::Wait
    } else {
        Decision::No
    }
}

enum BodyEnd {
    /// No closer yet: text before `safe` is body for certain.
    Wait { safe: usize },
    /// The body ends at `end`; the match at `match_end`.
    Close { end: usize, match_end: usize },
}

/// Finds where the body that starts at `body` ends; no closer starts in `body..scan`.
fn body_end(region: &Region, bytes: &[u8], body: usize, scan: usize, eof: bool) -> BodyEnd {
    let len = bytes.len();
    let from = scan.max(body);
    let rest = bytes.get(from..).unwrap_or_default();
    if !eof && !region.closer_starts.any_in(rest) {
        return BodyEnd::Wait {
            safe: len.max(from),
        };
    }
    let first = region
        .closers
        .iter()
        .flatten()
        .filter_map(|f| f.find(rest))
        .min()
        .map(|at| from + at);
    let ends_in_newline = bytes.last() == Some(&b'\n') && len > body;
    let end = if eof {
        // `$` matches at the end, or before a final newline.
        let dollar = if ends_in_newline { len - 1 } else { len };
        first.map_or(dollar, |f| f.min(dollar))
    } else {
        // The earliest position where a closer may still start: a suffix that is a proper
        // prefix of a literal closer, or a final newline `$` may claim.
        let mut hold = len;
        for delim in &region.shape.closers {
            match delim {
                Delim::Lit(l) => {
                    let lit = l.as_bytes();
                    let longest = lit.len().min(len - from.min(len) + 1);
                    for k in (1..longest).rev() {
                        if bytes.get(len - k..).is_some_and(|s| lit.starts_with(s)) {
                            hold = hold.min(len - k);
                            break;
                        }
                    }
                }
                Delim::Dollar if ends_in_newline => hold = hold.min(len - 1),
                Delim::Dollar | Delim::Word { .. } => {}
            }
        }
        match first {
            Some(f) if f <= hold => f,
            _ => {
                return BodyEnd::Wait {
                    safe: hold.max(from),
                }
            }
        }
    };
    // The closers in pattern order at `end`: the first that matches ends the match.
    for delim in &region.shape.closers {
        let d = match delim {
            Delim::Lit(l) => lit_at(l.as_bytes(), bytes, end, eof),
            Delim::Dollar => dollar_at(bytes, end, eof),
            Delim::Word { .. } => Decision::No,
        };
        match d {
            Decision::Yes(()) => {
                let match_end = match delim {
                    Delim::Lit(l) => end + l.len(),
                    Delim::Dollar | Delim::Word { .. } => end,
                };
                return BodyEnd::Close { end, match_end };
            }
            Decision::Wait => return BodyEnd::Wait { safe: end },
            Decision::No => {}
        }
    }
    // Unreachable for a position chosen above; waiting is the safe answer.
    BodyEnd::Wait { safe: end.min(len) }
}

/// The value of a closed region: the field's value for `x-regex`, an item's for an iterator.
fn close_value(plan: &XRegexPlan, field: &Field, text: &str) -> Result<Value, ParseError> {
    let Some((_, node)) = plan.property(field) else {
        return Ok(Value::Null);
    };
    match (&field.kind, &node.items) {
        (FieldKind::Iterate(_), Items::Each(item)) => {
            crate::schema::interp::parse_node(item, Content::borrowed(text), &mut Walk::strict())
        }
        _ => crate::schema::interp::after_regex(node, Content::borrowed(text), &mut Walk::strict()),
    }
}

/// [`close_value`] as the lenient one-shot parse reads the region: parts salvaged inside it,
/// and what the schema's completeness check names in it left out; `None` when it is set aside.
fn close_value_lenient(
    plan: &XRegexPlan,
    field: &Field,
    text: &str,
    buffer: &str,
) -> Option<Value> {
    let Some((_, node)) = plan.property(field) else {
        return Some(Value::Null);
    };
    match (&field.kind, &node.items) {
        (FieldKind::Iterate(_), Items::Each(item)) => {
            crate::schema::interp::parse_part_lenient(&plan.schema, item, text, false, None)
        }
        _ => {
            crate::schema::interp::parse_part_lenient(&plan.schema, node, text, true, Some(buffer))
        }
    }
}

impl FieldNames for XRegexPlan {
    fn name(&self, field: usize) -> &str {
        self.fields
            .get(field)
            .and_then(|f| self.property(f))
            .map_or("", |(name, _)| name)
    }

    fn dirty(&self, field: usize) -> bool {
        self.fields.get(field).is_some_and(|f| f.dirty)
    }
}

//! Streaming for x-regex schemas that a [`StreamProfile`] describes: the root regex cuts the
//! whole output into reasoning, content and tool calls, each a lazy body (`\S(?:.*?\S)??`) that
//! ends at the first place where the rest of the pattern matches.
//!
//! Why this is exact: a lazy body extends at least up to the first place where what follows it
//! can match, and in these formats what follows a body can only match at one of the format's
//! literal markers (a closer, a tool-call opener, an end token) or at the end of the text, after
//! whitespace. So the text of the current body up to the first marker, less its trailing
//! whitespace and less a possible marker prefix at the end of the buffer, is in the final value
//! whatever comes next, and is streamed. The one decision taken at a marker is the move from
//! reasoning to content at a reasoning closer (after a closer the rest always matches, so the
//! reasoning ends there); at any other marker streaming stops and the rest arrives with the
//! final message. The final message is always [`Schema::parse`] of the whole text, so a profile
//! can only make the stream hold text back, and property tests check that what was streamed is
//! a prefix of the final values for every chunking. (That parse takes the values of the calls
//! the stream parsed rather than parsing them again, where it meets the same text for the same
//! schema node: a pure function of the same input; see the `schema::reuse` module.)
//!
//! Cost: each feed looks at the new bytes once, and again at the end of the buffer only where a
//! marker may begin there (up to the longest marker's length); a feed whose bytes cannot begin a
//! marker, after a search that left the end clear, skips the searches altogether. A call is
//! parsed once, when it closes; `finish` runs the one-shot parse once, without the calls streamed
//! and with the completeness check deciding from what it read (about a fifth of a short
//! message's stream: `examples/stream_cost.rs` counts it).
//!
//! ```
//! use chatparse_runtime::schema::stream::{ProfiledStreamParser, StreamProfile};
//! use chatparse_runtime::stream::{Event, MessageStream};
//! use chatparse_runtime::Schema;
//!
//! let schema = Schema::from_json_str(r#"{"type": "object", "x-regex":
//!     "^\\s*(?:<think>\\s*(?:(?P<thinking>\\S(?:.*?\\S)??)\\s*)??(?:</think>|$)\\s*)?(?:(?P<content>\\S(?:.*?\\S)??)\\s*)??(?:(?P<call><call>(?:.*?\\S)??)\\s*)?$",
//!     "properties": {"thinking": {"type": "string"}, "content": {"type": "string"},
//!                    "call": {"type": "string"}}}"#)?;
//! let profile = StreamProfile::from_json_str_named(r#"{
//!     "reasoning": {"field": "thinking", "open": "<think>", "open_after_space": true,
//!                   "close": ["</think>"]},
//!     "content": {"field": "content"},
//!     "markers": ["<call>"]}"#, "<profile>", &schema)?;
//! let mut stream = ProfiledStreamParser::new(&schema, &profile, "");
//! let mut content = String::new();
//! for chunk in ["<think>hm", "m</thi", "nk>Hello", " world <ca", "ll>f()"] {
//!     stream.feed_with(chunk, &mut |event| {
//!         if let Event::RegionChunk { field: "content", text, .. } = event {
//!             content.push_str(&text);
//!         }
//!     })?;
//! }
//! assert_eq!(content, "Hello world"); // streamed before the output ended
//! let message = Box::new(stream).finish_with(&mut |_| {})?;
//! assert_eq!(message, Schema::parse(&schema, "<think>hmm</think>Hello world <call>f()")?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;

use crate::value::Value;

use memchr::memmem;

use super::decided::{CallStep, CallsText, DecidedCalls};
use super::list::ListScan;
use super::objects::{bare_call_at, ObjectScan};
use super::profile::{CallsProfile, StreamProfile, Untagged};
use super::pythonic::PythonicScan;
use super::recipients::RecipientScan;
use super::region::{region_shape, separated_shape, Delim, RegionShape, SeparatedShape};
use crate::budget::{self, OutputBudget};
use crate::error::ParseError;
use crate::py::unicode::is_space;
use crate::schema::reuse::{ParsedCall, ParsedCalls};
use crate::schema::{Items, Node, NodeType, Schema};
use crate::stream::raw::{chunk_event, span, FieldNames, Pending, RawEvent};
use crate::stream::spaces::SpaceRuns;
use crate::stream::{Event, MessageStream, TextRun};
use crate::support::Content;

/// The fields a profile streams, as field indices of [`RawEvent`]s.
const REASONING: usize = 0;
const CONTENT: usize = 1;
const CALLS: usize = 2;

/// Where the scan of the output stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing decided yet; `at` is where the undecided text starts (after a header).
    Start { at: usize, header_done: bool },
    /// Text before the first marker, reasoning if that marker is a closer.
    Ambiguous { from: usize },
    /// Inside a text field's body, which starts at `from` (content: after its opener, once
    /// `started`).
    Text {
        field: usize,
        from: usize,
        started: bool,
    },
    /// After content that ended at a closer the calls may follow (see `CallsProfile::after`):
    /// the calls open if an opener comes next, after white space from `at`.
    AfterContent { at: usize },
    /// After content that ended at a calls opener: each call streams as its iterator match
    /// closes; `next` is where the next match is searched from.
    Calls { next: usize },
    /// Nothing more streams; the final message brings the rest.
    Held,
}

/// How far the run of calls that opened the output has been read: up to `at`, inside a block
/// (its closer not yet seen) or after one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LeadingRun {
    at: usize,
    in_block: bool,
}

/// What the text after a run of leading calls has decided so far.
enum LeadingVerdict {
    /// Not yet: the run may go on, or the text after it has not shown how it begins.
    Wait,
    /// The calls are calls: they stream as any others.
    Calls,
    /// The text after the run may turn the calls into something else; the final message says.
    Held,
}

/// The scan that decides the calls one by one, for the profile's format.
#[derive(Debug)]
enum Decided<'p> {
    List(ListScan<'p>),
    Objects(ObjectScan<'p>),
    /// Boxed: it keeps the open call's joined text and its searches, much larger than the others.
    Pythonic(Box<PythonicScan<'p>>),
    Recipients(RecipientScan<'p>),
}

impl<'p> Decided<'p> {
    /// The scan `calls` asks for, if the calls field is written as it reads (checked by each
    /// scan's `new`; `loaded`: the profile was loaded for `schema`, so the checks passed).
    fn new(schema: &'p Schema, calls: &'p CallsProfile, loaded: bool) -> Option<Self> {
        let field = calls.field.as_str();
        let node = schema.root().property(field)?;
        if let Some(list) = &calls.list {
            if loaded {
                return Some(Decided::List(ListScan::checked(field, node, list)));
            }
            ListScan::new(field, node, list).ok().map(Decided::List)
        } else if calls.objects {
            let tag = calls.open.first()?;
            let scan = ObjectScan::new(field, schema.root(), node, tag).ok()?;
            Some(Decided::Objects(scan))
        } else if calls.pythonic {
            PythonicScan::new(field, node)
                .ok()
                .map(|scan| Decided::Pythonic(Box::new(scan)))
        } else if calls.recipients {
            RecipientScan::new(field, schema)
                .ok()
                .map(Decided::Recipients)
        } else {
            None
        }
    }

    fn field(&self) -> &'p str {
        match self {
            Decided::List(scan) => scan.field,
            Decided::Objects(scan) => scan.field,
            Decided::Pythonic(scan) => scan.field,
            Decided::Recipients(scan) => scan.field,
        }
    }

    fn scan(&mut self) -> &mut dyn DecidedCalls {
        match self {
            Decided::List(scan) => scan,
            Decided::Objects(scan) => scan,
            Decided::Pythonic(scan) => scan.as_mut(),
            Decided::Recipients(scan) => scan,
        }
    }
}

/// What has been streamed of one text field: `buffer[start..end]`, contiguous.
#[derive(Debug, Clone, Copy, Default)]
struct Streamed {
    opened: bool,
    start: usize,
    end: usize,
    /// How far the body has been read for its last non-space character.
    read_to: usize,
    /// The end of the last non-space character read in the body.
    text_end: Option<usize>,
}

/// A stream over a [`StreamProfile`] (see the module documentation).
#[derive(Debug)]
pub struct ProfiledStreamParser<'p> {
    schema: &'p Schema,
    profile: &'p StreamProfile,
    markers: Markers<'p>,
    /// The prompt's tail (see [`StreamProfile::prefix_tail`]) followed by the output so far.
    buffer: String,
    /// Where the output starts in `buffer` (after the prompt's tail).
    output_from: usize,
    phase: Phase,
    /// Where the marker search of the current phase resumes: no marker that the phase has not
    /// seen begins before it (see `Markers::resume_after_miss`).
    scanned: usize,
    /// Set when the last search, in this phase, found no marker and no marker's start at the
    /// end of a buffer of this length: a feed with no byte that may begin a marker then decides
    /// nothing but more text for the phase (see [`Self::take`]).
    clear: Option<(usize, Phase)>,
    /// The same for the search of the calls' stop marker (see [`Self::call_stop`]): the buffer's
    /// length when it last missed with the end clear, and resumed there.
    stop_clear: Option<usize>,
    fields: [Streamed; 2],
    /// The calls field, when its calls stream one by one: `x-regex-iterator` matches, or calls
    /// that a scan of the profile's format decides (the items of a JSON list, ...).
    /// Boxed: `calls` takes it out and puts it back on every feed inside a call, and it is a
    /// few hundred bytes (its shape, when owned).
    calls: Option<Box<CallScan<'p>>>,
    decided: Option<Decided<'p>>,
    /// How many calls have streamed, and where the last one ended.
    calls_sent: usize,
    calls_end: usize,
    /// The calls streamed, kept by debug builds only (every test) to check them against the
    /// final message, whichever scan decided them (release builds keep a copy of the iterated
    /// calls only, in `parsed`, where it saves parsing them again).
    #[cfg(debug_assertions)]
    sent_values: Vec<Value>,
    /// The `x-regex-iterator` calls a strict stream parsed, handed to the final parse so that
    /// it does not parse them again (see [`ParsedCalls`]).
    parsed: Vec<ParsedCall>,
    /// The call being read, and where its closer is searched from.
    call_open: Option<OpenCall>,
    closer_from: usize,
    /// Where the raw text of the next call starts when calls follow one another (the closer of
    /// the last match, which the model wrote as the next call's marker).
    raw_next: Option<usize>,
    /// Where the raw text sent of the call being read ends, once its region has opened (strict
    /// streams send a call's text as it arrives, so adapters can read its name and arguments
    /// before it closes).
    call_sent_to: Option<usize>,
    /// Set while calls that open the output wait for the text after them (see
    /// [`LeadingCalls`](super::profile::LeadingCalls)).
    leading: Option<LeadingRun>,
    /// `buffer[.0..end]` is known to be whitespace up to `.1` (see `first_text`).
    spaces: (usize, usize),
    /// The white space that the checks of a call's start (a bare JSON call at the output's
    /// start, a recipient's header) read while they wait, in the text from `.0` (see
    /// [`SpaceRuns`]).
    start_spaces: (usize, SpaceRuns),
    /// Whether the final message is the lenient parse's (see [`Schema::parse_lenient`]).
    lenient: bool,
    /// The length of the prompt's tail at the start of `buffer` (error positions count from
    /// after it).
    tail: usize,
    pending: Pending,
    /// The events the prompt's tail decided, handed out by `initial_events_with`.
    initial: Vec<RawEvent>,
}

impl<'p> ProfiledStreamParser<'p> {
    /// A stream of `schema`'s output guided by `profile`; `prefix` is the prompt (only its tail
    /// from the last reasoning opener on counts, see [`StreamProfile::prefix_tail`]).
    pub fn new(schema: &'p Schema, profile: &'p StreamProfile, prefix: &str) -> Self {
        Self::build(schema, profile, prefix, None)
    }

    /// [`ProfiledStreamParser::new`] for a profile loaded for `schema`
    /// ([`StreamProfile::from_json_str_named`] with this schema, as [`Spec`](crate::Spec) keeps
    /// them), with what its streams share: the checks the load ran on the calls' scans are not
    /// run again for every stream, nor is the calls' pattern read again.
    pub(crate) fn for_loaded(
        schema: &'p Schema,
        profile: &'p StreamProfile,
        prepared: &'p Prepared,
        prefix: &str,
    ) -> Self {
        Self::build(schema, profile, prefix, Some(prepared))
    }

    fn build(
        schema: &'p Schema,
        profile: &'p StreamProfile,
        prefix: &str,
        prepared: Option<&'p Prepared>,
    ) -> Self {
        let mut parser = ProfiledStreamParser {
            schema,
            profile,
            markers: Markers::new(profile.all_markers()),
            buffer: String::new(),
            output_from: 0,
            phase: Phase::Start {
                at: 0,
                header_done: false,
            },
            scanned: 0,
            clear: None,
            stop_clear: None,
            fields: [Streamed::default(); 2],
            calls: profile.tool_calls.as_ref().and_then(|c| {
                let node = schema.root().property(&c.field)?;
                let shape = match prepared {
                    Some(prepared) => Cow::Borrowed(prepared.calls.as_ref()?),
                    None if iterated_calls(c) => Cow::Owned(CallShape::of(node).ok()?),
                    None => return None,
                };
                CallScan::new(&c.field, node, shape).ok().map(Box::new)
            }),
            decided: profile
                .tool_calls
                .as_ref()
                .and_then(|c| Decided::new(schema, c, prepared.is_some())),
            calls_sent: 0,
            #[cfg(debug_assertions)]
            sent_values: Vec::new(),
            parsed: Vec::new(),
            calls_end: 0,
            call_open: None,
            closer_from: 0,
            raw_next: None,
            call_sent_to: None,
            leading: None,
            spaces: (usize::MAX, 0),
            start_spaces: (usize::MAX, SpaceRuns::default()),
            lenient: false,
            pending: Pending::default(),
            initial: Vec::new(),
            tail: 0,
        };
        let tail = profile.prefix_tail(prefix);
        if !tail.is_empty() {
            parser.tail = tail.len();
            parser.buffer.push_str(tail);
            parser.advance();
            parser.initial = std::mem::take(&mut parser.pending.events);
        }
        parser.output_from = parser.buffer.len();
        parser
    }

    /// Everything fed so far (the output, without the prompt's tail).
    pub fn output(&self) -> &str {
        self.buffer.get(self.output_from..).unwrap_or("")
    }

    /// The same stream, lenient: a call that does not parse is skipped (the ones after it
    /// still stream), and `finish` gives [`Schema::parse_lenient`]'s message with an
    /// [`Event::Malformed`] for each part set aside.
    pub fn with_lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// Feeds the next chunk; the events it decides go to `on_event`.
    pub fn feed_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ParseError> {
        let names = Names(self.profile);
        let one_chunk = match self.take(chunk)? {
            Fed::Text(text) => text,
            // The other common feed, inside an open call: one chunk of its raw text. Lent as it
            // stands (the record is cleared by the next feed), not drained.
            Fed::Recorded => match self.pending.lone_chunk() {
                Some(chunk) => Some(chunk),
                None => {
                    let buffer = &self.buffer;
                    for raw in self.pending.events.drain(..) {
                        on_event(raw.lend(buffer, &names));
                    }
                    return Ok(());
                }
            },
        };
        if let Some((field, start, end)) = one_chunk {
            on_event(chunk_event(&self.buffer, names.named(field), start, end));
        }
        Ok(())
    }

    /// [`ProfiledStreamParser::feed_with`] for adapters that keep ranges of the output (see
    /// [`MessageStream::feed_text_with`]): a feed whose only event is text for the reasoning or
    /// the content returns it as a [`TextRun`]; any other feed's events go to `on_event`, with
    /// the output so far.
    pub fn feed_text_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        if let Fed::Text(text) = self.take(chunk)? {
            // The one chunk of text, as `hand_out` would give it had it been recorded.
            self.pending
                .events
                .extend(text.map(|(field, start, end)| RawEvent::Chunk { field, start, end }));
        }
        let names = Names(self.profile);
        Ok(self.pending.hand_out(
            &self.buffer,
            self.output_from,
            |at| names.named(at),
            &names,
            on_event,
        ))
    }

    /// Appends `chunk` and records the events it decides, or gives the one chunk of text it
    /// decides (see [`Fed`]). Inlined into the two feeds: the returned `Fed` then costs nothing
    /// to match (a call returning it added a dozen instructions to every feed).
    #[inline(always)]
    fn take(&mut self, chunk: &str) -> Result<Fed, ParseError> {
        self.pending.check()?;
        self.pending.events.clear();
        let quiet = self.clear == Some((self.buffer.len(), self.phase))
            && !self.markers.may_begin_any(chunk.as_bytes());
        self.buffer.push_str(chunk);
        if quiet {
            // What `advance` would do, without its searches: the last search of this phase
            // missed and left the buffer's end clear, and no byte of the chunk may begin a
            // marker, so a search from the chunk's start misses too and leaves the new end
            // clear (a marker's start there would need one of the chunk's bytes, or a start
            // before the chunk that the last search would have seen at its end).
            match self.phase {
                Phase::Text {
                    field,
                    from,
                    started: true,
                } => {
                    self.pass_clear();
                    let limit = self.buffer.len();
                    if !self.fields[field].opened {
                        self.stream_to(field, from, limit);
                        return Ok(Fed::Recorded);
                    }
                    // Most feeds of a long answer or reasoning: text of an open region, handed
                    // straight to the caller rather than recorded and lent.
                    let text = self.known_text(field, from, limit).map(|(start, end)| {
                        self.mark_sent(field, start, end);
                        (field, start, end)
                    });
                    return Ok(Fed::Text(text));
                }
                Phase::Ambiguous { .. } => {
                    self.pass_clear();
                    return Ok(Fed::Recorded);
                }
                _ => {}
            }
        }
        self.advance();
        Ok(Fed::Recorded)
    }

    /// A quiet feed's search state (see [`Self::take`]): resumes at the end, which is clear.
    fn pass_clear(&mut self) {
        self.scanned = self.buffer.len();
        self.clear = Some((self.scanned, self.phase));
    }

    /// Ends the output: the message (the one-shot parse of everything, the prompt's tail
    /// included) and the events that complete the streamed fields and bring the rest.
    pub fn finish(mut self) -> Result<(Value, Vec<Event<'p>>), ParseError> {
        self.pending.check()?;
        let (message, malformed) = if self.lenient {
            let lenient = self.schema.parse_lenient(&self.buffer);
            (lenient.message, lenient.malformed)
        } else {
            // The calls streamed are parsed already: the final parse takes their values.
            let mut parsed = std::mem::take(&mut self.parsed);
            let reuse = (self.calls.as_ref())
                .filter(|_| !parsed.is_empty())
                .map(|scan| ParsedCalls::new(scan.items, &self.buffer, &mut parsed));
            let message = self.schema.parse_streamed(&self.buffer, reuse);
            (
                message.map_err(|e| e.shifted(&self.buffer, self.tail))?,
                Vec::new(),
            )
        };
        let mut events = Vec::new();
        self.final_events(&message, &mut events);
        events.extend(malformed.into_iter().map(|m| Event::Malformed(Box::new(m))));
        Ok((message, events))
    }

    /// The events that complete the streamed fields and bring the rest of `message`.
    fn final_events(&self, message: &Value, events: &mut Vec<Event<'p>>) {
        let Some(object) = message.as_object() else {
            return;
        };
        // The text fields first (reasoning, then content, as they stream), then the rest in
        // the message's order.
        let mut keys: Vec<(&String, &Value)> = object.iter().collect();
        keys.sort_by_key(|(key, _)| self.text_field(key).unwrap_or(usize::MAX));
        for (key, value) in keys {
            let name = self.field_name(key);
            if self.is_const(key) {
                continue;
            }
            match self.text_field(key) {
                Some(i) => {
                    let streamed = &self.fields[i];
                    let sent = if streamed.opened {
                        span(&self.buffer, streamed.start, streamed.end)
                    } else {
                        events.push(Event::RegionOpen { field: name });
                        ""
                    };
                    let rest = value.as_str().and_then(|v| v.strip_prefix(sent));
                    debug_assert!(
                        rest.is_some(),
                        "streamed {key} {sent:?} is not a prefix of the final {value}"
                    );
                    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
                        events.push(Event::RegionChunk {
                            field: name,
                            text: Cow::Owned(rest.to_owned()),
                            dirty: false,
                        });
                    }
                    events.push(Event::RegionClose {
                        field: name,
                        value: value.clone(),
                    });
                }
                None if (self.calls_sent > 0 || self.call_sent_to.is_some())
                    && self.calls_field() == Some(key) =>
                {
                    let items = value.as_array().map_or(&[][..], Vec::as_slice);
                    #[cfg(debug_assertions)]
                    assert!(
                        items.len() >= self.calls_sent
                            && items
                                .iter()
                                .zip(&self.sent_values)
                                .all(|(a, b)| crate::py::identical(a, b)),
                        "streamed calls {:?} are not the first of the final {value}",
                        self.sent_values
                    );
                    let rest = items.get(self.calls_sent..).unwrap_or_default();
                    // A call whose region opened while it was read continues in that region.
                    let open = self.call_sent_to.is_some();
                    if !rest.is_empty() || open {
                        if !open {
                            events.push(Event::RegionOpen { field: name });
                        }
                        let unstreamed = span(&self.buffer, self.streamed_end(), self.buffer.len());
                        events.push(Event::RegionChunk {
                            field: name,
                            text: Cow::Owned(unstreamed.to_owned()),
                            dirty: true,
                        });
                        events.push(Event::RegionClose {
                            field: name,
                            value: Value::Array(rest.to_vec()),
                        });
                    }
                }
                None => {
                    // One region per other field (tool calls: the whole list), its raw text the
                    // output after the last streamed character, where the field was written:
                    // adapters find the model's own argument text in it.
                    events.push(Event::RegionOpen { field: name });
                    let unstreamed = span(&self.buffer, self.streamed_end(), self.buffer.len());
                    if !unstreamed.is_empty() {
                        events.push(Event::RegionChunk {
                            field: name,
                            text: Cow::Owned(unstreamed.to_owned()),
                            dirty: true,
                        });
                    }
                    events.push(Event::RegionClose {
                        field: name,
                        value: value.clone(),
                    });
                }
            }
        }
    }

    /// The field whose calls stream one by one.
    fn calls_field(&self) -> Option<&str> {
        match (&self.calls, &self.decided) {
            (Some(scan), _) => Some(scan.field),
            (None, decided) => decided.as_ref().map(Decided::field),
        }
    }

    /// The scan of calls to recipients, if the profile's calls are those.
    fn recipients(&mut self) -> Option<&mut RecipientScan<'p>> {
        match &mut self.decided {
            Some(Decided::Recipients(scan)) => Some(scan),
            _ => None,
        }
    }

    /// Where the text streamed so far ends.
    fn streamed_end(&self) -> usize {
        self.fields
            .iter()
            .map(|f| f.end)
            .chain([self.calls_end, self.call_sent_to.unwrap_or(0)])
            .max()
            .unwrap_or(0)
    }

    /// The field's name with the profile's or schema's lifetime.
    fn field_name(&self, key: &str) -> &'p str {
        self.schema
            .root()
            .properties
            .iter()
            .flatten()
            .find(|p| p.name == key)
            .map_or("", |p| p.name.as_str())
    }

    fn is_const(&self, key: &str) -> bool {
        self.schema
            .root()
            .properties
            .iter()
            .flatten()
            .any(|p| p.name == key && p.node.constant.is_some())
    }

    fn text_field(&self, key: &str) -> Option<usize> {
        if self
            .profile
            .reasoning
            .as_ref()
            .is_some_and(|r| r.field == key)
        {
            Some(REASONING)
        } else if self
            .profile
            .content
            .as_ref()
            .is_some_and(|c| c.field == key)
        {
            Some(CONTENT)
        } else {
            None
        }
    }

    /// Moves the scan as far as the buffer decides, recording events.
    fn advance(&mut self) {
        loop {
            let before = self.phase;
            match self.phase {
                Phase::Start { at, header_done } => self.start(at, header_done),
                Phase::Ambiguous { from } => self.ambiguous(from),
                Phase::Text {
                    field,
                    from,
                    started,
                } => self.text(field, from, started),
                Phase::AfterContent { at } => self.after_content(at),
                Phase::Calls { next } => self.calls_step(next),
                Phase::Held => {}
            }
            if self.phase == before {
                return;
            }
        }
    }

    /// The first non-space character at or after `from`, if the buffer has one. A search that
    /// found only whitespace is remembered, so that waiting on a long run of whitespace (fed a
    /// byte at a time) reads each byte once.
    fn first_text(&mut self, from: usize) -> Option<usize> {
        let resume = match self.spaces {
            (start, end) if start == from => end.max(from),
            _ => from,
        };
        let found = self
            .buffer
            .get(resume..)?
            .char_indices()
            .find(|&(_, c)| !is_space(c))
            .map(|(i, _)| resume + i);
        if found.is_none() {
            self.spaces = (from, self.buffer.len());
        }
        found
    }

    /// Moves to the phase of `field`'s body at `from` (Held if the profile has no such field).
    fn enter(&mut self, field: usize, from: usize) {
        let exists = match field {
            REASONING => self.profile.reasoning.is_some(),
            _ => self.profile.content.is_some(),
        };
        self.scanned = from;
        self.phase = if exists {
            Phase::Text {
                field,
                from,
                started: field == REASONING,
            }
        } else {
            Phase::Held
        };
    }

    fn start(&mut self, at: usize, header_done: bool) {
        let Some(reasoning) = &self.profile.reasoning else {
            self.enter(CONTENT, at);
            return;
        };
        let Some(t) = self.first_text(at) else {
            return;
        };
        let rest = &self.buffer.as_bytes()[t..];
        if let (Some(header), false) = (&reasoning.header, header_done) {
            let header = header.as_bytes();
            if rest.starts_with(header) {
                self.phase = Phase::Start {
                    at: t + header.len(),
                    header_done: true,
                };
            } else if header.starts_with(rest) {
                // A header may be arriving.
            } else {
                self.phase = Phase::Start {
                    at,
                    header_done: true,
                };
            }
            return;
        }
        if let Some(open) = &reasoning.open {
            let o = if reasoning.open_after_space { t } else { 0 };
            if o == t {
                let open = open.as_bytes();
                if rest.starts_with(open) {
                    self.enter(REASONING, t + open.len());
                    return;
                }
                if open.starts_with(rest) {
                    return;
                }
            }
        }
        match reasoning.untagged {
            Untagged::Content => self.enter(CONTENT, at),
            Untagged::Reasoning => self.enter(REASONING, t),
            Untagged::ReasoningUnlessMarkup if rest.first() != Some(&b'<') => {
                self.enter(REASONING, t)
            }
            Untagged::ReasoningUnlessMarkup | Untagged::Ambiguous => {
                self.scanned = at;
                self.phase = Phase::Ambiguous { from: at };
            }
        }
    }

    fn ambiguous(&mut self, from: usize) {
        let Some((m, marker)) = self.markers.first_in(&self.buffer, self.scanned.max(from)) else {
            self.missed();
            return;
        };
        if !self.is_reasoning_close(marker) {
            self.phase = Phase::Held;
            return;
        }
        // Everything before the first closer is reasoning: stream it at once.
        if let Some(t) = self.first_text(from).filter(|&t| t < m) {
            let end = t + self.buffer[t..m].trim_end_matches(is_space).len();
            self.emit(REASONING, t, end);
        }
        self.enter(CONTENT, m + marker.len());
    }

    /// After a search of the text phases found no marker: where the next one resumes, and
    /// whether the buffer's end is clear of a marker's start.
    fn missed(&mut self) {
        self.scanned = self.markers.resume_after_miss(&self.buffer);
        if self.scanned == self.buffer.len() {
            self.clear = Some((self.scanned, self.phase));
        }
    }

    fn is_reasoning_close(&self, marker: &str) -> bool {
        self.profile
            .reasoning
            .as_ref()
            .is_some_and(|r| r.close.iter().any(|c| c == marker))
    }

    fn text(&mut self, field: usize, from: usize, started: bool) {
        if !started {
            self.start_content(from);
            return;
        }
        let found = self.markers.first_in(&self.buffer, self.scanned.max(from));
        let limit = match found {
            Some((m, _)) => m,
            None => {
                self.missed();
                self.scanned
            }
        };
        self.stream_to(field, from, limit);
        if let Some((m, marker)) = found {
            if field == REASONING && self.is_reasoning_close(marker) {
                self.enter(CONTENT, m + marker.len());
            } else if field == CONTENT
                && matches!(self.decided, Some(Decided::Recipients(_)))
                && self.opens_calls(marker)
            {
                // A `>>>` ends the content only where a call's header follows it.
                let at = m + marker.len();
                let spaces = start_spaces(&mut self.start_spaces, at);
                match RecipientScan::header_at(&self.buffer[at..], spaces) {
                    Some(Some(_)) => {
                        self.enter_calls(m, marker);
                        if let Some(recipients) = self.recipients() {
                            recipients.start(m, false);
                        }
                    }
                    Some(None) => self.phase = Phase::Held,
                    None => {}
                }
            } else if field == CONTENT && self.calls_field().is_some() && self.opens_calls(marker) {
                self.enter_calls(m, marker);
            } else if field == CONTENT && self.calls_field().is_some() && self.calls_after(marker) {
                self.phase = Phase::AfterContent {
                    at: m + marker.len(),
                };
            } else {
                self.phase = Phase::Held;
            }
        }
    }

    /// The calls open at `m`, with `marker` (one of the profile's calls openers).
    fn enter_calls(&mut self, m: usize, marker: &str) {
        self.scanned = m + marker.len();
        self.phase = Phase::Calls { next: m };
        let leading = self
            .profile
            .tool_calls
            .as_ref()
            .and_then(|c| c.leading.as_ref());
        if leading.is_some() && self.buffer[..m].chars().all(is_space) {
            self.leading = Some(LeadingRun {
                at: m + marker.len(),
                in_block: true,
            });
        }
        match &mut self.decided {
            Some(Decided::List(list)) => list.start(m, m + marker.len(), marker),
            Some(Decided::Objects(objects)) => objects.start(m + marker.len()),
            Some(Decided::Pythonic(pythonic)) => pythonic.start(m),
            // Started where their header is read.
            Some(Decided::Recipients(_)) | None => {}
        }
    }

    /// Calls that opened the output stream once the text after their run shows it cannot make
    /// them something else (see [`LeadingCalls`](super::profile::LeadingCalls)); until then
    /// nothing of them is sent, not even an open call's start.
    fn leading_calls(&mut self, next: usize) {
        match self.leading_verdict() {
            LeadingVerdict::Wait => {}
            LeadingVerdict::Held => self.phase = Phase::Held,
            LeadingVerdict::Calls => {
                self.leading = None;
                self.calls_step(next);
            }
        }
    }

    /// Reads the calls' part as the profile says it is written.
    fn calls_step(&mut self, next: usize) {
        if self.leading.is_some() {
            self.leading_calls(next);
        } else if self.decided.is_some() {
            self.decided_calls();
        } else {
            self.calls(next);
        }
    }

    /// Follows the run of leading calls as the substitution reads it: blocks from a calls
    /// opener to the first `close`, each followed by white space, then the text after the run.
    fn leading_verdict(&mut self) -> LeadingVerdict {
        let (Some(calls), Some(mut run)) = (self.profile.tool_calls.as_ref(), self.leading) else {
            return LeadingVerdict::Calls;
        };
        let Some(leading) = calls.leading.as_ref() else {
            return LeadingVerdict::Calls;
        };
        loop {
            if run.in_block {
                let close = leading.close.as_bytes();
                let Some(i) = memmem::find(&self.buffer.as_bytes()[run.at..], close) else {
                    // A closer cut by the end of the buffer is found again next time.
                    let resume = self.buffer.len().saturating_sub(close.len() - 1);
                    run.at = run.at.max(resume);
                    self.leading = Some(run);
                    return LeadingVerdict::Wait;
                };
                run = LeadingRun {
                    at: run.at + i + close.len(),
                    in_block: false,
                };
            }
            let Some(t) = self.first_text(run.at) else {
                self.leading = Some(run);
                return LeadingVerdict::Wait;
            };
            let rest = &self.buffer.as_bytes()[t..];
            if let Some(open) = calls.open.iter().find(|o| rest.starts_with(o.as_bytes())) {
                run = LeadingRun {
                    at: t + open.len(),
                    in_block: true,
                };
                continue;
            }
            if leading
                .held_by
                .iter()
                .any(|h| rest.starts_with(h.as_bytes()))
            {
                return LeadingVerdict::Held;
            }
            let arriving = calls.open.iter().chain(&leading.held_by);
            if arriving.into_iter().any(|l| l.as_bytes().starts_with(rest)) {
                self.leading = Some(run);
                return LeadingVerdict::Wait;
            }
            return LeadingVerdict::Calls;
        }
    }

    fn calls_after(&self, marker: &str) -> bool {
        self.profile
            .tool_calls
            .as_ref()
            .is_some_and(|c| c.after.iter().any(|a| a == marker))
    }

    /// After a content closer the calls may follow: they open where an opener comes after only
    /// white space (the root pattern's `\s*` between them); anything else ends the streaming.
    fn after_content(&mut self, at: usize) {
        let Some(t) = self.first_text(at) else {
            return;
        };
        let rest = &self.buffer.as_bytes()[t..];
        let openers = self.profile.tool_calls.iter().flat_map(|c| c.open.iter());
        let mut maybe = false;
        for opener in openers {
            if rest.starts_with(opener.as_bytes()) {
                let opener: &'p str = opener;
                self.enter_calls(t, opener);
                return;
            }
            maybe |= opener.as_bytes().starts_with(rest);
        }
        if !maybe {
            self.phase = Phase::Held;
        }
    }

    fn opens_calls(&self, marker: &str) -> bool {
        self.profile
            .tool_calls
            .as_ref()
            .is_some_and(|c| c.open.iter().any(|o| o == marker))
    }

    /// Whether the calls read the content's openers themselves (calls to recipients).
    fn reads_openers(&self) -> bool {
        self.profile
            .tool_calls
            .as_ref()
            .is_some_and(|c| c.recipients)
    }

    /// The first marker after the calls' opener that is not one more calls opener (an end
    /// token, a reasoning marker): the calls' part of the output may end there, so no call that
    /// closes later is known. `Err(limit)` when there is none: how far the calls' text is
    /// known, the end of the buffer less a possible marker's start.
    fn call_stop(&mut self) -> Result<usize, usize> {
        let len = self.buffer.len();
        if let Some(clear) = self.stop_clear.filter(|&c| c == self.scanned && c <= len) {
            // The last search missed from here with the end clear: if no byte since may begin a
            // marker, this one misses too and leaves the new end clear (see `Self::take`).
            if !self.markers.may_begin_any(&self.buffer.as_bytes()[clear..]) {
                self.scanned = len;
                self.stop_clear = Some(len);
                return Err(len);
            }
        }
        loop {
            match self.markers.first_in(&self.buffer, self.scanned) {
                Some((m, marker)) if self.opens_calls(marker) => self.scanned = m + marker.len(),
                // Calls to recipients read the content openers (`>>>all\n`) themselves: only an
                // end token ends them.
                Some((m, marker))
                    if self.reads_openers()
                        && !self.profile.markers.iter().any(|k| k == marker) =>
                {
                    self.scanned = m + marker.len()
                }
                Some((m, _)) => return Ok(m),
                None => {
                    // One look at the buffer's end for both: the limit and where the search
                    // resumes (see `Markers::resume_after_miss`).
                    let limit = self.markers.resume_after_miss(&self.buffer);
                    self.scanned = self.scanned.max(limit);
                    // Clear only where no marker may begin at the end at all (the search may
                    // have resumed past a start inside a calls opener).
                    if limit == len {
                        self.stop_clear = Some(len);
                    }
                    return Err(limit);
                }
            }
        }
    }

    /// Streams every call whose iterator match closes (by a literal closer) before anything
    /// that could end the calls' part of the output.
    ///
    /// Why a closed match is final: the calls' group of the root regex runs from its opener to
    /// an end token or the end of the text, so it holds every closed match seen before a stop
    /// marker (a closer ends in a non-space character, so trimming the group's trailing white
    /// space cannot cut it); `re.finditer` finds matches left to right, and a lazy body ends at
    /// the first closer, so later text cannot change a match that has closed. Separated calls
    /// (each match starting where the last ended) are final for the same reasons once closed.
    fn calls(&mut self, next: usize) {
        let (stop, limit) = match self.call_stop() {
            Ok(m) => (Some(m), m),
            Err(limit) => (None, limit),
        };
        let Some(mut scan) = self.calls.take() else {
            self.phase = Phase::Held;
            return;
        };
        let mut next = next;
        let failed = loop {
            let bytes = &self.buffer.as_bytes()[..limit];
            let open = match self.call_open {
                Some(open) => open,
                None => match scan.find_call(&self.buffer, limit, next, self.raw_next) {
                    FoundCall::At { open, closer_from } => {
                        self.call_open = Some(open);
                        self.closer_from = closer_from;
                        open
                    }
                    FoundCall::NotBefore(at) => {
                        next = next.max(at);
                        break false;
                    }
                },
            };
            let (close_at, close_len) = match scan.find_closer(bytes, self.closer_from) {
                Ok(found) => found,
                Err(resume) => {
                    self.closer_from = resume.max(self.closer_from);
                    if !self.lenient {
                        let sent_to = scan.raw_known(bytes, self.closer_from);
                        self.send_open_call(open.raw, sent_to);
                    }
                    break false;
                }
            };
            let end = close_at + close_len;
            let (capture_end, raw_end) = match &scan.shape.form {
                CallForm::Region(shape) if shape.capture_with_closer => (end, end),
                CallForm::Region(_) => (close_at, end),
                CallForm::Separated(shape) => {
                    // A closer that is the separator begins the next call's raw text (the model
                    // wrote it as that call's marker); another closer ends this call's.
                    let separator = shape.separator.as_deref().map(str::as_bytes);
                    if separator == bytes.get(close_at..end) {
                        self.raw_next = Some(close_at);
                        (close_at, close_at)
                    } else {
                        self.raw_next = None;
                        (close_at, end)
                    }
                }
            };
            let capture = span(&self.buffer, open.body, capture_end);
            let parsed = if self.lenient {
                // As the lenient one-shot parse reads the call (parts salvaged inside it).
                crate::schema::interp::parse_part_lenient(
                    self.schema,
                    scan.items,
                    capture,
                    false,
                    None,
                )
                .ok_or(())
            } else {
                // The bound the parse sets itself (see `interp::parse_node`), set here so that
                // what it spends can be read.
                let _bound = OutputBudget::enter(capture.len());
                let (parsed, spent) = budget::spent_by(|| {
                    crate::schema::interp::parse_node(
                        scan.items,
                        Content::borrowed(capture),
                        &mut crate::schema::interp::Walk::strict(),
                    )
                });
                if let (Ok(value), Some(spent)) = (&parsed, spent) {
                    self.parsed.push(ParsedCall {
                        span: (open.body, capture_end),
                        value: Some(value.clone()),
                        spent,
                    });
                }
                parsed.map_err(|_| ())
            };
            let Ok(value) = parsed else {
                if self.lenient {
                    // Set aside by the lenient parse too; the calls after it still stream.
                    self.call_open = None;
                    next = end;
                    continue;
                }
                // A call that does not parse: the final parse says what becomes of it.
                break true;
            };
            self.send_call(open.raw, raw_end, value);
            self.call_open = None;
            next = end;
        };
        self.calls = Some(scan);
        self.phase = if failed || (stop.is_some() && self.call_open.is_none()) {
            Phase::Held
        } else {
            Phase::Calls { next }
        };
    }

    /// Streams every call that the profile's scan decides before anything that could end the
    /// calls' part of the output (each scan's module says why such a call is final: [`ListScan`],
    /// [`ObjectScan`], [`PythonicScan`], [`RecipientScan`]), and the raw text of the open call
    /// where the scan knows it. Only strict streams read them: a lenient parse salvages calls in
    /// its own way (a bad call set aside, the ones after it kept), so a lenient stream leaves the
    /// calls to the final message.
    fn decided_calls(&mut self) {
        if self.lenient || self.decided.is_none() {
            self.decided = None;
            self.phase = Phase::Held;
            return;
        }
        let (limit, stop, ended) = self.calls_limit();
        let end_token = ended.then(|| {
            self.profile
                .markers
                .iter()
                .filter(|k| self.buffer[limit..].starts_with(k.as_str()))
                .map(String::len)
                .max()
                .unwrap_or(0)
        });
        let mut open = false;
        let done = loop {
            // Read in place (not taken out and put back: a scan is a hundred bytes or more, and
            // this runs on every feed inside a call); `send_call` and `send_open_call` do not
            // read it.
            let Some(decided) = self.decided.as_mut() else {
                break true;
            };
            let calls = CallsText {
                text: &self.buffer,
                limit,
                end_token,
            };
            match decided.scan().next(calls) {
                CallStep::Call { start, end, value } => self.send_call(start, end, value),
                CallStep::Open { start, known } => {
                    self.send_open_call(start, known);
                    open = true;
                    break false;
                }
                CallStep::Wait => break false,
                CallStep::Done => break true,
            }
        };
        if done || (stop && !open) {
            self.phase = Phase::Held;
        }
    }

    /// How far the calls' text is known (the first marker that may end it, or the end of the
    /// buffer less a possible marker's start); whether a marker is there; and whether it is one
    /// that ends the calls' text for sure (an end token, not a reasoning marker).
    fn calls_limit(&mut self) -> (usize, bool, bool) {
        let found = self.call_stop();
        let stop = found.ok();
        let ended = stop.is_some_and(|m| {
            self.profile
                .markers
                .iter()
                .any(|k| self.buffer[m..].starts_with(k.as_str()) && !self.opens_calls(k))
                && !self.profile.reasoning.as_ref().is_some_and(|r| {
                    r.close
                        .iter()
                        .chain(&r.open)
                        .any(|k| self.buffer[m..].starts_with(k.as_str()))
                })
        });
        let limit = found.unwrap_or_else(|limit| limit);
        (limit, stop.is_some(), ended)
    }

    /// Sends a decided call, its raw text `start..end`: the rest of its region if its open
    /// text was sent (see [`Self::send_open_call`]), else one whole region.
    fn send_call(&mut self, start: usize, end: usize, value: Value) {
        let start = match self.call_sent_to.take() {
            Some(sent) => sent,
            None => {
                self.pending.events.push(RawEvent::Open { field: CALLS });
                start
            }
        };
        if end > start {
            self.pending.events.push(RawEvent::Chunk {
                field: CALLS,
                start,
                end,
            });
        }
        #[cfg(debug_assertions)]
        self.sent_values.push(value.clone());
        self.pending.events.push(RawEvent::Close {
            field: CALLS,
            value,
        });
        self.calls_sent += 1;
        self.calls_end = end;
    }

    /// Sends the raw text of the open call that has arrived and is known to be the call's,
    /// `open_at..limit`, opening its region first. Why only in strict streams: a call that then
    /// fails to parse fails the whole message, so nothing sent of it can end up contradicting the
    /// final message; a lenient stream sets such a call aside, so it sends each call only once it
    /// has closed and parsed.
    fn send_open_call(&mut self, open_at: usize, limit: usize) {
        let start = match self.call_sent_to {
            Some(sent) => sent,
            None => {
                self.pending.events.push(RawEvent::Open { field: CALLS });
                open_at
            }
        };
        let end = if self.buffer.is_char_boundary(limit) {
            limit.max(start)
        } else {
            start
        };
        if end > start {
            self.pending.events.push(RawEvent::Chunk {
                field: CALLS,
                start,
                end,
            });
        }
        self.call_sent_to = Some(end);
    }

    /// Content's start: its optional opener, and the starts that make it ambiguous.
    fn start_content(&mut self, from: usize) {
        let Some(content) = &self.profile.content else {
            self.phase = Phase::Held;
            return;
        };
        let Some(t) = self.first_text(from) else {
            return;
        };
        let rest = &self.buffer.as_bytes()[t..];
        let mut from = from;
        let mut opened = false;
        for open in &content.open {
            let open = open.as_bytes();
            if rest.starts_with(open) {
                from = t + open.len();
                opened = true;
                break;
            }
            if open.starts_with(rest) {
                return;
            }
        }
        if content.open_required && !opened {
            if matches!(self.decided, Some(Decided::Recipients(_))) && !self.lenient {
                // Calls from the start of the output: the root substitution gives them `>>>`.
                let marked = rest.starts_with(b">>>");
                if !marked && b">>>".starts_with(rest) {
                    return;
                }
                let at = if marked { t + 3 } else { t };
                let spaces = start_spaces(&mut self.start_spaces, at);
                match RecipientScan::header_at(&self.buffer[at..], spaces) {
                    None => return,
                    Some(Some(name)) if name != "all" => {
                        if let Some(recipients) = self.recipients() {
                            recipients.start(if marked { t } else { at }, !marked);
                        }
                        self.scanned = t;
                        self.phase = Phase::Calls { next: t };
                        return;
                    }
                    Some(_) => {}
                }
            }
            self.phase = Phase::Held;
            return;
        }
        if !opened {
            let lenient = self.lenient;
            let objects = match &mut self.decided {
                Some(Decided::Objects(objects)) => Some(objects).filter(|o| o.bare && !lenient),
                _ => None,
            };
            if let Some(objects) = objects {
                // A bare call at the start: the root substitution gives it the opener.
                let spaces = start_spaces(&mut self.start_spaces, t);
                match bare_call_at(&self.buffer[t..], spaces) {
                    Some(true) => {
                        objects.start_bare(t);
                        self.scanned = t;
                        self.phase = Phase::Calls { next: t };
                        return;
                    }
                    None => return,
                    Some(false) => {}
                }
            }
            for held in &content.held_if_starts {
                let held = held.as_bytes();
                if rest.starts_with(held) {
                    self.phase = Phase::Held;
                    return;
                }
                if held.starts_with(rest) {
                    return;
                }
            }
        }
        self.scanned = from;
        self.phase = Phase::Text {
            field: CONTENT,
            from,
            started: true,
        };
    }

    /// Streams `field`'s body text in `from..limit` that is known: up to its last non-space
    /// character.
    fn stream_to(&mut self, field: usize, from: usize, limit: usize) {
        if let Some((start, end)) = self.known_text(field, from, limit) {
            self.emit(field, start, end);
        }
    }

    /// What [`Self::stream_to`] sends: `field`'s text in `from..limit` not sent yet, as far as
    /// it is known (up to its last non-space character), after reading `from..limit`.
    fn known_text(&mut self, field: usize, from: usize, limit: usize) -> Option<(usize, usize)> {
        let streamed = &mut self.fields[field];
        let read_from = streamed.read_to.max(from);
        if limit <= read_from {
            return None;
        }
        // The last non-space character read from the end, the first one only when the region
        // has not opened (where it starts): each feed reads the new text once, and most of it
        // not at all.
        let new = span(&self.buffer, read_from, limit);
        let last = text_end(new).map(|end| read_from + end);
        let mut text_end = streamed.text_end;
        let mut first = None;
        if last.is_some() {
            text_end = last;
            if !streamed.opened {
                first = new.find(|c| !is_space(c)).map(|i| read_from + i);
            }
        }
        streamed.read_to = limit;
        streamed.text_end = text_end;
        let end = text_end?;
        let start = if streamed.opened {
            streamed.end
        } else {
            first.unwrap_or(read_from)
        };
        (end > start).then_some((start, end))
    }

    /// Records `field`'s text `start..end` as sent: its region opened first if it had not.
    fn emit(&mut self, field: usize, start: usize, end: usize) {
        if self.mark_sent(field, start, end) {
            self.pending.events.push(RawEvent::Open { field });
        }
        self.pending
            .events
            .push(RawEvent::Chunk { field, start, end });
    }

    /// Notes `field`'s text up to `end` as sent (from `start`, where its region opens now);
    /// whether it opens now.
    fn mark_sent(&mut self, field: usize, start: usize, end: usize) -> bool {
        let streamed = &mut self.fields[field];
        let opens = !streamed.opened;
        if opens {
            streamed.opened = true;
            streamed.start = start;
        }
        streamed.end = end;
        streamed.read_to = streamed.read_to.max(end);
        streamed.text_end = Some(end).max(streamed.text_end);
        opens
    }
}

/// Where the last non-space character of `text` ends (`str.isspace`), if it has one. ASCII is
/// read byte by byte from the end, without decoding; only a multi-byte character is decoded.
fn text_end(text: &str) -> Option<usize> {
    for (i, &b) in text.as_bytes().iter().enumerate().rev() {
        if !b.is_ascii() {
            // The last byte of a character (only ASCII follows it): decode back from there.
            return (text.get(..=i)?.char_indices().rev())
                .find(|&(_, c)| !is_space(c))
                .map(|(j, c)| j + c.len_utf8());
        }
        if !is_space(char::from(b)) {
            return Some(i + 1);
        }
    }
    None
}

/// What a feed decided: events recorded in `pending`, or only text of a region already open
/// (the chunk to send, `(field, start, end)`, if any), which the feed hands out directly.
enum Fed {
    Recorded,
    Text(Option<(usize, usize, usize)>),
}

/// Field names of the streamed fields.
struct Names<'p>(&'p StreamProfile);

impl<'p> Names<'p> {
    /// The field's name, borrowed from the profile, and whether it is dirty.
    fn named(&self, field: usize) -> (&'p str, bool) {
        let name = match field {
            REASONING => self.0.reasoning.as_ref().map_or("", |r| r.field.as_str()),
            CONTENT => self.0.content.as_ref().map_or("", |c| c.field.as_str()),
            _ => self.0.tool_calls.as_ref().map_or("", |c| c.field.as_str()),
        };
        (name, field == CALLS)
    }
}

impl FieldNames for Names<'_> {
    fn name(&self, field: usize) -> &str {
        self.named(field).0
    }

    fn dirty(&self, field: usize) -> bool {
        self.named(field).1
    }
}

/// How the calls of an `x-regex-iterator` field are found one by one: the iterator's form and
/// the items' schema.
#[derive(Debug)]
pub(crate) struct CallScan<'p> {
    field: &'p str,
    items: &'p Node,
    /// Borrowed from the spec when the profile was loaded for it (see [`Prepared`]).
    shape: Cow<'p, CallShape>,
    /// Separated calls: `(body, to)`, the text from a call's body start to `to` is white space
    /// (read once: the call is looked for again on every chunk until a non-space character of
    /// its body arrives).
    blank: (usize, usize),
}

/// What finding the calls of an `x-regex-iterator` field needs from its pattern.
#[derive(Debug, Clone)]
pub(crate) struct CallShape {
    form: CallForm,
    /// The literal closers, in pattern order.
    closers: Vec<String>,
    longest_closer: usize,
    longest_opener: usize,
}

impl CallShape {
    /// The shape of `node`'s iterator, if its calls stream one by one (see [`CallScan::check`]).
    fn of(node: &Node) -> Result<Self, String> {
        let form = CallScan::check(node)?;
        let closers: Vec<String> = form
            .closers()
            .iter()
            .filter_map(|c| match c {
                Delim::Lit(l) => Some(l.clone()),
                Delim::Dollar | Delim::Word { .. } => None,
            })
            .collect();
        let longest_closer = closers.iter().map(String::len).max().unwrap_or(0);
        let longest_opener = match &form {
            CallForm::Region(shape) => shape.openers().map(str::len).max().unwrap_or(0),
            CallForm::Separated(shape) => shape.separator.as_ref().map_or(0, String::len),
        };
        Ok(CallShape {
            form,
            closers,
            longest_closer,
            longest_opener,
        })
    }
}

/// What the streams of a profile loaded for a schema share, worked out once when the spec is
/// loaded ([`Spec`](crate::Spec) keeps it beside the profile). Why: reading the calls' iterator
/// pattern into its shape cost about 10,000 instructions per stream, more than the text regions
/// of a short message.
#[derive(Debug)]
pub(crate) struct Prepared {
    calls: Option<CallShape>,
}

impl Prepared {
    /// What streams of `schema`'s output guided by `profile` (loaded for it) share.
    pub(crate) fn new(schema: &Schema, profile: &StreamProfile) -> Self {
        Prepared {
            calls: profile.tool_calls.as_ref().and_then(|c| {
                let node = schema.root().property(&c.field)?;
                iterated_calls(c).then(|| CallShape::of(node).ok())?
            }),
        }
    }
}

/// Whether the calls of `calls` are `x-regex-iterator` matches (no scan of their own format).
fn iterated_calls(calls: &CallsProfile) -> bool {
    calls.list.is_none() && !(calls.objects || calls.pythonic || calls.recipients)
}

/// The iterator's pattern, as far as finding its matches goes.
#[derive(Debug, Clone)]
pub(crate) enum CallForm {
    /// A region: each match starts at a literal opener (possibly one of several, possibly with a
    /// `\b` after it), its body ends at the first closer.
    Region(RegionShape),
    /// Matches that follow one another, each with an optional separator and a body of at least
    /// one character (`mistral_small`).
    Separated(SeparatedShape),
}

impl CallForm {
    fn closers(&self) -> &[Delim] {
        match self {
            CallForm::Region(shape) => &shape.closers,
            CallForm::Separated(shape) => &shape.closers,
        }
    }
}

/// Where the next region opener is, as far as the text before a limit tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FoundOpener {
    /// An opener, from `start` to `end`.
    At { start: usize, end: usize },
    /// No opener starts before this position (one may still start there, once more text has
    /// arrived).
    NotBefore(usize),
}

/// The call being read: where its raw text starts (its opener, or the closer of the call
/// before), and where the text its items' schema reads starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpenCall {
    raw: usize,
    body: usize,
}

/// Where the next call starts, as far as the text before a limit tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FoundCall {
    /// A call, whose closer is searched from `closer_from`.
    At { open: OpenCall, closer_from: usize },
    /// No call starts before this position (one may still start there, once more text has
    /// arrived).
    NotBefore(usize),
}

impl<'p> CallScan<'p> {
    fn new(field: &'p str, node: &'p Node, shape: Cow<'p, CallShape>) -> Result<Self, String> {
        let Items::Each(items) = &node.items else {
            return Err("it has no `items` schema".into());
        };
        Ok(CallScan {
            field,
            items,
            shape,
            blank: (usize::MAX, 0),
        })
    }

    /// Whether the calls of `node` stream one by one, or why not.
    pub(crate) fn check(node: &Node) -> Result<CallForm, String> {
        if node.node_type != NodeType::Array
            || node.regex.is_some()
            || !node.substitutions.is_empty()
            || node.parser.is_some()
            || node.key_value.is_some()
            || !matches!(node.items, Items::Each(_))
        {
            return Err(
                "only an array with `x-regex-iterator` and `items` (no x-regex, substitutions or \
                 parser) streams its calls"
                    .into(),
            );
        }
        let iterator = node
            .iterator
            .as_ref()
            .ok_or("the field has no x-regex-iterator")?;
        let form = match region_shape(&iterator.regex) {
            Ok(shape) => {
                if shape.header.is_some()
                    || shape
                        .not_followed_by
                        .iter()
                        .any(|d| !matches!(d, Delim::Word { .. }))
                {
                    return Err("its iterator has a header, or a look-ahead other than a \
                                `\\b`, after the opener"
                        .into());
                }
                CallForm::Region(shape)
            }
            Err(why) => match separated_shape(&iterator.regex) {
                Ok(shape) => CallForm::Separated(shape),
                Err(_) => return Err(why),
            },
        };
        fn literal(c: &Delim) -> Option<&str> {
            match c {
                Delim::Lit(l) => Some(l.as_str()),
                _ => None,
            }
        }
        let mut closers = form.closers().iter().filter_map(literal).peekable();
        if closers.peek().is_none() {
            return Err("its iterator has no literal closer".into());
        }
        // A closer that ends in white space may be cut from the calls' text (the root pattern
        // leaves trailing white space out of it), so its match is not known when it arrives.
        if closers.any(|c| {
            c.chars()
                .next_back()
                .is_some_and(crate::py::unicode::is_space)
        }) {
            return Err("a literal closer of its iterator ends in white space".into());
        }
        Ok(form)
    }

    /// The first call that starts at or after `from` in `text[..limit]`, as `re.finditer` finds
    /// it. `raw_next` is where the raw text of a call that follows the last one starts.
    fn find_call(
        &mut self,
        text: &str,
        limit: usize,
        from: usize,
        raw_next: Option<usize>,
    ) -> FoundCall {
        match &self.shape.form {
            CallForm::Region(shape) => match self.find_opener(shape, text, limit, from) {
                FoundOpener::At { start, end } => FoundCall::At {
                    open: OpenCall {
                        raw: start,
                        body: if shape.capture_from_opener {
                            start
                        } else {
                            end
                        },
                    },
                    closer_from: end,
                },
                FoundOpener::NotBefore(at) => FoundCall::NotBefore(at),
            },
            CallForm::Separated(shape) => {
                Self::separated_call(shape, text, limit, from, raw_next, &mut self.blank)
            }
        }
    }

    /// The match of a separated iterator at `at` (each starts where the last ended): after the
    /// separator when it is there and a character follows it; it exists once a non-space
    /// character of its body has arrived (the calls' text then runs at least to it).
    fn separated_call(
        shape: &SeparatedShape,
        text: &str,
        limit: usize,
        at: usize,
        raw_next: Option<usize>,
        blank: &mut (usize, usize),
    ) -> FoundCall {
        let Some(rest) = text.as_bytes().get(at..limit).filter(|r| !r.is_empty()) else {
            return FoundCall::NotBefore(at);
        };
        let body = match shape.separator.as_deref().map(str::as_bytes) {
            Some(sep) if rest.starts_with(sep) => at + sep.len(),
            // Cut by `limit`: it may still be the separator.
            Some(sep) if sep.starts_with(rest) => return FoundCall::NotBefore(at),
            _ => at,
        };
        let Some(body_text) = text.get(body..limit) else {
            return FoundCall::NotBefore(at);
        };
        // The white space read before from this body on is not read again.
        let read = match *blank {
            (b, to) if b == body => to.clamp(body, limit),
            _ => body,
        };
        let written = text[read..limit].chars().any(|c| !is_space(c));
        if !written {
            *blank = (body, limit);
        }
        match (body_text.chars().next(), written) {
            (Some(first), true) => FoundCall::At {
                open: OpenCall {
                    raw: raw_next.unwrap_or(at).min(at),
                    body,
                },
                closer_from: body + first.len_utf8(),
            },
            _ => FoundCall::NotBefore(at),
        }
    }

    /// How far the raw text of an open call is known to be the call's, in `bytes` (the buffer
    /// up to the limit; no closer starts at or after `from` whole): all of it, except, where a
    /// closer begins the next call's raw text, a possible closer's start at the end.
    fn raw_known(&self, bytes: &[u8], from: usize) -> usize {
        if let CallForm::Region(_) = self.shape.form {
            return bytes.len();
        }
        let lowest = from.max(bytes.len().saturating_sub(self.shape.longest_closer));
        (lowest..bytes.len())
            .find(|&p| {
                self.shape
                    .closers
                    .iter()
                    .any(|c| c.as_bytes().starts_with(&bytes[p..]))
            })
            .unwrap_or(bytes.len())
    }

    /// The first call opener in `text[from..limit]`, as `re.finditer` finds it: the earliest
    /// position where an opener matches, trying the openers in pattern order, each with the
    /// look-ahead after it. A position the text before `limit` cannot decide (an opener cut by
    /// `limit`, or one whose next character has not arrived) stops the search there.
    ///
    /// Why the text before `limit` decides the look-ahead: the calls' group of the root regex
    /// runs at least to `limit` (the first marker that may end it, or the end of the buffer less
    /// a possible marker's start), so a non-space character before `limit` is in the text the
    /// iterator reads; a space is not a word character, and neither is the end of that text.
    fn find_opener(
        &self,
        shape: &RegionShape,
        text: &str,
        limit: usize,
        from: usize,
    ) -> FoundOpener {
        let bytes = &text.as_bytes()[..limit.min(text.len())];
        let mut from = from;
        loop {
            let Some(hay) = bytes.get(from..) else {
                return FoundOpener::NotBefore(from);
            };
            let whole = shape
                .openers()
                .filter_map(|o| memmem::find(hay, o.as_bytes()))
                .min();
            // Where an opener may begin and be cut by `limit`.
            let cut_from = bytes
                .len()
                .saturating_sub(self.shape.longest_opener.saturating_sub(1));
            let cut = (cut_from.max(from)..bytes.len()).find(|&p| {
                let rest = &bytes[p..];
                shape
                    .openers()
                    .any(|o| o.len() > rest.len() && o.as_bytes().starts_with(rest))
            });
            let at = match (whole.map(|i| from + i), cut) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => return FoundOpener::NotBefore(bytes.len()),
            };
            match Self::opener_at(shape, text, bytes.len(), at) {
                Some(Some(end)) => return FoundOpener::At { start: at, end },
                Some(None) => from = at + 1,
                None => return FoundOpener::NotBefore(at),
            }
        }
    }

    /// Whether a call starts at `at` (`Some(Some(end))`, its opener ending at `end`), does not
    /// (`Some(None)`), or may once more text has arrived (`None`).
    fn opener_at(
        shape: &RegionShape,
        text: &str,
        limit: usize,
        at: usize,
    ) -> Option<Option<usize>> {
        let rest = &text.as_bytes()[at..limit];
        for opener in shape.openers() {
            let opener = opener.as_bytes();
            if !rest.starts_with(opener) {
                if opener.starts_with(rest) {
                    // Cut by `limit`: it may still match, before the openers after it.
                    return None;
                }
                continue;
            }
            let end = at + opener.len();
            if shape.not_followed_by.is_empty() {
                return Some(Some(end));
            }
            let next = text.get(end..limit).and_then(|r| r.chars().next())?;
            if !shape.not_followed_by.iter().any(|d| d.is_word_char(next)) {
                return Some(Some(end));
            }
            // `\b` fails after this opener: the next one may match here.
        }
        Some(None)
    }

    /// The first whole literal closer in `bytes[from..]` (at one position, the first in pattern
    /// order), as position and length; without one, where a closer may still begin as more text
    /// arrives (the next search starts there).
    ///
    /// Why that resumption is exact: a closer not found whole in `bytes` either starts too close
    /// to the end to fit (within its length less one byte of the end) or nowhere in it, and it
    /// starts with its first byte; so the earliest such byte near the end, over all closers, is
    /// the earliest place one can start. Most feeds inside a call then read only their new bytes.
    fn find_closer(&self, bytes: &[u8], from: usize) -> Result<(usize, usize), usize> {
        let Some(hay) = bytes.get(from..) else {
            return Err(from);
        };
        let mut best: Option<(usize, usize)> = None;
        let mut resume = bytes.len();
        for closer in &self.shape.closers {
            let closer = closer.as_bytes();
            let limit = best.map_or(hay.len(), |(at, _)| (at + closer.len()).min(hay.len()));
            let window = &hay[..limit];
            let Some(first) = closer.first() else {
                // An empty closer (never shipped) is found where the search starts, after an
                // earlier closer found there.
                if best.is_none_or(|(at, _)| at > 0) {
                    best = Some((0, 0));
                }
                continue;
            };
            // Most windows hold no first byte of the closer: a look at each byte says so for
            // less than building a `memmem` search.
            if !window.contains(first) {
                continue;
            }
            if let Some(i) = memmem::find(window, closer) {
                if best.is_none_or(|(at, _)| i < at) {
                    best = Some((i, closer.len()));
                }
            } else {
                let cut_from = window.len().saturating_sub(closer.len() - 1);
                if let Some(p) = window[cut_from..].iter().position(|b| b == first) {
                    resume = resume.min(from + cut_from + p);
                }
            }
        }
        best.map(|(i, len)| (from + i, len)).ok_or(resume)
    }
}

/// The profile's literals, searched together.
#[derive(Debug)]
struct Markers<'p> {
    literals: Vec<&'p str>,
    /// The distinct first bytes of the literals.
    firsts: Vec<u8>,
    /// `firsts` as a table: whether a byte may begin a literal. Why a table: each feed looks at
    /// the last `longest - 1` bytes again (a marker may be cut there), and a lookup per byte
    /// costs less there than a `memchr` set-up or a search of `firsts`.
    begins: [bool; 256],
    longest: usize,
}

/// Below this many bytes, `first_in` reads the bytes one by one rather than with `memchr`
/// (whose set-up costs more than a short read; a feed's window is the new bytes and the last
/// `longest - 1`).
const SHORT_HAYSTACK: usize = 64;

impl<'p> Markers<'p> {
    fn new(literals: Vec<&'p str>) -> Self {
        let mut firsts: Vec<u8> = literals
            .iter()
            .filter_map(|l| l.as_bytes().first().copied())
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        let mut begins = [false; 256];
        for &b in &firsts {
            begins[usize::from(b)] = true;
        }
        let longest = literals.iter().map(|l| l.len()).max().unwrap_or(0);
        Markers {
            literals,
            firsts,
            begins,
            longest,
        }
    }

    /// Where the next search resumes after [`Markers::first_in`] found no marker in the buffer
    /// from some point on: where the buffer's end may begin a marker (`partial_suffix`), else
    /// its end. Why no marker can begin earlier, after that point: none is complete there (the
    /// search found none), and one that is not complete yet would have the rest of the buffer
    /// as a proper prefix, so it would start at or after the longest such end. Resuming there
    /// rather than `longest - 1` bytes back reads each byte of text once, not once per feed.
    fn resume_after_miss(&self, buffer: &str) -> usize {
        buffer.len() - self.partial_suffix(buffer)
    }

    /// Whether a byte of `bytes` may begin a marker.
    fn may_begin_any(&self, bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| self.begins[usize::from(b)])
    }

    /// The first complete marker at or after `from` (the longest one at the same position).
    fn first_in(&self, buffer: &str, from: usize) -> Option<(usize, &'p str)> {
        let bytes = buffer.as_bytes();
        let hay = bytes.get(from..)?;
        let check = |i: usize| {
            let at = &hay[i..];
            self.literals
                .iter()
                .filter(|l| at.starts_with(l.as_bytes()))
                .max_by_key(|l| l.len())
                .map(|l| (from + i, *l))
        };
        if hay.len() < SHORT_HAYSTACK {
            return hay
                .iter()
                .enumerate()
                .filter(|&(_, &b)| self.begins[usize::from(b)])
                .find_map(|(i, _)| check(i));
        }
        match self.firsts.as_slice() {
            [] => None,
            [a] => memchr::memchr_iter(*a, hay).find_map(check),
            [a, b] => memchr::memchr2_iter(*a, *b, hay).find_map(check),
            [a, b, c] => memchr::memchr3_iter(*a, *b, *c, hay).find_map(check),
            _ => hay
                .iter()
                .enumerate()
                .filter(|&(_, &b)| self.begins[usize::from(b)])
                .find_map(|(i, _)| check(i)),
        }
    }

    /// The length of the longest end of `buffer` that is a proper prefix of a marker: only the
    /// last `longest - 1` bytes can begin one, and only where a marker's first byte is.
    fn partial_suffix(&self, buffer: &str) -> usize {
        let bytes = buffer.as_bytes();
        let from = bytes.len().saturating_sub(self.longest.saturating_sub(1));
        let window = &bytes[from..];
        let cut = |i: usize| {
            let rest = &window[i..];
            self.literals
                .iter()
                .any(|l| l.len() > rest.len() && l.as_bytes().starts_with(rest))
        };
        // The window is up to `longest - 1` bytes, read on every feed: with one or two first
        // bytes (every shipped profile) `memchr` finds the candidates in a step or two.
        let at = match self.firsts.as_slice() {
            [] => None,
            [a] => memchr::memchr_iter(*a, window).find(|&i| cut(i)),
            [a, b] => memchr::memchr2_iter(*a, *b, window).find(|&i| cut(i)),
            _ => (0..window.len()).find(|&i| self.begins[usize::from(window[i])] && cut(i)),
        };
        at.map_or(0, |i| window.len() - i)
    }
}

impl MessageStream for ProfiledStreamParser<'_> {
    fn feed_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ParseError> {
        ProfiledStreamParser::feed_with(self, chunk, on_event)
    }

    fn feed_text_with(
        &mut self,
        chunk: &str,
        on_event: &mut dyn FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        ProfiledStreamParser::feed_text_with(self, chunk, on_event)
    }

    fn output(&self) -> Option<&str> {
        Some(ProfiledStreamParser::output(self))
    }

    fn initial_events_with(&self, on_event: &mut dyn FnMut(Event<'_>)) {
        let names = Names(self.profile);
        for raw in &self.initial {
            on_event(raw.clone().lend(&self.buffer, &names));
        }
    }

    fn finish_with(
        self: Box<Self>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<Value, ParseError> {
        let (message, events) = (*self).finish()?;
        events.into_iter().for_each(on_event);
        Ok(message)
    }
}

/// The white space read by the checks of a call's start at `at` (`memo`: the runs read, and
/// from where).
fn start_spaces(memo: &mut (usize, SpaceRuns), at: usize) -> &mut SpaceRuns {
    if memo.0 != at {
        *memo = (at, SpaceRuns::default());
    }
    &mut memo.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition `text_end` reads faster: the end of the last character that is not
    /// white space to `str.isspace`.
    fn text_end_by_chars(text: &str) -> Option<usize> {
        text.char_indices()
            .rev()
            .find(|&(_, c)| !is_space(c))
            .map(|(i, c)| i + c.len_utf8())
    }

    #[test]
    fn text_end_skips_python_white_space() {
        assert_eq!(text_end("ab \t\n"), Some(2));
        assert_eq!(text_end("a\x1c\x1f"), Some(1));
        assert_eq!(text_end("é\u{3000}"), Some(2)); // an ideographic space is white space
        assert_eq!(text_end("a\u{200b}"), Some(4)); // a zero-width space is not
        assert_eq!(text_end(" \u{85}"), None);
        assert_eq!(text_end(""), None);
    }

    proptest! {
        #[test]
        fn text_end_is_the_last_non_space_character(
            text in "[ a\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f\\u{85}\\u{a0}\\u{3000}\\u{200b}é😀]{0,12}"
        ) {
            prop_assert_eq!(text_end(&text), text_end_by_chars(&text));
        }
    }
}

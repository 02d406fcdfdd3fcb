//! The incremental state machine: `ResponseParser` of the reference, decision for decision,
//! except that a complete delimiter match is not committed while a partial match of the same
//! delimiter starts at or before it (the reference's result then depends on the chunking).

use std::borrow::Cow;

use crate::value::{Map, Value};

use super::content::{process_field, ToolParams};
use super::delim::{Found, Search};
use super::resume::SearchMemo;
use super::{Delim, ResponseTemplate};
use crate::error::{ParseError, ParseErrorKind};
use crate::py::python_type;
use crate::stream::fast::{FilterScratch, Verdict};
use crate::stream::raw::{span, text_run, FieldNames, Pending, RawEvent};
use crate::stream::{Event, TextRun};

/// What a fast-path feed routed.
#[derive(Debug, Clone, Copy)]
enum Routed {
    Nothing,
    /// `buffer[a..b]` went to `field`, which opened with it when `opened`.
    Chunk {
        field: usize,
        opened: bool,
        a: usize,
        b: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Open = 0,
    Close = 1,
}

/// A partial-match start remembered within one pass over an unchanged buffer.
#[derive(Debug, Clone, Copy)]
struct CachedPartial {
    from: usize,
    len: usize,
    start: Option<usize>,
}

/// A delimiter search remembered within one pass over an unchanged buffer.
#[derive(Debug, Clone)]
struct Cached {
    from: usize,
    len: usize,
    eos: bool,
    result: Search,
}

/// Streams one model output through a [`ResponseTemplate`]: feed chunks as they arrive, get
/// the reference's events back, and the message at the end.
///
/// ```
/// use chatparse_runtime::stream::{Event, ResponseTemplate, StreamParser};
/// use chatparse_runtime::json;
///
/// let template = ResponseTemplate::from_value(json!({
///     "defaults": {"role": "assistant"},
///     "start_anchor": "<|im_start|>assistant\n",
///     "fields": {
///         "reasoning_content": {"open": "<think>", "close": "</think>"},
///         "content": {"close": "<|im_end|>"}
///     }
/// }))?;
/// // The prompt ends with a prefilled `<think>`: the parser starts inside the reasoning region.
/// let mut parser = StreamParser::new(&template, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>")?;
/// assert_eq!(parser.initial_events(), [Event::RegionOpen { field: "reasoning_content" }]);
///
/// let events = parser.feed("Greeting.</thi")?;
/// // "</thi" might be the start of "</think>": it is held back until the next chunk.
/// assert_eq!(events, [Event::RegionChunk { field: "reasoning_content", text: "Greeting.".into(), dirty: false }]);
/// let events = parser.feed("nk>Hello!<|im_end|>")?;
/// assert_eq!(events.len(), 4); // close reasoning, open content, "Hello!", close content
///
/// let (message, _final_events) = parser.finish()?;
/// assert_eq!(message, json!({"role": "assistant", "reasoning_content": "Greeting.", "content": "Hello!"}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StreamParser<'t> {
    template: &'t ResponseTemplate,
    tools: ToolParams,
    /// The prefix after the last start anchor, then everything fed.
    buffer: String,
    /// Where the output starts in `buffer` (after the prefix).
    output_from: usize,
    /// Everything before `pos` has been routed (or consumed by a delimiter).
    pos: usize,
    output: Map,
    /// The field being written to (`None`: no implicit field, text is dropped).
    current: Option<usize>,
    /// Named groups of the open match of the current explicit region.
    captures: Vec<(String, String)>,
    /// The current region's body is `buffer[body_start..body_end]`.
    body_start: usize,
    body_end: usize,
    /// Whether the current region has emitted `region_open`.
    opened: bool,
    initial: Vec<RawEvent>,
    cache: Vec<Option<Cached>>,
    partial_cache: Vec<Option<CachedPartial>>,
    /// The raw events of the current `feed` (the allocation is reused), and whether a call
    /// failed.
    pending: Pending,
    /// The fast path's DFA caches and memos, one per state filter.
    filter_scratch: Vec<FilterScratch>,
    /// What each delimiter's searches read, across feeds (indexed like `cache`).
    memos: Vec<SearchMemo>,
}

impl<'t> StreamParser<'t> {
    /// Starts a parser after `prefix`, the prompt the model continues (the reference requires it;
    /// pass `""` when the output holds the whole message). The prefix is cut after its last
    /// `start_anchor` match and run through the parser, so a prefilled `<think>` opens the
    /// reasoning region; the events this produces are [`StreamParser::initial_events`].
    ///
    /// Fails where the reference's constructor raises (a region closing inside the prefix
    /// whose content does not parse).
    pub fn new(template: &'t ResponseTemplate, prefix: &str) -> Result<Self, ParseError> {
        Self::with_tools(template, prefix, &[])
    }

    /// Like [`StreamParser::new`], with the tools offered to the model (as `apply_chat_template`
    /// takes them: `{"type": "function", "function": {"name", "parameters": {...}}}` or a bare
    /// function object). When a region's value is a tool call (`{"function": {"name",
    /// "arguments": {...}}}`, or a list of them), string arguments are converted to the types the
    /// tool's JSON schema declares (`"7"` becomes `7` for an `integer` parameter).
    pub fn with_tools(
        template: &'t ResponseTemplate,
        prefix: &str,
        tools: &[Value],
    ) -> Result<Self, ParseError> {
        let mut parser = StreamParser {
            template,
            tools: ToolParams::new(tools),
            buffer: String::new(),
            output_from: 0,
            pos: 0,
            output: template.defaults.clone(),
            current: template.implicit,
            captures: Vec::new(),
            body_start: 0,
            body_end: 0,
            opened: false,
            initial: Vec::new(),
            cache: vec![None; template.fields.len() * 2],
            partial_cache: vec![None; template.fields.len() * 2],
            pending: Pending::default(),
            filter_scratch: Vec::new(),
            memos: std::iter::repeat_with(SearchMemo::default)
                .take(template.fields.len() * 2)
                .collect(),
        };
        if !prefix.is_empty() {
            let truncated = template.truncate_past_last_anchor(prefix);
            if !truncated.is_empty() {
                parser.buffer.push_str(truncated);
                let mut events = Vec::new();
                parser.process(&mut events, false)?;
                parser.initial = events;
            }
        }
        parser.output_from = parser.buffer.len();
        Ok(parser)
    }

    /// Everything fed so far (the output, without the prompt prefix).
    pub fn output(&self) -> &str {
        self.buffer.get(self.output_from..).unwrap_or("")
    }

    /// The events produced while reading the prefix (e.g. a prefilled reasoning region opening).
    pub fn initial_events(&self) -> Vec<Event<'_>> {
        self.initial.iter().map(|r| self.event(r)).collect()
    }

    /// Feeds the next chunk of model output; returns the events it completes. Text that may be
    /// the start of a delimiter is held back until a later chunk (or [`StreamParser::finish`])
    /// decides it. After an error the parser is spent: every later call fails.
    ///
    /// This allocates the returned `Vec` (when there are events); [`StreamParser::feed_with`]
    /// hands the same events to a callback without allocating.
    pub fn feed(&mut self, chunk: &str) -> Result<Vec<Event<'_>>, ParseError> {
        if let Some(routed) = self.advance(chunk)? {
            let mut events = Vec::new();
            self.emit_routed(routed, |e| events.push(e));
            return Ok(events);
        }
        let (buffer, template) = (&self.buffer, self.template);
        Ok(self
            .pending
            .events
            .drain(..)
            .map(|r| r.lend(buffer, template))
            .collect())
    }

    /// [`StreamParser::feed`] without the `Vec`: each event goes to `on_event` as it is
    /// produced (its text borrows the parser's buffer for the call). The per-feed path does not
    /// allocate unless a region closes (its value is built) or the buffer grows.
    ///
    /// ```
    /// use chatparse_runtime::stream::{Event, ResponseTemplate, StreamParser};
    /// let t = ResponseTemplate::from_json_str(r#"{"start_anchor": "A:", "fields": {
    ///     "reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}}}"#)?;
    /// let mut parser = StreamParser::new(&t, "")?;
    /// let mut reasoning = String::new();
    /// for chunk in ["<think>Let", " me se", "e.</th", "ink>Yes."] {
    ///     parser.feed_with(chunk, |event| {
    ///         if let Event::RegionChunk { field: "reasoning_content", text, .. } = event {
    ///             reasoning.push_str(&text);
    ///         }
    ///     })?;
    /// }
    /// assert_eq!(reasoning, "Let me see.");
    /// assert_eq!(parser.finish()?.0["content"], "Yes.");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn feed_with(
        &mut self,
        chunk: &str,
        mut on_event: impl FnMut(Event<'_>),
    ) -> Result<(), ParseError> {
        if let Some(routed) = self.advance(chunk)? {
            self.emit_routed(routed, on_event);
            return Ok(());
        }
        let (buffer, template) = (&self.buffer, self.template);
        for r in self.pending.events.drain(..) {
            on_event(r.lend(buffer, template));
        }
        Ok(())
    }

    /// [`StreamParser::feed_with`] for adapters that keep ranges of the output (see
    /// [`MessageStream::feed_text_with`](crate::stream::MessageStream::feed_text_with)): a feed
    /// whose only event is text for a text region that was already open returns it as a
    /// [`TextRun`]; any other feed's events go to `on_event`, with the output so far.
    pub fn feed_text_with(
        &mut self,
        chunk: &str,
        mut on_event: impl FnMut(Event<'_>, &str),
    ) -> Result<Option<TextRun<'_>>, ParseError> {
        let routed = self.advance(chunk)?;
        let template = self.template;
        let field = |at| (name_of(template, at), dirty(template, at));
        match routed {
            Some(Routed::Chunk {
                field: at,
                opened: false,
                a,
                b,
            }) => {
                if let Some(run) = text_run(&self.buffer, self.output_from, at, field(at), a, b) {
                    return Ok(Some(run));
                }
            }
            Some(_) => {}
            None => {
                return Ok(self.pending.hand_out(
                    &self.buffer,
                    self.output_from,
                    field,
                    template,
                    on_event,
                ));
            }
        }
        let output = self.buffer.get(self.output_from..).unwrap_or("");
        if let Some(routed) = routed {
            self.emit_routed(routed, |e| on_event(e, output));
        }
        Ok(None)
    }

    /// The events of a fast-path feed.
    fn emit_routed<'s>(&'s self, routed: Routed, mut on_event: impl FnMut(Event<'s>)) {
        let Routed::Chunk {
            field,
            opened,
            a,
            b,
        } = routed
        else {
            return;
        };
        let template = self.template;
        if opened {
            on_event(Event::RegionOpen {
                field: name_of(template, field),
            });
        }
        on_event(Event::RegionChunk {
            field: name_of(template, field),
            text: Cow::Borrowed(span(&self.buffer, a, b)),
            dirty: dirty(template, field),
        });
    }

    /// Appends `chunk` and runs the state machine. The fast path returns what it routed;
    /// otherwise the raw events are left in `scratch`.
    fn advance(&mut self, chunk: &str) -> Result<Option<Routed>, ParseError> {
        self.pending.check()?;
        self.buffer.push_str(chunk);
        if let Some(routed) = self.fast_route() {
            return Ok(Some(routed));
        }
        let mut raw = std::mem::take(&mut self.pending.events);
        raw.clear();
        let result = self.process(&mut raw, false);
        self.pending.events = raw;
        if let Err(e) = result {
            return Err(self.pending.fail(e));
        }
        Ok(None)
    }

    /// Ends the stream: flushes held-back text, closes the open region, checks required fields,
    /// and returns the message with the last events. Empty values (`null`, `""`, `[]`, `{}`) are
    /// dropped unless their key is in `defaults`.
    pub fn finish(mut self) -> Result<(Value, Vec<Event<'t>>), ParseError> {
        self.pending.check()?;
        let mut raw = Vec::new();
        self.process(&mut raw, true)?;
        let template = self.template;
        let missing: Vec<String> = template
            .fields
            .iter()
            .filter(|f| !f.optional && !self.output.contains_key(&f.name))
            .map(|f| f.name.clone())
            .collect();
        if !missing.is_empty() {
            return Err(ParseError::new(
                "/fields",
                ParseErrorKind::MissingRequired(missing),
            ));
        }
        let output = std::mem::take(&mut self.output);
        let message: Map = output
            .into_iter()
            .filter(|(k, v)| template.defaults.contains_key(k) || !is_empty(v))
            .collect();
        let events = raw
            .into_iter()
            .map(|r| r.detach(&self.buffer, template))
            .collect();
        Ok((Value::Object(message), events))
    }

    fn event(&self, raw: &RawEvent) -> Event<'_> {
        raw.clone().lend(&self.buffer, self.template)
    }

    /// The fast path: when the current state's filter proves that no watched delimiter matches
    /// in the unrouted text, route it (up to where a partial match starts) without the full
    /// search, exactly as `process` would (see `accumulate`). `None`: run `process`.
    fn fast_route(&mut self) -> Option<Routed> {
        let template = self.template;
        let state = self
            .current
            .filter(|&c| Some(c) != template.implicit)
            .unwrap_or(template.fields.len());
        let filter = template.filters.get(state)?.as_ref()?;
        if self.filter_scratch.len() <= state {
            self.filter_scratch
                .resize_with(template.filters.len(), FilterScratch::default);
        }
        let scratch = self.filter_scratch.get_mut(state)?;
        let Verdict::Route { hold } = filter.verdict(&self.buffer, self.pos, scratch) else {
            return None;
        };
        let a = self.pos;
        if hold <= a {
            return Some(Routed::Nothing);
        }
        self.pos = hold;
        // `accumulate(a, hold)`.
        let Some(field) = self.current else {
            return Some(Routed::Nothing);
        };
        let opened = !self.opened;
        self.opened = true;
        self.body_end = hold;
        Some(Routed::Chunk {
            field,
            opened,
            a,
            b: hold,
        })
    }

    /// `_process`.
    fn process(&mut self, events: &mut Vec<RawEvent>, eos: bool) -> Result<(), ParseError> {
        // A state (position, region, opened) that repeats without the position moving is a
        // loop the reference never leaves; there are at most 2 × (fields + 1) such states.
        let stall_limit = 2 * self.template.fields.len() + 4;
        let mut stalled = 0;
        let mut last_pos = self.pos;
        loop {
            let (best, hold_start) = self.scan(eos)?;
            if let Some((kind, field, m)) = best {
                if m.start > self.pos {
                    self.accumulate(events, self.pos, m.start);
                }
                self.pos = m.end;
                match kind {
                    Kind::Open => {
                        self.close_current(events)?;
                        self.open_explicit(events, field, m.named);
                    }
                    Kind::Close => {
                        let had_content = self.opened;
                        self.close_current(events)?;
                        if !had_content && m.start == m.end {
                            break;
                        }
                    }
                }
                if self.pos == last_pos {
                    stalled += 1;
                    if stalled > stall_limit {
                        return Err(ParseError::new("/fields", ParseErrorKind::StreamNoProgress));
                    }
                } else {
                    last_pos = self.pos;
                    stalled = 0;
                }
                continue;
            }
            if eos {
                if self.pos < self.buffer.len() {
                    self.accumulate(events, self.pos, self.buffer.len());
                    self.pos = self.buffer.len();
                }
                self.close_current(events)?;
                break;
            }
            if hold_start > self.pos {
                self.accumulate(events, self.pos, hold_start);
                self.pos = hold_start;
            }
            break;
        }
        Ok(())
    }

    /// `_scan` over `_watchlist`: the committable match (earliest, longest, opens first, then
    /// by field name) and where held-back text starts.
    #[allow(clippy::type_complexity)]
    fn scan(&mut self, eos: bool) -> Result<(Option<(Kind, usize, Found)>, usize), ParseError> {
        let template = self.template;
        let len = self.buffer.len();
        let mut hold_start = len;
        let mut best: Option<(Kind, usize, Found)> = None;
        // `_watchlist`: the close of the current explicit region, or every open and then the
        // implicit region's close.
        let explicit = self.current.filter(|&c| Some(c) != template.implicit);
        let watched = |i: usize| -> Option<(Kind, usize)> {
            match explicit {
                Some(c) => (i == 0 && template.fields.get(c).is_some_and(|f| f.close.is_some()))
                    .then_some((Kind::Close, c)),
                None => {
                    let n = template.fields.len();
                    if i < n {
                        let f = template.fields.get(i)?;
                        f.open.as_ref().map(|_| (Kind::Open, i))
                    } else if i == n {
                        let imp = template.implicit?;
                        let f = template.fields.get(imp)?;
                        f.close.as_ref().map(|_| (Kind::Close, imp))
                    } else {
                        None
                    }
                }
            }
        };
        let slots = match explicit {
            Some(_) => 1,
            None => template.fields.len() + 1,
        };
        for (kind, field) in (0..slots).filter_map(watched) {
            let m = match self.search(kind, field, eos) {
                Search::None => continue,
                Search::Partial(start) => {
                    hold_start = hold_start.min(start);
                    continue;
                }
                Search::Full(m) => m,
            };
            if !eos {
                // Final only when more text can change neither this match (`can_grow`) nor
                // where the leftmost match starts: a partial match at or before its start (a
                // longer alternative that contains it, e.g. `<|im_end|>` around `im_end`) may
                // still complete, and the one-shot parse would take that one.
                let grows = self.can_grow(kind, field, &m).then_some(m.start);
                let earlier = self.partial_start(kind, field).filter(|&p| p <= m.start);
                if let Some(hold) = grows.into_iter().chain(earlier).min() {
                    hold_start = hold_start.min(hold);
                    continue;
                }
            }
            let better = match &best {
                None => true,
                Some((bk, bf, bm)) => {
                    let key = |k: Kind, f: usize, m: &Found| {
                        (
                            m.start,
                            std::cmp::Reverse(m.end - m.start),
                            k as u8,
                            name_of(template, f),
                        )
                    };
                    key(kind, field, &m) < key(*bk, *bf, bm)
                }
            };
            if better {
                best = Some((kind, field, m));
            }
        }
        if best.as_ref().is_some_and(|(_, _, m)| m.start >= hold_start) {
            best = None;
        }
        Ok((best, hold_start))
    }

    /// `pattern.search(buffer, pos, partial=not eos)`, remembered while the buffer is unchanged.
    fn search(&mut self, kind: Kind, field: usize, eos: bool) -> Search {
        let slot = field * 2 + kind as usize;
        let (pos, len) = (self.pos, self.buffer.len());
        if let Some(Some(c)) = self.cache.get(slot) {
            let still = match &c.result {
                Search::None => true,
                Search::Partial(p) => *p >= pos,
                Search::Full(m) => m.start >= pos,
            };
            if c.len == len && c.eos == eos && c.from <= pos && still {
                return c.result.clone();
            }
        }
        let delim = self.template.fields.get(field).and_then(|f| match kind {
            Kind::Open => f.open.as_ref(),
            Kind::Close => f.close.as_ref(),
        });
        let result = match (delim, self.memos.get_mut(slot)) {
            (Some(delim), Some(memo)) => delim.search_resumed(&self.buffer, pos, !eos, memo),
            _ => Search::None,
        };
        if let Some(slot) = self.cache.get_mut(slot) {
            *slot = Some(Cached {
                from: pos,
                len,
                eos,
                result: result.clone(),
            });
        }
        result
    }

    /// Where a match of this delimiter could still begin (from the scan position) once more
    /// text arrives; see [`super::Delim::partial_start`]. Remembered while the buffer is
    /// unchanged: a later scan position has the same answer unless it passed it, so a feed
    /// that commits many matches pays for one search per delimiter, not one per match.
    fn partial_start(&mut self, kind: Kind, field: usize) -> Option<usize> {
        let slot = field * 2 + kind as usize;
        let (pos, len) = (self.pos, self.buffer.len());
        if let Some(Some(c)) = self.partial_cache.get(slot) {
            if c.len == len && c.from <= pos && c.start.is_none_or(|p| p >= pos) {
                return c.start;
            }
        }
        let delim = self.template.fields.get(field).and_then(|f| match kind {
            Kind::Open => f.open.as_ref(),
            Kind::Close => f.close.as_ref(),
        })?;
        let start = delim.partial_start(&self.buffer, pos);
        if let Some(slot) = self.partial_cache.get_mut(slot) {
            *slot = Some(CachedPartial {
                from: pos,
                len,
                start,
            });
        }
        start
    }

    /// `_can_grow`: a complete match at the buffer's edge that more input could still change.
    /// Unlike the reference, the edge is where the matcher stopped reading ([`Found::read_to`]):
    /// `<tool_call>$` matched before a final `\n` fails once more text follows it, so the
    /// one-shot parse (and every other chunking) would not take it.
    fn can_grow(&self, kind: Kind, field: usize, m: &Found) -> bool {
        if m.read_to != self.buffer.len() {
            return false;
        }
        if m.start == m.end {
            return true;
        }
        let delim = self.template.fields.get(field).and_then(|f| match kind {
            Kind::Open => f.open.as_ref(),
            Kind::Close => f.close.as_ref(),
        });
        match delim {
            Some(Delim::Literals(l)) => l.can_extend,
            _ => true,
        }
    }

    /// `_accumulate`: routes `buffer[a..b]` into the current region.
    fn accumulate(&mut self, events: &mut Vec<RawEvent>, a: usize, b: usize) {
        let Some(current) = self.current else {
            return;
        };
        if a >= b {
            return;
        }
        if !self.opened {
            events.push(RawEvent::Open { field: current });
            self.opened = true;
        }
        self.body_end = b;
        events.push(RawEvent::Chunk {
            field: current,
            start: a,
            end: b,
        });
    }

    fn open_explicit(
        &mut self,
        events: &mut Vec<RawEvent>,
        field: usize,
        named: Vec<(String, String)>,
    ) {
        self.current = Some(field);
        self.captures = named;
        self.body_start = self.pos;
        self.body_end = self.pos;
        self.opened = true;
        events.push(RawEvent::Open { field });
    }

    /// `_close_current`: parses the region's body, stores the value, emits `region_close`.
    fn close_current(&mut self, events: &mut Vec<RawEvent>) -> Result<(), ParseError> {
        let template = self.template;
        let Some(current) = self.current.filter(|_| self.opened) else {
            self.reset_to_implicit();
            return Ok(());
        };
        let Some(field) = template.fields.get(current) else {
            self.reset_to_implicit();
            return Ok(());
        };
        let body = self
            .buffer
            .get(self.body_start..self.body_end)
            .unwrap_or("");
        let value = process_field(body, field, &self.captures, &self.tools)?;
        if let Some(sep) = &field.join {
            let Value::String(piece) = &value else {
                return Err(ParseError::new(
                    &format!("{}/join", field.pointer),
                    ParseErrorKind::StreamField(format!(
                        "field `{}`: 'join' requires each match to parse to a string, got {}",
                        field.name,
                        python_type(&value)
                    )),
                ));
            };
            let joined = match self.output.get(&field.name) {
                None | Some(Value::Null) => piece.clone(),
                Some(Value::String(previous)) => format!("{previous}{sep}{piece}"),
                Some(other) => {
                    return Err(ParseError::new(
                        &format!("{}/join", field.pointer),
                        ParseErrorKind::StreamField(format!(
                        "TypeError: cannot join a str onto the {} already in `{}` (from defaults)",
                        python_type(other),
                        field.name
                    )),
                    ))
                }
            };
            self.output
                .insert(field.name.clone(), Value::String(joined));
        } else if field.repeats {
            match self.output.get_mut(&field.name) {
                None => {
                    self.output
                        .insert(field.name.clone(), Value::Array(vec![value.clone()]));
                }
                Some(Value::Array(list)) => list.push(value.clone()),
                Some(other) => {
                    return Err(ParseError::new(
                        &format!("{}/repeats", field.pointer),
                        ParseErrorKind::StreamField(format!(
                        "AttributeError: cannot append to the {} already in `{}` (from defaults)",
                        python_type(other),
                        field.name
                    )),
                    ))
                }
            }
        } else {
            self.output.insert(field.name.clone(), value.clone());
        }
        events.push(RawEvent::Close {
            field: current,
            value,
        });
        self.reset_to_implicit();
        Ok(())
    }

    fn reset_to_implicit(&mut self) {
        self.current = self.template.implicit;
        self.captures.clear();
        self.body_start = self.pos;
        self.body_end = self.pos;
        self.opened = false;
    }
}

impl FieldNames for ResponseTemplate {
    fn name(&self, field: usize) -> &str {
        name_of(self, field)
    }

    fn dirty(&self, field: usize) -> bool {
        dirty(self, field)
    }
}

fn name_of(template: &ResponseTemplate, field: usize) -> &str {
    template.fields.get(field).map_or("", |f| f.name.as_str())
}

fn dirty(template: &ResponseTemplate, field: usize) -> bool {
    template
        .fields
        .get(field)
        .is_some_and(|f| !f.content.streamable())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

impl ResponseTemplate {
    /// `parse_response(text, template, prefix=prefix)`: the whole output at once.
    ///
    /// ```
    /// use chatparse_runtime::stream::ResponseTemplate;
    /// let t = ResponseTemplate::from_json_str(r#"{
    ///     "start_anchor": "<|im_start|>assistant\n",
    ///     "fields": {
    ///         "reasoning_content": {"open": "<think>", "close": "</think>"},
    ///         "content": {}
    ///     }
    /// }"#)?;
    /// let message = t.parse("Paris.", "<|im_start|>assistant\n<think>\nEasy.\n</think>\n\n")?;
    /// assert_eq!(message, chatparse_runtime::json!({"reasoning_content": "Easy.", "content": "Paris."}));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse(&self, text: &str, prefix: &str) -> Result<Value, ParseError> {
        self.parse_with_tools(text, prefix, &[])
    }

    /// [`ResponseTemplate::parse`] with the tools offered to the model, whose parameter schemas
    /// type the tool-call arguments (see [`StreamParser::with_tools`]).
    pub fn parse_with_tools(
        &self,
        text: &str,
        prefix: &str,
        tools: &[Value],
    ) -> Result<Value, ParseError> {
        let mut parser = StreamParser::with_tools(self, prefix, tools)?;
        parser.feed(text)?;
        Ok(parser.finish()?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use proptest::prelude::*;

    fn template() -> ResponseTemplate {
        ResponseTemplate::from_value(json!({
            "defaults": {"role": "assistant"},
            "start_anchor_pattern": r"<\|im_start\|>assistant\s*",
            "fields": {
                "think": {"open": ["<think>", "<thinking>"], "close": ["</think>", "</think>>"]},
                "calls": {
                    "open_pattern": r"\s*<call=(?P<name>\w+)>", "close_pattern": r"</call>\s*|$",
                    "content": "xml-inline", "repeats": true,
                    "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
                                     "value_parser": {"name": "json", "args": {"allow_non_json": true}}},
                    "transform": {"function": {"name": "{name}", "arguments": "{content}"}, "raw": "{content}"}
                },
                "json": {"open": "{{", "close": "}}", "content": "json",
                         "content_args": {"unquoted_keys": true, "string_delims": [["'", "'"]]}},
                "kv": {"open": "<kv>", "close": "</kv>", "content": "kv-lines", "join": "|", "repeats": true},
                "n": {"open": "<n>", "close": "</n>", "content": "int"},
                "content": {"close_pattern": r"\s*<\|im_end\|>"}
            }
        }))
        .unwrap()
    }

    fn tools() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "f", "parameters": {"properties": {
                "a": {"type": "integer"}, "b": {"type": ["boolean", "number"]}, "c": {"type": "object"}
            }}}}),
        ]
    }

    const PIECES: &[&str] = &[
        "<think>",
        "</think>",
        "</think>>",
        "<thinking>",
        "<call=f>",
        "</call>",
        "<a>",
        "</a>",
        "<b>1</b>",
        "<c>{\"x\": 1}</c>",
        "{{",
        "}}",
        "{k:'v'}",
        "<kv>",
        "</kv>",
        "k: v\n",
        "<n>",
        "</n>",
        "12",
        "<|im_end|>",
        "<|im_start|>assistant\n",
        "\n",
        "  ",
        "é",
        "😀",
        "<",
        "</",
        "{",
        "'",
        "x",
        "\u{1}",
    ];

    fn run(t: &ResponseTemplate, prefix: &str, chunks: &[String]) -> Result<Value, ParseError> {
        let mut p = StreamParser::with_tools(t, prefix, &tools())?;
        for c in chunks {
            p.feed(c)?;
        }
        Ok(p.finish()?.0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn never_panics(
            picks in prop::collection::vec((0..PIECES.len(), any::<String>(), 0u8..4), 0..24),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
            prefix_pick in 0..3usize,
        ) {
            let t = template();
            let mut text = String::new();
            for (i, s, k) in &picks {
                if *k == 0 { text.push_str(s) } else { text.push_str(PIECES[*i]) }
            }
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut at: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
            at.push(0);
            at.push(text.len());
            at.sort_unstable();
            let chunks: Vec<String> = at.windows(2).map(|w| text[w[0]..w[1]].to_owned()).collect();
            let prefix = ["", "<|im_start|>assistant\n<think>", "<|im_start|>assistant <call=f><a>1"][prefix_pick];
            let _ = run(&t, prefix, &chunks);
            let _ = t.parse_with_tools(&text, prefix, &tools());
        }
    }

    #[test]
    fn empty_delimiters_that_would_loop_forever_are_an_error() {
        let t = ResponseTemplate::from_value(json!({
            "start_anchor": "x",
            "fields": {"a": {"open_pattern": "", "close_pattern": ""}, "b": {}}
        }))
        .unwrap();
        let err = t.parse("abc", "").unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::StreamNoProgress);
        let mut p = StreamParser::new(&t, "").unwrap();
        assert!(p.feed("abc").is_err());
        assert_eq!(
            p.feed("d").unwrap_err().kind,
            ParseErrorKind::StreamPoisoned
        );
    }

    #[test]
    fn coercion_changes_every_alias_of_the_arguments() {
        let t = template();
        let v = t
            .parse_with_tools("<call=f><a>\"7\"</a><b>\"1\"</b></call>", "", &tools())
            .unwrap();
        // "raw" holds the same dict as "arguments", so it is coerced too (as in Python; checked
        // with transformers 5.23.0).
        assert_eq!(
            v["calls"][0],
            json!({"function": {"name": "f", "arguments": {"a": 7, "b": true}}, "raw": {"a": 7, "b": true}})
        );
    }
}

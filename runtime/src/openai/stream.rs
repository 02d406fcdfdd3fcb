//! OpenAI streaming deltas over any [`MessageStream`].

use crate::json;
use crate::value::{Map, Value};

use super::sketch::{CallShape, NextCall, Sketch};
use super::{
    arguments_and_id, assemble, call_json, calls_of, field_kind, message_parts, FieldKind,
    IdPolicy, OpenAiError, Options, RejectedCall, ToolChecks,
};
use crate::error::{ParseError, ParseErrorKind};
use crate::py::unicode::is_space;
use crate::spec::Spec;
use crate::stream::{Event, MessageStream, TextRun};
use crate::template::ContentParser;

/// How a text field's region chunks relate to its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextMode {
    /// The value is the text as written (x-regex regions, `text` with `strip: false`).
    Kept,
    /// The value is the text with Python's `str.strip()` applied (`text`, the default).
    Stripped,
    /// The value only exists at the close (structured content parsers).
    Held,
    /// The field's value only exists in the final message: a repeated field's list of values,
    /// or its values joined onto a default string.
    Final,
}

/// The open region.
#[derive(Debug)]
struct Region {
    field: String,
    kind: FieldKind,
    mode: TextMode,
    /// Everything written into the region.
    raw: String,
    /// Where this region's text starts in the message's text of its field (`State::content` or
    /// `State::reasoning`): what it has sent is the rest of that text, kept once, not twice.
    sent_from: usize,
    /// `Stripped`: some non-whitespace text has arrived.
    started: bool,
    /// `Stripped`: whitespace at the end of `raw`, held until more text shows it is inside.
    pending_ws: String,
    /// Opened by the prompt prefix: its text is held in `muted` until the output starts, then
    /// sent if the region is still open (a prefilled `<think>`), dropped if the prompt closed it.
    muted: Option<String>,
    /// A tool-call region: the call read while it is written (see [`Sketch`]), and the call
    /// whose start was sent before it closed.
    sketch: Option<Sketch>,
    open_call: Option<OpenCall>,
    /// A tool-call region that is one JSON list of calls: the calls before the open one, sent
    /// whole while the region was open (compared with the final message's when it closes).
    read_calls: Vec<OpenCall>,
}

/// A call whose start (and maybe part of its arguments) was sent while it was being written.
#[derive(Debug)]
struct OpenCall {
    index: usize,
    id: String,
    /// Whether `id` is the model's own (from the call's header).
    model_id: bool,
    name: String,
    /// The arguments' text sent so far.
    sent: String,
}

impl Region {
    /// A chunk of this text region's raw text: sends what of it is the value's (see
    /// [`TextMode`]), appending it to `out`, the message's text of the field.
    fn on_text(&mut self, text: &str, out: &mut String, sink: &mut Sink<'_>) {
        match self.mode {
            TextMode::Kept => self.send(text, out, sink),
            TextMode::Held | TextMode::Final => {}
            TextMode::Stripped => {
                let mut t: &str = text;
                if !self.started {
                    t = t.trim_start_matches(is_space);
                    self.started = !t.is_empty();
                }
                // Trailing whitespace waits for text after it; the held whitespace goes out
                // with that text, in one delta. The buffer is reused: no allocation per chunk.
                let keep = t.trim_end_matches(is_space).len();
                if keep == 0 {
                    self.pending_ws.push_str(t);
                } else if self.pending_ws.is_empty() {
                    self.send(&t[..keep], out, sink);
                    self.pending_ws.push_str(&t[keep..]);
                } else {
                    let mut all = std::mem::take(&mut self.pending_ws);
                    all.push_str(&t[..keep]);
                    self.send(&all, out, sink);
                    all.clear();
                    all.push_str(&t[keep..]);
                    self.pending_ws = all;
                }
            }
        }
    }

    /// Sends text of this region (or holds it, for a region the prompt opened).
    fn send(&mut self, text: &str, out: &mut String, sink: &mut Sink<'_>) {
        if text.is_empty() {
            return;
        }
        match &mut self.muted {
            Some(held) => held.push_str(text),
            None => {
                out.push_str(text);
                match self.kind {
                    FieldKind::Content => sink(Delta::Content(text)),
                    FieldKind::Reasoning => sink(Delta::Reasoning(text)),
                    _ => {}
                }
            }
        }
    }
}

/// The last region opened, while it is fed as [`TextRun`]s (the fast path): what it sent and
/// holds are ranges of the stream's output, not copies. The region sent `output[from..sent_to]`
/// that is not yet in the message's text of its field (`State::content` or `State::reasoning`),
/// and holds `output[sent_to..end]`, its trailing whitespace (`Stripped`): the region's text is
/// one range of the output, so a run only moves `sent_to` and `end`. [`State::settle`] copies
/// both where the general path reads them (the field's text, the region's `pending_ws`) before
/// any event is handled, and ends the fast path.
#[derive(Debug, Clone, Copy)]
struct RunText {
    /// The stream's index of the region's field ([`TextRun::index`]).
    index: usize,
    content: bool,
    /// `Stripped` (else `Kept`).
    stripped: bool,
    from: usize,
    sent_to: usize,
    end: usize,
}

impl RunText {
    /// Sends `run`, the next text of this region (it starts where the region's text so far
    /// ends), without copying: the delta is a slice of the output, the held whitespace (if any)
    /// and the run's text up to its own trailing whitespace (`stripped`). Returns false, having
    /// changed nothing, if the run's range is not the output's (the general path takes it).
    #[inline(always)]
    fn send(&mut self, run: &TextRun<'_>, sink: &mut Sink<'_>) -> bool {
        let from = self.sent_to;
        let Some(unsent) = run.output.get(from..run.end) else {
            return false;
        };
        let delta = if self.stripped {
            // What the region holds (`output[sent_to..end]`, and `end` is the run's start) is
            // white space, so only the run's own text is trimmed: trimming all that is unsent
            // would read a flood of white space again on every chunk.
            let (Some(text), Some(held)) = (
                run.output.get(run.start..run.end),
                run.start.checked_sub(from),
            ) else {
                return false;
            };
            let kept = trim_end_space(text).len();
            if kept == 0 {
                // The run is all whitespace: held with the rest.
                self.end = run.end;
                return true;
            }
            &unsent[..held + kept]
        } else {
            unsent
        };
        self.sent_to = from + delta.len();
        self.end = run.end;
        sink(if self.content {
            Delta::Content(delta)
        } else {
            Delta::Reasoning(delta)
        });
        true
    }
}

/// A call that was sent.
#[derive(Debug)]
struct SentCall {
    id: String,
    name: String,
    arguments: String,
}

/// One OpenAI delta, borrowed from the adapter: what [`DeltaStream::feed_with`] hands out, without
/// building JSON. [`DeltaStream::chunk`] makes its `choices[0]` chunk object
/// (`{"index": 0, "delta": {…}, "finish_reason": …}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta<'a> {
    /// `{"role": "assistant"}`: the first delta.
    Role,
    /// `{"content": text}`.
    Content(&'a str),
    /// `{"reasoning_content": text}` (or `reasoning`, or both: [`Options::reasoning`]).
    Reasoning(&'a str),
    /// A tool call starts: `{"tool_calls": [{"index", "id", "type": "function", "function":
    /// {"name", "arguments": ""}}]}`.
    CallStart {
        /// The call's position in the message's `tool_calls`.
        index: usize,
        /// The model's id, or one from the id policy.
        id: &'a str,
        /// The function's name.
        name: &'a str,
    },
    /// A fragment of a call's `arguments` JSON text: `{"tool_calls": [{"index", "function":
    /// {"arguments": text}}]}`.
    CallArguments {
        /// The call's position in the message's `tool_calls`.
        index: usize,
        /// The fragment.
        arguments: &'a str,
    },
    /// The last delta, `{}` with `finish_reason`: `"tool_calls"` when the message has calls,
    /// else `"stop"`.
    Finish {
        /// Whether the message has tool calls.
        tool_calls: bool,
    },
}

impl Delta<'_> {
    /// Its `choices[0]` chunk object, `{"index": 0, "delta": {…}, "finish_reason": …}`, with the
    /// reasoning key(s) of `options`.
    pub fn to_chunk(&self, options: &Options) -> Value {
        chunk_json(*self, options)
    }
}

/// Where deltas go.
type Sink<'k> = dyn FnMut(Delta<'_>) + 'k;

/// The adapter's state, apart from the stream it drives (so the stream's callback can borrow it).
struct State {
    options: Options,
    ids: Box<dyn IdPolicy>,
    /// Text modes of the spec's fields (unlisted: `Kept`).
    modes: Vec<(String, TextMode)>,
    /// Whether the final texts must begin with the texts sent (a stream whose deltas are read);
    /// a one-shot conversion that drops its deltas only wants the final message.
    deltas_read: bool,
    /// Repeated text fields whose regions a response template joins with a separator: the
    /// field, the separator, and whether a region of it has opened (the next one is joined on).
    joins: Vec<(String, String, bool)>,
    /// The open regions (an x-regex stream may close them out of order, at the end).
    regions: Vec<Region>,
    /// The text sent of each field (but for what `run` has not copied yet).
    content: String,
    reasoning: String,
    /// The region fed as [`TextRun`]s, if the last feeds were.
    run: Option<RunText>,
    calls: Vec<SentCall>,
    /// Everything fed, for calls that only appear in the final message.
    fed: String,
    /// The prompt prefix's events are being read.
    in_prompt: bool,
    /// What the request allows of calls, the calls it set aside, and the first call it refused
    /// (strict: the stream fails with it).
    checks: ToolChecks,
    rejected: Vec<RejectedCall>,
    refused: Option<ParseError>,
    /// How the spec writes its calls, when they can be read before they close.
    shape: Option<CallShape>,
}

/// OpenAI `choices[0]` chunk objects from a [`MessageStream`]: `{"index": 0, "delta": {…},
/// "finish_reason": null}` per delta, ending with `finish_reason` `"tool_calls"` (the message has
/// calls) or `"stop"`.
///
/// The first delta is `{"role": "assistant"}`. Reasoning and content deltas follow as their text
/// arrives: whitespace that the spec strips from a region's value is held back (leading whitespace
/// dropped, trailing whitespace sent only once more text follows it), so the deltas of each field
/// concatenate to exactly the final message's text. A tool call is sent when its region closes (its
/// value, and so its arguments, only exist then): one delta with `index`, `id`, `type` and
/// `function.name` (and `arguments: ""`), then one with the whole `function.arguments` text. The
/// message [`DeltaStream::finish`] returns is what the deltas rebuild; it equals [`super::parse`]
/// of the whole output, for any chunking.
///
/// ```
/// use chatparse_runtime::openai::{CounterIds, DeltaStream, Options};
/// use chatparse_runtime::Spec;
///
/// let spec = Spec::from_json_str(chatparse_runtime_test_template())?;
/// let mut stream = DeltaStream::from_spec(&spec, None, None, Options::default(),
///                                         Box::new(CounterIds::default()))?;
/// let mut chunks = Vec::new();
/// for piece in ["<think>\nHm", ".\n</think>\n\nHel", "lo!"] {
///     chunks.extend(stream.feed(piece)?);
/// }
/// let (last, message) = stream.finish()?;
/// chunks.extend(last);
/// let lines: Vec<String> = chunks.iter().map(|c| c.to_string()).collect();
/// assert_eq!(lines, [
///     r#"{"index":0,"delta":{"role":"assistant"},"finish_reason":null}"#,
///     r#"{"index":0,"delta":{"reasoning_content":"Hm"},"finish_reason":null}"#,
///     r#"{"index":0,"delta":{"reasoning_content":"."},"finish_reason":null}"#,
///     r#"{"index":0,"delta":{"content":"Hel"},"finish_reason":null}"#,
///     r#"{"index":0,"delta":{"content":"lo!"},"finish_reason":null}"#,
///     r#"{"index":0,"delta":{},"finish_reason":"stop"}"#,
/// ]);
/// assert_eq!(message["content"], "Hello!");
/// # fn chatparse_runtime_test_template() -> &'static str {
/// #     r#"{"start_anchor": "<|im_start|>assistant\n", "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}}}"#
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DeltaStream<'s> {
    inner: Box<dyn MessageStream + 's>,
    started: bool,
    /// The stream keeps everything fed ([`MessageStream::output`]): no copy per chunk here.
    output_kept: bool,
    state: State,
}

impl std::fmt::Debug for DeltaStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaStream")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

impl<'s> DeltaStream<'s> {
    /// Adapts any stream. Without the spec, every text region is taken to be its value as written
    /// (no stripping); [`DeltaStream::from_spec`] reads each field's behaviour from the spec.
    pub fn new(
        stream: Box<dyn MessageStream + 's>,
        options: Options,
        ids: Box<dyn IdPolicy>,
    ) -> Self {
        DeltaStream {
            output_kept: stream.output().is_some(),
            inner: stream,
            started: false,
            state: State {
                options,
                ids,
                modes: Vec::new(),
                joins: Vec::new(),
                deltas_read: true,
                regions: Vec::new(),
                content: String::new(),
                reasoning: String::new(),
                run: None,
                calls: Vec::new(),
                fed: String::new(),
                in_prompt: false,
                checks: ToolChecks::default(),
                rejected: Vec::new(),
                refused: None,
                shape: None,
            },
        }
    }

    /// Starts a stream of `spec` ([`Spec::stream`]: `prefix` is the prompt, `tools` the tools
    /// offered) and adapts it.
    pub fn from_spec(
        spec: &'s Spec,
        prefix: Option<&str>,
        tools: Option<&[Value]>,
        options: Options,
        ids: Box<dyn IdPolicy>,
    ) -> Result<Self, OpenAiError> {
        let stream = spec.stream(prefix, tools)?;
        let mut this = DeltaStream::new(stream, options, ids);
        this.state.shape = CallShape::of_spec(spec);
        if let Some(template) = spec.template() {
            let state = &mut this.state;
            for f in &template.fields {
                let mut mode = match f.content {
                    ContentParser::Text { strip: true } => TextMode::Stripped,
                    ContentParser::Text { strip: false } => TextMode::Kept,
                    _ => TextMode::Held,
                };
                // A repeated text field's value is the list of its regions' texts; a field with
                // `join` has its regions' texts joined (onto a default string, if the template
                // has one): only the join of regions alone streams as the regions do, the
                // separator sent as the next region opens.
                match (&f.join, template.defaults.get(&f.name)) {
                    (Some(sep), None | Some(Value::Null)) if mode != TextMode::Held => {
                        state.joins.push((f.name.clone(), sep.clone(), false));
                    }
                    (Some(_), _) => mode = TextMode::Final,
                    (None, _) if f.repeats => mode = TextMode::Final,
                    (None, _) => {}
                }
                state.modes.push((f.name.clone(), mode));
            }
        }
        Ok(this)
    }

    #[cold]
    fn start(&mut self, sink: &mut Sink<'_>) {
        if !self.started {
            self.started = true;
            sink(Delta::Role);
            let state = &mut self.state;
            state.in_prompt = true;
            self.inner
                .initial_events_with(&mut |e| state.on_event(e, &mut |_| {}));
            state.in_prompt = false;
            // Regions the prompt left open continue in the output: their text so far is sent.
            let mut regions = std::mem::take(&mut state.regions);
            for region in &mut regions {
                if let Some(held) = region.muted.take() {
                    region.sent_from = match region.kind {
                        FieldKind::Reasoning => state.reasoning.len(),
                        _ => state.content.len(),
                    };
                    state.send_text(region.kind, &held, sink);
                }
            }
            state.regions = regions;
        }
    }

    /// Feeds the next piece of output; returns the chunk objects it completes (the first call
    /// also returns the `role` delta). [`DeltaStream::feed_with`] is the form that builds no JSON.
    pub fn feed(&mut self, chunk: &str) -> Result<Vec<Value>, ParseError> {
        let mut out = Vec::new();
        let options = self.state.options;
        self.feed_with(chunk, &mut |d| out.push(chunk_json(d, &options)))?;
        Ok(out)
    }

    /// The same adapter, checking every tool call against what the request allows (see
    /// [`ToolChecks`]).
    pub fn with_tool_checks(mut self, checks: ToolChecks) -> Self {
        self.state.checks = checks;
        self
    }

    /// The calls a lenient [`ToolChecks`] set aside so far.
    pub fn rejected(&self) -> &[RejectedCall] {
        &self.state.rejected
    }

    /// Feeds the next piece of output; the deltas it completes go to `sink`, borrowed (the first
    /// call also sends [`Delta::Role`]). A server writes each delta its own way, with no JSON
    /// value built per delta ([`DeltaStream::chunk`] builds the chunk object when wanted).
    ///
    /// ```
    /// use chatparse_runtime::openai::{CounterIds, Delta, DeltaStream, Options};
    /// use chatparse_runtime::Spec;
    ///
    /// let spec = Spec::from_json_str(r#"{"start_anchor": "<|im_start|>assistant\n",
    ///                                   "fields": {"content": {}}}"#)?;
    /// let mut stream = DeltaStream::from_spec(&spec, Some(""), None, Options::default(),
    ///                                         Box::new(CounterIds::default()))?;
    /// let mut answer = String::new();
    /// for piece in ["Hel", "lo!"] {
    ///     stream.feed_with(piece, &mut |delta| {
    ///         if let Delta::Content(text) = delta {
    ///             answer.push_str(text);
    ///         }
    ///     })?;
    /// }
    /// let message = stream.finish_with(&mut |delta| {
    ///     if let Delta::Finish { tool_calls } = delta {
    ///         assert!(!tool_calls);
    ///     }
    /// })?;
    /// assert_eq!(answer, "Hello!");
    /// assert_eq!(message["content"], "Hello!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn feed_with(
        &mut self,
        chunk: &str,
        sink: &mut dyn FnMut(Delta<'_>),
    ) -> Result<(), ParseError> {
        // Inlined into the caller's loop: most feeds are a chunk of the text region just written
        // to, sent by `RunText::send` without a call of its own (issue 16: the adapter's cost per
        // chunk is what it adds to the stream's).
        if self.state.refused.is_some() || !self.started || !self.output_kept {
            return self.feed_general(chunk, sink);
        }
        self.feed_stream(chunk, sink)
    }

    /// [`DeltaStream::feed_with`] in full: the first feed, a refused stream, a stream that does
    /// not keep its output.
    #[inline(never)]
    fn feed_general(&mut self, chunk: &str, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        self.state.refused()?;
        if !self.started {
            self.start(sink);
        }
        if !self.output_kept {
            // A stream that does not keep its output: the adapter keeps a copy.
            self.state.fed.push_str(chunk);
        }
        self.feed_stream(chunk, sink)
    }

    /// Feeds the stream: a run of text for the region the fast path follows goes out here
    /// ([`RunText::send`]), any other run to [`State::new_run`], events to the general path.
    /// The hot path only compares the run with [`RunText`]; the paths that take the whole run
    /// are not inlined and take it by value, so that the run is read where the stream returned
    /// it instead of being copied to the stack on every feed (issue 16: a copy here was a third
    /// of what the adapter added to a chunk of reasoning).
    #[inline(always)]
    fn feed_stream(&mut self, chunk: &str, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        let state = &mut self.state;
        let run = self.inner.feed_text_with(chunk, &mut |e, output| {
            state.on_output_event(e, output, sink)
        })?;
        match run {
            Some(run) => match &mut state.run {
                Some(fast) if fast.index == run.index && fast.end == run.start => {
                    if fast.send(&run, sink) {
                        Ok(())
                    } else {
                        state.on_run(run, sink)
                    }
                }
                _ => state.new_run(run, sink),
            },
            None => state.refused(),
        }
    }

    /// Ends the output: the last chunk objects (the last one carries `finish_reason`) and the
    /// OpenAI message the deltas rebuild.
    pub fn finish(self) -> Result<(Vec<Value>, Value), ParseError> {
        let mut out = Vec::new();
        let options = self.state.options;
        let message = self.finish_with(&mut |d| out.push(chunk_json(d, &options)))?;
        Ok((out, message))
    }

    /// Ends the output: the last deltas go to `sink` (the last is [`Delta::Finish`]), and the
    /// OpenAI message the deltas rebuild is returned.
    pub fn finish_with(self, sink: &mut dyn FnMut(Delta<'_>)) -> Result<Value, ParseError> {
        self.finish_parts(sink).map(|(message, _)| message)
    }

    /// For a one-shot conversion, which reads the final message only: the deltas sent need not
    /// agree with it (a template field written twice keeps its last region's value).
    pub(super) fn deltas_unread(mut self) -> Self {
        self.state.deltas_read = false;
        self
    }

    /// [`DeltaStream::finish_with`], with the calls a lenient [`ToolChecks`] set aside.
    pub(super) fn finish_parts(
        mut self,
        sink: &mut dyn FnMut(Delta<'_>),
    ) -> Result<(Value, Vec<RejectedCall>), ParseError> {
        self.start(sink);
        let mut state = self.state;
        if self.output_kept {
            state.fed = self.inner.output().unwrap_or("").to_owned();
        }
        let fed = std::mem::take(&mut state.fed);
        state.settle(&fed);
        state.fed = fed;
        let message = self.inner.finish_with(&mut |e| state.on_event(e, sink))?;
        let message = state.reconcile(&message, sink);
        if let Some(refused) = state.refused {
            return Err(refused);
        }
        sink(Delta::Finish {
            tool_calls: message.get("tool_calls").is_some(),
        });
        Ok((message, state.rejected))
    }

    /// The `choices[0]` chunk object of a delta, with this stream's options.
    pub fn chunk(&self, delta: Delta<'_>) -> Value {
        chunk_json(delta, &self.state.options)
    }
}

/// `text` without its trailing whitespace (Python's `str.rstrip()`). Most text ends with a
/// printable ASCII character (`!`..`~`, above every ASCII space): that is one comparison.
#[inline(always)]
fn trim_end_space(text: &str) -> &str {
    match text.as_bytes().last() {
        Some(&last) if last as i8 > b' ' as i8 => text,
        _ => text.trim_end_matches(is_space),
    }
}

/// `output[from..to]`, a range the adapter recorded from a [`TextRun`] of the same stream, whose
/// output only grows: always in bounds (debug builds check it).
#[inline(always)]
fn output_range(output: &str, from: usize, to: usize) -> &str {
    debug_assert!(
        output.get(from..to).is_some(),
        "a recorded range {from}..{to} is not a slice of the {}-byte output",
        output.len()
    );
    output.get(from..to).unwrap_or("")
}

/// `{"index": 0, "delta": {…}, "finish_reason": …}` for one delta.
fn chunk_json(delta: Delta<'_>, options: &Options) -> Value {
    let mut finish = Value::Null;
    let delta = match delta {
        Delta::Role => json!({"role": "assistant"}),
        Delta::Content(text) => json!({ "content": text }),
        Delta::Reasoning(text) => {
            let mut d = Map::new();
            for key in options.reasoning.keys() {
                d.insert((*key).into(), Value::String(text.to_owned()));
            }
            Value::Object(d)
        }
        Delta::CallStart { index, id, name } => json!({"tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}
        }]}),
        Delta::CallArguments { index, arguments } => json!({"tool_calls": [{
            "index": index, "function": {"arguments": arguments}
        }]}),
        Delta::Finish { tool_calls } => {
            finish = Value::from(if tool_calls { "tool_calls" } else { "stop" });
            json!({})
        }
    };
    json!({"index": 0, "delta": delta, "finish_reason": finish})
}

impl State {
    /// A run of text the fast path did not expect (the first of a region, or one after events):
    /// starts the fast path for it if its region allows, else the general path.
    #[cold]
    #[inline(never)]
    fn new_run(&mut self, run: TextRun<'_>, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        if let Some(fast) = self.start_run(&run) {
            if fast.send(&run, sink) {
                return Ok(());
            }
        }
        self.on_run(run, sink)
    }

    /// An event of the stream, with its output so far: the general path.
    fn on_output_event(&mut self, event: Event<'_>, output: &str, sink: &mut Sink<'_>) {
        self.settle(output);
        self.on_event(event, sink);
    }

    /// A run the fast path does not take: the general path, then whether the stream is refused.
    #[inline(never)]
    fn on_run(&mut self, run: TextRun<'_>, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        self.on_output_event(run.event(), run.output, sink);
        self.refused()
    }

    /// The error the stream was refused with, if it was.
    fn refused(&self) -> Result<(), ParseError> {
        match &self.refused {
            Some(refused) => Err(refused.clone()),
            None => Ok(()),
        }
    }

    /// Starts the fast path for `run` (see [`RunText`]), if its region allows it.
    #[cold]
    fn start_run(&mut self, run: &TextRun<'_>) -> Option<&mut RunText> {
        self.settle(run.output);
        let region = self.regions.last()?;
        let stripped = match region.mode {
            TextMode::Kept => false,
            TextMode::Stripped if region.started && region.pending_ws.is_empty() => true,
            _ => return None,
        };
        let content = match region.kind {
            FieldKind::Content => true,
            FieldKind::Reasoning => false,
            _ => return None,
        };
        if region.muted.is_some() || region.field != run.field {
            return None;
        }
        Some(self.run.insert(RunText {
            index: run.index,
            content,
            stripped,
            from: run.start,
            sent_to: run.start,
            end: run.start,
        }))
    }

    /// Ends the fast path ([`RunText`]): copies what the region sent into the message's text of
    /// its field and what it holds into its `pending_ws`, where the general path reads them.
    /// `output` is the stream's output so far (it only grows, so the ranges stay valid).
    fn settle(&mut self, output: &str) {
        let Some(run) = self.run.take() else {
            return;
        };
        let out = if run.content {
            &mut self.content
        } else {
            &mut self.reasoning
        };
        out.push_str(output_range(output, run.from, run.sent_to));
        if let Some(region) = self.regions.last_mut() {
            region
                .pending_ws
                .push_str(output_range(output, run.sent_to, run.end));
        }
    }

    /// The region at `at` and, when it is a text region, the message's text it writes to.
    fn text_region(&mut self, at: usize) -> Option<(&mut Region, &mut String)> {
        let State {
            regions,
            content,
            reasoning,
            ..
        } = self;
        let region = regions.get_mut(at)?;
        let out = match region.kind {
            FieldKind::Content => content,
            FieldKind::Reasoning => reasoning,
            _ => return None,
        };
        Some((region, out))
    }

    fn mode_of(&self, field: &str) -> TextMode {
        self.modes
            .iter()
            .find(|(name, _)| name == field)
            .map_or(TextMode::Kept, |(_, mode)| *mode)
    }

    fn open(&mut self, field: &str) {
        let muted = self.in_prompt.then(String::new);
        let kind = field_kind(field);
        let sketch = match (&self.shape, kind) {
            (Some(shape), FieldKind::ToolCalls) => Some(Sketch::new(shape)),
            _ => None,
        };
        self.regions.push(Region {
            muted,
            sketch,
            open_call: None,
            read_calls: Vec::new(),
            field: field.to_owned(),
            kind,
            mode: self.mode_of(field),
            raw: String::new(),
            sent_from: match kind {
                FieldKind::Reasoning => self.reasoning.len(),
                _ => self.content.len(),
            },
            started: false,
            pending_ws: String::new(),
        });
    }

    /// A region of a joined field just opened: after the first, the separator goes out before its
    /// text (the template joins each region's value onto the field's value so far).
    fn join_on(&mut self, field: &str, sink: &mut Sink<'_>) {
        let Some((_, sep, seen)) = self.joins.iter_mut().find(|(f, _, _)| f == field) else {
            return;
        };
        if !std::mem::replace(seen, true) {
            return;
        }
        // A copy: the separator goes out once per region, not per chunk.
        let sep = sep.clone();
        let last = self.regions.len().wrapping_sub(1);
        if let Some((region, out)) = self.text_region(last) {
            region.send(&sep, out, sink);
            // The region's own text starts after the separator.
            region.sent_from = out.len();
        }
    }

    /// Where the open region of `field` is (opening one if the stream sent no `RegionOpen`).
    fn region_at(&mut self, field: &str) -> usize {
        match self.regions.iter().rposition(|r| r.field == field) {
            Some(at) => at,
            None => {
                self.open(field);
                self.regions.len() - 1
            }
        }
    }

    /// Takes the open region of `field` out (opening one if the stream sent no `RegionOpen`).
    fn take_region(&mut self, field: &str) -> Region {
        let at = self.region_at(field);
        self.regions.remove(at)
    }

    fn on_event(&mut self, event: Event<'_>, sink: &mut Sink<'_>) {
        match event {
            // Set aside by a lenient stream: not part of the message (the final message says
            // what is in it).
            Event::Malformed(_) => {}
            Event::RegionOpen { field } => {
                self.open(field);
                self.join_on(field, sink);
            }
            Event::RegionChunk { field, text, dirty } => {
                let at = self.region_at(field);
                if let Some((region, out)) = self.text_region(at) {
                    if !dirty {
                        // In place: a region is too big to move out and back for every chunk.
                        region.on_text(&text, out, sink);
                    }
                    return;
                }
                let mut region = self.regions.remove(at);
                {
                    // A call's raw text: where its arguments are found as the model wrote them.
                    region.raw.push_str(&text);
                    if region.kind == FieldKind::ToolCalls && region.muted.is_none() {
                        self.read_open_call(&mut region, sink);
                    }
                }
                self.regions.push(region);
            }
            Event::RegionClose { field, value } => {
                let region = self.take_region(field);
                if region.muted.is_some() {
                    // A region of the prompt: nothing of it is output.
                    return;
                }
                match region.kind {
                    FieldKind::Content | FieldKind::Reasoning if region.mode == TextMode::Final => {
                    }
                    FieldKind::Content | FieldKind::Reasoning => {
                        if let Value::String(v) = &value {
                            let out = if region.kind == FieldKind::Content {
                                &self.content
                            } else {
                                &self.reasoning
                            };
                            let sent = out.get(region.sent_from..).unwrap_or("");
                            if let Some(rest) = v.strip_prefix(sent) {
                                let rest = rest.to_owned();
                                self.send_text(region.kind, &rest, sink);
                            }
                        }
                    }
                    FieldKind::ToolCalls => {
                        let mut cursor = 0;
                        let mut calls = calls_of(&value).into_iter();
                        for open in region.read_calls.into_iter().chain(region.open_call) {
                            if self.refused.is_some() {
                                return;
                            }
                            self.close_open_call(
                                open,
                                calls.next(),
                                &region.raw,
                                &mut cursor,
                                sink,
                            );
                        }
                        for call in calls {
                            let (arguments, raw_id) = arguments_and_id(
                                &call.arguments,
                                Some(&region.raw),
                                &mut cursor,
                                self.options.normalize_arguments,
                            );
                            let id = self.own_id(call.id.or(raw_id));
                            self.send_call(id, call.name, arguments, sink);
                        }
                    }
                    FieldKind::Other => {}
                }
            }
        }
    }

    /// The model's id of a call, as the OpenAI id. Calls written as `{"name": …, "arguments":
    /// …}` objects (Hermes, Qwen) carry no id in their format, and an `id` key the model adds
    /// after the arguments comes too late for a call whose start was already sent: their ids
    /// always come from the id policy, for every chunking.
    fn own_id(&self, id: Option<String>) -> Option<String> {
        match &self.shape {
            Some(shape) if shape.is_json_object() => None,
            _ => id,
        }
    }

    /// Reads the open call of a tool-call region: sends its start once its name is complete
    /// (unless a [`ToolChecks`] rule refuses the name: such a call is dealt with when it closes),
    /// then its arguments' text as it arrives.
    fn read_open_call(&mut self, region: &mut Region, sink: &mut Sink<'_>) {
        loop {
            self.read_one_call(region, sink);
            // A JSON list in one region: once a call's object has closed and the list's `,`
            // follows, the next call is read from there.
            let (Some(shape), Some(sketch)) = (&self.shape, &mut region.sketch) else {
                return;
            };
            let NextCall::At(at) = sketch.next_call(shape, &region.raw) else {
                return;
            };
            let Some(open) = region.open_call.take() else {
                return;
            };
            region.read_calls.push(open);
            region.sketch = Some(Sketch::next_in_list(at));
        }
    }

    /// [`State::read_open_call`] for the call the region's sketch reads.
    fn read_one_call(&mut self, region: &mut Region, sink: &mut Sink<'_>) {
        let (Some(shape), Some(sketch)) = (&self.shape, &mut region.sketch) else {
            return;
        };
        if self.refused.is_some() {
            return;
        }
        let Some(known) = sketch.read(shape, &region.raw) else {
            return;
        };
        let open = match &mut region.open_call {
            Some(open) => open,
            None => {
                let index = self.calls.len() + region.read_calls.len();
                if self.checks.violation(known.name, index).is_some() {
                    region.sketch = None;
                    return;
                }
                let id = match known.id {
                    Some(id) => id.to_owned(),
                    None => self.ids.next_id(known.name, index),
                };
                sink(Delta::CallStart {
                    index,
                    id: &id,
                    name: known.name,
                });
                region.open_call.insert(OpenCall {
                    index,
                    id,
                    model_id: known.id.is_some(),
                    name: known.name.to_owned(),
                    sent: String::new(),
                })
            }
        };
        // Normalized arguments are known only once the model's JSON is whole, unless the
        // sketch builds them (then they are compact JSON either way).
        let streams = !self.options.arguments_at_close
            && (!self.options.normalize_arguments || shape.builds_arguments());
        if streams && known.arguments.len() > open.sent.len() {
            let Some(more) = known.arguments.get(open.sent.len()..) else {
                return;
            };
            sink(Delta::CallArguments {
                index: open.index,
                arguments: more,
            });
            open.sent.push_str(more);
        }
    }

    /// The call whose start was sent, now closed as `call`: sends the rest of its arguments.
    /// The closed call must be the one whose start was sent (see [`Sketch`]); if it is not (the
    /// call object wrote its name, arguments or id again after its arguments), the stream fails
    /// rather than contradict what it sent.
    fn close_open_call(
        &mut self,
        open: OpenCall,
        call: Option<super::CallParts>,
        raw: &str,
        cursor: &mut usize,
        sink: &mut Sink<'_>,
    ) {
        let sent = open.sent.as_str();
        let changed = |what: &str| {
            ParseError::new(
                "",
                ParseErrorKind::StreamedCallChanged(format!(
                    "tool call {} ({:?}): {what}",
                    open.index, open.name
                )),
            )
        };
        let Some(call) = call else {
            self.refused = Some(changed("the closed region holds no call"));
            return;
        };
        let (arguments, raw_id) = arguments_and_id(
            &call.arguments,
            Some(raw),
            cursor,
            self.options.normalize_arguments,
        );
        // In a JSON list (Command R7B's actions), a call whose final message carries no id of
        // its own (one without `parameters`: its id is not around any arguments) keeps the id
        // its header wrote, which the sketch read and the start sent: in every chunking, the
        // whole output at once included, the sketch reads the same header. Other shapes carry
        // the id they wrote to the message, and a missing one is a change.
        let from_header = open.model_id && self.shape.as_ref().is_some_and(|s| s.is_json_list());
        let id = self
            .own_id(call.id.or(raw_id))
            .or_else(|| from_header.then(|| open.id.clone()));
        let same_id = match &id {
            Some(id) => open.model_id && *id == open.id,
            None => !open.model_id,
        };
        let problem = if call.name != open.name {
            Some("its name changed after it was sent")
        } else if !same_id {
            Some("its id changed after it was sent")
        } else if !arguments.starts_with(sent) {
            Some("its arguments changed after they were sent")
        } else {
            None
        };
        if let Some(problem) = problem {
            self.refused = Some(changed(problem));
            return;
        }
        if arguments.len() > sent.len() {
            sink(Delta::CallArguments {
                index: open.index,
                arguments: &arguments[sent.len()..],
            });
        }
        self.calls.push(SentCall {
            id: open.id,
            name: open.name,
            arguments,
        });
    }

    fn send_text(&mut self, kind: FieldKind, text: &str, sink: &mut Sink<'_>) {
        if text.is_empty() {
            return;
        }
        match kind {
            FieldKind::Content => {
                self.content.push_str(text);
                sink(Delta::Content(text));
            }
            FieldKind::Reasoning => {
                self.reasoning.push_str(text);
                sink(Delta::Reasoning(text));
            }
            _ => {}
        }
    }

    fn send_call(
        &mut self,
        id: Option<String>,
        name: String,
        arguments: String,
        sink: &mut Sink<'_>,
    ) {
        if self.refused.is_some() {
            return;
        }
        if let Some(reason) = self.checks.violation(&name, self.calls.len()) {
            if self.checks.lenient {
                self.rejected.push(RejectedCall {
                    name,
                    arguments,
                    reason,
                });
            } else {
                self.refused = Some(ParseError::new(
                    "",
                    ParseErrorKind::ToolCallNotAllowed(reason),
                ));
            }
            return;
        }
        let index = self.calls.len();
        let id = id.unwrap_or_else(|| self.ids.next_id(&name, index));
        sink(Delta::CallStart {
            index,
            id: &id,
            name: &name,
        });
        if !arguments.is_empty() {
            sink(Delta::CallArguments {
                index,
                arguments: &arguments,
            });
        }
        self.calls.push(SentCall {
            id,
            name,
            arguments,
        });
    }

    /// The final message: sends what the final message has beyond the deltas so far (text a
    /// region close or a `join` added, calls that had no region) and builds the OpenAI message.
    fn reconcile(&mut self, message: &Value, sink: &mut Sink<'_>) -> Value {
        let sent = self
            .regions
            .iter()
            .find_map(|r| r.read_calls.first().or(r.open_call.as_ref()));
        if let Some(open) = sent {
            self.refused.get_or_insert(ParseError::new(
                "",
                ParseErrorKind::StreamedCallChanged(format!(
                    "tool call {} ({:?}): the final message does not have it",
                    open.index, open.name
                )),
            ));
        }
        let parts = message_parts(message);
        for (kind, name, text) in [
            (FieldKind::Content, "content", &parts.content),
            (FieldKind::Reasoning, "reasoning", &parts.reasoning),
        ] {
            let sent = match kind {
                FieldKind::Content => &self.content,
                _ => &self.reasoning,
            };
            match text.as_deref().unwrap_or("").strip_prefix(sent.as_str()) {
                Some(rest) => {
                    let rest = rest.to_owned();
                    self.send_text(kind, &rest, sink);
                }
                None if !self.deltas_read => {}
                None => {
                    // A template field written twice: its last region's value replaced the text
                    // already sent.
                    self.refused.get_or_insert(ParseError::new(
                        "",
                        ParseErrorKind::StreamedTextChanged(format!(
                            "the final {name} does not begin with the text sent ({} bytes)",
                            sent.len()
                        )),
                    ));
                }
            }
        }
        let mut cursor = 0;
        // The calls not sent (nor set aside) while streaming.
        for call in parts
            .calls
            .iter()
            .skip(self.calls.len() + self.rejected.len())
        {
            let (arguments, raw_id) = arguments_and_id(
                &call.arguments,
                Some(&self.fed),
                &mut cursor,
                self.options.normalize_arguments,
            );
            let id = self.own_id(call.id.clone().or(raw_id));
            self.send_call(id, call.name.clone(), arguments, sink);
        }
        let calls = self
            .calls
            .iter()
            .map(|c| call_json(&c.id, &c.name, &c.arguments))
            .collect();
        assemble(
            parts.content.as_deref(),
            parts.reasoning.as_deref(),
            calls,
            &self.options,
        )
    }
}

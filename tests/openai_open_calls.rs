//! Issue 16: a tool call's start and its arguments stream while the model is still writing the
//! call, not only once it closes — for the families whose calls are a JSON object in tags
//! (`{"name": …, "arguments": …}`) or a header naming the function followed by JSON arguments.
//!
//! The expectations come from the output itself: the arguments' text is the model's JSON text
//! (found in the conformance input), and everything of it that has arrived must have been sent,
//! save a possible partial marker at the very end (at most the longest marker's length).

mod support;

use chatparse::runtime::openai::{self, CounterIds, Delta, DeltaStream, Options};
use chatparse::runtime::Spec;
use chatparse::value::Value;
use support::load_suites;

/// The families whose calls stream while open, and the ones that do not (their calls arrive
/// whole when they close).
const OPEN_CALL_FAMILIES: &[&str] = &[
    "hermes",
    "qwen3",
    "smollm3",
    "ernie4_5",
    "kimi_k2",
    "functionary_v3_1",
    "deepseek_v3_1",
    "deepseek_r1",
    "gpt_oss",
    "mistral_small",
    "llama3_json",
    "functionary_v3_2",
    "cohere_command_r7b",
];

/// Longer than any marker a stream may hold back at the end of its buffer.
const HELD_AT_MOST: usize = 40;

/// A strict delta stream of `spec` after `prompt`, with default options and counter ids.
fn counter_stream<'s>(spec: &'s Spec, prompt: Option<&str>) -> DeltaStream<'s> {
    DeltaStream::from_spec(
        spec,
        prompt,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap()
}

/// `openai::parse` of `input` after `prompt`, with default options and counter ids.
fn parse_counter(
    spec: &Spec,
    input: &str,
    prompt: Option<&str>,
) -> Result<Value, openai::OpenAiError> {
    openai::parse(
        spec,
        input,
        prompt,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
}

#[derive(Default, Debug)]
struct Seen {
    start: Option<(String, String)>,
    arguments: String,
}

fn feed_prefix(spec: &Spec, prompt: Option<&str>, prefix: &str) -> Seen {
    let mut stream = counter_stream(spec, prompt);
    let mut seen = Seen::default();
    stream
        .feed_with(prefix, &mut |delta| match delta {
            Delta::CallStart { index: 0, id, name } => {
                assert!(seen.start.is_none(), "the start is sent once");
                seen.start = Some((id.to_owned(), name.to_owned()));
            }
            Delta::CallArguments {
                index: 0,
                arguments,
            } => {
                assert!(seen.start.is_some(), "arguments before the start");
                seen.arguments.push_str(arguments);
            }
            _ => {}
        })
        .unwrap();
    seen
}

#[test]
fn calls_stream_before_they_close() {
    let mut covered = Vec::new();
    let mut checked = 0;
    for suite in load_suites() {
        let Some(family) = suite.shipped_name() else {
            continue;
        };
        if !OPEN_CALL_FAMILIES.contains(&family) {
            continue;
        }
        let spec = chatparse::shipped::spec(family).unwrap().unwrap();
        // DeepSeek V3.1 streams its calls after reasoning that its template's thinking prompt
        // opened (`<｜Assistant｜><think>`): a start without reasoning stays undecided to the end
        // (a later `</think>` would make it reasoning).
        let v3_1 = family == "deepseek_v3_1";
        let prompt = v3_1.then_some("<｜Assistant｜><think>");
        for case in &suite.cases {
            let with_reasoning = format!("Checking the time.</think>{}", case.input);
            let input = if v3_1 {
                &with_reasoning
            } else {
                case.input.as_str()
            };
            let Ok(message) = parse_counter(&spec, input, prompt) else {
                continue;
            };
            let Some(Value::Array(calls)) = message.get("tool_calls") else {
                continue;
            };
            let first = &calls[0]["function"];
            let name = first["name"].as_str().unwrap();
            let arguments = first["arguments"].as_str().unwrap();
            // Only calls whose JSON arguments the model wrote as one object, once.
            if arguments.len() < 2 || input.matches(arguments).count() != 1 {
                continue;
            }
            // An output the stream holds to its end (deepseek_r1's untagged start is reasoning
            // or content only once `</think>` shows) sends no call before the end at all.
            let last = input.char_indices().last().map_or(0, |(i, _)| i);
            if feed_prefix(&spec, prompt, &input[..last]).start.is_none() {
                continue;
            }
            let at = input.find(arguments).unwrap();
            // The start needs the name: a call that writes its arguments first (`{"arguments":
            // …, "name": …}`) starts when it closes.
            let json_objects = ["hermes", "qwen3", "smollm3", "ernie4_5", "llama3_json"];
            let written_name = if json_objects.contains(&family) {
                format!("\"name\": \"{name}\"")
            } else if family == "cohere_command_r7b" {
                format!("\"tool_name\": \"{name}\"")
            } else {
                name.to_owned()
            };
            if !input[..at].contains(&written_name) {
                continue;
            }
            let end = at + arguments.len();
            for cut in [at + 1, at + arguments.len() / 2, end] {
                if !input.is_char_boundary(cut) {
                    continue;
                }
                let seen = feed_prefix(&spec, prompt, &input[..cut]);
                let what = format!("{family}/{}: cut at {cut} of {input:?}", case.name);
                let Some((_, sent_name)) = &seen.start else {
                    panic!("{what}: the call's start was not sent before it closed");
                };
                assert_eq!(sent_name, name, "{what}");
                assert!(
                    arguments.starts_with(&seen.arguments),
                    "{what}: sent {:?}, not a prefix of {arguments:?}",
                    seen.arguments
                );
                assert!(
                    seen.arguments.len() + HELD_AT_MOST >= cut - at,
                    "{what}: only {:?} of the arguments sent",
                    seen.arguments
                );
                checked += 1;
            }
            if !covered.iter().any(|c| c == family) {
                covered.push(family.to_owned());
            }
        }
    }
    covered.sort_unstable();
    let mut expected: Vec<String> = OPEN_CALL_FAMILIES.iter().map(|f| f.to_string()).collect();
    expected.sort_unstable();
    assert_eq!(covered, expected, "every family has a case with a call");
    assert!(checked > 50, "{checked} cuts checked");
}

/// Everything before the arguments' last character is sent before the closer arrives, in
/// one-byte feeds too (no fragment waits for the call to close).
#[test]
fn arguments_arrive_byte_by_byte() {
    let input = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \
                 \"days\": [1, 2]}}\n</tool_call>";
    let spec = chatparse::shipped::spec("hermes").unwrap().unwrap();
    let mut stream = counter_stream(&spec, None);
    let mut arguments = String::new();
    let mut fragments = 0;
    let closer = input.find("\n</tool_call>").unwrap();
    let mut fed = 0;
    for (i, c) in input.char_indices() {
        let mut buf = [0; 4];
        stream
            .feed_with(c.encode_utf8(&mut buf), &mut |delta| {
                if let Delta::CallArguments { arguments: a, .. } = delta {
                    arguments.push_str(a);
                    fragments += 1;
                }
            })
            .unwrap();
        fed = i + c.len_utf8();
        if fed == closer {
            break;
        }
    }
    assert_eq!(fed, closer);
    assert_eq!(arguments, "{\"city\": \"Zürich\", \"days\": [1, 2]}");
    assert!(fragments > 10, "{fragments} fragments");
    stream.feed_with(&input[fed..], &mut |_| {}).unwrap();
    let (_, message) = stream.finish().unwrap();
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        "{\"city\": \"Zürich\", \"days\": [1, 2]}"
    );
}

/// XML-parameter calls (issue 16): the start goes out once the function's tag is whole, and
/// each parameter's compact JSON once its closing tag is followed by more text (deepseek_v3_2's
/// too: the substitution that quotes its `string="true"` values rewrites one parameter at a
/// time) — cut every
/// conformance output with a call just after its first parameter, the start and that parameter
/// must have been sent, a prefix of the final `arguments` (which the conformance suite checks
/// against transformers).
#[test]
fn xml_parameters_stream_one_at_a_time() {
    let families = [
        "qwen3_coder",
        "qwen3_5",
        "seed_oss",
        "glm4_5",
        "minimax_m2",
        "deepseek_v3_2",
    ];
    let mut covered = Vec::new();
    for suite in load_suites() {
        let Some(family) = suite.shipped_name() else {
            continue;
        };
        if !families.contains(&family) {
            continue;
        }
        let spec = chatparse::shipped::spec(family).unwrap().unwrap();
        for case in &suite.cases {
            // A parameter written twice takes back what was sent (tests/openai.rs).
            if case.name.starts_with("duplicate_") {
                continue;
            }
            let input = case.input.as_str();
            let Ok(message) = parse_counter(&spec, input, None) else {
                continue;
            };
            let Some(Value::Array(calls)) = message.get("tool_calls") else {
                continue;
            };
            let first = &calls[0]["function"];
            let (name, arguments) = (
                first["name"].as_str().unwrap(),
                first["arguments"].as_str().unwrap(),
            );
            let Some((close, tag)) = ["</parameter>", "</arg_value>", "</｜DSML｜parameter>"]
                .iter()
                .filter_map(|t| input.find(t).map(|at| (at, *t)))
                .min()
            else {
                continue;
            };
            // An output the stream holds to its end (an untagged start that a later `</think>`
            // would make reasoning) sends no call before the end at all.
            let last = input.char_indices().last().map_or(0, |(i, _)| i);
            if feed_prefix(&spec, None, &input[..last]).start.is_none() {
                continue;
            }
            // Cut where the text after the parameter shows it is whole: inside the next
            // parameter's opening tag, or before the call's closing tag if text (a newline) comes
            // between them. A `<` right after it could still start the closer, which the stream
            // holds back until it knows.
            let after = close + tag.len();
            let Some(lt) = input[after..].find('<').map(|i| after + i) else {
                continue;
            };
            let cut = if input[lt..].starts_with("</") {
                lt
            } else {
                // The tag's `<` and its next character (deepseek_v3_2's `｜` is three bytes).
                lt + 1 + input[lt + 1..].chars().next().map_or(0, char::len_utf8)
            };
            if cut == after || cut >= input.len() || !input.is_char_boundary(cut) {
                continue;
            }
            let seen = feed_prefix(&spec, None, &input[..cut]);
            let what = format!("{family}/{}: cut at {cut} of {input:?}", case.name);
            let Some((_, sent_name)) = &seen.start else {
                panic!("{what}: the call's start was not sent");
            };
            assert_eq!(sent_name, name, "{what}");
            assert!(
                seen.arguments.len() > 1 && arguments.starts_with(&seen.arguments),
                "{what}: sent {:?}, final {arguments:?}",
                seen.arguments
            );
            if !covered.iter().any(|c| c == family) {
                covered.push(family.to_owned());
            }
        }
    }
    covered.sort_unstable();
    let mut expected: Vec<String> = families.iter().map(|f| f.to_string()).collect();
    expected.sort_unstable();
    assert_eq!(covered, expected);
}

/// A string value streams as it is written (issue 16: "string values stream character by
/// character"). The call is rendered as Qwen3-Coder's chat template writes it
/// (`<parameter=KEY>\nVALUE\n</parameter>\n`); the family converts a value by `json.loads`,
/// keeping the text when it is not JSON, so a value starting with `f` of `fn` could still be
/// `false`, but one starting with `s` (`src/…`) or `u` (`use …`) is text whatever follows. Fed a
/// byte at a time, each cut inside the second value must have sent everything of it so far but
/// line breaks at its end (the template's `\n` before `</parameter>` is not part of the value),
/// escaped as JSON.
#[test]
fn string_values_stream_as_they_are_written() {
    let spec = chatparse::shipped::spec("qwen3_coder").unwrap().unwrap();
    let path = "src/main.rs";
    let content = "use std::io;\n\nfn main() {\n    println!(\"héllo\");\n}";
    let output = format!(
        "<tool_call>\n<function=write_file>\n<parameter=path>\n{path}\n</parameter>\n\
         <parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    );
    let final_arguments = r#"{"path":"src/main.rs","content":"use std::io;\n\nfn main() {\n    println!(\"héllo\");\n}"}"#;
    let message = openai::parse(
        &spec,
        &output,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap();
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        final_arguments
    );
    assert_value_streams(
        &spec,
        None,
        &output,
        content,
        r#"{"path":"src/main.rs","content":""#,
    );
}

/// Fed `output` up to each character of `content` (a string value in it, past its first
/// character), the call's arguments sent are `before` and the value so far escaped as JSON, but
/// line breaks at its end (a template's `\n` before the closing tag is not the value's).
fn assert_value_streams(
    spec: &Spec,
    prompt: Option<&str>,
    output: &str,
    content: &str,
    before: &str,
) {
    let value_start = output.find(content).unwrap();
    for (i, _) in content.char_indices().skip(1) {
        let written = &content[..i];
        let seen = feed_prefix(spec, prompt, &output[..value_start + i]);
        let so_far = written
            .trim_end_matches('\n')
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        assert_eq!(
            seen.arguments,
            format!("{before}{so_far}"),
            "after {written:?}"
        );
    }
}

/// The start of a call goes out as soon as its name is complete, before any of its arguments
/// (Gemma's dialect, deepseek_v3_2's parameters): cut every conformance output with a call just
/// after the first character of the first call's text after its name. A Gemma 4 output that begins with its
/// calls is fed after the prompt's tail the template writes with thinking off
/// (`<|channel>thought\n<channel|>`): without it, such calls wait for the text after them (see
/// `streaming_profiled::gemma4_leading_calls_wait_for_the_text_after_them`).
#[test]
fn starts_go_out_before_dialect_arguments() {
    let families = ["gemma4", "deepseek_v3_2"];
    let mut covered = Vec::new();
    for suite in load_suites() {
        let Some(family) = suite.shipped_name() else {
            continue;
        };
        if !families.contains(&family) {
            continue;
        }
        let spec = chatparse::shipped::spec(family).unwrap().unwrap();
        for case in &suite.cases {
            let input = case.input.as_str();
            let leading = family == "gemma4" && input.trim_start().starts_with("<|tool_call>");
            let prompt = leading.then_some("<|turn>model\n<|channel>thought\n<channel|>");
            let Ok(message) = parse_counter(&spec, input, prompt) else {
                continue;
            };
            let Some(Value::Array(calls)) = message.get("tool_calls") else {
                continue;
            };
            let name = calls[0]["function"]["name"].as_str().unwrap();
            let last = input.char_indices().last().map_or(0, |(i, _)| i);
            if feed_prefix(&spec, prompt, &input[..last]).start.is_none() {
                continue;
            }
            // The first call's arguments: after its name, from its `{` or first parameter tag.
            let marker = if family == "gemma4" {
                "<|tool_call>"
            } else {
                "<｜DSML｜invoke"
            };
            let Some(call) = input.find(marker) else {
                continue;
            };
            let Some(named) = input[call..].find(name).map(|at| call + at + name.len()) else {
                continue;
            };
            let Some(open) = input[named..].find(['{', '<']).map(|i| named + i) else {
                continue;
            };
            let cut = open + 1;
            let seen = feed_prefix(&spec, prompt, &input[..cut]);
            let what = format!("{family}/{}: cut at {cut} of {input:?}", case.name);
            let Some((_, sent_name)) = &seen.start else {
                panic!("{what}: the call's start was not sent");
            };
            assert_eq!(sent_name, name, "{what}");
            assert_eq!(seen.arguments, "", "{what}");
            if !covered.iter().any(|c| c == family) {
                covered.push(family.to_owned());
            }
        }
    }
    covered.sort_unstable();
    assert_eq!(covered, ["deepseek_v3_2", "gemma4"]);
}

/// Gemma 4's dialect calls (`call:NAME{key:<|"|>text<|"|>,n:3}`): the arguments' compact JSON
/// grows one top-level parameter at a time, as the `,` after each arrives. Fed one byte at a
/// time, every conformance output with a call sends, before the first call's closing `}`, exactly
/// the final `arguments` (which the conformance suite checks against transformers) less its last
/// parameter: `{"k1":v1,…` for all but the last key, nothing for a single one — or, when the last
/// value is a `<|"|>` string, all but the closing `"}` (strings stream as written); and every
/// fragment extends the ones before as a prefix of the final text. Outputs that begin with their
/// calls are fed after the thinking-off prompt's tail (`<|channel>thought\n<channel|>`).
#[test]
fn dialect_parameters_stream_one_at_a_time() {
    let spec = chatparse::shipped::spec("gemma4").unwrap().unwrap();
    let mut checked = 0;
    let mut with_parameters_early = 0;
    for suite in load_suites() {
        if suite.shipped_name() != Some("gemma4") {
            continue;
        }
        for case in &suite.cases {
            let input = case.input.as_str();
            let leading = input.trim_start().starts_with("<|tool_call>");
            let prompt = leading.then_some("<|turn>model\n<|channel>thought\n<channel|>");
            let Ok(message) = parse_counter(&spec, input, prompt) else {
                continue;
            };
            let Some(Value::Array(calls)) = message.get("tool_calls") else {
                continue;
            };
            let arguments = calls[0]["function"]["arguments"].as_str().unwrap();
            let Ok(Value::Object(object)) = chatparse::value::from_str(arguments) else {
                continue;
            };
            let (Some(open), Some(closer)) =
                (input.find("<|tool_call>"), input.find("<tool_call|>"))
            else {
                continue;
            };
            // The final arguments less their last parameter, as the stream builds them.
            let mut head = chatparse::value::Map::new();
            for (key, value) in object.iter().take(object.len().saturating_sub(1)) {
                head.insert(key.clone(), value.clone());
            }
            let less_last = if head.is_empty() {
                String::new()
            } else {
                let mut text = Value::Object(head).to_string();
                text.pop();
                text
            };
            // A last value written as a dialect string streams as it is written: all of it but
            // the closing `"}` has gone out — up to a `None` the schema rewrites to `null`
            // inside it, where its streaming stops.
            let escaped_len = |s: &str| Value::String(s.to_owned()).to_string().len() - 2;
            let last = object.iter().next_back();
            let written = last.and_then(|(key, _)| {
                input[..closer]
                    .rsplit_once(&format!("{key}:<|\"|>"))
                    .and_then(|(_, rest)| rest.strip_suffix("<|\"|>}"))
            });
            let value = last.and_then(|(_, v)| v.as_str());
            let want = match (value, written, arguments.strip_suffix("\"}")) {
                (Some(value), Some(raw), Some(open)) => {
                    let stop = raw
                        .match_indices("None")
                        .find(|(at, _)| *at > 0 && matches!(&raw[at - 1..*at], ":" | "[" | ","))
                        .map_or(raw.len(), |(at, _)| at);
                    assert!(value.starts_with(&raw[..stop]), "{value:?} / {raw:?}");
                    open[..open.len() - escaped_len(value) + escaped_len(&raw[..stop])].to_owned()
                }
                _ => less_last,
            };
            assert!(input[..closer].ends_with('}'), "{input:?}");
            let cut = closer - 1;
            let mut stream = counter_stream(&spec, prompt);
            let mut sent = String::new();
            for (i, c) in input[..cut].char_indices() {
                stream
                    .feed_with(&input[i..i + c.len_utf8()], &mut |delta| {
                        if let Delta::CallArguments {
                            index: 0,
                            arguments: more,
                        } = delta
                        {
                            sent.push_str(more);
                            assert!(arguments.starts_with(&sent), "{sent:?} / {arguments:?}");
                        }
                    })
                    .unwrap();
            }
            assert_eq!(
                sent, want,
                "{}: {input:?} cut at {cut} (call at {open})",
                case.name
            );
            checked += 1;
            with_parameters_early += usize::from(!want.is_empty());
        }
    }
    assert!(
        checked >= 14 && with_parameters_early >= 12,
        "{checked}, {with_parameters_early}"
    );
}

/// What of a JSON list's call goes out before its object closes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ListCall {
    /// Its start and its arguments as written.
    Streams,
    /// Its start only: the substitutions that join Phi-4-mini's blocks may rewrite a string in
    /// the arguments (a closer and an opener become `,`), so they go out when the call closes.
    Start,
    /// Nothing: the template writes each call's `id` after its `arguments` (Mistral's
    /// `{"name", "arguments", "id"}`, Apriel's optional `, "id"`), and the start carries it.
    Whole,
}

/// The JSON-list families: the literals their templates (or, where a template writes no calls,
/// the schema) open the call list with, and what of a call goes out while it is open.
const LIST_FAMILIES: &[(&str, &[&str], ListCall)] = &[
    ("apriel", &["<tool_calls>"], ListCall::Whole),
    ("firefunction_v2", &["functools"], ListCall::Streams),
    (
        "granite3_3",
        &["<|tool_call|>", "<tool_call>"],
        ListCall::Streams,
    ),
    ("mistral_nemo", &["[TOOL_CALLS]"], ListCall::Whole),
    ("mistral_small_3_1", &["[TOOL_CALLS]"], ListCall::Whole),
    ("nemotron_nano_v2", &["<TOOLCALL>"], ListCall::Streams),
    (
        "phi4_mini",
        &["<|tool_call|>", "functools"],
        ListCall::Start,
    ),
];

/// One item of a JSON call list: its start, its end, and where its arguments' value starts.
type Item = (usize, usize, usize);

/// Phi-4-mini's blocks (`<|tool_call|>{…}<|/tool_call|>`): its schema's substitutions join them
/// into one list.
const PHI4_CLOSE: &str = "<|/tool_call|>";

/// The items of the JSON call list after the first of `openers` in `input`, read with serde_json
/// (a JSON reader of its own), and where the list (or the lone call object) ends; for
/// `phi4_mini`, of every block its substitutions join.
fn list_items(input: &str, openers: &[&str]) -> Option<(Vec<Item>, usize)> {
    let (mut at, mut opener) = openers
        .iter()
        .filter_map(|o| input.find(o).map(|i| (i, *o)))
        .min()?;
    let mut items = Vec::new();
    loop {
        let (more, end) = value_items(input, ws(input, at + opener.len()))?;
        items.extend(more);
        if !openers.contains(&"functools") {
            return Some((items, end));
        }
        let Some(after) = input[ws(input, end)..].strip_prefix(PHI4_CLOSE) else {
            return Some((items, end));
        };
        let next = after.trim_start();
        let Some(o) = openers.iter().find(|o| next.starts_with(**o)) else {
            return Some((items, end));
        };
        (at, opener) = (input.len() - next.len(), *o);
    }
}

fn ws(input: &str, mut i: usize) -> usize {
    while input[i..].starts_with([' ', '\t', '\n', '\r']) {
        i += 1;
    }
    i
}

/// The call items of the JSON value at `i` (an object, or a list of them), and its end.
fn value_items(input: &str, mut i: usize) -> Option<(Vec<Item>, usize)> {
    let value_end = |i: usize| {
        let mut values =
            serde_json::Deserializer::from_str(&input[i..]).into_iter::<serde_json::Value>();
        values.next()?.ok()?;
        Some(i + values.byte_offset())
    };
    // Where the arguments' value starts; a call without arguments has only its end.
    let arguments_at = |start: usize, end: usize| {
        let key = input[start..end]
            .find("\"arguments\"")
            .map(|i| i + start + 11);
        key.map_or(end - 1, |key| ws(input, ws(input, key) + 1))
    };
    if input[i..].starts_with('{') {
        let end = value_end(i)?;
        return Some((vec![(i, end, arguments_at(i, end))], end));
    }
    if !input[i..].starts_with('[') {
        return None;
    }
    let mut items = Vec::new();
    i = ws(input, i + 1);
    loop {
        let end = value_end(i)?;
        items.push((i, end, arguments_at(i, end)));
        i = ws(input, end);
        match input[i..].chars().next()? {
            ',' => i = ws(input, i + 1),
            ']' => return Some((items, i + 1)),
            _ => return None,
        }
    }
}

/// What a chunked stream sent of each call, and how much output had been fed when.
#[derive(Default, Debug, Clone)]
struct SentCall {
    id: String,
    name: String,
    arguments: String,
    /// The output fed when the start went out (`usize::MAX`: by `finish`).
    started_at: usize,
    /// The output fed when each argument fragment went out.
    fragments_at: Vec<usize>,
}

impl SentCall {
    /// The output fed when the call was complete (its last fragment, or its start).
    fn done_at(&self) -> usize {
        self.fragments_at.last().copied().unwrap_or(self.started_at)
    }

    /// The argument fragments sent by an earlier feed than the one that completed the call:
    /// sent while the call was still open.
    fn open_fragments(&self) -> usize {
        let done = self.done_at();
        self.fragments_at.iter().filter(|&&at| at < done).count()
    }
}

/// `input` streamed in chunks, beside its one-shot conversion.
struct Chunked {
    /// `openai::parse` of the whole input.
    one_shot: Result<Value, openai::OpenAiError>,
    /// The streamed message, or the error that failed the stream.
    streamed: Result<Value, chatparse::ParseError>,
    /// What the deltas sent of each call.
    calls: Vec<SentCall>,
    input_len: usize,
    /// The input and its chunks, for messages.
    what: String,
}

impl Chunked {
    /// Calls started by a feed (not by `finish`).
    fn fed_starts(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| c.started_at != usize::MAX)
            .count()
    }

    /// Calls started before the last chunk.
    fn early_starts(&self) -> usize {
        let len = self.input_len;
        self.calls.iter().filter(|c| c.started_at < len).count()
    }

    /// Argument fragments sent before the last chunk.
    fn early_fragments(&self) -> usize {
        let len = self.input_len;
        let early = |c: &SentCall| c.fragments_at.iter().filter(|&&at| at < len).count();
        self.calls.iter().map(early).sum()
    }

    /// Argument fragments sent while their call was open (see [`SentCall::open_fragments`]).
    fn open_fragments(&self) -> usize {
        self.calls.iter().map(SentCall::open_fragments).sum()
    }
}

/// Feeds `input` cut at `cuts` (increasing chunk ends, the last one `input.len()`) to a strict
/// counter-id delta stream, recording every delta. Checks the invariants that hold for every
/// input: a streamed message equals the one-shot one when both succeed, and its calls are the
/// deltas' calls (each start once and in order, its id and name, its fragments concatenated to
/// its `arguments`).
fn stream_chunked(spec: &Spec, prompt: Option<&str>, input: &str, cuts: &[usize]) -> Chunked {
    let mut stream = counter_stream(spec, prompt);
    let mut calls: Vec<SentCall> = Vec::new();
    let record = |delta: Delta<'_>, fed: usize, calls: &mut Vec<SentCall>| match delta {
        Delta::CallStart { index, id, name } => {
            assert_eq!(index, calls.len(), "calls start once, in order");
            calls.push(SentCall {
                id: id.to_owned(),
                name: name.to_owned(),
                started_at: fed,
                ..SentCall::default()
            });
        }
        Delta::CallArguments { index, arguments } => {
            let call = &mut calls[index];
            call.arguments.push_str(arguments);
            call.fragments_at.push(fed);
        }
        _ => {}
    };
    let mut from = 0;
    let mut fed = Ok(());
    for &cut in cuts {
        fed = stream.feed_with(&input[from..cut], &mut |d| record(d, cut, &mut calls));
        if fed.is_err() {
            break;
        }
        from = cut;
    }
    let streamed = fed.and_then(|_| stream.finish_with(&mut |d| record(d, usize::MAX, &mut calls)));
    let chunked = Chunked {
        one_shot: parse_counter(spec, input, prompt),
        streamed,
        calls,
        input_len: input.len(),
        what: format!("{input:?} cut at {cuts:?}"),
    };
    let what = &chunked.what;
    if let (Ok(streamed), Ok(one_shot)) = (&chunked.streamed, &chunked.one_shot) {
        assert_eq!(streamed, one_shot, "{what}");
    }
    if let Ok(message) = &chunked.streamed {
        let finals = message["tool_calls"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        assert_eq!(chunked.calls.len(), finals.len(), "{what}: calls started");
        for (k, (sent, last)) in chunked.calls.iter().zip(finals).enumerate() {
            let f = &last["function"];
            assert_eq!(
                sent.id,
                last["id"].as_str().unwrap(),
                "{what}: call {k}'s id"
            );
            assert_eq!(
                sent.name,
                f["name"].as_str().unwrap(),
                "{what}: call {k}'s name"
            );
            assert_eq!(
                sent.arguments,
                f["arguments"].as_str().unwrap(),
                "{what}: call {k}'s fragments"
            );
        }
    }
    chunked
}

/// Feeds `input` cut at `cuts`; the calls the deltas sent and the message (the stream must
/// not fail).
fn feed_cuts(
    spec: &Spec,
    prompt: Option<&str>,
    input: &str,
    cuts: &[usize],
) -> (Vec<SentCall>, Value) {
    let chunked = stream_chunked(spec, prompt, input, cuts);
    let message = chunked.streamed.unwrap();
    (chunked.calls, message)
}

/// Issue 16, JSON lists: every call leaves the stream while the list is still being written.
/// For every conformance input of the JSON-list families whose strict parse has calls, at
/// every split point (short inputs) or in one-byte and random chunks (long ones): the deltas
/// rebuild the one-shot message (start once, argument fragments concatenating to `arguments`),
/// and each call went out with the chunk that brought its object's closing `}` (its start and
/// whole arguments; for the families without an id after the arguments, the start already with
/// the chunk that began its arguments, and for Phi-4-mini no argument fragment before the call
/// closed) — not at the list's end. The item spans come from
/// serde_json, the call count from transformers' result (the conformance suite).
#[test]
fn json_list_calls_leave_as_the_list_is_written() {
    use support::{char_boundaries, random_cuts, Expect, Rng};
    let mut covered: Vec<&str> = Vec::new();
    let mut checked = 0;
    let mut rng = Rng::new(16);
    for suite in load_suites() {
        let Some(&(family, openers, whole)) = suite
            .shipped_name()
            .and_then(|n| LIST_FAMILIES.iter().find(|(f, _, _)| *f == n))
        else {
            continue;
        };
        let spec = chatparse::shipped::spec(family).unwrap().unwrap();
        for case in &suite.cases {
            let Expect::Value(reference) = &case.expect else {
                continue;
            };
            let Some(Value::Array(want)) = reference
                .get("tool_calls")
                .filter(|c| c != &&Value::Array(vec![]))
            else {
                continue;
            };
            let input = case.input.as_str();
            let (items, list_end) = list_items(input, openers)
                .unwrap_or_else(|| panic!("{family}/{}: no call list", case.name));
            assert_eq!(items.len(), want.len(), "{family}/{}: oracle", case.name);
            let opener_at = openers.iter().filter_map(|o| input.find(o)).min().unwrap();
            // Text before the list that only a later marker could decide: Nemotron's untagged
            // start is reasoning if a `</think>` follows (a thinking-off prompt decides it);
            // Apriel's untagged text is reasoning, which its calls do not end (they are held).
            let before = &input[..opener_at];
            let prompt = match family {
                "nemotron_nano_v2" if !before.contains("</think>") => {
                    Some("<|im_start|>assistant\n<think></think>")
                }
                "apriel" if !before.contains("[BEGIN FINAL RESPONSE]") => continue,
                _ => None,
            };
            let one_shot = parse_counter(&spec, input, prompt).unwrap();
            let chunkings: Vec<Vec<usize>> = if input.len() <= 400 {
                char_boundaries(input)[1..]
                    .iter()
                    .map(|&s| {
                        if s == input.len() {
                            vec![s]
                        } else {
                            vec![s, input.len()]
                        }
                    })
                    .collect()
            } else {
                let mut all = vec![char_boundaries(input)[1..].to_vec()];
                all.extend((0..8).map(|_| random_cuts(input, &mut rng)));
                all
            };
            for cuts in chunkings {
                let (calls, message) = feed_cuts(&spec, prompt, input, &cuts);
                let what = format!(
                    "{family}/{} cut at {:?}",
                    case.name,
                    &cuts[..cuts.len().min(3)]
                );
                assert_eq!(message, one_shot, "{what}");
                let finals = message["tool_calls"].as_array().unwrap();
                assert_eq!(calls.len(), finals.len(), "{what}");
                // The fed length once `at` has arrived.
                let fed_by = |at: usize| *cuts.iter().find(|&&c| c >= at).unwrap();
                for (k, (call, last)) in calls.iter().zip(finals).enumerate() {
                    assert_eq!(call.id, last["id"].as_str().unwrap(), "{what}");
                    assert_eq!(
                        call.name,
                        last["function"]["name"].as_str().unwrap(),
                        "{what}"
                    );
                    let arguments = last["function"]["arguments"].as_str().unwrap();
                    assert_eq!(call.arguments, arguments, "{what}: call {k}");
                    let (_, end, args_at) = items[k];
                    let latest = if whole == ListCall::Whole {
                        fed_by(end)
                    } else {
                        fed_by(args_at + 1)
                    };
                    if whole == ListCall::Start {
                        assert_eq!(call.open_fragments(), 0, "{what}: call {k}");
                    }
                    assert!(
                        call.started_at <= latest,
                        "{what}: call {k} started with {} bytes fed, its item closed at {end} \
                         and the list at {list_end}",
                        call.started_at
                    );
                }
                checked += 1;
            }
            if !covered.contains(&family) {
                covered.push(family);
            }
        }
    }
    covered.sort_unstable();
    let families: Vec<&str> = LIST_FAMILIES.iter().map(|(f, _, _)| *f).collect();
    assert_eq!(covered, families, "every family has a case with calls");
    assert!(checked > 2_000, "{checked} chunkings");
}

/// JSON lists on adversarial outputs: soups of each family's openers, closers, end tokens,
/// call items (good ones, ones with an id after the arguments, ones holding a closer inside a
/// string, a lone `null`, a duplicate name) and text, fed in random chunks. The deltas always
/// rebuild the one-feed message (`openai::parse`), and against the schema's own one-shot parse
/// (the reference's behaviour, see the conformance suite) the stream fails exactly when the
/// parse fails and otherwise has its calls (names and argument values). The one exception is
/// the documented one: a call object that writes its name or arguments again after its
/// arguments fails a stream that started it early (`StreamedCallChanged`).
#[test]
fn json_list_soups_stream_to_the_one_shot_parse() {
    use support::{random_cuts, Rng};
    const SOUPS: usize = 1000;
    let mut rng = Rng::new(1616);
    let items = [
        r#"{"name": "f", "arguments": {"a": 1}}"#,
        r#"{"name": "g", "arguments": {"s": "x]}"}, "id": "a1b2c3d4e"}"#,
        r#"{"arguments": {}, "name": "h"}"#,
        r#"{"name": "k", "arguments": {"s": "</tool_calls>"}}"#,
        r#"{"name": "k", "arguments": {"s": "a<|/tool_call|> <|tool_call|>b"}}"#,
        r#"{"name": "k", "arguments": {"s": "</TOOLCALL>"}}"#,
        r#"{"name": "d", "arguments": {}, "name": "e"}"#,
        "null",
    ];
    let glue = [
        "[",
        "]",
        ", ",
        " ",
        "\n",
        "Sure. ",
        "</think>\n\n",
        "[BEGIN FINAL RESPONSE]\n",
        "[END FINAL RESPONSE]\n",
        "</tool_calls>",
        "</TOOLCALL>",
        "<|/tool_call|>",
        "</tool_call>",
        "<|end|>",
        "</s>",
        "<|eot_id|>",
        "<|end_of_text|>",
        "<SPECIAL_12>",
        "{\"name\": \"f",
    ];
    let mut checked = 0;
    let mut streamed_calls = 0;
    for &(family, openers, _) in LIST_FAMILIES {
        let spec = chatparse::shipped::spec(family).unwrap().unwrap();
        let opener = |rng: &mut Rng| match openers[rng.below(openers.len())] {
            "functools" => "functools[",
            o => o,
        };
        for _ in 0..SOUPS {
            let mut input = String::new();
            if rng.below(2) == 0 {
                input.push_str(
                    [
                        "Hi. ",
                        "</think>\n\n",
                        "Here are my reasoning steps:\nok\n[BEGIN FINAL RESPONSE]\n",
                    ][rng.below(3)],
                );
            }
            if rng.below(2) == 0 {
                // A list as the template writes it, then maybe one more piece.
                let calls: Vec<&str> = (0..1 + rng.below(3)).map(|_| items[rng.below(6)]).collect();
                match family {
                    "phi4_mini" => {
                        for call in calls {
                            input.push_str(&format!("<|tool_call|>{call}<|/tool_call|>"));
                        }
                    }
                    _ => {
                        input.push_str(opener(&mut rng).trim_end_matches('['));
                        input.push_str(&format!("[{}]", calls.join(", ")));
                        input.push_str(match family {
                            "apriel" => "</tool_calls>",
                            "nemotron_nano_v2" => "</TOOLCALL>",
                            _ => "",
                        });
                    }
                }
                if rng.below(2) == 0 {
                    input.push_str(glue[rng.below(glue.len())]);
                }
            } else {
                // A soup after an opener.
                input.push_str(opener(&mut rng));
                for _ in 0..1 + rng.below(7) {
                    match rng.below(4) {
                        0 | 1 => input.push_str(items[rng.below(items.len())]),
                        2 => input.push_str(glue[rng.below(glue.len())]),
                        _ => input.push_str(if rng.below(3) == 0 {
                            opener(&mut rng)
                        } else {
                            ", "
                        }),
                    }
                }
            }
            let cuts = random_cuts(&input, &mut rng);
            // A call object that writes its name twice takes back the start already sent.
            let twice = input.contains(items[6]);
            if let Some(chunked) = stream_against_one_shot(&spec, &input, &cuts, twice) {
                streamed_calls += chunked.early_starts();
            }
            checked += 1;
        }
    }
    assert_eq!(checked, SOUPS * LIST_FAMILIES.len());
    eprintln!("{streamed_calls} calls started before the last chunk");
    assert!(
        streamed_calls > 200,
        "{streamed_calls} calls started before the last chunk"
    );
}

/// Soups of Gemma 4 dialect parameters, separators, brackets, delimiters cut short and end
/// tokens, in random chunks: the stream fails exactly when the one-shot conversion
/// (`openai::parse`, whose arguments the conformance suite checks against transformers) fails,
/// and otherwise equals it. The one exception is the documented one: a key written twice (the
/// object keeps one key for both) takes back a parameter already sent (`StreamedCallChanged`).
#[test]
fn dialect_soups_stream_to_the_one_shot_parse() {
    use chatparse::ParseErrorKind;
    use support::Rng;
    const SOUPS: usize = 3000;
    let mut rng = Rng::new(4242);
    let spec = chatparse::shipped::spec("gemma4").unwrap().unwrap();
    let prompt = Some("<|turn>model\n<|channel>thought\n<channel|>");
    let parameters = [
        ("a", "a:1"),
        ("b", "b:<|\"|>x, y}<|\"|>"),
        ("c", "c:None"),
        ("d", "d:[1,None,<|\"|>],[<|\"|>]"),
        ("e", "e:{f:<|\"|>}<|\"|>,g:None}"),
        ("a", "a:2"),
        ("g", "\"g\":3"),
        ("h", "h:<|\"|>open"),
        ("i", " i:1"),
        ("j", "j:true"),
        ("k", "k:<|\"|><|\"|>"),
        ("l", "l:\"s,t\""),
        ("m", "m:<|\"|>a:None,b<|\"|>"),
        ("n", "n:1.50"),
    ];
    let glue = [
        ",",
        "}",
        "{",
        "]",
        "<|\"|>",
        "<|\"",
        "None",
        "<tool_call|>",
        "<turn|>",
        " ",
        "\n",
    ];
    let (mut checked, mut early, mut changed) = (0, 0, 0);
    for _ in 0..SOUPS {
        let mut input = String::from("<|tool_call>call:f{");
        let mut keys = Vec::new();
        for i in 0..1 + rng.below(5) {
            if i > 0 {
                input.push(',');
            }
            if rng.below(5) == 0 {
                input.push_str(glue[rng.below(glue.len())]);
            } else {
                let (key, text) = parameters[rng.below(parameters.len())];
                keys.push(key);
                input.push_str(text);
            }
        }
        if rng.below(4) != 0 {
            input.push_str("}<tool_call|>");
        }
        if rng.below(3) == 0 {
            input.push_str(
                ["Done.", "<|tool_call>call:g{a:1}<tool_call|>", "<turn|>"][rng.below(3)],
            );
        }
        let cuts = support::random_cuts(&input, &mut rng);
        let Chunked {
            one_shot,
            streamed,
            what,
            ..
        } = {
            let chunked = stream_chunked(&spec, prompt, &input, &cuts);
            early += chunked.early_fragments();
            chunked
        };
        match (&streamed, &one_shot) {
            (Ok(_), Ok(_)) | (Err(_), Err(_)) => {}
            (Err(e), Ok(_)) if matches!(e.kind, ParseErrorKind::StreamedCallChanged(_)) => {
                let twice = keys
                    .iter()
                    .any(|k| keys.iter().filter(|o| *o == k).count() > 1);
                assert!(twice, "{what}: {e}");
                changed += 1;
            }
            _ => panic!("{what}: streamed {streamed:?}, one-shot {one_shot:?}"),
        }
        checked += 1;
    }
    eprintln!("{checked} soups, {early} argument fragments before the last chunk, {changed} keys written twice");
    assert!(
        early > 500,
        "{early} argument fragments before the last chunk"
    );
}

/// Soups of Mistral Small's separated calls (`[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{…}`, list
/// arguments, headers the schema does not read, brackets and end tokens), in random chunks: the
/// stream fails exactly when the one-shot conversion fails and otherwise equals it, and calls
/// start with the model's id before they close.
#[test]
fn separated_call_soups_stream_to_the_one_shot_parse() {
    use support::Rng;
    const SOUPS: usize = 2000;
    let mut rng = Rng::new(3131);
    let spec = chatparse::shipped::spec("mistral_small").unwrap().unwrap();
    let pieces = [
        "[TOOL_CALLS]f[ARGS]{\"a\": 1}",
        "[TOOL_CALLS]g[CALL_ID]a1b2c3d4e[ARGS]{\"s\": \"[ARGS]{}\"}",
        "[TOOL_CALLS]h[ARGS][{\"a\": {\"b\": 2}}]",
        "[TOOL_CALLS]k[X]{}",
        "[TOOL_CALLS]m{\"a\": [1, {\"b\": \"]\"}]}",
        "[TOOL_CALLS]n[CALL_ID]z9[ARGS] {\"a\": 1} ",
        "[TOOL_CALLS]",
        "[ARGS]",
        "[CALL_ID]",
        "{",
        "}",
        " ",
        "</s>",
        "Sure. ",
    ];
    let (mut early, mut checked, mut ids) = (0, 0, 0);
    for _ in 0..SOUPS {
        let mut input = String::new();
        for _ in 0..1 + rng.below(5) {
            input.push_str(pieces[rng.below(pieces.len())]);
        }
        let cuts = support::random_cuts(&input, &mut rng);
        let chunked = stream_chunked(&spec, None, &input, &cuts);
        early += chunked.early_fragments();
        let (streamed, one_shot, what) = (&chunked.streamed, &chunked.one_shot, &chunked.what);
        match (streamed, one_shot) {
            (Ok(a), Ok(_)) => {
                ids += a["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|c| c["id"] == "a1b2c3d4e" || c["id"] == "z9")
                    .count();
            }
            (Err(_), Err(_)) => {}
            _ => panic!("{what}: streamed {streamed:?}, one-shot {one_shot:?}"),
        }
        checked += 1;
    }
    eprintln!("{checked} soups, {early} argument fragments before the last chunk, {ids} model ids");
    assert!(early > 300 && ids > 100, "{early} fragments, {ids} ids");
}

/// Llama 3's end tokens (its schema's root pattern ends the calls at the first of them).
const LLAMA3_ENDS: &[&str] = &["<|eom_id|>", "<|eot_id|>", "<|end_of_text|>"];
const PYTHON_TAG: &str = "<|python_tag|>";

/// For each call of a `llama3_json` output, the input length that decides it, read with
/// serde_json and the template's separators: the next call's `;` through its `{"name":` (the
/// schema's substitution), the next `<|python_tag|>`, or the end token after the last call (an
/// output without one decides its last call only at its end).
fn llama3_decided_at(input: &str) -> Vec<usize> {
    let start = match input.find(PYTHON_TAG) {
        Some(t) if !input[..t].trim_start().starts_with('{') => t + PYTHON_TAG.len(),
        _ => 0,
    };
    let mut i = ws(input, start);
    let mut decided = Vec::new();
    loop {
        let mut values =
            serde_json::Deserializer::from_str(&input[i..]).into_iter::<serde_json::Value>();
        let Some(Ok(_)) = values.next() else {
            return decided;
        };
        let end = ws(input, i + values.byte_offset());
        let rest = &input[end..];
        if let Some(after) = rest.strip_prefix(';') {
            let next = ws(input, input.len() - after.len());
            let key_end = input[next..].find(':').map(|k| next + k + 1).unwrap();
            decided.push(key_end);
            i = next;
        } else if rest.starts_with(PYTHON_TAG) {
            decided.push(end + PYTHON_TAG.len());
            i = ws(input, end + PYTHON_TAG.len());
        } else {
            let end_token = LLAMA3_ENDS.iter().find(|e| rest.starts_with(**e));
            decided.push(end_token.map_or(input.len(), |e| end + e.len()));
            return decided;
        }
    }
}

/// Every split into two chunks, one-byte chunks, and (long inputs) random chunkings.
fn chunkings(input: &str, rng: &mut support::Rng) -> Vec<Vec<usize>> {
    use support::{char_boundaries, random_cuts};
    let bounds = char_boundaries(input);
    let mut all: Vec<Vec<usize>> = vec![bounds[1..].to_vec()];
    if input.len() <= 400 {
        all.extend(
            bounds[1..bounds.len() - 1]
                .iter()
                .map(|&s| vec![s, input.len()]),
        );
    } else {
        all.extend((0..8).map(|_| random_cuts(input, rng)));
    }
    all
}

/// Issue 16, `llama3_json`: every call starts once its name is written and streams its
/// arguments as they arrive, and is complete when what follows it decides it (the `;` and the
/// next call's `{"name":`, a `<|python_tag|>`, or the end token), not with the final message
/// (see [`calls_leave_when_decided`]).
#[test]
fn llama3_calls_leave_when_decided() {
    let spec = chatparse::shipped::spec("llama3_json").unwrap().unwrap();
    // The conformance inputs with calls, and made ones (empty `parameters` objects, which wait
    // for the call's end: a later `arguments` key would replace them).
    let made = [
        "{\"name\": \"a\", \"parameters\": {\"x\": [1, {\"y\": \"}\"}]}}; {\"name\": \"b\", \
         \"parameters\": {}}<|eot_id|>",
        "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}\
         <|python_tag|>{\"name\": \"b\", \"parameters\": {\"s\": \"; {\"}}<|eom_id|>",
    ];
    let leave = calls_leave_when_decided(
        &spec,
        "llama3_json",
        &made,
        llama3_decided_at,
        // The template's `{"name": …, "parameters": …}` (an `arguments` key, or `type` first,
        // send the arguments when the call closes).
        |input| !input.contains("\"arguments\"") && !input.contains("{\"type\""),
    );
    assert!(leave.checked > 1_000, "{} chunkings", leave.checked);
    assert!(leave.done_before_end >= 3);
    assert!(leave.open_fragments > 100, "{}", leave.open_fragments);
}

/// `llama3_json` on adversarial outputs: soups of calls (with `;`, `}`, `{"name":` and the tag
/// inside strings), separators (`;` with and without white space, a tag, cut keys), end tokens
/// and text, fed in random chunks. The streamed message equals the one-feed message, and the
/// stream fails exactly when the schema's one-shot parse does (the reference's behaviour, see
/// the conformance suite), else has its calls.
#[test]
fn llama3_soups_stream_to_the_one_shot_parse() {
    use support::{random_cuts, Rng};
    const SOUPS: usize = 3000;
    let mut rng = Rng::new(3316);
    let spec = chatparse::shipped::spec("llama3_json").unwrap().unwrap();
    let pieces = [
        r#"{"name": "f", "parameters": {"a": 1}}"#,
        r#"{"name": "g", "parameters": {"s": "}; {\"name\": 1"}}"#,
        r#"{"name": "h", "parameters": {"s": "x}; {"}}"#,
        r#"{"type": "function", "name": "k", "arguments": {}}"#,
        r#"{"name": "t", "parameters": {"s": "<|python_tag|>"}}"#,
        r#"{"name": "e", "parameters": {"s": "<|eot_id|>"}}"#,
        r#"{"name":"n"}"#,
        r#"{"nam"#,
        r#"{"type""#,
        "{",
        "}",
        ";",
        "; ",
        " ;\n ",
        "}; ",
        ": ",
        r#""name""#,
        PYTHON_TAG,
        "<|eom_id|>",
        "<|eot_id|>",
        "<|end_of_text|>",
        "Sure. ",
        " ",
        "\n",
        "x",
    ];
    // Made to hit each rule: a `;` join right after a tag (before the next call's `{`), a tag
    // before a join, a join before a tag, a cut key, `;` and a tag inside strings.
    let made = [
        r#"{"name": "a"}<|python_tag|>}; {"name": "b"}; {"name": "c"}<|eot_id|>"#,
        r#"<|python_tag|>{"name": "a"} x <|python_tag|> ;{"name": "b"}<|eom_id|>"#,
        r#"{"name": "a", "parameters": {"s": "<|python_tag|>"}}; {"name": "b"}<|eot_id|>"#,
        r#"{"name": "a"}; {"name": "b", "parameters": {"s": "}; {"name": 1"}}<|eot_id|>"#,
        r#"{"name": "a"} ; {"nam": "b"}<|eot_id|>"#,
        r#"{"name": "a"}<|python_tag|>{"name": "b"}; {"type": "function", "name": "c"}"#,
    ];
    let (mut checked, mut fed_calls, mut errors, mut open_fragments) = (0, 0, 0, 0);
    for n in 0..SOUPS {
        let mut input = String::new();
        if let Some(made) = made.get(n) {
            input.push_str(made);
        } else {
            match rng.below(3) {
                0 => input.push_str(PYTHON_TAG),
                1 => input.push_str(["Hi. ", " \n", "x"][rng.below(3)]),
                _ => {}
            }
            if rng.below(2) == 0 {
                // Calls as the template writes them, then maybe one more piece.
                for k in 0..1 + rng.below(4) {
                    if k > 0 {
                        input.push_str(["; ", ";", " ;\n", PYTHON_TAG][rng.below(4)]);
                    }
                    input.push_str(pieces[rng.below(7)]);
                }
                if rng.below(3) > 0 {
                    input.push_str(pieces[rng.below(pieces.len())]);
                }
            } else {
                for _ in 0..1 + rng.below(8) {
                    if rng.below(2) == 0 {
                        input.push_str(pieces[rng.below(7)]);
                    } else {
                        input.push_str(pieces[rng.below(pieces.len())]);
                    }
                }
            }
        }
        let cuts = if n < made.len() {
            support::char_boundaries(&input)[1..].to_vec()
        } else {
            random_cuts(&input, &mut rng)
        };
        match stream_against_one_shot(&spec, &input, &cuts, false) {
            Some(chunked) => {
                fed_calls += chunked.fed_starts();
                open_fragments += chunked.open_fragments();
            }
            None => errors += 1,
        }
        checked += 1;
    }
    eprintln!(
        "llama3_json soups: {checked}, {errors} errors, {fed_calls} calls sent by a feed, \
         {open_fragments} argument fragments sent while their call was open"
    );
    assert!(fed_calls > 250, "{fed_calls} calls sent by a feed");
    assert!(
        open_fragments > 1_000,
        "{open_fragments} fragments while open"
    );
}

const LFM2_OPEN: &str = "<|tool_call_start|>";
const LFM2_CLOSE: &str = "<|tool_call_end|>";
const LFM2_ENDS: &[&str] = &["<|im_end|>", "<|endoftext|>"];

/// Where the Python call `NAME(…)` starting at `i` ends (after its `)`), read as Python reads
/// it: brackets counted outside `'…'` and `"…"` strings (with `\` escapes).
fn python_call_end(input: &str, i: usize) -> Option<usize> {
    let bytes = input.as_bytes();
    let open = i + input[i..].find('(')?;
    let (mut depth, mut quote, mut j) = (0i32, None::<u8>, open);
    while j < bytes.len() {
        let b = bytes[j];
        match quote {
            Some(_) if b == b'\\' => j += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j + 1);
                    }
                }
                _ => {}
            },
        }
        j += 1;
    }
    None
}

/// For each call of an `lfm2` output, the input length that decides it: the next call's
/// `NAME(` (after `, ` or after `]<|tool_call_end|><|tool_call_start|>[`, which the schema's
/// substitution joins), or the end token after the list (an output without one decides its
/// last call only at its end).
fn lfm2_decided_at(input: &str) -> Vec<usize> {
    let name_len = |s: &str| {
        s.find('(').filter(|&p| {
            p > 0
                && s[..p]
                    .chars()
                    .all(|c| c.is_alphanumeric() || "_.-".contains(c))
        })
    };
    let Some(open) = input.find(LFM2_OPEN) else {
        return Vec::new();
    };
    let mut i = ws(input, open + LFM2_OPEN.len());
    i = ws(input, i + usize::from(input[i..].starts_with('[')));
    let mut decided = Vec::new();
    while let Some(end) = python_call_end(input, i) {
        let mut j = ws(input, end);
        if input[j..].starts_with(',') {
            j = ws(input, j + 1);
        } else if let Some(rest) = input[j..].strip_prefix(']') {
            let k = ws(input, input.len() - rest.len());
            if let Some(rest) = input[k..].strip_prefix(LFM2_CLOSE) {
                let k = ws(input, input.len() - rest.len());
                if let Some(rest) = input[k..].strip_prefix(LFM2_OPEN) {
                    let k = ws(input, input.len() - rest.len());
                    j = ws(input, k + 1);
                } else {
                    // The list ends here unless another block follows: decided by the end
                    // token, or by the first character that cannot begin the next block.
                    let end_token = LFM2_ENDS.iter().find(|e| input[k..].starts_with(**e));
                    let same = input[k..]
                        .bytes()
                        .zip(LFM2_OPEN.bytes())
                        .take_while(|(a, b)| a == b)
                        .count();
                    decided.push(match end_token {
                        Some(e) => k + e.len(),
                        None if k + same < input.len() => k + same + 1,
                        None => input.len(),
                    });
                    return decided;
                }
            }
        }
        match name_len(&input[j..]) {
            Some(n) => decided.push(j + n + 1),
            None => {
                let end_token = LFM2_ENDS
                    .iter()
                    .find_map(|e| input[j..].find(e).map(|p| j + p + e.len()));
                decided.push(end_token.unwrap_or(input.len()));
                return decided;
            }
        }
        i = j;
    }
    decided
}

/// Issue 16, `lfm2`: every pythonic call leaves the stream when what follows its `)` decides it
/// (the next call's `NAME(`, within a list or across blocks the substitution joins, or the end
/// token), not with the final message. For every conformance input with calls, at every split
/// point and in one-byte chunks: the deltas rebuild the one-shot message, and each call started
/// no later than the chunk that brought what decides it (found by reading the calls as Python
/// does).
#[test]
fn lfm2_calls_leave_when_decided() {
    let spec = chatparse::shipped::spec("lfm2").unwrap().unwrap();
    // The conformance inputs with calls, and a made one (blocks joined across white space, a `)`
    // inside a string).
    let made = "<|tool_call_start|>[a(x=1), b(y=')')] <|tool_call_end|>\n<|tool_call_start|> \
                [c()]<|tool_call_end|><|im_end|>";
    // Calls of several parameters, as the LFM2 template's system prompt shows them.
    let several = "<|tool_call_start|>[get_weather(city='Paris', days=3, units='metric'), \
                   search(query='a, b', limit=5)]<|tool_call_end|><|im_end|>";
    // The start once `NAME(` is written; then each parameter but the last once the next one's
    // `, KEY=` has arrived (calls of one parameter send it when they are decided).
    let leave =
        calls_leave_when_decided(&spec, "lfm2", &[made, several], lfm2_decided_at, |input| {
            input.contains("days=3")
        });
    assert!(leave.checked > 1_000, "{} chunkings", leave.checked);
    assert!(leave.done_before_end >= 3);
    assert!(leave.open_fragments >= 2, "{}", leave.open_fragments);
}

/// What [`calls_leave_when_decided`] counted.
struct Leave {
    /// Chunkings checked.
    checked: usize,
    /// Calls complete before the output's last byte in one-byte feeds.
    done_before_end: usize,
    /// Argument fragments sent while their call was open, in one-byte feeds.
    open_fragments: usize,
}

/// The conformance inputs of `family` whose value has calls (the call count from transformers'
/// result) and the `made` inputs (the count from the one-shot parse), each at every split point
/// and in one-byte chunks: the deltas rebuild the one-shot message, and each call was complete
/// (its start and every argument fragment sent) no later than the chunk that brought what
/// `decided_at` says decides it; in one-byte feeds, that every call with arguments of an input
/// written as the sketch reads it (`sketched`) started before it was complete and sent argument
/// fragments while open. Prints the counts.
fn calls_leave_when_decided(
    spec: &Spec,
    family: &str,
    made: &[&str],
    decided_at: fn(&str) -> Vec<usize>,
    sketched: fn(&str) -> bool,
) -> Leave {
    use support::{Expect, Rng};
    let mut rng = Rng::new(2);
    let (mut checked, mut one_byte_calls, mut one_byte_fed, mut before_end, mut decided_before) =
        (0, 0, 0, 0, 0);
    let (mut open_fragments, mut started_open) = (0, 0);
    let mut inputs: Vec<(String, String, usize)> = Vec::new();
    for suite in load_suites() {
        if suite.shipped_name() != Some(family) {
            continue;
        }
        for case in &suite.cases {
            // A message the shipped name's completeness check refuses (text the schema would
            // drop; tests/checks.rs pins those cases) ends the stream with that error.
            if spec.parse(&case.input).is_err() {
                continue;
            }
            if let Expect::Value(reference) = &case.expect {
                if let Some(Value::Array(want)) = reference.get("tool_calls") {
                    inputs.push((case.name.clone(), case.input.clone(), want.len()));
                }
            }
        }
    }
    for (i, made) in made.iter().enumerate() {
        let calls = spec.parse(made).unwrap()["tool_calls"]
            .as_array()
            .unwrap()
            .len();
        inputs.push((format!("made {i}"), (*made).to_owned(), calls));
    }
    for (case_name, input, want) in &inputs {
        let input = input.as_str();
        let decided = decided_at(input);
        assert_eq!(decided.len(), *want, "{case_name}: oracle {decided:?}");
        for (n, cuts) in chunkings(input, &mut rng).into_iter().enumerate() {
            // `feed_cuts` checks the message against the one-shot one, and the deltas against
            // the message.
            let (calls, message) = feed_cuts(spec, None, input, &cuts);
            let what = format!("{case_name} cut at {:?}", &cuts[..cuts.len().min(3)]);
            let finals = message["tool_calls"].as_array().unwrap();
            assert_eq!(calls.len(), decided.len(), "{what}");
            let fed_by = |at: usize| *cuts.iter().find(|&&c| c >= at).unwrap();
            for (k, (call, last)) in calls.iter().zip(finals).enumerate() {
                // An output without an end token decides its last call only at its end.
                assert!(
                    decided[k] == input.len() || call.done_at() <= fed_by(decided[k]),
                    "{what}: call {k} complete with {} bytes fed, decided at {}",
                    call.done_at(),
                    decided[k]
                );
                if n == 0 {
                    one_byte_calls += 1;
                    one_byte_fed += usize::from(call.started_at != usize::MAX);
                    before_end += usize::from(call.done_at() < input.len());
                    decided_before += usize::from(decided[k] < input.len());
                    open_fragments += call.open_fragments();
                    let arguments = last["function"]["arguments"].as_str().unwrap();
                    let has_keys = arguments.contains(':');
                    let open = sketched(input) && has_keys;
                    if open {
                        assert!(
                            call.started_at < call.done_at(),
                            "{what}: call {k} started with {} bytes fed, complete with {}",
                            call.started_at,
                            call.done_at()
                        );
                    }
                    if open {
                        assert!(call.open_fragments() > 0, "{what}: call {k}");
                    }
                    started_open += usize::from(call.started_at < call.done_at());
                }
            }
            checked += 1;
        }
    }
    eprintln!(
        "{family}: in 1-byte feeds {one_byte_fed}/{one_byte_calls} calls start with a feed, \
         {started_open} before they are complete, {open_fragments} argument fragments sent \
         while their call was open; {before_end} calls complete before the output's last byte \
         ({decided_before} are decided before it); {checked} chunkings"
    );
    // Arguments may be whole before what follows decides the call.
    assert!(before_end >= decided_before);
    Leave {
        checked,
        done_before_end: before_end,
        open_fragments,
    }
}

/// For each call of a `functionary_v3_2` output, the input length that decides it, read with
/// serde_json and the template's `>>>NAME\n{…}`: the character after the next call's header
/// (a `>>>` and a name cut at the end of the output would end the calls before it), the end of
/// a `>>>all\n` after it, or the end token (an output without one decides its last call only at
/// its end).
fn functionary_decided_at(input: &str) -> Vec<usize> {
    let mut decided = Vec::new();
    let mut i = ws(input, 0);
    loop {
        i += usize::from(input[i..].starts_with(">>>")) * 3;
        let Some(newline) = input[i..].find('\n') else {
            return decided;
        };
        if input[i..i + newline].trim_end() == "all" {
            // Content: its calls start at the first `>>>NAME\n`.
            let Some(at) = input[i..].find(">>>") else {
                return decided;
            };
            i += at;
            continue;
        }
        let json = i + newline + 1;
        let mut values =
            serde_json::Deserializer::from_str(&input[json..]).into_iter::<serde_json::Value>();
        let Some(Ok(_)) = values.next() else {
            return decided;
        };
        let end = ws(input, json + values.byte_offset());
        let rest = &input[end..];
        if let Some(after) = rest.strip_prefix(">>>all\n") {
            decided.push(input.len() - after.len());
            return decided;
        } else if let Some(after) = rest.strip_prefix(">>>") {
            let header = after.find('\n').map(|n| end + 3 + n + 1);
            decided.push(header.map_or(input.len(), |h| (h + 1).min(input.len())));
            i = end;
        } else {
            let eot = rest.strip_prefix("<|eot_id|>").map(|_| end + 10);
            decided.push(eot.unwrap_or(input.len()));
            return decided;
        }
    }
}

/// Issue 16, `functionary_v3_2`: every call leaves the stream when the text after it decides it
/// (the next call's header and a character after it, `>>>all\n`, or the end token), not with the
/// final message.
#[test]
fn functionary_v3_2_calls_leave_when_decided() {
    let spec = chatparse::shipped::spec("functionary_v3_2")
        .unwrap()
        .unwrap();
    let made = [
        "a\n{\"x\": 1}>>>b\n{}>>>c\n{\"s\": \">>\"}<|eot_id|>",
        // The `>>>all\n` after the calls decides the last one (text after it would be refused:
        // the template writes the text before the calls).
        "all\nSure.>>>a\n{}\n>>>all\n<|eot_id|>",
        ">>>a\n{}>>>b\n{\"y\": [1]}<|eot_id|>",
    ];
    let leave = calls_leave_when_decided(
        &spec,
        "functionary_v3_2",
        &made,
        functionary_decided_at,
        |_| true,
    );
    assert!(leave.checked > 500, "{} chunkings", leave.checked);
    assert!(leave.done_before_end >= 3);
    assert!(leave.open_fragments > 100, "{}", leave.open_fragments);
}

thread_local! {
    /// How many streams [`stream_against_one_shot`] let fail for taking back what they sent, in
    /// this test's thread.
    static TAKEN_BACK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Feeds `input` cut at `cuts` ([`stream_chunked`]) and checks the result against the schema's
/// one-shot parse (the reference's behaviour, see the conformance suite): failing exactly when
/// the parse fails, else with the same calls. The one exception, where `twice` (the input writes
/// a call's name or a parameter twice): the stream fails with `StreamedCallChanged` rather than
/// take back what it sent. `None` when both fail.
fn stream_against_one_shot(
    spec: &Spec,
    input: &str,
    cuts: &[usize],
    twice: bool,
) -> Option<Chunked> {
    use chatparse::ParseErrorKind;
    let chunked = stream_chunked(spec, None, input, cuts);
    let reference = spec.schema().unwrap().parse(input);
    let what = &chunked.what;
    match (&chunked.streamed, &chunked.one_shot) {
        (Ok(_), Ok(_)) | (Err(_), Err(_)) => {}
        (Err(e), Ok(_)) if twice && matches!(e.kind, ParseErrorKind::StreamedCallChanged(_)) => {
            TAKEN_BACK.set(TAKEN_BACK.get() + 1);
            return None;
        }
        (streamed, one_feed) => panic!("{what}: streamed {streamed:?}, one feed {one_feed:?}"),
    }
    match (&chunked.streamed, &reference) {
        (Ok(message), Ok(parsed)) => {
            let calls = |v: &Value| -> Vec<(String, Value)> {
                v.get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        let f = &c["function"];
                        let arguments = match &f["arguments"] {
                            Value::String(s) => chatparse::value::from_str(s).unwrap(),
                            Value::Null => chatparse::json!({}),
                            other => other.clone(),
                        };
                        (f["name"].as_str().unwrap_or("").to_owned(), arguments)
                    })
                    .collect()
            };
            let (got, want) = (calls(message), calls(parsed));
            assert!(
                got.len() == want.len()
                    && got
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.0 == b.0 && chatparse::runtime::py::identical(&a.1, &b.1)),
                "{what}: streamed {got:?}, parsed {want:?}"
            );
            Some(chunked)
        }
        (Err(_), Err(_)) => None,
        (Err(e), Ok(_)) if twice && matches!(e.kind, ParseErrorKind::StreamedCallChanged(_)) => {
            None
        }
        (streamed, parsed) => panic!("{what}: streamed {streamed:?}, parsed {parsed:?}"),
    }
}

/// `lfm2` on adversarial outputs: soups of pythonic calls (strings holding `)`, `, x(`, `]`,
/// the block markers), separators, blocks the substitution joins, cut names, end tokens and
/// text, fed in random chunks (and inputs made to hit each rule, a byte at a time), checked
/// against the schema's one-shot parse as [`stream_against_one_shot`] does.
#[test]
fn lfm2_soups_stream_to_the_one_shot_parse() {
    use support::{random_cuts, Rng};
    const SOUPS: usize = 3000;
    let mut rng = Rng::new(1602);
    let spec = chatparse::shipped::spec("lfm2").unwrap().unwrap();
    let calls = [
        "f(a=1)",
        "g(s='x), y(')",
        "h(s=')', t=\"]\")",
        "k(s='<|tool_call_end|><|tool_call_start|>[')",
        "get_time()",
        "m.n-o(x=[1, (2)], y={\"k\": \")\"})",
        "p(q='a, b=c')",
        "bad",
    ];
    let pieces = [
        ", ",
        ",",
        " ,\n ",
        ")",
        "(",
        "]",
        "[",
        "x",
        "f(",
        ", g",
        LFM2_OPEN,
        LFM2_CLOSE,
        "<|im_end|>",
        "<|endoftext|>",
        "</think>",
        " ",
        "\n",
    ];
    let made = [
        "<|tool_call_start|>[a(x=1)]<|tool_call_end|><|tool_call_start|>[b(y='z')]<|tool_call_end|><|im_end|>",
        "<|tool_call_start|>[a(s=') , b(')]<|tool_call_end|><|im_end|>",
        "<|tool_call_start|>[a(x=1)]<|tool_call_end|> x<|im_end|>",
        "<|tool_call_start|>[a(x=1)] <|tool_call_end|>\n<|tool_call_start|> [ b()]<|tool_call_end|><|im_end|>",
        "<|tool_call_start|>a(x=1), b(y=2)<|im_end|>",
        "<|tool_call_start|>[a(x=1), 1b(y=2)]<|tool_call_end|><|im_end|>",
        "<|tool_call_start|>[a(x=1)), b(y=2)]<|tool_call_end|><|im_end|>",
    ];
    let (mut fed_calls, mut errors, mut open_fragments, mut twice_inputs) = (0, 0, 0, 0);
    for n in 0..SOUPS {
        let mut input = String::new();
        if let Some(made) = made.get(n) {
            input.push_str(made);
        } else {
            match rng.below(3) {
                0 => input.push_str("<think>Plan.</think>"),
                1 => input.push_str("Sure. "),
                _ => {}
            }
            if rng.below(2) == 0 {
                // Blocks as the template writes them, then maybe one more piece.
                for _ in 0..1 + rng.below(3) {
                    let list: Vec<&str> =
                        (0..1 + rng.below(3)).map(|_| calls[rng.below(7)]).collect();
                    input.push_str(&format!("{LFM2_OPEN}[{}]{LFM2_CLOSE}", list.join(", ")));
                }
                if rng.below(3) > 0 {
                    input.push_str(pieces[rng.below(pieces.len())]);
                }
            } else {
                input.push_str(LFM2_OPEN);
                for _ in 0..1 + rng.below(8) {
                    if rng.below(2) == 0 {
                        input.push_str(calls[rng.below(calls.len())]);
                    } else {
                        input.push_str(pieces[rng.below(pieces.len())]);
                    }
                }
            }
        }
        let cuts = if n < made.len() {
            support::char_boundaries(&input)[1..].to_vec()
        } else {
            random_cuts(&input, &mut rng)
        };
        let twice = lfm2_may_write_a_key_twice(&input);
        twice_inputs += usize::from(twice);
        match stream_against_one_shot(&spec, &input, &cuts, twice) {
            Some(chunked) => {
                fed_calls += chunked.fed_starts();
                open_fragments += chunked.open_fragments();
            }
            None => errors += 1,
        }
    }
    eprintln!(
        "lfm2 soups: {SOUPS}, {errors} errors, {fed_calls} calls sent by a feed, \
         {open_fragments} argument fragments sent while their call was open, {twice_inputs} \
         inputs that may write a key twice"
    );
    let taken_back = TAKEN_BACK.get();
    eprintln!("lfm2 soups: {taken_back} streams failed for a key written twice");
    assert!(fed_calls > 250, "{fed_calls} calls sent by a feed");
    assert!(
        open_fragments > 100,
        "{open_fragments} fragments while open"
    );
    assert!(
        taken_back < SOUPS / 20,
        "{taken_back} streams took back what they sent"
    );
}

/// Whether an `lfm2` output may write a parameter twice in one call: a key `KEY=` after `(` or
/// `,` (where the key-value pattern reads a key) comes twice anywhere in it. The soups glue
/// calls whose strings hold `)` into one call, whose keys then repeat; the check covers all of
/// the output's calls at once, so it also holds for some outputs that do not.
fn lfm2_may_write_a_key_twice(input: &str) -> bool {
    let mut keys: Vec<&str> = Vec::new();
    for (at, _) in input.match_indices(['(', ',']) {
        let rest = input[at + 1..].trim_start();
        let len = rest
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_alphanumeric()))
            })
            .map_or(rest.len(), |(i, _)| i);
        if len > 0 && rest[len..].trim_start().starts_with('=') {
            if keys.contains(&&rest[..len]) {
                return true;
            }
            keys.push(&rest[..len]);
        }
    }
    false
}

/// `functionary_v3_2` on adversarial outputs: soups of calls, `>>>` with names, `>>>all`
/// (followed by a newline or not), names cut at the end, `>>>` inside strings and content,
/// white space before separators, and end tokens, fed in random chunks (and inputs made to hit
/// each rule, a byte at a time), checked against the schema's one-shot parse as
/// [`stream_against_one_shot`] does.
#[test]
fn functionary_v3_2_soups_stream_to_the_one_shot_parse() {
    use support::{random_cuts, Rng};
    const SOUPS: usize = 3000;
    let mut rng = Rng::new(1632);
    let spec = chatparse::shipped::spec("functionary_v3_2")
        .unwrap()
        .unwrap();
    let calls = [
        "f\n{\"a\": 1}",
        "g\n{\"s\": \">>>all\\n\"}",
        "h \t\r\n{}",
        "k\n{\"s\": \">>>x\"}",
        "all\nSure.",
        "m\n{}\n\n",
    ];
    let pieces = [
        ">>>",
        ">>>all\n",
        ">>>all",
        ">>>all \r\n",
        ">>>al",
        ">>>x",
        ">>>x ",
        ">>>x>",
        "\n",
        " ",
        "<|eot_id|>",
        "all\n",
        "x",
        "{}",
        ">",
        ">>",
    ];
    let made = [
        "f\n{}>>>g\n{}>>>all\nDone.<|eot_id|>",
        "f\n{} \n>>>g\n{\"a\": 1}\n>>>h",
        "f\n{}>>>g",
        "f\n{}>>>g\n",
        "f\n{}>>>g\nx",
        "f\n{}>>>g>{}",
        "all\nHi>>> 1\n>>>f\n{}>>>all\n<|eot_id|>",
        ">>>f\n{}>>>all \t\r\nok",
    ];
    let (mut fed_calls, mut errors, mut open_fragments) = (0, 0, 0);
    for n in 0..SOUPS {
        let mut input = String::new();
        if let Some(made) = made.get(n) {
            input.push_str(made);
        } else {
            if rng.below(3) == 0 {
                input.push_str(["all\nSure.", ">>>all\nOk ", " "][rng.below(3)]);
            }
            for k in 0..1 + rng.below(6) {
                if k > 0 || !input.is_empty() {
                    input.push_str(">>>");
                }
                if rng.below(3) > 0 {
                    input.push_str(calls[rng.below(calls.len())]);
                } else {
                    input.push_str(pieces[rng.below(pieces.len())]);
                }
            }
            if rng.below(2) == 0 {
                input.push_str(pieces[rng.below(pieces.len())]);
            }
        }
        let cuts = if n < made.len() {
            support::char_boundaries(&input)[1..].to_vec()
        } else {
            random_cuts(&input, &mut rng)
        };
        match stream_against_one_shot(&spec, &input, &cuts, false) {
            Some(chunked) => {
                fed_calls += chunked.fed_starts();
                open_fragments += chunked.open_fragments();
            }
            None => errors += 1,
        }
    }
    eprintln!(
        "functionary_v3_2 soups: {SOUPS}, {errors} errors, {fed_calls} calls sent by a feed, \
         {open_fragments} argument fragments sent while their call was open"
    );
    assert!(fed_calls > 250, "{fed_calls} calls sent by a feed");
    assert!(
        open_fragments > 500,
        "{open_fragments} fragments while open"
    );
}

/// deepseek_v3_2's string values stream as they are written too. The call is rendered as
/// DeepSeek V3.2's chat template writes it (`<｜DSML｜parameter name="KEY" string="true">VALUE
/// </｜DSML｜parameter>`, a string value as is, parameters joined by `\n`); its schema quotes a
/// `string="true"` value without quotes, backslashes or control characters and reads the others
/// by `json.loads`, keeping the text when it is not JSON. A value starting with `u` (`use …`) is
/// text whatever follows, so each cut inside the second value must have sent everything of it so
/// far, escaped as JSON, whether or not the quoting applies to the value so far (it stops
/// applying at the value's first `\n`). The output starts with reasoning and `</think>`, as the
/// template's thinking turn does (before `</think>` the text may yet be reasoning, and is held).
#[test]
fn dsml_string_values_stream_as_they_are_written() {
    let spec = chatparse::shipped::spec("deepseek_v3_2").unwrap().unwrap();
    let content = "use std::io;\n\nfn main() {\n    println!(\"héllo\");\n}";
    let output = format!(
        "I'll write it.</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"write_file\">\n\
         <｜DSML｜parameter name=\"path\" string=\"true\">src/main.rs</｜DSML｜parameter>\n\
         <｜DSML｜parameter name=\"content\" string=\"true\">{content}</｜DSML｜parameter>\n\
         </｜DSML｜invoke>\n</｜DSML｜function_calls>"
    );
    let final_arguments = r#"{"path":"src/main.rs","content":"use std::io;\n\nfn main() {\n    println!(\"héllo\");\n}"}"#;
    let prompt = None;
    let message = parse_counter(&spec, &output, prompt).unwrap();
    assert_eq!(message["reasoning_content"], "I'll write it.");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        final_arguments
    );
    assert_value_streams(
        &spec,
        prompt,
        &output,
        content,
        r#"{"path":"src/main.rs","content":""#,
    );
}

/// deepseek_v3_2 on adversarial parameters: soups of `string="true"` and `string="false"`
/// parameters whose values hold what breaks them — a closing tag with a space in it (the value
/// then runs on to the next closing tag and swallows the next parameter's tag, which the
/// schema's `string="true"` rewrite can turn into `name="k">"v"` inside the value), parts of
/// tags, a parameter's tag, quotes, backslashes and line breaks — fed in random chunks (and
/// made inputs a character at a time), checked against the schema's one-shot parse as
/// [`stream_against_one_shot`] does: the stream never sends a value's text the rewrite changes
/// later. A key written twice may take back a value (`StreamedCallChanged`).
#[test]
fn dsml_soups_stream_to_the_one_shot_parse() {
    use support::{random_cuts, Rng};
    const SOUPS: usize = 3000;
    let mut rng = Rng::new(3232);
    let spec = chatparse::shipped::spec("deepseek_v3_2").unwrap().unwrap();
    let keys = ["a", "b", "c", "d", "g", "h", "i", "j"];
    let pieces = [
        "use it",
        "x",
        " ",
        "\n",
        "\"",
        "\\",
        "<",
        "<b>",
        "<｜DS",
        "<｜DSML｜parameter",
        "<｜DSML｜parameter name=\"e\" string=\"true\">",
        "<｜DSML｜parameter name=\"f\" string=\"false\">",
        "</｜DSML｜ parameter>",
        "</｜DSML｜param",
        "</ ｜DSML｜parameter>",
        "1",
        "[1, 2]",
    ];
    let made = [
        "<｜DSML｜parameter name=\"a\" string=\"true\">US</｜DSML｜ parameter>\n\
         <｜DSML｜parameter name=\"b\" string=\"true\">CNY</｜DSML｜parameter>\n",
        "<｜DSML｜parameter name=\"a\" string=\"true\">x<｜DSML｜parameter name=\"b\" \
         string=\"true\">y</｜DSML｜parameter>\n",
        "<｜DSML｜parameter name=\"a\" string=\"true\">x<｜DSML｜paramete</｜DSML｜parameter>\n",
    ];
    let (mut fed_calls, mut errors, mut open_fragments) = (0, 0, 0);
    for n in 0..SOUPS {
        let mut parameters = String::new();
        if let Some(made) = made.get(n) {
            parameters.push_str(made);
        } else {
            // Distinct keys: a key written twice comes only from a piece's tag.
            let first = rng.below(keys.len());
            for k in 0..1 + rng.below(3) {
                let key = keys[(first + k) % keys.len()];
                let string = ["true", "false"][rng.below(2)];
                parameters.push_str(&format!(
                    "<｜DSML｜parameter name=\"{key}\" string=\"{string}\">"
                ));
                for _ in 0..rng.below(5) {
                    parameters.push_str(pieces[rng.below(pieces.len())]);
                }
                parameters.push_str("</｜DSML｜parameter>\n");
            }
        }
        let input = format!(
            "Sure.</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n{parameters}\
             </｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>"
        );
        let twice = keys
            .iter()
            .chain(&["e", "f"])
            .any(|k| input.matches(&format!("name=\"{k}\"")).count() > 1);
        let cuts = if n < made.len() {
            support::char_boundaries(&input)[1..].to_vec()
        } else {
            random_cuts(&input, &mut rng)
        };
        match stream_against_one_shot(&spec, &input, &cuts, twice) {
            Some(chunked) => {
                fed_calls += chunked.fed_starts();
                open_fragments += chunked.open_fragments();
            }
            None => errors += 1,
        }
    }
    eprintln!(
        "deepseek_v3_2 soups: {SOUPS}, {errors} errors, {fed_calls} calls sent by a feed, \
         {open_fragments} argument fragments sent while their call was open"
    );
    let taken_back = TAKEN_BACK.get();
    eprintln!("deepseek_v3_2 soups: {taken_back} streams failed for a key written twice");
    assert!(
        taken_back < SOUPS / 20,
        "{taken_back} streams took back what they sent"
    );
    assert!(fed_calls > 1000, "{fed_calls} calls sent by a feed");
    assert!(
        open_fragments > 1000,
        "{open_fragments} fragments while open"
    );
}

/// Cohere's action list is one region holding every call (`<|START_ACTION|>[` … `]<|END_ACTION|>`,
/// each call `{"tool_call_id": "N", "tool_name": "NAME", "parameters": {…}}` as the Command R7B
/// template writes it, one per line after four spaces, `,` between). Fed a byte at a time: each
/// call starts, with its written id, once its name's string has closed, its arguments stream as
/// the model writes them (everything but the last byte is out before the object closes), and the
/// deltas rebuild the final message's calls.
#[test]
fn cohere_action_list_calls_stream_one_after_another() {
    let spec = chatparse::shipped::spec("cohere_command_r7b")
        .unwrap()
        .unwrap();
    let calls = [
        ("0", "get_weather", r#"{"city": "Paris", "days": [1, 2]}"#),
        ("1", "get_time", r#"{"zone": "Europe/Paris"}"#),
    ];
    let items: Vec<String> = calls
        .iter()
        .map(|(id, name, args)| {
            format!(
                r#"    {{"tool_call_id": "{id}", "tool_name": "{name}", "parameters": {args}}}"#
            )
        })
        .collect();
    let output = format!(
        "<|START_THINKING|>Two lookups.<|END_THINKING|><|START_ACTION|>[\n{}\n]<|END_ACTION|>",
        items.join(",\n")
    );
    let message = parse_counter(&spec, &output, None).unwrap();
    let mut stream = counter_stream(&spec, None);
    // (id, name, arguments sent, output fed when the start went out)
    let mut sent: Vec<(String, String, String, usize)> = Vec::new();
    let mut fed = 0;
    for (i, c) in output.char_indices() {
        fed = i + c.len_utf8();
        stream
            .feed_with(&output[i..fed], &mut |delta| match delta {
                Delta::CallStart { index, id, name } => {
                    assert_eq!(index, sent.len());
                    sent.push((id.to_owned(), name.to_owned(), String::new(), fed));
                }
                Delta::CallArguments { index, arguments } => sent[index].2.push_str(arguments),
                _ => {}
            })
            .unwrap();
        for (k, (_, _, args)) in calls.iter().enumerate() {
            // Once the call's arguments are written but their last byte, all of that is out.
            let at = output.find(args).unwrap();
            if fed == at + args.len() - 1 {
                assert_eq!(sent[k].2, args[..args.len() - 1], "call {k}");
            }
        }
    }
    assert_eq!(fed, output.len());
    let (_, streamed) = stream.finish().unwrap();
    assert_eq!(streamed, message);
    for (k, (id, name, args)) in calls.iter().enumerate() {
        let name_closed = output.find(&format!("\"{name}\"")).unwrap() + name.len() + 2;
        assert_eq!(sent[k].0, *id, "the written id");
        assert_eq!(sent[k].1, *name);
        assert_eq!(sent[k].2, *args);
        assert!(sent[k].3 <= name_closed + 1, "call {k} started late");
        let final_call = &message["tool_calls"][k];
        assert_eq!(final_call["id"], *id);
        assert_eq!(final_call["function"]["arguments"], *args);
    }
}

/// `lfm2`'s pythonic calls build their arguments one parameter at a time: the schema's
/// key-value pattern ends a value at the first `, KEY=` after it, so once that has arrived the
/// parameters before it are whole, and their compact JSON goes out (a quoted string becomes a
/// JSON string, `3` a number, as the one-shot conversion has them). The last parameter goes out
/// when the call is decided.
#[test]
fn lfm2_parameters_stream_one_at_a_time() {
    let spec = chatparse::shipped::spec("lfm2").unwrap().unwrap();
    let output = "<|tool_call_start|>[get_weather(city='Paris', days=3, units='metric')]\
                  <|tool_call_end|><|im_end|>";
    let message = parse_counter(&spec, output, None).unwrap();
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        r#"{"city":"Paris","days":3,"units":"metric"}"#
    );
    let cut_after = |s: &str| output.find(s).unwrap() + s.len();
    for (fed, sent) in [
        (cut_after("get_weather("), ""),
        (cut_after("'Paris', day"), ""),
        (cut_after("'Paris', days="), r#"{"city":"Paris""#),
        (cut_after("days=3, units"), r#"{"city":"Paris""#),
        (cut_after("days=3, units="), r#"{"city":"Paris","days":3"#),
        (cut_after("'metric')"), r#"{"city":"Paris","days":3"#),
    ] {
        let seen = feed_prefix(&spec, None, &output[..fed]);
        assert_eq!(
            seen.start.as_ref().map(|(_, name)| name.as_str()),
            Some("get_weather")
        );
        assert_eq!(seen.arguments, sent, "after {:?}", &output[..fed]);
    }
}

/// A pythonic string value cannot stream character by character: what its first characters are
/// depends on how the value ends. The schema turns `'…'` into the text between the quotes only
/// when the value ends with its closing quote; without one, the quote is part of the string.
/// transformers 5.10.4's `recursive_parse` with `schemas/lfm2.json` gives
/// `f(x='abc', y=1)` → `{"x": "abc", "y": 1}` and `f(x='abc, y=1)` → `{"x": "'abc", "y": 1}`,
/// and `f(x='{"a": 1}')` → `{"x": {"a": 1}}` (a quoted value may hold JSON). So until `, y=`
/// (or the call's end) decides the value, none of it goes out: both outputs send the same
/// prefix and must agree with both final messages.
#[test]
fn lfm2_a_quoted_value_waits_for_its_end() {
    let spec = chatparse::shipped::spec("lfm2").unwrap().unwrap();
    for (call, arguments) in [
        ("f(x='abc', y=1)", r#"{"x":"abc","y":1}"#),
        ("f(x='abc, y=1)", r#"{"x":"'abc","y":1}"#),
        (r#"f(x='{"a": 1}')"#, r#"{"x":{"a":1}}"#),
    ] {
        let output = format!("<|tool_call_start|>[{call}]<|tool_call_end|><|im_end|>");
        let message = parse_counter(&spec, &output, None).unwrap();
        assert_eq!(message["tool_calls"][0]["function"]["arguments"], arguments);
        let open_value = output.find("x='").unwrap() + 4;
        for fed in open_value..output.find(", y=").unwrap_or(output.find(")]").unwrap()) {
            let seen = feed_prefix(&spec, None, &output[..fed]);
            assert_eq!(seen.arguments, "", "after {:?}", &output[..fed]);
        }
        let seen = feed_prefix(&spec, None, &output);
        assert_eq!(seen.arguments, arguments);
    }
}

//! The OpenAI chat-completion shape (`chatparse::runtime::openai`). Every expected value comes from
//! the reference corpora (`tests/conformance/expected/`, transformers 5.10.4;
//! `tests/streaming/expected/`, transformers 5.23.0) and from the formats themselves (which
//! families write their arguments as JSON, which carry ids), never from our own output.

mod support;

use chatparse::runtime::openai::{
    self, to_message, CounterIds, DeltaStream, IdPolicy, Options, RandomIds, ReasoningKey,
};
use chatparse::runtime::py::json::loads;
use chatparse::runtime::Spec;
use chatparse::{Map, Value};
use proptest::prelude::*;
use support::{load_suites, preview, repo_root, same_value, Expect};

/// Families whose calls are `{"name": …, "arguments": …}` objects in tags, whose start and
/// arguments stream before the call closes.
const JSON_OBJECT_CALLS: &[&str] = &["hermes", "qwen3", "smollm3", "ernie4_5"];

/// Families whose models write the arguments as something other than one JSON text: XML
/// parameters (qwen3_coder, qwen3_5, glm4_5, minimax_m2, seed_oss, deepseek_v3_2's DSML) and
/// Gemma 4's dialect (bare keys, `<|"|>` strings), pythonic calls (lfm2). Their `arguments` are
/// compact JSON.
const NON_JSON_ARGUMENTS: &[&str] = &[
    "lfm2",
    "qwen3_coder",
    "qwen3_5",
    "glm4_5",
    "minimax_m2",
    "seed_oss",
    "deepseek_v3_2",
    "gemma4",
];

/// `openai::parse` with default options and counter ids (the tests' deterministic ids).
fn parse_counted(
    spec: &Spec,
    input: &str,
    prefix: Option<&str>,
    tools: Option<&[Value]>,
) -> Result<Value, openai::OpenAiError> {
    openai::parse(
        spec,
        input,
        prefix,
        tools,
        Options::default(),
        Box::new(CounterIds::default()),
    )
}

/// A delta stream with default options and counter ids, to compare with [`parse_counted`].
fn deltas_counted<'s>(spec: &'s Spec, prefix: Option<&str>) -> DeltaStream<'s> {
    DeltaStream::from_spec(
        spec,
        prefix,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap()
}

/// The parts of a reference message, read by the field names the families use.
struct Reference {
    content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<(Option<String>, String, Value)>,
}

fn reference(message: &Value) -> Reference {
    let obj = message.as_object().cloned().unwrap_or_default();
    let text = |v: &Value| match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let reasoning = ["reasoning_content", "thinking", "reasoning"]
        .iter()
        .find_map(|k| obj.get(*k))
        .and_then(text);
    let calls = match obj.get("tool_calls") {
        Some(Value::Array(calls)) => calls
            .iter()
            .map(|c| {
                let f = &c["function"];
                (
                    // The call's id, or one the schema passed through into the function.
                    c.get("id")
                        .or_else(|| f.get("id"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    f["name"].as_str().unwrap().to_owned(),
                    // A model that wrote `parameters` (Llama 3's key) for `arguments`.
                    f.get("arguments")
                        .or_else(|| f.get("parameters"))
                        .cloned()
                        .unwrap_or(Value::Null),
                )
            })
            .collect(),
        Some(call @ Value::Object(_)) => vec![(
            None,
            call["function"]["name"].as_str().unwrap().to_owned(),
            call["function"]["arguments"].clone(),
        )],
        _ => Vec::new(),
    };
    Reference {
        content: obj.get("content").and_then(text),
        reasoning,
        calls,
    }
}

/// The parsed value of an `arguments` text (absent arguments are `{}`).
fn decoded(arguments: &str) -> Value {
    loads(arguments).unwrap_or_else(|e| panic!("arguments {arguments:?} are not JSON: {e}"))
}

fn args_of(reference: &Value) -> Value {
    match reference {
        Value::Null => Value::Object(Map::new()),
        Value::String(s) => loads(s).unwrap_or_else(|_| reference.clone()),
        other => other.clone(),
    }
}

/// Checks an OpenAI message against the reference message it was made from.
/// `typed`: the tools' schemas may have converted argument types, so the model's text no longer
/// decodes to the arguments and compact JSON is expected where it changed.
fn check_message(
    family: &str,
    case: &str,
    raw: &str,
    reference: &Reference,
    message: &Value,
    typed: bool,
    from_spec: bool,
) {
    let at = format!("{family}/{case}");
    let keys: Vec<&str> = message
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys[..2], ["role", "content"], "{at}: {message}");
    assert_eq!(message["role"], "assistant", "{at}");
    assert_eq!(
        message["content"].as_str().map(str::to_owned),
        reference.content,
        "{at}: content"
    );
    assert_eq!(
        message
            .get("reasoning_content")
            .and_then(Value::as_str)
            .map(str::to_owned),
        reference.reasoning,
        "{at}: reasoning"
    );
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    assert_eq!(calls.len(), reference.calls.len(), "{at}: calls {message}");
    for (i, (call, (id_ref, name, args))) in calls.iter().zip(&reference.calls).enumerate() {
        assert_eq!(call["type"], "function", "{at}");
        assert_eq!(call["function"]["name"], name.as_str(), "{at}");
        let arguments = call["function"]["arguments"].as_str().unwrap();
        assert!(
            same_value(&decoded(arguments), &args_of(args)),
            "{at}: call {i}: {arguments} is not {args}"
        );
        // Non-ASCII is never escaped by us: a `\u` escape is the model's own.
        if arguments.contains("\\u") {
            assert!(
                raw.contains(arguments),
                "{at}: escaped non-ASCII {arguments}"
            );
        }
        let compact = args_of(args).to_string();
        if args.is_null() || (args_of(args) == chatparse::json!({}) && !raw.contains("{}")) {
            // The model wrote no arguments.
            assert_eq!(arguments, "{}", "{at}: absent arguments");
        } else if NON_JSON_ARGUMENTS.contains(&family) || args.is_string() {
            assert_eq!(
                arguments,
                args_of(args).to_string(),
                "{at}: compact JSON expected"
            );
        } else if !(typed && arguments == compact.as_str()) {
            assert!(
                raw.contains(arguments),
                "{at}: call {i}: {arguments} is not the model's text {}",
                preview(raw)
            );
        }
        let id = call["id"].as_str().unwrap();
        // Ids the model wrote in a JSON call list whose schema drops them (Cohere's
        // `tool_call_id`, an `id` in Apriel's list): kept where the call's arguments were found
        // in the output, and, by a stream, a Cohere call's id in any case (the stream reads it
        // from the call's head, before its name).
        let head_id = family == "cohere_command_r7b" && from_spec;
        let written = (head_id || raw.contains(arguments))
            .then(|| written_ids(family, raw).get(i).cloned())
            .flatten()
            .flatten();
        // Hermes-style calls (`{"name": …, "arguments": …}` in `<tool_call>`, as the Hermes, Qwen3,
        // SmolLM3 and ERNIE templates write them) carry no id in their format: an `id` key the
        // model adds is not the format's, and it comes after the arguments, too late for a call
        // whose start streams before it closes. Their ids are the policy's.
        // (`to_message` has no spec, so it cannot know the format: it keeps such an id.)
        let id_ref = if JSON_OBJECT_CALLS.contains(&family) && from_spec {
            None
        } else {
            id_ref.clone()
        };
        match id_ref.or(written) {
            Some(own) => assert_eq!(id, own, "{at}: the model's own id is kept"),
            None => assert_eq!(id, format!("call_{i}"), "{at}: the policy's id"),
        }
    }
}
/// The ids written in the JSON call list of the families whose list items may carry one:
/// Cohere's action block (`<|START_ACTION|>[{"tool_call_id": …}]`), Apriel's
/// `<tool_calls>[{…, "id": …}]`.
fn written_ids(family: &str, raw: &str) -> Vec<Option<String>> {
    let (open, close, key) = match family {
        "cohere_command_r7b" => ("<|START_ACTION|>", "<|END_ACTION|>", "tool_call_id"),
        "apriel" => ("<tool_calls>", "</tool_calls>", "id"),
        _ => return Vec::new(),
    };
    let Some(start) = raw.find(open) else {
        return Vec::new();
    };
    let body = &raw[start + open.len()..];
    let body = &body[..body.find(close).unwrap_or(body.len())];
    let Ok(Value::Array(calls)) = chatparse::value::from_str(body) else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|c| c.get(key).and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Every shipped x-regex schema, every reference case with a value: the reference message as an
/// OpenAI message, with the model's argument text, ids and reasoning key.
#[test]
fn every_shipped_schema_corpus_case_converts() {
    let mut checked = 0;
    let mut families = 0;
    for suite in load_suites() {
        let Some(family) = suite.shipped_name() else {
            continue;
        };
        families += 1;
        for case in &suite.cases {
            let Expect::Value(value) = &case.expect else {
                continue;
            };
            let message = to_message(
                value,
                Some(&case.input),
                &Options::default(),
                &mut CounterIds::default(),
            );
            check_message(
                family,
                &case.name,
                &case.input,
                &reference(value),
                &message,
                false,
                false,
            );

            // normalize: every arguments is compact JSON; `reasoning`/both keys.
            let options = Options {
                reasoning: ReasoningKey::Both,
                normalize_arguments: true,
                ..Options::default()
            };
            let normalized = to_message(value, None, &options, &mut CounterIds::default());
            assert_eq!(
                normalized["reasoning_content"], normalized["reasoning"],
                "{family}/{}",
                case.name
            );
            for call in normalized["tool_calls"].as_array().into_iter().flatten() {
                let arguments = call["function"]["arguments"].as_str().unwrap();
                assert_eq!(arguments, decoded(arguments).to_string(), "{family}");
            }
            let reasoning_only = to_message(
                value,
                None,
                &Options {
                    reasoning: ReasoningKey::Reasoning,
                    ..Options::default()
                },
                &mut CounterIds::default(),
            );
            assert!(reasoning_only.get("reasoning_content").is_none());
            assert_eq!(
                reasoning_only.get("reasoning"),
                message.get("reasoning_content")
            );
            checked += 1;
        }
    }
    assert_eq!(families, 28, "every shipped schema has a corpus");
    assert!(checked > 500, "{checked}");
}

/// The ids the formats carry: Kimi's `functions.NAME:IDX` and Mistral's 9 characters, kept.
#[test]
fn the_models_own_ids_are_kept() {
    for (family, file, ids) in [
        (
            "kimi_k2",
            "examples/kimi_k2/tool_calls.txt",
            &[
                "functions.web_search:0",
                "functions.web_search:1",
                "functions.get_time:2",
            ][..],
        ),
        (
            "mistral_nemo",
            "examples/mistral_nemo/tool_calls.txt",
            &["Ab12Cd34E", "Fg56Hi78J"][..],
        ),
        (
            "mistral_small",
            "examples/mistral_small/with_call_id.txt",
            &["a8Kd02LmQ"][..],
        ),
        (
            "cohere_command_r7b",
            "examples/cohere_command_r7b/tool_calls.txt",
            &["0", "1", "2"][..],
        ),
    ] {
        let raw = std::fs::read_to_string(repo_root().join(file)).unwrap();
        assert!(ids.iter().all(|id| raw.contains(id)), "{file}");
        let spec = Spec::from(chatparse::shipped::schema(family).unwrap());
        let message = openai::parse(
            &spec,
            &raw,
            None,
            None,
            Options::default(),
            Box::new(CounterIds::default()),
        )
        .unwrap();
        let got: Vec<&str> = message["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(got, ids, "{family}");
    }
}

#[test]
fn id_policies() {
    let mut random = RandomIds::new();
    let a = random.next_id("f", 0);
    let b = random.next_id("f", 1);
    assert_ne!(a, b);
    for id in [&a, &b] {
        assert_eq!(id.len(), 29);
        assert!(id.starts_with("call_"));
        assert!(id[5..].bytes().all(|c| c.is_ascii_alphanumeric()));
    }
    assert_ne!(
        RandomIds::new().next_id("f", 0),
        RandomIds::new().next_id("f", 0)
    );
    assert_eq!(
        RandomIds::with_seed(7).next_id("f", 0),
        RandomIds::with_seed(7).next_id("f", 0)
    );
    let mut named = |name: &str, index: usize| format!("{name}-{index}");
    let message = to_message(
        &chatparse::json!({"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]}),
        None,
        &Options::default(),
        &mut named,
    );
    assert_eq!(message["tool_calls"][0]["id"], "f-0");
    assert_eq!(message["tool_calls"][0]["function"]["arguments"], "{}");
}

/// The model's JSON text is found even when the same JSON appears earlier with other spacing,
/// and a value the spec changed (types from the tools) is written compactly.
#[test]
fn argument_text_is_the_models_or_compact() {
    let parsed = chatparse::json!({"tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
        {"type": "function", "function": {"name": "g", "arguments": {"city": "Zürich", "days": 3}}}
    ]});
    let raw = r#"think {"a":1} <call>{"a": 1}</call><call>{ "a" : 1 }</call><call>{"city": "Z\u00fcrich", "days": "3"}</call>"#;
    let message = to_message(
        &parsed,
        Some(raw),
        &Options::default(),
        &mut CounterIds::default(),
    );
    let args: Vec<&str> = message["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["function"]["arguments"].as_str().unwrap())
        .collect();
    // The first match in order: `{"a":1}` in the reasoning is the same JSON, so a one-shot parse
    // without regions can take it; what matters is that the text decodes to the call's value.
    assert_eq!(args[0], r#"{"a":1}"#);
    assert_eq!(args[1], r#"{"a": 1}"#);
    assert_eq!(args[2], r#"{"city":"Zürich","days":3}"#);
}

// ---------------------------------------------------------------------------------------------
// Streaming.

/// What the deltas say, rebuilt independently of the adapter.
#[derive(Debug, Default)]
struct Rebuilt {
    content: String,
    reasoning: String,
    /// (id, name, arguments)
    calls: Vec<(String, String, String)>,
    finish_reason: String,
}

fn rebuild(chunks: &[Value], at: &str) -> Rebuilt {
    let mut out = Rebuilt::default();
    assert!(chunks.len() >= 2, "{at}");
    assert_eq!(
        chunks[0],
        chatparse::json!({"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}),
        "{at}"
    );
    for (i, chunk) in chunks.iter().enumerate() {
        assert_eq!(chunk["index"], 0, "{at}");
        let last = i + 1 == chunks.len();
        assert_eq!(chunk["finish_reason"].is_null(), !last, "{at}: {chunk}");
        let delta = chunk["delta"].as_object().unwrap();
        if last {
            assert!(delta.is_empty(), "{at}");
            out.finish_reason = chunk["finish_reason"].as_str().unwrap().to_owned();
        }
        if i > 0 {
            assert!(delta.get("role").is_none(), "{at}: role once");
        }
        if let Some(t) = delta.get("content") {
            let t = t.as_str().unwrap();
            assert!(!t.is_empty(), "{at}: empty delta");
            out.content.push_str(t);
        }
        if let Some(t) = delta.get("reasoning_content") {
            out.reasoning.push_str(t.as_str().unwrap());
        }
        if let Some(calls) = delta.get("tool_calls") {
            for call in calls.as_array().unwrap() {
                let index = call["index"].as_u64().unwrap() as usize;
                if index == out.calls.len() {
                    // The first delta of a call: id, type and the whole name, once.
                    let id = call["id"].as_str().expect("id in the first delta");
                    assert_eq!(call["type"], "function", "{at}");
                    let name = call["function"]["name"].as_str().unwrap();
                    assert!(!name.is_empty(), "{at}");
                    let arguments = call["function"]["arguments"].as_str().unwrap_or("");
                    out.calls
                        .push((id.to_owned(), name.to_owned(), arguments.to_owned()));
                } else {
                    assert!(index + 1 == out.calls.len(), "{at}: calls in order");
                    assert!(call.get("id").is_none(), "{at}: id once");
                    assert!(call.get("type").is_none(), "{at}: type once");
                    assert!(call["function"].get("name").is_none(), "{at}: name once");
                    out.calls[index]
                        .2
                        .push_str(call["function"]["arguments"].as_str().unwrap());
                }
            }
        }
    }
    out
}

/// The deltas rebuild `message` exactly.
fn check_deltas(chunks: &[Value], message: &Value, at: &str) {
    let r = rebuild(chunks, at);
    assert_eq!(
        r.content,
        message["content"].as_str().unwrap_or(""),
        "{at}: content deltas"
    );
    assert_eq!(
        r.reasoning,
        message
            .get("reasoning_content")
            .and_then(Value::as_str)
            .unwrap_or(""),
        "{at}: reasoning deltas"
    );
    let calls: Vec<(String, String, String)> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["function"]["name"].as_str().unwrap().to_owned(),
                c["function"]["arguments"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(r.calls, calls, "{at}: calls");
    let reason = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    assert_eq!(r.finish_reason, reason, "{at}");
}

/// A spec that streams today, with reference cases: (input, prefix, tools, message or error).
struct StreamCase {
    name: String,
    input: String,
    prefix: Option<String>,
    tools: Option<Vec<Value>>,
    message: Option<Value>,
}

struct Streamable {
    name: String,
    spec: Spec,
    family: String,
    cases: Vec<StreamCase>,
}

fn streamables() -> Vec<Streamable> {
    let mut out = Vec::new();
    // The streaming reference corpus: the shipped templates and the edge templates.
    let dir = repo_root().join("tests/streaming/expected");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| !p.ends_with("invalid_templates.json"))
        .collect();
    paths.sort();
    for p in paths {
        let doc: Value = chatparse::value::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let spec = Spec::from_json_str(&doc["template"].to_string()).unwrap();
        let cases = doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let outcome = &c["chunkings"][0]["outcome"];
                let tools = c
                    .get("tools")
                    .and_then(Value::as_array)
                    .filter(|t| !t.is_empty())
                    .cloned();
                StreamCase {
                    name: c["name"].as_str().unwrap().to_owned(),
                    input: c["input"].as_str().unwrap().to_owned(),
                    prefix: c["prefix"]
                        .as_str()
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned),
                    tools,
                    message: outcome.get("message").cloned(),
                }
            })
            .collect();
        out.push(Streamable {
            family: name.clone(),
            name,
            spec,
            cases,
        });
    }
    // The x-regex schemas that stream, on their conformance corpus.
    for suite in load_suites() {
        let Some(family) = suite.shipped_name() else {
            continue;
        };
        // A shipped family streams with its stream profile (every shipped name streams).
        let spec = match chatparse::shipped::spec(family) {
            Some(spec) => spec.unwrap(),
            _ => Spec::from(suite.load_schema().unwrap()),
        };
        if spec.streamable().is_err() {
            continue;
        }
        // The family's completeness check refuses what its schema would drop without a word,
        // where the reference returns a message.
        let check = spec.schema().and_then(|s| s.check());
        let cases = suite
            .cases
            .iter()
            .map(|c| StreamCase {
                name: c.name.clone(),
                input: c.input.clone(),
                prefix: None,
                tools: None,
                message: match &c.expect {
                    Expect::Value(_)
                        if check.is_some_and(|k| {
                            !k.unread(spec.schema().unwrap(), &c.input).is_empty()
                        }) =>
                    {
                        None
                    }
                    Expect::Value(v) => Some(v.clone()),
                    _ => None,
                },
            })
            .collect();
        out.push(Streamable {
            name: format!("schema {family}"),
            family: family.to_owned(),
            spec,
            cases,
        });
    }
    out
}

/// Runs one chunking: the chunk objects and the final message, or the error.
fn run_chunks(
    s: &Streamable,
    case: &StreamCase,
    chunks: &[&str],
) -> Result<(Vec<Value>, Value), String> {
    run_chunks_with(s, case, chunks, Options::default())
}

fn run_chunks_with(
    s: &Streamable,
    case: &StreamCase,
    chunks: &[&str],
    options: Options,
) -> Result<(Vec<Value>, Value), String> {
    let mut stream = DeltaStream::from_spec(
        &s.spec,
        case.prefix.as_deref(),
        case.tools.as_deref(),
        options,
        Box::new(CounterIds::default()),
    )
    .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(stream.feed(chunk).map_err(|e| e.to_string())?);
    }
    let (last, message) = stream.finish().map_err(|e| e.to_string())?;
    out.extend(last);
    Ok((out, message))
}

/// Whether the output opens a content or reasoning region a second time (text after the
/// end-of-turn delimiter: the reference's message keeps the last region).
fn rewrites_a_text_field(s: &Streamable, case: &StreamCase) -> bool {
    use chatparse::runtime::stream::Event;
    let Ok(mut stream) = s.spec.stream(case.prefix.as_deref(), case.tools.as_deref()) else {
        return false;
    };
    let is_text = |f: &str| {
        matches!(
            f,
            "content" | "reasoning_content" | "thinking" | "reasoning"
        )
    };
    // The fields the prompt left open continue in the output; regions it closed are not output.
    let mut open_at_start: Vec<String> = Vec::new();
    stream.initial_events_with(&mut |e| match e {
        Event::RegionOpen { field } if is_text(field) => open_at_start.push(field.to_owned()),
        Event::RegionClose { field, .. } => open_at_start.retain(|f| f != field),
        _ => {}
    });
    let mut opens = open_at_start;
    let mut count = |e: Event<'_>| {
        if let Event::RegionOpen { field } = e {
            if is_text(field) {
                opens.push(field.to_owned());
            }
        }
    };
    let _ = stream.feed_with(&case.input, &mut count);
    let _ = stream.finish_with(&mut count);
    let n = opens.len();
    opens.sort();
    opens.dedup();
    opens.len() != n
}

fn boundaries(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect()
}

/// The reference cases that write a parameter twice (the final object keeps the last value): a
/// stream that sent the first value cannot take it back, so its strict stream fails with
/// `StreamedCallChanged` unless `Options::arguments_at_close` holds the arguments to the close.
/// No template writes a parameter twice.
const REPEATED_PARAMETERS: &[&str] = &["duplicate_parameter_last_wins", "duplicate_key_last_wins"];

/// Checks one chunking against the one-shot OpenAI message.
fn check_chunking(s: &Streamable, case: &StreamCase, chunks: &[&str], one_shot: &Value) {
    let twice = REPEATED_PARAMETERS.contains(&case.name.as_str());
    check_chunking_twice(s, case, chunks, one_shot, twice);
}

/// [`check_chunking`], where `twice` says whether the output writes a parameter twice in a call
/// (then the strict stream may fail with `StreamedCallChanged`, and `arguments_at_close` must
/// rebuild the message).
fn check_chunking_twice(
    s: &Streamable,
    case: &StreamCase,
    chunks: &[&str],
    one_shot: &Value,
    twice: bool,
) {
    let at = format!("{}/{} {:?}", s.name, case.name, chunks);
    let options = Options::default();
    match run_chunks_with(s, case, chunks, options) {
        Ok((deltas, message)) => {
            assert_eq!(&message, one_shot, "{at}: streamed message differs");
            check_deltas(&deltas, &message, &at);
        }
        Err(e) if twice && e.contains("its arguments changed after they were sent") => {
            let options = Options {
                arguments_at_close: true,
                ..options
            };
            let (deltas, message) =
                run_chunks_with(s, case, chunks, options).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(&message, one_shot, "{at}: streamed message differs");
            check_deltas(&deltas, &message, &at);
        }
        // A template field written a second time (after the end-of-turn delimiter): the
        // reference keeps the last region, and the deltas had sent the first's text.
        Err(e) if e.contains("streamed text changed") && rewrites_a_text_field(s, case) => {}
        Err(e) => panic!("{at}: {e}"),
    }
}

/// Every spec that streams today, every reference case: the one-shot OpenAI message matches the
/// reference message, and every split point (inputs up to 400 bytes), 1-character chunks and
/// seeded random chunkings give deltas that rebuild exactly that message.
#[test]
fn streamed_deltas_rebuild_the_message_for_every_chunking() {
    let mut chunkings = 0usize;
    let mut cases = 0usize;
    let mut specs = 0usize;
    let mut rewritten = 0usize;
    for s in streamables() {
        specs += 1;
        for case in &s.cases {
            let one_shot = parse_counted(
                &s.spec,
                &case.input,
                case.prefix.as_deref(),
                case.tools.as_deref(),
            );
            let Some(expected) = &case.message else {
                // The reference raises: so do we, and no chunking panics.
                assert!(
                    one_shot.is_err(),
                    "{}/{}: reference raises",
                    s.name,
                    case.name
                );
                let b = boundaries(&case.input);
                let chars: Vec<&str> = b.windows(2).map(|w| &case.input[w[0]..w[1]]).collect();
                assert!(run_chunks(&s, case, &chars).is_err());
                continue;
            };
            cases += 1;
            if rewrites_a_text_field(&s, case) {
                rewritten += 1;
            }
            let one_shot = one_shot.unwrap_or_else(|e| panic!("{}/{}: {e}", s.name, case.name));
            check_message(
                &s.family,
                &case.name,
                &format!("{}{}", case.prefix.as_deref().unwrap_or(""), case.input),
                &reference(expected),
                &one_shot,
                case.tools.is_some(),
                true,
            );
            let text = case.input.as_str();
            let b = boundaries(text);
            if text.len() <= 400 {
                for &at in &b {
                    check_chunking(&s, case, &[&text[..at], &text[at..]], &one_shot);
                    chunkings += 1;
                }
            }
            let chars: Vec<&str> = b.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            check_chunking(&s, case, &chars, &one_shot);
            let mut rng = 0x5eed_u64 ^ (text.len() as u64);
            for _ in 0..8 {
                let mut pieces = Vec::new();
                let mut at = 0;
                while at + 1 < b.len() {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let step = 1 + (rng % [3, 17, 129][(rng >> 40) as usize % 3]) as usize;
                    let next = (at + step).min(b.len() - 1);
                    pieces.push(&text[b[at]..b[next]]);
                    at = next;
                }
                check_chunking(&s, case, &pieces, &one_shot);
            }
            chunkings += 9;
        }
    }
    // The reference corpus templates and every shipped name (issue 16: all 28 stream).
    assert!(specs >= 10 + 28, "{specs}");
    eprintln!(
        "{specs} specs, {cases} cases ({rewritten} write a text field twice), {chunkings} chunkings"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random chunkings of random cases of every streaming spec.
    #[test]
    fn random_chunkings_rebuild_the_message(pick in any::<u64>(), cuts in proptest::collection::vec(any::<u16>(), 0..40)) {
        thread_local! {
            static ALL: Vec<Streamable> = streamables();
        }
        ALL.with(|all| {
            let s = &all[(pick % all.len() as u64) as usize];
            let case = &s.cases[((pick >> 16) % s.cases.len() as u64) as usize];
            if case.message.is_none() {
                return;
            }
            let one_shot = parse_counted(&s.spec, &case.input, case.prefix.as_deref(), case.tools.as_deref()).unwrap();
            let b = boundaries(&case.input);
            let mut points: Vec<usize> = cuts.iter().map(|c| b[*c as usize % b.len()]).collect();
            points.sort_unstable();
            points.dedup();
            let mut pieces = Vec::new();
            let mut last = 0;
            for p in points {
                pieces.push(&case.input[last..p]);
                last = p;
            }
            pieces.push(&case.input[last..]);
            check_chunking(s, case, &pieces, &one_shot);
        });
    }
}

/// Pieces of the streaming specs' formats, for generated outputs.
const FRAGMENTS: &[&str] = &[
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_end|>",
    "{\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": \"é\"}}",
    " ",
    "\n",
    "hi",
    "é",
    "<|channel|>",
    "analysis",
    "final",
    "<|message|>",
    "<|end|>",
    "<|start|>assistant",
    "commentary to=functions.f",
    " <|constrain|>json",
    "<|call|>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {\"a\": [1, 2.5]}}]",
    "<|channel>thought\n",
    "<channel|>",
    "<|tool_call>call:f{a:<|\"|>x<|\"|>}<tool_call|>",
    "<turn|>",
    "<function=f>",
    "<parameter=a>",
    "1",
    "</parameter>",
    "</function>",
    "{\"a\": 1}",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Generated outputs of the formats' own pieces, through every shipped spec that streams:
    /// never a panic; where the one-shot parse succeeds, 1-character chunks and a random split
    /// rebuild its message.
    #[test]
    fn generated_outputs_never_panic_and_rebuild(
        picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..24),
        cut in any::<u16>(),
    ) {
        thread_local! {
            // Every shipped name (its schema, with its stream profile) and transformers'
            // templates.
            static SPECS: Vec<Streamable> = streamables()
                .into_iter()
                .filter(|s| s.name.starts_with("schema ") || matches!(s.family.as_str(),
                    "qwen3" | "qwen3_5" | "gemma4"))
                .collect();
        }
        let input: String = picks.iter().map(|&i| FRAGMENTS[i]).collect();
        SPECS.with(|specs| {
            assert!(specs.len() >= 31, "{}", specs.len());
            for s in specs {
                let case = StreamCase {
                    name: format!("generated {input:?}"),
                    input: input.clone(),
                    prefix: None,
                    tools: None,
                    message: None,
                };
                let one_shot = parse_counted(&s.spec, &input, None, None);
                let b = boundaries(&input);
                let chars: Vec<&str> = b.windows(2).map(|w| &input[w[0]..w[1]]).collect();
                match one_shot {
                    Ok(one_shot) => {
                        check_chunking(s, &case, &chars, &one_shot);
                        let at = b[cut as usize % b.len()];
                        check_chunking(s, &case, &[&input[..at], &input[at..]], &one_shot);
                    }
                    Err(_) => assert!(run_chunks(s, &case, &chars).is_err()),
                }
            }
        });
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z{}\\[\\]\":, é]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop_oneof![
            Just("role".to_owned()),
            Just("content".to_owned()),
            Just("thinking".to_owned()),
            Just("tool_calls".to_owned()),
            Just("function".to_owned()),
            Just("name".to_owned()),
            Just("arguments".to_owned()),
            Just("id".to_owned()),
            Just("parameters".to_owned()),
            "[a-z]{1,3}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((keys, inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Any JSON value (of the shapes messages have) converts without panicking, to an assistant
    /// message whose `arguments` are JSON texts and whose ids are strings.
    #[test]
    fn any_value_converts(value in any_json(), raw in "[a-z{}\\[\\]\":, 1é]{0,40}") {
        for raw in [None, Some(raw.as_str())] {
            let m = to_message(&value, raw, &Options::default(), &mut CounterIds::default());
            prop_assert_eq!(&m["role"], "assistant");
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                prop_assert!(call["id"].is_string());
                let args = call["function"]["arguments"].as_str().unwrap();
                prop_assert!(loads(args).is_ok(), "{}", args);
            }
        }
    }
}

/// A response template's repeated text field: joined by `join` (also onto a default string),
/// or a list without one; and a field written twice (the reference keeps the last region). The
/// expected messages are transformers 5.23.0's (`ResponseParser(spec, prefix="")`, `feed` then
/// `finalize`) on `<j>a b</j><j>c</j><j> d </j>`. At every split point the deltas rebuild the
/// one-shot message exactly: a joined field streams each region's text with the separator sent
/// as the next region opens, a list (or a join onto a default) goes out with the final message.
/// The field written twice fails a stream whose deltas had sent the first region's text
/// (`StreamedTextChanged`) while the one-shot conversion keeps the reference's message.
#[test]
fn repeated_text_fields_stream_as_the_template_writes_them() {
    let input = "<j>a b</j><j>c</j><j> d </j>";
    let cases = [
        (
            r#"{"start_anchor": "<s>", "fields": {"content": {"open": "<j>", "close": "</j>", "repeats": true, "join": " | "}}}"#,
            chatparse::json!({"content": "a b | c | d"}),
            true,
        ),
        (
            r#"{"start_anchor": "<s>", "fields": {"reasoning_content": {"open": "<j>", "close": "</j>", "repeats": true, "join": "\n"}, "content": {}}}"#,
            chatparse::json!({"reasoning_content": "a b\nc\nd"}),
            true,
        ),
        (
            r#"{"start_anchor": "<s>", "fields": {"content": {"open": "<j>", "close": "</j>", "repeats": true}}}"#,
            chatparse::json!({"content": ["a b", "c", "d"]}),
            false,
        ),
        (
            r#"{"start_anchor": "<s>", "defaults": {"content": "x"}, "fields": {"content": {"open": "<j>", "close": "</j>", "repeats": true, "join": "|"}}}"#,
            chatparse::json!({"content": "x|a b|c|d"}),
            false,
        ),
    ];
    for (template, reference, streams) in &cases {
        let spec = Spec::from_json_str(template).unwrap();
        let one_shot = parse_counted(&spec, input, Some(""), None).unwrap();
        // The reference's text fields as the OpenAI message writes them (a list as JSON text).
        for (field, key) in [
            ("content", "content"),
            ("reasoning_content", "reasoning_content"),
        ] {
            let want = match reference.get(field) {
                Some(Value::String(s)) => Some(Value::String(s.clone())),
                Some(other) => Some(Value::String(other.to_string())),
                // OpenAI's `content` is a string or null; no reasoning is no key.
                None if key == "content" => Some(Value::Null),
                None => None,
            };
            assert_eq!(one_shot.get(key).cloned(), want, "{template}: {key}");
        }
        let b: Vec<usize> = (0..=input.len()).collect();
        let mut splits: Vec<Vec<&str>> = b
            .iter()
            .map(|&at| vec![&input[..at], &input[at..]])
            .collect();
        splits.push(b.windows(2).map(|w| &input[w[0]..w[1]]).collect());
        for chunks in &splits {
            let mut stream = deltas_counted(&spec, Some(""));
            let mut out = Vec::new();
            let mut before_end = String::new();
            for chunk in chunks {
                for c in stream.feed(chunk).unwrap() {
                    before_end.push_str(c["delta"]["content"].as_str().unwrap_or(""));
                    before_end.push_str(c["delta"]["reasoning_content"].as_str().unwrap_or(""));
                    out.push(c);
                }
            }
            let (last, message) = stream
                .finish()
                .unwrap_or_else(|e| panic!("{template} {chunks:?}: {e}"));
            out.extend(last);
            let at = format!("{template} {chunks:?}");
            assert_eq!(message, one_shot, "{at}");
            check_deltas(&out, &message, &at);
            if chunks.len() > 2 {
                // Fed a character at a time: a joined field's text is out before the end.
                assert_eq!(
                    *streams,
                    before_end.starts_with("a b"),
                    "{at}: {before_end:?}"
                );
            }
        }
    }
    // Written twice: Qwen3's template reads text after `</tool_call>` (and after `</think>`) as
    // content again, and the reference keeps the last region.
    let spec = Spec::from_json_str(
        &std::fs::read_to_string(repo_root().join("response_templates/qwen3.json")).unwrap(),
    )
    .unwrap();
    let input = "Hi <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> there<think>x</think>again";
    let one_shot = parse_counted(&spec, input, Some(""), None).unwrap();
    assert_eq!(one_shot["content"], "again");
    assert_eq!(one_shot["reasoning_content"], "x");
    let mut stream = deltas_counted(&spec, Some(""));
    for (i, c) in input.char_indices() {
        stream.feed(&input[i..i + c.len_utf8()]).unwrap();
    }
    let failed = stream.finish().unwrap_err();
    assert!(
        matches!(
            failed.kind,
            chatparse::ParseErrorKind::StreamedTextChanged(_)
        ),
        "{failed}"
    );
}

/// Every character Python's `str.strip()` removes (`str.isspace`), between words, in runs and at
/// the end of a region, and characters that only look like spaces (`\u{200b}`, `\u{180e}`,
/// `\u{ad}`) or are multi-byte: through transformers' Qwen3 and Gemma 4 templates, at every split
/// point and in k-character chunks from every offset, the deltas rebuild the message, whose
/// reasoning and content are each body without its trailing whitespace — the message
/// transformers 5.23.0's `ResponseParser` gives for these inputs (checked with
/// `scripts/reference/stream_generate.py`'s `load_reference`). Most of these feeds are runs of
/// text the adapter sends on its fast path, whose trailing whitespace it holds back itself.
#[test]
fn stripped_regions_hold_back_every_python_space() {
    const SPACES: &[char] = &[
        '\t', '\n', '\x0b', '\x0c', '\r', '\x1c', '\x1d', '\x1e', '\x1f', ' ', '\u{85}', '\u{a0}',
        '\u{1680}', '\u{2000}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}',
        '\u{3000}',
    ];
    const NOT_SPACES: &[char] = &['\u{200b}', '\u{180e}', '\u{ad}', 'é', '東', '😀'];
    // `tag`, then each space around a character that is not one, then a tail of spaces.
    let body = |tag: &str| {
        let mut text = tag.to_owned();
        for (i, s) in SPACES.iter().enumerate() {
            let other = NOT_SPACES[i % NOT_SPACES.len()];
            text.push_str(&format!("{s}{other}{s}{s}{i}"));
        }
        let stripped = text.clone();
        text.push_str("\u{3000} \u{2028}\n");
        (text, stripped)
    };
    let (reasoning, reasoning_value) = body("r");
    let (content, content_value) = body("c");
    let cases = [
        (
            "qwen3",
            "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
            format!("<think>\n{reasoning}</think>\n\n{content}<|im_end|>"),
        ),
        (
            "gemma4",
            "<bos><|turn>user\nWeather?<turn|>\n<|turn>model\n",
            format!("<|channel>thought\n{reasoning}<channel|>{content}<turn|>"),
        ),
    ];
    for (name, prefix, input) in &cases {
        let spec = Spec::from_json_str(
            &std::fs::read_to_string(repo_root().join(format!("response_templates/{name}.json")))
                .unwrap(),
        )
        .unwrap();
        let b = boundaries(input);
        let mut chunkings: Vec<Vec<&str>> = b
            .iter()
            .map(|&at| vec![&input[..at], &input[at..]])
            .collect();
        for k in 1..=6 {
            for first in 1..=k {
                let mut cuts: Vec<usize> = (first..b.len()).step_by(k).map(|i| b[i]).collect();
                cuts.insert(0, 0);
                cuts.push(input.len());
                chunkings.push(cuts.windows(2).map(|w| &input[w[0]..w[1]]).collect());
            }
        }
        for chunks in &chunkings {
            let at = format!("{name} {chunks:?}");
            let mut stream = deltas_counted(&spec, Some(prefix));
            let mut out = Vec::new();
            for chunk in chunks {
                out.extend(stream.feed(chunk).unwrap_or_else(|e| panic!("{at}: {e}")));
            }
            let (last, message) = stream.finish().unwrap_or_else(|e| panic!("{at}: {e}"));
            out.extend(last);
            assert_eq!(
                message["reasoning_content"],
                reasoning_value.as_str(),
                "{at}"
            );
            assert_eq!(message["content"], content_value.as_str(), "{at}");
            check_deltas(&out, &message, &at);
        }
    }
}

/// A run of white space at every character boundary of every example of every shipped name
/// (after a `}`, before a `)`, in a call's head or name, inside a marker or a closing tag, in
/// content and reasoning), streamed through the adapter in 16-byte chunks: the deltas rebuild
/// the one-shot OpenAI message. The adapter's call sketches and stripped text read such runs
/// through what earlier chunks read (they used to read them again on every chunk); a resumption
/// that drops or misplaces text shows here.
///
/// A run inside an XML call's closing tag (`</tool_ca  ll>`, `< /invoke>`) merges the call with
/// the next one (the call pattern runs to the next whole closing tag), and when both write the
/// same parameters the final object keeps the last values: a parameter written twice, which the
/// strict stream cannot take back once sent (`StreamedCallChanged`, glm4_5 and minimax_m2);
/// there the stream with `arguments_at_close` must rebuild the message.
#[test]
fn white_space_runs_rebuild_the_message_everywhere() {
    let mut inputs = 0;
    let mut failures = Vec::new();
    for name in chatparse::shipped::names() {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        let mut files: Vec<_> = std::fs::read_dir(repo_root().join("examples").join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        let s = Streamable {
            name: name.to_owned(),
            spec,
            family: name.to_owned(),
            cases: Vec::new(),
        };
        for path in files {
            let example = std::fs::read_to_string(&path).unwrap();
            let calls = |m: &Value| m["tool_calls"].as_array().map_or(0, Vec::len);
            let example_calls = parse_counted(&s.spec, &example, None, None).map(|m| calls(&m));
            for (k, at) in boundaries(&example).into_iter().enumerate() {
                // Longer than the runs the scans remember (32 bytes).
                let run = [" ", "\n", " \n"][k % 3].repeat(48);
                let input = format!("{}{run}{}", &example[..at], &example[at..]);
                let Ok(one_shot) = parse_counted(&s.spec, &input, None, None) else {
                    continue;
                };
                inputs += 1;
                let case = StreamCase {
                    name: format!("{} at {at}", path.display()),
                    input: input.clone(),
                    prefix: None,
                    tools: None,
                    message: Some(one_shot.clone()),
                };
                let b = boundaries(&input);
                let mut pieces = Vec::new();
                let mut last = 0;
                for &p in b.iter().filter(|&&p| p > 0 && p % 16 == 0) {
                    pieces.push(&input[last..p]);
                    last = p;
                }
                pieces.push(&input[last..]);
                // Calls merged by a broken closing tag may write a parameter twice.
                let merged = example_calls.as_ref().is_ok_and(|&n| calls(&one_shot) < n);
                let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    check_chunking_twice(&s, &case, &pieces, &one_shot, merged)
                }));
                if checked.is_err() {
                    failures.push(format!("{name} {}@{at}", path.display()));
                }
            }
        }
    }
    assert!(inputs > 10_000, "only {inputs} inputs");
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
}

/// A closing tag the model breaks with a space, in each XML format where the final message then
/// differs from the calls as written. Expected messages: `openai::parse` of the input (the
/// one-shot conversion the conformance suite checks against transformers 5.10.4), written out.
///
/// - deepseek_v3_2 (`</｜DSML｜ parameter>`): the value runs on to the next closing tag and
///   swallows the next parameter's tag, which the schema's `string="true"` rewrite then turns
///   into `name="to">"CNY"` inside the value. The stream sends the value's characters up to
///   that tag, the rest with the closing tag, for every chunking.
/// - glm4_5 (`</too l_call>`) and minimax_m2 (`</i nvoke>`): the call runs on to the next
///   call's closing tag, so the two calls are one that writes its parameters twice, and the
///   object keeps the last values. The first values may have gone out before the second were
///   written: a strict stream either rebuilds the message or fails with `StreamedCallChanged`
///   (never sends deltas that disagree with it), and with `arguments_at_close` it rebuilds it.
#[test]
fn broken_closing_tags_stream_to_the_one_shot_message() {
    use chatparse::ParseErrorKind;
    let cases: [(&str, &str, &str, &str, &str); 3] = [
        (
            "deepseek_v3_2",
            "USD</｜DSML｜parameter>",
            "USD</｜DSML｜ parameter>",
            r#"{"role":"assistant","content":"Let me fetch the latest numbers.","reasoning_content":"Two independent lookups: the stock quotes and the exchange rate.","tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_quote","arguments":"{\"symbols\":[\"BABA\",\"TCEHY\"],\"market\":\"US\"}"}},{"id":"call_1","type":"function","function":{"name":"get_exchange_rate","arguments":"{\"from\":\"USD</｜DSML｜ parameter>\\n<｜DSML｜parameter name=\\\"to\\\">\\\"CNY\\\"\"}"}}]}"#,
            "strict",
        ),
        (
            "glm4_5",
            "</tool_call>",
            "</too l_call>",
            r#"{"role":"assistant","content":"I'll check both prices.","reasoning_content":"The user wants the price of two products; I can look both up at once.","tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_price","arguments":"{\"sku\":\"MS-1044\",\"currency\":\"EUR\",\"quantity\":3}"}}]}"#,
            "twice",
        ),
        (
            "minimax_m2",
            "</invoke>",
            "</i nvoke>",
            r#"{"role":"assistant","content":"I'll search in both languages.","reasoning_content":"Two independent searches, one per language.","tool_calls":[{"id":"call_0","type":"function","function":{"name":"web_search","arguments":"{\"query\":\"MiniMax M2 评测\",\"lang\":\"zh\"}"}}]}"#,
            "twice",
        ),
    ];
    for (name, tag, broken, expected, how) in cases {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        let example = std::fs::read_to_string(
            repo_root()
                .join("examples")
                .join(name)
                .join("tool_calls.txt"),
        )
        .unwrap();
        // The first such closing tag, broken.
        let input = example.replacen(tag, broken, 1);
        assert_ne!(input, example, "{name}");
        let expected: Value = chatparse::value::from_str(expected).unwrap();
        assert_eq!(
            parse_counted(&spec, &input, None, None).unwrap(),
            expected,
            "{name}"
        );
        // Every split in two, one character at a time, and 16 bytes at a time.
        let b = boundaries(&input);
        let mut chunkings: Vec<Vec<&str>> = b
            .iter()
            .map(|&at| vec![&input[..at], &input[at..]])
            .collect();
        chunkings.push(b.windows(2).map(|w| &input[w[0]..w[1]]).collect());
        let mut sixteen: Vec<usize> = b.iter().copied().filter(|p| p % 16 == 0).collect();
        sixteen.push(input.len());
        chunkings.push(sixteen.windows(2).map(|w| &input[w[0]..w[1]]).collect());
        let mut taken_back = 0;
        for chunks in &chunkings {
            let at = format!("{name} {chunks:?}");
            let run = |arguments_at_close: bool| {
                let options = Options {
                    arguments_at_close,
                    ..Options::default()
                };
                let mut stream = DeltaStream::from_spec(
                    &spec,
                    None,
                    None,
                    options,
                    Box::new(CounterIds::default()),
                )
                .unwrap();
                let mut out = Vec::new();
                for chunk in chunks {
                    out.extend(stream.feed(chunk)?);
                }
                let (last, message) = stream.finish()?;
                out.extend(last);
                Ok::<_, chatparse::ParseError>((out, message))
            };
            match (run(false), how) {
                (Ok((deltas, message)), _) => {
                    assert_eq!(message, expected, "{at}");
                    check_deltas(&deltas, &message, &at);
                }
                (Err(e), "twice") if matches!(e.kind, ParseErrorKind::StreamedCallChanged(_)) => {
                    taken_back += 1;
                }
                (Err(e), _) => panic!("{at}: {e}"),
            }
            let (deltas, message) = run(true).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(message, expected, "{at}");
            check_deltas(&deltas, &message, &at);
        }
        eprintln!(
            "{name}: {taken_back} of {} strict streams taken back",
            chunkings.len()
        );
    }
}

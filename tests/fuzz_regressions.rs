//! Inputs the fuzz targets (`fuzz/`) found, replayed as tests, and the cases they stand for
//! written out by hand.
//!
//! `fuzz_regressions/spec_load_parse-*` are `spec_load_parse` inputs: `[seed, spec text, 0,
//! output]`. The property is the target's: a spec that loads streams every output, in any
//! chunks, to its one-shot parse. `fuzz_regressions/derive_template-*` are `derive_template`
//! inputs, `[seed, template text, 0, output]`, replayed with that target's property.

mod support;

use chatparse::runtime::Spec;
use chatparse::{json, Value};
use support::{char_boundaries, repo_root, same_value};

/// The fuzz target's chunking (`fuzz/src/lib.rs`): 0 = one chunk, 1 = one char per chunk,
/// otherwise pseudo-random lengths of 1 to `seed` bytes.
fn seeded_cuts(text: &str, seed: u8) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761).max(1);
    let mut at = 0;
    while at < text.len() {
        let want = match seed {
            0 => text.len(),
            1 => 1,
            _ => {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                1 + (state as usize % usize::from(seed))
            }
        };
        let mut end = (at + want).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        cuts.push(end);
        at = end;
    }
    cuts
}

/// A kept `spec_load_parse` or `derive_template` input (`tests/fuzz_regressions/NAME`, both
/// `[seed, text, 0, output]`): its seed, spec or template text, and output.
fn kept_input(name: &str) -> (u8, String, String) {
    let data = std::fs::read(repo_root().join("tests/fuzz_regressions").join(name)).unwrap();
    let (&seed, rest) = data.split_first().unwrap();
    let nul = rest.iter().position(|&b| b == 0).unwrap();
    let spec_text = std::str::from_utf8(&rest[..nul]).unwrap().to_owned();
    (
        seed,
        spec_text,
        String::from_utf8_lossy(&rest[nul + 1..]).into_owned(),
    )
}

/// Streams `text` cut at `cuts` (ascending byte offsets); the final message or the error text.
fn streamed(spec: &Spec, text: &str, cuts: &[usize]) -> Result<Value, String> {
    let mut stream = spec.stream(None, None).map_err(|e| e.to_string())?;
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
        if cut > at {
            stream
                .feed_with(&text[at..cut], &mut |_| {})
                .map_err(|e| e.to_string())?;
            at = cut;
        }
    }
    stream.finish_with(&mut |_| {}).map_err(|e| e.to_string())
}

/// Every chunking we try (the seed's, one char per chunk, every split in two) ends with the
/// one-shot parse.
fn assert_chunking_invariant(spec: &Spec, text: &str, seed: u8) {
    let one_shot = spec.parse(text).map_err(|e| e.to_string());
    let boundaries = char_boundaries(text);
    let mut chunkings: Vec<Vec<usize>> = vec![seeded_cuts(text, seed), boundaries.clone()];
    chunkings.extend(boundaries.iter().map(|&b| vec![b]));
    for cuts in chunkings {
        let got = streamed(spec, text, &cuts);
        let same = match (&one_shot, &got) {
            (Ok(a), Ok(b)) => same_value(a, b),
            (Err(_), Err(_)) => true,
            _ => false,
        };
        assert!(
            same,
            "cuts {cuts:?} of {text:?}\n one-shot {one_shot:?}\n streamed {got:?}"
        );
    }
}

#[test]
fn close_pattern_alternative_inside_another_split_by_a_chunk() {
    let (seed, spec_text, output) = kept_input("spec_load_parse-close-pattern-split");
    let spec = Spec::from_json_str(&spec_text).unwrap();
    // The close pattern's alternatives include `im_end` and `>`, both inside `<|im_end|>`.
    assert!(spec_text.contains(r"<\\|im_end\\|>|<\\|endoftext\\|>|<\\<|im_end|>"));
    assert_chunking_invariant(&spec, &output, seed);
}

/// The implicit field closes at `close_pattern`, whose second alternative (`im_end`) matches
/// inside the first (`<|im_end|>`). The one-shot parse is Python's `re.search` on the whole
/// text: `re.search(r"<\|im_end\|>|im_end", "Hi<|im_end|>")` matches at 2, so the content is
/// `Hi`; a stream cut after `<|im_end|` must not take the `im_end` at 4 (content `Hi<|`).
#[test]
fn earlier_longer_pattern_match_wins_over_a_complete_later_one() {
    let spec = Spec::from_json_str(
        &json!({
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {"content": {"close_pattern": r"<\|im_end\|>|im_end"}}
        })
        .to_string(),
    )
    .unwrap();
    let text = "Hi<|im_end|>";
    assert_eq!(spec.parse(text).unwrap(), json!({"content": "Hi"}));
    let cut = text.len() - 1;
    assert_eq!(
        streamed(&spec, text, &[cut]).unwrap(),
        json!({"content": "Hi"})
    );
    assert_chunking_invariant(&spec, text, 3);
    assert_chunking_invariant(&spec, "Hi<|im_end| then im_end", 3);
}

/// Literal delimiters, sorted longest first as the reference's alternation is: on the whole
/// text `</call>>>` the longer literal matches at the same start (`re.search("</call>>|</call>",
/// …)`), and `x` inside `<x>` is found only when `<x>` cannot complete.
#[test]
fn literal_that_a_longer_one_extends_is_held_until_decided() {
    let spec = Spec::from_json_str(
        &json!({
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {
                "calls": {"open": "<call>", "close": ["</call>", "</call>>>"], "repeats": true},
                "content": {"close": ["<x>", "x"]}
            }
        })
        .to_string(),
    )
    .unwrap();
    let text = "<call>a</call>>>b<x>";
    assert_eq!(
        spec.parse(text).unwrap(),
        json!({"calls": ["a"], "content": "b"})
    );
    assert_chunking_invariant(&spec, text, 4);
    assert_chunking_invariant(&spec, "<call>a</call>>b<xc", 4);
}

/// `spec_load_parse` found (input kept in tests/fuzz_regressions/spec_load_parse-root-not-object:
/// spec `{}`, empty output): a schema whose root is not an object returns the text itself
/// (transformers' `recursive_parse` with `{}` returns its input unchanged), and the lenient parse
/// gave `{}` and set the output aside instead. Lenient parsing equals the strict parse whenever
/// that gives a value other than the reference's `None`.
#[test]
fn lenient_parse_of_a_schema_whose_root_is_not_an_object() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fuzz_regressions/spec_load_parse-root-not-object"
    );
    let data = std::fs::read(path).unwrap();
    let spec_text = std::str::from_utf8(&data[1..]).unwrap();
    let spec = Spec::from_json_str(spec_text).unwrap();
    for output in ["", "Hi <think>there</think>"] {
        let strict = spec.parse(output).unwrap();
        assert_eq!(strict, Value::String(output.to_owned()), "{output:?}");
        let lenient = spec.parse_lenient(output, None).unwrap();
        assert_eq!(lenient.message, strict, "{output:?}");
        assert!(lenient.malformed.is_empty(), "{output:?}");
    }
}

/// `spec_load_parse` found (input kept in
/// tests/fuzz_regressions/spec_load_parse-dollar-before-final-newline): an `open_pattern` ending
/// in `$` (`\s*<tool_call>$`). Python's `$` also matches before a final newline, so a buffer
/// that ends `<tool_call>\n` matches, and the reference (transformers 5.23.0, `ResponseParser`
/// with `prefix=""`) commits to that match while streaming: one char at a time it opens a tool
/// call there and fails on the JSON, although its one-shot parse of the same text (where the
/// newline is not final) keeps the whole call in `content`. The stream holds such a match until
/// more text decides it, and ends with the one-shot result.
#[test]
fn dollar_before_a_final_newline_is_held_until_decided() {
    let (seed, spec_text, output) = kept_input("spec_load_parse-dollar-before-final-newline");
    let spec = Spec::from_json_str(&spec_text).unwrap();
    assert!(output.contains("\n\n<tool_call>\n{"));
    assert_chunking_invariant(&spec, &output, seed);

    // The same, small. Reference one-shot: `{"content": "a<tool_call>\nb"}` (the `$` fails
    // before a newline that is not final); at the end of the text it matches.
    let spec = Spec::from_json_str(
        &json!({
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {
                "call": {"open_pattern": r"<tool_call>$", "close": "</tool_call>"},
                "content": {"content": "text"}
            }
        })
        .to_string(),
    )
    .unwrap();
    let text = "a<tool_call>\nb";
    assert_eq!(
        spec.parse(text).unwrap(),
        json!({"content": "a<tool_call>\nb"})
    );
    let newline = text.find('\n').unwrap();
    assert_eq!(
        streamed(&spec, text, &[newline + 1]).unwrap(),
        json!({"content": "a<tool_call>\nb"})
    );
    assert_chunking_invariant(&spec, text, 2);
}

/// `spec_load_parse` found (input kept in tests/fuzz_regressions/spec_load_parse-untyped-root-streams):
/// a schema whose root has `properties` but no `type`. transformers' `recursive_parse` returns a
/// string unchanged for an untyped node, so the one-shot result is the output itself; the stream
/// read the properties as regions and failed on their JSON. Such a root does not stream.
#[test]
fn untyped_root_is_not_streamed_as_fields() {
    let (_seed, spec_text, output) = kept_input("spec_load_parse-untyped-root-streams");
    let spec = Spec::from_json_str(&spec_text).unwrap();
    assert_eq!(
        spec.parse(&output).unwrap(),
        Value::String(output.to_string())
    );
    let refused = spec.stream(None, None).err().map(|e| e.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|e| e.contains("the root is not an object")),
        "{refused:?}"
    );
}

/// `openai_deltas` found (input kept in tests/fuzz_regressions/openai_deltas-gemma4-call-then-channel:
/// byte 0 picks `gemma4`, byte 1 is seed 1, one character per chunk): a Gemma 4 output that
/// begins with a call and goes on with `<|channel>thought`. Gemma 4's root substitution moves
/// the text after leading calls in front of them, so the one-shot parse reads everything as
/// reasoning and has no call (as transformers does: see
/// `streaming_profiled::gemma4_leading_calls_wait_for_the_text_after_them`); the stream had sent
/// the call's start and failed with `StreamedCallChanged`. Leading calls now wait for the text
/// after them.
#[test]
fn gemma4_leading_call_then_reasoning_opener_is_never_sent() {
    let data = std::fs::read(
        repo_root().join("tests/fuzz_regressions/openai_deltas-gemma4-call-then-channel"),
    )
    .unwrap();
    assert_eq!(data[1], 1);
    let text = String::from_utf8_lossy(&data[2..]);
    assert!(text.starts_with("<|tool_call>") && text.contains("<tool_call|><|channel>thought"));
    let spec = chatparse::shipped::spec("gemma4").unwrap().unwrap();
    let one_shot = openai_one_shot(&spec, &text);
    assert!(one_shot.get("tool_calls").is_none(), "{one_shot}");
    let (sent, message) = openai_deltas(&spec, &text, &char_boundaries(&text)[1..]);
    assert!(same_value(&message, &one_shot), "{message} != {one_shot}");
    assert!(
        sent.iter()
            .all(|chunk| chunk["delta"].get("tool_calls").is_none()),
        "a call was sent: {sent:?}"
    );
}

/// `fuzz_regressions/openai_deltas-functionary_v3_2-double-separator` (seed 7): a functionary
/// v3.2 output whose second call follows a doubled separator (`}>>>>>>get_current_weather\n{…}`).
/// The model wrote both calls' arguments as JSON, so each call's `arguments` is the model's own
/// text (issue 16: "the model's own JSON text when the model wrote JSON"), and the fragments the
/// stream sends for a call concatenate to exactly that text, whatever the chunking.
#[test]
fn functionary_v3_2_call_after_a_doubled_separator_keeps_its_text() {
    let data = std::fs::read(
        repo_root().join("tests/fuzz_regressions/openai_deltas-functionary_v3_2-double-separator"),
    )
    .unwrap();
    assert_eq!(data[1], 7);
    let text = String::from_utf8_lossy(&data[2..]).into_owned();
    assert!(text.contains("}>>>>>>get_current_weather\n{\"location\": \"Kyoto, Japan\"}"));
    let spec = chatparse::shipped::spec("functionary_v3_2")
        .unwrap()
        .unwrap();
    let want = [
        r#"{"city": "Kyoto", "check_in": "2026-04-10", "check_out": "2<|user|>026-04-13", "guests": 2}"#,
        r#"{"location": "Kyoto, Japan"}"#,
    ];
    let arguments = |message: &Value| -> Vec<String> {
        message["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["arguments"].as_str().unwrap().to_owned())
            .collect()
    };
    let one_shot = openai_one_shot(&spec, &text);
    assert_eq!(arguments(&one_shot), want);
    for seed in [1, 2, 3, 7, 16] {
        let (sent, message) = openai_deltas(&spec, &text, &seeded_cuts(&text, seed));
        assert!(same_value(&message, &one_shot), "seed {seed}: {message}");
        let mut fragments = vec![String::new(); 2];
        for chunk in &sent {
            for call in chunk["delta"]
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = call["index"].as_u64().unwrap() as usize;
                fragments[index].push_str(call["function"]["arguments"].as_str().unwrap_or(""));
            }
        }
        assert_eq!(fragments, want, "seed {seed}");
    }
}

/// `openai::parse` of `text` with default options and counter ids.
fn openai_one_shot(spec: &Spec, text: &str) -> Value {
    use chatparse::runtime::openai::{self, CounterIds, Options};
    openai::parse(
        spec,
        text,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap()
}

/// The chunks a strict delta stream (default options, counter ids) sends for `text` cut at
/// `cuts` (ascending chunk ends), and its message.
fn openai_deltas(spec: &Spec, text: &str, cuts: &[usize]) -> (Vec<Value>, Value) {
    use chatparse::runtime::openai::{CounterIds, DeltaStream, Options};
    let mut stream = DeltaStream::from_spec(
        spec,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap();
    let mut sent = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
        if cut > at {
            sent.extend(stream.feed(&text[at..cut]).unwrap());
            at = cut;
        }
    }
    let (last, message) = stream.finish().unwrap();
    sent.extend(last);
    (sent, message)
}

/// `fuzz_regressions/stream_chunking-functionary_v3_2-all-inside-separators`: after a call,
/// `>>>>>>all\n` — a doubled separator whose second half starts the terminator `>>>all\n`. The
/// calls' text ends after the first `>>>` (transformers 5.10.4's `recursive_parse` with
/// `schemas/functionary_v3_2.json` gives the one call `-ime`, and no content), so no call
/// follows. The stream sent a second call, `all`, before the final message left it out (found by
/// the debug check that streamed calls are the final message's first ones). At every chunking,
/// the calls streamed must be the schema's, and the stream must end as the one-shot parse: the
/// shipped name refuses the text after the `>>>all\n` (`{}>>>>\u{fffd}`, which the schema drops;
/// see tests/check_functionary_v3_2.rs).
#[test]
fn functionary_v3_2_all_terminator_inside_a_separator_run_ends_the_calls() {
    let data = std::fs::read(
        repo_root()
            .join("tests/fuzz_regressions/stream_chunking-functionary_v3_2-all-inside-separators"),
    )
    .unwrap();
    let text = String::from_utf8_lossy(&data[2..]).into_owned();
    assert!(text.starts_with("-ime\n{}>>>>>>all\n"));
    let spec = chatparse::shipped::spec("functionary_v3_2")
        .unwrap()
        .unwrap();
    let schema_only = spec.schema().unwrap().parse_schema_only(&text).unwrap();
    assert_eq!(
        schema_only["tool_calls"],
        json!([{"type": "function", "function": {"name": "-ime", "arguments": {}}}])
    );
    assert!(schema_only.get("content").is_none());
    let refused = spec.parse(&text).unwrap_err();
    match &refused.kind {
        chatparse::ParseErrorKind::NotUnderstood { span, .. } => {
            assert_eq!(&text[span.0..span.1], "{}>>>>\u{fffd}");
        }
        other => panic!("{other:?}"),
    }
    // Without the text after `>>>all\n`, the shipped name gives the schema's message.
    let cut_text = text[..text.find(">>>all\n").unwrap() + ">>>all\n".len()].to_owned();
    let one_shot = spec.parse(&cut_text).unwrap();
    assert!(same_value(&one_shot, &schema_only));
    for (text, want) in [(&text, Err(refused)), (&cut_text, Ok(one_shot))] {
        let boundaries = char_boundaries(text);
        let mut chunkings: Vec<Vec<usize>> = vec![seeded_cuts(text, data[1]), boundaries.clone()];
        chunkings.extend(boundaries.iter().map(|&b| vec![b]));
        for cuts in chunkings {
            let mut stream = spec.stream(None, None).unwrap();
            let mut calls = Vec::new();
            let mut record = |e: chatparse::runtime::stream::Event<'_>| {
                if let chatparse::runtime::stream::Event::RegionClose { field, value } = e {
                    // A call closed while the text streams, or at the end the calls not sent yet.
                    match value {
                        Value::Array(rest) if field == "tool_calls" => calls.extend(rest),
                        value if field == "tool_calls" => calls.push(value),
                        _ => {}
                    }
                }
            };
            let mut at = 0;
            for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
                if cut > at {
                    stream.feed_with(&text[at..cut], &mut record).unwrap();
                    at = cut;
                }
            }
            let finished = stream.finish_with(&mut record);
            match (&finished, &want) {
                (Ok(message), Ok(one_shot)) => {
                    assert!(same_value(message, one_shot), "cuts {cuts:?}: {message}");
                    assert_eq!(
                        Value::Array(calls),
                        one_shot["tool_calls"],
                        "cuts {cuts:?}: the calls streamed"
                    );
                }
                (Err(e), Err(refused)) => {
                    assert_eq!(e, refused, "cuts {cuts:?}");
                    // The calls sent before the end are the schema's first ones.
                    let schema_calls = schema_only["tool_calls"].as_array().unwrap();
                    assert!(
                        calls.len() <= schema_calls.len(),
                        "cuts {cuts:?}: {calls:?}"
                    );
                    for (sent, call) in calls.iter().zip(schema_calls) {
                        assert!(same_value(sent, call), "cuts {cuts:?}: {sent}");
                    }
                }
                (got, want) => panic!("cuts {cuts:?}: {got:?}, want {want:?}"),
            }
        }
    }
}

/// Every kept `derive_template` input holds the target's property: deriving gives a schema or
/// a `DeriveError` (never a panic), and a derived schema streams its output, in any chunks, to
/// the one-shot parse.
#[test]
fn kept_derive_template_inputs_derive_or_fail_cleanly() {
    let dir = repo_root().join("tests/fuzz_regressions");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("derive_template-"))
        .collect();
    names.sort();
    assert!(names.len() >= 2, "kept inputs: {names:?}");
    for name in names {
        let (seed, template, output) = kept_input(&name);
        let Ok(derived) = chatparse::derive::derive(&template) else {
            continue;
        };
        let spec = Spec::from_json_str(&derived.spec.to_string())
            .unwrap_or_else(|e| panic!("{name}: a derived schema loads: {e}"));
        assert_chunking_invariant(&spec, &output, seed);
    }
}

/// `derive_template` found (input kept in
/// tests/fuzz_regressions/derive_template-value-quote-char-boundary): when an argument's value
/// reads back in no form, the `DeriveError` quotes up to 80 bytes of the rendered text after
/// the argument's name, and byte 80 fell inside a `▁` (U+2581, 3 bytes): the quote sliced the
/// character and panicked. The quote now ends at the last whole character.
#[test]
fn a_quote_of_rendered_text_ends_on_a_character_boundary() {
    let (_, template, _) = kept_input("derive_template-value-quote-char-boundary");
    let err = match chatparse::derive::derive(&template) {
        Ok(_) => panic!("the template derives, but its argument value cannot be read back"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("is written in no form that reads back"),
        "{err}"
    );
}

/// `shipped_backends` found (input kept in
/// tests/fuzz_regressions/shipped_backends-llama3_json-later-call-error-position: byte 0 picks
/// `llama3_json` among the sorted shipped names, byte 1 is the chunking seed, unused by that
/// target): the interpreter and the generated parser failed alike but placed the error apart.
/// The calls' iterator `(\{.*?)(?:<\|python_tag\|>|$)` cuts a call to `{"name": ` where a
/// `<|python_tag|>` follows it, and its JSON ends there ("Expecting value" at its end). The
/// interpreter's calls text is a copy (a named group of the root pattern), and was placed by its
/// text: at the first `{"name": ` of the output, in another call. Both now place it after the
/// cut call's own `{"name": `.
#[test]
fn llama3_json_error_in_a_later_call_is_placed_in_it() {
    let data = std::fs::read(
        repo_root()
            .join("tests/fuzz_regressions/shipped_backends-llama3_json-later-call-error-position"),
    )
    .unwrap();
    let mut names: Vec<&str> = chatparse::shipped::names().collect();
    names.sort_unstable();
    assert_eq!(names[usize::from(data[0]) % names.len()], "llama3_json");
    let text = String::from_utf8_lossy(&data[2..]);
    let cut_call = "<|python_tag|>{\"name\": <|python_tag|>";
    let expected = text.find(cut_call).unwrap() + cut_call.len() - "<|python_tag|>".len();
    assert!(text.find("{\"name\": ").unwrap() < expected - "{\"name\": ".len());
    let spec = chatparse::shipped::spec("llama3_json").unwrap().unwrap();
    let generated = chatparse::models::parse_value_fn("llama3_json").unwrap();
    let interpreted = spec.parse(&text).unwrap_err();
    let by_generated = generated(&text).unwrap_err();
    assert!(
        matches!(interpreted.kind, chatparse::ParseErrorKind::Json(_)),
        "{interpreted}"
    );
    assert_eq!(interpreted.pointer, "/properties/tool_calls/items");
    for (backend, err) in [("interpreter", &interpreted), ("generated", &by_generated)] {
        assert_eq!(
            err.position.map(|p| p.offset),
            Some(expected),
            "{backend}: {err}"
        );
    }
    assert_eq!(interpreted, by_generated);
}

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
];

/// Longer than any marker a stream may hold back at the end of its buffer.
const HELD_AT_MOST: usize = 40;

#[derive(Default, Debug)]
struct Seen {
    start: Option<(String, String)>,
    arguments: String,
}

fn feed_prefix(spec: &Spec, prompt: Option<&str>, prefix: &str) -> Seen {
    let mut stream = DeltaStream::from_spec(
        spec,
        prompt,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap();
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
            let Ok(message) = openai::parse(
                &spec,
                input,
                prompt,
                None,
                Options::default(),
                Box::new(CounterIds::default()),
            ) else {
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
            let written_name = if ["hermes", "qwen3", "smollm3", "ernie4_5"].contains(&family) {
                format!("\"name\": \"{name}\"")
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
    let mut stream = DeltaStream::from_spec(
        &spec,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .unwrap();
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
/// each parameter's compact JSON once its closing tag is followed by more text — cut every
/// conformance output with a call just after its first parameter, the start and that parameter
/// must have been sent, a prefix of the final `arguments` (which the conformance suite checks
/// against transformers).
#[test]
fn xml_parameters_stream_one_at_a_time() {
    let families = ["qwen3_coder", "qwen3_5", "seed_oss", "glm4_5", "minimax_m2"];
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
            let Ok(message) = openai::parse(
                &spec,
                input,
                None,
                None,
                Options::default(),
                Box::new(CounterIds::default()),
            ) else {
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
            let Some((close, tag)) = ["</parameter>", "</arg_value>"]
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
                lt + 2
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
    let value_start = output.find("use std").unwrap();
    for (i, _) in content.char_indices().skip(1) {
        let written = &content[..i];
        let seen = feed_prefix(&spec, None, &output[..value_start + i]);
        let so_far = written
            .trim_end_matches('\n')
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        assert_eq!(
            seen.arguments,
            format!(r#"{{"path":"src/main.rs","content":"{so_far}"#),
            "after {written:?}"
        );
    }
}

/// Calls whose arguments only the close can convert (Gemma's dialect; deepseek_v3_2's
/// parameters, rewritten by substitutions first): the start goes out as soon as the name is
/// complete, the arguments whole when the call closes. Cut every conformance output with a call
/// halfway through the first call's text after its name.
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
            let Ok(message) = openai::parse(
                &spec,
                input,
                None,
                None,
                Options::default(),
                Box::new(CounterIds::default()),
            ) else {
                continue;
            };
            let Some(Value::Array(calls)) = message.get("tool_calls") else {
                continue;
            };
            let name = calls[0]["function"]["name"].as_str().unwrap();
            let last = input.char_indices().last().map_or(0, |(i, _)| i);
            if feed_prefix(&spec, None, &input[..last]).start.is_none() {
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
            let seen = feed_prefix(&spec, None, &input[..cut]);
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

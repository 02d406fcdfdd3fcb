//! Completeness checks (issue 21, item 7): a shipped name never succeeds while its message leaves
//! out what the model wrote. The schemas stay pinned to the reference (tests/conformance.rs); the
//! family's `Check` above the schema refuses (strict) or sets aside (lenient) what the schema
//! would drop without a word.

mod support;

use chatparse::runtime::schema::{Check, ReadAs};
use chatparse::{ParseErrorKind, Value};
use support::{load_suites, repo_root, Expect};

/// The conformance cases where the reference (the schema alone) returns a message that leaves out
/// part of the output, so the shipped name refuses them: `tests/conformance/check_refuses.json`
/// (python/tests/conftest.py reads it too), as (shipped name, case name).
fn check_refuses() -> Vec<(String, String)> {
    let path = repo_root().join("tests/conformance/check_refuses.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = chatparse::value::from_str(&text).unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap().to_owned();
            (field("family"), field("case"))
        })
        .collect()
}

#[test]
fn the_checks_refuse_exactly_these_conformance_cases() {
    let mut refused = Vec::new();
    for suite in load_suites() {
        let Some(name) = suite.shipped_name() else {
            continue;
        };
        let schema = chatparse::shipped::schema(name).unwrap();
        for case in &suite.cases {
            let Expect::Value(_) = &case.expect else {
                continue;
            };
            // The schema alone is the reference's (tests/conformance.rs); the shipped name adds
            // its family's check.
            assert!(schema.parse_schema_only(&case.input).is_ok());
            match schema.parse(&case.input) {
                Ok(_) => {}
                Err(e) => {
                    assert!(
                        matches!(e.kind, ParseErrorKind::NotUnderstood { .. }),
                        "{name}/{}: {e}",
                        case.name
                    );
                    refused.push((name.to_owned(), case.name.clone()));
                }
            }
        }
    }
    assert_eq!(refused, check_refuses());
}

/// The generated parsers run the same check (`NAME::parse`), and keep the schema's own as
/// `NAME::schema_only`; the build script's list of checked families is the runtime's.
#[test]
fn generated_parsers_run_the_same_checks() {
    for name in chatparse::shipped::names() {
        let generated = chatparse::models::parse_value_fn(name).unwrap();
        let schema_only = chatparse::models::GENERATED_SCHEMA_ONLY
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap()
            .1;
        let schema = chatparse::shipped::schema(name).unwrap();
        assert_eq!(schema.check(), Check::for_shipped(name), "{name}");
        for (family, input) in PROBES.iter().filter(|(f, _)| *f == name) {
            let interpreted = schema.parse(input);
            let compiled = generated(input);
            assert_eq!(
                interpreted.as_ref().map_err(|e| e.to_string()),
                compiled.as_ref().map_err(|e| e.to_string()),
                "{family}: {input:?}"
            );
            assert_eq!(
                schema.parse_schema_only(input).is_ok(),
                schema_only(input).is_ok(),
                "{family}: {input:?}"
            );
        }
    }
}

/// The survey: in every shipped family, what the schema could drop (a second call list, a call
/// with keys the format does not write, text between or after the calls, text outside the
/// format's blocks), each written with the word `zqxj`. A shipped name either refuses it or
/// carries the word in its message; lenient parsing keeps it in the message or sets it aside.
const PROBES: &[(&str, &str)] = &[
    // A second call list.
    ("apriel", r#"<tool_calls>[{"name": "a", "arguments": {}}]</tool_calls><tool_calls>[{"name": "zqxj", "arguments": {}}]</tool_calls>"#),
    ("nemotron_nano_v2", r#"<TOOLCALL>[{"name": "a", "arguments": {}}]</TOOLCALL><TOOLCALL>[{"name": "zqxj", "arguments": {}}]</TOOLCALL>"#),
    ("cohere_command_r7b", r#"<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "a", "parameters": {}}]<|END_ACTION|><|START_ACTION|>[{"tool_call_id": "1", "tool_name": "zqxj", "parameters": {}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>"#),
    ("granite3_3", r#"<|tool_call|>[{"name": "a", "arguments": {}}]<|tool_call|>[{"name": "zqxj", "arguments": {}}]"#),
    ("firefunction_v2", r#" functools[{"name": "a", "arguments": {}}] functools[{"name": "zqxj", "arguments": {}}]"#),
    ("mistral_nemo", r#"[TOOL_CALLS][{"name": "a", "arguments": {}}][TOOL_CALLS][{"name": "zqxj", "arguments": {}}]"#),
    ("mistral_small_3_1", r#"[TOOL_CALLS] [{"name": "a", "arguments": {}}][TOOL_CALLS] [{"name": "zqxj", "arguments": {}}]"#),
    ("phi4_mini", r#"<|tool_call|>[{"name": "a", "arguments": {}}]<|/tool_call|><|tool_call|>[{"name": "zqxj", "arguments": {}}]<|/tool_call|>"#),
    ("lfm2", "<|tool_call_start|>[a(x=1)]<|tool_call_end|><|tool_call_start|>[zqxj(y=2)]<|tool_call_end|>"),
    ("kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|><|tool_calls_section_begin|><|tool_call_begin|>functions.zqxj:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"),
    // A call with keys the format does not write.
    ("cohere_command_r7b", r#"<|START_ACTION|>[{"name": "zqxj", "arguments": {"zqxj": 1}}]<|END_ACTION|>"#),
    ("cohere_command_r7b", r#"<|START_ACTION|>{"tool_call_id": "0", "tool_name": "zqxj", "parameters": {}}<|END_ACTION|>"#),
    ("cohere_command_r7b", r#"<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "a", "parameters": {}, "zqxj": 1}]<|END_ACTION|>"#),
    ("apriel", r#"<tool_calls>[{"name": "a", "parameters": {"zqxj": 1}}]</tool_calls>"#),
    ("apriel", r#"<tool_calls>[{"name": "a", "arguments": {}, "zqxj": 1}]</tool_calls>"#),
    ("nemotron_nano_v2", r#"<TOOLCALL>[{"name": "a", "parameters": {"zqxj": 1}}]</TOOLCALL>"#),
    ("mistral_nemo", r#"[TOOL_CALLS][{"name": "a", "parameters": {"zqxj": 1}}]"#),
    ("mistral_nemo", r#"[TOOL_CALLS][{"name": "a", "arguments": {}, "zqxj": 1}]"#),
    ("mistral_small_3_1", r#"[TOOL_CALLS] [{"name": "a", "parameters": {"zqxj": 1}}]"#),
    ("llama3_json", r#"<|python_tag|>{"name": "a", "args": {"zqxj": 1}}"#),
    ("llama3_json", r#"{"name": "a", "parameters": {"b": 2}, "arguments": {"zqxj": 1}}"#),
    ("granite3_3", r#"<|tool_call|>[{"name": "a", "parameters": {"zqxj": 1}}]"#),
    ("firefunction_v2", r#" functools[{"name": "a", "parameters": {"zqxj": 1}}]"#),
    ("phi4_mini", r#"<|tool_call|>{"name": "a", "parameters": {"zqxj": 1}}<|/tool_call|>"#),
    ("hermes", "<tool_call>\n{\"name\": \"a\", \"parameters\": {\"zqxj\": 1}}\n</tool_call>"),
    ("qwen3", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}, \"zqxj\": 1}\n</tool_call>"),
    ("smollm3", "<tool_call>\n{\"name\": \"a\", \"parameters\": {\"zqxj\": 1}}\n</tool_call>"),
    ("ernie4_5", "</think>\n\n<tool_call>\n{\"name\": \"a\", \"parameters\": {\"zqxj\": 1}}\n</tool_call>"),
    // Text between or after the calls.
    ("hermes", "Hi.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\nzqxj said.\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>"),
    ("qwen3", "<think>\nok\n</think>\n\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\nzqxj after.<|im_end|>"),
    ("smollm3", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call> zqxj"),
    ("qwen3_coder", "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\nzqxj done."),
    ("qwen3_5", "ok\n</think>\n\n<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\nzqxj done."),
    ("seed_oss", "<seed:tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n</seed:tool_call>zqxj done."),
    ("ernie4_5", "x\n</think>\n\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\nzqxj done."),
    ("glm4_5", "<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\nzqxj done."),
    ("kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>zqxj done."),
    ("minimax_m2", "x</think>\n<minimax:tool_call>\n<invoke name=\"a\">\n<parameter name=\"x\">1</parameter>\n</invoke>\n</minimax:tool_call>\nzqxj done."),
    ("deepseek_r1", "x</think>\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>zqxj done."),
    ("deepseek_v3_1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>zqxj done."),
    ("deepseek_v3_2", "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"a\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>zqxj done."),
    ("gemma4", "Checking.<|tool_call>call:a{}<tool_call|>zqxj done."),
    ("functionary_v3_1", "<function=a>{}</function>zqxj done."),
    ("functionary_v3_2", "a\n{}zqxj done."),
    ("functionary_v3_2", "a\n{}>>>all\nzqxj done."),
    ("functionary_v3_2", "all\nSure.>>>zqxj"),
    ("mistral_small", "[TOOL_CALLS]a[ARGS]{} zqxj done."),
    ("apriel", r#"<tool_calls>[{"name": "a", "arguments": {}}]</tool_calls> zqxj done."#),
    ("nemotron_nano_v2", r#"<TOOLCALL>[{"name": "a", "arguments": {}}]</TOOLCALL> zqxj done."#),
    ("mistral_nemo", r#"[TOOL_CALLS][{"name": "a", "arguments": {}}] zqxj done."#),
    ("llama3_json", r#"<|python_tag|>{"name": "a", "parameters": {}} zqxj done."#),
    ("lfm2", "<|tool_call_start|>[a(x=1)]<|tool_call_end|>zqxj done."),
    ("phi4_mini", r#"<|tool_call|>{"name": "a", "arguments": {}}<|/tool_call|>zqxj done."#),
    ("granite3_3", r#"<|tool_call|>[{"name": "a", "arguments": {}}] zqxj done."#),
    ("firefunction_v2", r#" functools[{"name": "a", "arguments": {}}] zqxj done."#),
    ("gpt_oss", "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{}<|call|>zqxj done."),
    // Text outside the format's blocks, a second response.
    ("cohere_command_r7b", "zqxj plain text."),
    ("functionary_v3_2", "zqxj plain text."),
    ("functionary_v3_2", "all zqxj"),
    ("cohere_command_r7b", "<|START_RESPONSE|>a<|END_RESPONSE|><|START_RESPONSE|>zqxj<|END_RESPONSE|>"),
    ("cohere_command_r7b", "<|START_THINKING|>a<|END_THINKING|><|START_THINKING|>zqxj<|END_THINKING|>"),
];

#[test]
fn no_shipped_name_succeeds_while_dropping_what_the_model_wrote() {
    let mut failures = Vec::new();
    for (name, input) in PROBES {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        if let Ok(message) = spec.parse(input) {
            if !message.to_string().contains("zqxj") {
                failures.push(format!("{name}: {input:?} → {message} without the word"));
            }
        }
        let lenient = spec.parse_lenient(input, None).unwrap();
        let kept = lenient.message.to_string().contains("zqxj")
            || lenient.malformed.iter().any(|m| m.text.contains("zqxj"));
        if !kept {
            failures.push(format!(
                "{name}: {input:?} lenient lost the word: {lenient:?}"
            ));
        }
        for m in &lenient.malformed {
            if let Some((a, b)) = m.span {
                if input.get(a..b) != Some(m.text.as_str()) {
                    failures.push(format!(
                        "{name}: {input:?}: span {a}..{b} is not {:?}",
                        m.text
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every shipped family is probed.
    for name in chatparse::shipped::names() {
        assert!(
            PROBES.iter().any(|(n, _)| *n == name),
            "{name} has no probe"
        );
    }
}

/// Command R7B (issue 21, item 7): each of the three losses is a typed error saying what and
/// where, and lenient parsing keeps the rest of the message.
#[test]
fn cohere_losses_fail_strictly_and_are_set_aside_leniently() {
    let spec = chatparse::shipped::spec("cohere_command_r7b")
        .unwrap()
        .unwrap();
    let good =
        r#"{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}"#;
    let cases: [(String, &str, Vec<&str>, &str); 3] = [
        (
            format!(
                "<|START_THINKING|>Both.<|END_THINKING|><|START_ACTION|>[{good}]<|END_ACTION|><|START_ACTION|>[{{\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {{}}}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>"
            ),
            r#"<|START_ACTION|>[{"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}]<|END_ACTION|>"#,
            vec!["get_weather"],
            "a second action block",
        ),
        (
            format!("<|START_THINKING|>One.<|END_THINKING|><|START_ACTION|>{good}<|END_ACTION|>"),
            "",
            vec![],
            "the action block holds a JSON object",
        ),
        (
            format!(
                "<|START_ACTION|>[{good}, {{\"name\": \"get_time\", \"arguments\": {{\"tz\": \"UTC\"}}}}]<|END_ACTION|>"
            ),
            r#"{"name": "get_time", "arguments": {"tz": "UTC"}}"#,
            vec!["get_weather"],
            "action 1: a call with the keys name, arguments",
        ),
    ];
    for (input, set_aside, kept, what) in cases {
        let set_aside = if set_aside.is_empty() {
            // The lone object: the whole action block.
            let start = input.find("<|START_ACTION|>").unwrap();
            let end = input.find("<|END_ACTION|>").unwrap() + "<|END_ACTION|>".len();
            input[start..end].to_owned()
        } else {
            set_aside.to_owned()
        };
        let at = input.find(&set_aside).unwrap();
        // Strict: a typed error with what and where (the span and the position of its start).
        let e = spec.parse(&input).unwrap_err();
        match &e.kind {
            ParseErrorKind::NotUnderstood { what: w, span } => {
                assert!(w.starts_with(what), "{w}");
                assert_eq!(*span, (at, at + set_aside.len()));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.position.unwrap().offset, at);
        assert_eq!(e.pointer, "/properties/tool_calls");
        // The generated parser and the stream say the same.
        let generated = chatparse::models::cohere_command_r7b::parse_value(&input).unwrap_err();
        assert_eq!(generated, e);
        let mut stream = spec.stream(None, None).unwrap();
        stream.feed_with(&input, &mut |_| {}).unwrap();
        assert_eq!(stream.finish_with(&mut |_| {}).unwrap_err(), e);
        // The schema alone, as the reference, succeeds.
        assert!(spec.schema().unwrap().parse_schema_only(&input).is_ok());
        // Lenient: the rest kept, the part set aside with its exact text and span.
        let lenient = spec.parse_lenient(&input, None).unwrap();
        let names: Vec<&str> = lenient.message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| c["function"]["name"].as_str().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(names, kept, "{input}");
        assert_eq!(lenient.malformed.len(), 1, "{lenient:?}");
        let m = &lenient.malformed[0];
        assert_eq!(m.text, set_aside);
        assert_eq!(m.span, Some((at, at + set_aside.len())));
        assert_eq!(m.field.as_deref(), Some("tool_calls"));
        // The lenient stream ends the same, one character at a time, and sends no call that
        // the message leaves out.
        let mut stream = spec.stream_lenient(None, None).unwrap();
        let mut closed = Vec::new();
        let mut on_event = |event: chatparse::runtime::stream::Event<'_>| {
            if let chatparse::runtime::stream::Event::RegionClose {
                field: "tool_calls",
                value,
            } = event
            {
                closed.push(value.clone());
            }
        };
        for (i, c) in input.char_indices() {
            stream
                .feed_with(&input[i..i + c.len_utf8()], &mut on_event)
                .unwrap();
        }
        let message = stream.finish_with(&mut on_event).unwrap();
        assert_eq!(message, lenient.message);
        for value in closed {
            assert_eq!(Some(&value), lenient.message.get("tool_calls"), "{input}");
        }
    }
}

/// A check names the call the schema read from a part it does not understand, so that lenient
/// parsing leaves exactly that call out.
#[test]
fn unread_parts_say_what_the_schema_made_of_them() {
    let schema = chatparse::shipped::schema("mistral_nemo").unwrap();
    let input =
        r#"[TOOL_CALLS][{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": 1}}]"#;
    let unread = Check::MistralJsonList.unread(&schema, input);
    assert_eq!(unread.len(), 1);
    assert_eq!(unread[0].read_as, ReadAs::Item(1));
    let lenient = schema.parse_lenient(input);
    assert_eq!(lenient.message["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(lenient.message["tool_calls"][0]["function"]["name"], "a");
    assert_eq!(
        lenient.malformed[0].text,
        r#"{"name": "b", "parameters": {"x": 1}}"#
    );
    assert!(matches!(lenient.message, Value::Object(_)));
}

/// What follows an end token is not read by the schema, so a check does not look at it either
/// (found by the lenient fuzz target: a Llama 3 call after `<|eot_id|>`).
#[test]
fn checks_stop_at_the_end_token() {
    let spec = chatparse::shipped::spec("llama3_json").unwrap().unwrap();
    let input = r#"<|eot_id|><|python_tag|>{"name": "f", "args": {}}"#;
    assert_eq!(
        spec.parse(input).unwrap(),
        chatparse::json!({"role": "assistant"})
    );
    assert!(spec
        .parse_lenient(input, None)
        .unwrap()
        .malformed
        .is_empty());
}

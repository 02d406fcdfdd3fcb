//! Generated parsers read a call's JSON in place (issue 17): tool arguments stay the model's text
//! (`JsonObject`), checked, and a call under `{type: 'function', function: @}` is built from its
//! fields found in the text, without its dict. Every output here must give what the interpreter
//! (`Schema::parse`, held to the reference by the conformance suites) gives — the same JSON, or
//! the same error, message and position — including the calls the in-place reading declines
//! (repeated or escaped keys, `NaN`, deep nesting, arguments that are not an object) and the
//! JSON errors it must leave to the full parse.

use chatparse::models;
use chatparse::shipped;

/// Call bodies (`{"name": …, "arguments": …}`) that exercise each branch.
const CALLS: &[&str] = &[
    r#"{"name": "get_weather", "arguments": {"city": "Zürich", "days": 3}}"#,
    r#"{"arguments": {"city": "Paris"}, "name": "get_weather"}"#,
    "{\n  \"name\": \"f\",\n  \"arguments\": {\n    \"a\": [1, 2, {\"b\": null}]\n  }\n}",
    r#"  {"name":"f","arguments":{}}  "#,
    r#"{"name": "f\u00e9\n", "arguments": {"k\"ey": "v\\alue"}}"#,
    r#"{"na\u006de": "f", "arguments": {"a": 1}}"#,
    r#"{"name": "a", "name": "b", "arguments": {"x": 1}}"#,
    r#"{"name": "f", "arguments": {"a": 1, "a": 2, "b": 3}}"#,
    r#"{"name": "f", "arguments": null}"#,
    r#"{"name": "f", "arguments": "{\"a\": 1}"}"#,
    r#"{"name": "f", "arguments": [1, 2]}"#,
    r#"{"name": "f", "arguments": 7}"#,
    r#"{"name": null, "arguments": {}}"#,
    r#"{"name": 5, "arguments": {}}"#,
    r#"{"arguments": {"a": 1}}"#,
    r#"{}"#,
    r#"{"name": "f", "arguments": {}, "id": "call_1", "type": "function", "extra": [true]}"#,
    r#"{"name": "f", "arguments": {"n": NaN}}"#,
    r#"{"name": "f", "arguments": {"n": 1e400}}"#,
    r#"{"name": "f", "arguments": {"s": "\ud83d\ude00", "lone": "\udc00"}}"#,
    r#"{"name": "f", "arguments": {"big": 123456789012345678901234567890, "f": 1.50, "e": 1E5, "z": -0}}"#,
    r#"{"name": "f", "arguments": {"a": 1,}}"#,
    r#"{"name": "f", "arguments": {"a": 1}"#,
    r#"{"name": "f", "arguments": {"a": 1}} trailing"#,
    "{\"name\": \"f\", \"arguments\": {\"tab\": \"a\tb\"}}",
    r#"[{"name": "f", "arguments": {}}]"#,
    r#""just a string""#,
    r#"{"k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "name": "f"}"#,
];

/// A value nested `depth` levels inside the arguments.
fn deep_call(depth: usize) -> String {
    format!(
        r#"{{"name": "f", "arguments": {{"d": {}1{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// Both back ends on `output`: the same JSON, or errors that read the same.
fn assert_same(name: &str, output: &str) {
    let spec = shipped::spec(name).unwrap().unwrap();
    let generated = models::parse_value_fn(name).unwrap();
    match (spec.parse(output), generated(output)) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}: {output:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}: {output:?}"),
        (a, b) => panic!("{name}: {output:?}\n  interpreter {a:?}\n  generated   {b:?}"),
    }
}

fn calls() -> impl Iterator<Item = String> {
    CALLS
        .iter()
        .map(|c| c.to_string())
        .chain([deep_call(3), deep_call(126), deep_call(200)])
}

#[test]
fn wrapped_calls_agree_with_the_interpreter() {
    for call in calls() {
        for output in [
            format!("<tool_call>\n{call}\n</tool_call>"),
            format!("Sure.\n<tool_call>\n{call}\n</tool_call>\n<tool_call>\n{call}\n</tool_call>"),
            format!("<tool_call>{call}"),
        ] {
            assert_same("hermes", &output);
            assert_same("qwen3", &output);
            assert_same(
                "qwen3",
                &format!("<think>\nLet me call.\n</think>\n\n{output}"),
            );
            // The root substitution rebuilds the text (owned): the call is parsed as a whole.
            assert_same("qwen3", &format!("Let me call.\n</think>\n\n{output}"));
        }
        assert_same("smollm3", &format!("<tool_call>\n{call}\n</tool_call>"));
    }
}

#[test]
fn arguments_parsed_by_their_own_node_agree_with_the_interpreter() {
    for call in calls() {
        // The arguments object alone, as gpt-oss and Kimi K2 write it.
        let arguments = match chatparse::value::from_str(&call) {
            Ok(chatparse::Value::Object(map)) => map.get("arguments").map(|a| a.to_string()),
            _ => None,
        };
        let raw = call
            .split_once(r#""arguments": "#)
            .map(|(_, rest)| rest.trim_end_matches('}').to_owned());
        for args in arguments.into_iter().chain(raw) {
            assert_same(
                "gpt_oss",
                &format!(
                    "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{args}<|call|>"
                ),
            );
            assert_same(
                "kimi_k2",
                &format!(
                    "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
                ),
            );
        }
    }
}

/// Arguments that are one JSON object stay the model's own text, lent from the output; a call
/// under the wrap lends its name too.
#[test]
fn arguments_are_the_models_text() {
    let output = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":  \"Zürich\"}}\n</tool_call>";
    let message = models::hermes::parse(output).unwrap().unwrap();
    let call = &message.tool_calls.as_ref().unwrap().as_deref().unwrap()[0];
    let function = call.function.as_ref().unwrap().as_ref().unwrap();
    let arguments = function.arguments.as_ref().unwrap().as_ref().unwrap();
    assert_eq!(arguments.text(), Some("{\"city\":  \"Zürich\"}"));
    let at = arguments.text().unwrap().as_ptr() as usize - output.as_ptr() as usize;
    assert_eq!(&output[at..at + 8], "{\"city\":", "lent from the output");
    assert!(matches!(
        function.name,
        Some(std::borrow::Cow::Borrowed("get_weather"))
    ));
    assert_eq!(
        arguments.to_value(),
        chatparse::json!({"city": "Zürich"}),
        "the dict when asked"
    );

    let output =
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|> {\"a\": [1]} <|call|>";
    let message = models::gpt_oss::parse(output).unwrap();
    let function = message.tool_calls.as_deref().unwrap()[0]
        .function
        .as_ref()
        .unwrap();
    assert_eq!(
        function.arguments.as_ref().unwrap().text(),
        Some("{\"a\": [1]}")
    );

    // Not vouched for (NaN): parsed the full way, so the interpreter's error.
    let output =
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": NaN}<|call|>";
    assert!(models::gpt_oss::parse(output).is_err());
}

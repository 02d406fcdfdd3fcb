//! `response_parser!(chat_template = "…")`: the parser derived from a chat template at build time.

chatparse::response_parser!(pub mod chatml = chat_template = "tests/derive/chatml_tools.jinja");

#[test]
fn the_derived_parser_is_generated_at_build_time() {
    let out = "<think>\nLook it up.\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>";
    let message = chatml::parse(out).expect("parses");
    let value = serde_json::to_value(&message).unwrap();
    assert_eq!(value["reasoning_content"], "Look it up.");
    assert_eq!(value["content"], "Checking.");
    assert_eq!(
        value["tool_calls"][0]["function"]["arguments"]["city"],
        "Paris"
    );
}

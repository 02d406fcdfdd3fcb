//! `response_parser!` on the shipped response templates (the streaming format), checked against
//! the streaming reference corpus (`tests/streaming/expected/`, from transformers 5.23.0): the
//! generated `parse`/`stream` give the reference's events and messages. (This also puts the
//! generated code under `cargo clippy --all-targets`.)

use chatparse::runtime::stream::{Event, StreamParser};
use chatparse::Value;

chatparse::response_parser!("response_templates/qwen3.json");
chatparse::response_parser!(mod gemma = "response_templates/gemma4.json");
chatparse::response_parser!(pub(crate) mod qwen3_5 = "response_templates/qwen3_5.json");

fn corpus(template: &str) -> Value {
    let path = format!(
        "{}/tests/streaming/expected/{template}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    chatparse::value::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn events(events: &[Event<'_>]) -> Value {
    Value::Array(events.iter().map(Event::to_json).collect())
}

type Parse = fn(&str, &str, &[Value]) -> Result<Value, chatparse::ParseError>;
type Stream = fn(&str, &[Value]) -> Result<StreamParser<'static>, chatparse::ParseError>;

/// Every recorded chunking of every case that the reference completes: the same events per
/// feed, the same finalize events and message; and `parse` gives the one-shot message.
fn check(template: &str, parse: Parse, stream: Stream) -> usize {
    let mut checked = 0;
    for case in corpus(template)["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let prefix = case["prefix"].as_str().unwrap();
        let tools = case["tools"].as_array().cloned().unwrap_or_default();
        for chunking in case["chunkings"].as_array().unwrap() {
            let outcome = &chunking["outcome"];
            if outcome.get("message").is_none() {
                continue; // the reference raises (tests/streaming.rs checks those)
            }
            let mut parser = stream(prefix, &tools).unwrap();
            assert_eq!(events(&parser.initial_events()), case["init"]["events"]);
            let chunks = chunking["chunks"].as_array().unwrap();
            for (chunk, want) in chunks.iter().zip(chunking["feeds"].as_array().unwrap()) {
                let got = events(&parser.feed(chunk.as_str().unwrap()).unwrap());
                assert_eq!(&got, want, "{template}/{name}");
            }
            let (message, finals) = parser.finish().unwrap();
            assert_eq!(events(&finals), outcome["finalize_events"]);
            assert_eq!(message.to_string(), outcome["message"].to_string());
            if chunking["name"] == "one_shot" {
                let input = case["input"].as_str().unwrap();
                let one = parse(input, prefix, &tools).unwrap();
                assert_eq!(one.to_string(), outcome["message"].to_string());
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn generated_template_modules_match_the_reference() {
    let n = check("qwen3", qwen3::parse_with_tools, qwen3::stream_with_tools)
        + check("gemma4", gemma::parse_with_tools, gemma::stream_with_tools)
        + check(
            "qwen3_5",
            qwen3_5::parse_with_tools,
            qwen3_5::stream_with_tools,
        );
    assert!(n > 300, "{n}");
    assert_eq!(
        qwen3::TEMPLATE,
        include_str!("../response_templates/qwen3.json")
    );
    assert_eq!(
        qwen3::template().as_value(),
        chatparse::templates::template("qwen3").unwrap().as_value()
    );
    let message = qwen3::parse("<think>\nEasy.\n</think>\n\nParis.<|im_end|>", "").unwrap();
    assert_eq!(message["content"], "Paris.");
    assert!(qwen3::stream("").is_ok() && gemma::stream("").is_ok());
}

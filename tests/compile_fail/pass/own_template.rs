// A crate outside the workspace using `response_parser!` on a response_template of its own (a
// copy of the shipped `response_templates/qwen3.json`): one-shot parse and streaming.

chatparse::response_parser!("tests/compile_fail/schemas/pass_template.json");

use chatparse::runtime::stream::Event;

// Case `think_then_answer` of `tests/streaming/expected/qwen3.json`, recorded from
// transformers 5.23.0 (`scripts/reference/stream_generate.py`): prefix, input, the chunking
// `size_16`, the events of each feed and of finalize, and the message.
const PREFIX: &str = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n";
const INPUT: &str = "<think>\nLet me think.\n</think>\n\nThe answer is 4.<|im_end|>";
const CHUNKS: [&str; 4] = [
    "<think>\nLet me t",
    "hink.\n</think>\n\n",
    "The answer is 4.",
    "<|im_end|>",
];
const FEEDS: &str = r#"[[{"type":"region_open","field":"reasoning_content"},{"type":"region_chunk","field":"reasoning_content","text":"\nLet me t","dirty":false}],[{"type":"region_chunk","field":"reasoning_content","text":"hink.\n","dirty":false},{"type":"region_close","field":"reasoning_content","value":"Let me think."}],[{"type":"region_open","field":"content"},{"type":"region_chunk","field":"content","text":"\n\nThe answer is 4.","dirty":false}],[]]"#;
const FINALIZE: &str = r#"[{"type":"region_close","field":"content","value":"The answer is 4."}]"#;
const MESSAGE: &str =
    r#"{"role":"assistant","reasoning_content":"Let me think.","content":"The answer is 4."}"#;

fn json(events: &[Event<'_>]) -> String {
    let values: Vec<_> = events.iter().map(Event::to_json).collect();
    serde_json::to_string(&values).expect("serializes")
}

fn main() {
    let message = pass_template::parse(INPUT, PREFIX).expect("the output parses");
    assert_eq!(
        serde_json::to_string(&message).expect("serializes"),
        MESSAGE
    );

    let mut parser = pass_template::stream(PREFIX).expect("the prefix parses");
    assert!(parser.initial_events().is_empty());
    let mut feeds = Vec::new();
    for chunk in CHUNKS {
        feeds.push(json(&parser.feed(chunk).expect("feeds")));
    }
    assert_eq!(format!("[{}]", feeds.join(",")), FEEDS);
    let (message, events) = parser.finish().expect("finishes");
    assert_eq!(json(&events), FINALIZE);
    assert_eq!(
        serde_json::to_string(&message).expect("serializes"),
        MESSAGE
    );

    // The embedded template is the file's text, and loads like any other.
    assert!(pass_template::TEMPLATE.contains("\"start_anchor\""));
    assert_eq!(
        pass_template::template().field_names().collect::<Vec<_>>(),
        ["reasoning_content", "tool_calls", "content"]
    );
}

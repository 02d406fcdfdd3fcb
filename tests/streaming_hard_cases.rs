//! The streaming cases users of inference servers hit (issue 15), each a test on shipped names:
//! the expected messages are written out from the family's chat-template format, and every
//! stream must also end with the one-shot parse of the same text.

mod support;

use chatparse::runtime::stream::Event;
use chatparse::runtime::Spec;
use chatparse::{json, Value};
use support::same_value;

fn spec(name: &str) -> Spec {
    chatparse::shipped::spec(name).unwrap().unwrap()
}

/// What one feed sent: text per field, and calls closed.
#[derive(Default, Debug)]
struct Feed {
    text: Vec<(String, String)>,
    calls: Vec<Value>,
}

/// Streams `chunks` (after `prefix`); the events of each feed, and the final message.
fn stream(spec: &Spec, prefix: Option<&str>, chunks: &[&str]) -> (Vec<Feed>, Value) {
    let mut parser = spec.stream(prefix, None).unwrap();
    let mut feeds = Vec::new();
    let record = |feed: &mut Feed, e: Event<'_>| match e {
        Event::RegionChunk { field, text, dirty } if !dirty => {
            feed.text.push((field.to_owned(), text.into_owned()))
        }
        Event::RegionClose {
            field: "tool_calls",
            value,
        } => match value {
            Value::Array(items) => feed.calls.extend(items),
            one => feed.calls.push(one),
        },
        _ => {}
    };
    for chunk in chunks {
        let mut feed = Feed::default();
        parser
            .feed_with(chunk, &mut |e| record(&mut feed, e))
            .unwrap();
        feeds.push(feed);
    }
    let mut last = Feed::default();
    let message = parser.finish_with(&mut |e| record(&mut last, e)).unwrap();
    feeds.push(last);
    let text: String = chunks.concat();
    let one_shot = match prefix {
        Some(p) => spec.parse_with_prefix(&text, p),
        None => spec.parse(&text),
    }
    .unwrap();
    assert!(same_value(&message, &one_shot), "{message} vs {one_shot}");
    (feeds, message)
}

fn text_of(feed: &Feed, field: &str) -> String {
    feed.text
        .iter()
        .filter(|(f, _)| f == field)
        .map(|(_, t)| t.as_str())
        .collect()
}

#[test]
fn a_prompt_opened_think_streams_reasoning_from_the_first_token() {
    let (feeds, message) = stream(
        &spec("qwen3"),
        Some("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"),
        &["The user", " greets.\n</th", "ink>\n\nHello!", "<|im_end|>"],
    );
    assert_eq!(text_of(&feeds[0], "reasoning_content"), "The user");
    assert_eq!(text_of(&feeds[1], "reasoning_content"), " greets.");
    assert_eq!(text_of(&feeds[2], "content"), "Hello!");
    assert_eq!(
        message,
        json!({"role": "assistant", "reasoning_content": "The user greets.", "content": "Hello!"})
    );
}

#[test]
fn a_model_that_skips_reasoning_streams_content_at_once() {
    // Qwen3's template with enable_thinking=False ends the prompt with an empty think block.
    let (feeds, message) = stream(
        &spec("qwen3"),
        Some("<|im_start|>assistant\n<think>\n\n</think>\n\n"),
        &["Hel", "lo!", "<|im_end|>"],
    );
    assert_eq!(text_of(&feeds[0], "content"), "Hel");
    assert_eq!(text_of(&feeds[1], "content"), "lo!");
    assert_eq!(message, json!({"role": "assistant", "content": "Hello!"}));
    // Hermes models without a think block: content from the first byte.
    let (feeds, _) = stream(&spec("hermes"), None, &["Sure", ", here."]);
    assert_eq!(text_of(&feeds[0], "content"), "Sure");
}

#[test]
fn without_a_prefix_only_what_a_later_close_could_change_is_held() {
    // Qwen3 2507 Thinking: the prompt opened <think>, the output starts inside it.
    let (feeds, message) = stream(
        &spec("qwen3"),
        None,
        &["Reasoning", " here.</think>", "\n\nAnswer", "."],
    );
    assert_eq!(text_of(&feeds[0], "reasoning_content"), "");
    assert_eq!(text_of(&feeds[1], "reasoning_content"), "Reasoning here.");
    assert_eq!(text_of(&feeds[2], "content"), "Answer");
    assert_eq!(
        message,
        json!({"role": "assistant", "reasoning_content": "Reasoning here.", "content": "Answer."})
    );
}

#[test]
fn reasoning_only_outputs() {
    // Cut off while thinking (finish reason `length`): the reasoning so far, no content.
    let (feeds, message) = stream(&spec("hermes"), None, &["<think>\nStill thi", "nking"]);
    assert_eq!(text_of(&feeds[0], "thinking"), "Still thi");
    assert_eq!(
        message,
        json!({"role": "assistant", "thinking": "Still thinking"})
    );
    // DeepSeek-R1: the prompt opens <think>, untagged text is reasoning.
    let (feeds, message) = stream(&spec("deepseek_r1"), None, &["Let me ", "see"]);
    assert_eq!(text_of(&feeds[0], "reasoning_content"), "Let me");
    assert_eq!(
        message,
        json!({"role": "assistant", "reasoning_content": "Let me see"})
    );
}

#[test]
fn a_tool_call_inside_an_unclosed_reasoning_block_stays_reasoning() {
    // The schema reads everything after an unclosed <think> as reasoning: no call is sent early
    // or late.
    let (feeds, message) = stream(
        &spec("qwen3"),
        Some("<|im_start|>assistant\n<think>\n"),
        &[
            "I could call <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
            " but no.",
        ],
    );
    assert!(feeds.iter().all(|f| f.calls.is_empty()));
    assert_eq!(
        message,
        json!({"role": "assistant", "reasoning_content": "I could call <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> but no."})
    );
}

#[test]
fn many_tokens_in_one_chunk() {
    // Speculative decoding: two whole calls in one feed, then a call and the end token in one.
    let call = |name: &str| {
        format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {{}}}}\n</tool_call>")
    };
    let chunks = [
        "Checking.\n".to_owned(),
        format!("{}\n{}\n", call("a"), call("b")),
        format!("{}<|im_end|>", call("c")),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (feeds, message) = stream(&spec("hermes"), None, &chunks);
    let names = |f: &Feed| -> Vec<String> {
        f.calls
            .iter()
            .map(|c| c["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&feeds[1]), ["a", "b"]);
    assert_eq!(names(&feeds[2]), ["c"]);
    assert_eq!(message["content"], "Checking.");
    assert_eq!(message["tool_calls"].as_array().unwrap().len(), 3);
}

#[test]
fn delimiter_text_inside_json_string_arguments() {
    // A reasoning marker inside an argument string is part of the argument.
    let (_, message) = stream(
        &spec("hermes"),
        None,
        &[
            "<tool_call>\n{\"name\": \"say\", \"arguments\": {\"text\": \"<think> and </think>\"}}",
            "\n</tool_call>",
        ],
    );
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        json!({"text": "<think> and </think>"})
    );
    // The call's own closer inside a string ends the call there, as the reference's lazy
    // iterator does; strictly that is an error, in one shot and streamed alike.
    let s = spec("hermes");
    let text = "<tool_call>\n{\"name\": \"say\", \"arguments\": {\"text\": \"</tool_call>\"}}\n</tool_call>";
    assert!(s.parse(text).is_err());
    let mut parser = s.stream(None, None).unwrap();
    parser.feed_with(text, &mut |_| {}).unwrap();
    assert!(parser.finish_with(&mut |_| {}).is_err());
}

#[test]
fn a_closing_tag_split_across_chunks() {
    let (feeds, message) = stream(
        &spec("kimi_k2"),
        None,
        &[
            "<think>Plan.</th",
            "ink>On it.<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_",
            "end|><|tool_calls_section_end|><|im_end|>",
        ],
    );
    // `</th` is held back until `ink>` decides it; the call is sent when its closer completes.
    assert_eq!(text_of(&feeds[0], "reasoning_content"), "Plan.");
    assert_eq!(text_of(&feeds[1], "content"), "On it.");
    assert!(feeds[1].calls.is_empty());
    assert_eq!(feeds[2].calls.len(), 1);
    assert_eq!(message["tool_calls"][0]["id"], "functions.f:0");
}

// `response_parser!(…, stream)` on a schema whose fields are literal-delimited regions: the
// module also streams, and the streamed message equals the one-shot parse for every split point.

chatparse::response_parser!("tests/compile_fail/schemas/pass_stream.json", stream);
chatparse::response_parser!(pub(crate) mod named = "tests/compile_fail/schemas/pass_stream.json", stream,);

use chatparse::runtime::stream::Event;

const OUTPUT: &str = "<think>Weather in Oslo?</think><tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call><answer>Checking.<|end|>";

fn main() {
    let want = pass_stream::parse_value(OUTPUT).expect("the output parses");
    for cut in (0..=OUTPUT.len()).filter(|&i| OUTPUT.is_char_boundary(i)) {
        let mut parser: pass_stream::StreamParser = pass_stream::stream();
        let mut thinking = String::new();
        for chunk in [&OUTPUT[..cut], &OUTPUT[cut..]] {
            for event in parser.feed(chunk).expect("feed") {
                if let Event::RegionChunk { field: "thinking", text, .. } = event {
                    thinking.push_str(&text);
                }
            }
        }
        let (message, _) = parser.finish().expect("finish");
        assert_eq!(message, want);
        assert_eq!(thinking, "Weather in Oslo?");
    }
    assert_eq!(want["tool_calls"][0]["function"]["name"], "get_weather");
    let (message, _) = named::stream().finish().expect("empty output");
    assert_eq!(message, chatparse::json!({"role": "assistant"}));
}

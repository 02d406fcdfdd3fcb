//! Issue 21: tool arguments nested as deep as the JSON parser accepts
//! ([`MAX_DEPTH`](chatparse::runtime::py::json::MAX_DEPTH) levels, arrays and objects) parse,
//! stream, serialize, convert and drop on a small thread stack: 256 KB in optimised builds, 2 MB
//! (the std/tokio default) in debug builds, where frames are several times larger. Nesting must be
//! an error or a value, never an abort.

mod support;

use chatparse::runtime::openai::{to_message, CounterIds, Options};
use chatparse::runtime::py::json::MAX_DEPTH;
use chatparse::runtime::Spec;
use chatparse::{shipped, Value};

/// The stack the README promises is enough.
const STACK: usize = if cfg!(debug_assertions) {
    2 << 20
} else {
    256 << 10
};

/// Runs `f` on a thread with [`STACK`] bytes of stack (an overflow aborts the test binary).
/// `DEEP_VALUES_STACK` (bytes) overrides it, to measure how much is needed.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let stack = std::env::var("DEEP_VALUES_STACK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(STACK);
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// `depth` levels of objects (`{"k": {… {"k": 1} …}}`), or of arrays in one object (`{"k":
/// [[…[1]…]]}`: tool arguments are an object).
fn nested(depth: usize, object: bool) -> String {
    if object {
        format!("{}1{}", r#"{"k": "#.repeat(depth), "}".repeat(depth))
    } else {
        let arrays = depth - 1;
        format!(r#"{{"k": {}1{}}}"#, "[".repeat(arrays), "]".repeat(arrays))
    }
}

/// How deep `v` nests (iteratively).
fn depth_of(v: &Value) -> usize {
    let mut depth = 0;
    let mut at = v;
    loop {
        at = match at {
            Value::Array(a) if !a.is_empty() => &a[0],
            Value::Object(m) if !m.is_empty() => m.values().next().unwrap(),
            _ => return depth,
        };
        depth += 1;
    }
}

/// Model outputs whose one tool call has arguments at the deepest nesting the parser accepts.
fn outputs(object: bool) -> Vec<(&'static str, String, usize)> {
    // hermes and qwen3 decode `{"name": …, "arguments": ARGS}`: one level for the call itself.
    let inner = nested(MAX_DEPTH - 1, object);
    let whole = nested(MAX_DEPTH, object);
    vec![
        (
            "hermes",
            format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {inner}}}\n</tool_call>"),
            MAX_DEPTH - 1,
        ),
        (
            "qwen3",
            format!("<think>\nok\n</think>\n\n<tool_call>\n{{\"name\": \"f\", \"arguments\": {inner}}}\n</tool_call>"),
            MAX_DEPTH - 1,
        ),
        (
            "gpt_oss",
            format!("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{whole}<|call|>"),
            MAX_DEPTH,
        ),
    ]
}

/// The arguments of the message's first tool call, wherever the schema puts them.
fn arguments(message: &Value) -> &Value {
    let call = &message["tool_calls"][0];
    match call.get("function") {
        Some(function) => &function["arguments"],
        None => &call["arguments"],
    }
}

fn exercise(message: Value, name: &str, depth: usize) {
    let args = arguments(&message);
    assert_eq!(depth_of(args), depth, "{name}: {message:.200}");
    let text = message.to_string();
    assert_eq!(serde_json::to_string(&message).unwrap(), text, "{name}");
    assert_eq!(
        format!("{message:#}").len(),
        chatparse::value::to_string_pretty(&message).len()
    );
    // The arguments alone are within the parser's limit (the whole message is deeper).
    assert_eq!(
        &chatparse::value::from_str(&args.to_string()).unwrap(),
        args,
        "{name}"
    );
    let copy = message.clone();
    assert!(chatparse::runtime::py::identical(&copy, &message));
    let openai = to_message(
        &message,
        None,
        &Options::default(),
        &mut CounterIds::default(),
    );
    let arguments_text = openai["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(
        depth_of(&chatparse::value::from_str(arguments_text).unwrap()),
        depth,
        "{name}"
    );
    drop((message, copy, openai));
}

#[test]
fn interpreter_at_the_depth_limit() {
    on_small_stack(|| {
        for object in [false, true] {
            for (name, output, depth) in outputs(object) {
                let message = shipped::schema(name).unwrap().parse(&output).unwrap();
                exercise(message, name, depth);
            }
        }
    });
}

#[cfg(feature = "models")]
#[test]
fn generated_parsers_at_the_depth_limit() {
    on_small_stack(|| {
        for object in [false, true] {
            for (name, output, depth) in outputs(object) {
                let parse = chatparse::models::parse_value_fn(name).unwrap();
                exercise(parse(&output).unwrap(), name, depth);
            }
            let (_, output, _) = &outputs(object)[2];
            let typed = chatparse::models::gpt_oss::parse(output).unwrap();
            let text = serde_json::to_string(&typed).unwrap();
            let back = chatparse::value::to_value(&typed).unwrap();
            assert_eq!(back.to_string(), text);
            assert_eq!(depth_of(arguments(&back)), MAX_DEPTH);
            drop((typed, back));
        }
    });
}

#[test]
fn streams_at_the_depth_limit() {
    on_small_stack(|| {
        for object in [false, true] {
            for (name, output, depth) in outputs(object) {
                let spec = shipped::spec(name).unwrap().unwrap();
                let mut stream = spec.stream(None, None).unwrap();
                for chunk in output.as_bytes().chunks(97) {
                    stream
                        .feed_with(std::str::from_utf8(chunk).unwrap(), &mut |_| {})
                        .unwrap();
                }
                let message = stream.finish_with(&mut |_| {}).unwrap();
                exercise(message, name, depth);

                let mut deltas = support::counter_deltas(&spec);
                let mut chunks = Vec::new();
                for chunk in output.as_bytes().chunks(97) {
                    chunks.extend(deltas.feed(std::str::from_utf8(chunk).unwrap()).unwrap());
                }
                let (last, message) = deltas.finish().unwrap();
                chunks.extend(last);
                assert!(!chunks.is_empty());
                assert!(
                    message["tool_calls"][0]["function"]["arguments"].is_string(),
                    "{name}"
                );
            }
            // A response template (qwen3's), streamed after its prompt.
            let spec = Spec::from_json_str(chatparse::templates::text("qwen3").unwrap()).unwrap();
            let (_, output, depth) = &outputs(object)[1];
            let mut stream = spec.stream(Some("<|im_start|>assistant\n"), None).unwrap();
            for chunk in output.as_bytes().chunks(61) {
                stream
                    .feed_with(std::str::from_utf8(chunk).unwrap(), &mut |_| {})
                    .unwrap();
            }
            let message = stream.finish_with(&mut |_| {}).unwrap();
            exercise(message, "qwen3 template", *depth);
        }
    });
}

#[test]
fn one_level_deeper_is_an_error() {
    on_small_stack(|| {
        for object in [false, true] {
            let too_deep = nested(MAX_DEPTH + 1, object);
            let output = format!("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{too_deep}<|call|>");
            assert!(shipped::schema("gpt_oss").unwrap().parse(&output).is_err());
        }
    });
}

//! Streaming equals one-shot for every shipped name and every chunking: the final message (or
//! the error) of a stream fed in chunks is the one-shot parse's, and the text each field streamed
//! is its final value when the message parses; the calls closed while the text streamed, then the
//! rest sent at the end, are the final message's calls in order.
#![no_main]

use chatparse::runtime::stream::Event;
use chatparse::runtime::Value;
use chatparse_fuzz::{agree, case, show, stream_in_chunks};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else { return };
    let one_shot = case.spec.parse(&case.text);
    let stream = case.spec.stream(None, None).expect("shipped names stream");
    let mut streamed: Vec<(String, String)> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut on_event = |event: Event<'_>| match event {
        Event::RegionChunk { field, text, .. } => {
            match streamed.iter_mut().find(|(f, _)| f == field) {
                Some((_, t)) => t.push_str(&text),
                None => streamed.push((field.to_owned(), text.into_owned())),
            }
        }
        // A call closed while the text streams (an object), or at the end the calls not sent
        // yet (an array).
        Event::RegionClose {
            field: "tool_calls",
            value,
        } => match value {
            Value::Array(rest) => calls.extend(rest),
            value => calls.push(value),
        },
        _ => {}
    };
    let last = stream_in_chunks(stream, &case.text, case.seed, &mut on_event);
    assert!(
        agree(&one_shot, &last),
        "{} seed {}: {:?}\n one-shot {}\n streamed {}",
        case.name,
        case.seed,
        case.text,
        show(&one_shot),
        show(&last),
    );
    if let Ok(message) = &last {
        for (field, text) in &streamed {
            if let Some(Some(value)) = message.get(field.as_str()).map(|v| v.as_str()) {
                assert_eq!(
                    value, text,
                    "{} seed {}: {:?}: field {field}",
                    case.name, case.seed, case.text
                );
            }
        }
        // (A field the message holds as `null` closed as `null`.)
        let expected = match message.get("tool_calls") {
            Some(Value::Array(final_calls)) => final_calls.as_slice(),
            Some(other) => std::slice::from_ref(other),
            None => &[],
        };
        assert!(
            calls.len() == expected.len()
                && calls
                    .iter()
                    .zip(expected)
                    .all(|(a, b)| chatparse::runtime::py::identical(a, b)),
            "{} seed {}: {:?}: the calls streamed {:?}, the message's {:?}",
            case.name,
            case.seed,
            case.text,
            calls,
            expected
        );
    }
});

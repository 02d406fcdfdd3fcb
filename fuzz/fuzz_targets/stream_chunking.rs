//! Streaming equals one-shot for every shipped name and every chunking: the final message (or
//! the error) of a stream fed in chunks is the one-shot parse's, and the text each field streamed
//! is its final value when the message parses.
#![no_main]

use chatparse::runtime::stream::Event;
use chatparse_fuzz::{agree, case, show, stream_in_chunks};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else { return };
    let one_shot = case.spec.parse(&case.text);
    let stream = case.spec.stream(None, None).expect("shipped names stream");
    let mut streamed: Vec<(String, String)> = Vec::new();
    let mut on_event = |event: Event<'_>| {
        if let Event::RegionChunk { field, text, .. } = event {
            match streamed.iter_mut().find(|(f, _)| f == field) {
                Some((_, t)) => t.push_str(&text),
                None => streamed.push((field.to_owned(), text.into_owned())),
            }
        }
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
    }
});

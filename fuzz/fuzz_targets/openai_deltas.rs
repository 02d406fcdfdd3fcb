//! OpenAI deltas for every shipped name and chunking: the first chunk is the role, ids, types and
//! names are sent once per call, each call's argument fragments concatenate to its final
//! `arguments`, the finish reason follows the calls, and the message the deltas rebuild is the
//! one-shot conversion's (`openai::parse`), errors included.
#![no_main]

use chatparse::runtime::openai::{self, CounterIds, DeltaStream, Options};
use chatparse::{ParseErrorKind, Value};
use chatparse_fuzz::{case, chunks};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else { return };
    let at = format!("{} seed {}: {:?}", case.name, case.seed, case.text);
    let one_shot = openai::parse(
        case.spec,
        &case.text,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    );
    let run = |options: Options| {
        let mut stream = DeltaStream::from_spec(
            case.spec,
            None,
            None,
            options,
            Box::new(CounterIds::default()),
        )
        .expect("shipped names stream");
        let mut sent: Vec<Value> = Vec::new();
        for chunk in chunks(&case.text, case.seed) {
            match stream.feed(chunk) {
                Ok(chunks) => sent.extend(chunks),
                Err(e) => return (sent, Err(e)),
            }
        }
        match stream.finish() {
            Ok((last, message)) => {
                sent.extend(last);
                (sent, Ok(message))
            }
            Err(e) => (sent, Err(e)),
        }
    };
    let (mut sent, mut streamed) = run(Options::default());
    // A call that takes back what was sent (a parameter written twice) fails an
    // argument-streaming strict stream; holding the arguments to the close must then give exactly
    // the one-shot message.
    if one_shot.is_ok()
        && matches!(&streamed, Err(e) if matches!(e.kind, ParseErrorKind::StreamedCallChanged(_)))
    {
        (sent, streamed) = run(Options {
            arguments_at_close: true,
            ..Options::default()
        });
    }
    let message = streamed.ok();
    match (&one_shot, &message) {
        (Ok(a), Some(b)) => assert!(
            chatparse::runtime::py::identical(a, b),
            "{at}\n one-shot {a}\n streamed {b}"
        ),
        (Err(_), None) => return,
        _ => panic!("{at}: one-shot {one_shot:?}, streamed {message:?}"),
    }
    let Some(message) = message else { return };
    // Rebuild the calls from the chunks.
    assert_eq!(
        sent[0]["delta"],
        chatparse::json!({"role": "assistant"}),
        "{at}"
    );
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for (i, chunk) in sent.iter().enumerate() {
        let last = i + 1 == sent.len();
        assert_eq!(chunk["finish_reason"].is_null(), !last, "{at}: {chunk}");
        for call in chunk["delta"]
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call["index"].as_u64().expect("an index") as usize;
            let fragment = call["function"]["arguments"].as_str().unwrap_or("");
            if index == calls.len() {
                let id = call["id"].as_str().expect("the id in a call's first delta");
                let name = call["function"]["name"]
                    .as_str()
                    .expect("the name in the first delta");
                calls.push((id.to_owned(), name.to_owned(), fragment.to_owned()));
            } else {
                assert_eq!(index + 1, calls.len(), "{at}: calls in order");
                assert!(call.get("id").is_none(), "{at}: id once");
                assert!(call["function"].get("name").is_none(), "{at}: name once");
                calls[index].2.push_str(fragment);
            }
        }
    }
    let want: Vec<(String, String, String)> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(calls, want, "{at}: calls rebuilt from the deltas");
    let reason = if want.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    assert_eq!(sent.last().unwrap()["finish_reason"], reason, "{at}");
});

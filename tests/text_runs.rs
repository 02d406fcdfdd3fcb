//! `MessageStream::feed_text_with` (what the OpenAI adapter drives) reports what
//! `MessageStream::feed_with` does: for every shipped name's examples (profiled and x-regex
//! streams) and every response template's streaming cases, at several chunkings, each chunk's
//! events from `feed_with` equal `feed_text_with`'s, a `TextRun` counting as the `RegionChunk` it
//! stands for; a run's `output`, and the output handed with events, is everything fed so far.
//! `feed_with` is the reference here: its events are checked against transformers' in
//! tests/streaming.rs.

#[path = "../benches/support/mod.rs"]
mod support;

use std::path::PathBuf;

use chatparse::runtime::stream::ResponseTemplate;
use chatparse::runtime::Spec;
use chatparse::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Streams `text` both ways at several chunkings; returns how many runs `feed_text_with` gave.
fn compare(
    spec: &Spec,
    prefix: Option<&str>,
    tools: Option<&[Value]>,
    text: &str,
    what: &str,
) -> usize {
    let mut runs = 0;
    for size in [1, 3, 4, 7, 64] {
        // A prompt the template refuses: no stream either way.
        let (Ok(mut plain), Ok(mut ranged)) =
            (spec.stream(prefix, tools), spec.stream(prefix, tools))
        else {
            return runs;
        };
        let mut fed = String::new();
        for (i, piece) in support::chunks(text, size).into_iter().enumerate() {
            fed.push_str(piece);
            let mut expected = Vec::new();
            let plain_result = plain.feed_with(piece, &mut |e| expected.push(e.to_json()));
            let mut got = Vec::new();
            let result = ranged.feed_text_with(piece, &mut |e, output| {
                assert_eq!(output, fed, "{what}, {size}-byte chunks, chunk {i}: output");
                got.push(e.to_json());
            });
            match (plain_result, result) {
                (Ok(()), Ok(run)) => {
                    if let Some(run) = run {
                        assert!(got.is_empty(), "{what}: a run and events");
                        assert_eq!(run.output, fed, "{what}, {size}-byte chunks, chunk {i}");
                        assert!(run.start < run.end && run.end <= fed.len());
                        got.push(run.event().to_json());
                        runs += 1;
                    }
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{what}");
                    break;
                }
                (a, b) => panic!("{what}: feed_with {a:?}, feed_text_with {:?}", b.err()),
            }
            assert_eq!(
                got, expected,
                "{what}, {size}-byte chunks, chunk {i} ({piece:?})"
            );
        }
        let mut expected = Vec::new();
        let a = plain.finish_with(&mut |e| expected.push(e.to_json()));
        let mut got = Vec::new();
        let b = ranged.finish_with(&mut |e| got.push(e.to_json()));
        assert_eq!(a.ok(), b.ok(), "{what}, {size}-byte chunks: the message");
        assert_eq!(got, expected, "{what}, {size}-byte chunks: the last events");
    }
    runs
}

#[test]
fn every_shipped_name_hands_out_the_events_of_feed_with() {
    let mut runs = 0;
    for name in chatparse::shipped::names() {
        let spec = chatparse::shipped::spec(name)
            .expect("shipped")
            .expect("loads");
        let inputs = support::examples(name);
        assert!(!inputs.is_empty(), "{name}: no examples");
        for (stem, text) in inputs {
            runs += compare(&spec, None, None, &text, &format!("{name}/{stem}"));
        }
    }
    // Without runs the fast path would be untested.
    assert!(runs > 1000, "only {runs} runs");
}

#[test]
fn every_response_template_hands_out_the_events_of_feed_with() {
    let mut runs = 0;
    for entry in std::fs::read_dir(root().join("response_templates")).expect("lists") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let template =
            ResponseTemplate::from_json_str(&std::fs::read_to_string(&path).expect("reads"))
                .expect("valid");
        let spec = Spec::from(template);
        let expected = root().join(format!("tests/streaming/expected/{name}.json"));
        let doc: Value =
            chatparse::value::from_str(&std::fs::read_to_string(&expected).expect("reads"))
                .expect("json");
        for case in doc["cases"].as_array().expect("cases") {
            let input = case["input"].as_str().expect("input");
            let prefix = case["prefix"].as_str();
            let tools = case["tools"].as_array().map(Vec::as_slice);
            let what = format!("{name}/{}", case["name"]);
            runs += compare(&spec, prefix, tools, input, &what);
        }
    }
    assert!(runs > 100, "only {runs} runs");
}

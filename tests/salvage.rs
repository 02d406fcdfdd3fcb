//! Salvage (issue 21, item 7): outputs from the peer crate `tool-parser` 1.10.0's own test suite
//! (`tests/salvage_cases.json`, each with the peer test it came from) where the peer returns calls
//! and the strict parse of the same family fails the whole message. Lenient parsing keeps every
//! call the family's real format defines, exactly; sets aside every other part with its exact
//! text and span; loses no text; and the lenient stream ends the same.

use chatparse::runtime::stream::Event;
use chatparse::Value;

struct Case {
    peer_test: String,
    family: String,
    input: String,
    kept_calls: Vec<Value>,
    set_aside: Vec<String>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/salvage_cases.json");
    let doc = chatparse::runtime::py::json::loads(&std::fs::read_to_string(path).unwrap()).unwrap();
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            peer_test: text(&c["peer_test"]),
            family: text(&c["family"]),
            input: text(&c["input"]),
            kept_calls: c["kept_calls"].as_array().unwrap().clone(),
            set_aside: c["set_aside"]
                .as_array()
                .unwrap()
                .iter()
                .map(text)
                .collect(),
        })
        .collect()
}

/// The words of a family's format (its schema's and stream profile's text): markers, not text
/// the model wrote.
fn format_words(family: &str) -> String {
    let mut words = chatparse::shipped::text(family).unwrap().to_owned();
    words.push_str(chatparse::shipped::stream_profile_text(family).unwrap_or(""));
    words
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 3)
}

#[test]
fn lenient_parsing_keeps_the_valid_calls_and_every_other_part() {
    let cases = cases();
    assert!(cases.len() >= 29, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let id = format!("{} [{}]", case.peer_test, case.family);
        let spec = chatparse::shipped::spec(&case.family).unwrap().unwrap();
        assert!(
            spec.parse(&case.input).is_err(),
            "{id}: strict parse succeeds"
        );
        let lenient = spec.parse_lenient(&case.input, None).unwrap();
        // The calls the format defines, exactly.
        let calls: Vec<Value> = lenient.message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| {
                        chatparse::json!({
                            "name": c["function"]["name"],
                            "arguments": c["function"]["arguments"],
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        if calls != case.kept_calls {
            failures.push(format!("{id}: calls {calls:?}, want {:?}", case.kept_calls));
        }
        // Every other part set aside, with its exact text where it is.
        let texts: Vec<&str> = lenient.malformed.iter().map(|m| m.text.as_str()).collect();
        if texts != case.set_aside {
            failures.push(format!(
                "{id}: set aside {texts:?}, want {:?}",
                case.set_aside
            ));
        }
        for m in &lenient.malformed {
            match m.span {
                Some((a, b)) if case.input.get(a..b) == Some(m.text.as_str()) => {}
                _ => failures.push(format!(
                    "{id}: {:?} is not at its span {:?}",
                    m.text, m.span
                )),
            }
        }
        // No text lost: every word the model wrote is in the message or set aside.
        let carried = format!("{} {}", lenient.message, texts.join(" "));
        let markers = format_words(&case.family);
        let lost: Vec<&str> = words(&case.input)
            .filter(|w| !carried.contains(w) && !markers.contains(w))
            .collect();
        if !lost.is_empty() {
            failures.push(format!("{id}: lost {lost:?}"));
        }
        // The lenient stream ends the same, in one piece and a character at a time.
        for by_char in [false, true] {
            let mut stream = spec.stream_lenient(None, None).unwrap();
            let mut set_aside = Vec::new();
            let mut on_event = |event: Event<'_>| {
                if let Event::Malformed(m) = event {
                    set_aside.push(m.text.clone());
                }
            };
            if by_char {
                for (i, c) in case.input.char_indices() {
                    stream
                        .feed_with(&case.input[i..i + c.len_utf8()], &mut on_event)
                        .unwrap();
                }
            } else {
                stream.feed_with(&case.input, &mut on_event).unwrap();
            }
            let message = stream.finish_with(&mut on_event).unwrap();
            if message != lenient.message || set_aside != case.set_aside {
                failures.push(format!(
                    "{id}: stream (by char: {by_char}) ends with {message} and {set_aside:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// JSON followed only by white space JSON does not allow (a vertical tab): nothing to salvage, so
/// the call is set aside whole (found by the fuzzer: the salvage cut an empty range).
#[test]
fn extra_data_that_is_only_white_space_sets_the_call_aside() {
    let spec = chatparse::shipped::spec("hermes").unwrap().unwrap();
    let input = "<tool_call>\n{\"arguments\": {}, \"name\": \"a\"}\u{b}\n</tool_call>";
    assert!(spec.parse(input).is_err());
    let lenient = spec.parse_lenient(input, None).unwrap();
    assert_eq!(lenient.malformed.len(), 1);
    assert_eq!(
        lenient.malformed[0].text,
        "\n{\"arguments\": {}, \"name\": \"a\"}\u{b}\n"
    );
}

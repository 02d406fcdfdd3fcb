//! Lenient parsing (`Spec::parse_lenient`, `Spec::stream_lenient`, `--lenient`): bad output never
//! fails the message and never loses text.
//!
//! For every shipped name, on every example truncated at every character and on examples with
//! bytes corrupted at random:
//!
//! - lenient parsing never fails, and equals the strict parse (nothing set aside) whenever the
//!   strict parse succeeds;
//! - when the strict parse fails, something is set aside, and each set-aside text is found in
//!   the output (its span) unless the schema's substitutions rewrote it or it is a JSON value
//!   (an item of a JSON list the output held, kept as JSON);
//! - a lenient stream, in one piece, in one-character chunks and in random chunks, ends with
//!   the one-shot lenient message and the same set-aside parts.

mod support;

use chatparse::runtime::schema::Malformed;
use chatparse::runtime::stream::Event;
use chatparse::runtime::Spec;
use chatparse::Value;
use support::{preview, repo_root, same_value, Rng};

fn examples(name: &str) -> Vec<String> {
    let dir = repo_root().join("examples").join(name);
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

fn has_substitutions(name: &str) -> bool {
    chatparse::shipped::text(name)
        .unwrap()
        .contains("x-regex-substitutions")
}

/// The lenient stream's message and set-aside parts, fed at `cuts`.
fn stream(spec: &Spec, input: &str, cuts: &[usize]) -> (Value, Vec<Malformed>) {
    let mut parser = spec.stream_lenient(None, None).unwrap();
    let mut malformed = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        parser
            .feed_with(&input[at..cut], &mut |e| {
                assert!(
                    !matches!(e, Event::Malformed(_)),
                    "set aside before the end"
                );
            })
            .unwrap();
        at = cut;
    }
    let message = parser
        .finish_with(&mut |e| {
            if let Event::Malformed(m) = e {
                malformed.push(*m);
            }
        })
        .unwrap();
    (message, malformed)
}

fn boundaries(s: &str) -> Vec<usize> {
    (1..=s.len()).filter(|&i| s.is_char_boundary(i)).collect()
}

/// Checks one input; `streams` says whether to also stream it (costly for every truncation).
fn check(name: &str, spec: &Spec, input: &str, streams: bool, rng: &mut Rng) -> Option<String> {
    let strict = spec.parse(input);
    let lenient = spec.parse_lenient(input, None).unwrap();
    let fail = |why: String| Some(format!("[{name}] {}: {why}", preview(input)));
    match &strict {
        Ok(message) => {
            if !same_value(message, &lenient.message) || !lenient.malformed.is_empty() {
                return fail(format!(
                    "strict {message}, lenient {} with {:?}",
                    lenient.message, lenient.malformed
                ));
            }
        }
        Err(e) => {
            if lenient.malformed.is_empty() {
                return fail(format!("strict fails ({e}) but nothing is set aside"));
            }
            for m in &lenient.malformed {
                // A unit given a JSON value (an item of a JSON list the output held) is kept as
                // JSON text, which need not be in the output verbatim.
                let json_value = serde_json::from_str::<serde_json::Value>(&m.text).is_ok();
                if !m.text.is_empty() && m.span.is_none() && !has_substitutions(name) && !json_value
                {
                    return fail(format!("{m:?} is not in the output"));
                }
                if let Some((a, b)) = m.span {
                    if input.get(a..b) != Some(m.text.as_str()) {
                        return fail(format!("{m:?}: the span does not hold the text"));
                    }
                }
            }
        }
    }
    if streams {
        let bounds = boundaries(input);
        let mut random = Vec::new();
        let mut i = 0;
        while i < bounds.len() {
            i = (i + 1 + rng.below(16)).min(bounds.len());
            random.push(bounds[i - 1]);
        }
        for cuts in [vec![input.len()], bounds.clone(), random] {
            let (message, malformed) = stream(spec, input, &cuts);
            if !same_value(&message, &lenient.message) || malformed != lenient.malformed {
                return fail(format!(
                    "streamed {message} with {malformed:?}, one-shot {} with {:?}",
                    lenient.message, lenient.malformed
                ));
            }
        }
    }
    None
}

#[test]
fn truncated_at_every_character_never_fails_and_keeps_the_text() {
    let mut rng = Rng(0x1e41_e215);
    let mut failures = Vec::new();
    let mut set_aside = 0;
    for name in chatparse::shipped::names() {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        for example in examples(name) {
            let cuts = boundaries(&example);
            for (k, &cut) in cuts.iter().enumerate() {
                let input = &example[..cut];
                // Every truncation one-shot; a sample of them streamed as well.
                let streams = k % 23 == 0 || cut == example.len();
                if spec.parse(input).is_err() {
                    set_aside += 1;
                }
                failures.extend(check(name, &spec, input, streams, &mut rng));
            }
        }
    }
    assert!(
        set_aside > 1000,
        "only {set_aside} truncations fail strictly"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn corrupted_bytes_never_fail_and_keep_the_text() {
    let mut rng = Rng(0xc022_0915);
    let mut failures = Vec::new();
    let junk = ["{", "}", "\"", "<", ">", "]", "\n", "x", "é", ":"];
    for name in chatparse::shipped::names() {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        for example in examples(name) {
            for _ in 0..30 {
                let mut input = example.clone();
                for _ in 0..1 + rng.below(3) {
                    let bounds: Vec<usize> = (0..input.len())
                        .filter(|&i| input.is_char_boundary(i))
                        .collect();
                    let at = bounds[rng.below(bounds.len())];
                    let end = input[at..]
                        .char_indices()
                        .nth(1)
                        .map_or(input.len(), |(i, _)| at + i);
                    input.replace_range(at..end, junk[rng.below(junk.len())]);
                }
                failures.extend(check(name, &spec, &input, true, &mut rng));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// One good call then one cut off: the good call is kept exactly as the strict parse of the
/// output without the bad one gives it, and the bad one's text is set aside.
#[test]
fn the_good_calls_are_kept() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "hermes",
            "Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"g\", \"argu",
        ),
        (
            "qwen3",
            "<think>\nok\n</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
            "\n<tool_call>\n{\"name\": ",
        ),
        (
            "kimi_k2",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|>",
            "<|tool_call_begin|>functions.g:1<|tool_call_argument_begin|>{\"a\":",
        ),
        (
            "gpt_oss",
            "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>",
            "<|start|>assistant<|channel|>commentary to=functions.g <|constrain|>json<|message|>{\"a\": <|call|>",
        ),
    ];
    for (name, good, bad) in cases {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        let input = format!("{good}{bad}");
        assert!(
            spec.parse(&input).is_err(),
            "{name}: the bad call fails strictly"
        );
        let want = spec.parse(good).unwrap();
        let got = spec.parse_lenient(&input, None).unwrap();
        assert!(
            same_value(&got.message["tool_calls"], &want["tool_calls"]),
            "{name}: {} vs {}",
            got.message,
            want
        );
        assert_eq!(got.malformed.len(), 1, "{name}: {:?}", got.malformed);
        let m = &got.malformed[0];
        assert_eq!(m.field.as_deref(), Some("tool_calls"), "{name}");
        assert!(bad.contains(m.text.trim()), "{name}: {m:?}");
    }
}

#[test]
fn templates_parse_strictly_only() {
    let template = chatparse::templates::template("qwen3").unwrap();
    let spec = Spec::from(template);
    let e = spec.parse_lenient("hi", None).unwrap_err();
    assert!(e.to_string().contains("parses strictly"), "{e}");
    assert!(spec.stream_lenient(None, None).is_err());
}

/// The CLI: `parse --lenient` prints the message and what was set aside; `stream --lenient`
/// reports it as a `malformed` event before the message; both exit 0. Expectations: the strict
/// parse of the good part, and the bad call's text.
#[test]
fn cli_lenient() {
    let good = "Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
    let bad = "<tool_call>\n{\"name\": \"g\", \"argu</tool_call>";
    let input = format!("{good}{bad}");
    let want = chatparse::shipped::spec("hermes")
        .unwrap()
        .unwrap()
        .parse(good)
        .unwrap();
    let strict = support::run_chatparse(&["parse", "--schema", "hermes"], Some(input.as_bytes()));
    assert_eq!(strict.status.code(), Some(1));

    let out = support::run_chatparse(
        &["parse", "--schema", "hermes", "--lenient"],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0));
    let got: Value = chatparse::value::from_str(std::str::from_utf8(&out.stdout).unwrap()).unwrap();
    assert!(same_value(&got["message"], &want), "{got}");
    let malformed = got["malformed"].as_array().unwrap();
    assert_eq!(malformed.len(), 1);
    assert_eq!(malformed[0]["field"], "tool_calls");
    assert_eq!(malformed[0]["text"], "\n{\"name\": \"g\", \"argu");
    let at = input.find("\n{\"name\": \"g\"").unwrap();
    assert_eq!(malformed[0]["span"], chatparse::json!([at, at + 20]));

    let out = support::run_chatparse(
        &["stream", "--schema", "hermes", "--lenient"],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| chatparse::value::from_str(l).unwrap())
        .collect();
    let (message, events) = lines.split_last().unwrap();
    assert!(same_value(message, &want), "{message}");
    let set_aside: Vec<&Value> = events.iter().filter(|e| e["type"] == "malformed").collect();
    assert_eq!(set_aside.len(), 1);
    assert_eq!(set_aside[0]["text"], malformed[0]["text"]);

    let out = support::run_chatparse(
        &["parse", "--schema", "qwen3.transformers", "--lenient"],
        Some(b"hi"),
    );
    assert_eq!(out.status.code(), Some(2));
}

//! The streaming corpus: every case was produced by the reference `ResponseParser` of
//! transformers 5.23.0 through `scripts/reference/stream_generate.py`. For every recorded
//! chunking, the events of each `feed` and of `finish`, and the final message, must equal the
//! reference's exactly (an error wherever it raises or produces a value JSON cannot carry),
//! except the chunkings listed in `tests/streaming/held_back.json`, which end with the
//! reference's one-shot result.
//! Then chunking invariance: every split point of short inputs, and 1,000 random chunkings of
//! long ones, give the one-shot message and region text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chatparse::runtime::stream::{is_response_template, Event, ResponseTemplate, StreamParser};
use chatparse::Value;
use support::{repo_root, same_value};

mod support;

/// The corpus must not shrink unnoticed.
const MIN_CASES: usize = 400;
const MIN_TEMPLATES: usize = 10;
/// Inputs shorter than this (in chars) get every split point checked.
const SHORT: usize = 300;
const RANDOM_CHUNKINGS: usize = 1000;

struct Doc {
    file: String,
    template: Value,
    cases: Vec<Value>,
}

fn corpus() -> Vec<Doc> {
    let dir = repo_root().join("tests/streaming/expected");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| !p.ends_with("invalid_templates.json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let doc = read_json(p);
            Doc {
                file: p.file_name().unwrap().to_string_lossy().into_owned(),
                template: doc["template"].clone(),
                cases: doc["cases"].as_array().unwrap().clone(),
            }
        })
        .collect()
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    chatparse::value::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn events_json(events: &[Event<'_>]) -> Value {
    Value::Array(events.iter().map(Event::to_json).collect())
}

fn tools_of(case: &Value) -> Vec<Value> {
    case.get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 600 {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s
    }
}

/// Runs one recorded chunking against its expectation; `Err` describes the first difference.
fn check_chunking(
    template: &ResponseTemplate,
    case: &Value,
    chunking: &Value,
) -> Result<(), String> {
    let prefix = case["prefix"].as_str().unwrap();
    let tools = tools_of(case);
    let init = &case["init"];
    let mut parser = match StreamParser::with_tools(template, prefix, &tools) {
        Ok(p) => p,
        Err(_) if init.get("events").is_none() => return Ok(()),
        Err(e) => return Err(format!("constructor failed: {e}")),
    };
    let Some(want_init) = init.get("events") else {
        return Err(format!("constructor should fail ({})", short(init)));
    };
    let got_init = events_json(&parser.initial_events());
    if !same_value(&got_init, want_init) {
        return Err(format!(
            "initial events\n  want {}\n  got  {}",
            short(want_init),
            short(&got_init)
        ));
    }
    let chunks = chunking["chunks"].as_array().unwrap();
    let feeds = chunking["feeds"].as_array().unwrap();
    let outcome = &chunking["outcome"];
    let error_at = outcome
        .get("error_at")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    for (i, chunk) in chunks.iter().enumerate() {
        let got = parser.feed(chunk.as_str().unwrap());
        if error_at == Some(i) {
            return match got {
                Err(_) => Ok(()),
                Ok(events) => Err(format!(
                    "feed {i} should fail ({}), got events {}",
                    short(outcome),
                    short(&events_json(&events))
                )),
            };
        }
        let events = got.map_err(|e| format!("feed {i} failed: {e}"))?;
        let got = events_json(&events);
        if !same_value(&got, &feeds[i]) {
            return Err(format!(
                "feed {i} ({:?})\n  want {}\n  got  {}",
                chunk.as_str().unwrap(),
                short(&feeds[i]),
                short(&got)
            ));
        }
    }
    let got = parser.finish();
    if error_at == Some(chunks.len()) {
        return match got {
            Err(_) => Ok(()),
            Ok((message, _)) => Err(format!(
                "finish should fail ({}), got {}",
                short(outcome),
                short(&message)
            )),
        };
    }
    let (message, events) = got.map_err(|e| format!("finish failed: {e}"))?;
    let got_events = events_json(&events);
    if !same_value(&got_events, &outcome["finalize_events"]) {
        return Err(format!(
            "finalize events\n  want {}\n  got  {}",
            short(&outcome["finalize_events"]),
            short(&got_events)
        ));
    }
    if !same_value(&message, &outcome["message"]) {
        return Err(format!(
            "message\n  want {}\n  got  {}",
            short(&outcome["message"]),
            short(&message)
        ));
    }
    Ok(())
}

/// The recorded chunkings whose events differ from the reference's because chatparse holds back
/// text the reference routes at once; each ends with the reference's one-shot result. The list
/// and why: `tests/streaming/held_back.json` (python/tests/test_streaming.py reads it too).
fn held_back() -> Vec<String> {
    let doc = read_json(&repo_root().join("tests/streaming/held_back.json"));
    doc["chunkings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_chunking_of_every_case_matches_the_reference() {
    let docs = corpus();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut chunkings = 0;
    let mut held = Vec::new();
    for doc in &docs {
        let template = match ResponseTemplate::from_value(doc.template.clone()) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("[{}] template rejected: {e}", doc.file));
                continue;
            }
        };
        assert!(is_response_template(&doc.template), "{}", doc.file);
        for case in &doc.cases {
            cases += 1;
            let name = case["name"].as_str().unwrap();
            let recorded = case["chunkings"].as_array().unwrap();
            if recorded.is_empty() {
                // The constructor raised: any chunking must fail the same way.
                let r = check_chunking(&template, case, &Value::Null);
                if let Err(e) = r {
                    failures.push(format!("[{}/{name}] {e}", doc.file));
                }
                continue;
            }
            for chunking in recorded {
                chunkings += 1;
                let chunking_name = chunking["name"].as_str().unwrap();
                if let Err(e) = check_chunking(&template, case, chunking) {
                    let prefix = case["prefix"].as_str().unwrap();
                    let tools = tools_of(case);
                    let chunks = chunking["chunks"].as_array().unwrap();
                    let chunks = chunks.iter().map(|c| c.as_str().unwrap());
                    // Held back: the events come later than the reference's, and the stream
                    // ends with the reference's own one-shot result.
                    let one_shot = recorded.iter().find(|c| c["name"] == "one_shot");
                    if one_shot.is_some_and(|one_shot| {
                        summarize(&template, prefix, &tools, chunks)
                            == recorded_summary(case, one_shot)
                    }) {
                        held.push(format!("{}/{name}/{chunking_name}", doc.file));
                        continue;
                    }
                    failures.push(format!(
                        "[{}/{name}/{}] input {:?}\n  {e}",
                        doc.file,
                        chunking["name"].as_str().unwrap(),
                        short(&case["input"]),
                    ));
                    break;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements with the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        held,
        held_back(),
        "chunkings that hold back text the reference routes"
    );
    assert!(
        cases >= MIN_CASES,
        "only {cases} cases (want ≥ {MIN_CASES})"
    );
    assert!(
        docs.len() >= MIN_TEMPLATES,
        "only {} templates (want ≥ {MIN_TEMPLATES})",
        docs.len()
    );
    eprintln!(
        "{cases} cases, {chunkings} chunkings in {} templates agree",
        docs.len()
    );
}

/// What a chunking must not change: the message (or that parsing failed), each field's
/// concatenated chunk text, and the sequence of opens and closes with their values.
#[derive(Debug, PartialEq)]
enum Summary {
    Failed,
    Parsed {
        message: String,
        texts: BTreeMap<String, String>,
        marks: Vec<String>,
    },
}

fn summarize<'c>(
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
    chunks: impl IntoIterator<Item = &'c str>,
) -> Summary {
    let Ok(mut parser) = StreamParser::with_tools(template, prefix, tools) else {
        return Summary::Failed;
    };
    let mut events: Vec<Value> = parser.initial_events().iter().map(Event::to_json).collect();
    for chunk in chunks {
        match parser.feed(chunk) {
            Ok(fed) => events.extend(fed.iter().map(Event::to_json)),
            Err(_) => return Summary::Failed,
        }
    }
    match parser.finish() {
        Ok((message, last)) => {
            events.extend(last.iter().map(Event::to_json));
            summary_of(&events, &message)
        }
        Err(_) => Summary::Failed,
    }
}

/// The reference's own summary of a recorded chunking that ended with a message.
fn recorded_summary(case: &Value, chunking: &Value) -> Summary {
    let outcome = &chunking["outcome"];
    if outcome.get("message").is_none() {
        return Summary::Failed;
    }
    let init = case["init"]["events"].as_array().into_iter().flatten();
    let feeds = chunking["feeds"].as_array().into_iter().flatten();
    let fed = feeds.flat_map(|f| f.as_array().into_iter().flatten());
    let last = outcome["finalize_events"].as_array().into_iter().flatten();
    let events: Vec<Value> = init.chain(fed).chain(last).cloned().collect();
    summary_of(&events, &outcome["message"])
}

/// Events in the reference's JSON shape, folded into what a chunking must not change.
fn summary_of(events: &[Value], message: &Value) -> Summary {
    let mut texts = BTreeMap::<String, String>::new();
    let mut marks = Vec::new();
    for e in events {
        let field = e["field"].as_str().unwrap_or_default().to_owned();
        match e["type"].as_str() {
            Some("region_open") => marks.push(format!("open {field}")),
            Some("region_chunk") => texts
                .entry(field)
                .or_default()
                .push_str(e["text"].as_str().unwrap_or_default()),
            Some("region_close") => marks.push(format!("close {field} {}", e["value"])),
            _ => panic!("a strict stream sent {e}"),
        }
    }
    Summary::Parsed {
        message: message.to_string(),
        texts,
        marks,
    }
}

/// splitmix64: a small deterministic generator for the random chunkings.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Random chunks of 1..=max_len chars (at char boundaries), with an occasional empty feed.
fn random_chunks<'a>(text: &'a str, rng: &mut Rng) -> Vec<&'a str> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let max_len = [1, 4, 16, 64, 512, 4096][rng.below(6)];
    let mut out = Vec::new();
    let mut at = 0; // index into bounds
    while at + 1 < bounds.len() {
        let step = 1 + rng.below(max_len);
        let next = (at + step).min(bounds.len() - 1);
        out.push(&text[bounds[at]..bounds[next]]);
        if rng.below(50) == 0 {
            out.push("");
        }
        at = next;
    }
    out
}

#[test]
fn chunking_never_changes_the_result() {
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut long = 0usize;
    for doc in corpus() {
        let template = ResponseTemplate::from_value(doc.template.clone()).unwrap();
        for case in &doc.cases {
            // Also the cases where the reference itself depends on the chunking (the corpus marks
            // them `reference_invariant: false`): chatparse's stream ends with the one-shot
            // result there too (see `held_back`).
            let name = case["name"].as_str().unwrap();
            let input = case["input"].as_str().unwrap();
            let prefix = case["prefix"].as_str().unwrap();
            let tools = tools_of(case);
            let one_shot = summarize(&template, prefix, &tools, [input]);
            let mut check = |chunks: Vec<&str>| {
                checked += 1;
                let got = summarize(&template, prefix, &tools, chunks.iter().copied());
                if got != one_shot {
                    failures.push(format!(
                        "[{}/{name}] chunks {:?}\n  one-shot {one_shot:?}\n  chunked  {got:?}",
                        doc.file,
                        chunks.iter().map(|c| c.chars().count()).collect::<Vec<_>>()
                    ));
                }
            };
            if input.chars().count() < SHORT {
                for (k, _) in input.char_indices().skip(1) {
                    check(vec![&input[..k], &input[k..]]);
                }
                check(input.split_inclusive(|_| true).collect());
            } else {
                long += 1;
                let mut rng = Rng(0x5eed ^ input.len() as u64);
                for _ in 0..RANDOM_CHUNKINGS {
                    check(random_chunks(input, &mut rng));
                }
            }
        }
    }
    failures.truncate(20);
    assert!(
        failures.is_empty(),
        "chunking changed the result:\n{}",
        failures.join("\n")
    );
    assert!(long >= 3, "only {long} long inputs");
    eprintln!("{checked} chunkings ({long} long inputs) give the one-shot result");
}

#[test]
fn invalid_templates_are_refused_at_the_right_pointer() {
    let doc = read_json(&repo_root().join("tests/streaming/expected/invalid_templates.json"));
    let templates = doc["templates"].as_array().unwrap();
    assert!(templates.len() >= 25);
    let mut failures = Vec::new();
    for t in templates {
        let name = t["name"].as_str().unwrap();
        let want = t["pointer"].as_str().unwrap();
        match ResponseTemplate::from_value(t["template"].clone()) {
            Ok(_) => failures.push(format!(
                "{name}: loads, but the reference says {}",
                t["error"]
            )),
            Err(e) => {
                if !e.problems.iter().any(|p| p.pointer == want) {
                    failures.push(format!(
                        "{name}: want a problem at {want:?} ({}), got {e}",
                        t["error"]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shipped_templates_load_and_match_the_corpus() {
    let dir = repo_root().join("response_templates");
    let mut n = 0;
    for doc in corpus() {
        let Some(file) = read_json(&repo_root().join("tests/streaming/expected").join(&doc.file))
            .get("template_file")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        n += 1;
        let text = std::fs::read_to_string(repo_root().join(&file)).unwrap();
        let template =
            ResponseTemplate::from_json_str_named(&text, &file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(template.as_value(), &doc.template, "{file}");
    }
    assert_eq!(n, 3, "Qwen 2/3, Qwen 3.5 and Gemma 4 are shipped");
    assert!(dir.join("qwen3.json").exists());
}

#[test]
fn long_output_in_small_chunks_streams_and_holds_back_only_delimiter_prefixes() {
    let text = std::fs::read_to_string(repo_root().join("response_templates/qwen3.json")).unwrap();
    let template = ResponseTemplate::from_json_str(&text).unwrap();
    let reasoning: String = (0..1500)
        .map(|i| format!("Step {i}: weigh option {i} against the rest. "))
        .collect();
    let output = format!(
        "<think>\n{reasoning}\n</think>\n\nDone.\n<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"x\": 1}}}}\n</tool_call><|im_end|>"
    );
    assert!(output.len() > 64_000);
    let mut parser = StreamParser::new(&template, "<|im_start|>assistant\n").unwrap();
    let mut streamed = String::new();
    let mut consumed = 0;
    for chunk in output.as_bytes().chunks(4) {
        let chunk = std::str::from_utf8(chunk).unwrap(); // ASCII
        consumed += chunk.len();
        for event in parser.feed(chunk).unwrap() {
            if let Event::RegionChunk {
                field: "reasoning_content",
                text,
                ..
            } = event
            {
                streamed.push_str(&text);
            }
        }
        // Inside the reasoning, only a possible "</think>" prefix is ever held back.
        if consumed > 10 && consumed < 9 + reasoning.len() {
            let seen = &output[..consumed];
            let held = seen.len() - "<think>".len() - streamed.len();
            assert!(
                held == 0 || "</think>".starts_with(&seen[seen.len() - held..]),
                "held back {held} bytes at {consumed}"
            );
        }
    }
    let (message, _) = parser.finish().unwrap();
    assert_eq!(message["reasoning_content"], reasoning.trim());
    assert_eq!(message["content"], "Done.");
    assert_eq!(message["tool_calls"][0]["function"]["arguments"]["x"], 1);
}

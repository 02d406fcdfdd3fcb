//! Every shipped name streams (`chatparse::shipped::spec`): the x-regex schemas whose root regex
//! cuts the whole output stream through their stream profile (`schemas/streaming/`). For every
//! conformance input of those families, and for soups of each family's own markers, at every
//! split point (short inputs), in one-character chunks and in seeded random chunkings:
//!
//! - the final message equals the one-shot parse (`Spec::parse`, or `parse_with_prefix` when a
//!   prompt opened or closed reasoning), errors included;
//! - the `region_chunk` texts of each text field concatenate to its final value, and every
//!   `region_close` carries the final value: nothing streamed is ever taken back;
//! - well-formed messages stream their reasoning and content before the output ends.

mod support;

use chatparse::runtime::stream::{Event, MessageStream};
use chatparse::runtime::Spec;
use chatparse::Value;
use support::{char_boundaries, load_suites, preview, random_cuts, same_value, Rng};

/// Every split point for short inputs (plus one char per chunk), seeded random chunkings for
/// long ones.
fn chunkings(input: &str, rng: &mut Rng, random: usize) -> Vec<Vec<usize>> {
    let bounds = char_boundaries(input);
    let mut all = vec![vec![input.len()]];
    if input.len() <= 300 {
        for &b in &bounds {
            all.push(vec![b, input.len()]);
        }
    } else {
        for _ in 0..random {
            all.push(random_cuts(input, rng));
        }
    }
    all.push(bounds.iter().copied().skip(1).collect());
    all
}

/// The shipped names that stream through a profile.
fn profiled() -> Vec<(&'static str, Spec)> {
    chatparse::shipped::names()
        .filter_map(|name| {
            let spec = chatparse::shipped::spec(name)?.unwrap();
            spec.stream_profile()?;
            Some((name, spec))
        })
        .collect()
}

#[derive(Default)]
struct Streamed {
    message: Option<Result<Value, String>>,
    /// Per text field: the chunks' text (feeds and finish).
    texts: Vec<(String, String)>,
    /// Per text field: the text streamed before `finish`.
    early: Vec<(String, String)>,
    closes: Vec<(String, Value)>,
    /// Calls closed before `finish`.
    early_calls: usize,
}

impl Streamed {
    fn push_text(list: &mut Vec<(String, String)>, field: &str, text: &str) {
        match list.iter_mut().find(|(f, _)| f == field) {
            Some((_, t)) => t.push_str(text),
            None => list.push((field.to_owned(), text.to_owned())),
        }
    }

    fn record(&mut self, event: Event<'_>, early: bool) {
        if early {
            if let Event::RegionClose { field, .. } = &event {
                if *field == "tool_calls" {
                    self.early_calls += 1;
                }
            }
        }
        match event {
            Event::RegionChunk { field, text, .. } => {
                Self::push_text(&mut self.texts, field, &text);
                if early {
                    Self::push_text(&mut self.early, field, &text);
                }
            }
            Event::RegionClose { field, value } => self.closes.push((field.to_owned(), value)),
            _ => {}
        }
    }

    fn early(&self, field: &str) -> &str {
        self.early
            .iter()
            .find(|(f, _)| f == field)
            .map_or("", |(_, t)| t)
    }
}

fn stream(spec: &Spec, prefix: Option<&str>, input: &str, cuts: &[usize]) -> Streamed {
    let mut out = Streamed::default();
    let mut parser: Box<dyn MessageStream + '_> = spec.stream(prefix, None).unwrap();
    parser.initial_events_with(&mut |e| out.record(e, true));
    let mut at = 0;
    for &cut in cuts {
        if let Err(e) = parser.feed_with(&input[at..cut], &mut |e| out.record(e, true)) {
            out.message = Some(Err(e.to_string()));
            return out;
        }
        at = cut;
    }
    let message = parser.finish_with(&mut |e| out.record(e, false));
    out.message = Some(message.map_err(|e| e.to_string()));
    out
}

/// The text fields of a profile.
fn text_fields(spec: &Spec) -> Vec<String> {
    let profile = spec.stream_profile().unwrap();
    profile
        .reasoning
        .iter()
        .map(|r| r.field.clone())
        .chain(profile.content.iter().map(|c| c.field.clone()))
        .collect()
}

fn check(
    name: &str,
    spec: &Spec,
    prefix: Option<&str>,
    input: &str,
    chunkings: &[Vec<usize>],
) -> Option<String> {
    let one_shot = match prefix {
        Some(p) => spec.parse_with_prefix(input, p),
        None => spec.parse(input),
    }
    .map_err(|e| e.to_string());
    let fields = text_fields(spec);
    for cuts in chunkings {
        let got = stream(spec, prefix, input, cuts);
        let message = got.message.clone().unwrap();
        let fail = |why: String| {
            Some(format!(
                "[{name}] prefix {prefix:?} input {} cuts {cuts:?}\n    {why}",
                preview(input)
            ))
        };
        match (&one_shot, &message) {
            (Ok(a), Ok(b)) if same_value(a, b) => {}
            (Err(a), Err(b)) if a == b => {}
            _ => return fail(format!("one-shot {one_shot:?}\n    streamed {message:?}")),
        }
        let Ok(final_message) = &one_shot else {
            continue;
        };
        if let Some(calls) = spec.stream_profile().unwrap().tool_calls.as_ref() {
            // The calls' closes (one call each, or a list of the rest) rebuild the final list.
            let mut rebuilt = Vec::new();
            for (field, value) in &got.closes {
                if *field == calls.field {
                    match value {
                        Value::Array(items) => rebuilt.extend(items.iter().cloned()),
                        other => rebuilt.push(other.clone()),
                    }
                }
            }
            let want = match final_message.get(&calls.field) {
                Some(Value::Array(items)) => items.clone(),
                Some(other) => vec![other.clone()],
                None => Vec::new(),
            };
            if rebuilt.len() != want.len()
                || !rebuilt.iter().zip(&want).all(|(a, b)| same_value(a, b))
            {
                return fail(format!("calls: closes {rebuilt:?}, final {want:?}"));
            }
        }
        for field in &fields {
            let want = final_message.get(field).and_then(Value::as_str);
            let text = got.texts.iter().find(|(f, _)| f == field).map(|(_, t)| t);
            if text.map(String::as_str) != want && !(text.is_none() && want == Some("")) {
                return fail(format!("{field}: chunks {text:?}, final {want:?}"));
            }
            let closes: Vec<&Value> = got
                .closes
                .iter()
                .filter(|(f, _)| f == field)
                .map(|(_, v)| v)
                .collect();
            if want.is_some() && closes.as_slice() != [&final_message[field.as_str()]] {
                return fail(format!("{field}: closes {closes:?}, final {want:?}"));
            }
        }
    }
    None
}

#[test]
fn every_shipped_name_streams() {
    let names: Vec<&str> = chatparse::shipped::names().collect();
    assert_eq!(names.len(), 28);
    for name in names {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        assert!(spec.streamable().is_ok(), "{name} does not stream");
        assert!(spec.stream(None, None).is_ok(), "{name}");
    }
    assert_eq!(profiled().len(), 26);
}

#[test]
fn streamed_equals_one_shot_on_the_conformance_corpus() {
    let mut rng = Rng(0x5eed_0015);
    let mut failures = Vec::new();
    let mut inputs = 0;
    let profiled = profiled();
    for suite in load_suites() {
        let Some((name, spec)) = profiled.iter().find(|(n, _)| *n == suite.name) else {
            continue;
        };
        for case in &suite.cases {
            inputs += 1;
            let cuts = chunkings(&case.input, &mut rng, 60);
            failures.extend(check(name, spec, None, &case.input, &cuts));
        }
    }
    assert!(inputs > 300, "only {inputs} inputs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The prompt's reasoning block: opened (thinking mode), opened and closed (thinking off), and
/// none; a prefix the profile reads changes the one-shot parse exactly as it changes the stream.
#[test]
fn streamed_equals_one_shot_with_prompt_prefixes() {
    let mut rng = Rng(0x5eed_1015);
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, spec) in profiled() {
        let Some(open) = spec
            .stream_profile()
            .and_then(|p| p.reasoning.as_ref())
            .and_then(|r| r.open.clone())
        else {
            continue;
        };
        let close = spec
            .stream_profile()
            .unwrap()
            .reasoning
            .as_ref()
            .unwrap()
            .close[0]
            .clone();
        let prefixes = [
            format!("<|user|>Hi\n<|assistant|>{open}\n"),
            format!("<|user|>Hi\n<|assistant|>{open}\n\n{close}\n\n"),
            "<|user|>Hi\n<|assistant|>".to_owned(),
        ];
        for suite in load_suites().iter().filter(|s| s.name == name) {
            for case in suite.cases.iter().take(40) {
                for prefix in &prefixes {
                    checked += 1;
                    let cuts = chunkings(&case.input, &mut rng, 10);
                    failures.extend(check(name, &spec, Some(prefix), &case.input, &cuts));
                }
            }
        }
    }
    assert!(checked > 300, "only {checked}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Soups of each family's own markers, halves of them, whitespace, text and JSON: where a
/// streamed prefix is most likely to be taken back.
#[test]
fn streamed_equals_one_shot_on_marker_soups() {
    let mut rng = Rng(0xdead_beef_0015);
    let mut failures = Vec::new();
    let mut early_calls = std::collections::BTreeMap::<&str, usize>::new();
    for (name, spec) in profiled() {
        let profile = spec.stream_profile().unwrap();
        let mut atoms: Vec<String> = Vec::new();
        if let Some(r) = &profile.reasoning {
            atoms.extend(r.open.clone());
            atoms.extend(r.header.clone());
            atoms.extend(r.close.iter().cloned());
        }
        if let Some(c) = &profile.content {
            atoms.extend(c.open.iter().cloned());
            atoms.extend(c.held_if_starts.iter().cloned());
        }
        atoms.extend(profile.markers.iter().cloned());
        let halves: Vec<String> = atoms
            .iter()
            .filter_map(|d| {
                let mut cut = d.len() / 2;
                while !d.is_char_boundary(cut) {
                    cut -= 1;
                }
                d.get(..cut).map(str::to_owned)
            })
            .filter(|h| !h.is_empty())
            .collect();
        atoms.extend(halves);
        atoms.extend(
            [
                "\n",
                " ",
                "  ",
                "x",
                "é",
                "<",
                ">",
                "Hello world",
                "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
                "[{\"name\": \"f\", \"arguments\": {}}]",
                "{\"a\": 1}",
                "all\n",
                "f\n{}",
                "<think>",
                "</think>",
                // Whole calls and closers of the families' iterators.
                "</tool_call>",
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜>",
                "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜>",
                "<｜tool▁calls▁end｜>",
                "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>",
                "<|tool_calls_section_end|>",
                "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
                "<function=f>{\"a\": 1}</function>",
                "</function>",
                "<|tool_call>call:f{a:<|\"|>x<|\"|>}<tool_call|>",
                "<tool_call|>",
            ]
            .map(str::to_owned),
        );
        if let Some(c) = &profile.tool_calls {
            atoms.extend(c.open.iter().cloned());
        }
        // Well-formed pieces too, so that soups reach calls that parse.
        let segments = [
            "</think>\n\nSure. ",
            "<think>Plan.</think>",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```<｜tool▁call▁end｜>",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜>",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|>",
            "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
        ];
        for _ in 0..300 {
            let n = 1 + rng.below(8);
            let input: String = (0..n)
                .map(|_| {
                    if rng.below(3) == 0 {
                        segments[rng.below(segments.len())]
                    } else {
                        atoms[rng.below(atoms.len())].as_str()
                    }
                })
                .collect();
            let cuts = chunkings(&input, &mut rng, 10);
            let prefix = match rng.below(3) {
                0 => None,
                1 => Some("<|assistant|><think>\n"),
                _ => Some("<|assistant|><seed:think>\n\n</seed:think>"),
            };
            failures.extend(check(name, &spec, prefix, &input, &cuts));
            let one_byte: Vec<usize> = char_boundaries(&input).into_iter().skip(1).collect();
            *early_calls.entry(name).or_default() +=
                stream(&spec, prefix, &input, &one_byte).early_calls;
        }
    }
    // The soups reach calls that stream before the end, for every family whose calls can.
    for (name, spec) in profiled() {
        if spec.stream_profile().unwrap().tool_calls.is_some() {
            assert!(
                early_calls.get(name).copied().unwrap_or(0) >= 3,
                "{name}: {early_calls:?}"
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A well-formed message streams its reasoning and content before the output ends: everything
/// up to the tool call arrives as the text does, in 4-byte chunks. The expected values are the
/// one-shot parse's.
#[test]
fn reasoning_and_content_stream_before_the_end() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("qwen3", Some("<|im_start|>assistant\n<think>\n"), "Let me think.\n</think>\n\nIt is sunny.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call><|im_end|>"),
        ("qwen3", None, "<think>\nLet me think.\n</think>\n\nIt is sunny.<|im_end|>"),
        ("qwen3", None, "<think>\nLet me think.\n</think>\n\nTwo calls.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call><|im_end|>"),

        ("functionary_v3_1", None, "Sure.<function=f>{\"a\": 1}</function><function=g>{}</function><|eot_id|>"),
        ("gemma4", None, "<|channel>thought\nPlan.<channel|>Sure.<|tool_call>call:f{a:<|\"|>x<|\"|>}<tool_call|><turn|>"),
        ("hermes", None, "It is sunny in Paris today.<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"),
        ("deepseek_r1", None, "Let me think.\n</think>\n\nIt is sunny.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        ("kimi_k2", None, "<think>Let me think.</think>It is sunny.<|tool_calls_section_begin|>"),
        ("mistral_small", None, "It is sunny.[TOOL_CALLS]f[ARGS]{}"),
        ("functionary_v3_2", None, "all\nIt is sunny.>>>f\n{}"),
        ("apriel", None, "Here are my reasoning steps:\nLet me think.\n[BEGIN FINAL RESPONSE]\nIt is sunny.\n[END FINAL RESPONSE]\n<|end|>"),
        ("seed_oss", Some("<seed:think>"), "Let me think.</seed:think>It is sunny.<seed:eos>"),
        ("llama3_json", None, "It is sunny.<|python_tag|>{\"name\": \"f\", \"parameters\": {}}"),
    ];
    for (name, prefix, input) in cases {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        let one_shot = match prefix {
            Some(p) => spec.parse_with_prefix(input, p),
            None => spec.parse(input),
        }
        .unwrap();
        let cuts: Vec<usize> = char_boundaries(input)
            .into_iter()
            .filter(|b| b % 4 == 0)
            .chain([input.len()])
            .collect();
        let got = stream(&spec, *prefix, input, &cuts);
        let calls = one_shot
            .get("tool_calls")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if spec.stream_profile().unwrap().tool_calls.is_some() {
            assert_eq!(got.early_calls, calls, "{name}: calls before the end");
        }
        for field in text_fields(&spec) {
            if let Some(want) = one_shot.get(&field).and_then(Value::as_str) {
                assert_eq!(got.early(&field), want, "{name}: {field} before the end");
            }
        }
    }
}

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
        if let Some(c) = &profile.tool_calls {
            atoms.extend(c.open.iter().cloned());
        }
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
                // XML parameters (qwen3_coder, qwen3_5, seed_oss, minimax_m2, deepseek_v3_2),
                // with openers that `\b` refuses (`<invokes`, `<invoke_`, `<invokeé`).
                "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>",
                "<parameter=a>",
                "</parameter>",
                "<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>",
                "<invoke",
                "<invokes name=\"f\">",
                "<invoke_",
                "<invokeé",
                "</invoke>",
                "</minimax:tool_call>",
                "<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">x</｜DSML｜parameter>\n</｜DSML｜invoke>",
                "<｜DSML｜invoke",
                "<｜DSML｜invokes",
                "<｜DSML｜invokeé",
                "</｜DSML｜invoke>",
                "</｜DSML｜function_calls>",
                // JSON call lists: items, separators, list ends and the literals that cut them.
                "[{\"name\": \"f\", \"arguments\": {}}",
                ", {\"name\": \"g\", \"arguments\": {\"b\": \"]}\"}}",
                ", {\"name\": \"h\", \"arguments\": {}",
                ", \"id\": \"a1b2c3d4e\"}",
                "]",
                ", ",
                "null",
                "</tool_calls>",
                "</TOOLCALL>",
                "<|/tool_call|>",
            ]
            .map(str::to_owned),
        );
        // Well-formed pieces too, so that soups reach calls that parse: the family's own calls
        // (those that start with one of its calls openers), or all of them.
        let calls = [
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```<｜tool▁call▁end｜>",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜>",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|>",
            "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
            "<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>",
            "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n",
            "[TOOL_CALLS]f[ARGS]{\"a\": 1}",
            "[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{}",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n",
            "<tool_calls>[{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"c1\"}, {\"name\": \"g\", \"arguments\": {}}]</tool_calls>",
            " functools[{\"name\": \"f\", \"arguments\": {\"a\": 1}}, {\"name\": \"g\", \"arguments\": {}}]",
            "<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"a\": [1, {}]}}, {\"name\": \"g\", \"arguments\": {}}]",
            "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"a1b2c3d4e\"}, {\"name\": \"g\", \"arguments\": {}, \"id\": \"f5g6h7i8j\"}]",
            "[TOOL_CALLS]{\"name\": \"f\", \"arguments\": {}}",
            "<TOOLCALL>[{\"name\": \"f\", \"arguments\": {\"a\": \"x\"}}, {\"name\": \"g\", \"arguments\": {}}]</TOOLCALL>",
            "<|tool_call|>{\"name\": \"f\", \"arguments\": {\"a\": 1}}<|/tool_call|>\n<|tool_call|>[{\"name\": \"g\", \"arguments\": {}}, {\"name\": \"h\", \"arguments\": {\"s\": \"<|/tool_call|><|tool_call|>\"}}]<|/tool_call|>",
            "<|tool_call|>{\"name\": \"f\", \"arguments\": {}}<|/tool_call|>",
            "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": \"};\"}}; {\"name\": \"g\", \"parameters\": {}}<|python_tag|>{\"name\": \"h\"}<|eom_id|>",
            ">>>f\n{\"a\": 1}>>>g\n{}\n>>>all\nDone.<|eot_id|>",
            "<|tool_call_start|>[f(a=1, s='), x('), g()]<|tool_call_end|><|tool_call_start|>[h(b=\"]\")]<|tool_call_end|><|im_end|>",
            "<|tool_call>call:f{a:<|\"|>x<|\"|>}<tool_call|>",
        ];
        let opens = profile.tool_calls.iter().flat_map(|c| c.open.iter());
        let opens: Vec<&String> = opens.collect();
        let own: Vec<&str> = calls
            .into_iter()
            .filter(|c| opens.iter().any(|o| c.starts_with(o.as_str())))
            .collect();
        let mut segments = vec![
            "</think>\n\nSure. ",
            "<think>Plan.</think>",
            "[BEGIN FINAL RESPONSE]\nSure.\n[END FINAL RESPONSE]\n",
        ];
        segments.extend(if own.is_empty() { calls.to_vec() } else { own });
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
        ("mistral_small", None, "It is sunny.[TOOL_CALLS]f[ARGS]{\"a\": 1}[TOOL_CALLS]g[CALL_ID]a1b2c3d4e[ARGS]{}[TOOL_CALLS]h[ARGS]{}</s>"),
        ("functionary_v3_2", None, "all\nIt is sunny.>>>f\n{}"),
        ("functionary_v3_2", None, "all\nIt is sunny.>>>f\n{\"a\": \">>\"}\n>>>g\n{}<|eot_id|>"),
        ("apriel", None, "Here are my reasoning steps:\nLet me think.\n[BEGIN FINAL RESPONSE]\nIt is sunny.\n[END FINAL RESPONSE]\n<|end|>"),
        ("seed_oss", Some("<seed:think>"), "Let me think.</seed:think>It is sunny.<seed:eos>"),
        ("lfm2", None, "<think>Plan.</think>Sure.<|tool_call_start|>[f(a=1), g(s=')')]<|tool_call_end|><|tool_call_start|>[h()]<|tool_call_end|><|im_end|>"),
        ("llama3_json", None, "It is sunny.<|python_tag|>{\"name\": \"f\", \"parameters\": {}}"),
        ("llama3_json", None, "{\"name\": \"f\", \"parameters\": {\"a\": 1}};{\"name\": \"g\", \"parameters\": {}}<|eom_id|>"),
        ("glm4_5", None, "\n<think>Plan.</think>\nSure.\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n<tool_call>g\n</tool_call><|observation|>"),
        ("minimax_m2", None, "Plan.\n</think>\n\nSure.\n<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n<invoke name=\"g\">\n</invoke>\n</minimax:tool_call>[e~["),
        ("deepseek_v3_2", None, "Plan.</think>Sure.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">x</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"g\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>"),
        ("qwen3_coder", None, "Sure.\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=g>\n</function>\n</tool_call><|im_end|>"),
        ("qwen3_5", Some("<|im_start|>assistant\n<think>\n"), "Plan.\n</think>\n\nSure.\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call><|im_end|>"),
        ("seed_oss", None, "<seed:think>Plan.</seed:think>Sure.<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call><seed:eos>"),
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
            // `mistral_small`'s last call has no closer: `$` ends it, at the end; so does
            // `llama3_json`'s without an end token.
            let ends_at_dollar = *name == "mistral_small"
                || (*name == "llama3_json" && !input.ends_with("<|eom_id|>"))
                || (*name == "functionary_v3_2" && !input.ends_with("<|eot_id|>"));
            let held = usize::from(ends_at_dollar).min(calls);
            assert_eq!(
                got.early_calls,
                calls - held,
                "{name}: calls before the end"
            );
        }
        for field in text_fields(&spec) {
            if let Some(want) = one_shot.get(&field).and_then(Value::as_str) {
                assert_eq!(got.early(&field), want, "{name}: {field} before the end");
            }
        }
    }
}

/// How a family's `x-regex-iterator` reads its calls, written out from the schema's pattern:
/// the openers (tried in this order at one position), whether `\b` follows them, the closers;
/// or, `separated`, an optional separator (the one opener) before a body of at least one
/// character, each match starting where the last ended.
struct CallForm {
    name: &'static str,
    openers: &'static [&'static str],
    word_boundary: bool,
    closers: &'static [&'static str],
    separated: bool,
}

/// The families whose calls stream one by one through XML-parameter iterators, and
/// `mistral_small`'s calls separated by `[TOOL_CALLS]`.
const CALL_FORMS: &[CallForm] = &[
    // (<tool_call>.*?(?:</tool_call>|$))
    CallForm {
        name: "glm4_5",
        openers: &["<tool_call>"],
        word_boundary: false,
        closers: &["</tool_call>"],
        separated: false,
    },
    // (<invoke\b.*?(?:</invoke>|$))
    CallForm {
        name: "minimax_m2",
        openers: &["<invoke"],
        word_boundary: true,
        closers: &["</invoke>"],
        separated: false,
    },
    // (<｜DSML｜invoke\b.*?(?:</｜DSML｜invoke>|$))
    CallForm {
        name: "deepseek_v3_2",
        openers: &["<｜DSML｜invoke"],
        word_boundary: true,
        closers: &["</｜DSML｜invoke>"],
        separated: false,
    },
    // ((?:<tool_call>|<function=).*?(?:</function>|</tool_call>|$))
    CallForm {
        name: "qwen3_coder",
        openers: &["<tool_call>", "<function="],
        word_boundary: false,
        closers: &["</function>", "</tool_call>"],
        separated: false,
    },
    CallForm {
        name: "qwen3_5",
        openers: &["<tool_call>", "<function="],
        word_boundary: false,
        closers: &["</function>", "</tool_call>"],
        separated: false,
    },
    // ((?:<seed:tool_call>|<function=).*?(?:</function>|</seed:tool_call>|$))
    CallForm {
        name: "seed_oss",
        openers: &["<seed:tool_call>", "<function="],
        word_boundary: false,
        closers: &["</function>", "</seed:tool_call>"],
        separated: false,
    },
    // (?:\[TOOL_CALLS\])?(.+?)(?:\[TOOL_CALLS\]|$)
    CallForm {
        name: "mistral_small",
        openers: &["[TOOL_CALLS]"],
        word_boundary: false,
        closers: &["[TOOL_CALLS]"],
        separated: true,
    },
];

impl CallForm {
    /// Where each call closed by a literal closer ends in `text`, reading as `re.finditer` does
    /// from `from` (the calls' part) up to `to` (the first end token after it).
    fn closed_call_ends(&self, text: &str, from: usize, to: usize) -> Vec<usize> {
        let text = &text[..to];
        let opener_at = |p: usize| {
            self.openers.iter().find_map(|o| {
                let end = p + o.len();
                let next = text[p..].strip_prefix(o)?.chars().next();
                // `\b` after a word character: no word character follows (Python's `\w`).
                let boundary = next.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                (!self.word_boundary || boundary).then_some(end)
            })
        };
        let closer_at = |q: usize| {
            self.closers
                .iter()
                .find(|c| text[q..].starts_with(**c))
                .map(|c| q + c.len())
        };
        let bounds = char_boundaries(text);
        let mut ends = Vec::new();
        let mut pos = from;
        loop {
            if self.separated {
                // The separator if a character follows it, then at least one character.
                let sep = self.openers[0];
                let body = match text[pos..].strip_prefix(sep) {
                    Some(rest) if !rest.is_empty() => pos + sep.len(),
                    _ => pos,
                };
                let Some(first) = text[body..].chars().next() else {
                    return ends;
                };
                let Some(end) = bounds
                    .iter()
                    .filter(|&&q| q >= body + first.len_utf8())
                    .find_map(|&q| closer_at(q))
                else {
                    return ends;
                };
                ends.push(end);
                pos = end;
                continue;
            }
            let Some(open_end) = bounds
                .iter()
                .filter(|&&p| p >= pos)
                .find_map(|&p| opener_at(p))
            else {
                return ends;
            };
            let Some(end) = bounds
                .iter()
                .filter(|&&q| q >= open_end)
                .find_map(|&q| closer_at(q))
            else {
                return ends;
            };
            ends.push(end);
            pos = end;
        }
    }
}

/// Calls stream one by one: for every conformance input of each family whose calls are XML
/// parameters or separated by `[TOOL_CALLS]`, cut in two at every split point, each call's
/// `region_close` (with the one-shot parse's value) arrives with the chunk that completes its
/// closer, before the rest of the text and before the stream ends (a call that `$` ends, as
/// `mistral_small`'s last one, arrives at the end). Where the text before the calls is undecided without a prompt (it
/// may still turn out to be reasoning: no reasoning closer yet, in a family whose untagged text
/// is not plain content) the calls are held until the end, and stream with the prompt of a
/// thinking-off turn (reasoning opened and closed) instead.
#[test]
fn calls_stream_as_each_closes() {
    use chatparse::runtime::schema::stream::Untagged;
    let suites = load_suites();
    let mut checked = 0;
    let mut failures = Vec::new();
    for form in CALL_FORMS {
        let spec = chatparse::shipped::spec(form.name).unwrap().unwrap();
        let profile = spec.stream_profile().unwrap();
        let calls = profile
            .tool_calls
            .as_ref()
            .unwrap_or_else(|| panic!("{}: calls do not stream", form.name));
        let suite = suites.iter().find(|s| s.name == form.name).unwrap();
        for case in &suite.cases {
            let input = case.input.as_str();
            let Ok(one_shot) = spec.parse(input) else {
                continue;
            };
            let Some(want) = one_shot.get("tool_calls").and_then(Value::as_array) else {
                continue;
            };
            let from = calls
                .open
                .iter()
                .filter_map(|o| input.find(o.as_str()))
                .min()
                .unwrap();
            let to = profile
                .markers
                .iter()
                .filter_map(|m| input[from..].find(m.as_str()).map(|i| from + i))
                .min()
                .unwrap_or(input.len());
            let ends = form.closed_call_ends(input, from, to);
            // A separated format's last call has no closer: `$` ends it.
            assert_eq!(
                ends.len() + usize::from(form.separated),
                want.len(),
                "[{}/{}] oracle",
                form.name,
                case.name
            );
            let decided = profile.reasoning.as_ref().is_none_or(|r| {
                r.untagged == Untagged::Content
                    || r.close.iter().any(|c| input[..from].contains(c.as_str()))
            });
            let thinking_off = profile.reasoning.as_ref().map_or(String::new(), |r| {
                format!(
                    "<|im_start|>assistant\n{}\n\n{}\n\n",
                    r.open.as_deref().unwrap(),
                    r.close[0]
                )
            });
            let runs = if decided {
                vec![(None, true)]
            } else {
                vec![(None, false), (Some(thinking_off.as_str()), true)]
            };
            for (prefix, streams) in runs {
                let final_calls = match prefix {
                    Some(p) => spec.parse_with_prefix(input, p).unwrap()["tool_calls"].clone(),
                    None => one_shot["tool_calls"].clone(),
                };
                for split in char_boundaries(input) {
                    checked += 1;
                    let mut parser = spec.stream(prefix, None).unwrap();
                    let closes = std::cell::RefCell::new(Vec::<Value>::new());
                    let mut record = |e: Event<'_>| {
                        if let Event::RegionClose { field, value } = e {
                            if field == "tool_calls" {
                                closes.borrow_mut().push(value);
                            }
                        }
                    };
                    parser.initial_events_with(&mut record);
                    parser.feed_with(&input[..split], &mut record).unwrap();
                    let first = closes.borrow().len();
                    parser.feed_with(&input[split..], &mut record).unwrap();
                    let before_end = closes.borrow().len();
                    let message = parser.finish_with(&mut record).unwrap();
                    let closes = closes.into_inner();
                    let expect_first = if streams {
                        ends.iter().filter(|&&e| e <= split).count()
                    } else {
                        0
                    };
                    let expect_before_end = if streams { ends.len() } else { 0 };
                    let early_values_match = closes
                        .iter()
                        .take(before_end)
                        .zip(final_calls.as_array().unwrap())
                        .all(|(a, b)| same_value(a, b));
                    if first != expect_first
                        || before_end != expect_before_end
                        || !early_values_match
                        || !same_value(&message["tool_calls"], &final_calls)
                    {
                        failures.push(format!(
                            "[{}/{}] prefix {prefix:?} split {split}: {first} calls closed with \
                             the first chunk (want {expect_first}), {before_end} before the end \
                             (want {expect_before_end}), values match: {early_values_match}",
                            form.name, case.name
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} split points");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

/// A content-then-calls schema whose calls are the matches of `iterator`, each kept as its raw
/// text (the capture runs from the opener through the closer), with its stream profile.
fn calls_spec(iterator: &str) -> Spec {
    calls_spec_with(
        r"^\s*(?:(?P<content>\S(?:.*?\S)??)\s*)??(?:(?P<tool_calls><calls>(?:.*?\S)??)\s*)?(?:<end>|$)",
        iterator,
        r#"["<end>"]"#,
    )
    .unwrap()
}

/// A schema whose root pattern `root` has `content` and `tool_calls` groups, the calls the
/// matches of `iterator` (strings), with a profile whose calls open at `<calls>` and whose
/// markers are `markers` (a JSON list); the profile's refusal, if any.
fn calls_spec_with(root: &str, iterator: &str, markers: &str) -> Result<Spec, String> {
    let schema = serde_json::json!({
        "type": "object",
        "x-regex": root,
        "properties": {
            "content": {"type": "string"},
            "tool_calls": {"type": "array", "x-regex-iterator": iterator, "items": {"type": "string"}}
        }
    });
    let profile = format!(
        r#"{{"content": {{"field": "content"}},
            "tool_calls": {{"field": "tool_calls", "open": ["<calls>"]}}, "markers": {markers}}}"#
    );
    Spec::from_json_str(&schema.to_string())
        .unwrap()
        .with_stream_profile(&profile, "<profile>")
        .map_err(|e| e.to_string())
}

/// `\b` after the openers (Unicode and ASCII word characters), several openers tried in pattern
/// order at one position, and calls separated by an optional separator, read exactly as
/// `re.finditer` reads them, for every chunking of soups made to hit them: `<call` is refused
/// before `s`, `_`, `é` (a word character to Python) and accepted before `>`, ` ` or the end; of
/// `<f` and `<fn`, `<fn>` is a call opened by `<fn` (its closer search starts after it, so `n>`
/// does not close it); a separated call's body has at least one character, after `<s>` when a
/// character follows it. Each call's items are its captured text, so a call opened or closed
/// anywhere else than the regex says changes the streamed value; the chunks of each streamed call
/// are its raw text (separated calls: their raw texts follow one another from the calls' start,
/// a `<s>` closer beginning the next one).
#[test]
fn word_boundaries_and_several_openers_stream_as_the_regex_reads_them() {
    let specs = [
        ("unicode \\b", calls_spec(r"(<call\b.*?(?:</call>|$))")),
        ("ascii \\b", calls_spec(r"(?a)(<call\b.*?(?:</call>|$))")),
        ("openers", calls_spec(r"((?:<f|<fn)\b.*?(?:n>|</f>|$))")),
        (
            "openers, no \\b",
            calls_spec(r"((?:<fn|<f).*?(?:n>|</f>|$))"),
        ),
        ("separated", calls_spec(r"(?:<s>)?(.+?)(?:<s>|</x>|$)")),
    ];
    let atoms = [
        "<calls>", "<call", "<call ", "<callé", "<call_", "<calls", "<call>", "<cal", "l", "s",
        "_", "é", "1", "x", " ", "\n", ">", "</call>", "</call", "<end>", "<f", "<fn", "<fn>",
        "<fé", "n", "n>", "</f>", "Hi", "<s>", "<s>x", "</x>", "<s", "s>", "</",
    ];
    let mut rng = Rng(0x0b0b_1e55);
    let mut failures = Vec::new();
    let mut early = 0;
    for (label, spec) in &specs {
        assert!(
            spec.stream_profile().unwrap().tool_calls.is_some(),
            "{label}"
        );
        for _ in 0..400 {
            let n = 2 + rng.below(10);
            let input: String = std::iter::once("Hi <calls>")
                .chain((0..n).map(|_| atoms[rng.below(atoms.len())]))
                .collect();
            let one_shot = spec.parse(&input).map_err(|e| e.to_string());
            let mut cutss = chunkings(&input, &mut rng, 10);
            cutss.push(char_boundaries(&input).into_iter().skip(1).collect());
            for cuts in cutss {
                let mut parser = spec.stream(None, None).unwrap();
                let calls = std::cell::RefCell::new(Vec::<(String, Value)>::new());
                let mut raw = String::new();
                let mut at = 0;
                let mut record = |e: Event<'_>| match e {
                    Event::RegionChunk {
                        field: "tool_calls",
                        text,
                        ..
                    } => raw.push_str(&text),
                    Event::RegionClose {
                        field: "tool_calls",
                        value,
                    } => calls.borrow_mut().push((std::mem::take(&mut raw), value)),
                    _ => {}
                };
                let mut fed = Ok(());
                for &cut in &cuts {
                    fed = fed.and_then(|()| parser.feed_with(&input[at..cut], &mut record));
                    at = cut;
                }
                let streamed = calls.borrow().len();
                let message = fed
                    .and_then(|()| parser.finish_with(&mut record))
                    .map_err(|e| e.to_string());
                let calls = calls.into_inner();
                early += streamed;
                let fail =
                    |why: String| format!("[{label}] {} cuts {cuts:?}: {why}", preview(&input));
                match (&one_shot, &message) {
                    (Ok(a), Ok(b)) if same_value(a, b) => {}
                    (Err(a), Err(b)) if a == b => {}
                    _ => {
                        failures.push(fail(format!("one-shot {one_shot:?}, streamed {message:?}")));
                        continue;
                    }
                }
                let Ok(message) = &message else { continue };
                let want = message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let separated = *label == "separated";
                let calls_text = &input[input.find("<calls>").unwrap()..];
                let mut raw_at = 0;
                for (k, (text, value)) in calls.iter().take(streamed).enumerate() {
                    let raw_ok = if separated {
                        // A `<s>` closer begins the next call's raw text (no body holds one).
                        let ok = calls_text[raw_at..].starts_with(text.as_str())
                            && text.contains(value.as_str().unwrap_or("\u{0}"))
                            && !text.ends_with("<s>");
                        raw_at += text.len();
                        ok
                    } else {
                        value.as_str() == Some(text.as_str())
                    };
                    if want.get(k).is_none_or(|w| !same_value(w, value)) || !raw_ok {
                        failures.push(fail(format!(
                            "call {k}: streamed {value} (chunks {text:?}), final {want:?}"
                        )));
                    }
                }
            }
        }
    }
    assert!(early > 1000, "only {early} calls streamed early");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// A profile's tool calls are checked against the iterator: what cannot stream one by one is
/// refused with the reason.
#[test]
fn calls_that_cannot_stream_one_by_one_are_refused() {
    let spec = |iterator: &str| {
        calls_spec_with(
            r"^(?P<content>.*?)(?P<tool_calls><calls>.*)?$",
            iterator,
            "[]",
        )
        .map(|_| ())
    };
    assert_eq!(spec(r"<a>(.*?)(?:</a>|$)"), Ok(()));
    assert_eq!(spec(r"((?:<a>|<b>).*?(?:</a>|$))"), Ok(()));
    assert_eq!(spec(r"(?:<s>)?(.+?)(?:<s>|$)"), Ok(()));
    for (iterator, why) in [
        // The calls' text may end before a closer that ends in white space.
        (r"<a>(.*?)(?:</a>\n|$)", "ends in white space"),
        (r"(?:<s>)?(.+?)(?:<s> |$)", "ends in white space"),
        (r"<a>(.*?)$", "no literal closer"),
        (r"<a>(?!x)(.*?)(?:</a>|$)", "look-ahead other than"),
        (r"(?:<a>|<b>)(.*?)(?:</a>|$)", "several openers"),
        (r"<a>(.*)(?:</a>|$)", "repetition other than"),
    ] {
        let err = spec(iterator).unwrap_err();
        assert!(
            err.contains("cannot stream one by one"),
            "{iterator}: {err}"
        );
        assert!(err.contains(why), "{iterator}: {err}");
    }
}

/// Gemma 4's calls at the start of the output wait for the text after them (its profile's
/// `tool_calls.leading`): the root substitution moves that text in front of the calls, and a
/// reasoning opener there makes the root pattern read the calls as reasoning. The expected
/// messages are transformers 5.10.4's `recursive_parse` of each output (with a prompt: of the
/// prompt's tail `<|channel>thought\n<channel|>` followed by the output, which is what Gemma 4's
/// template writes with thinking off and what the stream reads from the prompt). At every split
/// point the streamed calls are the final ones; the calls stream before the end where the text
/// after them decides it, or where the prompt put a closed reasoning block in front of them
/// (counted in one-byte feeds); and the same profile without `leading` sends a call that the
/// final message does not have.
#[test]
fn gemma4_leading_calls_wait_for_the_text_after_them() {
    const CALL: &str = "<|tool_call>call:f{a:1}<tool_call|>";
    const CALL_G: &str = "<|tool_call>call:g{b:<|\"|>x<|\"|>}<tool_call|>";
    const PROMPT: &str = "<|turn>model\n<|channel>thought\n<channel|>";
    let f =
        chatparse::json!({"type": "function", "function": {"name": "f", "arguments": {"a": 1}}});
    let g =
        chatparse::json!({"type": "function", "function": {"name": "g", "arguments": {"b": "x"}}});
    let cases = [
        (
            None,
            format!("{CALL}<|channel>thought hi"),
            chatparse::json!({"role": "assistant", "reasoning_content": format!("hi{CALL}")}),
            0,
        ),
        (
            None,
            format!("{CALL} <|channel>thought hi<channel|>ok"),
            chatparse::json!({"role": "assistant", "content": "ok", "reasoning_content": "hi", "tool_calls": [f]}),
            0,
        ),
        (
            None,
            format!("{CALL}<|channel>thought hi<turn|>"),
            chatparse::json!({"role": "assistant", "reasoning_content": format!("hi{CALL}")}),
            0,
        ),
        (
            None,
            format!("{CALL}<|channel>thoughX"),
            chatparse::json!({"role": "assistant", "content": "<|channel>thoughX", "tool_calls": [f]}),
            1,
        ),
        (
            None,
            format!(" {CALL}\n{CALL_G}Hi<|channel>thought"),
            chatparse::json!({"role": "assistant", "content": "Hi<|channel>thought", "tool_calls": [f, g]}),
            2,
        ),
        (
            None,
            format!("{CALL}\n{CALL_G}\n<|channel>thought x"),
            chatparse::json!({"role": "assistant", "reasoning_content": format!("x{CALL}\n{CALL_G}")}),
            0,
        ),
        (
            None,
            format!("{CALL}<|tool_response>"),
            chatparse::json!({"role": "assistant", "tool_calls": [f]}),
            1,
        ),
        (
            None,
            format!("{CALL}Done."),
            chatparse::json!({"role": "assistant", "content": "Done.", "tool_calls": [f]}),
            1,
        ),
        (
            None,
            CALL.to_owned(),
            chatparse::json!({"role": "assistant", "tool_calls": [f]}),
            0,
        ),
        (
            Some(PROMPT),
            format!("{CALL}<|channel>thought hi"),
            chatparse::json!({"role": "assistant", "content": "<|channel>thought hi", "tool_calls": [f]}),
            1,
        ),
        (
            Some(PROMPT),
            CALL.to_owned(),
            chatparse::json!({"role": "assistant", "tool_calls": [f]}),
            1,
        ),
    ];
    let shipped = chatparse::shipped::spec("gemma4").unwrap().unwrap();
    let profile =
        std::fs::read_to_string(support::repo_root().join("schemas/streaming/gemma4.json"))
            .unwrap();
    let mut without: serde_json::Value = serde_json::from_str(&profile).unwrap();
    without["tool_calls"]
        .as_object_mut()
        .unwrap()
        .remove("leading")
        .expect("gemma4's profile holds its leading calls");
    let schema = std::fs::read_to_string(support::repo_root().join("schemas/gemma4.json")).unwrap();
    // The root substitution writes its groups out of order (`\1\3\2\4`): a profile without
    // `leading` is refused at load, naming the section.
    let refused = Spec::from_json_str(&schema)
        .unwrap()
        .with_stream_profile(&without.to_string(), "<profile without leading>")
        .unwrap_err();
    assert!(
        refused.to_string().contains("/tool_calls/leading"),
        "{refused}"
    );
    // Held by a literal no output writes: the calls go out at once.
    let mut never: serde_json::Value = serde_json::from_str(&profile).unwrap();
    never["tool_calls"]["leading"]["held_by"] = serde_json::json!(["<never written>"]);
    let sabotaged = Spec::from_json_str(&schema)
        .unwrap()
        .with_stream_profile(&never.to_string(), "<profile held by nothing>")
        .unwrap();
    let mut rng = Rng(0x6e33_4a11);
    let mut failures = Vec::new();
    let mut sabotage_caught = 0;
    for (prompt, input, reference, early) in &cases {
        let one_shot = match prompt {
            Some(p) => shipped.parse_with_prefix(input, p),
            None => shipped.parse(input),
        }
        .unwrap();
        assert!(
            same_value(&one_shot, reference),
            "{input:?}: {one_shot} != reference {reference}"
        );
        let cuts = chunkings(input, &mut rng, 0);
        failures.extend(check("gemma4", &shipped, *prompt, input, &cuts));
        let one_byte: Vec<usize> = char_boundaries(input).into_iter().skip(1).collect();
        let got = stream(&shipped, *prompt, input, &one_byte).early_calls;
        if got != *early {
            failures.push(format!(
                "{input:?}: {got} calls before the end, want {early}"
            ));
        }
        sabotage_caught +=
            usize::from(check("gemma4", &sabotaged, *prompt, input, &cuts).is_some());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The calls followed by a reasoning opener (cases 1, 3 and 6) are sent by a stream that does
    // not wait.
    assert_eq!(sabotage_caught, 3);
}

/// `"objects": true` (`llama3_json`'s calls) is accepted only for the patterns the scan follows:
/// the shipped schema with its opener; refused for another opener, a second opener, a changed
/// iterator or substitution, and together with a `list`.
#[test]
fn objects_are_refused_where_the_scan_does_not_read_the_schema() {
    let shipped =
        std::fs::read_to_string(support::repo_root().join("schemas/llama3_json.json")).unwrap();
    let with = |schema: &str, calls: &str| {
        let profile = format!(
            r#"{{"content": {{"field": "content"}}, "tool_calls": {calls},
                "markers": ["<|python_tag|>", "<|eot_id|>"]}}"#
        );
        Spec::from_json_str(schema)
            .unwrap()
            .with_stream_profile(&profile, "<profile>")
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let good = r#"{"field": "tool_calls", "open": ["<|python_tag|>"], "objects": true}"#;
    assert_eq!(with(&shipped, good), Ok(()));
    let iterator = r#""(\\{.*?)(?:<\\|python_tag\\|>|$)""#;
    assert!(shipped.contains(iterator));
    let join = r#""\\}\\s*;\\s*(\\{\\s*\"(?:name|type)\"\\s*:)""#;
    assert!(shipped.contains(join));
    for (schema, calls) in [
        (
            shipped.clone(),
            r#"{"field": "tool_calls", "open": ["<|eot_id|>"], "objects": true}"#,
        ),
        (
            shipped.clone(),
            r#"{"field": "tool_calls", "open": ["<|python_tag|>", "{"], "objects": true}"#,
        ),
        (
            shipped.replace(iterator, r#""(\\{.*)(?:<\\|python_tag\\|>|$)""#),
            good,
        ),
        (shipped.replace(join, r#""\\}\\s*;\\s*(\\{)""#), good),
        (
            shipped.clone(),
            r#"{"field": "tool_calls", "open": ["<|python_tag|>"], "objects": true, "list": {}}"#,
        ),
    ] {
        let err = with(&schema, calls).unwrap_err();
        assert!(
            err.contains("cannot stream as JSON objects"),
            "{calls}: {err}"
        );
    }
}

/// `tool_calls.leading` holds calls only for a root substitution that writes its groups out of
/// order; on hermes (no root substitution) the section is refused at load, naming it.
#[test]
fn leading_is_refused_where_no_substitution_reorders_the_output() {
    let root = support::repo_root();
    let schema = std::fs::read_to_string(root.join("schemas/hermes.json")).unwrap();
    let profile = std::fs::read_to_string(root.join("schemas/streaming/hermes.json")).unwrap();
    let mut with: serde_json::Value = serde_json::from_str(&profile).unwrap();
    let plain = Spec::from_json_str(&schema)
        .unwrap()
        .with_stream_profile(&with.to_string(), "<hermes profile>");
    assert!(plain.is_ok(), "{:?}", plain.err());
    with["tool_calls"]["leading"] =
        serde_json::json!({"close": "</tool_call>", "held_by": ["<think>"]});
    let refused = Spec::from_json_str(&schema)
        .unwrap()
        .with_stream_profile(&with.to_string(), "<hermes profile with leading>")
        .unwrap_err();
    let text = refused.to_string();
    assert!(
        text.contains("/tool_calls/leading") && text.contains("remove"),
        "{text}"
    );
}

/// lfm2: a call whose `)` is followed by `<` ends once the list's `<|tool_call_end|>` has
/// arrived whole — the schema's list text `L` ends before `\s*\]?\s*<|tool_call_end|>`, and its
/// iterator ends a call at a `)` followed by white space and the end of `L` — whichever chunk
/// the `)<` came in (before the closer is whole, `<` may be text, and the `)` ends nothing).
/// A `)<` inside a string does not end its call.
#[test]
fn lfm2_call_before_the_closer_ends_when_the_list_closes() {
    let spec = chatparse::shipped::spec("lfm2").unwrap().unwrap();
    let input = "<|tool_call_start|>[f(a=1), g(b='x)<y')<|tool_call_end|><|im_end|>";
    let closer = input.find("<|tool_call_end|>").unwrap() + "<|tool_call_end|>".len();
    let list_start = input.find('[').unwrap() + 1;
    for cut in list_start..closer {
        let mut parser = spec.stream(None, None).unwrap();
        let mut calls = 0;
        let mut count = |e: Event<'_>| {
            if matches!(e, Event::RegionClose { field, .. } if field == "tool_calls") {
                calls += 1;
            }
        };
        parser.feed_with(&input[..cut], &mut count).unwrap();
        parser.feed_with(&input[cut..closer], &mut count).unwrap();
        assert_eq!(calls, 2, "cut at {:?}", &input[..cut]);
        let message = parser.finish_with(&mut |_| {}).unwrap();
        assert_eq!(
            message["tool_calls"][1]["function"]["arguments"]["b"],
            "x)<y"
        );
    }
}

/// The final message takes the calls the stream parsed instead of parsing them again, but only
/// where parsing again would get through the output bound in force at `finish`: a call whose
/// items are an iterator's matches needs a match per item, and under a bound with room for the
/// calls' own match and one more, the final message fails as the one-shot parse under that bound
/// fails (the stream's parse of the call, under the call's own bound, got through). With room
/// for every match, the final message is the one-shot parse's. Every chunking.
#[test]
fn a_parsed_call_is_taken_only_where_the_bound_has_room_for_its_parse() {
    use chatparse::runtime::budget::{Limits, OutputBudget};
    let schema = serde_json::json!({
        "type": "object",
        "x-regex": r"^\s*(?:(?P<content>\S(?:.*?\S)??)\s*)??(?:(?P<tool_calls><calls>(?:.*?\S)??)\s*)?(?:<end>|$)",
        "properties": {
            "content": {"type": "string"},
            "tool_calls": {"type": "array", "x-regex-iterator": "<calls>(.*?)(?:</calls>|$)",
                           "items": {"type": "array", "x-regex-iterator": r"(\w)",
                                     "items": {"type": "string"}}}
        }
    });
    let profile = r#"{"content": {"field": "content"},
        "tool_calls": {"field": "tool_calls", "open": ["<calls>"]}, "markers": ["<end>"]}"#;
    let spec = Spec::from_json_str(&schema.to_string())
        .unwrap()
        .with_stream_profile(profile, "<profile>")
        .unwrap();
    let input = "Hi <calls>a b c</calls>";
    let limits = |matches| Limits {
        span_factor: 0,
        span_constant: 1 << 10,
        items_factor: 0,
        items_constant: matches,
    };
    for (matches, fails) in [(2, true), (4, false)] {
        let one_shot = {
            let _bound = OutputBudget::with_limits(input.len(), limits(matches));
            spec.parse(input).map_err(|e| e.to_string())
        };
        assert_eq!(one_shot.is_err(), fails, "{one_shot:?}");
        for cuts in std::iter::once(vec![input.len()]).chain(
            char_boundaries(input)
                .into_iter()
                .skip(1)
                .map(|b| vec![b, input.len()]),
        ) {
            let mut stream = spec.stream(None, None).unwrap();
            let mut at = 0;
            let mut closed = 0;
            for cut in cuts.iter().copied() {
                stream
                    .feed_with(&input[at..cut], &mut |e| {
                        closed += usize::from(matches!(
                            e,
                            Event::RegionClose {
                                field: "tool_calls",
                                ..
                            }
                        ))
                    })
                    .unwrap();
                at = cut;
            }
            // The call closed with the text: the stream parsed it.
            assert_eq!(closed, 1, "cuts {cuts:?}");
            let got = {
                let _bound = OutputBudget::with_limits(input.len(), limits(matches));
                stream.finish_with(&mut |_| {}).map_err(|e| e.to_string())
            };
            assert_eq!(got, one_shot, "bound of {matches} matches, cuts {cuts:?}");
        }
    }
}

/// A run of white space at every character boundary of every example of every profiled name
/// (after a `}`, before a `)`, between calls, inside a marker, in content and reasoning): the
/// stream equals the one-shot parse, in 16-byte chunks and in random ones. The scans skip such
/// runs through what earlier chunks read (they used to read them again on every chunk), so this
/// is where a resumption that drops or misplaces text would show.
#[test]
fn white_space_runs_stream_as_one_shot_everywhere() {
    let mut rng = Rng(0x5eed_0021);
    let mut failures = Vec::new();
    let mut inputs = 0;
    for (name, spec) in profiled() {
        let mut files: Vec<_> = std::fs::read_dir(format!("examples/{name}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        for path in files {
            let example = std::fs::read_to_string(&path).unwrap();
            for (k, at) in char_boundaries(&example).into_iter().enumerate() {
                // Longer than the runs the scans remember (32 bytes), of spaces, line breaks
                // or both.
                let run = [" ", "\n", " \n"][k % 3].repeat(48);
                let input = format!("{}{run}{}", &example[..at], &example[at..]);
                inputs += 1;
                let sixteen: Vec<usize> = char_boundaries(&input)
                    .into_iter()
                    .filter(|b| b % 16 == 0 && *b > 0)
                    .chain([input.len()])
                    .collect();
                let cuts = [sixteen, random_cuts(&input, &mut rng)];
                failures.extend(check(name, &spec, None, &input, &cuts));
            }
        }
    }
    assert!(inputs > 10_000, "only {inputs} inputs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

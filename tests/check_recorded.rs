//! The generated parsers' completeness checks decide from what the parse read
//! (`Check::verify_parse`: the call region's gaps, gpt-oss's read spans, functionary v3.2's root
//! groups and calls, recorded while the generated parse searches) instead of searching again as
//! the interpreter's check does (`Check::unread`). The verdict must be the same, error text and
//! position included: on every conformance input, every example, each example with a word
//! inserted at every character boundary (text before, among, inside and after the calls), and
//! generated outputs built from each schema's delimiters.

mod support;

use chatparse::runtime::schema::Check;
use chatparse::ParseErrorKind;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use support::{char_boundaries, load_suites, repo_root, stitched_output};

/// The families whose generated check records (`Check::CallGaps`, `Check::GptOss`,
/// `Check::FunctionaryV3_2`).
fn recorded_families() -> Vec<&'static str> {
    let families: Vec<&'static str> = chatparse::shipped::names()
        .filter(|name| {
            matches!(
                Check::for_shipped(name),
                Some(Check::CallGaps | Check::GptOss | Check::FunctionaryV3_2)
            )
        })
        .collect();
    assert!(families.contains(&"functionary_v3_2"), "{families:?}");
    families
}

/// A shipped family's interpreter (its check searching for itself) and generated parser.
struct Family {
    name: &'static str,
    schema: chatparse::Schema,
    generated: chatparse::models::ParseToJson,
    /// Its spec, when it streams through a profile: the stream's final message is the
    /// interpreter's parse with the check deciding from what that parse read.
    streamed: Option<chatparse::runtime::Spec>,
}

impl Family {
    fn new(name: &'static str) -> Family {
        Family {
            name,
            schema: chatparse::shipped::schema(name).unwrap(),
            generated: chatparse::models::parse_value_fn(name).unwrap(),
            streamed: chatparse::shipped::spec(name)
                .and_then(Result::ok)
                .filter(|spec| spec.stream_profile().is_some()),
        }
    }

    /// The stream's final message (the input in one chunk, then in chunks of 7 characters: calls the
    /// stream parsed are handed to the final parse) against the interpreter's parse.
    fn compare_streamed(
        &self,
        input: &str,
        interpreted: &Result<String, String>,
    ) -> Result<(), String> {
        let Some(spec) = &self.streamed else {
            return Ok(());
        };
        let bounds = support::char_boundaries(input);
        let sevens: Vec<usize> = bounds
            .iter()
            .copied()
            .step_by(7)
            .skip(1)
            .chain([input.len()])
            .collect();
        for cuts in [vec![input.len()], sevens] {
            let mut stream = spec.stream(None, None).unwrap();
            let mut at = 0;
            let mut fed = Ok(());
            for &cut in &cuts {
                fed = stream.feed_with(&input[at..cut], &mut |_| {});
                at = cut;
                if fed.is_err() {
                    break;
                }
            }
            let streamed = fed
                .and_then(|()| stream.finish_with(&mut |_| {}))
                .map(|v| v.to_string())
                .map_err(|e| e.to_string());
            if &streamed != interpreted {
                return Err(format!(
                    "{}: {input:?} cuts {cuts:?}\ninterpreter {interpreted:?}\nstreamed    {streamed:?}",
                    self.name
                ));
            }
        }
        Ok(())
    }

    /// The interpreter's verdict against the generated parser's, as text; `Ok(true)` when both
    /// refuse the input.
    fn compare(&self, input: &str) -> Result<bool, String> {
        let name = self.name;
        let interpreted = self.schema.parse(input);
        let compiled = (self.generated)(input);
        if same_verdict(&interpreted, &compiled) {
            self.compare_streamed(
                input,
                &interpreted
                    .as_ref()
                    .map(|v| v.to_string())
                    .map_err(|e| e.to_string()),
            )?;
            return Ok(interpreted.is_err());
        }
        Err(format!(
            "{name}: {input:?}\ninterpreter {interpreted:?}\ngenerated   {compiled:?}"
        ))
    }
}

/// The same message, or the same error as text; a check's error (`NotUnderstood`) compared whole:
/// its explanation, span, pointer and position. (The schema's own errors are compared as text:
/// the interpreter does not place every JSON error in the output, which is no check's doing.)
fn same_verdict(
    a: &Result<chatparse::Value, chatparse::ParseError>,
    b: &Result<chatparse::Value, chatparse::ParseError>,
) -> bool {
    let check_error = |r: &Result<_, chatparse::ParseError>| matches!(r, Err(e) if matches!(e.kind, ParseErrorKind::NotUnderstood { .. }));
    match (a, b) {
        (Ok(a), Ok(b)) => a == b,
        (Err(x), Err(y)) if check_error(a) || check_error(b) => x == y,
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

#[test]
fn recorded_checks_agree_on_the_corpus() {
    let families = recorded_families();
    assert!(families.len() >= 17, "{families:?}");
    let mut failures = Vec::new();
    let mut refused = 0;
    for suite in load_suites() {
        let Some(name) = suite.shipped_name() else {
            continue;
        };
        let Some(&name) = families.iter().find(|n| **n == name) else {
            continue;
        };
        let family = Family::new(name);
        for case in &suite.cases {
            match family.compare(&case.input) {
                Ok(refuses) => refused += usize::from(refuses),
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(refused > 0, "the corpus exercises refusals too");
}

#[test]
fn recorded_checks_agree_with_a_word_anywhere_in_the_examples() {
    let mut failures = Vec::new();
    let mut refused = 0;
    for name in recorded_families() {
        let family = Family::new(name);
        let dir = repo_root().join("examples").join(name);
        for file in ["tool_call.txt", "tool_calls.txt", "content_then_call.txt"] {
            let Ok(example) = std::fs::read_to_string(dir.join(file)) else {
                continue;
            };
            let inputs = char_boundaries(&example)
                .into_iter()
                .map(|at| format!("{} zqxj {}", &example[..at], &example[at..]));
            for input in [example.clone()].into_iter().chain(inputs) {
                match family.compare(&input) {
                    Ok(refuses) => refused += usize::from(refuses),
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        refused > 100,
        "the word is refused in many places ({refused})"
    );
}

#[test]
fn recorded_checks_agree_on_generated_outputs() {
    for name in recorded_families() {
        let family = Family::new(name);
        let text = chatparse::shipped::text(name).unwrap();
        let mut runner = TestRunner::new(Config {
            cases: 2_000,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&stitched_output(text), |input| {
            family
                .compare(&input)
                .map(drop)
                .map_err(TestCaseError::fail)
        });
        if let Err(e) = result {
            panic!("{name}: {e}");
        }
    }
}

/// functionary v3.2's outputs: its recipients (`>>>all\n` text blocks, also a second one after
/// the text, which the schema reads as a call named `all`; calls; recipients cut at the end;
/// text without one), end tokens and white space, in any order. The check reads the root
/// substitution's rewrite, the root pattern's groups and the calls' iterator's matches and their
/// text: the recorded verdict is the searching one's.
#[test]
fn functionary_v3_2_recorded_check_agrees_on_recipient_mixes() {
    let family = Family::new("functionary_v3_2");
    let fixed = [
        "Hello! How can I help you today?",
        "all\nA>>>all\n{}",
        "all\nA>>>all\n{\"x\": 1}>>>g\n{}<|eot_id|>",
        "  >>>all\nHi>>>f\n{\"a\": 1}\n>>>all \t\r\n{}>>>all\nB>>>get_wea",
        "get_time\n{}>>>all\nA>>>all\nB<|eot_id|>",
        "all\nSure.>>>a\n{}\nstray>>>all\nDone.<|eot_id|>",
        ">>>>>>all\n>>>",
        "\u{a0}>>>all\n\u{2028}x",
    ];
    let mut failures: Vec<String> = fixed
        .iter()
        .filter_map(|input| family.compare(input).err())
        .collect();
    let pieces: Vec<&str> = vec![
        ">>>",
        "all",
        "al",
        "\n",
        "\r\n",
        " \t",
        " ",
        ">",
        ">>>all\n",
        ">>>all \t\r\n",
        "all\n",
        ">>>all\n{}",
        ">>>get_time\n{}",
        ">>>f\n{\"a\": 1}",
        "g\n[1]",
        "<|eot_id|>",
        "Hi",
        "zq w",
        "{}",
        ">>>al",
        ">>>get_wea",
        "é",
    ];
    let mut runner = TestRunner::new(Config {
        cases: 4_000,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = proptest::collection::vec(proptest::sample::select(pieces), 0..12);
    let result = runner.run(&strategy, |parts| {
        family
            .compare(&parts.concat())
            .map(drop)
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        failures.push(e.to_string());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Where the interpreter's root pattern hands the calls' region on as a copy, the recorded check
/// places a gap by the root group's span, not by finding its text: here the gap's text is also
/// the message's content, earlier in the output, where a search by text would place it.
#[test]
fn a_gap_whose_text_comes_earlier_is_placed_where_it_is() {
    let spec = chatparse::shipped::spec("qwen3").unwrap().unwrap();
    let schema = chatparse::shipped::schema("qwen3").unwrap();
    let call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
    let input = format!("stray words\n\n{call}\nstray words");
    let want = schema.parse(&input).unwrap_err().to_string();
    let at = input.rfind("stray").unwrap();
    assert!(want.contains(&format!("{at}")), "{want}");
    for cuts in [vec![input.len()], vec![20, input.len()]] {
        let mut stream = spec.stream(None, None).unwrap();
        let mut from = 0;
        for cut in cuts {
            stream.feed_with(&input[from..cut], &mut |_| {}).unwrap();
            from = cut;
        }
        let got = stream.finish_with(&mut |_| {}).unwrap_err().to_string();
        assert_eq!(got, want);
    }
}

//! The generated parsers' completeness checks decide from what the parse read
//! (`Check::verify_parse`: the call region's gaps and gpt-oss's read spans recorded while the
//! generated parse searches) instead of searching again as the interpreter's check does
//! (`Check::unread`). The verdict must be the same, error text and position included: on every
//! conformance input, every example, each example with a word inserted at every character
//! boundary (text before, among, inside and after the calls), and generated outputs built from
//! each schema's delimiters.

mod support;

use chatparse::runtime::schema::Check;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use support::{char_boundaries, load_suites, repo_root, stitched_output};

/// The families whose generated check records (`Check::CallGaps`, `Check::GptOss`).
fn recorded_families() -> Vec<&'static str> {
    chatparse::shipped::names()
        .filter(|name| {
            matches!(
                Check::for_shipped(name),
                Some(Check::CallGaps | Check::GptOss)
            )
        })
        .collect()
}

/// A shipped family's interpreter (its check searching for itself) and generated parser.
struct Family {
    name: &'static str,
    schema: chatparse::Schema,
    generated: chatparse::models::ParseToJson,
}

impl Family {
    fn new(name: &'static str) -> Family {
        Family {
            name,
            schema: chatparse::shipped::schema(name).unwrap(),
            generated: chatparse::models::parse_value_fn(name).unwrap(),
        }
    }

    /// The interpreter's verdict against the generated parser's, as text; `Ok(true)` when both
    /// refuse the input.
    fn compare(&self, input: &str) -> Result<bool, String> {
        let name = self.name;
        let interpreted = self.schema.parse(input).map_err(|e| e.to_string());
        let compiled = (self.generated)(input).map_err(|e| e.to_string());
        if interpreted == compiled {
            return Ok(interpreted.is_err());
        }
        Err(format!(
            "{name}: {input:?}\ninterpreter {interpreted:?}\ngenerated   {compiled:?}"
        ))
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

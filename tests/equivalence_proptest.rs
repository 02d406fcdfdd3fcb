//! Generated parsers, the interpreter, and the interpreter with every substring-search fast path
//! turned off (all patterns on the regex engines) on 10,000 generated outputs per shipped schema,
//! built from each schema's own delimiters and literals plus JSON and random text: identical
//! JSON, or an error from all three.

mod support;

use chatparse::models::GENERATED;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use support::{same_value, stitched_output};

const CASES_PER_SCHEMA: u32 = 10_000;

#[test]
fn generated_and_interpreted_agree_on_generated_outputs() {
    for (name, generated) in GENERATED {
        let text = chatparse::shipped::text(name).unwrap();
        let schema = chatparse::shipped::schema(name).unwrap();
        let mut naive = chatparse::shipped::schema(name).unwrap();
        naive.disable_fast_paths();
        let mut runner = TestRunner::new(Config {
            cases: CASES_PER_SCHEMA,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&stitched_output(text), |input| {
            let interpreted = schema.parse(&input);
            let compiled = generated(&input);
            let regex_only = naive.parse(&input);
            let agree = |a: &Result<_, _>, b: &Result<_, _>| match (a, b) {
                (Ok(a), Ok(b)) => same_value(a, b),
                (Err(_), Err(_)) => true,
                _ => false,
            };
            if agree(&interpreted, &compiled) && agree(&interpreted, &regex_only) {
                Ok(())
            } else {
                Err(TestCaseError::fail(format!(
                    "{name}: interpreter {interpreted:?}\ngenerated {compiled:?}\nregex engines only {regex_only:?}"
                )))
            }
        });
        if let Err(e) = result {
            panic!("{name}: {e}");
        }
    }
}

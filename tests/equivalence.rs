//! The generated parsers (`chatparse::models::*`, from `response_parser!`) against the interpreter
//! and the reference: for every shipped schema, every conformance case gives the same JSON through
//! both back ends (or an error through both), and that JSON is the reference's.

mod support;

use std::collections::BTreeSet;

use chatparse::models::GENERATED_SCHEMA_ONLY as GENERATED;
use support::{load_suites, preview, same_value, Expect};

#[test]
fn every_shipped_schema_has_a_generated_parser() {
    let generated: BTreeSet<&str> = GENERATED.iter().map(|(n, _)| *n).collect();
    let shipped: BTreeSet<&str> = chatparse::shipped::names().collect();
    assert_eq!(generated, shipped);
}

#[test]
fn generated_code_agrees_with_interpreter_and_reference_on_the_corpus() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for suite in load_suites() {
        let Some(name) = suite.shipped_name() else {
            continue;
        };
        let Some((_, generated)) = GENERATED.iter().find(|(n, _)| *n == name) else {
            failures.push(format!("{name}: no generated parser"));
            continue;
        };
        let schema = suite.load_schema().unwrap();
        for case in &suite.cases {
            checked += 1;
            let interpreted = schema.parse(&case.input);
            let compiled = generated(&case.input);
            let agree = match (&interpreted, &compiled) {
                (Ok(a), Ok(b)) => same_value(a, b),
                (Err(_), Err(_)) => true,
                _ => false,
            };
            let matches_reference = match (&case.expect, &compiled) {
                (Expect::Value(want), Ok(got)) => same_value(want, got),
                (Expect::Error(_) | Expect::Unrepresentable(_), Err(_)) => true,
                _ => false,
            };
            if !agree || !matches_reference {
                failures.push(format!(
                    "[{name}/{}] input {}\n     interpreter {:?}\n     generated   {:?}",
                    case.name,
                    preview(&case.input),
                    interpreted.map(|v| v.to_string()),
                    compiled.map(|v| v.to_string()),
                ));
            }
        }
    }
    assert!(checked > 100, "only {checked} shipped-schema cases");
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

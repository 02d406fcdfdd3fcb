//! JMESPath transforms compiled to Rust (`chatparse-codegen`'s `jmespath` module) against the
//! interpreter: for every expression of the runtime's python-jmespath compliance corpus that the
//! code generator compiles, the compiled function and the interpreter must give the identical
//! value (key order and number text included) or both fail, with the same message, on every
//! input of the corpus. Every shipped schema's `transform` must compile.

use chatparse::runtime::jmespath::compiled::CompiledFn;
use chatparse::runtime::jmespath::Expression;
use chatparse::Value;
use std::collections::HashMap;

mod support;

static CORPUS: &[(&str, CompiledFn)] =
    chatparse::__compiled_jmespath_table!("runtime/src/jmespath/testdata/compliance.json");
static PAYLOADS: &[(&str, CompiledFn)] =
    chatparse::__compiled_jmespath_table!("benches/transform_payloads.json");

static EXTRA: &[(&str, CompiledFn)] =
    chatparse::__compiled_jmespath_table!("tests/jmespath_compiled_extra.json");

/// Compares `f` with the interpreter on `given`; `Err` describes a difference.
fn agree(source: &str, f: CompiledFn, given: &Value) -> Result<(), String> {
    let expression = Expression::compile(source).map_err(|e| format!("{source}: {e}"))?;
    let interpreted = expression.search(given);
    let compiled = f(given);
    match (&interpreted, &compiled) {
        (Ok(a), Ok(b)) if chatparse::runtime::py::identical(a, b) => Ok(()),
        (Err(a), Err(b)) if a.message == b.message => Ok(()),
        _ => Err(format!(
            "{source} on {given}: interpreted {interpreted:?}, compiled {compiled:?}"
        )),
    }
}

#[test]
fn compiled_corpus_expressions_agree_with_the_interpreter() {
    let path = support::repo_root().join("runtime/src/jmespath/testdata/compliance.json");
    let groups: Value =
        chatparse::value::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let table: HashMap<&str, CompiledFn> = CORPUS.iter().copied().collect();
    let mut expressions = HashMap::new();
    let (mut cases, mut compiled_cases, mut errors) = (0, 0, 0);
    let mut failures = Vec::new();
    for group in groups.as_array().unwrap() {
        let given = &group["given"];
        for case in group["cases"].as_array().unwrap() {
            let source = case["expression"].as_str().unwrap();
            cases += 1;
            let parses = Expression::compile(source).is_ok();
            expressions.insert(source, parses);
            let Some(f) = table.get(source) else {
                continue;
            };
            compiled_cases += 1;
            if Expression::compile(source).unwrap().search(given).is_err() {
                errors += 1;
            }
            if let Err(e) = agree(source, *f, given) {
                failures.push(e);
            }
        }
    }
    let parsed = expressions.values().filter(|p| **p).count();
    eprintln!(
        "{} of {parsed} parsable corpus expressions ({} distinct) compile to Rust; \
         {compiled_cases} of {cases} cases ran compiled ({errors} of them errors), {} differ",
        CORPUS.len(),
        expressions.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Most of the language compiles; what does not is `&expr` (sort_by, map, ...) and merge()
    // over possible key/value pairs.
    assert!(
        CORPUS.len() * 4 > parsed * 3,
        "only {} compile",
        CORPUS.len()
    );
}

/// Every `transform` of the shipped schemas compiles (generated parsers never interpret).
#[test]
fn every_shipped_transform_compiles() {
    fn transforms(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(a) => a.iter().for_each(|v| transforms(v, out)),
            Value::Object(m) => {
                if let Some(Value::String(t)) =
                    m.get("x-parser-args").and_then(|a| a.get("transform"))
                {
                    out.push(t.clone());
                }
                m.values().for_each(|v| transforms(v, out));
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(support::repo_root().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let schema: Value =
                chatparse::value::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            transforms(&schema, &mut found);
        }
    }
    assert!(found.len() >= 13, "{found:?}");
    // benches/transform_payloads.json lists each distinct shipped transform once.
    for t in &found {
        assert!(
            PAYLOADS.iter().any(|(source, _)| source == t),
            "shipped transform `{t}` does not compile, or is missing from benches/transform_payloads.json"
        );
    }
}

/// The bench payloads (one representative input per distinct shipped transform), and a few
/// edge inputs for each of those transforms.
#[test]
fn shipped_transforms_agree_with_the_interpreter() {
    let path = support::repo_root().join("benches/transform_payloads.json");
    let payloads: Value =
        chatparse::value::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let edges: Vec<Value> = chatparse::value::from_str(
        r#"[null, true, 0, "", "text", [], {}, [null], [[]], [1, "a"], [{}], [[{"name": "f"}]],
            {"name": "f"}, {"id": null}, {"id": ""}, {"id": 7, "name": "f"},
            {"parameters": null, "arguments": "x"}, {"parameters": {}, "arguments": {"a": 1}},
            [{"id": "x", "name": "f", "type": "t"}, null, {"tool_name": 1, "parameters": [2]}]]"#,
    )
    .unwrap()
    .as_array()
    .unwrap()
    .clone();
    let mut checked = 0;
    for entry in payloads.as_array().unwrap() {
        let source = entry["expression"].as_str().unwrap();
        let (_, f) = PAYLOADS.iter().find(|(s, _)| *s == source).unwrap();
        for given in std::iter::once(&entry["given"]).chain(&edges) {
            agree(source, *f, given).unwrap();
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        payloads.as_array().unwrap().len() * (edges.len() + 1)
    );
}

/// Shapes the corpus lacks (owned intermediates followed by borrowing steps, ...).
#[test]
fn extra_shapes_agree_with_the_interpreter() {
    let path = support::repo_root().join("tests/jmespath_compiled_extra.json");
    let groups: Value =
        chatparse::value::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for group in groups.as_array().unwrap() {
        for case in group["cases"].as_array().unwrap() {
            let source = case["expression"].as_str().unwrap();
            let (_, f) = EXTRA
                .iter()
                .find(|(s, _)| *s == source)
                .unwrap_or_else(|| panic!("`{source}` does not compile"));
            agree(source, *f, &group["given"]).unwrap();
            checked += 1;
        }
    }
    assert_eq!(checked, EXTRA.len());
}

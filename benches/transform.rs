//! JMESPath transforms compiled to Rust vs the interpreter, for each distinct `transform` of the
//! shipped schemas on a representative payload (`benches/transform_payloads.json`: the parsed
//! tool-call JSON the transform receives).
//!
//! `cargo bench --bench transform`; each group (named after a schema using the transform)
//! prints `compiled` and `interpreted`, and the speedup is their quotient. Both include building
//! the output value; the interpreter's time excludes parsing the expression (done once, as in a
//! parser).

use std::hint::black_box;
use std::path::PathBuf;

use chatparse::runtime::jmespath::compiled::CompiledFn;
use chatparse::runtime::jmespath::Expression;
use chatparse::Value;
use criterion::{criterion_group, criterion_main, Criterion};

static COMPILED: &[(&str, CompiledFn)] =
    chatparse::__compiled_jmespath_table!("benches/transform_payloads.json");

fn payloads() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/transform_payloads.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    chatparse::value::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn transforms(c: &mut Criterion) {
    for entry in payloads().as_array().expect("an array of payloads") {
        let source = entry["expression"].as_str().expect("expression");
        let given = &entry["given"];
        let name = entry["schemas"][0].as_str().expect("schemas");
        let interpreted = Expression::compile(source).expect("valid expression");
        let (_, compiled) = COMPILED
            .iter()
            .find(|(s, _)| *s == source)
            .unwrap_or_else(|| panic!("`{source}` does not compile to Rust"));
        assert_eq!(compiled(given).ok(), interpreted.search(given).ok());
        let mut group = c.benchmark_group(format!("transform/{name}"));
        group.bench_function("compiled", |b| b.iter(|| compiled(black_box(given))));
        group.bench_function("interpreted", |b| {
            b.iter(|| interpreted.search(black_box(given)))
        });
        group.finish();
    }
}

criterion_group!(benches, transforms);
criterion_main!(benches);

//! The fixed cost per call (issue 17): tiny content-only messages without any format marker
//! ("Hello! How can I help you today?") and each schema's one-call example (`tool_call.txt`,
//! 60–570 B), for every shipped schema, generated parser and interpreter.
//!
//! `cargo bench --bench small -- --warm-up-time 1 --measurement-time 2 tiny` runs the tiny
//! group only.

use std::hint::black_box;

use chatparse::models::GENERATED_TYPED;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Marker-free content-only messages, 8–60 B.
const TINY: [&str; 3] = [
    "Hello!",
    "Hello! How can I help you today?",
    "Sure, the capital of France is Paris. Anything else?",
];

/// The header a family writes before a content-only answer, where there is one: functionary
/// v3.2's `all` recipient (its template writes `>>>all\n`, the prompt ends with the `>>>`). The
/// `own` benchmark of that family times its tiny message behind that header.
const PLAIN_HEADER: &[(&str, &str)] = &[("functionary_v3_2", "all\n")];

fn tiny(c: &mut Criterion) {
    for &(name, generated) in GENERATED_TYPED {
        let schema = chatparse::shipped::schema(name).expect("shipped");
        let text = TINY[1];
        // Both back ends must agree before their times mean anything.
        for t in TINY {
            // (Command R7B, gpt-oss and functionary v3.2 refuse text outside their blocks or
            // without a recipient: both back ends do.)
            let value = chatparse::models::parse_value_fn(name).expect("generated")(t);
            assert_eq!(schema.parse(t), value, "{name}: {t:?}");
        }
        let mut group = c.benchmark_group(format!("tiny.{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("generated", |b| b.iter(|| generated(black_box(text))));
        group.bench_function("interpreter", |b| b.iter(|| schema.parse(black_box(text))));
        if let Some((_, header)) = PLAIN_HEADER.iter().find(|(n, _)| *n == name) {
            let own = format!("{header}{text}");
            let value = chatparse::models::parse_value_fn(name).expect("generated")(&own);
            assert_eq!(schema.parse(&own), value, "{name}: {own:?}");
            group.bench_function("own", |b| b.iter(|| generated(black_box(&own))));
        }
        group.finish();
    }
}

fn one_call(c: &mut Criterion) {
    for &(name, generated) in GENERATED_TYPED {
        let schema = chatparse::shipped::schema(name).expect("shipped");
        let path = format!(
            "{}/examples/{name}/tool_call.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("every schema has a tool_call example");
        let text = text.as_str();
        let mut group = c.benchmark_group(format!("one_call.{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("generated", |b| b.iter(|| generated(black_box(text))));
        group.bench_function("interpreter", |b| b.iter(|| schema.parse(black_box(text))));
        group.finish();
    }
}

criterion_group!(benches, tiny, one_call);
criterion_main!(benches);

//! Parse cost of every shipped schema: generated parser vs interpreter vs the naive port (every
//! pattern on the regex engines, captures and all) vs the hand-written floor, at about 200 B,
//! 4 KB, 64 KB and 1 MB; every gpt_oss example (small messages); the scaling of the generated parsers up to 100 MB; pathological inputs.
//!
//! Run `scripts/bench.sh` to run these and regenerate the README's table (see README,
//! "Performance"). `CHATPARSE_BENCH_QUICK=1` shortens every measurement.

mod support;

use std::hint::black_box;
use std::time::Duration;

use chatparse::models::GENERATED_TYPED;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use support::floor;

fn configure(c: &mut Criterion) -> Criterion {
    let quick = std::env::var_os("CHATPARSE_BENCH_QUICK").is_some();
    std::mem::take(c)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(if quick { 100 } else { 300 }))
        .measurement_time(Duration::from_millis(if quick { 200 } else { 800 }))
}

fn typed(name: &str) -> chatparse::models::ParseTyped {
    GENERATED_TYPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .expect("every shipped schema has a generated parser")
}

fn engines(c: &mut Criterion) {
    for input in support::inputs() {
        let name = input.schema;
        let text = input.text.as_str();
        let schema = chatparse::shipped::schema(name).expect("shipped");
        let mut naive = chatparse::shipped::schema(name).expect("shipped");
        naive.disable_fast_paths();
        let generated = typed(name);
        let floor = floor::floor_of(name);
        // The engines must agree on the input before their times mean anything.
        let expected = schema.parse(text).expect("bench inputs parse");
        let from_generated = chatparse::models::parse_value_fn(name).expect("generated")(text)
            .expect("bench inputs parse");
        assert_eq!(expected, from_generated, "{name}/{}", input.size);

        let mut group = c.benchmark_group(format!("{name}.{}", input.size));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("generated", |b| b.iter(|| generated(black_box(text))));
        group.bench_function("interpreter", |b| b.iter(|| schema.parse(black_box(text))));
        group.bench_function("naive", |b| b.iter(|| naive.parse(black_box(text))));
        group.bench_function("floor", |b| b.iter(|| floor::run(black_box(text), &floor)));
        group.finish();
    }
}

/// Every gpt_oss example (200–650 B): the small-message cost, with and without JSON payloads.
fn small(c: &mut Criterion) {
    let name = "gpt_oss";
    let schema = chatparse::shipped::schema(name).expect("shipped");
    let generated = typed(name);
    let floor = floor::floor_of(name);
    for (example, text) in support::examples(name) {
        let text = text.as_str();
        let mut group = c.benchmark_group(format!("small.{name}.{example}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("generated", |b| b.iter(|| generated(black_box(text))));
        group.bench_function("interpreter", |b| b.iter(|| schema.parse(black_box(text))));
        group.bench_function("floor", |b| b.iter(|| floor::run(black_box(text), &floor)));
        group.finish();
    }
}

/// Generated parsers from 4 KB to 100 MB: time per byte must stay flat.
fn scaling(c: &mut Criterion) {
    for name in ["gpt_oss", "qwen3", "deepseek_r1"] {
        let schema = chatparse::shipped::schema(name).expect("shipped");
        let base = support::base(name, &schema);
        let generated = typed(name);
        for (label, size) in [
            ("4KB", 4usize << 10),
            ("64KB", 64 << 10),
            ("1MB", 1 << 20),
            ("16MB", 16 << 20),
            ("100MB", 100 << 20),
        ] {
            let text = support::grow(&base, size);
            let mut group = c.benchmark_group(format!("scaling.{name}"));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_function(label, |b| b.iter(|| generated(black_box(&text))));
            group.finish();
        }
    }
}

fn pathological_group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> BenchmarkGroup<'a, criterion::measurement::WallTime> {
    c.benchmark_group(format!("pathological.{name}"))
}

/// Inputs built to hurt: a delimiter repeated for 10 MB, openers that never close, a million
/// tiny tool calls. Each at two sizes, so linearity shows as equal time per byte.
fn pathological(c: &mut Criterion) {
    type Make = fn(usize) -> String;
    let cases: &[(&str, &str, Make)] = &[
        ("gpt_oss", "repeated_delimiter", |n| {
            "<|channel|>".repeat(n / 11)
        }),
        ("gpt_oss", "unclosed_openers", |n| {
            "<|channel|>analysis<|message|>x".repeat(n / 31)
        }),
        ("gpt_oss", "tiny_tool_calls", |n| {
            "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}<|call|>"
                .repeat(n / 80)
        }),
        ("qwen3", "repeated_delimiter", |n| "<think>".repeat(n / 7)),
        ("qwen3", "unclosed_openers", |n| {
            "<tool_call>{".repeat(n / 12)
        }),
        ("qwen3", "tiny_tool_calls", |n| {
            "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>".repeat(n / 52)
        }),
        ("hermes", "tiny_tool_calls", |n| {
            "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>".repeat(n / 52)
        }),
    ];
    for &(name, shape, make) in cases {
        let generated = typed(name);
        for (label, size) in [("1MB", 1usize << 20), ("10MB", 10 << 20)] {
            let text = make(size);
            let mut group = pathological_group(c, &format!("{name}.{shape}"));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_function(label, |b| b.iter(|| generated(black_box(&text))));
            group.finish();
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut c = configure(&mut c);
    engines(&mut c);
    small(&mut c);
    scaling(&mut c);
    pathological(&mut c);
    c.final_summary();
}

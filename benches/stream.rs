//! Streaming cost: a ~64 KB model output parsed in one shot vs fed in 4-byte and 64-byte chunks,
//! for every shipped `response_template` (issue 6: 4-byte chunks must cost ≤ 3× the one-shot
//! parse).
//!
//! The inputs are corpus cases (`tests/streaming/expected/<template>.json`, case `tool_call`)
//! padded to ~64 KB, once in the reasoning (a literal-delimited region) and once in the answer
//! (the implicit `content` region, whose close is a pattern for the Qwen templates).
//! `cargo bench --bench stream`; every group prints the three timings, and the ratios are their
//! quotients. `floor_4` is the least work of any streaming parser fed the same 4-byte chunks
//! ([`feed_floor`]): the ratio target is measured against it as well as against the one-shot
//! parse.
//!
//! `stream/xregex/gpt_oss`: the x-regex schema `schemas/gpt_oss.json` (its fields are
//! literal-delimited regions, so it streams through `XRegexStreamParser`), on a ~64 KB output
//! (reasoning padded, then an answer and a tool call): the one-shot interpreter parse vs the
//! stream fed whole, in 64-byte and in 4-byte chunks (`cargo bench --bench stream -- xregex`).
//!
//! `openai/<template>/<region>`: what the OpenAI delta adapter (`DeltaStream`) adds to plain
//! streaming (`MessageStream` driven with a counting callback) on the same inputs and chunks
//! (issue 16's target: at most 20% per chunk) (`cargo bench --bench stream -- openai`).
//!
//! `shipped/<name>/<input>` (issue 15 item 5): every shipped name as `chatparse::shipped::spec`
//! streams it (26 through their stream profile, `gpt_oss` and `cohere_command_r7b` through their
//! regexes), on three inputs: `example`, the name's representative example (the richest of
//! `examples/<name>/*.txt`, tool calls first, as the parse bench picks it: `benches/support`), and
//! `16KB` and `64KB`, the same example with its reasoning (or content) padded to that size. Per
//! input: the one-shot parse (`Spec::parse`), the stream fed 4-byte chunks (`chunks_4`), and the
//! stream fed token-like chunks (`tokens`: each special token of the family one chunk, words with
//! their leading space, other characters one by one: `tests/roundtrip_support/tokens.rs`, shared
//! with the streamed template round trips). Every streamed message is checked against the
//! one-shot one first (`cargo bench --bench stream -- shipped/`; `scripts/bench_report.py
//! --stream` writes the table in BENCHMARKS.md).

mod support;
#[path = "../tests/roundtrip_support/tokens.rs"]
mod tokens;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use chatparse::runtime::stream::{
    Event, ResponseTemplate, StreamParser, XRegexPlan, XRegexStreamParser,
};
use chatparse::Schema;
use chatparse::Value;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const TEMPLATES: &[&str] = &["qwen3", "qwen3_5", "gemma4"];
const TARGET: usize = 64 * 1024;

struct Input {
    name: String,
    template: ResponseTemplate,
    prefix: String,
    tools: Vec<Value>,
    text: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(path: PathBuf) -> Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    chatparse::value::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn inputs() -> Vec<Input> {
    let mut out = Vec::new();
    for name in TEMPLATES {
        let text = std::fs::read_to_string(root().join(format!("response_templates/{name}.json")))
            .expect("shipped template");
        let doc = read_json(root().join(format!("tests/streaming/expected/{name}.json")));
        let case = doc["cases"]
            .as_array()
            .and_then(|cases| cases.iter().find(|c| c["name"] == "tool_call"))
            .expect("a tool_call case");
        let input = case["input"].as_str().expect("input");
        let prefix = case["prefix"].as_str().expect("prefix").to_owned();
        let tools = case["tools"].as_array().cloned().unwrap_or_default();
        // Reasoning: pad before the reasoning close delimiter.
        let close = if *name == "gemma4" {
            "<channel|>"
        } else {
            "</think>"
        };
        let at = input.find(close).expect("reasoning close");
        let pad = support::sentences(TARGET - input.len());
        let reasoning = format!("{}{pad}{}", &input[..at], &input[at..]);
        // Content: an answer of the same size before the first tool call.
        let call = if *name == "gemma4" {
            "<|tool_call>"
        } else {
            "\n<tool_call>"
        };
        let at = input.find(call).expect("tool call");
        let content = format!("{}{pad}{}", &input[..at], &input[at..]);
        for (region, text_in) in [("reasoning", reasoning), ("content", content)] {
            out.push(Input {
                name: format!("{name}/{region}"),
                template: ResponseTemplate::from_json_str(&text).expect("valid template"),
                prefix: prefix.clone(),
                tools: tools.clone(),
                text: text_in,
            });
        }
    }
    out
}

fn stream(input: &Input, pieces: &[&str]) -> usize {
    let mut parser = StreamParser::with_tools(&input.template, &input.prefix, &input.tools)
        .expect("prefix parses");
    let mut n = 0usize;
    let mut count = |e: Event<'_>| {
        black_box(&e);
        n += 1;
    };
    for piece in pieces {
        parser.feed_with(piece, &mut count).expect("feeds");
    }
    let (message, events) = parser.finish().expect("finishes");
    black_box(message);
    n + events.len()
}

/// The least any streaming parser does per chunk when it keeps the text it routes (a region's
/// value is its whole text) and hands each chunk to the caller: append it, look for a byte that
/// could start a delimiter, call back with the appended text. No state machine, no search.
fn feed_floor(pieces: &[&str]) -> usize {
    let mut buffer = String::new();
    let mut n = 0usize;
    let mut on_chunk = |text: &str| {
        black_box(text);
        n += 1;
    };
    for piece in pieces {
        let start = buffer.len();
        buffer.push_str(piece);
        let text = &buffer[start..];
        if text.bytes().any(|b| b == b'<') {
            on_chunk(black_box(text));
        } else {
            on_chunk(text);
        }
    }
    black_box(buffer);
    n
}

fn bench(c: &mut Criterion) {
    for input in inputs() {
        // The streamed message must be the one-shot one.
        let one_shot = input
            .template
            .parse_with_tools(&input.text, &input.prefix, &input.tools)
            .expect("parses");
        let mut parser =
            StreamParser::with_tools(&input.template, &input.prefix, &input.tools).unwrap();
        for piece in support::chunks(&input.text, 4) {
            parser.feed(piece).unwrap();
        }
        assert_eq!(parser.finish().unwrap().0, one_shot, "{}", input.name);

        let mut group = c.benchmark_group(format!("stream/{}", input.name));
        group.throughput(Throughput::Bytes(input.text.len() as u64));
        group.bench_function("one_shot", |b| {
            b.iter(|| {
                input
                    .template
                    .parse_with_tools(black_box(&input.text), &input.prefix, &input.tools)
                    .expect("parses")
            })
        });
        for size in [4, 64] {
            let pieces = support::chunks(&input.text, size);
            group.bench_function(format!("chunks_{size}"), |b| {
                b.iter(|| stream(&input, black_box(&pieces)))
            });
        }
        let pieces = support::chunks(&input.text, 4);
        group.bench_function("floor_4", |b| b.iter(|| feed_floor(black_box(&pieces))));
        group.finish();
    }
}

/// The gpt_oss x-regex schema on a ~64 KB output.
fn bench_xregex(c: &mut Criterion) {
    let path = root().join("schemas/gpt_oss.json");
    let schema = Schema::from_path(&path).expect("shipped schema");
    let plan = XRegexPlan::new(Schema::from_path(&path).expect("shipped schema"))
        .expect("gpt_oss streams");
    let head = "<|channel|>analysis<|message|>";
    let tail = "<|end|><|start|>assistant<|channel|>final<|message|>Checking the weather.<|end|>\
                <|start|>assistant<|channel|>commentary to=functions.get_weather \
                <|constrain|>json<|message|>{\"city\": \"Oslo\", \"days\": 2}<|call|>";
    let text = format!(
        "{head}{}{tail}",
        support::sentences(TARGET - head.len() - tail.len())
    );
    let one_shot = schema.parse(&text).expect("parses");
    let run = |pieces: &[&str]| {
        let mut parser = XRegexStreamParser::new(&plan);
        let mut n = 0usize;
        for piece in pieces {
            parser
                .feed_with(piece, |e| {
                    black_box(&e);
                    n += 1;
                })
                .expect("feeds");
        }
        let (message, events) = parser.finish().expect("finishes");
        (message, n + events.len())
    };
    for size in [4, 64, TARGET] {
        assert_eq!(
            run(&support::chunks(&text, size)).0,
            one_shot,
            "chunks of {size}"
        );
    }
    let mut group = c.benchmark_group("stream/xregex/gpt_oss");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("one_shot", |b| {
        b.iter(|| schema.parse(black_box(&text)).expect("parses"))
    });
    for (name, size) in [("one_feed", text.len()), ("chunks_64", 64), ("chunks_4", 4)] {
        let pieces = support::chunks(&text, size);
        group.bench_function(name, |b| b.iter(|| run(black_box(&pieces))));
    }
    let pieces = support::chunks(&text, 4);
    group.bench_function("floor_4", |b| b.iter(|| feed_floor(black_box(&pieces))));
    group.finish();
}

/// The plain stream of a spec, events counted.
fn plain_stream(spec: &chatparse::runtime::Spec, input: &Input, pieces: &[&str]) -> usize {
    let mut stream = spec
        .stream(Some(&input.prefix), Some(&input.tools))
        .expect("starts");
    let mut n = 0usize;
    let mut count = |e: Event<'_>| {
        black_box(&e);
        n += 1;
    };
    for piece in pieces {
        stream.feed_with(piece, &mut count).expect("feeds");
    }
    black_box(stream.finish_with(&mut count).expect("finishes"));
    n
}

/// The same stream through the OpenAI delta adapter, chunk objects counted.
fn delta_stream(spec: &chatparse::runtime::Spec, input: &Input, pieces: &[&str]) -> usize {
    use chatparse::runtime::openai::{CounterIds, DeltaStream, Options};
    let mut deltas = DeltaStream::from_spec(
        spec,
        Some(&input.prefix),
        Some(&input.tools),
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .expect("starts");
    let mut n = 0usize;
    for piece in pieces {
        n += black_box(deltas.feed(piece).expect("feeds")).len();
    }
    let (last, message) = deltas.finish().expect("finishes");
    black_box(message);
    n + last.len()
}

/// The adapter's deltas handed out borrowed (`feed_with`): its own cost, no JSON built.
fn delta_stream_borrowed(spec: &chatparse::runtime::Spec, input: &Input, pieces: &[&str]) -> usize {
    use chatparse::runtime::openai::{CounterIds, Delta, DeltaStream, Options};
    let mut deltas = DeltaStream::from_spec(
        spec,
        Some(&input.prefix),
        Some(&input.tools),
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .expect("starts");
    let mut n = 0usize;
    let mut count = |d: Delta<'_>| {
        black_box(&d);
        n += 1;
    };
    for piece in pieces {
        deltas.feed_with(piece, &mut count).expect("feeds");
    }
    black_box(deltas.finish_with(&mut count).expect("finishes"));
    n
}

/// Plain streaming vs the OpenAI delta adapter, per template and region.
fn bench_openai(c: &mut Criterion) {
    for input in inputs() {
        let template =
            ResponseTemplate::from_value(input.template.as_value().clone()).expect("valid");
        let spec = chatparse::runtime::Spec::from(template);
        let mut group = c.benchmark_group(format!("openai/{}", input.name));
        group.throughput(Throughput::Bytes(input.text.len() as u64));
        for size in [4, 64] {
            let pieces = support::chunks(&input.text, size);
            group.bench_function(format!("plain_{size}"), |b| {
                b.iter(|| plain_stream(&spec, &input, black_box(&pieces)))
            });
            group.bench_function(format!("deltas_{size}"), |b| {
                b.iter(|| delta_stream(&spec, &input, black_box(&pieces)))
            });
            group.bench_function(format!("deltas_borrowed_{size}"), |b| {
                b.iter(|| delta_stream_borrowed(&spec, &input, black_box(&pieces)))
            });
        }
        group.finish();
    }
}

/// The size of the long input of the `shipped/` groups.
const SHIPPED_LONG: usize = 64 * 1024;

/// `text` cut at `cuts` (the chunks' ends).
fn pieces_at<'t>(text: &'t str, cuts: &[usize]) -> Vec<&'t str> {
    let mut at = 0;
    cuts.iter()
        .map(|&cut| {
            let piece = &text[at..cut];
            at = cut;
            piece
        })
        .collect()
}

/// A shipped spec's stream without a prefix, events counted; the message.
fn shipped_stream(spec: &chatparse::runtime::Spec, pieces: &[&str]) -> (Value, usize) {
    let mut stream = spec.stream(None, None).expect("every shipped name streams");
    let mut n = 0usize;
    let mut count = |e: Event<'_>| {
        black_box(&e);
        n += 1;
    };
    for piece in pieces {
        stream.feed_with(piece, &mut count).expect("feeds");
    }
    let message = stream.finish_with(&mut count).expect("finishes");
    (message, n)
}

/// Every shipped name: one-shot vs 4-byte chunks vs token-like chunks, on its representative
/// example and on it padded to 16 KB and 64 KB (per-feed work that grows with the buffer shows
/// as a per-byte cost that grows from 16 KB to 64 KB).
fn bench_shipped(c: &mut Criterion) {
    // What `scripts/bench_report.py --stream` needs besides the timings.
    let mut inputs = Vec::new();
    for name in chatparse::shipped::names() {
        let spec = chatparse::shipped::spec(name)
            .expect("a shipped name")
            .expect("a valid shipped spec");
        let schema = chatparse::shipped::schema(name).expect("a shipped name");
        let base = support::base(name, &schema);
        let literals = tokens::profile_tokens(&spec);
        for (input, text) in [
            ("example", base.text.clone()),
            ("16KB", support::grow(&base, SHIPPED_LONG / 4)),
            ("64KB", support::grow(&base, SHIPPED_LONG)),
        ] {
            let one_shot = spec.parse(&text).expect("the example parses");
            let four = support::chunks(&text, 4);
            let (cuts, _) = tokens::token_cuts(&text, &literals);
            let token_pieces = pieces_at(&text, &cuts);
            inputs.push(chatparse::json!({
                "name": name,
                "input": input,
                "bytes": text.len(),
                "chunks_4": four.len(),
                "tokens": token_pieces.len(),
                "via": if spec.stream_profile().is_some() { "profile" } else { "regexes" },
                "example": support::examples(name)
                    .into_iter()
                    .find(|(_, t)| *t == base.text)
                    .map(|(stem, _)| stem),
            }));
            for (label, pieces) in [("4-byte", &four), ("token-like", &token_pieces)] {
                let (message, _) = shipped_stream(&spec, pieces);
                assert_eq!(
                    serde_json::to_string(&message).ok(),
                    serde_json::to_string(&one_shot).ok(),
                    "{name}/{input}: the stream in {label} chunks is not the one-shot parse"
                );
            }
            let mut group = c.benchmark_group(format!("shipped/{name}/{input}"));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_function("one_shot", |b| {
                b.iter(|| spec.parse(black_box(&text)).expect("parses"))
            });
            group.bench_function("chunks_4", |b| {
                b.iter(|| shipped_stream(&spec, black_box(&four)))
            });
            group.bench_function("tokens", |b| {
                b.iter(|| shipped_stream(&spec, black_box(&token_pieces)))
            });
            group.finish();
        }
    }
    let dir = root().join("target/bench-inputs");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join("stream-shipped.json"),
        serde_json::to_string_pretty(&inputs).unwrap_or_default(),
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = bench, bench_xregex, bench_openai, bench_shipped
}
criterion_main!(benches);

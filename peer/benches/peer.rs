//! chatparse against SGLang's gateway parsers (`tool-parser` + `reasoning-parser` 1.10.0) in one
//! process, on the formats both handle (`chatparse_peer::PAIRS`):
//!
//! - `parse/<name>/<size>/{chatparse,interpreter,peer}`: one message parsed whole — chatparse's
//!   generated parser (`response_parser!`, what an embedder compiles in) and its interpreter
//!   (`Spec::parse`), the peer's reasoning parser then tool parser (`parse_complete`). Sizes:
//!   `tiny` (content only, 32 B, no marker), `one_call` (the family's `examples/NAME/tool_call.txt`,
//!   60–570 B), `4KB` and `64KB` (prose followed by that example).
//! - `stream/<name>/<size>/{chatparse,peer}`: the one-call example and the 4 KB message fed in
//!   4-byte chunks — chatparse's `Spec::stream` (events, then the final message) against the
//!   peer's `parse_reasoning_streaming_incremental` + `parse_incremental` (deltas) — reported per
//!   message; divide by the chunk count for per-chunk time.
//!
//! `cargo bench --manifest-path peer/Cargo.toml -- --quick` runs it; `scripts/bench_report.py
//! --peer` turns criterion's results into BENCHMARKS.md's table.

use std::hint::black_box;

use chatparse_peer::{chunks, tools, tools_json, Pair, Peer, PAIRS};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const TINY: &str = "Hello! How can I help you today?";

/// Prose without any format's markers, `len` bytes.
fn prose(len: usize) -> String {
    let sentence =
        "The committee reviewed the quarterly figures and agreed to revisit the plan next week. ";
    let mut out = String::with_capacity(len + sentence.len());
    while out.len() < len {
        out.push_str(sentence);
    }
    out.truncate(len);
    out
}

/// The family's one-call example, as a server hands it to a parser (no end-of-turn token).
fn example(pair: &Pair) -> String {
    let path = format!(
        "{}/../examples/{}/tool_call.txt",
        env!("CARGO_MANIFEST_DIR"),
        pair.name
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    pair.server_text(&text).to_owned()
}

fn inputs(pair: &Pair) -> Vec<(&'static str, String)> {
    let call = example(pair);
    let padded = |size: usize| format!("{}\n\n{call}", prose(size - call.len().min(size / 2) - 2));
    vec![
        ("tiny", TINY.to_owned()),
        ("one_call", call.clone()),
        ("4KB", padded(4 << 10)),
        ("64KB", padded(64 << 10)),
    ]
}

fn parse(c: &mut Criterion) {
    // Whether both sides read each input alike: where they do not, the times compare different
    // work (bench_report.py marks those cells).
    let mut agreement = serde_json::Map::new();
    for pair in PAIRS {
        let spec = chatparse::shipped::spec(pair.name)
            .expect("shipped")
            .expect("loads");
        let generated = chatparse::models::GENERATED_TYPED
            .iter()
            .find(|(n, _)| *n == pair.name)
            .map(|(_, parse)| *parse)
            .expect("a generated parser");
        let mut peer = Peer::new(pair);
        for (size, text) in inputs(pair) {
            let text = text.as_str();
            let ours = chatparse_peer::chatparse_parse(&spec, text);
            let theirs = peer.parse(text);
            // Whitespace around the text aside (the template's separators, which the peer keeps).
            let trim = |p: Option<chatparse_peer::Parsed>| {
                p.map(|p| chatparse_peer::Parsed {
                    reasoning: p.reasoning.trim().to_owned(),
                    content: p.content.trim().to_owned(),
                    calls: p.calls,
                })
            };
            let same = matches!((trim(ours), trim(theirs)), (Some(a), Some(b)) if a.same_as(&b));
            agreement.insert(format!("{}/{size}", pair.name), same.into());
            let mut group = c.benchmark_group(format!("parse/{}/{size}", pair.name));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_function("chatparse", |b| b.iter(|| generated(black_box(text))));
            group.bench_function("interpreter", |b| b.iter(|| spec.parse(black_box(text))));
            group.bench_function("peer", |b| b.iter(|| peer.parse(black_box(text))));
            group.finish();
        }
    }
    let path = format!("{}/target/peer-agreement.json", env!("CARGO_MANIFEST_DIR"));
    let _ = std::fs::write(path, serde_json::Value::Object(agreement).to_string());
}

fn stream(c: &mut Criterion) {
    for pair in PAIRS {
        let spec = chatparse::shipped::spec(pair.name)
            .expect("shipped")
            .expect("loads");
        let mut peer = Peer::new(pair);
        let one_shot = chatparse_peer::chatparse_parse(&spec, &example(pair));
        let names: Vec<String> = one_shot
            .iter()
            .flat_map(|p| p.calls.iter().map(|c| c.0.clone()))
            .collect();
        let offered = tools(&tools_json(&names));
        for (size, text) in inputs(pair).into_iter().skip(1).take(2) {
            let pieces = chunks(&text, 4);
            let mut group = c.benchmark_group(format!("stream/{}/{size}", pair.name));
            group.throughput(Throughput::Elements(pieces.len() as u64));
            group.bench_function("chatparse", |b| {
                b.iter(|| {
                    let mut stream = spec.stream(None, None).expect("streams");
                    let mut events = 0usize;
                    for piece in &pieces {
                        let _ = stream.feed_with(black_box(piece), &mut |_| events += 1);
                    }
                    let message = stream.finish_with(&mut |_| events += 1);
                    (events, message.is_ok())
                })
            });
            group.bench_function("peer", |b| {
                b.iter(|| {
                    peer.stream(pieces.iter().copied(), &offered)
                        .map(|p| p.calls.len())
                })
            });
            group.finish();
        }
    }
}

criterion_group!(benches, parse, stream);
criterion_main!(benches);

//! The OpenAI delta adapter's cost per chunk against plain streaming (issue 16: at most 20 %),
//! counted in instructions: a ~64 KB output (a response template's streaming case `tool_call`,
//! its answer or its reasoning padded) fed in 4-byte chunks, plainly
//! (`MessageStream::feed_with`, events counted) or through `openai::DeltaStream::feed_with`
//! (deltas counted). Only the feeding is counted: `feed_plain` and `feed_deltas` are the
//! functions to give callgrind (`finish` reparses the whole output, the same on both sides).
//!
//! ```sh
//! CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release --example openai_cost
//! valgrind --tool=callgrind --toggle-collect='*feed_plain*' \
//!     target/release/examples/openai_cost plain reasoning qwen3
//! valgrind --tool=callgrind --toggle-collect='*feed_deltas*' \
//!     target/release/examples/openai_cost deltas reasoning qwen3
//! ```
//!
//! Arguments: `plain` or `deltas`; `content` or `reasoning` (what is padded); the template
//! (`response_templates/NAME.json`: `qwen3`, `qwen3_5`, `gemma4`). BENCHMARKS.md ("OpenAI
//! deltas") has the counts.
use chatparse::runtime::stream::{Event, ResponseTemplate};
use chatparse::Value;
use std::hint::black_box;

#[path = "../benches/support/mod.rs"]
mod support;

/// The feeding of plain streaming (callgrind counts this).
#[inline(never)]
fn feed_plain(
    stream: &mut dyn chatparse::runtime::stream::MessageStream,
    pieces: &[&str],
    sink: &mut dyn FnMut(Event<'_>),
) {
    for piece in pieces {
        stream.feed_with(piece, sink).unwrap();
    }
}
/// The feeding of the adapter (callgrind counts this).
#[inline(never)]
fn feed_deltas(
    deltas: &mut chatparse::runtime::openai::DeltaStream<'_>,
    pieces: &[&str],
    sink: &mut dyn FnMut(chatparse::runtime::openai::Delta<'_>),
) {
    for piece in pieces {
        deltas.feed_with(piece, sink).unwrap();
    }
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("deltas", String::as_str);
    let region = args.get(2).map_or("reasoning", String::as_str);
    let name = args.get(3).map_or("qwen3", String::as_str);
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join(format!("response_templates/{name}.json"))).unwrap();
    let doc: Value = chatparse::value::from_str(
        &std::fs::read_to_string(root.join(format!("tests/streaming/expected/{name}.json")))
            .unwrap(),
    )
    .unwrap();
    let case = doc["cases"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "tool_call"))
        .unwrap();
    let input = case["input"].as_str().unwrap();
    let prefix = case["prefix"].as_str().unwrap().to_owned();
    let tools = case["tools"].as_array().cloned().unwrap_or_default();
    let pad = support::sentences(64 * 1024 - input.len());
    let close = if name == "gemma4" {
        "<channel|>"
    } else {
        "</think>"
    };
    let call = if name == "gemma4" {
        "<|tool_call>"
    } else {
        "\n<tool_call>"
    };
    let full = if region == "reasoning" {
        let at = input.find(close).unwrap();
        format!("{}{pad}{}", &input[..at], &input[at..])
    } else {
        let at = input.find(call).unwrap();
        format!("{}{pad}{}", &input[..at], &input[at..])
    };
    let template = ResponseTemplate::from_json_str(&text).unwrap();
    let spec = chatparse::runtime::Spec::from(template);
    let pieces = support::chunks(&full, 4);
    let mut n = 0usize;
    if mode == "plain" {
        let mut stream = spec.stream(Some(&prefix), Some(&tools)).unwrap();
        let mut count = |e: Event<'_>| {
            black_box(&e);
            n += 1;
        };
        feed_plain(&mut *stream, &pieces, &mut count);
        black_box(stream.finish_with(&mut count).unwrap());
    } else {
        use chatparse::runtime::openai::{CounterIds, Delta, DeltaStream, Options};
        let mut deltas = DeltaStream::from_spec(
            &spec,
            Some(&prefix),
            Some(&tools),
            Options::default(),
            Box::new(CounterIds::default()),
        )
        .unwrap();
        let mut count = |d: Delta<'_>| {
            black_box(&d);
            n += 1;
        };
        feed_deltas(&mut deltas, &pieces, &mut count);
        black_box(deltas.finish_with(&mut count).unwrap());
    }
    println!("{n}");
}

//! Instructions per streamed message (issue 17): a shipped name's one-call example as a server
//! hands it over (no end-of-turn token), fed to `Spec::stream` in 4-byte chunks, events counted,
//! then `finish_with` — what `peer/benches/peer.rs`'s `stream/<name>/one_call` times.
//!
//! Wall time on shared cores is noise; count instructions instead:
//!
//! ```text
//! CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release --example stream_cost
//! REPS=100 valgrind --tool=callgrind --toggle-collect='*stream_cost::one_message*' \
//!     target/release/examples/stream_cost qwen3
//! ```
//!
//! Per message: the count at `REPS=11` less the count at `REPS=1`, divided by 10 (the first
//! message also pays for patterns compiled at first use). Toggling on
//! `'*stream_cost::feed_all*'` or `'*stream_cost::finish*'` splits it into the chunks and the
//! end. `CHUNK=n` cuts other chunk sizes; `INPUT=path` streams another text (a text region
//! alone, to cost a chunk of it).
//! BENCHMARKS.md ("Streaming cost per message") has the counts.
use chatparse::runtime::stream::{Event, MessageStream};
use std::hint::black_box;

/// The end-of-turn tokens a server strips before its parser sees the output (as
/// `chatparse_peer::PAIRS` says; the peer crate is a workspace of its own).
const EOS: &[&str] = &[
    "<|im_end|>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "[EOS]",
    "<|user|>",
    "<|observation|>",
    "[e~[",
    "<|END_OF_TURN_TOKEN|>",
    "<turn|>",
    "<eos>",
];

#[inline(never)]
fn feed_all(stream: &mut dyn MessageStream, pieces: &[&str], sink: &mut dyn FnMut(Event<'_>)) {
    for piece in pieces {
        stream.feed_with(black_box(piece), sink).expect("feeds");
    }
}

#[inline(never)]
fn finish(stream: Box<dyn MessageStream + '_>, sink: &mut dyn FnMut(Event<'_>)) -> bool {
    stream.finish_with(sink).is_ok()
}

#[inline(never)]
fn one_message(spec: &chatparse::runtime::Spec, pieces: &[&str]) -> usize {
    let mut stream = spec.stream(None, None).expect("streams");
    let mut events = 0usize;
    let mut count = |e: Event<'_>| {
        black_box(&e);
        events += 1;
    };
    feed_all(&mut *stream, pieces, &mut count);
    // A strict stream may fail at the end (Command R7B's 4 KB message: prose its check does not
    // read), as the bench's may: counted the same.
    black_box(finish(stream, &mut count));
    events
}

fn main() {
    let name = std::env::args().nth(1).expect("a shipped name");
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let chunk: usize = std::env::var("CHUNK")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(4);
    // `INPUT=path` streams another text (a text region alone, to split the cost per chunk).
    let path = std::env::var("INPUT").unwrap_or_else(|_| format!("examples/{name}/tool_call.txt"));
    let text = std::fs::read_to_string(path).expect("example");
    let trimmed = text.trim_end();
    let text = EOS
        .iter()
        .find_map(|t| trimmed.strip_suffix(t))
        .unwrap_or(&text);
    let spec = chatparse::shipped::spec(&name)
        .expect("shipped")
        .expect("loads");
    // Cut as `chatparse_peer::chunks` cuts (a chunk that ends inside a character runs on to its
    // end), not as `benches/support`'s `chunks` (which stops before it): the peer crate is a
    // workspace of its own, and the chunks must be the bench's.
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + chunk).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[at..end]);
        at = end;
    }
    let mut events = 0;
    for _ in 0..reps {
        events = one_message(&spec, &pieces);
    }
    println!(
        "{name}: {} bytes, {} chunks, {events} events",
        text.len(),
        pieces.len()
    );
}

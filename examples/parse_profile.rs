//! Instruction counts of one whole-message parse, for callgrind (issue 17's measurements).
//!
//! `parse_profile NAME SIZE N [generated|interpreter]` parses one message N times inside
//! `measured_loop`, after one warm-up parse. SIZE is `tiny`, `one_call` (the family's
//! `examples/NAME/tool_call.txt` without its end-of-turn token), a byte count (prose, then
//! that example, as `peer/benches/peer.rs` builds its 4 KB and 64 KB inputs), or `@PATH` (a
//! file's text as it is). Count one parse as
//! (count at N=2000 − count at N=1000) / 1000:
//!
//! ```sh
//! CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release --example parse_profile
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_loop*' \
//!     target/release/examples/parse_profile llama3_json 65536 1000
//! ```
use std::hint::black_box;

const TINY: &str = "Hello! How can I help you today?";
const END_OF_TURN: [&str; 5] = [
    "<|im_end|>",
    "<|return|>",
    "<|end|>",
    "<|eot_id|>",
    "<|eom_id|>",
];

#[inline(never)]
fn measured_loop(parse: &dyn Fn(&str), text: &str, n: usize) {
    for _ in 0..n {
        parse(black_box(text));
    }
}

/// Prose without any format's markers, `len` bytes (the peer bench's filler).
fn prose(len: usize) -> String {
    let sentence =
        "The committee reviewed the quarterly figures and agreed to revisit the plan next week. ";
    let mut out = sentence.repeat(len / sentence.len() + 1);
    out.truncate(len);
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "parse_profile NAME SIZE N [generated|interpreter]";
    let name = args.get(1).expect(usage).as_str();
    let size = args.get(2).expect(usage).as_str();
    let n: usize = args.get(3).map_or(1000, |s| s.parse().expect(usage));
    let engine = args.get(4).map_or("generated", String::as_str);
    let path = format!(
        "{}/examples/{name}/tool_call.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let example = std::fs::read_to_string(&path).expect("the family's tool_call.txt");
    let trimmed = example.trim_end();
    let call = END_OF_TURN
        .iter()
        .find_map(|t| trimmed.strip_suffix(t))
        .unwrap_or(&example);
    let text = match size {
        "tiny" => TINY.to_owned(),
        "one_call" => call.to_owned(),
        // `@PATH`: the text of a file, as it is (a family's own plain answer, …).
        path if path.starts_with('@') => std::fs::read_to_string(&path[1..]).expect("@PATH"),
        bytes => {
            let len: usize = bytes.parse().expect(usage);
            format!("{}\n\n{call}", prose(len - call.len().min(len / 2) - 2))
        }
    };
    let generated = chatparse::models::GENERATED_TYPED
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a generated parser")
        .1;
    let spec = chatparse::shipped::spec(name)
        .expect("shipped")
        .expect("loads");
    let parse: Box<dyn Fn(&str)> = match engine {
        "generated" => Box::new(move |t| drop(black_box(generated(t)))),
        "interpreter" => Box::new(|t| drop(black_box(spec.parse(t)))),
        other => panic!("unknown engine {other}"),
    };
    parse(&text);
    measured_loop(&*parse, &text, n);
}

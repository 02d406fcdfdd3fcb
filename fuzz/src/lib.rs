//! What the fuzz targets share: how a fuzzer's bytes become a shipped name, a chunking and a
//! model output, and how two results are compared.
//!
//! Inputs are `[selector, seed, text...]`: `selector` picks a shipped name (modulo their number,
//! in sorted order — `seed.py` writes its corpus the same way), `seed` drives the chunking, and
//! the rest is the model output (lossily decoded, so every byte string is an input).

use chatparse::runtime::stream::{Event, MessageStream};
use chatparse::runtime::{ParseError, Spec};
use chatparse::Value;
use std::sync::OnceLock;

/// The shipped names in sorted order, each with its spec (schema + stream profile).
pub fn shipped() -> &'static [(&'static str, Spec)] {
    static SHIPPED: OnceLock<Vec<(&'static str, Spec)>> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let mut names: Vec<&'static str> = chatparse::shipped::names().collect();
        names.sort_unstable();
        names
            .into_iter()
            .map(|name| {
                let spec = chatparse::shipped::spec(name)
                    .expect("a shipped name")
                    .expect("shipped specs load");
                (name, spec)
            })
            .collect()
    })
}

/// A decoded fuzz input.
pub struct Case<'a> {
    /// Index into [`shipped`].
    pub index: usize,
    pub name: &'static str,
    pub spec: &'static Spec,
    pub seed: u8,
    pub text: std::borrow::Cow<'a, str>,
}

/// Decodes `[selector, seed, text...]`; `None` for inputs shorter than two bytes.
pub fn case(data: &[u8]) -> Option<Case<'_>> {
    let [selector, seed, rest @ ..] = data else {
        return None;
    };
    let all = shipped();
    let index = *selector as usize % all.len();
    let (name, spec) = &all[index];
    Some(Case {
        index,
        name,
        spec,
        seed: *seed,
        text: String::from_utf8_lossy(rest),
    })
}

/// Cuts `text` into chunks at char boundaries chosen by `seed`: 0 = one chunk, 1 = one char per
/// chunk, otherwise pseudo-random lengths of 1 to `seed` bytes.
pub fn chunks(text: &str, seed: u8) -> Vec<&str> {
    let mut out = Vec::new();
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761).max(1);
    let mut at = 0;
    while at < text.len() {
        let want = match seed {
            0 => text.len(),
            1 => 1,
            _ => {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                1 + (state as usize % usize::from(seed))
            }
        };
        let mut end = (at + want).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Feeds `text` to `stream` in the chunks `seed` picks ([`chunks`]) and finishes it, its events
/// to `on_event`: the final message, or the first error.
pub fn stream_in_chunks(
    mut stream: Box<dyn MessageStream + '_>,
    text: &str,
    seed: u8,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Value, ParseError> {
    for chunk in chunks(text, seed) {
        stream.feed_with(chunk, on_event)?;
    }
    stream.finish_with(on_event)
}

/// Where `spec` streams, streams `output` in the chunks `seed` picks and asserts that it ends as
/// `one_shot` does ([`agree`]). The panic message names the input as `{what} {text:?}` (the spec
/// or template text the fuzzer wrote).
pub fn assert_streams_as_one_shot(
    spec: &Spec,
    output: &str,
    seed: u8,
    one_shot: &Result<Value, ParseError>,
    what: &str,
    text: &str,
) {
    let Ok(stream) = spec.stream(None, None) else {
        return;
    };
    let last = stream_in_chunks(stream, output, seed, &mut |_| {});
    assert!(
        agree(one_shot, &last),
        "{what} {text:?} seed {seed}: {output:?}\n one-shot {}\n streamed {}",
        show(one_shot),
        show(&last)
    );
}

/// Two parse results agree: equal values (Python's equality with types: `1` is not `1.0`), or
/// both errors.
pub fn agree(a: &Result<Value, ParseError>, b: &Result<Value, ParseError>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => chatparse::runtime::py::identical(a, b),
        (Err(_), Err(_)) => true,
        _ => false,
    }
}

/// [`agree`], and where both fail, the same error: the same kind, at the same schema pointer
/// and the same place in the output. The interpreter and the generated parser run the same
/// steps, so they fail alike (a stream's error may come from another step: [`agree`] there).
///
/// Positions are compared because they differed: the generated parser borrows a pattern's named
/// groups from the output, while the interpreter copies them into a dict (as the reference's
/// `groupdict()`) and must place an error found in a copy back in its group (`x[TOOL_CALLS]x`
/// with mistral_nemo: 13; `\0<tool_calls>\0` with apriel, found in a part of the group: 13;
/// `tests/positions.rs`).
pub fn agree_in_kind_and_place(
    a: &Result<Value, ParseError>,
    b: &Result<Value, ParseError>,
) -> bool {
    match (a, b) {
        (Err(x), Err(y)) => {
            std::mem::discriminant(&x.kind) == std::mem::discriminant(&y.kind)
                && x.pointer == y.pointer
                && x.position.map(|p| p.offset) == y.position.map(|p| p.offset)
        }
        _ => agree(a, b),
    }
}

/// A result for a panic message.
pub fn show(r: &Result<Value, ParseError>) -> String {
    match r {
        Ok(v) => v.to_string(),
        Err(e) => format!(
            "error: {e} (pointer {}, position {:?})",
            e.pointer, e.position
        ),
    }
}

//! Arbitrary chat templates: deriving a parser from any text either gives a schema or a
//! `DeriveError` (never a panic, never a hang: rendering runs on bounded fuel), and a derived
//! schema loads and parses any output, streaming it (where it streams) to the same result.
//!
//! Input: `[seed, template text, 0, output text]` (the first NUL byte splits them).
#![no_main]

use chatparse::runtime::{Schema, Spec};
use chatparse_fuzz::assert_streams_as_one_shot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [seed, rest @ ..] = data else { return };
    let (template, output) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(template) = std::str::from_utf8(template) else {
        return;
    };
    let Ok(derived) = chatparse::derive::derive(template) else {
        return;
    };
    let schema = Schema::from_json_str(&derived.spec.to_string())
        .unwrap_or_else(|e| panic!("a derived schema loads: {e}\n{template:?}"));
    let output = String::from_utf8_lossy(output);
    let one_shot = schema.parse(&output);
    let spec = Spec::from(schema);
    assert_streams_as_one_shot(&spec, &output, *seed, &one_shot, "template", template);
});

//! Arbitrary specs: any text given as a response schema or response template either loads or is
//! refused with a `SchemaError` (never a panic), and a spec that loads parses any output, streams
//! it to the same result in one piece and in the seed's chunks, and parses it leniently.
//!
//! Input: `[seed, spec text, 0, output text]` (the first NUL byte splits them).
#![no_main]

use chatparse::runtime::Spec;
use chatparse_fuzz::assert_streams_as_one_shot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [seed, rest @ ..] = data else { return };
    let (spec_bytes, output) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(spec_text) = std::str::from_utf8(spec_bytes) else {
        return;
    };
    let Ok(spec) = Spec::from_json_str(spec_text) else {
        return;
    };
    let output = String::from_utf8_lossy(output);
    let one_shot = spec.parse(&output);
    assert_streams_as_one_shot(&spec, &output, *seed, &one_shot, "spec", spec_text);
    if let Ok(lenient) = spec.parse_lenient(&output, None) {
        match &one_shot {
            // The reference's `None` (the root pattern does not match) is no message: lenient
            // parsing sets the whole output aside instead.
            Ok(message) if !message.is_null() => {
                assert!(chatparse::runtime::py::identical(message, &lenient.message));
                assert!(lenient.malformed.is_empty());
            }
            _ => assert!(!lenient.malformed.is_empty() || output.is_empty()),
        }
    }
});

//! Lenient parsing never fails on model output, equals the strict parse whenever that succeeds
//! with a message (setting nothing aside), sets something aside whenever it fails or gives none, and every part set aside is
//! the output's own text at its span.
#![no_main]

use chatparse_fuzz::case;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else { return };
    let text: &str = &case.text;
    let strict = case.spec.parse(text);
    let lenient = case
        .spec
        .parse_lenient(text, None)
        .expect("shipped names parse leniently");
    match &strict {
        // The reference's `None` (the root pattern does not match) is no message: lenient parsing
        // sets the whole output aside instead (below).
        Ok(message) if !message.is_null() => {
            assert!(
                chatparse::runtime::py::identical(message, &lenient.message),
                "{}: {text:?}\n strict  {message}\n lenient {}",
                case.name,
                lenient.message
            );
            assert!(lenient.malformed.is_empty(), "{}: {text:?}", case.name);
        }
        _ => assert!(
            !lenient.malformed.is_empty(),
            "{}: {text:?}: strict gave {strict:?} but nothing was set aside",
            case.name
        ),
    }
    for part in &lenient.malformed {
        let Some((start, end)) = part.span else {
            continue;
        };
        assert_eq!(
            text.get(start..end),
            Some(part.text.as_str()),
            "{}: {text:?}: set-aside text is not at its span",
            case.name
        );
    }
});

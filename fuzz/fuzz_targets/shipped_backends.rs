//! The three back ends of every shipped schema agree: the interpreter (with its substring fast
//! paths), the interpreter with every fast path off (all patterns on the regex engines), and the
//! parser `response_parser!` generated at build time; the interpreter and the generated parser
//! also fail alike (the same kind of error, at the same pointer).
#![no_main]

use chatparse::runtime::Schema;
use chatparse_fuzz::{agree, agree_in_kind_and_place, case, shipped, show};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn naive(index: usize) -> &'static Schema {
    static NAIVE: OnceLock<Vec<Schema>> = OnceLock::new();
    &NAIVE.get_or_init(|| {
        shipped()
            .iter()
            .map(|(_, spec)| {
                let schema = spec.schema().expect("shipped names are schemas");
                let reloaded = Schema::from_json_str(&schema.as_value().to_string())
                    .expect("a shipped schema reloads");
                // With the shipped name's completeness check, as the other two run it.
                let mut reloaded = match schema.check() {
                    Some(check) => reloaded.with_check(check),
                    None => reloaded,
                };
                reloaded.disable_fast_paths();
                reloaded
            })
            .collect()
    })[index]
}

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else { return };
    let schema = case.spec.schema().expect("shipped names are schemas");
    let interpreted = schema.parse(&case.text);
    let generated = chatparse::models::parse_value_fn(case.name).expect("generated")(&case.text);
    let slow = naive(case.index).parse(&case.text);
    assert!(
        agree_in_kind_and_place(&interpreted, &generated) && agree(&interpreted, &slow),
        "{}: {:?}\n interpreter {}\n generated   {}\n no fast path {}",
        case.name,
        case.text,
        show(&interpreted),
        show(&generated),
        show(&slow),
    );
});

//! The deepest array nesting the loader accepts compiles as a generated parser (issue 21: `check`
//! accepted 200 levels that `response_parser!` could not build). The schema is
//! `schema::MAX_ARRAY_NESTING` arrays around a string.

chatparse::response_parser!("tests/deep_arrays_32.json");

#[test]
fn deepest_accepted_nesting_compiles_and_parses_like_the_interpreter() {
    assert_eq!(chatparse::runtime::schema::MAX_ARRAY_NESTING, 32);
    let schema = chatparse::Schema::from_json_str(deep_arrays_32::SCHEMA).unwrap();
    for text in ["no regex here", ""] {
        assert_eq!(
            deep_arrays_32::parse_value(text).ok(),
            schema.parse(text).ok(),
            "{text:?}"
        );
    }
}

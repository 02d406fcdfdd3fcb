//! Build-time validation (SPEC §4): every problem is reported, each with the JSON pointer of the
//! offending node, what is wrong and how to fix it.

use chatparse::json;
use chatparse::{Schema, SchemaError};

fn problems(schema: chatparse::Value) -> SchemaError {
    match Schema::from_value(schema) {
        Ok(_) => panic!("schema unexpectedly valid"),
        Err(e) => e,
    }
}

/// The single problem of a schema with exactly one mistake.
fn only_problem(schema: chatparse::Value) -> chatparse::SchemaProblem {
    let e = problems(schema);
    assert_eq!(e.problems.len(), 1, "{e}");
    e.problems.into_iter().next().unwrap()
}

#[test]
fn invalid_json_names_line_and_column() {
    let e = Schema::from_json_str_named(
        "{\n  \"type\": \"object\",\n  \"properties\": {,}\n}",
        "broken.json",
    )
    .unwrap_err();
    assert_eq!(e.source_name, "broken.json");
    let text = e.to_string();
    assert!(text.contains("line 3 column 18"), "{text}");
    assert!(
        text.starts_with("invalid response schema broken.json"),
        "{text}"
    );
}

#[test]
fn unknown_x_keyword_is_named_with_a_suggestion() {
    let p = only_problem(
        json!({"type": "object", "properties": {"content": {"type": "string", "x-regexx": "(a)"}}}),
    );
    assert_eq!(p.pointer, "/properties/content/x-regexx");
    assert!(p.message.contains("unknown keyword"), "{}", p.message);
    assert!(p.fix.contains("`x-regex`"), "{}", p.fix);
}

#[test]
fn misspelled_structural_keyword_is_caught() {
    let p = only_problem(json!({"type": "object", "propertes": {}}));
    assert_eq!(p.pointer, "/propertes");
    assert!(p.fix.contains("`properties`"), "{}", p.fix);
}

#[test]
fn unsupported_json_schema_keyword_is_rejected() {
    let p = only_problem(json!({"type": "object", "properties": {"a": {"$ref": "#/x"}}}));
    assert_eq!(p.pointer, "/properties/a/$ref");
}

#[test]
fn regex_syntax_error_points_at_the_keyword() {
    let p = only_problem(json!({"type": "string", "x-regex": "(unclosed"}));
    assert_eq!(p.pointer, "/x-regex");
    assert!(p.message.contains("invalid regex"), "{}", p.message);
    assert!(!p.fix.is_empty());
}

#[test]
fn regex_without_capture_group() {
    let p = only_problem(json!({"type": "string", "x-regex": "abc"}));
    assert_eq!(p.pointer, "/x-regex");
    assert!(p.message.contains("no capture group"), "{}", p.message);
}

#[test]
fn regex_with_two_unnamed_groups() {
    let p = only_problem(json!({"type": "string", "x-regex": "(a)(b)"}));
    assert_eq!(p.pointer, "/x-regex");
    assert!(
        p.message.contains("2 unnamed capture groups"),
        "{}",
        p.message
    );
}

#[test]
fn named_groups_on_a_string_node() {
    let p = only_problem(
        json!({"type": "object", "properties": {"c": {"type": "string", "x-regex": "(?P<c>.*)"}}}),
    );
    assert_eq!(p.pointer, "/properties/c/x-regex");
    assert!(p.message.contains("named groups"), "{}", p.message);
}

#[test]
fn named_groups_on_iterator_items_that_are_strings() {
    let p = only_problem(
        json!({"type": "array", "x-regex-iterator": "(?P<a>x)", "items": {"type": "string"}}),
    );
    assert_eq!(p.pointer, "/x-regex-iterator");
}

#[test]
fn iterator_on_a_non_array() {
    let p = only_problem(
        json!({"type": "object", "properties": {"calls": {"type": "string", "x-regex-iterator": "(x)"}}}),
    );
    assert_eq!(p.pointer, "/properties/calls/x-regex-iterator");
    assert!(
        p.message
            .contains("x-regex-iterator on a node of type string"),
        "{}",
        p.message
    );
}

#[test]
fn key_value_without_key_and_value_groups() {
    let p = only_problem(json!({"type": "object", "x-regex-key-value": "(?P<k>\\w+)=(?P<v>\\w+)"}));
    assert_eq!(p.pointer, "/x-regex-key-value");
    assert!(p.message.contains("`key` and `value`"), "{}", p.message);
}

#[test]
fn key_value_on_a_non_object() {
    let p =
        only_problem(json!({"type": "any", "x-regex-key-value": "(?P<key>\\w+)=(?P<value>\\w+)"}));
    assert_eq!(p.pointer, "/x-regex-key-value");
}

#[test]
fn unknown_parser() {
    let p = only_problem(json!({"type": "object", "x-parser": "yaml"}));
    assert_eq!(p.pointer, "/x-parser");
    assert!(p.fix.contains("json"), "{}", p.fix);
}

#[test]
fn parser_args_without_parser() {
    let p = only_problem(json!({"type": "object", "x-parser-args": {"allow_non_json": true}}));
    assert_eq!(p.pointer, "/x-parser-args");
}

#[test]
fn unknown_parser_argument() {
    let p = only_problem(
        json!({"type": "object", "x-parser": "json", "x-parser-args": {"transfrom": "a"}}),
    );
    assert_eq!(p.pointer, "/x-parser-args/transfrom");
    assert!(p.fix.contains("`transform`"), "{}", p.fix);
}

#[test]
fn invalid_jmespath_expression() {
    let p = only_problem(
        json!({"type": "object", "x-parser": "json", "x-parser-args": {"transform": "{name: "}}),
    );
    assert_eq!(p.pointer, "/x-parser-args/transform");
    assert!(p.message.contains("JMESPath"), "{}", p.message);
}

#[test]
fn array_without_items() {
    let p = only_problem(
        json!({"type": "object", "properties": {"tool_calls": {"type": "array", "x-regex-iterator": "(x)"}}}),
    );
    assert_eq!(p.pointer, "/properties/tool_calls");
    assert!(p.message.contains("without `items`"), "{}", p.message);
}

#[test]
fn unknown_type_with_suggestion() {
    let p = only_problem(json!({"type": "object", "properties": {"n": {"type": "int"}}}));
    assert_eq!(p.pointer, "/properties/n/type");
    assert!(p.fix.contains("\"integer\""), "{}", p.fix);
}

#[test]
fn list_of_types_is_rejected() {
    let p = only_problem(json!({"type": ["string", "null"]}));
    assert_eq!(p.pointer, "/type");
}

#[test]
fn parser_after_a_list_making_regex() {
    let p = only_problem(
        json!({"type": "array", "x-regex-iterator": "(x)", "x-parser": "json", "items": {}}),
    );
    assert_eq!(p.pointer, "/x-parser");
}

#[test]
fn bad_substitution_shapes_and_replacements() {
    let e = problems(
        json!({"type": "string", "x-regex-substitutions": [["a"], ["(b)", "\\2"], ["c", "d"]]}),
    );
    let pointers: Vec<&str> = e.problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/x-regex-substitutions/0", "/x-regex-substitutions/1/1"],
        "{e}"
    );
}

#[test]
fn every_problem_is_reported_at_once_in_document_order() {
    let e = problems(json!({
        "type": "object",
        "x-foo": 1,
        "properties": {
            "content": {"type": "strng"},
            "thinking": {"type": "string", "x-regex": "(a)(b)"},
            "tool_calls": {"type": "array", "x-regex-iterator": "[", "items": {"x-parser": "xml"}}
        }
    }));
    let pointers: Vec<&str> = e.problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/x-foo",
            "/properties/content/type",
            "/properties/thinking/x-regex",
            "/properties/tool_calls/x-regex-iterator",
            "/properties/tool_calls/items/x-parser",
        ],
        "{e}"
    );
    // Each rendered line names the file, the pointer and carries a fix.
    let text = e.to_string();
    assert!(
        text.contains("<schema>: /properties/thinking/x-regex: "),
        "{text}"
    );
    assert_eq!(text.matches("fix: ").count(), 5, "{text}");
}

#[test]
fn a_schema_node_must_be_an_object() {
    let p = only_problem(json!({"type": "object", "properties": {"a": "string"}}));
    assert_eq!(p.pointer, "/properties/a");
}

#[test]
fn pointer_tokens_are_escaped() {
    let p = only_problem(json!({"type": "object", "properties": {"a/b~c": {"type": "nope"}}}));
    assert_eq!(p.pointer, "/properties/a~1b~0c/type");
}

#[test]
fn named_character_escapes_are_rejected_not_approximated() {
    // Python resolves \N{EM DASH} from its Unicode name table, which we do not carry; in a
    // replacement template Python itself raises "bad escape \N".
    let e = problems(json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-regex": "^NU:(\\N{EM DASH}+)"},
            "b": {"type": "string", "x-regex-substitutions": [["-", "\\N{EM DASH}"]]}
        }
    }));
    let pointers: Vec<&str> = e.problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/properties/a/x-regex",
            "/properties/b/x-regex-substitutions/0/1"
        ],
        "{e}"
    );
    assert!(e.problems[0].fix.contains("\\uXXXX"), "{e}");
}

/// Arrays nested directly in arrays, `depth` levels, under the property `grid`.
fn nested_arrays(depth: usize) -> chatparse::Value {
    let mut node = json!({"type": "string"});
    for _ in 0..depth {
        node = json!({"type": "array", "items": node});
    }
    json!({"type": "object", "properties": {"grid": node}})
}

/// `check` and `response_parser!` agree (issue 21): arrays nested deeper than a generated parser
/// can compile (rustc's recursion limit stopped 64 levels) are refused at load, at the first
/// array past the limit; the limit itself loads, and `tests/deep_arrays.rs` compiles it.
#[test]
fn arrays_nested_past_the_limit_are_refused_where_the_limit_is_crossed() {
    use chatparse::runtime::schema::MAX_ARRAY_NESTING;
    assert!(Schema::from_value(nested_arrays(MAX_ARRAY_NESTING)).is_ok());
    let p = only_problem(nested_arrays(MAX_ARRAY_NESTING + 1));
    let expected = format!("/properties/grid{}", "/items".repeat(MAX_ARRAY_NESTING));
    assert_eq!(p.pointer, expected);
    assert!(p.message.contains("nested more than"), "{}", p.message);
    // An object between array levels starts a new run.
    let mut node = nested_arrays(MAX_ARRAY_NESTING)["properties"]["grid"].clone();
    node = json!({"type": "object", "properties": {"inner": node}});
    for _ in 0..MAX_ARRAY_NESTING {
        node = json!({"type": "array", "items": node});
    }
    assert!(Schema::from_value(json!({"type": "object", "properties": {"grid": node}})).is_ok());
}

/// Issue 21: nested counted repeats passed `check` and then ran for seconds per kilobyte
/// (`((?:a{1,1000}){1,1000}b)` did not answer on 3 KB in 20 s). They are refused at load with the
/// pointer, the reason and a fix.
#[test]
fn nested_counted_repeats_are_refused_as_too_costly() {
    let p = only_problem(json!({"type": "object", "properties": {
        "a": {"type": "string", "x-regex": "((?:a{1,1000}){1,1000}b)"}
    }}));
    assert_eq!(p.pointer, "/properties/a/x-regex");
    assert!(p.message.contains("too costly"), "{}", p.message);
    assert!(p.fix.contains("repetition counts"), "{}", p.fix);
}

/// Issue 21: a pattern that backtracks catastrophically fails within its budget, with a typed
/// error naming the node, instead of spinning and then reporting an engine-internal message.
#[test]
fn catastrophic_backtracking_is_a_parse_error_naming_the_node() {
    use chatparse::runtime::ParseErrorKind;
    let schema = Schema::from_value(json!({"type": "object", "properties": {
        "t": {"type": "string",
              "x-regex": r"^((?:(?=a)a+)+b)"}
    }}))
    .unwrap();
    // python3: re.search(P, 'a' * 22) takes 0.3 s, each further `a` doubles it.
    let input = "a".repeat(60);
    let e = schema.parse(&input).unwrap_err();
    assert_eq!(e.pointer, "/properties/t/x-regex");
    let ParseErrorKind::RegexTooCostly { steps, input_len } = e.kind else {
        panic!("{e}");
    };
    assert_eq!(input_len, input.len());
    // Our backtracker's budget, then fancy-regex's (its limit for inputs up to 1 KB), ran out.
    let per_byte = chatparse::runtime::pyre::STEPS_PER_BYTE as u64;
    let base = chatparse::runtime::pyre::FANCY_BACKTRACK_LIMIT as u64;
    assert_eq!(steps, base + per_byte * 1024);
    assert!(e.to_string().contains("too costly"), "{e}");
}

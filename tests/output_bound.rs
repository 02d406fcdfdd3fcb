//! The output bound (`chatparse::runtime::budget`, issue 21 item 4): x-regex-iterator stages
//! nested over the same text, or matching the empty string, multiply the model output; beyond
//! 8 × the input's bytes + 1 MiB of matched text, or one match per input byte + 4,096, the parse
//! fails with `OutputTooLarge` at the iterator's pointer, in the interpreter and in the generated
//! parser alike. Before the bound, these parses succeeded with 32 list nodes per line (a 93 MB
//! output of 1.5 M lines: 3.8 GB).

use chatparse::runtime::budget::{Limits, OutputBudget, SPAN_CONSTANT, SPAN_FACTOR};
use chatparse::{ParseErrorKind, Schema};

// The deepest nesting the loader accepts (`MAX_ARRAY_NESTING`): 32 iterators `([^\n]+)`, each
// over the whole text of the level above.
chatparse::response_parser!("tests/output_bound_32.json");

fn lines(bytes: usize) -> String {
    let line = "a line of model output, 31 B.\n";
    line.repeat(bytes / line.len())
}

fn deep() -> Schema {
    Schema::from_json_str(output_bound_32::SCHEMA).unwrap()
}

/// The pointer of the iterator at nesting `level` (1 = outermost).
fn pointer_of_level(level: usize) -> String {
    format!(
        "/properties/lines{}/x-regex-iterator",
        "/items".repeat(level - 1)
    )
}

/// The walk is depth first: level 1 spends the whole text (less the newlines), then each line
/// spends its length at each of the 31 levels below before the next line starts. The level
/// where the bound runs out, for a bound of `allowed` bytes.
fn level_over(text: &str, allowed: usize) -> usize {
    let line = text.lines().next().unwrap().len();
    let per_level = text.len() - text.matches('\n').count();
    let left = allowed - per_level;
    let left_in_line = left % (31 * line);
    left_in_line / line + 2
}

#[test]
fn nested_iterators_over_the_same_text_are_refused_past_the_bound() {
    let text = lines(96 << 10);
    let per_level = text.len() - text.matches('\n').count();
    let allowed = SPAN_FACTOR * text.len() + SPAN_CONSTANT;
    assert!(
        32 * per_level > allowed,
        "the test needs more than the bound"
    );
    for (engine, result) in [
        ("interpreter", deep().parse(&text)),
        ("generated", output_bound_32::parse_value(&text)),
    ] {
        let e = result.expect_err(engine);
        assert_eq!(
            e.pointer,
            pointer_of_level(level_over(&text, allowed)),
            "{engine}"
        );
        assert_eq!(
            e.kind,
            ParseErrorKind::OutputTooLarge {
                unit: "bytes",
                limit: allowed,
                input_len: text.len()
            },
            "{engine}"
        );
        let message = e.to_string();
        assert!(
            message.contains("nest fewer x-regex-iterator levels"),
            "{message}"
        );
    }
    // The typed parser is bounded the same way.
    assert!(output_bound_32::parse(&text).is_err());
}

#[test]
fn small_outputs_stay_under_the_constant() {
    // 32 levels × 16 KB is under the 1 MiB constant: parsed as the reference would.
    let text = lines(16 << 10);
    let message = deep().parse(&text).unwrap();
    assert_eq!(output_bound_32::parse_value(&text).unwrap(), message);
    // Each level below the first matches its item's one line again: a one-item list.
    let mut node = &message["lines"];
    for level in 1..=32 {
        let items = node.as_array().unwrap();
        let want = if level == 1 { text.lines().count() } else { 1 };
        assert_eq!(items.len(), want, "level {level}");
        node = &items[0];
    }
    assert_eq!(node.as_str(), text.lines().next());
}

#[test]
fn a_caller_can_set_a_tighter_bound() {
    // 32 levels spend about 32 × the input: refused under a 1 × bound, accepted under 40 ×.
    let text = lines(8 << 10);
    let tight = |span_factor| Limits {
        span_factor,
        span_constant: 0,
        ..Limits::DEFAULT
    };
    // One guard per parse: the bound counts everything parsed while it lives.
    let want = pointer_of_level(level_over(&text, text.len()));
    {
        let _bound = OutputBudget::with_limits(text.len(), tight(1));
        assert_eq!(deep().parse(&text).unwrap_err().pointer, want);
    }
    {
        let _bound = OutputBudget::with_limits(text.len(), tight(1));
        let e = output_bound_32::parse_value(&text).unwrap_err();
        assert_eq!(e.pointer, want);
    }
    {
        let _bound = OutputBudget::with_limits(text.len(), tight(40));
        assert!(deep().parse(&text).is_ok());
    }
    // The guard is gone: the default bound again.
    assert!(deep().parse(&text).is_ok());
}

#[test]
fn iterators_matching_the_empty_string_are_bounded_by_count() {
    // `(\w*)` matches each word and the empty string after it; nested, every empty match makes
    // one more item per level: about 2 items per word at the first level, 3 at the second.
    let schema = Schema::from_json_str(
        r#"{"type": "object", "properties": {"words": {
            "type": "array", "x-regex-iterator": "(\\w*)",
            "items": {"type": "array", "x-regex-iterator": "(\\w*)", "items": {"type": "string"}}}}}"#,
    )
    .unwrap();
    let small = "ab cd ".repeat(100);
    let words = schema.parse(&small).unwrap();
    assert_eq!(words["words"].as_array().unwrap().len(), 401); // 200 words, 201 empty matches
    let text = "a b ".repeat(4096);
    let e = schema.parse(&text).unwrap_err();
    assert_eq!(e.pointer, "/properties/words/items/x-regex-iterator");
    assert!(matches!(
        e.kind,
        ParseErrorKind::OutputTooLarge { unit: "matches", limit, input_len }
            if input_len == text.len() && limit == text.len() + 4096
    ));
}

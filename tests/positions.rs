//! Error positions (issue 21, item 6): an error in JSON arguments keeps the reference's message
//! (its line and column count from the snippet the node was given, as transformers words it),
//! and carries where it is in the whole model output: `ParseError::position`, the same through
//! the interpreter, the generated parser, the stream and the CLI. The expected offsets are
//! computed from the input text itself.

use chatparse::{ParseErrorKind, Position};

/// (family, output, the text right before the character the JSON error names).
const CASES: &[(&str, &str, &str)] = &[
    // Hermes: a slice of the output reaches the parser.
    (
        "hermes",
        "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\",}}\n</tool_call>",
        "\"Paris\",",
    ),
    // Qwen3: a substitution rewrites the output first (the snippet is a copy).
    (
        "qwen3",
        "<think>\nCheck.\n</think>\n\nSure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": tru}}\n</tool_call>",
        "\"a\": ",
    ),
    // Mistral Nemo: the whole JSON list, on its second line.
    (
        "mistral_nemo",
        "Two calls.[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}},\n {\"name\": \"b\" \"arguments\": {}}]",
        "{\"name\": \"b\" ",
    ),
    // Kimi K2: the arguments after a call id.
    (
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"x\": [1, 2}<|tool_call_end|><|tool_calls_section_end|>",
        "[1, 2",
    ),
    // gpt-oss: streamed by its patterns.
    (
        "gpt_oss",
        "<|channel|>analysis<|message|>Call it.\nTwice.<|end|><|start|>assistant to=functions.f<|channel|>commentary json<|message|>{\"q\": 'x'}<|call|>",
        "{\"q\": ",
    ),
];

fn expected(input: &str, before: &str) -> Position {
    let offset = input.find(before).unwrap() + before.len();
    let line = input[..offset].matches('\n').count() + 1;
    let line_start = input[..offset].rfind('\n').map_or(0, |i| i + 1);
    Position {
        offset,
        line,
        column: input[line_start..offset].chars().count() + 1,
    }
}

#[test]
fn json_errors_say_where_they_are_in_the_output() {
    for &(family, input, before) in CASES {
        let want = expected(input, before);
        let spec = chatparse::shipped::spec(family).unwrap().unwrap();
        // The interpreter.
        let e = spec.parse(input).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Json(_)), "{family}: {e}");
        assert_eq!(e.position, Some(want), "{family}: {e}");
        // The message is the reference's (its char offset counts from the snippet), unchanged.
        assert!(e.to_string().contains("content is not valid JSON: "), "{e}");
        // The generated parser.
        let generated = chatparse::models::parse_value_fn(family).unwrap()(input).unwrap_err();
        assert_eq!(generated.position, Some(want), "{family} (generated)");
        // The stream, in one piece and in 7-byte chunks.
        for size in [input.len(), 7] {
            let mut stream = spec.stream(None, None).unwrap();
            let mut result = Ok(());
            let mut at = 0;
            while at < input.len() && result.is_ok() {
                let mut end = (at + size).min(input.len());
                while !input.is_char_boundary(end) {
                    end += 1;
                }
                result = stream.feed_with(&input[at..end], &mut |_| {});
                at = end;
            }
            let e = match result {
                Err(e) => e,
                Ok(()) => stream.finish_with(&mut |_| {}).unwrap_err(),
            };
            assert_eq!(
                e.position,
                Some(want),
                "{family} (stream, {size}-byte chunks)"
            );
        }
    }
}

/// A prompt prefix does not move the positions: they count from the output.
#[test]
fn positions_count_from_the_output_after_a_prompt() {
    let spec = chatparse::shipped::spec("qwen3").unwrap().unwrap();
    let prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n";
    let input =
        "Plan.\n</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {,}}\n</tool_call>";
    let want = expected(input, "\"arguments\": {");
    let e = spec.parse_with_prefix(input, prompt).unwrap_err();
    assert_eq!(e.position, Some(want));
    let mut stream = spec.stream(Some(prompt), None).unwrap();
    stream.feed_with(input, &mut |_| {}).unwrap();
    assert_eq!(
        stream.finish_with(&mut |_| {}).unwrap_err().position,
        Some(want)
    );
}

/// The interpreter and the generated parser fail alike: for every shipped name, every example
/// broken at every character boundary (a character deleted, a `"`, `,` or `}` inserted), where
/// both fail they name the same kind of error at the same place (`position` included: the
/// generated parser used to leave out some positions the interpreter reported), and where one
/// succeeds so does the other.
#[test]
fn generated_errors_say_what_and_where_the_interpreter_does() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut failed = 0;
    let mut differ = Vec::new();
    for name in chatparse::shipped::names() {
        let spec = chatparse::shipped::spec(name).unwrap().unwrap();
        let generated = chatparse::models::parse_value_fn(name).unwrap();
        let mut files: Vec<_> = std::fs::read_dir(root.join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        for path in files {
            let example = std::fs::read_to_string(&path).unwrap();
            let mut inputs = Vec::new();
            for (at, c) in example.char_indices() {
                let after = &example[at + c.len_utf8()..];
                inputs.push(format!("{}{after}", &example[..at]));
                for insert in ["\"", ",", "}"] {
                    inputs.push(format!("{}{insert}{}", &example[..at], &example[at..]));
                }
            }
            for input in inputs {
                let a = spec.parse(&input);
                let b = generated(&input);
                match (&a, &b) {
                    (Ok(_), Ok(_)) => {}
                    (Err(x), Err(y)) => {
                        failed += 1;
                        let same_kind =
                            std::mem::discriminant(&x.kind) == std::mem::discriminant(&y.kind);
                        if !same_kind || x.position != y.position || x.pointer != y.pointer {
                            differ.push(format!(
                                "{name} {input:?}\n  interpreter {:?} at {} {:?}\n  generated   {:?} at {} {:?}",
                                x.kind, x.pointer, x.position, y.kind, y.pointer, y.position
                            ));
                        }
                    }
                    _ => differ.push(format!(
                        "{name} {input:?}: interpreter {}, generated {}",
                        a.is_ok(),
                        b.is_ok()
                    )),
                }
            }
        }
    }
    assert!(failed > 1_000, "only {failed} inputs fail");
    assert!(
        differ.is_empty(),
        "{} differ; first: {:#?}",
        differ.len(),
        &differ[..differ.len().min(8)]
    );
}

/// Both back ends place a JSON error in the group it came from, not at an earlier copy of the
/// same text: in `x[TOOL_CALLS]x` the calls' JSON `x` starts at byte 13 (after the 12-byte
/// marker at 1), though an `x` comes first at 0; in `[TOOL_CALLS]` the calls' JSON is empty, at
/// the end (12). The interpreter copies named groups into a dict (as the reference's
/// `groupdict()`) and placed such errors by their text: at 0, and nowhere.
#[test]
fn errors_are_placed_in_their_group() {
    for name in ["mistral_nemo", "mistral_small_3_1"] {
        for (input, offset) in [("x[TOOL_CALLS]x", 13), ("[TOOL_CALLS]", 12)] {
            assert_calls_error_at(name, input, offset);
        }
    }
}

/// Both back ends fail on `input` in `/properties/tool_calls`, at byte `offset` of it.
fn assert_calls_error_at(name: &str, input: &str, offset: usize) {
    assert_error_at(name, input, "/properties/tool_calls", offset);
}

/// Both back ends fail on `input` at `pointer`, at byte `offset` of it.
fn assert_error_at(name: &str, input: &str, pointer: &str, offset: usize) {
    let spec = chatparse::shipped::spec(name).unwrap().unwrap();
    let generated = chatparse::models::parse_value_fn(name).unwrap();
    for (backend, err) in [
        ("interpreter", spec.parse(input).unwrap_err()),
        ("generated", generated(input).unwrap_err()),
    ] {
        assert_eq!(err.pointer, pointer, "{name} {input:?}");
        assert_eq!(
            err.position.map(|p| p.offset),
            Some(offset),
            "{name} {backend} {input:?}: {err}"
        );
    }
}

/// An error in one call of several, in a property whose substitution changed nothing:
/// llama3_json's calls iterator cuts the text after each `<|python_tag|>`, so the second call is
/// `{"name":` (the calls' group ends at its last non-space character) and its JSON ends at its
/// 8th byte, after the second tag — not in the first call's `{"name":`, the same text earlier in
/// the output. (Found by the `shipped_backends` fuzz target: the interpreter placed it at the
/// first occurrence.)
#[test]
fn errors_in_a_later_item_are_placed_in_that_item() {
    let input = "<|python_tag|>{\"name\": \"a\", \"arguments\": {}}<|python_tag|>{\"name\":";
    let second = input.rfind("{\"name\":").unwrap();
    assert!(second > input.find("{\"name\":").unwrap());
    assert_error_at(
        "llama3_json",
        input,
        "/properties/tool_calls/items",
        input.len(),
    );
}

/// An error found in a part of a property's group, by the property's own pattern: apriel's
/// `tool_calls` group is `<tool_calls>` and what follows, and its own `x-regex` cuts the JSON out
/// of it. `\0` is not white space, so the reasoning is the first `\0` and the calls' JSON the
/// second: byte 13, where the JSON error is (the layout of the input, not either back end).
#[test]
fn errors_in_part_of_a_group_are_placed_in_it() {
    for (input, offset) in [
        ("\0<tool_calls>\0", 13),
        ("\0 <tool_calls>\0</tool_calls>", 14),
        ("[x] <tool_calls>[x]", 17),
    ] {
        assert_calls_error_at("apriel", input, offset);
    }
}
